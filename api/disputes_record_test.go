package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

const pathRecordDispute = "/api/admin/disputes"

// paidOut posts a payout of amount to employee's receivable through partner's account (Dr the
// receivable, Cr partner-bank:<partner>:<account>, as an advance paid at a bank is recorded) and
// returns the transaction id.
func (w *disputeWorld) paidOut(t testing.TB, employee, partner string, amount int64) string {
	t.Helper()
	resp, err := w.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{TenantId: w.tenant,
		IdempotencyKey: testkit.Unique("dsp-payout"), Entries: []*ledgerv1.EntryInput{
			{AccountName: chart.EmployeeReceivable(employee), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amount},
			{AccountName: chart.PartnerBankAccount(partner, "POOL-1"), Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amount},
		}})
	require.NoError(t, err)
	return resp.GetTransaction().GetId()
}

// TestDisputeRecordedByPlatformSupport: an operator records the dispute a partner bank reported
// about an advance it paid out (PARTNER_BANK, its subject the partner, the partner-bank SLA of 5
// business days) and one the platform found itself (INTERNAL, its subject the operator, 14
// calendar days); each is worked as an employee's is (its workflow starts the investigation) and
// its customer is told (dispute.opened.v1). Every refusal is a 4xx with its code and writes
// nothing: a transaction the partner moved no money of, an account the transaction does not
// touch, another organization's or an unknown transaction, no such organization, a second
// dispute of the transaction, malformed bodies, and a caller who is not platform staff.
func TestDisputeRecordedByPlatformSupport(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	ctx := context.Background()
	var operatorID string
	require.NoError(t, s.d.Platform(t).QueryRow(ctx, `SELECT id FROM app.users WHERE email = 'support@dsp.test'`).Scan(&operatorID))
	// count is what a dispute leaves in either organization: its rows, its events, its audit rows.
	count := func() int {
		n := 0
		for _, tenant := range []string{s.tenant, s.otherTenant} {
			n += s.tenantCount(tenant, `SELECT (SELECT count(*) FROM app.disputes) + (SELECT count(*) FROM app.outbox WHERE type LIKE 'dispute.%')
				+ (SELECT count(*) FROM app.audit_log WHERE action = 'OpenDispute')`)
		}
		return n
	}
	// record sends body; one the document refuses is sent as hostile input (the document must
	// refuse exactly the bodies the server answers 400).
	record := func(who *apiClient, body map[string]any) (int, string, disputeJSON) {
		send := who.call
		if who.documentVerdict(http.MethodPost, pathRecordDispute, body) != nil {
			send = who.hostile
		}
		rec := send(http.MethodPost, pathRecordDispute, body)
		if (who.documentVerdict(http.MethodPost, pathRecordDispute, body) != nil) != (rec.Code == http.StatusBadRequest) {
			t.Fatalf("the document and the server disagree about %v: %d %s", body, rec.Code, rec.Body.String())
		}
		if rec.Code != http.StatusCreated {
			return rec.Code, errCode(rec), disputeJSON{}
		}
		return rec.Code, "", decode[disputeJSON](t, rec)
	}
	body := func(tx, account, raisedBy string, extra map[string]any) map[string]any {
		b := map[string]any{"tenantId": s.tenant, "ledgerTransactionId": tx, "ledgerAccountName": account, "raisedByType": raisedBy,
			"reason": "the bank's customer says the advance never arrived"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	mine := chart.EmployeeReceivable(s.emp)
	paid := s.paidOut(t, s.emp, "sandbox", 180_000)

	// The refusals first: nothing is written by any of them.
	before := count()
	refusals := []struct {
		name   string
		who    *apiClient
		body   map[string]any
		status int
		code   string
	}{
		{"another partner's transaction", s.operator, body(paid, mine, "PARTNER_BANK", map[string]any{"partner": "other-bank"}),
			http.StatusUnprocessableEntity, disputes.CodePartnerNotOnTransaction},
		{"an account the transaction does not touch", s.operator, body(paid, chart.EmployeeReceivable(s.colleagueEmp), "PARTNER_BANK",
			map[string]any{"partner": "sandbox"}), http.StatusUnprocessableEntity, disputes.CodeAccountNotOnTransaction},
		{"an unknown transaction", s.operator, body("00000000-0000-4000-8000-000000000000", mine, "INTERNAL", nil),
			http.StatusNotFound, disputes.CodeTransactionNotFound},
		{"another organization's transaction", s.operator, func() map[string]any {
			b := body(paid, mine, "INTERNAL", nil)
			b["tenantId"] = s.otherTenant
			return b
		}(), http.StatusNotFound, disputes.CodeTransactionNotFound},
		{"no such organization", s.operator, func() map[string]any {
			b := body(paid, mine, "INTERNAL", nil)
			b["tenantId"] = "org_does-not-exist"
			return b
		}(), http.StatusNotFound, "ORGANIZATION_NOT_FOUND"},
		{"a partner bank without its partner", s.operator, body(paid, mine, "PARTNER_BANK", nil), http.StatusBadRequest, "INVALID_REQUEST"},
		{"an internal dispute naming a partner", s.operator, body(paid, mine, "INTERNAL", map[string]any{"partner": "sandbox"}),
			http.StatusBadRequest, "INVALID_REQUEST"},
		{"an employee's dispute", s.operator, body(paid, mine, "EMPLOYEE", nil), http.StatusBadRequest, "INVALID_REQUEST"},
		{"not a customer's account", s.operator, body(paid, chart.PartnerBankAccount("sandbox", "POOL-1"), "INTERNAL", nil),
			http.StatusBadRequest, "INVALID_REQUEST"},
		{"an organization's admin", s.owner, body(paid, mine, "INTERNAL", nil), http.StatusForbidden, "OPERATOR_REQUIRED"},
		{"an employee", s.me, body(paid, mine, "INTERNAL", nil), http.StatusForbidden, "OPERATOR_REQUIRED"},
	}
	for _, r := range refusals {
		status, code, _ := record(r.who, r.body)
		require.Equal(t, []any{r.status, r.code}, []any{status, code}, r.name)
	}
	require.Equal(t, before, count(), "no refusal wrote a dispute or an event")

	// The partner bank's dispute.
	status, _, d := record(s.operator, body(paid, mine, "PARTNER_BANK", map[string]any{"partner": "sandbox"}))
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, []any{"OPENED", "PARTNER_BANK", "sandbox", int64(180_000), paid},
		[]any{d.Status, d.RaisedByType, d.RaisedBySubjectID, d.AmountSantim, d.LedgerTransactionID})
	require.Greater(t, count(), before, "count sees what a dispute writes")
	opened := d.OpenedAt
	require.Equal(t, disputes.Ethiopia().Deadline(opened, disputes.DefaultPolicy(disputes.RaisedByPartnerBank)), d.SLADeadline,
		"the partner-bank policy: 5 business days")
	require.Eventually(t, func() bool { return s.detail(t, d.ID).Status == "UNDER_INVESTIGATION" }, 20*time.Second, 50*time.Millisecond,
		"worked as every dispute: its workflow started the investigation")
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'OpenDispute' AND target_id = $1 AND actor = $2`,
		d.ID, operatorID), "audited as the operator's act")
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.opened.v1' AND payload->>'disputeId' = $1
		AND payload->>'raisedBySubjectId' = 'sandbox'`, d.ID), "its customer is told by dispute.opened.v1")

	// The same transaction again, by either raiser: it has an open dispute.
	status, code, _ := record(s.operator, body(paid, mine, "INTERNAL", nil))
	require.Equal(t, []any{http.StatusConflict, disputes.CodeAlreadyOpen}, []any{status, code})

	// The platform's own finding, on an advance that moved through no bank (a platform admin may
	// record too).
	own := s.post(t, s.tenant, s.colleagueEmp, 40_000)
	status, _, d = record(s.admin, body(own, chart.EmployeeReceivable(s.colleagueEmp), "INTERNAL", nil))
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, []any{"INTERNAL", int64(40_000)}, []any{d.RaisedByType, d.AmountSantim})
	require.NotEqual(t, operatorID, d.RaisedBySubjectID, "the subject is the platform admin who recorded it")
	require.Equal(t, disputes.Ethiopia().Deadline(d.OpenedAt, disputes.DefaultPolicy(disputes.RaisedByInternal)), d.SLADeadline,
		"the internal policy: 14 calendar days")

	// The organization's admins read both in their list, by raiser.
	rec := s.owner.call(http.MethodGet, "/api/disputes?raisedByType=PARTNER_BANK", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	list := decode[disputeListJSON](t, rec)
	require.Len(t, list.Items, 1)
	require.Equal(t, "sandbox", list.Items[0].RaisedBySubjectID)
}
