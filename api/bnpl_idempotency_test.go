package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/workflows"
)

// forgetIdempotencyRecord deletes the stored answer of key, as the cleanup does once it is older
// than idempotency.Retention (14 days): the key's saga and what it recorded stay.
func forgetIdempotencyRecord(t *testing.T, s *ewaStack, key string) {
	t.Helper()
	ctx := context.Background()
	super, err := pgx.Connect(ctx, testkit.PG(t).SuperDSN(s.d.Name))
	require.NoError(t, err)
	defer func() { _ = super.Close(ctx) }()
	tag, err := super.Exec(ctx, `DELETE FROM app.idempotency_records WHERE key = $1`, key)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected(), "the key's record")
}

// TestBnplKeyReusedAfterItsRecordExpired: an agreement is keyed by its saga's workflow id forever,
// which derives from the Idempotency-Key alone. Once the key's stored answer is gone (14 days),
// the same request under it is still answered by its agreement, but another order (or purchase,
// plan, customer) under it is 422 IDEMPOTENCY_KEY_REUSED, nothing made — it was 202 ACTIVE with
// the old agreement's id: the merchant was told a new order was financed that never was.
func TestBnplKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	key := testkit.Unique("bnpl")
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-kept"), "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[bnplActivateJSON](t, rec)
	s.waitAgreement(t, first.ID, "ACTIVE")
	made := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND domain = 'BNPL'`, s.tenant),
			s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
		}
	}
	before := made()

	// The same request: its agreement's answer.
	forgetIdempotencyRecord(t, s.ewaStack, key)
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-kept"), "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, first.ID, decode[bnplActivateJSON](t, rec).ID)

	// Another request: refused, nothing made.
	for _, body := range []map[string]any{
		s.agreementBody(120_000, 3, "order-new"), s.agreementBody(150_000, 3, "order-kept"), s.agreementBody(120_000, 4, "order-kept"),
	} {
		forgetIdempotencyRecord(t, s.ewaStack, key)
		rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", body, "Idempotency-Key", key)
		requireStatus(t, rec, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	}
	require.Equal(t, before, made())
	// A new key for the new order: made.
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-new"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.NotEqual(t, first.ID, s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE").ID)
}

// TestBnplWriteOffFailedRunRestarts: a write-off saga that failed (its ledger unreachable for
// longer than its retries: the test terminates it) left its claim PENDING, so every other key is
// 409 BNPL_WRITE_OFF_IN_PROGRESS; the same key (its stored 202 expired) starts a new run, which
// takes the claim back and writes the agreement off once (it was a 500: the failed run's result
// read back, for good).
func TestBnplWriteOffFailedRunRestarts(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeBnplAgreement(t, "order-wo-restart")
	operator := s.operator("support@bnpl-writeoff-restart.test")
	partner := newAPIClient(t, s.srv)
	cb := merchantCallbackBody("wo-r1", s.merchantID, a.ID, "order-wo-restart", "CANCELLED")
	rec := partner.call(http.MethodPost, merchantCallbackPath, cb, signedHeaders(cb, "wo-r-n1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// The worker's ledger is unreachable.
	s.worker.Stop()
	dead, err := ledger.Dial("127.0.0.1:1", ledger.ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dead.Close() })
	deps := s.realActivities()
	deps.Money = &activities.Money{Ledger: dead, Gateway: s.gateway, Metrics: activities.NewSettlementPollMetrics(prometheus.NewRegistry())}
	down := worker.New(s.tc, s.queue, workflows.WorkerOptions())
	workflows.Register(down, deps)
	require.NoError(t, down.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			down.Stop()
		}
	})

	path := "/api/bnpl/agreements/" + a.ID + "/write-off"
	body := map[string]any{"reason": "the merchant cancelled the order"}
	key := testkit.Unique("wo")
	rec = operator.call(http.MethodPost, path, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	pending := decode[writeOffPendingJSON](t, rec)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_write_offs WHERE agreement_id = $1 AND status = 'PENDING'
		AND workflow_id = $2`, a.ID, pending.WorkflowID))

	// The run fails; the claim stays PENDING: another key is refused.
	require.NoError(t, s.tc.TerminateWorkflow(context.Background(), pending.WorkflowID, "", "test: the saga failed"))
	down.Stop()
	stopped = true
	s.startWorker(t, nil) // the ledger is back
	requireStatus(t, operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("wo")), http.StatusConflict,
		"BNPL_WRITE_OFF_IN_PROGRESS")

	// The same key, its 202 no longer stored: a new run writes the agreement off.
	forgetIdempotencyRecord(t, s.ewaStack, key)
	rec = operator.call(http.MethodPost, path, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := decode[bnplWrittenOffJSON](t, rec)
	require.Equal(t, "WRITTEN_OFF", out.Agreement.Status)
	require.Equal(t, "POSTED", out.WriteOff.Status)
	require.Equal(t, pending.WorkflowID, out.WriteOff.WorkflowID)
	require.Equal(t, int64(120_000), out.WriteOff.AmountSantim)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key = $2`,
		s.tenant, bnpl.WriteOffLedgerKey(a.ID)))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'WRITTEN_OFF'`, a.ID))

	// That key on another agreement: refused, nothing claimed.
	b := s.activeBnplAgreement(t, "order-wo-restart-2")
	cb = merchantCallbackBody("wo-r2", s.merchantID, b.ID, "order-wo-restart-2", "CANCELLED")
	rec = partner.call(http.MethodPost, merchantCallbackPath, cb, signedHeaders(cb, "wo-r-n2")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	forgetIdempotencyRecord(t, s.ewaStack, key)
	requireStatus(t, operator.call(http.MethodPost, "/api/bnpl/agreements/"+b.ID+"/write-off", body, "Idempotency-Key", key),
		http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.bnpl_write_offs WHERE agreement_id = $1`, b.ID))
}

// TestBnplMandateCoversAnInstalmentBeingCollected: 1,000 ETB in 3 is 333.34, 333.33 and 333.33.
// The customer opts in while instalment 0 is being collected: the mandate is of the largest
// instalment still owed (333.34), not of the earliest DUE one's (333.33). The collection is
// refused, instalment 0 is DUE again, and the next run withholds and collects it whole — with a
// mandate of 333.33 every run withheld LEAST(333.33, 333.34) and its completion refused the line
// BNPL_MANDATE_AMOUNT_MISMATCH, period after period.
func TestBnplMandateCoversAnInstalmentBeingCollected(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	p := &bnplPayroll{bnplStack: s, w: payrollWorldOn(t, s.ewaStack, 1, payrollDisburseFunds)}
	p.w.setPayrollAccount(t, p.w.payroll, "Employer PLC")
	p.a = s.activeAgreement(t, 100_000, 3, "order-mandate-collecting")
	require.Equal(t, []int64{33_334, 33_333, 33_333}, []int64{p.instalment(t, 0).AmountSantim, p.instalment(t, 1).AmountSantim,
		p.instalment(t, 2).AmountSantim})
	p.me = s.linkEmployeeUser(t, testkit.Unique("buyer")+"@bnpl-payroll.test")

	// Instalment 0 is held by a collection saga (the store's own step) when the customer opts in.
	const holder = "fixture-collect-0"
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), s.tenant), "system:test")
	require.NoError(t, tenancy.InTx(ctx, s.d.App, func(tx pgx.Tx) error {
		_, err := bnpl.ReserveInstalment(ctx, tx, p.a.ID, 0, holder, bnpl.SourceManual)
		return err
	}))
	require.Equal(t, "COLLECTING", p.instalment(t, 0).Status)
	rec := p.me.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installment-mandate", map[string]any{"startPeriod": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	p.mandate = decode[mandateJSON](t, rec)
	require.Equal(t, int64(33_334), *p.mandate.AmountSantim, "the largest instalment still owed")

	// The collection is refused: instalment 0 is DUE again.
	require.NoError(t, tenancy.InTx(ctx, s.d.App, func(tx pgx.Tx) error {
		_, err := bnpl.ReleaseInstalment(ctx, tx, p.a.ID, 0, holder, "BNPL_COLLECTION_REFUSED")
		return err
	}))
	require.Equal(t, "DUE", p.instalment(t, 0).Status)
	rec = p.w.checker.call(http.MethodPost, "/api/payroll/deduction-mandates/"+p.mandate.ID+"/activate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	run := p.w.approvedRun(t)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND deductions @> $2::jsonb`, run.ID,
		`[{"kind":"BNPL_INSTALLMENT","amountSantim":33334}]`), "the run withholds instalment 0 whole")
	rec = p.w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	p.w.waitRun(t, run.ID, "COMPLETED")
	i0 := p.instalment(t, 0)
	require.Equal(t, "COLLECTED", i0.Status)
	require.Equal(t, "PAYROLL", *i0.Source)
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'
		AND jsonb_array_length(coalesce(payload->'refusedLines', '[]'::jsonb)) > 0`, s.tenant), "no line refused")
}

// TestBnplCollectsARestructuredIndex: a restructure numbers its instalments after the agreement's
// highest, so an agreement of 12 instalments restructured has indexes 12 and 13; collecting
// instalment 12 answers index 12, which the document allows (it said at most 11; the test client
// checks every answer against it).
func TestBnplCollectsARestructuredIndex(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeAgreement(t, 120_000, 12, "order-restructured-index")
	operator := s.operator("support@bnpl-restructure-index.test")
	rec := operator.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/restructure",
		map[string]any{"instalments": 2, "firstPeriod": "2027-01", "reason": "shorter plan"}, "Idempotency-Key", testkit.Unique("rs"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/12/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	require.Equal(t, 12, decode[bnplCollectJSON](t, rec).Index)
}

// TestBnplFailedActivationOwesNothing: an activation whose merchant settlement failed leaves the
// agreement FAILED and its instalments CANCELLED in the same transaction — they stayed DUE, and
// the customer's own list showed them owed.
func TestBnplFailedActivationOwesNothing(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	me := s.linkEmployeeUser(t, testkit.Unique("buyer")+"@bnpl-failed.test")
	s.bank.Sandbox.Fault(t, s.funding, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-failed"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	failed := s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "FAILED")
	require.Zero(t, failed.OutstandingSantim)
	require.Len(t, failed.Instalments, 3)
	for _, i := range failed.Instalments {
		require.Equal(t, "CANCELLED", i.Status, "instalment %d", i.Index)
	}
	rec = me.call(http.MethodGet, "/api/me/bnpl/agreements", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	items := decode[bnplAgreementPageJSON](t, rec).Items
	require.Len(t, items, 1)
	for _, i := range items[0].Instalments {
		require.NotEqual(t, "DUE", i.Status, "instalment %d", i.Index)
	}
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'DUE'`, failed.ID))
}
