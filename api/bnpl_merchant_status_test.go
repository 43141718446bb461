package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestBnplMerchantCallbackSetsMerchantStatus: over HTTP with the real stack, the sandbox holding
// the merchant's settlement for a while: a signed DELIVERED callback that arrives while the
// activation saga runs (the agreement ACCEPTED) is signalled to it and the saga sets the
// agreement's merchant status (audit BnplMerchantStatusChanged by the saga, one
// bnpl.merchant_status_changed.v1); the partner's retry, and a callback naming this agreement
// from another merchant, change nothing; the saga goes on to ACTIVE on the bank's word. Once the
// saga has closed, a REFUNDED callback is applied by its receipt (actor the partner), and its
// retry changes nothing. Neither callback touches the agreement's status, instalments or books.
func TestBnplMerchantCallbackSetsMerchantStatus(t *testing.T) {
	t.Parallel()
	s := newBnplStackWith(t, ewaStackOpts{settleDelay: 20 * time.Second})
	s.approveKyc(t)
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-ms"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[bnplActivateJSON](t, rec)
	require.Equal(t, "DISBURSING", acc.Status)

	other, res := s.signUpPartner("owner@other-ms.test", "MERCHANT")
	otherID := res.Organization.ID
	otherSettle := testkit.Unique("msettle3")
	s.bank.Account(t, otherSettle, "Other Settlement", 0)
	rec = other.call(http.MethodPut, "/api/bnpl/merchant", map[string]any{
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": otherSettle}, "discountBasisPoints": 0})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	partner := newAPIClient(t, s.srv)
	send := func(body []byte, nonce string) merchantCallbackJSON {
		t.Helper()
		rec := partner.call(http.MethodPost, merchantCallbackPath, body, signedHeaders(body, nonce)...)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[merchantCallbackJSON](t, rec)
	}
	status := func(want string) int {
		return s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE id = $1 AND merchant_status IS NOT DISTINCT FROM NULLIF($2, '')`, acc.ID, want)
	}
	changes := func() int {
		return s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'bnpl.merchant_status_changed.v1' AND payload->>'agreementId' = $1`, acc.ID)
	}
	audits := func(actor string) int {
		return s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'BnplMerchantStatusChanged' AND target_id = $1 AND actor = $2`, acc.ID, actor)
	}
	require.Equal(t, 1, status(""), "no word from the merchant yet")

	// Another merchant naming this agreement: unmatched, not signalled, nothing changes.
	foreign := merchantCallbackBody("ms-foreign", otherID, acc.ID, "order-ms", "CANCELLED")
	require.Equal(t, "unmatched", send(foreign, "ms-n0").Status)

	// DELIVERED while the settlement is held: the running saga applies it.
	delivered := merchantCallbackBody("ms-1", s.merchantID, acc.ID, "order-ms", "DELIVERED")
	got := send(delivered, "ms-n1")
	require.Equal(t, "recorded", got.Status)
	require.True(t, got.Signalled, "the activation saga still runs")
	require.Eventually(t, func() bool { return status("DELIVERED") == 1 }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE id = $1 AND status = 'ACCEPTED' AND merchant_callback_id = $2`,
		acc.ID, got.ID), "applied while the agreement is ACCEPTED, from this callback")
	require.Equal(t, 1, changes())
	require.Equal(t, 1, audits("system:bnpl-activate"))
	// The partner's retry: a duplicate, signalled again, and nothing changes.
	dup := send(delivered, "ms-n2")
	require.Equal(t, "duplicate", dup.Status)
	require.Equal(t, got.ID, dup.ID)

	before := s.waitAgreement(t, acc.ID, "ACTIVE")
	require.Equal(t, 1, status("DELIVERED"))
	require.Equal(t, 1, changes(), "the retry and the foreign callback changed nothing")

	// After the saga: the receipt applies it.
	refunded := merchantCallbackBody("ms-2", s.merchantID, acc.ID, "order-ms", "REFUNDED")
	got2 := send(refunded, "ms-n3")
	require.Equal(t, "recorded", got2.Status)
	require.False(t, got2.Signalled, "the saga has closed")
	require.Equal(t, 1, status("REFUNDED"))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE id = $1 AND merchant_callback_id = $2`, acc.ID, got2.ID))
	require.Equal(t, 2, changes())
	require.Equal(t, 1, audits("partner:sandbox"))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'bnpl.merchant_status_changed.v1' AND payload->>'agreementId' = $1
		AND payload->>'merchantStatus' = 'REFUNDED' AND payload->>'previousMerchantStatus' = 'DELIVERED'`, acc.ID))
	require.Equal(t, "duplicate", send(refunded, "ms-n4").Status)
	require.Equal(t, "unmatched", send(merchantCallbackBody("ms-foreign-2", otherID, acc.ID, "order-ms", "DELIVERED"), "ms-n5").Status)
	require.Equal(t, 1, status("REFUNDED"))
	require.Equal(t, 2, changes())

	after := s.waitAgreement(t, acc.ID, "ACTIVE")
	require.Equal(t, before.OutstandingSantim, after.OutstandingSantim)
	require.Equal(t, before.Instalments, after.Instalments)
}

// TestBnplMerchantStatusFollowsTheEventsOrder: the merchant's word is the event that happened
// last, not the callback that arrived last. A REFUNDED that happened at 11:00 is applied; a
// DELIVERED that happened at 10:00 (its first delivery lost, retried after) is recorded but
// changes nothing — before, it set the order DELIVERED again and collection resumed on a
// refunded order. A CANCELLED at 12:00 is applied; a callback that does not say when it happened
// falls back to the order of receipt. An occurredAt after the callback's own signature is 400
// INVALID_PAYLOAD, nothing stored.
func TestBnplMerchantStatusFollowsTheEventsOrder(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeAgreement(t, 120_000, 3, "order-order")
	partner := newAPIClient(t, s.srv)
	body := func(event, kind, at string) []byte {
		fields := map[string]any{"eventId": event, "merchantId": s.merchantID, "agreementId": a.ID,
			"merchantReference": "order-order", "kind": kind}
		if at != "" {
			fields["occurredAt"] = at
		}
		b, err := json.Marshal(fields)
		require.NoError(t, err)
		return b
	}
	send := func(b []byte) *httptest.ResponseRecorder {
		return partner.call(http.MethodPost, merchantCallbackPath, b, signedHeaders(b, testkit.Unique("n"))...)
	}
	status := func() string {
		rec := s.owner.call(http.MethodGet, "/api/bnpl/agreements/"+a.ID, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		got := decode[bnplAgreementJSON](t, rec)
		if got.MerchantStatus == nil {
			return ""
		}
		return *got.MerchantStatus
	}
	changes := func() int {
		return s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'bnpl.merchant_status_changed.v1' AND payload->>'agreementId' = $1`, a.ID)
	}
	recorded := func() int {
		return s.count(t, `SELECT count(*) FROM app.bnpl_merchant_callbacks WHERE agreement_id = $1 AND outcome = 'RECORDED'`, a.ID)
	}

	require.Equal(t, http.StatusOK, send(body("oo-2", "REFUNDED", "2026-12-02T11:00:00Z")).Code)
	require.Equal(t, "REFUNDED", status())
	rec := send(body("oo-1", "DELIVERED", "2026-12-02T10:00:00+00:00"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "recorded", decode[merchantCallbackJSON](t, rec).Status)
	require.Equal(t, "REFUNDED", status(), "an earlier event arriving late does not undo a later one")
	require.Equal(t, 1, changes())

	require.Equal(t, http.StatusOK, send(body("oo-3", "CANCELLED", "2026-12-02T13:00:00+01:00")).Code)
	require.Equal(t, "CANCELLED", status(), "12:00 UTC is after 11:00")
	require.Equal(t, http.StatusOK, send(body("oo-4", "DELIVERED", "")).Code)
	require.Equal(t, "DELIVERED", status(), "without occurredAt, the order of receipt")
	require.Equal(t, 3, changes())

	n := recorded()
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	requireStatus(t, send(body("oo-5", "REFUNDED", future)), http.StatusBadRequest, "INVALID_PAYLOAD")
	require.Equal(t, n, recorded(), "nothing stored")
	require.Equal(t, "DELIVERED", status())
}
