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
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestBnplRestructure: an ACTIVE agreement of 1,200 ETB in 3 with its first instalment collected
// is restructured by a platform operator: only an operator (the business and the merchant 403,
// audited), an unknown agreement 404, bad input 400 and an instalment being collected 409
// BNPL_COLLECTION_IN_PROGRESS, each writing nothing; then the 800 ETB still due becomes 3 new
// instalments (26,667 + 26,667 + 26,666 santim, from the period asked), the two DUE ones kept
// SUPERSEDED with version 1, the new ones version 2; the same key answers the same once (one
// audit row, one bnpl.agreement_restructured.v1 event, nothing posted); a superseded instalment is
// not collected; collecting the new ones settles the agreement with the receivable at zero; a
// SETTLED agreement's restructure is 409 BNPL_INVALID_STATE, audited DENIED.
func TestBnplRestructure(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeBnplAgreement(t, "restructure-1")
	require.Len(t, a.Instalments, 3)
	collect := func(idx string) *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/"+idx+"/collect", nil,
			"Idempotency-Key", testkit.Unique("collect"))
	}
	rec := collect("0")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	operator := s.operator("support@bnpl-restructure.test")
	path := "/api/bnpl/agreements/" + a.ID + "/restructure"
	body := map[string]any{"instalments": 3, "firstPeriod": "2027-01", "reason": "the customer's hours were cut"}
	restructures := func(outcome string) int {
		return s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'RestructureBnplAgreement'
			AND outcome = $2 AND target_id = $3`, s.tenant, outcome, a.ID)
	}
	unchanged := func() {
		t.Helper()
		got := s.waitAgreement(t, a.ID, "ACTIVE")
		require.Len(t, got.Instalments, 3)
		require.Equal(t, "COLLECTED", got.Instalments[0].Status)
		require.Equal(t, int64(80_000), got.OutstandingSantim)
		require.Zero(t, restructures("SUCCESS"))
		require.Zero(t, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.agreement_restructured.v1'`, s.tenant))
	}

	// Only an operator; an id no business has is 404.
	requireStatus(t, s.owner.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs")), http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, s.merchant.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs")), http.StatusForbidden, "OPERATOR_REQUIRED")
	other, _ := s.signUp("owner@restructure-other.test", "BUSINESS")
	requireStatus(t, other.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs")), http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, operator.call(http.MethodPost, "/api/bnpl/agreements/bnpl_00000000000000000000000000000000/restructure", body,
		"Idempotency-Key", testkit.Unique("rs")), http.StatusNotFound, "BNPL_AGREEMENT_NOT_FOUND")

	// Bad input: 400, nothing written.
	for _, bad := range []map[string]any{
		{"instalments": 0, "firstPeriod": "2027-01", "reason": "r"},
		{"instalments": 13, "firstPeriod": "2027-01", "reason": "r"},
		{"instalments": 3, "firstPeriod": "2027-13", "reason": "r"},
		{"instalments": 3, "firstPeriod": "2027-01", "reason": " "},
		{"instalments": 3, "firstPeriod": "2027-01"},
		{"firstPeriod": "2027-01", "reason": "r"},
		{"instalments": 3, "firstPeriod": "2027-01", "reason": "r", "extra": 1},
		{"instalments": "3", "firstPeriod": "2027-01", "reason": "r"},
	} {
		rec := operator.hostile(http.MethodPost, path, bad, "Idempotency-Key", testkit.Unique("rs"))
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", bad, rec.Body.String())
	}
	// Schema-valid but before the current period; no Idempotency-Key.
	requireStatus(t, operator.call(http.MethodPost, path, map[string]any{"instalments": 3, "firstPeriod": "2000-01", "reason": "r"},
		"Idempotency-Key", testkit.Unique("rs")), http.StatusBadRequest, "INVALID_REQUEST")
	rec = operator.hostile(http.MethodPost, path, body)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	unchanged()

	// An instalment being collected blocks the restructure: its saga decides first.
	setStatus := func(status string, wf any) {
		ctx := context.Background()
		require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = $3, collect_workflow_id = $4, collect_source = $5
				WHERE tenant_id = $1 AND agreement_id = $2 AND idx = 1`, s.tenant, a.ID, status, wf, map[bool]any{true: "MANUAL", false: nil}[wf != nil])
			return err
		}))
	}
	setStatus("COLLECTING", "fixture-collect-1")
	requireStatus(t, operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs")), http.StatusConflict, "BNPL_COLLECTION_IN_PROGRESS")
	require.Equal(t, 1, restructures("DENIED"))
	setStatus("DUE", nil)
	unchanged()

	// The restructure, and its replay.
	ledgerTxs := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	key := testkit.Unique("rs")
	rec = operator.call(http.MethodPost, path, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := decode[bnplRestructuredJSON](t, rec)
	require.Equal(t, 2, out.ScheduleVersion)
	require.Equal(t, int64(80_000), out.OutstandingSantim)
	require.Equal(t, []int{1, 2}, out.Superseded)
	require.Equal(t, "ACTIVE", out.Agreement.Status)
	require.Equal(t, int64(80_000), out.Agreement.OutstandingSantim)
	type row struct {
		idx     int
		due     string
		amount  int64
		status  string
		version int
	}
	want := []row{{0, a.Instalments[0].DueDate, 40_000, "COLLECTED", 1}, {1, a.Instalments[1].DueDate, 40_000, "SUPERSEDED", 1},
		{2, a.Instalments[2].DueDate, 40_000, "SUPERSEDED", 1}, {3, "2027-01-31", 26_667, "DUE", 2}, {4, "2027-02-28", 26_667, "DUE", 2},
		{5, "2027-03-31", 26_666, "DUE", 2}}
	var got []row
	var total int64
	for _, i := range out.Agreement.Instalments {
		got = append(got, row{i.Index, i.DueDate, i.AmountSantim, i.Status, i.ScheduleVersion})
		if i.Status == "DUE" {
			total += i.AmountSantim
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, out.OutstandingSantim, total)
	again := operator.call(http.MethodPost, path, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	require.JSONEq(t, rec.Body.String(), again.Body.String())
	require.Equal(t, 1, restructures("SUCCESS"))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.agreement_restructured.v1'
		AND payload->>'agreementId' = $2 AND (payload->>'version')::int = 2`, s.tenant, a.ID))
	require.Equal(t, ledgerTxs, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant), "nothing posted")
	require.Equal(t, out.Agreement, s.waitAgreement(t, a.ID, "ACTIVE"))

	// A superseded instalment is not collected; the new ones settle the agreement.
	requireStatus(t, collect("1"), http.StatusConflict, "BNPL_INSTALMENT_NOT_DUE")
	for _, idx := range []string{"3", "4", "5"} {
		rec := collect(idx)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	settled := s.waitAgreement(t, a.ID, "SETTLED")
	require.Zero(t, settled.OutstandingSantim)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.accounts a WHERE a.tenant_id = $1 AND a.name = $2 AND 0 =
		(SELECT coalesce(sum(CASE e.direction WHEN 'DEBIT' THEN e.amount ELSE -e.amount END), 0) FROM ledger.entries e
		 WHERE e.account_id = a.id AND e.phase = 'POSTED')`, s.tenant, "receivable-from-customer:"+a.ID), "the receivable closes")
	requireStatus(t, operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs")), http.StatusConflict, "BNPL_INVALID_STATE")
	require.Equal(t, 2, restructures("DENIED"))
	require.Equal(t, 1, restructures("SUCCESS"))
}

// TestBnplRestructureWithAPayrollMandate: the customer pays by payroll mandate (40,000 a month).
// A restructure is refused while a run that withheld under the mandate has not completed (its
// completion collects the old instalment: BNPL_MANDATE_IN_OPEN_RUN); once it has, a restructure
// to instalments the mandate no longer covers (one of 80,000) ends the mandate, so the next run
// withholds nothing (found by an audit: the mandate went on withholding 40,000 a month, each
// line refused BNPL_MANDATE_AMOUNT_MISMATCH and reported for a refund, the instalment never
// collected).
func TestBnplRestructureWithAPayrollMandate(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "order-restructure")
	s, w := p.bnplStack, p.w
	operator := s.operator("support@bnpl-restructure-mandate.test")
	path := "/api/bnpl/agreements/" + p.a.ID + "/restructure"
	body := map[string]any{"instalments": 1, "firstPeriod": "2027-01", "reason": "one payment"}

	run := w.approvedRun(t)
	require.True(t, p.deducts(t, run.ID))
	requireStatus(t, operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs")), http.StatusConflict,
		"BNPL_MANDATE_IN_OPEN_RUN")
	rec := w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	require.Equal(t, "COLLECTED", p.instalment(t, 0).Status)

	rec = operator.call(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("rs"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE id = $1 AND status = 'CANCELLED'`, p.mandate.ID),
		"the mandate's 40,000 no longer pays the 80,000 instalment")
	run2 := w.approvedRunOf(t, "2026-12", func(string) {})
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND deductions @> $2::jsonb`,
		run2.ID, fmt.Sprintf(`[{"kind":"BNPL_INSTALLMENT","reference":%q}]`, p.mandate.ID)), "nothing withheld under the ended mandate")
}

// TestBnplServicingNotByTheCustomer: an operator who is the customer (the user linked to the
// agreement's employee) is refused 403 BNPL_OWN_SERVICING the restructure and the write-off of
// their own plan (audited DENIED, nothing changed); another operator is not. Found by an audit.
func TestBnplServicingNotByTheCustomer(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeBnplAgreement(t, "own-1")
	me := s.linkEmployeeUser(t, "customer@bnpl-own.test")
	self := decode[sessionResult](t, me.call(http.MethodGet, "/api/auth/get-session", nil)).User.ID
	_, created, err := identity.GrantOperator(context.Background(), s.d.Platform(t), self, self, time.Now())
	require.NoError(t, err)
	require.True(t, created)

	path := "/api/bnpl/agreements/" + a.ID
	body := map[string]any{"instalments": 3, "firstPeriod": "2027-01", "reason": "my own hours were cut"}
	requireStatus(t, me.call(http.MethodPost, path+"/restructure", body, "Idempotency-Key", testkit.Unique("rs")),
		http.StatusForbidden, bnpl.CodeOwnServicing)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'RestructureBnplAgreement'
		AND outcome = 'DENIED' AND details->>'code' = $2`, s.tenant, bnpl.CodeOwnServicing))
	// The write-off is refused by its saga's claim (the merchant's refund first, so that the
	// claim reaches the rule).
	cb := merchantCallbackBody("own-cb1", s.merchantID, a.ID, "own-1", "REFUNDED")
	rec := newAPIClient(t, s.srv).call(http.MethodPost, merchantCallbackPath, cb, signedHeaders(cb, "own-n1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, me.call(http.MethodPost, path+"/write-off", map[string]any{"reason": "my own plan"}, "Idempotency-Key", testkit.Unique("wo")),
		http.StatusForbidden, bnpl.CodeOwnServicing)
	got := s.waitAgreement(t, a.ID, "ACTIVE")
	require.Len(t, got.Instalments, 3, "not restructured")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.bnpl_write_offs WHERE tenant_id = $1`, s.tenant))

	rec = s.operator("support@bnpl-own.test").call(http.MethodPost, path+"/write-off", map[string]any{"reason": "the merchant refunded"},
		"Idempotency-Key", testkit.Unique("wo"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
}
