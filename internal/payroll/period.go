package payroll

import (
	"net/http"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// A pay period is a calendar month (UTC), written "YYYY-MM", from MinPeriod to MaxPeriod. Two
// periods compare as strings in calendar order, so `p < q` is "p is before q".
const (
	MinPeriod = "2000-01"
	MaxPeriod = "2100-12"
)

// CodePeriodClosed is the refusal of an input, or a move of one, in a period that has closed: a
// period before the current one (its payroll has been paid).
const CodePeriodClosed = "PAYROLL_PERIOD_CLOSED"

// ErrPeriodClosed is the refusal of an input or a move in a period that has closed.
func ErrPeriodClosed(period, current string) error {
	return &Refusal{Code: CodePeriodClosed, Status: http.StatusConflict,
		Message: "period " + period + " has closed (the current period is " + current + ")",
		Details: map[string]any{"period": period, "currentPeriod": current}}
}

// CheckPeriod checks a period a caller sent: "YYYY-MM" with a month 01 to 12, from MinPeriod to
// MaxPeriod. Its error is a *field.Error naming name (the caller's 400).
func CheckPeriod(name, v string) error {
	if _, err := time.Parse("2006-01", v); err != nil || len(v) != 7 {
		return &field.Error{Field: name, Problem: "must be a month written YYYY-MM"}
	}
	if v < MinPeriod || v > MaxPeriod {
		return &field.Error{Field: name, Problem: "must be from " + MinPeriod + " to " + MaxPeriod}
	}
	return nil
}

// PeriodOf is the period t falls in (its UTC calendar month).
func PeriodOf(t time.Time) string { return t.UTC().Format("2006-01") }

// PeriodStart is the first day of a valid period (UTC midnight).
func PeriodStart(p string) time.Time {
	t, err := time.Parse("2006-01", p)
	if err != nil {
		panic("payroll: PeriodStart of an unchecked period " + p) // a programming error
	}
	return t
}
