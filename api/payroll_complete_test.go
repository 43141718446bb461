package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// completeLine is a deduction line as an entry stores it.
type completeLine struct {
	Kind         string `json:"kind"`
	Reference    string `json:"reference"`
	AmountSantim int64  `json:"amountSantim"`
	PreTax       bool   `json:"preTax"`
}

// completeEntry is what the fixture needs of an entry: its employee, status, gross and lines
// (PAYE and pension first); the other figures follow from them.
type completeEntry struct {
	id, employee, status string
	gross                int64
	lines                []completeLine
}

func (e completeEntry) figures() (statutory, protected, deductions, net int64) {
	for i, l := range e.lines {
		if i < 2 {
			statutory += l.AmountSantim
		} else {
			protected += l.AmountSantim
		}
	}
	deductions = statutory + protected
	return statutory, protected, deductions, e.gross - deductions
}

// secondEmployee adds Hana Girma to the stack's business and answers her id.
func (s *loanStack) secondEmployee(t testing.TB) string {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Hana", "lastName": "Girma", "email": "hana@kyc.test", "phone": "+251911234568",
		"nationalId": "ET12345679", "department": "Ops", "position": "Clerk", "employmentType": "Full time",
		"paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 800000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": "1000123456790", "holderName": "Hana Girma"},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
}

// fixtureDisbursedRun is a TEST FIXTURE for what the disbursement saga leaves: a run of period
// 2026-11, DISBURSED, with these entries PAID or FAILED (fixtureDisbursedRunOf).
func fixtureDisbursedRun(t testing.TB, s *loanStack, entries []completeEntry) string {
	t.Helper()
	return fixtureDisbursedRunOf(t, s, "2026-11", entries)
}

// fixtureDisbursedRunOf is a run of period, DISBURSED, with these entries PAID or FAILED, and no
// completion started. Written as the platform role, every figure consistent with the tables'
// checks.
func fixtureDisbursedRunOf(t testing.TB, s *loanStack, period string, entries []completeEntry) string {
	t.Helper()
	runID := "prun_" + testkit.Unique("t")
	var gross, deductions, net int64
	for _, e := range entries {
		_, _, d, n := e.figures()
		gross, deductions, net = gross+e.gross, deductions+d, net+n
	}
	ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
	require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test fixture: a disbursed payroll run", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO app.payroll_runs (id, tenant_id, period, status, employee_count, gross_santim,
				deductions_santim, net_santim, created_by, calculated_by, calculated_at, approved_by, approved_at)
			VALUES ($1, $2, $7, 'DISBURSED', $3, $4, $5, $6, 'user_maker', 'user_maker', now(), 'user_checker', now())`,
			runID, s.tenant, len(entries), gross, deductions, net, period); err != nil {
			return err
		}
		for _, e := range entries {
			st, pr, d, n := e.figures()
			lines, err := json.Marshal(e.lines)
			if err != nil {
				return err
			}
			var reason *string
			if e.status == payroll.EntryFailed {
				r := "ACCOUNT_CLOSED"
				reason = &r
			}
			if _, err := tx.Exec(ctx, `INSERT INTO app.payroll_entries (id, tenant_id, run_id, employee_id, period, status,
					tax_table_version, days_in_period, days_employed, basic_santim, gross_santim, taxable_santim, exempt_santim,
					tax_base_santim, paye_santim, pension_employee_santim, statutory_santim, court_orders_santim, protected_santim,
					deductions_santim, net_santim, employer_contributions_santim, share_cap_santim, recoverable_santim,
					carried_forward_santim, below_minimum_net, earnings, deductions, employer_contributions, carried_forward,
					inputs_fingerprint, failure_reason)
				VALUES ($1, $2, $3, $4, $15, $5, 'ETH-2024', 30, 30, $6, $6, $6, 0, $6, $7, $8, $9, 0, $10, $11, $12, 0, 0, 0, 0,
					false, '[]', $13, '[]', '[]', repeat('a', 64), $14)`,
				e.id, s.tenant, runID, e.employee, e.status, e.gross, e.lines[0].AmountSantim, e.lines[1].AmountSantim, st, pr, d, n,
				string(lines), reason, period); err != nil {
				return err
			}
		}
		return nil
	}))
	return runID
}

// fixtureMandate is an ACTIVE deduction mandate (made and activated by two users, as the routes
// do) of employee with a total.
func fixtureMandate(t *testing.T, s *loanStack, employee, kind string, amount, total int64) string {
	t.Helper()
	id := "mdt_" + testkit.Unique("m")
	ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
	require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test fixture: a deduction mandate", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.payroll_deduction_mandates (id, tenant_id, employee_id, kind, amount_santim, total_santim,
				start_period, priority, status, created_by, created_at, activated_by, activated_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, '2026-01', 0, 'ACTIVE', 'user_maker', now(), 'user_checker', now(), now())`,
			id, s.tenant, employee, kind, amount, total)
		return err
	}))
	return id
}

// newCompletionStack is a loan stack whose worker also runs the payroll completion's steps.
func newCompletionStack(t *testing.T) *loanStack {
	t.Helper()
	s := newLoanStack(t, ewaStackOpts{noWorker: true})
	deps := s.loanActivities()
	deps.PayrollComplete = &activities.PayrollComplete{DB: db.NewBun(s.d.App), Platform: db.NewBun(s.srv.deps.Platform)}
	w := worker.New(s.tc, s.queue, workflows.WorkerOptions())
	workflows.Register(w, deps)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return s
}

// TestPayrollCompletionAppliesDeductions: a DISBURSED run whose PAID entry takes an EWA advance
// in full, a loan instalment in full, half of the next one and a union-dues mandate's last
// 5,000, and whose FAILED entry takes another mandate. The completion (real Postgres, the
// embedded Temporal server, the ledger and the gateway over gRPC, the bank sandbox): the advance
// REPAID, instalment 0 REPAID and remitted to the FI, instalment 1 PARTIALLY_REPAID and not
// remitted, every journal exact in santim, the first mandate COMPLETED, the FAILED entry's
// mandate untouched, the run COMPLETED with one payroll.run_completed.v1 whose figures are
// exact. Run again — its start, a second workflow, a repayment saga under its own id — nothing
// changes.
func TestPayrollCompletionAppliesDeductions(t *testing.T) {
	t.Parallel()
	s := newCompletionStack(t)

	// The employee's advance, DISBURSED, and loan, ACTIVE; a second employee with nothing but a
	// mandate.
	adv := s.request(t, 10_000)
	rec := s.disburse(adv.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	adv = s.waitStatus(t, adv.ID, "DISBURSED")
	l := s.activeLoan(t, s.fi, s.product, 300_000, 3)
	in0, in1 := l.Instalments[0], l.Instalments[1]
	half := in1.TotalSantim / 2
	require.Greater(t, half, in1.InterestSantim+in1.FeeSantim, "the half pays interest, fee and some principal")
	other := s.secondEmployee(t)
	dues := fixtureMandate(t, s, s.employee, payroll.KindUnionDues, 5_000, 5_000)
	owed := fixtureMandate(t, s, other, payroll.KindOther, 3_000, 10_000)

	paid := completeEntry{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: payroll.EntryPaid, gross: 1_500_000, lines: []completeLine{
		{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 302_500}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 105_000},
		{Kind: "EWA_RECOVERY", Reference: adv.ID, AmountSantim: adv.TotalSantim},
		{Kind: "LOAN_INSTALLMENT", Reference: fmt.Sprintf("%s#0", l.ID), AmountSantim: in0.TotalSantim},
		{Kind: "LOAN_INSTALLMENT", Reference: fmt.Sprintf("%s#1", l.ID), AmountSantim: half},
		{Kind: "UNION_DUES", Reference: dues, AmountSantim: 5_000},
	}}
	failed := completeEntry{id: "pent_" + testkit.Unique("t"), employee: other, status: payroll.EntryFailed, gross: 800_000, lines: []completeLine{
		{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 115_000}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 56_000},
		{Kind: "OTHER", Reference: owed, AmountSantim: 3_000},
	}}
	runID := fixtureDisbursedRun(t, s, []completeEntry{paid, failed})
	settledBefore := s.sandboxBalance(t, s.settlement)

	// The completion, as the disbursement saga (or an operator) starts it.
	ctx := context.Background()
	started, err := workflows.StartPayrollComplete(ctx, s.tc, s.queue, s.tenant, runID)
	require.NoError(t, err)
	require.Equal(t, workflows.PayrollCompleteWorkflowID(s.tenant, runID), started.GetID())
	var res workflows.PayrollCompleteResult
	require.NoError(t, started.Get(ctx, &res))
	loansSantim := in0.TotalSantim + half
	wantOutcome := payroll.CompletionOutcome{EWA: payroll.Tally{Count: 1, Santim: adv.TotalSantim},
		Loans: payroll.Tally{Count: 2, Santim: loansSantim}, Remittances: 1}
	require.Equal(t, workflows.PayrollCompleted, res.Status)
	require.Equal(t, wantOutcome, res.Outcome)
	require.Equal(t, payroll.RunCompleted, res.Run.Status)

	// The advance: REPAID from payroll, its journal exact.
	got := s.waitStatus(t, adv.ID, "REPAID")
	require.Equal(t, adv.TotalSantim, *got.RepaidAmountSantim)
	require.Equal(t, ewa.SourcePayroll, *got.RepaymentSource)
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D %s %d", chart.PayrollClearing, adv.TotalSantim),
		fmt.Sprintf("C %s %d", chart.EmployeeReceivable(s.employee), adv.TotalSantim),
	}, entryLines(s.ledgerTx(t, ewa.RepaymentLedgerKey(adv.ID, 1))))

	// The loan: instalment 0 REPAID (interest and fee to the FI, principal off the receivable),
	// instalment 1 half repaid, interest and fee first.
	after := s.loan(t, l.ID)
	require.Equal(t, "REPAID", after.Instalments[0].Status)
	require.Equal(t, in0.TotalSantim, after.Instalments[0].RepaidSantim)
	require.Equal(t, "PARTIALLY_REPAID", after.Instalments[1].Status)
	require.Equal(t, half, after.Instalments[1].RepaidSantim)
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D %s %d", chart.LoanClearing(l.ID), in0.TotalSantim),
		fmt.Sprintf("C %s %d", chart.BorrowerReceivable(l.ID), in0.PrincipalSantim),
		fmt.Sprintf("C %s %d", chart.FIPayable(s.fiID, l.ID), in0.InterestSantim+in0.FeeSantim),
	}, entryLines(s.ledgerTx(t, lending.RepaymentLedgerKey(l.ID, 0, 1))))
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D %s %d", chart.LoanClearing(l.ID), half),
		fmt.Sprintf("C %s %d", chart.BorrowerReceivable(l.ID), half-in1.InterestSantim-in1.FeeSantim),
		fmt.Sprintf("C %s %d", chart.FIPayable(s.fiID, l.ID), in1.InterestSantim+in1.FeeSantim),
	}, entryLines(s.ledgerTx(t, lending.RepaymentLedgerKey(l.ID, 1, 1))))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.loan_repayments WHERE loan_id = $1 AND source = 'PAYROLL' AND status = 'POSTED'`, l.ID))

	// Instalment 0 remitted to the FI (the remit journal exact and committed), instalment 1 not.
	s.waitRemitted(t, l.ID, 0)
	require.Equal(t, settledBefore+in0.TotalSantim, s.sandboxBalance(t, s.settlement), "the FI's settlement account received instalment 0")
	rtx := s.ledgerTx(t, lending.RemitLedgerKey(workflows.PayrollRemitWorkflowID(s.tenant, l.ID, 0)))
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, rtx.GetStatus())
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D %s %d", chart.FIPayable(s.fiID, l.ID), in0.TotalSantim),
		fmt.Sprintf("C %s %d", chart.LoanClearing(l.ID), in0.TotalSantim),
	}, entryLines(rtx))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.loan_remittances WHERE loan_id = $1 AND idx = 1`, l.ID))

	// The mandates: the PAID entry's taken in full (COMPLETED), the FAILED entry's untouched.
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = 5000
		AND status = 'COMPLETED' AND completed_at IS NOT NULL`, dues))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = 0
		AND status = 'ACTIVE'`, owed))

	// The run COMPLETED; its event and the others exact.
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_runs WHERE id = $1 AND status = 'COMPLETED'`, runID))
	_, _, _, paidNet := paid.figures()
	_, _, _, failedNet := failed.figures()
	var payload string
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT payload::text FROM app.outbox WHERE type = 'payroll.run_completed.v1'`).Scan(&payload)
	}))
	require.JSONEq(t, fmt.Sprintf(`{"id":%q,"period":"2026-11","status":"COMPLETED","locked":false,"employeeCount":2,
		"grossSantim":2300000,"deductionsSantim":%d,"netSantim":%d,"employerContributionsSantim":0,
		"paidEntries":1,"failedEntries":1,"paidNetSantim":%d,"failedNetSantim":%d,
		"ewaRecovered":{"count":1,"santim":%d},"loanInstalmentsRecovered":{"count":2,"santim":%d},
		"mandatesApplied":{"count":1,"santim":5000},"mandatesCompleted":1,"notApplied":{"count":1,"santim":3000},
		"refused":{"count":0,"santim":0},"refusedLines":[],"remittancesStarted":1,
		"productsCollected":{"EQUB_CONTRIBUTION":{"count":0,"santim":0},"BNPL_INSTALLMENT":{"count":0,"santim":0},"SAVINGS_AUTOSAVE":{"count":0,"santim":0}}}`,
		runID, 2_300_000-paidNet-failedNet, paidNet+failedNet, paidNet, failedNet, adv.TotalSantim, loansSantim), payload)
	events := func() map[string]int {
		out := map[string]int{}
		for _, typ := range []string{"payroll.run_completed.v1", "payroll.deduction_mandate_completed.v1", "ewa.repayment_recorded.v1",
			"ewa.repaid.v1", "loan.installment_repaid.v1", "loan.installment_remitted_to_fi.v1"} {
			out[typ] = s.count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, typ)
		}
		return out
	}
	require.Equal(t, map[string]int{"payroll.run_completed.v1": 1, "payroll.deduction_mandate_completed.v1": 1, "ewa.repayment_recorded.v1": 1,
		"ewa.repaid.v1": 1, "loan.installment_repaid.v1": 2, "loan.installment_remitted_to_fi.v1": 1}, events())
	require.Equal(t, 1, s.auditRows(t, payroll.ActionCompleteRun))
	testkit.RecordHistory(t, s.tc, started.GetID(), "", "../workflows/testdata/payroll_complete_history.json")
	testkit.RecordHistory(t, s.tc, started.GetID()+":page-1", "", "../workflows/testdata/payroll_complete_batch_history.json")

	// Again: nothing changes.
	state := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.outbox`),
			s.count(t, `SELECT count(*) FROM app.audit_log WHERE outcome = 'SUCCESS'`),
			s.count(t, `SELECT count(*) FROM app.ewa_repayments`),
			s.count(t, `SELECT count(*) FROM app.loan_repayments`),
			s.count(t, `SELECT coalesce(sum(taken_santim), 0)::int FROM app.payroll_deduction_mandates`),
		}
	}
	before := state()
	again, err := workflows.StartPayrollComplete(ctx, s.tc, s.queue, s.tenant, runID)
	require.NoError(t, err)
	require.Equal(t, started.GetRunID(), again.GetRunID(), "the completed completion answers")
	second, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("payroll-complete-again"), TaskQueue: s.queue},
		workflows.PayrollCompleteWorkflowName, workflows.PayrollCompleteInput{TenantID: s.tenant, RunID: runID})
	require.NoError(t, err)
	var res2 workflows.PayrollCompleteResult
	require.NoError(t, second.Get(ctx, &res2))
	require.Equal(t, workflows.PayrollAlreadyCompleted, res2.Status)
	require.Equal(t, wantOutcome, res2.Outcome, "the outcome the run's completion recorded")
	// One obligation's repayment saga run again under its (run, entry, obligation) id: it finds its
	// repayment and answers it.
	obl := payroll.Obligation{EntryID: paid.id, Kind: payroll.ObligationLoan, Reference: fmt.Sprintf("%s#1", l.ID)}
	rerun, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PayrollDeductionWorkflowID(s.tenant, runID, obl),
		TaskQueue: s.queue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE},
		workflows.LoanRepayWorkflowName, workflows.LoanRepayInput{TenantID: s.tenant, LoanID: l.ID, Index: 1, AmountSantim: half,
			Source: lending.RepaySourcePayroll})
	require.NoError(t, err)
	var lr workflows.LoanRepayResult
	require.NoError(t, rerun.Get(ctx, &lr))
	require.Equal(t, workflows.RepayRecorded, lr.Status)
	require.Equal(t, half, lr.Recorded.Instalment.RepaidSantim)
	require.Equal(t, before, state(), "ledger, transfers, events, audit rows, repayments and mandates unchanged")
	require.Equal(t, "PARTIALLY_REPAID", s.loan(t, l.ID).Instalments[1].Status)
}

// TestPayrollCompleteRoute: POST /api/payroll/<id>/complete completes a DISBURSED run whose
// FAILED entry is final: refused while the run is not DISBURSED or an entry is being sent again
// (409, audited DENIED, nothing started), another organization's run is 404; then 200 with the
// outcome, the run COMPLETED, the FAILED entry's deduction not applied (its mandate untouched,
// counted as notApplied), the operator's request and the completion audited once; the same key
// answers the stored answer and another key the completed workflow's, changing nothing. A
// completion the workflow itself refused (raced by a retry) does not stand once the entry is
// final.
func TestPayrollCompleteRoute(t *testing.T) {
	t.Parallel()
	s := newCompletionStack(t)

	other := s.secondEmployee(t)
	owed := fixtureMandate(t, s, other, payroll.KindOther, 3_000, 10_000)
	paid := completeEntry{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: payroll.EntryPaid, gross: 1_000_000, lines: []completeLine{
		{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 150_000}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 70_000}}}
	failed := completeEntry{id: "pent_" + testkit.Unique("t"), employee: other, status: payroll.EntryFailed, gross: 800_000, lines: []completeLine{
		{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 115_000}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 56_000},
		{Kind: "OTHER", Reference: owed, AmountSantim: 3_000}}}
	runID := fixtureDisbursedRun(t, s, []completeEntry{paid, failed})
	path := "/api/payroll/" + runID + "/complete"
	platform := func(query string, args ...any) {
		t.Helper()
		ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
		require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test fixture: a payroll run's state", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, query, args...)
			return err
		}))
	}
	key := func() []string { return []string{"Idempotency-Key", testkit.Unique("k")} }

	// Refusals: nothing starts.
	platform(`UPDATE app.payroll_runs SET status = 'DISBURSING' WHERE id = $1`, runID)
	requireStatus(t, s.owner.call(http.MethodPost, path, nil, key()...), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")
	platform(`UPDATE app.payroll_runs SET status = 'DISBURSED' WHERE id = $1`, runID)
	platform(`UPDATE app.payroll_entries SET status = 'DISBURSING', failure_reason = NULL, attempts = 2, payout_account = '1000123456790'
		WHERE id = $1`, failed.id) // an operator's retry at work
	requireStatus(t, s.owner.call(http.MethodPost, path, nil, key()...), http.StatusConflict, "PAYROLL_RUN_ENTRIES_UNSETTLED")
	// A completion that passed the pre-check while the retry was claimed (the two racing) is
	// refused by the workflow itself; that refusal must not stand for the run once the entry is
	// final (found by an audit: it ended the workflow successfully, every later start attached to
	// it and the run stayed DISBURSED, each later period refused PAYROLL_EARLIER_RUN_OPEN).
	raced, err := workflows.StartPayrollComplete(context.Background(), s.tc, s.queue, s.tenant, runID)
	require.NoError(t, err)
	var refusedAnswer workflows.PayrollCompleteResult
	err = raced.Get(context.Background(), &refusedAnswer)
	var refusal *temporal.ApplicationError
	require.ErrorAs(t, err, &refusal, "answered %+v", refusedAnswer)
	require.Equal(t, payroll.CodeEntriesUnsettled, refusal.Type())
	platform(`UPDATE app.payroll_entries SET status = 'FAILED', failure_reason = 'ACCOUNT_CLOSED' WHERE id = $1`, failed.id)
	requireStatus(t, s.other.call(http.MethodPost, path, nil, key()...), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	requireStatus(t, s.owner.hostile(http.MethodPost, "/api/payroll/bad%20id/complete", nil, key()...), http.StatusBadRequest, "INVALID_REQUEST")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'DENIED'`, payroll.ActionRequestCompletion))
	require.Zero(t, s.auditRows(t, payroll.ActionCompleteRun))

	// The completion.
	first := key()
	rec := s.owner.call(http.MethodPost, path, nil, first...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	want := fmt.Sprintf(`{"id":%q,"status":"COMPLETED","workflowId":%q,"outcome":{"ewaRecovered":{"count":0,"santim":0},
		"loanInstalmentsRecovered":{"count":0,"santim":0},"refused":{"count":0,"santim":0},"refusedLines":[],"remittancesStarted":0,
		"productsCollected":{"EQUB_CONTRIBUTION":{"count":0,"santim":0},"BNPL_INSTALLMENT":{"count":0,"santim":0},"SAVINGS_AUTOSAVE":{"count":0,"santim":0}}}}`,
		runID, workflows.PayrollCompleteWorkflowID(s.tenant, runID))
	require.JSONEq(t, want, rec.Body.String())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_runs WHERE id = $1 AND status = 'COMPLETED'`, runID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = 0 AND status = 'ACTIVE'`, owed))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_completed.v1'
		AND payload->'notApplied' = '{"count":1,"santim":3000}'::jsonb AND (payload->>'failedEntries')::int = 1`))

	// Again, by the same key and by another: the same answer, nothing more written.
	again := s.owner.call(http.MethodPost, path, nil, first...)
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	require.JSONEq(t, want, again.Body.String())
	byAnother := s.owner.call(http.MethodPost, path, nil, key()...)
	require.Equal(t, http.StatusOK, byAnother.Code, byAnother.Body.String())
	require.JSONEq(t, want, byAnother.Body.String())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'SUCCESS'`, payroll.ActionRequestCompletion),
		"the request that started the completion is audited; a call on the COMPLETED run only answers")
	require.Equal(t, 1, s.auditRows(t, payroll.ActionCompleteRun))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_completed.v1'`))
}

// TestLoanRestructureWaitsForAnOpenRun: a DISBURSED run (not yet completed) withheld the loan's
// instalment 0 from the borrower's pay. A restructure then is refused 409
// LOAN_INSTALMENT_IN_OPEN_RUN (it would supersede the instalment, and the completion would find
// it no more: found by an audit, the 104,015 withheld was refused LOAN_INSTALMENT_NOT_FOUND and
// the borrower owed it again); once the run has completed and applied it, the restructure goes
// through.
func TestLoanRestructureWaitsForAnOpenRun(t *testing.T) {
	t.Parallel()
	s := newCompletionStack(t)
	l := s.activeLoan(t, s.fi, s.product, 300_000, 3)
	in0 := l.Instalments[0]
	runID := fixtureDisbursedRun(t, s, []completeEntry{{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: payroll.EntryPaid,
		gross: 1_500_000, lines: []completeLine{
			{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 302_500}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 105_000},
			{Kind: "LOAN_INSTALLMENT", Reference: fmt.Sprintf("%s#0", l.ID), AmountSantim: in0.TotalSantim},
		}}})
	operator := s.operator("support@loan-restructure-run.test")
	restructure := func() *httptest.ResponseRecorder {
		return operator.call(http.MethodPost, "/api/loans/"+l.ID+"/restructure", map[string]any{"termMonths": 6, "reason": "hardship"},
			"Idempotency-Key", testkit.Unique("rs"))
	}
	requireStatus(t, restructure(), http.StatusConflict, "LOAN_INSTALMENT_IN_OPEN_RUN")

	ctx := context.Background()
	started, err := workflows.StartPayrollComplete(ctx, s.tc, s.queue, s.tenant, runID)
	require.NoError(t, err)
	var res workflows.PayrollCompleteResult
	require.NoError(t, started.Get(ctx, &res))
	require.Equal(t, payroll.CompletionOutcome{Loans: payroll.Tally{Count: 1, Santim: in0.TotalSantim}, Remittances: 1}, res.Outcome)
	rec := restructure()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// A repayment recorded by hand — of a loan's instalment or of an EWA advance — while a payroll run
// that has not completed withheld it is refused 409 (LOAN_INSTALMENT_IN_OPEN_RUN,
// EWA_RECOVERY_IN_OPEN_RUN, audited DENIED), nothing reserved: the run's completion then applies
// both withheld lines whole, none refused. Found by an audit: both were accepted, and the
// completion refused the withheld pay for a refund with the employee charged twice.
func TestRepaymentsByHandWaitForAnOpenRun(t *testing.T) {
	t.Parallel()
	s := newCompletionStack(t)
	l := s.activeLoan(t, s.fi, s.product, 300_000, 3)
	in0 := l.Instalments[0]
	a := s.request(t, 10_000)
	rec := s.disburse(a.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	adv := s.waitStatus(t, a.ID, "DISBURSED")
	runID := fixtureDisbursedRun(t, s, []completeEntry{{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: payroll.EntryPaid,
		gross: 1_500_000, lines: []completeLine{
			{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 302_500},
			{Kind: "LOAN_INSTALLMENT", Reference: fmt.Sprintf("%s#0", l.ID), AmountSantim: in0.TotalSantim},
			{Kind: "EWA_RECOVERY", Reference: adv.ID, AmountSantim: adv.TotalSantim},
		}}})
	repayLoan := func(idx int, amount int64) *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, fmt.Sprintf("/api/loans/%s/installments/%d/record-repayment", l.ID, idx),
			map[string]any{"amountSantim": amount, "source": "MANUAL"}, "Idempotency-Key", testkit.Unique("loan-repay"))
	}
	repayAdvance := func() *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, "/api/ewa/requests/"+adv.ID+"/record-repayment",
			map[string]any{"ewaRequestId": adv.ID, "repaidAmountSantim": adv.TotalSantim, "source": "EMPLOYEE"}, "Idempotency-Key", testkit.Unique("repay"))
	}
	requireStatus(t, repayLoan(0, in0.TotalSantim), http.StatusConflict, lending.CodeInstalmentInOpenRun)
	requireStatus(t, repayLoan(1, 1_000), http.StatusConflict, lending.CodeInstalmentInOpenRun)
	requireStatus(t, repayAdvance(), http.StatusConflict, ewa.CodeRecoveryInOpenRun)
	require.Equal(t, 0, s.count(t, `SELECT count(*) FROM app.loan_repayments WHERE loan_id = $1`, l.ID))
	require.Equal(t, 0, s.count(t, `SELECT count(*) FROM app.ewa_repayments WHERE request_id = $1`, adv.ID))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND outcome = 'DENIED'
		AND action IN ('RecordLoanRepayment', 'RecordEwaRepayment')`, s.tenant))

	ctx := context.Background()
	started, err := workflows.StartPayrollComplete(ctx, s.tc, s.queue, s.tenant, runID)
	require.NoError(t, err)
	var res workflows.PayrollCompleteResult
	require.NoError(t, started.Get(ctx, &res))
	require.Equal(t, payroll.CompletionOutcome{Loans: payroll.Tally{Count: 1, Santim: in0.TotalSantim}, Remittances: 1,
		EWA: payroll.Tally{Count: 1, Santim: adv.TotalSantim}}, res.Outcome)
	// The run completed: a repayment by hand goes ahead again.
	rec = repayLoan(1, 1_000)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// A completion's EWA recovery against advances an admin route repaid since the run was approved:
// A repaid in full with source PAYROLL (the same amount and source as the run's line), B in part.
// The run's line for A is refused whole (EWA_NOT_DISBURSED, for a refund: the employee paid it
// twice) — it is not taken for a replay of the admin's repayment; B's line repays what B still
// owes and only the excess is refused. The page run again (a restarted completion: the same child
// ids) answers the same outcome and moves nothing. Found by an audit: A's line was counted as
// recovered with nothing posted, and a page run again reported B's applied part as refused.
func TestPayrollCompletionAgainstAdvancesRepaidMeanwhile(t *testing.T) {
	t.Parallel()
	s := newCompletionStack(t)
	advance := func() ewaRequestJSON {
		a := s.request(t, 10_000)
		rec := s.disburse(a.ID, testkit.Unique("disburse"))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		return s.waitStatus(t, a.ID, "DISBURSED")
	}
	a, b := advance(), advance()
	repay := func(r ewaRequestJSON, amount int64) {
		rec := s.owner.call(http.MethodPost, "/api/ewa/requests/"+r.ID+"/record-repayment",
			map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": amount, "source": "PAYROLL"}, "Idempotency-Key", testkit.Unique("repay"))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	repay(a, a.TotalSantim)
	const paidMeanwhile = 4_000
	repay(b, paidMeanwhile)
	entry := completeEntry{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: payroll.EntryPaid, gross: 1_500_000, lines: []completeLine{
		{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 302_500},
		{Kind: "EWA_RECOVERY", Reference: a.ID, AmountSantim: a.TotalSantim},
		{Kind: "EWA_RECOVERY", Reference: b.ID, AmountSantim: b.TotalSantim},
	}}
	runID := fixtureDisbursedRun(t, s, []completeEntry{entry})

	ctx := context.Background()
	started, err := workflows.StartPayrollComplete(ctx, s.tc, s.queue, s.tenant, runID)
	require.NoError(t, err)
	var res workflows.PayrollCompleteResult
	require.NoError(t, started.Get(ctx, &res))
	want := payroll.CompletionOutcome{EWA: payroll.Tally{Count: 1, Santim: b.TotalSantim - paidMeanwhile},
		Refused: payroll.Tally{Count: 2, Santim: a.TotalSantim + paidMeanwhile}, RefusedLines: []payroll.RefusedDeduction{
			{EntryID: entry.id, Kind: payroll.ObligationEWA, Reference: a.ID, AmountSantim: a.TotalSantim, Code: ewa.CodeNotDisbursed},
			{EntryID: entry.id, Kind: payroll.ObligationEWA, Reference: b.ID, AmountSantim: paidMeanwhile, Code: ewa.CodeRepaymentExceedsOutstanding}}}
	require.Equal(t, workflows.PayrollCompleted, res.Status)
	require.Equal(t, want, res.Outcome)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.ewa_repayments WHERE request_id = $1 AND status = 'POSTED'`, a.ID), "the admin's only")
	require.Equal(t, "REPAID", string(s.waitStatus(t, b.ID, "REPAID").Status))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.ewa_repayments WHERE request_id = $1 AND status = 'POSTED'
		AND amount_santim = $2 AND workflow_id LIKE 'payroll-deduction:%'`, b.ID, b.TotalSantim-paidMeanwhile))

	// The page again, as a restarted completion runs it.
	txs := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	obls := []payroll.Obligation{
		{EntryID: entry.id, EmployeeID: s.employee, Kind: payroll.ObligationEWA, Reference: a.ID, RequestID: a.ID, AmountSantim: a.TotalSantim},
		{EntryID: entry.id, EmployeeID: s.employee, Kind: payroll.ObligationEWA, Reference: b.ID, RequestID: b.ID, AmountSantim: b.TotalSantim}}
	page, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("page-again"), TaskQueue: s.queue},
		workflows.PayrollCompleteBatchWorkflowName, workflows.PayrollCompleteBatchInput{TenantID: s.tenant, RunID: runID, Obligations: obls})
	require.NoError(t, err)
	var again payroll.CompletionOutcome
	require.NoError(t, page.Get(ctx, &again))
	require.Equal(t, want, again)
	require.Equal(t, txs, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant), "nothing posted again")
}

// TestPayrollDeductionsPollerCompletesRuns: the payroll-deductions-poller's firing (the
// PayrollDeductionsPoll workflow on the real stack, as its schedule starts it) completes the
// DISBURSED runs whose deductions were taken but not applied, and only those. Three runs: one
// fully PAID taking an EWA advance whose completion is stuck (started on a queue no worker
// polls), one fully PAID whose completion never started, one with a FAILED entry (an operator
// retries or completes it). The first firing finds the two PAID runs, starts the one never
// started and leaves the running one alone; once the stuck completion is terminated, the next
// firing starts it again under the same id and it repays the advance from payroll; a firing
// after that finds nothing. The run with the FAILED entry is never touched: no completion
// exists for it and it stays DISBURSED.
func TestPayrollDeductionsPollerCompletesRuns(t *testing.T) {
	t.Parallel()
	s := newCompletionStack(t)
	ctx := context.Background()

	adv := s.request(t, 10_000)
	rec := s.disburse(adv.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	adv = s.waitStatus(t, adv.ID, "DISBURSED")
	statutory := []completeLine{{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: 302_500}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 105_000}}
	entry := func(status string, lines ...completeLine) []completeEntry {
		return []completeEntry{{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: status, gross: 1_500_000,
			lines: append(append([]completeLine{}, statutory...), lines...)}}
	}
	stuck := fixtureDisbursedRunOf(t, s, "2026-11", entry(payroll.EntryPaid, completeLine{Kind: "EWA_RECOVERY", Reference: adv.ID, AmountSantim: adv.TotalSantim}))
	never := fixtureDisbursedRunOf(t, s, "2026-10", entry(payroll.EntryPaid))
	failed := fixtureDisbursedRunOf(t, s, "2026-09", entry(payroll.EntryFailed))

	// The stuck completion: started under the run's id on a queue no worker polls.
	stuckRun, err := workflows.StartPayrollComplete(ctx, s.tc, testkit.Unique("no-worker"), s.tenant, stuck)
	require.NoError(t, err)
	var firings []string
	fire := func() workflows.PayrollDeductionsPollResult {
		t.Helper()
		run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PayrollDeductionsPollerScheduleID + "-" + testkit.Unique("firing"),
			TaskQueue: s.queue}, workflows.PayrollDeductionsPollWorkflowName, workflows.PayrollDeductionsPollInput{})
		require.NoError(t, err)
		var res workflows.PayrollDeductionsPollResult
		require.NoError(t, run.Get(ctx, &res))
		firings = append(firings, run.GetID())
		return res
	}
	completed := func(runID string) workflows.PayrollCompleteResult {
		t.Helper()
		var res workflows.PayrollCompleteResult
		require.NoError(t, s.tc.GetWorkflow(ctx, workflows.PayrollCompleteWorkflowID(s.tenant, runID), "").Get(ctx, &res))
		return res
	}

	require.Equal(t, workflows.PayrollDeductionsPollResult{Due: 2, Started: 1, Running: 1}, fire())
	testkit.RecordHistory(t, s.tc, firings[0], "", "../workflows/testdata/payroll_deductions_poll_history.json")
	res := completed(never)
	require.Equal(t, workflows.PayrollCompleted, res.Status)
	require.Equal(t, payroll.RunCompleted, res.Run.Status)
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.ewa_repayments WHERE request_id = $1`, adv.ID), "the stuck completion applied nothing")

	// The stuck completion ends without success: the next firing starts it again, and it repays
	// the advance from payroll.
	require.NoError(t, s.tc.TerminateWorkflow(ctx, stuckRun.GetID(), stuckRun.GetRunID(), "test: the completion is stuck"))
	require.Equal(t, workflows.PayrollDeductionsPollResult{Due: 1, Started: 1}, fire())
	res = completed(stuck)
	require.Equal(t, workflows.PayrollCompleted, res.Status)
	require.Equal(t, payroll.Tally{Count: 1, Santim: adv.TotalSantim}, res.Outcome.EWA)
	got := s.waitStatus(t, adv.ID, "REPAID")
	require.Equal(t, ewa.SourcePayroll, *got.RepaymentSource)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.ewa_repayments WHERE request_id = $1`, adv.ID), "repaid once")

	// Nothing is left to complete; the run with a FAILED entry was never touched.
	require.Equal(t, workflows.PayrollDeductionsPollResult{}, fire())
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.payroll_runs WHERE status = 'COMPLETED'`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_runs WHERE id = $1 AND status = 'DISBURSED' AND completing_at IS NULL`, failed))
	_, err = s.tc.DescribeWorkflowExecution(ctx, workflows.PayrollCompleteWorkflowID(s.tenant, failed), "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "no completion of the run with a FAILED entry")
}
