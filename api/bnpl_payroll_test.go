package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// activeAgreement makes an agreement of the stack's employee (purchase in n instalments) and
// waits for it to be ACTIVE.
func (s *bnplStack) activeAgreement(t *testing.T, purchase int64, n int, ref string) bnplAgreementJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(purchase, n, ref), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	return s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")
}

// linkedCustomer is a new employee of the organization owner administers (tenant), linked to a
// new user, signed in: a customer of that organization who has no agreement.
func (s *bnplStack) linkedCustomer(t *testing.T, owner *apiClient, tenant, n string) *apiClient {
	t.Helper()
	acct := testkit.Unique("cust")
	s.bank.Account(t, acct, "Customer "+n, 0)
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Customer", "lastName": "Number" + n, "email": "customer" + n + "@bnpl-payroll.test", "phone": "+25192" + n + "00000",
		"nationalId": "ET9" + n + "000000", "department": "Ops", "position": "Clerk", "employmentType": "Full time",
		"paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 900_000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": acct, "holderName": "Customer " + n},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	emp := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	email := testkit.Unique("customer") + "@bnpl-payroll.test"
	u, err := identity.CreateUser(ctx, s.d.App, identity.NewUser{Email: email, Name: "Customer " + n, PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, tenant)
	require.NoError(t, tenancy.InTx(tctx, s.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, emp)
		return err
	}))
	return s.signIn(email)
}

// TestBnplInstalmentMandateOptIn: the customer opts in to pay their own ACTIVE agreement's
// instalments by payroll deduction: hostile bodies and ids are 400 and write nothing; a caller
// with no linked employee, another customer of the organization and another organization's
// customer are 404 (nothing written); the opt-in is a PENDING BNPL_INSTALLMENT mandate of the
// customer's employee, its reference the agreement, its amount the earliest DUE instalment's,
// audited and announced as every mandate; a second opt-in is 409 PAYROLL_MANDATE_EXISTS.
func TestBnplInstalmentMandateOptIn(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeAgreement(t, 120_000, 3, "order-pm")
	me := s.linkEmployeeUser(t, testkit.Unique("buyer")+"@bnpl-payroll.test")
	path := "/api/bnpl/agreements/" + a.ID + "/installment-mandate"
	optIn := map[string]any{"startPeriod": "2026-12"}
	written := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.deduction_mandate_created.v1'`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CreateDeductionMandate'`, s.tenant),
		}
	}
	nothing := written()
	require.Equal(t, []int{0, 0, 0}, nothing)

	// Bad input: 400, nothing written.
	for _, body := range []any{
		map[string]any{}, map[string]any{"startPeriod": "2026-13"}, map[string]any{"startPeriod": "2026-12", "endPeriod": "2026-11"},
		map[string]any{"startPeriod": "2026-12", "endPeriod": ""}, map[string]any{"startPeriod": "2026-12", "amountSantim": 1},
		map[string]any{"startPeriod": nil}, map[string]any{"startPeriod": 202612}, "[", "null",
	} {
		requireStatus(t, me.hostile(http.MethodPost, path, body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, me.hostile(http.MethodPost, "/api/bnpl/agreements/bad%20id/installment-mandate", optIn), http.StatusBadRequest, "INVALID_REQUEST")
	require.Equal(t, nothing, written())

	// Not the customer: 404, nothing written.
	requireStatus(t, s.owner.call(http.MethodPost, path, optIn), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	colleague := s.linkedCustomer(t, s.owner, s.tenant, "01")
	requireStatus(t, colleague.call(http.MethodPost, path, optIn), http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	seedEmployeeCatalogs(t, s.other)
	theirs := decode[businessListJSON](t, s.other.call(http.MethodGet, "/api/business", nil)).Businesses
	require.Len(t, theirs, 1)
	stranger := s.linkedCustomer(t, s.other, theirs[0].ID, "02")
	requireStatus(t, stranger.call(http.MethodPost, path, optIn), http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	requireStatus(t, me.call(http.MethodPost, "/api/bnpl/agreements/bnpl_00000000000000000000000000000000/installment-mandate", optIn),
		http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	require.Equal(t, nothing, written())

	// The opt-in: PENDING, the customer's, for the agreement, at its instalment.
	rec := me.call(http.MethodPost, path, optIn)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	md := decode[mandateJSON](t, rec)
	require.Equal(t, payroll.KindBnplInstallment, md.Kind)
	require.Equal(t, payroll.MandatePending, md.Status)
	require.Equal(t, s.employee, md.EmployeeID)
	require.Equal(t, a.Instalments[0].AmountSantim, *md.AmountSantim)
	require.Equal(t, a.ID, *md.Reference)
	require.Equal(t, []int{1, 1, 1}, written())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.deduction_mandate_created.v1'
		AND payload->>'kind' = 'BNPL_INSTALLMENT'`, s.tenant))

	// Again: one live mandate per agreement (409, audited DENIED), nothing else written.
	requireStatus(t, me.call(http.MethodPost, path, optIn), http.StatusConflict, payroll.CodeMandateExists)
	require.Equal(t, []int{1, 1, 2}, written())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CreateDeductionMandate'
		AND outcome = 'DENIED' AND details->>'code' = $2`, s.tenant, payroll.CodeMandateExists))
}

// bnplPayroll is a BNPL stack with a payroll of its one employee (the customer, linked to a
// user), the payroll account at the sandbox, and an ACTIVE agreement of 1,200 ETB in 3
// instalments of 400 ETB whose instalments the customer pays by an ACTIVE payroll mandate.
type bnplPayroll struct {
	*bnplStack
	w       *payrollDisburseWorld
	me      *apiClient
	a       bnplAgreementJSON
	mandate mandateJSON
}

func newBnplPayroll(t *testing.T, ref string) *bnplPayroll {
	t.Helper()
	return newBnplPayrollOf(t, ref, 120_000)
}

// newBnplPayrollOf is newBnplPayroll with a purchase of purchase santim in 3 instalments.
func newBnplPayrollOf(t *testing.T, ref string, purchase int64) *bnplPayroll {
	t.Helper()
	s := newBnplStack(t)
	s.approveKyc(t)
	p := &bnplPayroll{bnplStack: s, w: payrollWorldOn(t, s.ewaStack, 1, payrollDisburseFunds)}
	p.w.setPayrollAccount(t, p.w.payroll, "Employer PLC")
	p.a = s.activeAgreement(t, purchase, 3, ref)
	p.me = s.linkEmployeeUser(t, testkit.Unique("buyer")+"@bnpl-payroll.test")
	rec := p.me.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installment-mandate", map[string]any{"startPeriod": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	p.mandate = decode[mandateJSON](t, rec)
	rec = p.w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+p.mandate.ID+"/activate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return p
}

// instalment is the agreement's instalment idx as the API shows it.
func (p *bnplPayroll) instalment(t *testing.T, idx int) bnplInstalmentJSON {
	t.Helper()
	rec := p.owner.call(http.MethodGet, "/api/bnpl/agreements/"+p.a.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for _, i := range decode[bnplAgreementJSON](t, rec).Instalments {
		if i.Index == idx {
			return i
		}
	}
	t.Fatalf("no instalment %d", idx)
	return bnplInstalmentJSON{}
}

// deducts reports whether the run's entry of the customer deducts the mandate's instalment.
func (p *bnplPayroll) deducts(t *testing.T, runID string) bool {
	return p.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2 AND deductions @> $3::jsonb`,
		runID, p.employee, fmt.Sprintf(`[{"kind":"BNPL_INSTALLMENT","reference":%q,"amountSantim":40000}]`, p.mandate.ID)) == 1
}

// TestBnplInstalmentByPayrollDeduction: end to end over HTTP on the real stack and sandbox. The
// customer's ACTIVE mandate: the run of 2026-11 deducts the instalment; approved, disbursed and
// completed, the agreement's earliest DUE instalment (0) is COLLECTED with source PAYROLL by the
// saga of (run, entry, mandate), its journal exact (Dr payroll-clearing:<agreement> / Cr
// receivable-from-customer:<agreement>, metadata source PAYROLL); the money stays in the
// business's payroll account (it paid the net only; no partner transfer beyond the merchant's
// settlement); run_completed counts it in productsCollected; the mandate's taken amount grows.
// The completion and the saga run again under its id change nothing. The run of 2026-12, whose
// one entry FAILED at the bank, collects nothing: instalment 1 stays DUE and owed.
func TestBnplInstalmentByPayrollDeduction(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "order-payroll")
	s, w := p.bnplStack, p.w
	const amount int64 = 40_000
	payrollBefore, buyerBefore := s.balance(t, w.payroll), s.balance(t, stackEmployeeAcct)

	run := w.approvedRun(t)
	require.True(t, p.deducts(t, run.ID), "the entry deducts the instalment")
	rec := w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")

	// The collection: instalment 0, by payroll, under the (run, entry, mandate) saga.
	wfID := workflows.PayrollProductWorkflowID(s.tenant, run.ID, payroll.Obligation{Kind: payroll.KindBnplInstallment,
		EntryID: entryOf(t, s.ewaStack, run.ID, s.employee), Reference: p.mandate.ID})
	i0 := p.instalment(t, 0)
	require.Equal(t, "COLLECTED", i0.Status)
	require.Equal(t, "PAYROLL", *i0.Source)
	require.NotNil(t, i0.MandateID)
	require.Equal(t, p.mandate.ID, *i0.MandateID, "the instalment names the mandate that collected it")
	require.Nil(t, p.instalment(t, 1).MandateID, "a DUE instalment names none")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND idx = 0 AND collect_workflow_id = $2`,
		p.a.ID, wfID))
	require.Equal(t, "DUE", p.instalment(t, 1).Status)
	require.Equal(t, "DUE", p.instalment(t, 2).Status)
	testkit.RecordHistory(t, s.tc, wfID, "", "../workflows/testdata/bnpl_collect_payroll_history.json")
	tx := s.ledgerTx(t, "bnpl-collect:"+wfID)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
	require.Equal(t, *i0.LedgerTxID, tx.GetId())
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D payroll-clearing:%s %d", p.a.ID, amount),
		fmt.Sprintf("C receivable-from-customer:%s %d", p.a.ID, amount),
	}, entryLines(tx))
	require.Equal(t, "PAYROLL", tx.GetMetadata()["source"])
	require.Equal(t, "0", tx.GetMetadata()["instalmentIndex"])
	got := s.waitAgreement(t, p.a.ID, "ACTIVE")
	require.Equal(t, int64(80_000), got.OutstandingSantim)

	// The money: the payroll account paid the net only (the instalment withheld stays there, the
	// business's own); the customer received the net; no transfer but the merchant's settlement.
	net := netOf(t, s.ewaStack, run.ID, s.employee)
	require.Equal(t, payrollBefore-net, s.balance(t, w.payroll))
	require.Equal(t, buyerBefore+net, s.balance(t, stackEmployeeAcct))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND domain = 'BNPL'`, s.tenant))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = $2 AND status = 'ACTIVE'`,
		p.mandate.ID, amount))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.instalment_collected.v1'
		AND payload->>'source' = 'PAYROLL' AND payload->>'agreementId' = $2 AND (payload->>'index')::int = 0`, s.tenant, p.a.ID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND payload->'productsCollected'->'BNPL_INSTALLMENT' = $2::jsonb`, s.tenant, fmt.Sprintf(`{"count":1,"santim":%d}`, amount)))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CollectBnplInstalment'
		AND outcome = 'SUCCESS' AND details->>'mandateId' = $2`, s.tenant, p.mandate.ID))

	// Again: the completion answers, the saga under its id moves nothing.
	state := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'COLLECTED'`, p.a.ID),
			s.count(t, `SELECT coalesce(sum(taken_santim), 0)::int FROM app.payroll_deduction_mandates WHERE tenant_id = $1`, s.tenant),
			int(s.balance(t, w.payroll)), int(s.balance(t, stackEmployeeAcct)),
		}
	}
	before := state()
	cr := completeAndRerunProduct[workflows.BnplCollectResult](t, s.tc, s.queue, s.tenant, run.ID, wfID,
		workflows.BnplCollectWorkflowName, workflows.BnplCollectInput{TenantID: s.tenant, AgreementID: p.a.ID, Source: bnpl.SourcePayroll,
			Payroll: &workflows.BnplPayrollSource{MandateID: p.mandate.ID, AmountSantim: amount}})
	require.Equal(t, workflows.BnplCollectRecorded, cr.Status)
	require.Equal(t, 0, cr.Collection.Index, "the run's own instalment, not the next DUE one")
	require.Equal(t, before, state(), "ledger, transfers, events, instalments, mandates and balances unchanged")

	// The next run's entry FAILED at the bank: nothing withheld, nothing collected, still owed.
	w.bank.Fault(t, stackEmployeeAcct, map[string]any{"rejectCode": "BENEFICIARY_BLOCKED"})
	run2 := w.approvedRunOf(t, "2026-12", func(string) {})
	require.True(t, p.deducts(t, run2.ID))
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run2.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run2.ID, "DISBURSED")
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND status = 'FAILED'`, run2.ID) == 1
	}, 60*time.Second, 100*time.Millisecond)
	rec = s.owner.call(http.MethodPost, "/api/payroll/"+run2.ID+"/complete", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "DUE", p.instalment(t, 1).Status)
	require.Equal(t, int64(80_000), s.waitAgreement(t, p.a.ID, "ACTIVE").OutstandingSantim)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND taken_santim = $2`, p.mandate.ID, amount))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.instalment_collected.v1'`, s.tenant))
}

// TestBnplManualCollectionWaitsForAnOpenRun: a payroll run approved with the customer's
// instalment withheld under the mandate collects the earliest DUE instalment when it completes,
// so a manual collection meanwhile is refused 409 BNPL_MANDATE_IN_OPEN_RUN (audited DENIED,
// nothing held, nothing posted) — also once the payroll admin has cancelled the mandate, whose
// line the run still applies. Without it the manual collection took instalment 0 and the
// completion's line was refused, the withheld pay left for an operator to refund. Once the run
// has completed (instalment 0 collected by payroll), the next one is collected by hand.
func TestBnplManualCollectionWaitsForAnOpenRun(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "order-manual-open")
	s, w := p.bnplStack, p.w
	collect := func(idx int) *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, fmt.Sprintf("/api/bnpl/agreements/%s/installments/%d/collect", p.a.ID, idx), nil,
			"Idempotency-Key", testkit.Unique("collect"))
	}
	ledgerTxs := func() int {
		return s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	}

	run := w.approvedRun(t)
	require.True(t, p.deducts(t, run.ID))
	txs := ledgerTxs()
	requireStatus(t, collect(0), http.StatusConflict, bnpl.CodeMandateInOpenRun)
	require.Equal(t, "DUE", p.instalment(t, 0).Status)
	rec := w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+p.mandate.ID+"/cancel", map[string]any{"reason": "customer asked"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, collect(0), http.StatusConflict, bnpl.CodeMandateInOpenRun)
	require.Equal(t, txs, ledgerTxs(), "nothing posted")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CollectBnplInstalment'
		AND outcome = 'DENIED'`, s.tenant))

	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	i0 := p.instalment(t, 0)
	require.Equal(t, "COLLECTED", i0.Status)
	require.Equal(t, "PAYROLL", *i0.Source)
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND (payload->'refused'->>'count')::int > 0`, s.tenant), "the withheld line is applied, not refused")

	rec = collect(1)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "COLLECTED", p.instalment(t, 1).Status)
}

// TestBnplMerchantReversalStopsCollection: the merchant's word shows in the agreement's JSON (the
// business's read, its list and the customer's own list); once the merchant reports the order
// REFUNDED, the collect route is 409 BNPL_MERCHANT_ORDER_REVERSED (audited DENIED, nothing else
// written), a new opt-in (after the operator cancelled the mandate) is refused the same way, a
// run approved before the refund that withheld the instalment collects nothing (the line is
// reported refused in payroll.run_completed.v1 with the code for the employee's refund, the
// instalment stays DUE, no journal), and a run calculated after the refund withholds nothing
// under the still ACTIVE mandate (it used to withhold every month until a write-off, each line
// refused and refunded by hand). A later DELIVERED lifts the stop.
func TestBnplMerchantReversalStopsCollection(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "order-reversed")
	s, w := p.bnplStack, p.w
	partner := newAPIClient(t, s.srv)
	say := func(event, kind, nonce string) {
		t.Helper()
		body := merchantCallbackBody(event, s.merchantID, p.a.ID, "order-reversed", kind)
		rec := partner.call(http.MethodPost, merchantCallbackPath, body, signedHeaders(body, nonce)...)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, "recorded", decode[merchantCallbackJSON](t, rec).Status)
	}
	merchantStatus := func() []*string {
		var out []*string
		rec := s.owner.call(http.MethodGet, "/api/bnpl/agreements/"+p.a.ID, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		out = append(out, decode[bnplAgreementJSON](t, rec).MerchantStatus)
		for _, r := range []*httptest.ResponseRecorder{s.owner.call(http.MethodGet, "/api/bnpl/agreements", nil),
			p.me.call(http.MethodGet, "/api/me/bnpl/agreements", nil)} {
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			items := decode[bnplAgreementPageJSON](t, r).Items
			require.Len(t, items, 1)
			out = append(out, items[0].MerchantStatus)
		}
		return out
	}
	require.Equal(t, []*string{nil, nil, nil}, merchantStatus())
	require.Nil(t, p.a.MerchantStatusAt)
	// A run approved before the merchant's word withholds the instalment.
	run := w.approvedRun(t)
	require.True(t, p.deducts(t, run.ID))

	say("rev-1", "REFUNDED", "rev-n1")
	refunded := "REFUNDED"
	require.Equal(t, []*string{&refunded, &refunded, &refunded}, merchantStatus())

	// The collect route: refused, audited, nothing else written.
	written := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'DUE'`, p.a.ID),
		}
	}
	before := written()
	requireStatus(t, s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installments/0/collect", nil,
		"Idempotency-Key", testkit.Unique("collect")), http.StatusConflict, "BNPL_MERCHANT_ORDER_REVERSED")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CollectBnplInstalment'
		AND outcome = 'DENIED' AND details->>'code' = 'BNPL_MERCHANT_ORDER_REVERSED'`, s.tenant))
	require.Equal(t, before, written())
	// That run's line: its collection refused and reported; nothing collected.
	rec := w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	require.Equal(t, "DUE", p.instalment(t, 0).Status)
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'DUE'`, p.a.ID))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.instalment_collected.v1'`, s.tenant))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND payload->'productsCollected'->'BNPL_INSTALLMENT' = '{"count":0,"santim":0}'::jsonb
		AND payload->'refusedLines' @> $2::jsonb`, s.tenant,
		fmt.Sprintf(`[{"kind":"BNPL_INSTALLMENT","reference":%q,"amountSantim":40000,"code":"BNPL_MERCHANT_ORDER_REVERSED"}]`, p.mandate.ID)))
	wfID := workflows.PayrollProductWorkflowID(s.tenant, run.ID, payroll.Obligation{Kind: payroll.KindBnplInstallment,
		EntryID: entryOf(t, s.ewaStack, run.ID, s.employee), Reference: p.mandate.ID})
	_, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: "bnpl-collect:" + wfID})
	require.Error(t, err, "no journal for the refused line")

	// A run calculated now withholds nothing for the reversed order, though the mandate is ACTIVE.
	rec = w.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-12"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	run2 := decode[payrollRunOut](t, rec)
	rec = w.owner.call(http.MethodPost, "/api/payroll/"+run2.ID+"/calculate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND employee_id = $2`, run2.ID, p.employee))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND deductions @> '[{"kind":"BNPL_INSTALLMENT"}]'::jsonb`,
		run2.ID), "no BNPL line")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'ACTIVE'`, p.mandate.ID))
	// The merchant's word changing again makes that calculation stale (the line is owed again),
	// and changing back makes it current.
	say("rev-2", "DELIVERED", "rev-n2")
	requireStatus(t, w.checker.call(http.MethodPost, "/api/payroll/"+run2.ID+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_STALE")
	say("rev-3", "CANCELLED", "rev-n3")
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run2.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// The operator cancels the customer's mandate; a new opt-in is refused by the reversal.
	rec = w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+p.mandate.ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, p.me.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installment-mandate", map[string]any{"startPeriod": "2026-12"}),
		http.StatusConflict, "BNPL_MERCHANT_ORDER_REVERSED")

	// The merchant's later DELIVERED lifts the stop: the instalment is collected.
	say("rev-4", "DELIVERED", "rev-n4")
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
}

// TestBnplPayrollAmountNotTheInstalments: an operator restructures the agreement into 2
// instalments of 600 ETB after the customer's mandate of 400 ETB was activated. The mandate no
// longer covers an instalment, so the restructure cancels it (it used to stay ACTIVE: each run
// withheld 400 ETB, its completion refused the line BNPL_MANDATE_AMOUNT_MISMATCH and reported it
// for a refund, and the instalment was never collected); the customer opts in again at 600 ETB,
// the approver activates it, and the next run withholds and collects the new instalment.
// (Smaller instalments are withheld as they are: TestBnplPayrollTakesEachInstalmentAsItIs.)
func TestBnplPayrollAmountNotTheInstalments(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "order-mismatch")
	s, w := p.bnplStack, p.w
	operator := s.operator("support@bnpl-mismatch.test")
	rec := operator.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/restructure",
		map[string]any{"instalments": 2, "firstPeriod": "2027-01", "reason": "shorter plan"}, "Idempotency-Key", testkit.Unique("rs"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'DUE' AND amount_santim = 60000`, p.a.ID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'CANCELLED'`, p.mandate.ID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.agreement_restructured.v1'
		AND payload->>'cancelledMandateId' = $2`, s.tenant, p.mandate.ID))

	rec = p.me.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installment-mandate", map[string]any{"startPeriod": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	again := decode[mandateJSON](t, rec)
	require.Equal(t, int64(60_000), *again.AmountSantim)
	rec = w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+again.ID+"/activate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	run := w.approvedRun(t)
	require.False(t, p.deducts(t, run.ID), "nothing under the cancelled mandate")
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND payload->'productsCollected'->'BNPL_INSTALLMENT' = '{"count":1,"santim":60000}'::jsonb`, s.tenant))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'COLLECTED'
		AND amount_santim = 60000 AND collect_mandate_id = $2`, p.a.ID, again.ID))
	require.Equal(t, int64(60_000), s.waitAgreement(t, p.a.ID, "ACTIVE").OutstandingSantim)
}

// TestBnplPayrollTakesEachInstalmentAsItIs: 1,000.01 ETB in 3 instalments is 333.34, 333.34 and
// 333.33 (the santim left over to the earliest). The mandate was activated at 333.34, the
// earliest DUE instalment's; each period's line is the earliest DUE instalment's amount, so the
// last, a santim smaller, is withheld and collected as it is — it was withheld at 333.34 and
// refused BNPL_MANDATE_AMOUNT_MISMATCH every month, never collected, the agreement never
// settled (found by an audit). Once the agreement is SETTLED the mandate takes nothing more.
func TestBnplPayrollTakesEachInstalmentAsItIs(t *testing.T) {
	t.Parallel()
	p := newBnplPayrollOf(t, "order-uneven", 100_001)
	s, w := p.bnplStack, p.w
	require.Equal(t, []int64{33_334, 33_334, 33_333}, []int64{p.instalment(t, 0).AmountSantim, p.instalment(t, 1).AmountSantim,
		p.instalment(t, 2).AmountSantim})
	require.Equal(t, int64(33_334), *p.mandate.AmountSantim)
	// The first instalment collected by the merchant's route; payroll takes the other two.
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	require.Eventually(t, func() bool { return p.instalment(t, 0).Status == "COLLECTED" }, 60*time.Second, 50*time.Millisecond)

	line := func(runID string) int64 {
		var n int64
		ctx := context.Background()
		require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT coalesce(sum((l->>'amountSantim')::bigint), 0) FROM app.payroll_entries e,
				jsonb_array_elements(e.deductions) l WHERE e.run_id = $1 AND l->>'kind' = 'BNPL_INSTALLMENT'`, runID).Scan(&n)
		}))
		return n
	}
	for i, period := range []string{"2026-11", "2026-12"} {
		run := w.approvedRunOf(t, period, func(string) {})
		want := p.instalment(t, i+1).AmountSantim
		require.Equal(t, want, line(run.ID), period)
		rec := w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
		require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
		w.waitRun(t, run.ID, "COMPLETED")
		require.Equal(t, "COLLECTED", p.instalment(t, i+1).Status, period)
		require.Equal(t, "PAYROLL", *p.instalment(t, i+1).Source, period)
	}
	require.Equal(t, int64(0), s.waitAgreement(t, p.a.ID, "SETTLED").OutstandingSantim)
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND jsonb_array_length(coalesce(payload->'refusedLines', '[]'::jsonb)) > 0`, s.tenant), "no line refused")
	// Settled: the mandate takes nothing in a later calculation.
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		ms, err := payroll.EmployeeMandatesForPeriod(tenancy.WithTenant(ctx, s.tenant), tx, s.employee, "2026-12")
		require.Empty(t, ms)
		return err
	}))
	// And it ends with the agreement, in the collection that settled it (found by an audit: it
	// stayed ACTIVE for good, listed among the employee's live deductions).
	var status, reason string
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT status, coalesce(status_reason, '') FROM app.payroll_deduction_mandates WHERE id = $1`, p.mandate.ID).
			Scan(&status, &reason)
	}))
	require.Equal(t, "CANCELLED", status)
	require.Equal(t, "BNPL agreement settled", reason)
}
