package payroll

import (
	"context"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// RunSummary is the context's tenant's payroll at a glance (the business dashboard's payroll
// section).
type RunSummary struct {
	// ByStatus counts the runs in each state; every state of RunStatuses is present.
	ByStatus map[string]int64
	// Latest is the run of the latest period (whatever its state); LastCompleted the latest
	// COMPLETED run. Nil when there is none.
	Latest, LastCompleted *Run
}

// Summarize reads the context's tenant's RunSummary (three indexed reads).
func Summarize(ctx context.Context, tx db.BunTx) (RunSummary, error) {
	var s RunSummary
	var err error
	s.ByStatus, err = db.CountByStatus(ctx, tx, RunStatuses,
		`SELECT status, count(*) AS n FROM app.payroll_runs WHERE tenant_id = ? GROUP BY status`, tenancy.TenantID(ctx))
	if err != nil {
		return RunSummary{}, err
	}
	for _, pick := range []struct {
		status string
		into   **Run
	}{{"", &s.Latest}, {RunCompleted, &s.LastCompleted}} {
		runs, err := ListRuns(ctx, tx, RunFilter{Status: pick.status, Limit: 1})
		if err != nil {
			return RunSummary{}, err
		}
		if len(runs) == 1 {
			*pick.into = &runs[0]
		}
	}
	return s, nil
}
