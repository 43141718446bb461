package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/db"
	"github.com/wagerail/wagerail/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var sandboxSecret = []byte("sandbox-test-secret")

type webhookFixture struct {
	srv *Server
	d   *testkit.DB
	now time.Time
}

func newWebhookFixture(t *testing.T) *webhookFixture {
	f := &webhookFixture{d: testkit.NewDB(t), now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	f.srv = New(Deps{
		Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:             f.d.App,
		Registry:       prometheus.NewRegistry(),
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret},
		Now:            func() time.Time { return f.now },
	})
	return f
}

func callbackBody(eventID, tenant string, amount int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"eventId": eventID, "tenant_id": tenant, "domain": "EWA", "reference": "ref-" + eventID,
		"transferId": "tr-" + eventID, "status": "SETTLED", "amountSantim": amount, "occurredAt": "2026-11-21T12:00:00Z",
	})
	return b
}

func (f *webhookFixture) post(t *testing.T, partner string, body []byte, ts time.Time, nonce string, secret []byte) *httptest.ResponseRecorder {
	t.Helper()
	tsStr := strconv.FormatInt(ts.Unix(), 10)
	req := httptest.NewRequest(http.MethodPost, "/api/integration/bank-callback/"+partner, bytes.NewReader(body))
	req.Header.Set("x-svc-timestamp", tsStr)
	req.Header.Set("x-svc-nonce", nonce)
	req.Header.Set("x-svc-signature", SignWebhook(secret, tsStr, nonce, body))
	rec := httptest.NewRecorder()
	f.srv.Engine.ServeHTTP(rec, req)
	return rec
}

func (f *webhookFixture) stored(t *testing.T, tenant string) (events, audits int) {
	t.Helper()
	require.NoError(t, db.InTenantTx(context.Background(), f.d.App, tenant, func(tx pgx.Tx) error {
		require.NoError(t, tx.QueryRow(context.Background(), `SELECT count(*) FROM app.bank_webhook_events`).Scan(&events))
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.audit_log WHERE action = 'BankWebhookApplied' AND actor = 'partner:sandbox'`).Scan(&audits)
	}))
	return events, audits
}

func (f *webhookFixture) count(result string) float64 {
	return testutil.ToFloat64(f.srv.webhooks.requests.WithLabelValues(result))
}

func TestBankCallbackAcceptedOnceAndRetriesAreAcknowledged(t *testing.T) {
	f := newWebhookFixture(t)
	body := callbackBody("ev-1", "tenant-a", 150_000)
	rec := f.post(t, "sandbox", body, f.now, "nonce-1", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"status":"accepted"`)

	// The partner retries the same delivery (same or fresh nonce): acknowledged, nothing new.
	rec = f.post(t, "sandbox", body, f.now, "nonce-1", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `"status":"duplicate"`)
	rec = f.post(t, "sandbox", body, f.now.Add(time.Minute), "nonce-2", sandboxSecret)
	require.Contains(t, rec.Body.String(), `"status":"duplicate"`)

	events, audits := f.stored(t, "tenant-a")
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)
	// Stored verbatim for replay, and invisible to another tenant.
	var raw []byte
	require.NoError(t, db.InTenantTx(context.Background(), f.d.App, "tenant-a", func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT raw_body FROM app.bank_webhook_events`).Scan(&raw)
	}))
	require.Equal(t, body, raw)
	events, _ = f.stored(t, "tenant-b")
	require.Zero(t, events)
	require.Equal(t, 1.0, f.count(resultAccepted))
	require.Equal(t, 2.0, f.count(resultDuplicate))
}

func TestBankCallbackRejectsAndChangesNothing(t *testing.T) {
	f := newWebhookFixture(t)
	good := callbackBody("ev-2", "tenant-a", 100)
	cases := []struct {
		name    string
		partner string
		body    []byte
		ts      time.Time
		secret  []byte
		tamper  func(*http.Request)
		status  int
		code    string
		result  string
	}{
		{"wrong secret", "sandbox", good, f.now, []byte("not-the-secret"), nil, 401, "SIGNATURE_INVALID", resultSignatureRejected},
		{"unknown partner", "otherbank", good, f.now, sandboxSecret, nil, 401, "SIGNATURE_INVALID", resultSignatureRejected},
		{"stale timestamp", "sandbox", good, f.now.Add(-6 * time.Minute), sandboxSecret, nil, 401, "SIGNATURE_STALE", resultSignatureRejected},
		{"future timestamp", "sandbox", good, f.now.Add(6 * time.Minute), sandboxSecret, nil, 401, "SIGNATURE_STALE", resultSignatureRejected},
		{"body changed after signing", "sandbox", good, f.now, sandboxSecret, func(r *http.Request) {
			r.Body = io.NopCloser(bytes.NewReader(callbackBody("ev-2", "tenant-a", 999_999)))
		}, 401, "SIGNATURE_INVALID", resultSignatureRejected},
		{"missing signature", "sandbox", good, f.now, sandboxSecret, func(r *http.Request) { r.Header.Del("x-svc-signature") }, 401, "SIGNATURE_INVALID", resultSignatureRejected},
		{"not hex", "sandbox", good, f.now, sandboxSecret, func(r *http.Request) { r.Header.Set("x-svc-signature", "zz") }, 401, "SIGNATURE_INVALID", resultSignatureRejected},
		{"not json", "sandbox", []byte("hello"), f.now, sandboxSecret, nil, 400, "INVALID_PAYLOAD", resultInvalid},
		{"missing tenant", "sandbox", []byte(`{"eventId":"e","domain":"EWA","reference":"r","status":"SETTLED","amountSantim":1}`), f.now, sandboxSecret, nil, 400, "INVALID_PAYLOAD", resultInvalid},
		{"bad status", "sandbox", []byte(`{"eventId":"e","tenant_id":"tenant-a","domain":"EWA","reference":"r","status":"MAYBE","amountSantim":1}`), f.now, sandboxSecret, nil, 400, "INVALID_PAYLOAD", resultInvalid},
		{"fractional amount", "sandbox", []byte(`{"eventId":"e","tenant_id":"tenant-a","domain":"EWA","reference":"r","status":"SETTLED","amountSantim":1.5}`), f.now, sandboxSecret, nil, 400, "INVALID_PAYLOAD", resultInvalid},
		{"zero amount", "sandbox", []byte(`{"eventId":"e","tenant_id":"tenant-a","domain":"EWA","reference":"r","status":"SETTLED","amountSantim":0}`), f.now, sandboxSecret, nil, 400, "INVALID_PAYLOAD", resultInvalid},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.count(tc.result)
			tsStr := strconv.FormatInt(tc.ts.Unix(), 10)
			nonce := "n-" + strconv.Itoa(i)
			req := httptest.NewRequest(http.MethodPost, "/api/integration/bank-callback/"+tc.partner, bytes.NewReader(tc.body))
			req.Header.Set("x-svc-timestamp", tsStr)
			req.Header.Set("x-svc-nonce", nonce)
			req.Header.Set("x-svc-signature", SignWebhook(tc.secret, tsStr, nonce, tc.body))
			if tc.tamper != nil {
				tc.tamper(req)
			}
			rec := httptest.NewRecorder()
			f.srv.Engine.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			var b errBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
			require.Equal(t, tc.code, b.Error.Code)
			require.Equal(t, before+1, f.count(tc.result))
		})
	}
	events, audits := f.stored(t, "tenant-a")
	require.Zero(t, events, "a rejected callback was stored")
	require.Zero(t, audits)
}

func TestBankCallbackRefusesAReplayedNonce(t *testing.T) {
	f := newWebhookFixture(t)
	rec := f.post(t, "sandbox", callbackBody("ev-3", "tenant-a", 10), f.now, "nonce-x", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code)
	rec = f.post(t, "sandbox", callbackBody("ev-4", "tenant-a", 10), f.now, "nonce-x", sandboxSecret)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "REPLAYED_NONCE")
	events, audits := f.stored(t, "tenant-a")
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)
}

func TestVerifyWebhookSignature(t *testing.T) {
	sig := SignWebhook(sandboxSecret, "1", "n", []byte("b"))
	require.True(t, VerifyWebhookSignature(sandboxSecret, "1", "n", []byte("b"), sig))
	require.False(t, VerifyWebhookSignature(sandboxSecret, "1", "n", []byte("c"), sig))
	require.False(t, VerifyWebhookSignature([]byte("x"), "1", "n", []byte("b"), sig))
	require.False(t, VerifyWebhookSignature(sandboxSecret, "1", "n", []byte("b"), sig[:10]))
}
