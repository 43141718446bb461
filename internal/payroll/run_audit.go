package payroll

import (
	"context"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// RunAudit is the run's audit trail: every audit row about the run (TargetRun) or one of its
// entries (TargetEntry), oldest first, limit rows after the row after (0: from the first).
// Errors: ErrRunNotFound (another tenant's run too).
func RunAudit(ctx context.Context, tx db.BunTx, runID string, after int64, limit int) ([]audit.Row, error) {
	if _, err := GetRun(ctx, tx, runID); err != nil {
		return nil, err
	}
	return audit.List(ctx, tx, audit.Query{Targets: []audit.Target{
		{Type: TargetRun, IDs: []string{runID}},
		{Type: TargetEntry, In: `SELECT id FROM app.payroll_entries WHERE tenant_id = ? AND run_id = ?`,
			InArgs: []any{tenancy.TenantID(ctx), runID}},
	}, After: after, Limit: limit})
}
