package ewa

import (
	"context"
	"fmt"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Statuses lists every request status, in the order a request moves through them.
var Statuses = []Status{Requested, Disbursing, Disbursed, Repaid, Failed, Cancelled}

// Summary is a tenant's advances at a glance (the business dashboard's EWA section).
type Summary struct {
	// ByStatus counts the requests in each status; every status is present.
	ByStatus map[Status]int64
	// OutstandingCount and OutstandingSantim are the DISBURSED requests and what the employees
	// still owe on them: principal + fee less what is repaid.
	OutstandingCount  int64
	OutstandingSantim int64
	// InFlightSantim is the principal + fee of the REQUESTED and DISBURSING requests: money that
	// may still leave the funding account.
	InFlightSantim int64
	// DisbursedThisMonthSantim is the principal paid out by the requests disbursed in at's UTC
	// calendar month (whatever they are now).
	DisbursedThisMonthSantim int64
}

// Summarize reads tenant's Summary at at in one query. Bounds: a request's principal and fee
// are each at most 10^12 santim (the table's CHECKs), so a sum holds some 4.6 million of the
// largest requests. Past that: each sum is taken in exact numeric and read as text
// (money.ParseSum), so one past int64 is money.ErrOverflow, the caller's to refuse, never a
// wrapped figure nor a database error (as AdvanceBookTotals).
func Summarize(ctx context.Context, q db.Writer, tenant string, at time.Time) (Summary, error) {
	at = at.UTC()
	monthStart := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	s := Summary{ByStatus: make(map[Status]int64, len(Statuses))}
	counts := make([]int64, len(Statuses))
	var sums [3]string
	dest := make([]any, 0, len(Statuses)+4)
	cols := ""
	for i, st := range Statuses {
		cols += fmt.Sprintf("count(*) FILTER (WHERE status = '%s'), ", st)
		dest = append(dest, &counts[i])
	}
	dest = append(dest, &s.OutstandingCount, &sums[0], &sums[1], &sums[2])
	err := q.QueryRow(ctx, `SELECT `+cols+`
			count(*) FILTER (WHERE status = 'DISBURSED'),
			coalesce(sum(principal_santim + fee_santim - coalesce(repaid_amount_santim, 0)) FILTER (WHERE status = 'DISBURSED'), 0)::text,
			coalesce(sum(principal_santim + fee_santim) FILTER (WHERE status IN ('REQUESTED', 'DISBURSING')), 0)::text,
			coalesce(sum(principal_santim) FILTER (WHERE disbursed_at >= $2 AND disbursed_at < $3), 0)::text
		FROM app.ewa_requests WHERE tenant_id = $1`, tenant, monthStart, monthStart.AddDate(0, 1, 0)).Scan(dest...)
	if err == nil {
		err = money.ParseSums(sums[:], &s.OutstandingSantim, &s.InFlightSantim, &s.DisbursedThisMonthSantim)
	}
	if err != nil {
		return Summary{}, fmt.Errorf("ewa: summary: %w", err)
	}
	for i, st := range Statuses {
		s.ByStatus[st] = counts[i]
	}
	return s, nil
}
