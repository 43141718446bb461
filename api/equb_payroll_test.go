package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// newEqubPayroll is an equb stack of two members whose payroll pays them all (the payroll
// account set at the sandbox).
func newEqubPayroll(t *testing.T) (*equbStack, *payrollDisburseWorld) {
	t.Helper()
	s := newEqubStack(t, ewaStackOpts{}, 2)
	w := payrollWorldOn(t, s.ewaStack, 1, payrollDisburseFunds)
	for _, m := range s.members {
		w.employees[m.employee] = m.account
	}
	w.setPayrollAccount(t, w.payroll, "Employer PLC")
	return s, w
}

// TestEqubContributionByPayrollDeduction, on the real stack with the sandbox: a member opts in
// to contribute by payroll deduction (bad input 400, another organization's group and a group the
// caller is not a member of 404, nothing written; a second opt-in 409); a payroll approver
// activates the mandate; the payroll of 2026-11 is calculated (the member's entry deducts the
// contribution), approved and disbursed through the sandbox, and its completion records the
// member's contribution to the OPEN cycle exactly once — source PAYROLL, POSTED, its pool journal
// exact, the money moved from the payroll account to the escrow account (every sandbox balance
// exact). The member without a mandate contributes nothing. Completing again, and the
// contribution saga run again under its (run, entry, mandate) id, change nothing.
func TestEqubContributionByPayrollDeduction(t *testing.T) {
	t.Parallel()
	s, w := newEqubPayroll(t)
	const amount int64 = 50_000
	g := s.createGroup(t, equb.OrderFixed, false, amount)
	s.joinAll(t, g)
	cy := s.openCycle(t, g)
	path := "/api/equb/groups/" + g.ID + "/contribution-mandate"
	optIn := map[string]any{"startPeriod": "2026-11"}
	mandates := func() int {
		return s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE tenant_id = $1`, s.tenant)
	}

	// The master switch off: 503, nothing written.
	requireStatus(t, s.members[0].call(http.MethodPost, path, optIn), http.StatusServiceUnavailable, "EQUB_MONEY_MOVEMENT_DISABLED")
	s.srv.deps.EqubMoneyMovement = true
	// Bad input: 400, nothing written.
	requireStatus(t, s.members[0].hostile(http.MethodPost, path, map[string]any{"startPeriod": "2026-13"}), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, s.members[0].hostile(http.MethodPost, path, map[string]any{}), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, s.members[0].hostile(http.MethodPost, path, map[string]any{"startPeriod": "2026-11", "endPeriod": "2026-10"}),
		http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, s.members[0].hostile(http.MethodPost, path, map[string]any{"startPeriod": "2026-11", "amountSantim": 1}),
		http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, s.members[0].hostile(http.MethodPost, "/api/equb/groups/bad%20id/contribution-mandate", optIn),
		http.StatusBadRequest, "INVALID_REQUEST")
	// Another organization's group, and a group the caller is not a member of: 404.
	requireStatus(t, s.other.call(http.MethodPost, path, optIn), http.StatusNotFound, "EQUB_GROUP_NOT_FOUND")
	requireStatus(t, s.owner.call(http.MethodPost, path, optIn), http.StatusNotFound, "EQUB_NOT_MEMBER")
	require.Zero(t, mandates())
	// The payroll's own mandate route does not create a product mandate.
	requireStatus(t, w.checker.hostile(http.MethodPost, "/api/payroll/deduction-mandates", map[string]any{"employeeId": s.members[1].employee,
		"kind": payroll.KindEqubContribution, "amountSantim": amount, "startPeriod": "2026-11", "reference": "eqm_x"}),
		http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, mandates())

	// The member's opt-in: PENDING, for their membership and the group's contribution.
	rec := s.members[0].call(http.MethodPost, path, optIn)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	require.Equal(t, payroll.KindEqubContribution, md.Kind)
	require.Equal(t, payroll.MandatePending, md.Status)
	require.Equal(t, s.members[0].employee, md.EmployeeID)
	require.Equal(t, amount, *md.AmountSantim)
	var membership string
	for _, m := range s.group(t, g.ID).Members {
		if m.EmployeeID == s.members[0].employee {
			membership = m.ID
		}
	}
	require.Equal(t, membership, *md.Reference)
	requireStatus(t, s.members[0].call(http.MethodPost, path, optIn), http.StatusConflict, payroll.CodeMandateExists)
	require.Equal(t, 1, mandates())
	// Activated by a payroll approver (not the member).
	rec = w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+md.ID+"/activate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, payroll.MandateActive, decode[mandateJSON](t, rec).Status)

	// The payroll: the member's entry deducts the contribution.
	escrowBefore, payrollBefore := s.sandboxBalance(t, s.escrow), s.sandboxBalance(t, w.payroll)
	run := w.approvedRun(t)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2
		AND deductions @> $3::jsonb`, run.ID, s.members[0].employee,
		fmt.Sprintf(`[{"kind":"EQUB_CONTRIBUTION","reference":%q,"amountSantim":%d}]`, md.ID, amount)))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id <> $2
		AND deductions @> '[{"kind":"EQUB_CONTRIBUTION"}]'::jsonb`, run.ID, s.members[0].employee))
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")

	// The contribution: one, by payroll, POSTED, the pool journal exact.
	wfID := workflows.PayrollProductWorkflowID(s.tenant, run.ID, payroll.Obligation{Kind: payroll.KindEqubContribution,
		EntryID: entryOf(t, s.ewaStack, run.ID, s.members[0].employee), Reference: md.ID})
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1 AND cycle_id = $2 AND membership_id = $3
		AND status = 'POSTED' AND source = 'PAYROLL' AND mandate_id = $4 AND amount_santim = $5 AND workflow_id = $6`,
		s.tenant, cy.ID, membership, md.ID, amount, wfID))
	got, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant,
		IdempotencyKey: "equb-contribution:" + wfID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, got.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D %s %d", chart.PartnerBankAccount("sandbox", s.escrow), amount),
		fmt.Sprintf("C %s %d", chart.EqubPoolAccount(s.tenant, cy.ID), amount),
	}, entryLines(got.GetTransaction()))
	require.Equal(t, "PAYROLL", got.GetTransaction().GetMetadata()["source"])
	posted, pending := s.poolBalance(t, cy.ID)
	require.Equal(t, amount, posted)
	require.Zero(t, pending)
	// The money: the payroll account paid every net and the contribution; the escrow received it.
	paidNet := int64(s.count(t, `SELECT coalesce(sum(net_santim), 0)::int FROM app.payroll_entries WHERE run_id = $1 AND status = 'PAID'`, run.ID))
	require.Equal(t, len(w.employees), s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND status = 'PAID'`, run.ID))
	require.Equal(t, escrowBefore+amount, s.sandboxBalance(t, s.escrow))
	require.Equal(t, payrollBefore-paidNet-amount, s.sandboxBalance(t, w.payroll))
	require.Equal(t, equbMemberBalance+netOf(t, s.ewaStack, run.ID, s.members[0].employee), s.sandboxBalance(t, s.members[0].account),
		"the member's own account paid nothing: it received the net pay")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = $2 AND status = 'ACTIVE'`,
		md.ID, amount))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'equb.contribution_posted.v1'
		AND payload->>'source' = 'PAYROLL' AND payload->>'mandateId' = $2`, s.tenant, md.ID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND payload->'productsCollected'->'EQUB_CONTRIBUTION' = $2::jsonb`, s.tenant, fmt.Sprintf(`{"count":1,"santim":%d}`, amount)))

	// Again: the completion answers, the saga under its id moves nothing.
	state := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT coalesce(sum(taken_santim), 0)::int FROM app.payroll_deduction_mandates WHERE tenant_id = $1`, s.tenant),
			int(s.sandboxBalance(t, s.escrow)), int(s.sandboxBalance(t, w.payroll)),
		}
	}
	before := state()
	cr := completeAndRerunProduct[workflows.EqubContributeResult](t, s.tc, s.queue, s.tenant, run.ID, wfID,
		workflows.EqubContributeWorkflowName, workflows.EqubContributeInput{TenantID: s.tenant, Payroll: &workflows.EqubPayrollSource{MembershipID: membership, MandateID: md.ID,
			AmountSantim: amount}})
	require.Equal(t, workflows.EqubContributePosted, cr.Status)
	require.Equal(t, before, state(), "ledger, transfers, events, contributions, mandates and balances unchanged")
}

// entryOf is the run's entry of employee.
func entryOf(t *testing.T, s *ewaStack, runID, employee string) string {
	t.Helper()
	var id string
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2`, runID, employee).Scan(&id)
	}))
	return id
}

// netOf is the net pay of employee's entry in the run.
func netOf(t *testing.T, s *ewaStack, runID, employee string) int64 {
	t.Helper()
	var n int64
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT net_santim::bigint FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2`, runID, employee).Scan(&n)
	}))
	return n
}

// completeAndRerunProduct completes the run again, then runs a product line's saga again under its
// (run, entry, mandate) workflow id (wfID): the caller checks that neither changed anything, and
// gets the saga's answer (R) to check it is the first run's.
func completeAndRerunProduct[R any](t *testing.T, tc client.Client, queue, tenant, runID, wfID, workflow string, input any) R {
	t.Helper()
	ctx := context.Background()
	again, err := workflows.StartPayrollComplete(ctx, tc, queue, tenant, runID)
	require.NoError(t, err)
	var res workflows.PayrollCompleteResult
	require.NoError(t, again.Get(ctx, &res))
	require.Contains(t, []string{workflows.PayrollCompleted, workflows.PayrollAlreadyCompleted}, res.Status)
	rerun, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, workflow, input)
	require.NoError(t, err)
	var out R
	require.NoError(t, rerun.Get(ctx, &out))
	return out
}

// TestEqubLeaveEndsTheContributionMandate: a member who contributes by payroll mandate leaves the
// group. While a run that withheld the contribution has not completed, the leave is refused
// (EQUB_MANDATE_IN_OPEN_RUN: that run records the contribution), as is a contribution by hand,
// even once the employer has cancelled the mandate; once it has, the leave cancels
// the mandate, and the next run withholds nothing (found by an audit: the mandate stayed ACTIVE,
// every later run withheld 50,000 and its completion refused the line EQUB_NOT_MEMBER).
func TestEqubLeaveEndsTheContributionMandate(t *testing.T) {
	t.Parallel()
	s, w := newEqubPayroll(t)
	s.srv.deps.EqubMoneyMovement = true
	const amount int64 = 50_000
	g := s.createGroup(t, equb.OrderFixed, true, amount)
	s.joinAll(t, g)
	s.openCycle(t, g)
	leaver := s.members[1] // the second turn: the open cycle does not pay them
	rec := leaver.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/contribution-mandate", map[string]any{"startPeriod": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	rec = w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+md.ID+"/activate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	withheld := func(runID string) int {
		return s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND deductions @> $2::jsonb`,
			runID, fmt.Sprintf(`[{"kind":"EQUB_CONTRIBUTION","reference":%q}]`, md.ID))
	}

	run := w.approvedRun(t)
	require.Equal(t, 1, withheld(run.ID))
	leave := map[string]any{"acknowledgeSettlement": true}
	requireStatus(t, leaver.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/leave", leave), http.StatusConflict, "EQUB_MANDATE_IN_OPEN_RUN")
	// Nor may they pay the withheld contribution by hand (the run's would then be refused and the
	// withheld pay stranded), and the employer cancelling the mandate changes neither.
	requireStatus(t, s.contribute(leaver, g.ID, testkit.Unique("c")), http.StatusConflict, "EQUB_MANDATE_IN_OPEN_RUN")
	rec = w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+md.ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, s.contribute(leaver, g.ID, testkit.Unique("c")), http.StatusConflict, "EQUB_MANDATE_IN_OPEN_RUN")
	requireStatus(t, leaver.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/leave", leave), http.StatusConflict, "EQUB_MANDATE_IN_OPEN_RUN")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1`, s.tenant))
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1 AND mandate_id = $2 AND status = 'POSTED'`,
		s.tenant, md.ID), "the run recorded the contribution it withheld")

	left := s.leave(t, leaver, g.ID)
	require.Equal(t, amount, *left.SettlementSantim, "the group owes the leaver the contribution")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'CANCELLED'`, md.ID))
	run2 := w.approvedRunOf(t, "2026-12", func(string) {})
	require.Zero(t, withheld(run2.ID), "nothing withheld for a group the employee left")
}

// TestEqubCompletedGroupEndsTheContributionMandates: once the last cycle is paid the group is
// COMPLETED, and its members' live payroll contribution mandates end with it (they used to stay
// ACTIVE, withholding every month for a group that takes no more contributions).
func TestEqubCompletedGroupEndsTheContributionMandates(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 2)
	s.srv.deps.EqubMoneyMovement = true
	g := s.createGroup(t, equb.OrderFixed, false, 10_000)
	s.joinAll(t, g)
	rec := s.members[1].call(http.MethodPost, "/api/equb/groups/"+g.ID+"/contribution-mandate", map[string]any{"startPeriod": "2027-06"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	for cycle := 1; cycle <= 2; cycle++ {
		s.openCycle(t, g)
		for _, m := range s.members {
			s.contributeAndWait(t, m, g.ID)
		}
		s.payOut(t, g.ID, cycle)
	}
	require.Equal(t, "COMPLETED", s.group(t, g.ID).Status)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'CANCELLED'`, md.ID))
	requireStatus(t, s.members[1].call(http.MethodPost, "/api/equb/groups/"+g.ID+"/contribution-mandate", map[string]any{"startPeriod": "2027-06"}),
		http.StatusConflict, "EQUB_GROUP_COMPLETED")
}
