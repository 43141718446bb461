package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
)

func closePath(id string) string { return "/api/savings/goals/" + id + "/close" }

// TestSavingsGoalClose, on the real stack with the sandbox: a goal with a deposit in flight, then
// one holding money, is not closed (409 SAVINGS_GOAL_NOT_EMPTY, audited DENIED, nothing else
// written); while a payroll run is being
// calculated the goal's live auto-save keeps it open (409 SAVINGS_GOAL_AUTOSAVE_IN_RUN); once
// withdrawn to zero and the run's mark gone, the close answers the goal CLOSED with closedAt, its
// auto-save mandate CANCELLED in the same transaction, one savings.goal_closed.v1; closing again
// answers the same and writes nothing; a closed goal takes no deposit (the saga refuses it with
// nothing moved at the sandbox) and no opt-in; another saver's, another organization's, an
// unknown goal is 404, a malformed id 400; a goal whose auto-save was cancelled stays open while
// a run may still deposit under it.
func TestSavingsGoalClose(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	g := w.goal(t, "Holiday", 50_000)

	// A deposit in flight (the bank answers its transfer 3 s late; its ledger hold and its
	// PENDING movement are written before): the close is refused.
	w.bank.Fault(t, w.escrow, map[string]any{"latencyMs": 3_000})
	deposited := make(chan *httptest.ResponseRecorder, 1)
	go func() { deposited <- w.move("deposit", g.ID, testkit.Unique("deposit"), 7_000) }()
	require.Eventually(t, func() bool {
		return w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2 AND status = 'PENDING'`, w.tenant, g.ID) == 1
	}, 60*time.Second, 20*time.Millisecond)
	requireStatus(t, w.me.call(http.MethodPost, closePath(g.ID), nil), http.StatusConflict, savings.CodeGoalNotEmpty)
	rec := <-deposited
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	w.bank.Sandbox.ClearFault(t, w.escrow)
	w.waitSaved(t, g.ID, 7_000)
	rec = w.me.call(http.MethodPost, "/api/savings/goals/"+g.ID+"/autosave-mandate", map[string]any{"amountSantim": 1_000, "startPeriod": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	mandate := decode[mandateJSON](t, rec).ID

	// Money in the goal: refused, audited, nothing else.
	requireStatus(t, w.me.call(http.MethodPost, closePath(g.ID), nil), http.StatusConflict, savings.CodeGoalNotEmpty)
	require.Equal(t, 2, w.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CloseSavingsGoal' AND outcome = 'DENIED'`, w.tenant))
	require.Equal(t, savings.GoalActive, w.goals(t)[g.ID].Status)

	// Withdrawn to zero; a payroll run being calculated may still take the auto-save.
	rec = w.move("withdraw", g.ID, testkit.Unique("withdraw"), 7_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	w.waitSaved(t, g.ID, 0)
	rec = w.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	run := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	mark := func(on bool) {
		require.NoError(t, db.InTenantTx(context.Background(), w.d.App, w.tenant, func(tx pgx.Tx) error {
			q := `UPDATE app.payroll_runs SET calculating_at = now(), calculating_by = 'test' WHERE id = $1`
			if !on {
				q = `UPDATE app.payroll_runs SET calculating_at = NULL, calculating_by = NULL WHERE id = $1`
			}
			_, err := tx.Exec(context.Background(), q, run)
			return err
		}))
	}
	mark(true)
	requireStatus(t, w.me.call(http.MethodPost, closePath(g.ID), nil), http.StatusConflict, savings.CodeGoalAutosaveInRun)
	mark(false)

	// Closed.
	rec = w.me.call(http.MethodPost, closePath(g.ID), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	closed := decode[savingsGoalJSON](t, rec)
	require.Equal(t, savings.GoalClosed, closed.Status)
	require.NotNil(t, closed.ClosedAt)
	require.Zero(t, closed.SavedSantim)
	require.Nil(t, closed.Autosave)
	require.Equal(t, payroll.MandateCancelled, w.mandateStatus(t, mandate))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.goal_closed.v1'
		AND payload->>'goalId' = $2 AND payload->>'cancelledMandateId' = $3`, w.tenant, g.ID, mandate))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CloseSavingsGoal' AND outcome = 'SUCCESS'`, w.tenant))

	// Again: the same goal, nothing written.
	rec = w.me.call(http.MethodPost, closePath(g.ID), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, closed.ClosedAt.UTC(), decode[savingsGoalJSON](t, rec).ClosedAt.UTC())
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.goal_closed.v1'`, w.tenant))

	// A closed goal takes no deposit (nothing moves at the sandbox) and no opt-in.
	saverBefore, escrowBefore := w.sandboxBalance(t, w.saver), w.sandboxBalance(t, w.escrow)
	requireStatus(t, w.move("deposit", g.ID, testkit.Unique("deposit"), 100), http.StatusConflict, savings.CodeGoalClosed)
	require.Equal(t, saverBefore, w.sandboxBalance(t, w.saver))
	require.Equal(t, escrowBefore, w.sandboxBalance(t, w.escrow))
	requireStatus(t, w.me.call(http.MethodPost, "/api/savings/goals/"+g.ID+"/autosave-mandate", map[string]any{"amountSantim": 1_000, "startPeriod": "2026-11"}),
		http.StatusConflict, savings.CodeGoalClosed)

	// Not the caller's goal, or nobody's; a malformed id.
	mine := w.goal(t, "Still mine", 1_000)
	neighbour := w.saverOf(t, w.owner, testkit.Unique("neighbour")+"@savings.test")
	requireStatus(t, neighbour.call(http.MethodPost, closePath(mine.ID), nil), http.StatusNotFound, savings.CodeGoalNotFound)
	seedEmployeeCatalogs(t, w.other)
	stranger := w.saverOf(t, w.other, testkit.Unique("stranger")+"@savings.test")
	requireStatus(t, stranger.call(http.MethodPost, closePath(mine.ID), nil), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, w.me.call(http.MethodPost, closePath("sgl_unknown"), nil), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, w.me.hostile(http.MethodPost, closePath("sgl_%00bad"), nil), http.StatusBadRequest, "INVALID_REQUEST")
	require.Equal(t, savings.GoalActive, w.goals(t)[mine.ID].Status)

	// An auto-save cancelled by the employer while a run may still have withheld under it: the
	// run's completion still deposits that line, so the goal stays open until the run is done.
	rec = w.me.call(http.MethodPost, "/api/savings/goals/"+mine.ID+"/autosave-mandate", map[string]any{"amountSantim": 1_000, "startPeriod": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = w.owner.call(http.MethodPost, "/api/payroll/deduction-mandates/"+decode[mandateJSON](t, rec).ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	mark(true)
	requireStatus(t, w.me.call(http.MethodPost, closePath(mine.ID), nil), http.StatusConflict, savings.CodeGoalAutosaveInRun)
	require.Equal(t, savings.GoalActive, w.goals(t)[mine.ID].Status)
	mark(false)
	rec = w.me.call(http.MethodPost, closePath(mine.ID), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, savings.GoalClosed, decode[savingsGoalJSON](t, rec).Status)
}

// TestSavingsGoalCloseRacingDeposits: ten deposits race ten closes (one every 0.4 s) of an
// empty goal. Whatever
// wins, no money is left in a CLOSED goal: when the goal ends CLOSED nothing settled into it and
// its ledger account and the escrow at the sandbox hold nothing; when it stays ACTIVE the settled
// deposits are exactly what it holds, at the ledger and at the sandbox.
func TestSavingsGoalCloseRacingDeposits(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	g := w.goal(t, "Raced", 50_000)
	const n, amount = 10, 500

	var wg sync.WaitGroup
	codes := make(chan int, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			codes <- w.move("deposit", g.ID, testkit.Unique("deposit"), amount).Code
		}()
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i+1) * 400 * time.Millisecond) // some closes meet deposits in flight, some settled ones
			codes <- w.me.call(http.MethodPost, closePath(g.ID), nil).Code
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		require.Contains(t, []int{http.StatusOK, http.StatusAccepted, http.StatusConflict}, c)
	}
	// Every deposit that was recorded settles (the sandbox accepts them all).
	require.Eventually(t, func() bool {
		return w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2 AND status = 'PENDING'`, w.tenant, g.ID) == 0
	}, 90*time.Second, 100*time.Millisecond)
	settled := w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2 AND status = 'SETTLED'`, w.tenant, g.ID)
	got := w.waitSaved(t, g.ID, int64(settled*amount))
	if got.Status == savings.GoalClosed {
		require.Zero(t, settled, "a deposit settled into a goal that was closed")
	}
	require.Equal(t, int64(settled*amount), w.sandboxBalance(t, w.escrow), "the escrow holds exactly the settled deposits")
	t.Logf("goal %s, %d deposits settled", got.Status, settled)
}

// mandateStatus is a deduction mandate's status.
func (w *savingsWorld) mandateStatus(t *testing.T, id string) string {
	t.Helper()
	var status string
	require.NoError(t, db.InTenantTx(context.Background(), w.d.App, w.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT status FROM app.payroll_deduction_mandates WHERE id = $1`, id).Scan(&status)
	}))
	return status
}

// TestSavingsAutosaveOptInWaitsForAClose: an auto-save opt-in that reaches a goal while its close
// holds the goal's row waits for the close, then finds the goal CLOSED (409 SAVINGS_GOAL_CLOSED)
// and makes no mandate (found by an audit: the opt-in read the goal without a lock and made a
// live mandate on a goal closed beside it, which would withhold pay every month for nothing).
func TestSavingsAutosaveOptInWaitsForAClose(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{})
	g := w.goal(t, "Holiday", 500_000)
	ctx := context.Background()
	hold := holdRowLock(t, w.d.Name, `SELECT 1 FROM app.savings_goals WHERE id = $1 FOR UPDATE`, g.ID)

	answer := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		answer <- w.me.call(http.MethodPost, "/api/savings/goals/"+g.ID+"/autosave-mandate", map[string]any{"amountSantim": 1_000,
			"startPeriod": "2026-11"})
	}()
	var early *httptest.ResponseRecorder
	select { // the opt-in must wait for the close's lock; an answer now is the defect
	case early = <-answer:
	case <-time.After(2 * time.Second):
	}
	_, err := hold.Exec(ctx, `UPDATE app.savings_goals SET status = 'CLOSED', closed_at = now(), closed_by = 'usr_closer' WHERE id = $1`, g.ID)
	require.NoError(t, err)
	require.NoError(t, hold.Commit(ctx))
	rec := early
	if rec == nil {
		rec = <-answer
	}
	requireStatus(t, rec, http.StatusConflict, "SAVINGS_GOAL_CLOSED")
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE reference = $1`, g.ID))
}
