package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const merchantCallbackPath = "/api/integration/merchant-callback/sandbox"

func merchantCallbackBody(eventID, merchantID, agreementID, ref, kind string) []byte {
	b, _ := json.Marshal(map[string]any{"eventId": eventID, "merchantId": merchantID, "agreementId": agreementID,
		"merchantReference": ref, "kind": kind, "occurredAt": "2026-12-02T10:00:00Z"})
	return b
}

// signedHeaders signs body as the sandbox partner does, now, with nonce.
func signedHeaders(body []byte, nonce string) []string {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	return []string{callbacksig.HeaderTimestamp, ts, callbacksig.HeaderNonce, nonce,
		callbacksig.HeaderSignature, callbacksig.Sign([]byte(stackCallbackSecret), ts, nonce, body)}
}

// merchantCallbackRows counts the stored merchant callbacks of every tenant (and none) by outcome.
func (s *bnplStack) merchantCallbackRows(t *testing.T) (recorded, unmatched int) {
	t.Helper()
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test inspection", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE outcome = 'RECORDED'), count(*) FILTER (WHERE outcome = 'UNMATCHED')
			FROM app.bnpl_merchant_callbacks`).Scan(&recorded, &unmatched)
	}))
	return recorded, unmatched
}

type merchantCallbackJSON struct {
	Status    string `json:"status"`
	EventID   string `json:"eventId"`
	ID        int64  `json:"id"`
	Signalled bool   `json:"signalled"`
}

// TestBnplMerchantCallback: over HTTP with the real stack (Postgres, Temporal, the sandbox): a
// signed callback about the merchant's ACTIVE agreement is stored once and recorded for the
// business (audit row, bnpl.merchant_callback_received.v1) and the agreement is unchanged; a
// missing or bad signature is 401 with nothing stored; the partner's retry is a duplicate with no
// second record; the same nonce with another event is 409 and the same event with another body
// 409, both writing nothing; a callback naming another merchant, or another order reference, is
// unmatched and changes nothing for the business; malformed, oversized and control-character
// bodies are 4xx with nothing stored.
func TestBnplMerchantCallback(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-cb"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[bnplActivateJSON](t, rec)
	before := s.waitAgreement(t, acc.ID, "ACTIVE")

	// A second merchant, also settling at the sandbox.
	other, res := s.signUpPartner("owner@other-shop.test", "MERCHANT")
	otherID := res.Organization.ID
	otherSettle := testkit.Unique("msettle2")
	s.bank.Account(t, otherSettle, "Other Settlement", 0)
	rec = other.call(http.MethodPut, "/api/bnpl/merchant", map[string]any{
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": otherSettle}, "discountBasisPoints": 0})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	partner := newAPIClient(t, s.srv)
	recorded := func() int {
		return s.count(t, `SELECT count(*) FROM app.bnpl_merchant_callbacks WHERE agreement_id = $1`, acc.ID)
	}
	events := func() int {
		return s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'bnpl.merchant_callback_received.v1'`)
	}
	audits := func() int {
		return s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'BnplMerchantCallbackReceived' AND actor = 'partner:sandbox'`)
	}

	// Bad or missing signatures: 401, nothing stored.
	body := merchantCallbackBody("mcb-1", s.merchantID, acc.ID, "order-cb", "DELIVERED")
	rec = partner.call(http.MethodPost, merchantCallbackPath, body, callbacksig.HeaderTimestamp, "1", callbacksig.HeaderNonce, "n",
		callbacksig.HeaderSignature, strings.Repeat("0", 64))
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	require.Equal(t, "SIGNATURE_INVALID", errCode(rec))
	rec = partner.hostile(http.MethodPost, merchantCallbackPath, body)
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	rec = partner.call(http.MethodPost, merchantCallbackPath, body, callbacksig.HeaderTimestamp, ts, callbacksig.HeaderNonce, "n-wrong",
		callbacksig.HeaderSignature, callbacksig.Sign([]byte("not-the-secret"), ts, "n-wrong", body))
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	rec = newAPIClient(t, s.srv).call(http.MethodPost, "/api/integration/merchant-callback/nobody", body, signedHeaders(body, "n-nobody")...)
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	r0, u0 := s.merchantCallbackRows(t)
	require.Zero(t, r0+u0, "a refused callback stores nothing")

	// The valid callback: stored and recorded once.
	rec = partner.call(http.MethodPost, merchantCallbackPath, body, signedHeaders(body, "n-1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[merchantCallbackJSON](t, rec)
	require.Equal(t, "recorded", got.Status)
	require.Equal(t, "mcb-1", got.EventID)
	require.Equal(t, 1, recorded())
	require.Equal(t, 1, events())
	require.Equal(t, 1, audits())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_merchant_callbacks WHERE id = $1 AND kind = 'DELIVERED'
		AND merchant_id = $2 AND raw_body = $3`, got.ID, s.merchantID, body))

	// The partner's retry (same body, new nonce): a duplicate, no second record.
	rec = partner.call(http.MethodPost, merchantCallbackPath, body, signedHeaders(body, "n-2")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	dup := decode[merchantCallbackJSON](t, rec)
	require.Equal(t, "duplicate", dup.Status)
	require.Equal(t, got.ID, dup.ID)
	// The identical request again (same nonce too): the same answer.
	rec = partner.call(http.MethodPost, merchantCallbackPath, body, signedHeaders(body, "n-1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "duplicate", decode[merchantCallbackJSON](t, rec).Status)
	// A used nonce with another event: a replay, refused, nothing written.
	refund := merchantCallbackBody("mcb-2", s.merchantID, acc.ID, "order-cb", "REFUNDED")
	rec = partner.call(http.MethodPost, merchantCallbackPath, refund, signedHeaders(refund, "n-1")...)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "REPLAYED_NONCE", errCode(rec))
	// The same event id with another body: refused, nothing written.
	rec = partner.call(http.MethodPost, merchantCallbackPath, merchantCallbackBody("mcb-1", s.merchantID, acc.ID, "order-cb", "CANCELLED"),
		signedHeaders(merchantCallbackBody("mcb-1", s.merchantID, acc.ID, "order-cb", "CANCELLED"), "n-3")...)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "WEBHOOK_EVENT_CONFLICT", errCode(rec))
	require.Equal(t, 1, recorded())
	require.Equal(t, 1, events())
	require.Equal(t, 1, audits())

	// Another merchant naming this merchant's agreement, or the right merchant with another
	// order reference, or an unknown agreement: unmatched, nothing changes for the business.
	for i, b := range [][]byte{
		merchantCallbackBody("mcb-other-1", otherID, acc.ID, "order-cb", "REFUNDED"),
		merchantCallbackBody("mcb-other-2", s.merchantID, acc.ID, "order-elsewhere", "CANCELLED"),
		merchantCallbackBody("mcb-other-3", otherID, "bnpl_00000000000000000000000000000000", "order-cb", "REFUNDED"),
	} {
		rec = partner.call(http.MethodPost, merchantCallbackPath, b, signedHeaders(b, fmt.Sprintf("n-other-%d", i))...)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		u := decode[merchantCallbackJSON](t, rec)
		require.Equal(t, "unmatched", u.Status, string(b))
		require.False(t, u.Signalled)
		// Its retry is still unmatched.
		rec = partner.call(http.MethodPost, merchantCallbackPath, b, signedHeaders(b, fmt.Sprintf("n-other-r-%d", i))...)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, "unmatched", decode[merchantCallbackJSON](t, rec).Status)
	}
	require.Equal(t, 1, recorded())
	require.Equal(t, 1, events())
	require.Equal(t, 1, audits())
	rN, uN := s.merchantCallbackRows(t)
	require.Equal(t, 1, rN)
	require.Equal(t, 3, uN, "unmatched callbacks are kept, without a tenant")
	after := s.waitAgreement(t, acc.ID, "ACTIVE")
	require.Equal(t, before.OutstandingSantim, after.OutstandingSantim)
	require.Equal(t, before.Instalments, after.Instalments)

	// Malformed, oversized and control-character bodies, correctly signed: 4xx, nothing stored.
	for name, b := range map[string][]byte{
		"not json":      []byte(`{"eventId":`),
		"array":         []byte(`[]`),
		"trailing":      append(merchantCallbackBody("mcb-x1", s.merchantID, acc.ID, "order-cb", "DELIVERED"), []byte(`{}`)...),
		"nul":           []byte(`{"eventId":"mcb-x2\u0000","merchantId":"` + s.merchantID + `","agreementId":"` + acc.ID + `","merchantReference":"order-cb","kind":"DELIVERED"}`),
		"bidi":          []byte(`{"eventId":"mcb-x3\u202e","merchantId":"` + s.merchantID + `","agreementId":"` + acc.ID + `","merchantReference":"order-cb","kind":"DELIVERED"}`),
		"kind":          merchantCallbackBody("mcb-x4", s.merchantID, acc.ID, "order-cb", "delivered"),
		"reference":     merchantCallbackBody("mcb-x5", s.merchantID, acc.ID, "order cb", "DELIVERED"),
		"missing":       []byte(`{"eventId":"mcb-x6","kind":"DELIVERED"}`),
		"unknown field": []byte(`{"eventId":"mcb-x7","merchantId":"m","agreementId":"a","merchantReference":"r","kind":"DELIVERED","amount":1}`),
		"number":        []byte(`{"eventId":7,"merchantId":"m","agreementId":"a","merchantReference":"r","kind":"DELIVERED"}`),
		"duplicate key": []byte(`{"eventId":"a","eventId":"b","merchantId":"m","agreementId":"a","merchantReference":"r","kind":"DELIVERED"}`),
		"case":          []byte(`{"EventId":"a","merchantId":"m","agreementId":"a","merchantReference":"r","kind":"DELIVERED"}`),
		"bad utf8":      []byte("{\"eventId\":\"\xff\",\"merchantId\":\"m\",\"agreementId\":\"a\",\"merchantReference\":\"r\",\"kind\":\"DELIVERED\"}"),
		"oversized":     []byte(`{"eventId":"` + strings.Repeat("e", 2<<20) + `"}`),
	} {
		rec = partner.hostile(http.MethodPost, merchantCallbackPath, b, signedHeaders(b, "n-bad-"+strings.ReplaceAll(name, " ", "-"))...)
		require.True(t, rec.Code >= 400 && rec.Code < 500, "%s: %d %s", name, rec.Code, rec.Body.String())
	}
	rec = partner.hostile(http.MethodPost, merchantCallbackPath, body, append(signedHeaders(body, "n-ct"), "Content-Type", "text/plain")...)
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, rec.Body.String())
	rF, uF := s.merchantCallbackRows(t)
	require.Equal(t, [2]int{1, 3}, [2]int{rF, uF}, "no refused body is stored")
}

// FuzzMerchantCallback: any signed body, partner and nonce → 4xx or success, never 5xx.
func FuzzMerchantCallback(f *testing.F) {
	s := newBnplStack(f)
	ok := string(merchantCallbackBody("fz-1", s.merchantID, "bnpl_00000000000000000000000000000000", "order-1", "DELIVERED"))
	f.Add("sandbox", "fz-n1", ok, true)
	f.Add("sandbox", "fz-n1", ok, true)
	f.Add("sandbox", "fz-n2", ok, false)
	f.Add("nobody", "fz-n3", ok, true)
	f.Add("sandbox", "fz-n4", `{}`, true)
	f.Add("sandbox", "fz-n5", `{"eventId":"x","merchantId":"\u0000","agreementId":"a","merchantReference":"r","kind":"DELIVERED"}`, true)
	f.Add("sandbox", "fz-n6", `{"eventId":"x","merchantId":"m","agreementId":"a","merchantReference":"r","kind":"REFUNDED","occurredAt":"yesterday"}`, true)
	f.Add("sandbox", "fz-n7", `{"eventId":"`+strings.Repeat("x", 300)+`","merchantId":"m","agreementId":"a","merchantReference":"r","kind":"CANCELLED"}`, true)
	f.Add("sandbox", "fz n8", `[1,2,3]`, true)
	f.Add("sandbox", "", `null`, true)
	f.Add("%00", "fz-n9", "\xff\xfe", true)
	f.Add("sandbox", "fz-n10", `{"eventId":"y","merchantId":"`+s.merchantID+`","agreementId":"a","merchantReference":"r","kind":"DELIVERED"} x`, true)
	f.Fuzz(func(t *testing.T, partner, nonce, body string, sign bool) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.URL.Path = "/api/integration/merchant-callback/" + partner
		req.Header.Set("Content-Type", "application/json")
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Header.Set(callbacksig.HeaderTimestamp, ts)
		req.Header.Set(callbacksig.HeaderNonce, nonce)
		if sign {
			req.Header.Set(callbacksig.HeaderSignature, callbacksig.Sign([]byte(stackCallbackSecret), ts, nonce, []byte(body)))
		}
		req.RemoteAddr = "192.0.2.85:40000"
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%q %q %q", partner, nonce, body))
	})
}
