package idempotency

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/promreg"
)

// Outcome is how one request on an Idem route was answered (or, for Deleted, what the clean-up
// did to a record): the label of svc_idempotency_records_total.
type Outcome string

const (
	// Created: the key was new, the handler ran and its response was stored.
	Created Outcome = "created"
	// Recovered: a released or expired claim (an earlier attempt answered 5xx, panicked or died)
	// was taken over by the same request, the handler ran and its response was stored.
	Recovered Outcome = "recovered"
	// Replayed: the key was finished; the stored response was returned and the handler did not run.
	Replayed Outcome = "replayed"
	// Reused: the key is held by another request (other method, target or body): 422.
	Reused Outcome = "reused"
	// InUse: the same request was still in flight after the wait: 409.
	InUse Outcome = "in_use"
	// Released: the handler ran but its outcome was not stored (5xx, 408, 429, panic, or the
	// store failed): the key is retryable.
	Released Outcome = "released"
	// Deleted counts completed records the daily clean-up removed.
	Deleted Outcome = "deleted"
)

// Outcomes lists every label value, each exported at 0 from the start.
var Outcomes = []Outcome{Created, Recovered, Replayed, Reused, InUse, Released, Deleted}

// Metrics holds svc_idempotency_records_total. A nil *Metrics counts nothing.
type Metrics struct {
	records *prometheus.CounterVec
}

// NewMetrics registers the counter on reg (nil: not registered). The API and the worker may share
// one registry (wagerail dev): a second registration reuses the first's counter.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_idempotency_records_total",
		Help: "Requests on Idempotency-Key routes by outcome (created, recovered, replayed, reused, in_use, released), and records deleted by the clean-up (deleted).",
	}, []string{"outcome"})
	cv = promreg.Shared(reg, cv)
	for _, o := range Outcomes {
		cv.WithLabelValues(string(o))
	}
	return &Metrics{records: cv}
}

// Add counts n events of outcome o.
func (m *Metrics) Add(o Outcome, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.records.WithLabelValues(string(o)).Add(float64(n))
}

func (m *Metrics) inc(o Outcome) { m.Add(o, 1) }
