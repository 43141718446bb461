package api

import (
	"net/http"
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

	other, res := s.signUp("owner@other-ms.test", "MERCHANT")
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
