package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestBnplWriteOff: end to end over HTTP on the real stack. An ACTIVE agreement of 1,200 ETB in 3,
// its first instalment collected, its customer paying by an ACTIVE payroll mandate. Only an
// operator (the business and the merchant 403), an unknown id 404, bad input 400, and before the
// merchant's word 409 BNPL_MERCHANT_ORDER_NOT_REVERSED (audited DENIED) — each writing nothing
// else. The merchant reports the order REFUNDED; a payroll run approved before that, which
// withheld the instalment and has not completed, makes the write-off wait (409 BNPL_MANDATE_IN_OPEN_RUN); once it completed, 8
// racing write-offs with their own keys: one writes off, the others are 409, none 5xx. The
// agreement and its two DUE instalments are WRITTEN_OFF, the journal exact (Dr misc-loss 80,000 /
// Cr receivable-from-customer 80,000, the receivable at zero), the mandate CANCELLED, one audit
// row and one bnpl.agreement_written_off.v1; the winning key answers the same again; a new key,
// and a restructure are 409 BNPL_INVALID_STATE, a written-off instalment's collection 409
// BNPL_INSTALMENT_NOT_DUE.
func TestBnplWriteOff(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "order-writeoff")
	s, w := p.bnplStack, p.w
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	operator := s.operator("support@bnpl-writeoff.test")
	path := "/api/bnpl/agreements/" + p.a.ID + "/write-off"
	body := map[string]any{"reason": "the merchant refunded the order"}
	writeOff := func(c *apiClient, key string) *httptest.ResponseRecorder {
		return c.call(http.MethodPost, path, body, "Idempotency-Key", key)
	}
	audits := func(outcome string) int {
		return s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'WriteOffBnplAgreement' AND outcome = $2
			AND target_id = $3`, s.tenant, outcome, p.a.ID)
	}
	written := func() []int {
		return []int{
			s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.bnpl_write_offs WHERE tenant_id = $1`, s.tenant),
			s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'DUE'`, p.a.ID),
			s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'ACTIVE'`, p.mandate.ID),
			s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.agreement_written_off.v1'`, s.tenant),
		}
	}
	before := written()
	require.Equal(t, []int{before[0], 0, 2, 1, 0}, before)

	// Only an operator; an id no business has is 404; bad input 400.
	requireStatus(t, writeOff(s.owner, testkit.Unique("wo")), http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, writeOff(s.merchant, testkit.Unique("wo")), http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, operator.call(http.MethodPost, "/api/bnpl/agreements/bnpl_00000000000000000000000000000000/write-off", body,
		"Idempotency-Key", testkit.Unique("wo")), http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")
	for _, bad := range []any{
		map[string]any{}, map[string]any{"reason": " "}, map[string]any{"reason": ""}, map[string]any{"reason": 5},
		map[string]any{"reason": "r", "extra": 1}, map[string]any{"reason": "a\u0000b"}, map[string]any{"reason": "a\u001bb"},
		map[string]any{"reason": strings.Repeat("é", 251)}, []any{"reason"}, "reason",
	} {
		rec := operator.hostile(http.MethodPost, path, bad, "Idempotency-Key", testkit.Unique("wo"))
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", bad, rec.Body.String())
	}
	require.Equal(t, http.StatusBadRequest, operator.hostile(http.MethodPost, path, body).Code, "no Idempotency-Key")
	require.Equal(t, before, written())

	// Before the merchant's word: refused, audited, nothing else written.
	requireStatus(t, writeOff(operator, testkit.Unique("wo")), http.StatusConflict, "BNPL_MERCHANT_ORDER_NOT_REVERSED")
	require.Equal(t, 1, audits("DENIED"))
	require.Equal(t, before, written())

	// A payroll run approved before the merchant's word withholds the instalment under the
	// mandate; then the merchant refunds (a run calculated after it would withhold nothing).
	run := w.approvedRun(t)
	require.True(t, p.deducts(t, run.ID))
	partner := newAPIClient(t, s.srv)
	cb := merchantCallbackBody("wo-1", s.merchantID, p.a.ID, "order-writeoff", "REFUNDED")
	rec = partner.call(http.MethodPost, merchantCallbackPath, cb, signedHeaders(cb, "wo-n1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, writeOff(operator, testkit.Unique("wo")), http.StatusConflict, "BNPL_MANDATE_IN_OPEN_RUN")
	require.Equal(t, 2, audits("DENIED"))
	require.Equal(t, before, written())
	// The run completes: its line is refused (the order reversed) and reported for the refund.
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	before = written()

	// 8 racing write-offs, each with its own key: one writes off.
	keys := make([]string, 8)
	recs := make([]*httptest.ResponseRecorder, len(keys))
	var wg sync.WaitGroup
	for i := range keys {
		keys[i] = testkit.Unique("wo")
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = writeOff(operator, keys[i])
		}()
	}
	wg.Wait()
	winner := -1
	for i, r := range recs {
		if r.Code == http.StatusOK {
			require.Equal(t, -1, winner, "one write-off")
			winner = i
			continue
		}
		require.Equal(t, http.StatusConflict, r.Code, r.Body.String())
		require.Contains(t, []string{"BNPL_WRITE_OFF_IN_PROGRESS", "BNPL_INVALID_STATE"}, errCode(r), r.Body.String())
	}
	require.NotEqual(t, -1, winner, "one write-off succeeds")
	out := decode[bnplWrittenOffJSON](t, recs[winner])
	require.Equal(t, "WRITTEN_OFF", out.Agreement.Status)
	require.Zero(t, out.Agreement.OutstandingSantim)
	var statuses []string
	for _, i := range out.Agreement.Instalments {
		statuses = append(statuses, i.Status)
	}
	require.Equal(t, []string{"COLLECTED", "WRITTEN_OFF", "WRITTEN_OFF"}, statuses)
	require.Equal(t, "POSTED", out.WriteOff.Status)
	require.Equal(t, int64(80_000), out.WriteOff.AmountSantim)
	require.Equal(t, "REFUNDED", out.WriteOff.MerchantStatus)
	require.Equal(t, body["reason"], out.WriteOff.Reason)
	require.NotNil(t, out.WriteOff.LedgerTxID)

	// The journal, exact; the receivable closed.
	tx := s.ledgerTx(t, "bnpl-write-off:"+p.a.ID)
	require.Equal(t, *out.WriteOff.LedgerTxID, tx.GetId())
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
	legs := map[string]string{}
	for _, e := range tx.GetEntries() {
		legs[e.GetAccountName()] = fmt.Sprintf("%s %d", e.GetDirection(), e.GetAmountSantim())
	}
	require.Equal(t, map[string]string{"misc-loss": "DIRECTION_DEBIT 80000", "receivable-from-customer:" + p.a.ID: "DIRECTION_CREDIT 80000"}, legs)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.accounts a WHERE a.tenant_id = $1 AND a.name = $2 AND 0 =
		(SELECT coalesce(sum(CASE e.direction WHEN 'DEBIT' THEN e.amount ELSE -e.amount END), 0) FROM ledger.entries e
		 WHERE e.account_id = a.id AND e.phase = 'POSTED')`, s.tenant, "receivable-from-customer:"+p.a.ID), "the receivable closes")
	after := written()
	require.Equal(t, []int{before[0] + 1, 1, 0, 0, 1}, after, "one journal, one write-off, no instalment due, the mandate cancelled, one event")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'CANCELLED'`, p.mandate.ID))
	require.Equal(t, 1, audits("SUCCESS"))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.agreement_written_off.v1'
		AND payload->>'agreementId' = $2 AND (payload->>'writtenOffSantim')::bigint = 80000 AND payload->>'status' = 'WRITTEN_OFF'
		AND payload->'instalments' = '[1, 2]'::jsonb AND payload->>'merchantStatus' = 'REFUNDED'`, s.tenant, p.a.ID))

	// The winning key answers the same; everything after is refused and writes nothing.
	again := writeOff(operator, keys[winner])
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	require.JSONEq(t, recs[winner].Body.String(), again.Body.String())
	requireStatus(t, writeOff(operator, testkit.Unique("wo")), http.StatusConflict, "BNPL_INVALID_STATE")
	requireStatus(t, s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installments/1/collect", nil,
		"Idempotency-Key", testkit.Unique("collect")), http.StatusConflict, "BNPL_INSTALMENT_NOT_DUE")
	requireStatus(t, operator.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/restructure",
		map[string]any{"instalments": 2, "firstPeriod": "2027-01", "reason": "r"}, "Idempotency-Key", testkit.Unique("rs")),
		http.StatusConflict, "BNPL_INVALID_STATE")
	require.Equal(t, after, written())
	require.Equal(t, out.Agreement, s.waitAgreement(t, p.a.ID, "WRITTEN_OFF"))
	// The list filters by every status the document names, WRITTEN_OFF too (it answered 400).
	rec = s.owner.call(http.MethodGet, "/api/bnpl/agreements?status=WRITTEN_OFF", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	page := decode[bnplAgreementPageJSON](t, rec)
	require.Len(t, page.Items, 1)
	require.Equal(t, p.a.ID, page.Items[0].ID)
	// The write-off's history (WAGERAIL_RECORD_HISTORY=1), replayed by workflows.TestBnplReplay.
	testkit.RecordHistory(t, s.tc, out.WriteOff.WorkflowID, "", "../workflows/testdata/bnpl_writeoff_history.json")
}

// TestBnplWriteOffInProgress: while another run's write-off of the agreement is PENDING, its
// collection, its restructure and another write-off are 409 BNPL_WRITE_OFF_IN_PROGRESS, nothing
// written; once that write-off FAILED (the ledger refused it), a new run claims it again and
// writes the agreement off (R = 1,200 ETB, nothing collected).
func TestBnplWriteOffInProgress(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeBnplAgreement(t, "order-wo-pending")
	operator := s.operator("support@bnpl-writeoff-pending.test")
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		}))
	}
	exec(`INSERT INTO app.bnpl_write_offs (tenant_id, agreement_id, workflow_id, amount_santim, merchant_status, reason, status,
		requested_by, requested_at) VALUES ($1, $2, 'fixture-write-off', 120000, 'CANCELLED', 'fixture', 'PENDING', 'fixture', now())`,
		s.tenant, a.ID)
	partner := newAPIClient(t, s.srv)
	ledgerTxs := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)

	requireStatus(t, s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/0/collect", nil,
		"Idempotency-Key", testkit.Unique("collect")), http.StatusConflict, "BNPL_WRITE_OFF_IN_PROGRESS")
	requireStatus(t, operator.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/restructure",
		map[string]any{"instalments": 2, "firstPeriod": "2027-01", "reason": "r"}, "Idempotency-Key", testkit.Unique("rs")),
		http.StatusConflict, "BNPL_WRITE_OFF_IN_PROGRESS")
	cb := merchantCallbackBody("wo-p1", s.merchantID, a.ID, "order-wo-pending", "CANCELLED")
	rec := partner.call(http.MethodPost, merchantCallbackPath, cb, signedHeaders(cb, "wo-p-n1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	path := "/api/bnpl/agreements/" + a.ID + "/write-off"
	body := map[string]any{"reason": "the merchant cancelled the order"}
	requireStatus(t, operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("wo")), http.StatusConflict,
		"BNPL_WRITE_OFF_IN_PROGRESS")
	require.Equal(t, ledgerTxs, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'DUE'`, a.ID))

	exec(`UPDATE app.bnpl_write_offs SET status = 'FAILED', failure_reason = 'LEDGER_UNAVAILABLE', completed_at = now()
		WHERE tenant_id = $1 AND agreement_id = $2`, s.tenant, a.ID)
	rec = operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("wo"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := decode[bnplWrittenOffJSON](t, rec)
	require.Equal(t, "WRITTEN_OFF", out.Agreement.Status)
	require.Equal(t, int64(120_000), out.WriteOff.AmountSantim)
	require.Equal(t, "CANCELLED", out.WriteOff.MerchantStatus)
	require.NotEqual(t, "fixture-write-off", out.WriteOff.WorkflowID, "claimed again by the new run")
	require.Equal(t, ledgerTxs+1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE agreement_id = $1 AND status = 'WRITTEN_OFF'`, a.ID))
}
