package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	refusals "github.com/wagerail/wagerail/internal/platform/refusal"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// savingsWorld is the EWA stack (real Postgres, Temporal, ledger, gateway and bank sandbox over
// HTTP with its callbacks) with a savings escrow set, the employee's payout account funded and
// the employee's login linked.
type savingsWorld struct {
	*ewaStack
	me     *apiClient
	escrow string
	saver  string // the saver's (the stack employee's) payout account at the sandbox
}

func newSavingsWorld(t *testing.T, o ewaStackOpts) *savingsWorld {
	s := newEwaStack(t, o)
	s.approveKyc(t)
	w := &savingsWorld{ewaStack: s, escrow: testkit.Unique("escrow")}
	s.bank.Account(t, w.escrow, "Org Savings Escrow", 0)
	saver := testkit.Unique("saver")
	w.saver = saver
	s.bank.Account(t, saver, "Abebe Kebede", 1_000_000)
	s.setPayoutAccount(t, saver, "Abebe Kebede")
	rec := s.owner.call(http.MethodPut, "/api/savings/settings", map[string]any{
		"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": w.escrow}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w.me = s.linkEmployeeUser(t, testkit.Unique("saver")+"@savings.test")
	return w
}

func (w *savingsWorld) goal(t *testing.T, name string, target int64) savingsGoalJSON {
	t.Helper()
	rec := w.me.call(http.MethodPost, "/api/savings/goals", map[string]any{"name": name, "targetSantim": target})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[savingsGoalJSON](t, rec)
}

func (w *savingsWorld) goals(t *testing.T) map[string]savingsGoalJSON {
	t.Helper()
	rec := w.me.call(http.MethodGet, "/api/me/savings/goals", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := map[string]savingsGoalJSON{}
	for _, g := range decode[savingsGoalListJSON](t, rec).Items {
		out[g.ID] = g
	}
	return out
}

// waitSaved waits until the goal's posted balance is saved and nothing is in flight.
func (w *savingsWorld) waitSaved(t *testing.T, id string, saved int64) savingsGoalJSON {
	t.Helper()
	var g savingsGoalJSON
	require.Eventually(t, func() bool {
		g = w.goals(t)[id]
		// The goal's figures are the ledger's, committed before the saga records its movement's
		// end: nothing is pending once no movement of the goal is PENDING either.
		return g.SavedSantim == saved && g.PendingDepositSantim == 0 && g.PendingWithdrawalSantim == 0 &&
			w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2 AND status = 'PENDING'`, w.tenant, id) == 0
	}, 60*time.Second, 100*time.Millisecond, "goal %s: want %d saved, nothing pending", id, saved)
	return g
}

func (w *savingsWorld) move(verb, id, key string, amount int64) *httptest.ResponseRecorder {
	return w.me.call(http.MethodPost, "/api/savings/goals/"+id+"/"+verb, map[string]any{"amountSantim": amount}, "Idempotency-Key", key)
}

// TestSavingsEndToEnd: over HTTP on the real stack, a saver creates a goal, deposits (payout
// account → escrow at the sandbox, settled by its callback): the ledger holds exactly the
// deposit's journal, the goal's progress is the ledger's, one savings.deposited.v1; a withdrawal
// of more than is saved is refused with nothing moved; a withdrawal pays back out with its
// journal; a replay answers the stored result; another saver's or an unknown goal is 404.
func TestSavingsEndToEnd(t *testing.T) {
	t.Parallel()
	// A loaded machine (the race detector, other suites) may take longer than the default wait to
	// start a saga: the calls wait for the saga's answer instead.
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	g := w.goal(t, "School fees", 20_000)
	require.Zero(t, g.SavedSantim)
	require.Equal(t, "savings-held:"+g.ID, g.LedgerAccount)

	key := testkit.Unique("deposit")
	rec := w.move("deposit", g.ID, key, 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[savingsMoveJSON](t, rec)
	require.Contains(t, []string{"DISBURSING", "SETTLED"}, acc.Status)
	got := w.waitSaved(t, g.ID, 10_000)
	require.Equal(t, "SETTLED", w.result(t, acc.WorkflowID).Status) // the saga has recorded what follows the ledger's commit
	require.Equal(t, int64(5_000), got.ProgressBasisPoints)
	require.Equal(t, int64(10_000), got.AvailableSantim)

	tx, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant, IdempotencyKey: "savings-deposit:" + acc.WorkflowID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{"D partner-bank:sandbox:" + w.escrow + " 10000", "C savings-held:" + g.ID + " 10000"}, entryLines(tx.GetTransaction()))
	require.Equal(t, acc.WorkflowID+".savings-deposit.1", tx.GetTransaction().GetMetadata()["bank_reference"])
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.deposited.v1' AND payload->>'goalId' = $2`, w.tenant, g.ID))
	require.Equal(t, 1, w.auditRows(t, "SavingsDeposited"))

	again := w.move("deposit", g.ID, key, 10_000)
	require.Equal(t, rec.Body.String(), again.Body.String())
	require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))

	// More than is saved: refused by the saga under the goal's lock, nothing posted.
	bigKey := testkit.Unique("withdraw")
	requireStatus(t, w.move("withdraw", g.ID, bigKey, 10_001), http.StatusConflict, "SAVINGS_INSUFFICIENT_BALANCE")
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND kind = 'WITHDRAWAL'`, w.tenant))

	wk := testkit.Unique("withdraw")
	rec = w.move("withdraw", g.ID, wk, 4_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	wacc := decode[savingsMoveJSON](t, rec)
	w.waitSaved(t, g.ID, 6_000)
	require.Equal(t, "SETTLED", w.result(t, wacc.WorkflowID).Status)
	tx, err = w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant, IdempotencyKey: "savings-withdraw:" + wacc.WorkflowID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{"D savings-held:" + g.ID + " 4000", "C partner-bank:sandbox:" + w.escrow + " 4000"}, entryLines(tx.GetTransaction()))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.withdrawn.v1'`, w.tenant))
	testkit.RecordHistory(t, w.tc, acc.WorkflowID, "", "../workflows/testdata/savings_deposit_history.json")
	testkit.RecordHistory(t, w.tc, wacc.WorkflowID, "", "../workflows/testdata/savings_withdraw_history.json")
	// One savings.bank_transfer_settled.v1 per movement, its amount exactly.
	settled := []settledTransfer{{Kind: "deposit", SubjectID: w.movementID(t, acc.WorkflowID), AmountSantim: 10_000},
		{Kind: "withdrawal", SubjectID: w.movementID(t, wacc.WorkflowID), AmountSantim: 4_000}}
	require.Equal(t, settled, settledTransfers(t, w.d, w.tenant, savings.EventBankTransferSettled))

	// The bank refuses a withdrawal: FAILED, nothing settled, no event.
	w.bank.Fault(t, w.saver, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
	rec = w.move("withdraw", g.ID, testkit.Unique("withdraw"), 1_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, workflows.SavingsFailed, w.result(t, decode[savingsMoveJSON](t, rec).WorkflowID).Status)
	w.bank.Sandbox.ClearFault(t, w.saver)
	w.waitSaved(t, g.ID, 6_000)
	require.Equal(t, settled, settledTransfers(t, w.d, w.tenant, savings.EventBankTransferSettled))

	// Not the caller's goal, or nobody's.
	requireStatus(t, w.move("deposit", "sgl_unknown", testkit.Unique("k"), 100), http.StatusNotFound, "SAVINGS_GOAL_NOT_FOUND")
	requireStatus(t, w.owner.call(http.MethodPost, "/api/savings/goals/"+g.ID+"/withdraw", map[string]any{"amountSantim": 1}, "Idempotency-Key", testkit.Unique("k")),
		http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, w.other.call(http.MethodGet, "/api/me/savings/goals", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, w.me.hostile(http.MethodPost, "/api/savings/goals/"+g.ID+"/withdraw", map[string]any{"amountSantim": 0}, "Idempotency-Key", testkit.Unique("k")),
		http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, w.me.hostile(http.MethodPost, "/api/savings/goals", map[string]any{"name": " ", "targetSantim": 1}), http.StatusBadRequest, "INVALID_REQUEST")
}

// A saver whose employment ended takes their savings back out: a deposit is refused
// (SAVINGS_EMPLOYEE_NOT_ACTIVE), a withdrawal pays the goal's money to their payout account, and
// the emptied goal closes. Found by an audit: every plan refused a saver who was not ACTIVE, so a
// terminated employee's savings stayed in the escrow with no way out.
func TestSavingsTerminatedSaverWithdraws(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	g := w.goal(t, "Rainy day", 50_000)
	rec := w.move("deposit", g.ID, testkit.Unique("d"), 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	w.waitSaved(t, g.ID, 10_000)
	rec = w.owner.call(http.MethodPut, "/api/employees/"+w.employee+"/status", map[string]any{"status": "TERMINATED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	requireStatus(t, w.move("deposit", g.ID, testkit.Unique("d"), 1_000), http.StatusConflict, "SAVINGS_EMPLOYEE_NOT_ACTIVE")
	rec = w.move("withdraw", g.ID, testkit.Unique("w"), 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	w.waitSaved(t, g.ID, 0)
	require.Equal(t, int64(1_000_000), w.sandboxBalance(t, w.saver), "the saver has their money back")
	w.closeGoal(t, g.ID)
}

// TestSavingsDeleteRefusedWhileAGoalHoldsMoney: the saver reaches their goals only through their
// employee record, so deleting it while a goal holds money would strand the money at the escrow
// (found by an audit: 200 delete, then 404 EMPLOYEE_NOT_LINKED on the saver's withdrawal). The
// delete is refused 409 EMPLOYEE_HAS_OBLIGATIONS naming the goal, nothing changed; once the saver
// has withdrawn it, the record may go (an empty goal left open does not hold it back).
func TestSavingsDeleteRefusedWhileAGoalHoldsMoney(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	g := w.goal(t, "Rainy day", 50_000)
	w.goal(t, "Never funded", 10_000)
	require.Equal(t, http.StatusAccepted, w.move("deposit", g.ID, testkit.Unique("d"), 10_000).Code)
	w.waitSaved(t, g.ID, 10_000)

	details := refused(t, w.owner.call(http.MethodDelete, "/api/employees/"+w.employee, nil), http.StatusConflict, "EMPLOYEE_HAS_OBLIGATIONS")
	obligations, _ := details["obligations"].([]any)
	require.Len(t, obligations, 1, "%v", details)
	require.Equal(t, "SAVINGS_GOAL", obligations[0].(map[string]any)["kind"])
	require.Equal(t, g.ID, obligations[0].(map[string]any)["id"])

	rec := w.move("withdraw", g.ID, testkit.Unique("w"), 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String(), "the saver still reaches the goal")
	w.waitSaved(t, g.ID, 0)
	require.Equal(t, int64(1_000_000), w.sandboxBalance(t, w.saver))
	rec = w.owner.call(http.MethodDelete, "/api/employees/"+w.employee, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestSavingsEscrowNotChangedWhileItHoldsMoney: the escrow account holds the goals' money and
// every deposit and withdrawal moves money at the account set, so another account is refused 409
// SAVINGS_ESCROW_IN_USE (details: what it holds) while a goal holds money, nothing changed
// (found by an audit: withdrawals then drew on the new account, the goals' money left at the
// old); the same account again is fine, and once the goals are emptied the account may change.
func TestSavingsEscrowNotChangedWhileItHoldsMoney(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	other := testkit.Unique("escrow2")
	w.bank.Account(t, other, "Org Savings Escrow Two", 0)
	put := func(account string) *httptest.ResponseRecorder {
		return w.owner.call(http.MethodPut, "/api/savings/settings", map[string]any{
			"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": account}})
	}
	g := w.goal(t, "Rainy day", 20_000)
	require.Equal(t, http.StatusAccepted, w.move("deposit", g.ID, testkit.Unique("deposit"), 7_000).Code)
	w.waitSaved(t, g.ID, 7_000)

	details := refused(t, put(other), http.StatusConflict, "SAVINGS_ESCROW_IN_USE")
	require.EqualValues(t, 7_000, details["heldSantim"])
	require.Equal(t, http.StatusOK, put(w.escrow).Code, "the same account again")
	rec := w.owner.call(http.MethodGet, "/api/savings/settings", nil)
	require.Contains(t, rec.Body.String(), w.escrow, "nothing changed")

	require.Equal(t, http.StatusAccepted, w.move("withdraw", g.ID, testkit.Unique("withdraw"), 7_000).Code)
	w.waitSaved(t, g.ID, 0)
	rec = put(other)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), other)
}

// TestSavingsDepositNotRecordedAtAnEscrowChangedSinceItsPlan: a deposit saga that read its plan
// just before the escrow account changed (nothing held yet, so the change is allowed) does not
// record its movement: it would be PENDING under the new account while its transfer paid the old
// one, whose money no withdrawal could then reach (found by an audit). The record is refused
// SAVINGS_ESCROW_CHANGED with nothing stored (the saga then voids its posting, nothing moves); a
// plan read after the change records.
func TestSavingsDepositNotRecordedAtAnEscrowChangedSinceItsPlan(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{})
	g := w.goal(t, "Planned", 20_000)
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), w.tenant), "usr_test")
	plan := func() savings.Plan {
		var p savings.Plan
		require.NoError(t, db.InTenantTx(ctx, w.d.App, w.tenant, func(tx pgx.Tx) (err error) {
			p, err = savings.LoadPlan(ctx, tx, g.ID, w.employee, savings.Deposit, 500)
			return err
		}))
		return p
	}
	record := func(p savings.Plan) error {
		return db.InTenantTx(ctx, w.d.App, w.tenant, func(tx pgx.Tx) error {
			_, err := savings.RecordPending(ctx, tx, p, testkit.Unique("savings-deposit"), testkit.Unique("tx"), "test")
			return err
		})
	}

	stale := plan()
	other := testkit.Unique("escrow2")
	w.bank.Account(t, other, "Org Savings Escrow Two", 0)
	rec := w.owner.call(http.MethodPut, "/api/savings/settings", map[string]any{
		"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": other}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	var r *refusals.Refusal
	require.ErrorAs(t, record(stale), &r)
	require.Equal(t, savings.CodeEscrowChanged, r.Code)
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2`, w.tenant, g.ID))

	fresh := plan()
	require.Equal(t, other, fresh.Escrow.AccountNumber)
	require.NoError(t, record(fresh))
}

// result waits for the saga id's result.
// movementID is the id of the movement saga run wfID recorded.
func (w *savingsWorld) movementID(t *testing.T, wfID string) string {
	return tenantString(t, w.d, w.tenant, `SELECT id FROM app.savings_movements WHERE workflow_id = $1`, wfID)
}

func (w *savingsWorld) result(t *testing.T, id string) workflows.SavingsMoveResult {
	t.Helper()
	var res workflows.SavingsMoveResult
	require.NoError(t, w.tc.GetWorkflow(context.Background(), id, "").Get(context.Background(), &res))
	return res
}

// TestSavingsRacingWithdrawalsNeverBelowZero: 20 withdrawals of 700 race against a goal holding
// 10,000: exactly 14 are answered 202 (reserved) and 6 are 409 SAVINGS_INSUFFICIENT_BALANCE; in
// the end 14 sagas settled (9,800), 6 were refused with nothing moved, and the goal holds 200: it
// never went below zero.
func TestSavingsRacingWithdrawalsNeverBelowZero(t *testing.T) {
	t.Parallel()
	// Twenty sagas at once on a loaded machine: each call waits for its saga's answer (reserved
	// or refused), however long the goal's lock keeps it retrying.
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 3 * time.Minute})
	g := w.goal(t, "Rainy day", 50_000)
	rec := w.move("deposit", g.ID, testkit.Unique("deposit"), 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	w.waitSaved(t, g.ID, 10_000)

	const n = 20
	racers, keys := make([]*racer, n), make([]string, n)
	for i := range racers {
		keys[i] = testkit.Unique("race")
		racers[i] = w.me.racer(http.MethodPost, "/api/savings/goals/"+g.ID+"/withdraw", map[string]any{"amountSantim": 700},
			"Idempotency-Key", keys[i])
	}
	var wg sync.WaitGroup
	for _, r := range racers {
		wg.Add(1)
		go func() { defer wg.Done(); r.serve() }()
	}
	wg.Wait()
	outcomes, answers := map[string]int{}, map[int]int{}
	for i, r := range racers {
		a := r.answer()
		answers[a.Code]++
		switch a.Code {
		case http.StatusAccepted:
			require.NotEqual(t, "FAILED", decode[savingsMoveJSON](t, a).Status, a.Body.String())
		case http.StatusConflict:
			require.Equal(t, "SAVINGS_INSUFFICIENT_BALANCE", errCode(a), a.Body.String())
		default:
			t.Fatalf("withdrawal %d: %d %s", i, a.Code, a.Body.String())
		}
		var res workflows.SavingsMoveResult
		id := idempotency.WorkflowID(w.tenant, "POST /api/savings/goals/:id/withdraw", keys[i])
		require.NoError(t, w.tc.GetWorkflow(context.Background(), id, "").Get(context.Background(), &res))
		outcomes[res.Status+" "+res.Code]++
	}
	require.Equal(t, map[int]int{http.StatusAccepted: 14, http.StatusConflict: 6}, answers)
	require.Equal(t, map[string]int{"SETTLED ": 14, "REFUSED SAVINGS_INSUFFICIENT_BALANCE": 6}, outcomes)
	final := w.waitSaved(t, g.ID, 200)
	require.Equal(t, int64(200), final.AvailableSantim)
	require.Equal(t, 14, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND kind = 'WITHDRAWAL' AND status = 'SETTLED'`, w.tenant))
	require.Equal(t, 14, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.withdrawn.v1'`, w.tenant))
}

// FuzzSavingsRoutes: whatever reaches the savings routes (any id, query and body, from the saver,
// the owner, another business's owner or nobody) answers 4xx or success, never 5xx. (The money
// routes are sent without an Idempotency-Key or with a body the saga would refuse before it
// starts: no worker runs here.)
func FuzzSavingsRoutes(f *testing.F) {
	w := newWalletWorld(f)
	me := w.linkEmployeeUser(f, "fuzz-savings-me@example.com")
	routes := w.srv.savingsRoutes()
	f.Add(uint8(0), uint8(1), "", "", "")
	f.Add(uint8(1), uint8(1), "", "", `{"escrowAccount":{"partner":"sandbox","accountNumber":"\u0000"}}`)
	f.Add(uint8(2), uint8(0), "", "", `{"name":"x","targetSantim":1e400}`)
	f.Add(uint8(2), uint8(0), "", "", `{"name":"School","targetSantim":100,"targetDate":"1999-01-01"}`)
	f.Add(uint8(3), uint8(0), "sgl_x", "", `{"amountSantim":-1}`)
	f.Add(uint8(4), uint8(0), "%ff%00", "", `{"amountSantim":100}`)
	f.Add(uint8(5), uint8(0), "", "limit=0&cursor=%00", "")
	f.Add(uint8(5), uint8(2), "", "limit=1", "")
	// 6: POST .../autosave-mandate (the payroll-deduction opt-in).
	rec := me.call(http.MethodPost, "/api/savings/goals", map[string]any{"name": "Fuzz", "targetSantim": 1_000})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	goal := decode[savingsGoalJSON](f, rec).ID
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":100,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":0,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":100000000001,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":1e400,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":"100","startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":100,"startPeriod":"2026-11","endPeriod":"2026-10"}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":100,"startPeriod":"2026-13","endPeriod":""}`)
	f.Add(uint8(6), uint8(0), goal, "", `{"amountSantim":100,"startPeriod":null,"employeeId":"x"}`)
	f.Add(uint8(6), uint8(1), goal, "", `{"amountSantim":100,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(2), goal, "", `{"amountSantim":100,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(3), goal, "", `{"amountSantim":100,"startPeriod":"2026-11"}`)
	f.Add(uint8(6), uint8(0), "%ff%00", "", `[]`)
	// 7: POST .../close (no body).
	f.Add(uint8(7), uint8(0), goal, "", "")
	f.Add(uint8(7), uint8(0), goal, "", `{"force":true}`)
	f.Add(uint8(7), uint8(0), "sgl_\u202e", "", "")
	f.Add(uint8(7), uint8(0), "%ff%00", "", "")
	f.Add(uint8(7), uint8(1), goal, "", "")
	f.Add(uint8(7), uint8(2), goal, "", "")
	f.Add(uint8(7), uint8(3), goal, "", "")
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(r.Path, ":id", param, 1)
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.84:40000"
		switch who % 4 {
		case 0:
			req.AddCookie(me.cookie)
		case 1:
			req.AddCookie(w.owner.cookie)
		case 2:
			req.AddCookie(w.other.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}
