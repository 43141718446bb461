// Package refusal is the one shape of a refused request across the domains: a stable code the
// client can switch on, the HTTP status it is answered with and a public message (Refusal), and
// each domain's table of its codes (Table) — the one place a code is given its answer. The
// stores return *Refusal, the sagas type their ApplicationErrors with the code, and the API
// answers both from the table.
package refusal

import (
	"errors"
	"fmt"
)

// Refusal is a refused request: a stable code, the HTTP status it is answered with, a public
// message, and optional details (the current state, the allowed ones, an outstanding amount).
type Refusal struct {
	Code    string
	Status  int
	Message string
	Details map[string]any
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Answer is how a code is answered: its HTTP status and its public message (an internal error's
// text may carry detail the caller must not see, so the caller gets this fixed one).
type Answer struct {
	Status  int
	Message string
}

// Table is a domain's codes with their answers.
type Table map[string]Answer

// Of is code's refusal; ok is false for a code that is not in the table.
func (t Table) Of(code string) (r Refusal, ok bool) {
	a, ok := t[code]
	if !ok {
		return Refusal{}, false
	}
	return Refusal{Code: code, Status: a.Status, Message: a.Message}, true
}

// Error is code's refusal as an error; it panics on a code that is not in the table (a
// programming error: every code a domain uses has its row).
func (t Table) Error(code string) *Refusal {
	r, ok := t.Of(code)
	if !ok {
		panic(fmt.Sprintf("refusal: no answer for code %q", code))
	}
	return &r
}

// CodeOf is the code of a *Refusal in err's chain whose code the table has, "" for any other
// error.
func (t Table) CodeOf(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		if _, ok := t[r.Code]; ok {
			return r.Code
		}
	}
	return ""
}
