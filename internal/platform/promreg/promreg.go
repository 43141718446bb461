// Package promreg registers Prometheus collectors that several components of one process may
// create on a shared registry (wagerail dev runs the API and the worker together).
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Shared registers c on reg and returns it; when reg already holds an equal collector (the same
// name, help and labels) it returns that one instead, so both creators count into one series. A
// nil reg registers nothing. Any other registration error is a programming error and panics.
func Shared[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			panic(err)
		}
		return are.ExistingCollector.(C)
	}
	return c
}
