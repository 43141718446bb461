package api

import (
	"context"
	"fmt"
	"hash/crc32"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// saverOf creates an employee in owner's organization (its catalogs seeded) with a payout account
// open at the sandbox, links a new user (email) to it and signs them in: another saver, in the
// same organization or another one.
func (w *savingsWorld) saverOf(t *testing.T, owner *apiClient, email string) *apiClient {
	c, _, _ := w.saverWithAccount(t, owner, email)
	return c
}

// saverWithAccount is saverOf, with the saver's employee id and payout account.
func (w *savingsWorld) saverWithAccount(t *testing.T, owner *apiClient, email string) (c *apiClient, employee, account string) {
	t.Helper()
	n := crc32.ChecksumIEEE([]byte(email))
	account = fmt.Sprintf("OTHER-%d", n)
	w.bank.Account(t, account, "Other Saver", 0)
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Other", "lastName": "Saver", "email": email, "phone": fmt.Sprintf("+25192%07d", n%10_000_000),
		"nationalId": fmt.Sprintf("ET%08d", n%100_000_000), "department": "Ops", "position": "Clerk",
		"employmentType": "Full time", "paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 800_000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": account, "holderName": "Other Saver"},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	emp := decode[employeeJSON](t, rec)
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, w.d.App, identity.NewUser{Email: email, Name: "Other Saver", PasswordHash: hash})
	require.NoError(t, err)
	require.NoError(t, db.InTenantTx(ctx, w.d.App, emp.BusinessID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, emp.ID)
		return err
	}))
	return w.signIn(email), emp.ID, account
}

// closeGoal closes the caller's empty goal by its route.
func (w *savingsWorld) closeGoal(t *testing.T, id string) {
	t.Helper()
	rec := w.me.call(http.MethodPost, "/api/savings/goals/"+id+"/close", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, savings.GoalClosed, decode[savingsGoalJSON](t, rec).Status)
}

// TestSavingsAutosaveMandateOptIn: a saver opts in to auto-save into their own goal by payroll
// deduction. Bad input is 400 with nothing written; another saver's goal (same organization),
// a goal seen from another organization's saver, an unknown goal and a caller with no employee
// are 404; a closed goal is 409 SAVINGS_GOAL_CLOSED; the opt-in is a PENDING SAVINGS_AUTOSAVE
// mandate of the saver's employee on the goal, a second one 409 PAYROLL_MANDATE_EXISTS; the
// payroll's own mandate route does not create the kind; GET /api/me/savings/goals shows the goal's
// auto-save (and none on the other goal).
func TestSavingsAutosaveMandateOptIn(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{noWorker: true})
	g := w.goal(t, "Holiday", 500_000)
	closed := w.goal(t, "Old plan", 500_000)
	w.closeGoal(t, closed.ID)
	path := func(id string) string { return "/api/savings/goals/" + id + "/autosave-mandate" }
	mandates := func() int {
		return w.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE kind = 'SAVINGS_AUTOSAVE'`)
	}
	const amount int64 = 25_000
	optIn := map[string]any{"amountSantim": amount, "startPeriod": "2026-11"}

	// Bad input: 400, nothing written.
	for _, body := range []map[string]any{
		{"startPeriod": "2026-11"},
		{"amountSantim": 0, "startPeriod": "2026-11"},
		{"amountSantim": -1, "startPeriod": "2026-11"},
		{"amountSantim": savings.MaxAutosaveSantim + 1, "startPeriod": "2026-11"},
		{"amountSantim": "25000", "startPeriod": "2026-11"},
		{"amountSantim": 1.5, "startPeriod": "2026-11"},
		{"amountSantim": amount},
		{"amountSantim": amount, "startPeriod": "2026-13"},
		{"amountSantim": amount, "startPeriod": "2026-11", "endPeriod": ""},
		{"amountSantim": amount, "startPeriod": "2026-11", "endPeriod": "2026-10"},
		{"amountSantim": amount, "startPeriod": "2026-11", "employeeId": w.employee},
		{"amountSantim": amount, "startPeriod": "2026-11", "kind": "OTHER"},
	} {
		requireStatus(t, w.me.hostile(http.MethodPost, path(g.ID), body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.me.hostile(http.MethodPost, path("bad%20id"), optIn), http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, mandates())

	// Not the caller's goal: 404, nothing written.
	neighbour := w.saverOf(t, w.owner, testkit.Unique("neighbour")+"@savings.test")
	rec := neighbour.call(http.MethodPost, "/api/savings/goals", map[string]any{"name": "Theirs", "targetSantim": 1_000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	theirs := decode[savingsGoalJSON](t, rec)
	requireStatus(t, w.me.call(http.MethodPost, path(theirs.ID), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, neighbour.call(http.MethodPost, path(g.ID), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	seedEmployeeCatalogs(t, w.other)
	stranger := w.saverOf(t, w.other, testkit.Unique("stranger")+"@savings.test")
	requireStatus(t, stranger.call(http.MethodPost, path(g.ID), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, w.me.call(http.MethodPost, path("sgl_unknown"), optIn), http.StatusNotFound, savings.CodeGoalNotFound)
	requireStatus(t, w.owner.call(http.MethodPost, path(g.ID), optIn), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	// A closed goal: 409, nothing written.
	requireStatus(t, w.me.call(http.MethodPost, path(closed.ID), optIn), http.StatusConflict, savings.CodeGoalClosed)
	// The payroll's own mandate route does not create the kind.
	requireStatus(t, w.owner.hostile(http.MethodPost, "/api/payroll/deduction-mandates", map[string]any{"employeeId": w.employee,
		"kind": payroll.KindSavingsAutosave, "amountSantim": amount, "startPeriod": "2026-11", "reference": g.ID}),
		http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, mandates())

	// The saver's opt-in: PENDING, for their employee, the goal and the amount.
	rec = w.me.call(http.MethodPost, path(g.ID), map[string]any{"amountSantim": amount, "startPeriod": "2026-11", "endPeriod": "2027-10"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	require.Equal(t, payroll.KindSavingsAutosave, md.Kind)
	require.Equal(t, payroll.MandatePending, md.Status)
	require.Equal(t, w.employee, md.EmployeeID)
	require.Equal(t, amount, *md.AmountSantim)
	require.Equal(t, g.ID, *md.Reference)
	requireStatus(t, w.me.call(http.MethodPost, path(g.ID), optIn), http.StatusConflict, payroll.CodeMandateExists)
	require.Equal(t, 1, mandates())
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.deduction_mandate_created.v1'`, w.tenant))

	// The listing shows the goal's auto-save, and none on the others.
	goals := w.goals(t)
	require.Equal(t, &savingsAutosaveJSON{MandateID: md.ID, AmountSantim: amount, Status: payroll.MandatePending}, goals[g.ID].Autosave)
	require.Nil(t, goals[closed.ID].Autosave)
	require.Equal(t, savings.GoalClosed, goals[closed.ID].Status)
}

// TestSavingsAutosaveByPayrollDeduction, on the real stack with the sandbox: three savers opt in
// to auto-save by payroll deduction and a payroll approver activates the mandates. The payroll of
// 2026-11 takes the saver's auto-save (within the protection policy), takes the second saver's
// too, and not the third's, which the policy's room does not cover (no line: nothing taken, none
// owed). The second saver's payment is refused by the bank (their entry FAILED) and the operator
// completes the run: the saver's auto-save is deposited exactly once — the movement SETTLED with
// source PAYROLL and its mandate, the deposit's journal exact, the goal's balance and progress
// grown by exactly the amount; the payroll account paid every net and the amount, the escrow
// received the amount, the saver's own account only the net — and the FAILED entry's deposits
// nothing. Completing again, and the deposit saga run again under its (run, entry, mandate) id,
// change nothing.
func TestSavingsAutosaveByPayrollDeduction(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	pw := payrollWorldOn(t, w.ewaStack, 1, payrollDisburseFunds)
	pw.employees[w.employee] = w.saver
	pw.setPayrollAccount(t, pw.payroll, "Employer PLC")
	failing, failingEmp, failingAcct := w.saverWithAccount(t, w.owner, testkit.Unique("failing")+"@savings.test")
	greedy, greedyEmp, greedyAcct := w.saverWithAccount(t, w.owner, testkit.Unique("greedy")+"@savings.test")
	pw.employees[failingEmp], pw.employees[greedyEmp] = failingAcct, greedyAcct
	w.bank.Fault(t, failingAcct, map[string]any{"rejectCode": "BENEFICIARY_BLOCKED"})

	const target, amount, failingAmount, greedyAmount int64 = 200_000, 30_000, 10_000, 700_000
	g := w.goal(t, "Car", target)
	goalOf := func(c *apiClient) string {
		rec := c.call(http.MethodPost, "/api/savings/goals", map[string]any{"name": "Rainy day", "targetSantim": target})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[savingsGoalJSON](t, rec).ID
	}
	failingGoal, greedyGoal := goalOf(failing), goalOf(greedy)
	optIn := func(c *apiClient, goal string, amount int64) mandateJSON {
		rec := c.call(http.MethodPost, "/api/savings/goals/"+goal+"/autosave-mandate", map[string]any{"amountSantim": amount, "startPeriod": "2026-11"})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		md := decode[mandateJSON](t, rec)
		rec = pw.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+md.ID+"/activate", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return md
	}
	md, failingMd, greedyMd := optIn(w.me, g.ID, amount), optIn(failing, failingGoal, failingAmount), optIn(greedy, greedyGoal, greedyAmount)
	require.Equal(t, &savingsAutosaveJSON{MandateID: md.ID, AmountSantim: amount, Status: payroll.MandateActive}, w.goals(t)[g.ID].Autosave)

	// The payroll: the saver's and the failing saver's entries deduct their auto-save; the greedy
	// saver's does not (the protection policy's room does not cover it).
	accounts := []string{w.escrow, pw.payroll, w.saver, failingAcct, greedyAcct}
	before := pw.balances(t, accounts)
	run := pw.approvedRun(t)
	line := func(emp, mandate string, amount int64) int {
		return w.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2 AND deductions @> $3::jsonb`,
			run.ID, emp, fmt.Sprintf(`[{"kind":"SAVINGS_AUTOSAVE","reference":%q,"amountSantim":%d}]`, mandate, amount))
	}
	require.Equal(t, 1, line(w.employee, md.ID, amount))
	require.Equal(t, 1, line(failingEmp, failingMd.ID, failingAmount))
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2
		AND deductions @> '[{"kind":"SAVINGS_AUTOSAVE"}]'::jsonb`, run.ID, greedyEmp), "the room does not cover the greedy auto-save")
	rec := pw.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	detail := pw.waitRun(t, run.ID, "DISBURSED")
	require.Equal(t, 1, detail.EntryCounts["FAILED"])
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2 AND status = 'FAILED'`,
		run.ID, failingEmp))
	rec = pw.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/complete", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	pw.waitRun(t, run.ID, "COMPLETED")

	// The deposit: one, by payroll, SETTLED; the goal grew by exactly the amount.
	wfID := workflows.PayrollProductWorkflowID(w.tenant, run.ID, payroll.Obligation{Kind: payroll.KindSavingsAutosave,
		EntryID: entryOf(t, w.ewaStack, run.ID, w.employee), Reference: md.ID})
	got := w.waitSaved(t, g.ID, amount)
	testkit.RecordHistory(t, w.tc, wfID, "", "../workflows/testdata/savings_deposit_payroll_history.json")
	require.Equal(t, amount*10_000/target, got.ProgressBasisPoints)
	require.Equal(t, amount, got.AvailableSantim)
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2 AND kind = 'DEPOSIT'
		AND status = 'SETTLED' AND source = 'PAYROLL' AND mandate_id = $3 AND amount_santim = $4 AND workflow_id = $5
		AND requested_by = 'system:payroll-complete'`, w.tenant, g.ID, md.ID, amount, wfID))
	tx, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant,
		IdempotencyKey: "savings-deposit:" + wfID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D %s %d", chart.PartnerBankAccount("sandbox", w.escrow), amount),
		fmt.Sprintf("C %s %d", savings.Account(g.ID), amount),
	}, entryLines(tx.GetTransaction()))
	require.Equal(t, savings.SourcePayroll, tx.GetTransaction().GetMetadata()["source"])
	require.Equal(t, md.ID, tx.GetTransaction().GetMetadata()["mandateId"])
	for _, goal := range []string{failingGoal, greedyGoal} {
		_, err := w.ledger.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: w.tenant, AccountName: savings.Account(goal)})
		require.ErrorIs(t, err, ledger.ErrAccountNotFound, "nothing ever moved into %s", goal)
	}
	// The money: the payroll account paid every PAID net and the auto-save; the escrow received
	// it; the saver's own account received the net and paid nothing.
	after := pw.balances(t, accounts)
	paidNet := int64(w.count(t, `SELECT coalesce(sum(net_santim), 0)::int FROM app.payroll_entries WHERE run_id = $1 AND status = 'PAID'`, run.ID))
	require.Equal(t, before[w.escrow]+amount, after[w.escrow])
	require.Equal(t, before[pw.payroll]-paidNet-amount, after[pw.payroll])
	require.Equal(t, before[w.saver]+netOf(t, w.ewaStack, run.ID, w.employee), after[w.saver])
	require.Equal(t, before[failingAcct], after[failingAcct])
	require.Equal(t, before[greedyAcct]+netOf(t, w.ewaStack, run.ID, greedyEmp), after[greedyAcct])
	// The mandates: the saver's took the amount, the others nothing.
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = $2 AND status = 'ACTIVE'`,
		md.ID, amount))
	require.Equal(t, 2, w.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id IN ($1, $2) AND taken_santim = 0`,
		failingMd.ID, greedyMd.ID))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.deposited.v1'
		AND payload->>'source' = 'PAYROLL' AND payload->>'mandateId' = $2 AND payload->>'goalId' = $3`, w.tenant, md.ID, g.ID))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND payload->'productsCollected'->'SAVINGS_AUTOSAVE' = $2::jsonb AND (payload->'refused'->>'count')::int = 0`,
		w.tenant, fmt.Sprintf(`{"count":1,"santim":%d}`, amount)))

	// Again: the completion answers, the saga under its id moves nothing.
	state := func() []int64 {
		b := pw.balances(t, accounts)
		return []int64{
			int64(w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant)),
			int64(w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant)),
			int64(w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1`, w.tenant)),
			int64(w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1`, w.tenant)),
			int64(w.count(t, `SELECT coalesce(sum(taken_santim), 0)::int FROM app.payroll_deduction_mandates WHERE tenant_id = $1`, w.tenant)),
			b[w.escrow], b[pw.payroll], b[w.saver],
		}
	}
	was := state()
	mr := completeAndRerunProduct[workflows.SavingsMoveResult](t, w.tc, w.queue, w.tenant, run.ID, wfID,
		workflows.SavingsMoveWorkflowName, workflows.SavingsMoveInput{TenantID: w.tenant, GoalID: g.ID, Kind: savings.Deposit, AmountSantim: amount,
			ActorID: "system:payroll-complete", Payroll: &workflows.SavingsPayrollSource{MandateID: md.ID}})
	require.Equal(t, workflows.SavingsSettled, mr.Status)
	require.Equal(t, was, state(), "ledger, transfers, events, movements, mandates and balances unchanged")
	require.Equal(t, amount, w.goals(t)[g.ID].SavedSantim)
}
