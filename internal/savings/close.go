package savings

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Holdings is what the ledger says a goal's account holds: posted, and in flight either way
// (pending deposits and withdrawals).
type Holdings struct {
	PostedSantim, PendingInSantim, PendingOutSantim int64
}

// Empty reports whether the goal holds nothing and nothing is in flight.
func (h Holdings) Empty() bool {
	return h.PostedSantim == 0 && h.PendingInSantim == 0 && h.PendingOutSantim == 0
}

// CloseGoal closes the saver's goal for good: ACTIVE → CLOSED with who and when (audit
// CloseSavingsGoal, savings.goal_closed.v1), its live auto-save mandate cancelled in the same
// transaction, so no later payroll run withholds for it. A goal with money is never closed:
// CodeGoalNotEmpty while the goal holds anything, or a deposit or withdrawal of it is PENDING
// (read with the goal's row locked, held reads the ledger); CodeGoalAutosaveInRun while a payroll
// run that has not completed may still deposit its auto-save under any of its mandates, cancelled
// ones included (payroll.RefuseInOpenRun). Closing a
// CLOSED goal answers it as it is (closed false) and writes nothing. Another saver's goal, or
// none: CodeGoalNotFound.
//
// Racing movements: the row lock (FOR UPDATE) waits for a withdrawal's reservation and holds
// deposits' records (RecordPending re-reads the goal's status under FOR KEY SHARE), so a deposit
// either was in flight when the close looked (refused here) or finds the goal CLOSED (refused
// there, its ledger hold voided, nothing moved).
func CloseGoal(ctx context.Context, tx db.BunTx, employeeID, goalID string, held func(context.Context) (Holdings, error),
	now time.Time) (g Goal, closed bool, err error) {
	g, err = scanGoal(tx.QueryRow(ctx, `SELECT `+goalCols+` FROM app.savings_goals WHERE tenant_id = $1 AND id = $2 AND employee_id = $3 FOR UPDATE`,
		tenancy.TenantID(ctx), goalID, employeeID))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Goal{}, false, refuse(CodeGoalNotFound)
	case err != nil:
		return Goal{}, false, err
	case g.Status == GoalClosed:
		return g, false, nil
	}
	var inFlight bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2 AND status = 'PENDING')`,
		tenancy.TenantID(ctx), goalID).Scan(&inFlight); err != nil {
		return Goal{}, false, err
	}
	if inFlight {
		return Goal{}, false, refuse(CodeGoalNotEmpty)
	}
	h, err := held(ctx)
	if err != nil {
		return Goal{}, false, err
	}
	if !h.Empty() {
		return Goal{}, false, refuse(CodeGoalNotEmpty)
	}
	// Every auto-save mandate of the goal, a cancelled one too: a run that withheld under it
	// still deposits the line at its completion.
	if err := payroll.RefuseInOpenRun(ctx, tx, g.EmployeeID, payroll.KindSavingsAutosave, goalID, refuse(CodeGoalAutosaveInRun)); err != nil {
		return Goal{}, false, err
	}
	live, err := payroll.LiveProductMandates(ctx, tx, payroll.KindSavingsAutosave, []string{goalID})
	if err != nil {
		return Goal{}, false, err
	}
	m, autosave := live[goalID]
	if autosave {
		if _, err := payroll.CancelMandate(ctx, tx, m.ID, "savings goal closed", now); err != nil {
			return Goal{}, false, err
		}
	}
	actor := tenancy.From(ctx).Actor
	g, err = scanGoal(tx.QueryRow(ctx, `UPDATE app.savings_goals SET status = $3, closed_at = $4, closed_by = $5
		WHERE tenant_id = $1 AND id = $2 RETURNING `+goalCols, tenancy.TenantID(ctx), goalID, GoalClosed, now, actor))
	if err != nil {
		return Goal{}, false, err
	}
	payload := map[string]any{"goalId": g.ID, "employeeId": g.EmployeeID, "closedAt": now.UTC()}
	if autosave {
		payload["cancelledMandateId"] = m.ID
	}
	return g, true, record(ctx, tx, "CloseSavingsGoal", audit.Success, TargetGoal, g.ID, EventGoalClosed, payload)
}
