package payroll

import (
	"context"
	"fmt"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// MaxDueCompletions bounds the runs one firing of the deductions poller starts (the next firing
// takes the rest).
const MaxDueCompletions = 500

// DueCompletions lists, across tenants (tx is crosstenant's), the runs whose deductions were
// taken from pay but not yet applied: DISBURSED with no entry FAILED or still being paid — the
// runs the disbursement saga hands to the completion (workflows.runDisbursed). The saga starts
// that completion itself; a run is still listed while its completion runs, and when one failed
// (a dependency down past every retry), was terminated, or never started. Oldest disbursement
// first (a run from before disbursed_at was recorded first of all), then by tenant and id; at
// most MaxDueCompletions.
func DueCompletions(ctx context.Context, tx db.BunTx) ([]DueRun, error) {
	rows, err := db.Select[DueRun](ctx, tx, `
		SELECT r.tenant_id, r.id AS run_id FROM app.payroll_runs r
		WHERE r.status = ? AND NOT EXISTS (SELECT 1 FROM app.payroll_entries e
			WHERE e.tenant_id = r.tenant_id AND e.run_id = r.id AND e.status IN (?, ?))
		ORDER BY r.disbursed_at NULLS FIRST, r.tenant_id, r.id
		LIMIT ?`, RunDisbursed, EntryFailed, EntryDisbursing, MaxDueCompletions)
	if err != nil {
		return nil, fmt.Errorf("payroll.due_completions: %w", err)
	}
	return rows, nil
}
