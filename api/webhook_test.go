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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/crosstenant"
	"github.com/wagerail/wagerail/internal/db"
	"github.com/wagerail/wagerail/internal/tenancy"
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
		Platform:       f.d.Platform(t),
		Registry:       prometheus.NewRegistry(),
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret},
		Now:            func() time.Time { return f.now },
	})
	return f
}

// sent records, as the gateway does before it calls the partner, the transfer a callback for
// eventID refers to (reference ref-<eventID>).
func (f *webhookFixture) sent(t *testing.T, eventID, tenant string, amount int64) {
	t.Helper()
	require.NoError(t, gateway.NewStore(f.d.App).RecordTransfers(context.Background(), tenant, []gateway.TransferRecord{{
		Partner: "sandbox", Reference: "ref-" + eventID, TenantID: tenant, Domain: "EWA", AmountSantim: amount,
		Currency: "ETB", FromAccount: "employer-1", ToAccount: "employee-1",
	}}))
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

// stored counts what tenant can see: its callbacks, and its BankWebhookApplied audit rows.
func (f *webhookFixture) stored(t *testing.T, tenant string) (events, audits int) {
	t.Helper()
	require.NoError(t, db.InTenantTx(context.Background(), f.d.App, tenant, func(tx pgx.Tx) error {
		require.NoError(t, tx.QueryRow(context.Background(), `SELECT count(*) FROM app.bank_webhook_events`).Scan(&events))
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.audit_log WHERE action = 'BankWebhookApplied' AND actor = 'partner:sandbox'`).Scan(&audits)
	}))
	return events, audits
}

// platformView is what a platform admin sees: every stored callback's outcome and tenant, and
// every audit row about callbacks, as "tenant action outcome".
func (f *webhookFixture) platformView(t *testing.T) (events []string, audits []string) {
	t.Helper()
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(t, crosstenant.Tx(ctx, f.d.Platform(t), "test inspection", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_id || ' ' || outcome || ' ' || coalesce(tenant_id, '-') FROM app.bank_webhook_events ORDER BY id`)
		if err != nil {
			return err
		}
		if events, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT tenant_id || ' ' || action || ' ' || outcome FROM app.audit_log
			WHERE action LIKE 'BankWebhook%' ORDER BY id`)
		if err != nil {
			return err
		}
		audits, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return events, audits
}

func (f *webhookFixture) count(result string) float64 {
	return testutil.ToFloat64(f.srv.webhooks.requests.WithLabelValues(result))
}

func TestBankCallbackAcceptedOnceAndRetriesAreAcknowledged(t *testing.T) {
	f := newWebhookFixture(t)
	f.sent(t, "ev-1", "tenant-a", 150_000)
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
	_, audits2 := f.platformView(t)
	require.Equal(t, []string{"tenant-a BankWebhookReceived SUCCESS", "tenant-a BankWebhookApplied SUCCESS"}, audits2)
}

// The same event id with another body is not a retry: 409, and what we hold is unchanged.
func TestBankCallbackEventIDReusedWithAnotherBodyIsAConflict(t *testing.T) {
	f := newWebhookFixture(t)
	f.sent(t, "ev-9", "tenant-a", 500)
	rec := f.post(t, "sandbox", callbackBody("ev-9", "tenant-a", 500), f.now, "nonce-9a", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	other := callbackBody("ev-9", "tenant-a", 500)
	other = bytes.Replace(other, []byte(`"SETTLED"`), []byte(`"FAILED"`), 1)
	rec = f.post(t, "sandbox", other, f.now, "nonce-9b", sandboxSecret)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	var b errBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
	require.Equal(t, "WEBHOOK_EVENT_CONFLICT", b.Error.Code)
	require.Equal(t, 1.0, f.count(resultConflict))

	events, audits := f.platformView(t)
	require.Equal(t, []string{"ev-9 APPLIED tenant-a"}, events)
	require.Len(t, audits, 2, "the refused body is neither stored nor audited")
	// Its nonce was not consumed either: the refusal wrote nothing.
	rec = f.post(t, "sandbox", callbackBody("ev-10", "tenant-a", 7), f.now, "nonce-9b", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// The tenant comes from the transfer the callback references, never from the body. A callback
// that matches no transfer of ours, or contradicts the one it names, is kept as UNMATCHED with no
// tenant and acknowledged; no tenant sees it or an Applied audit row.
func TestBankCallbackTenantComesFromTheTransfer(t *testing.T) {
	f := newWebhookFixture(t)
	f.sent(t, "ev-a", "tenant-a", 1_000)
	f.sent(t, "ev-b", "tenant-a", 1_000)
	f.sent(t, "ev-c", "tenant-a", 1_000)

	cases := []struct {
		eventID string
		body    []byte
		status  string
	}{
		{"ev-a", callbackBody("ev-a", "tenant-a", 1_000), "accepted"},
		// The body claims tenant-b for tenant-a's transfer.
		{"ev-b", callbackBody("ev-b", "tenant-b", 1_000), "unmatched"},
		// The amount differs from what we sent.
		{"ev-c", callbackBody("ev-c", "tenant-a", 9_999), "unmatched"},
		// No transfer of ours has this reference.
		{"ev-x", callbackBody("ev-x", "tenant-b", 1_000), "unmatched"},
	}
	for i, tc := range cases {
		rec := f.post(t, "sandbox", tc.body, f.now, "nonce-t"+strconv.Itoa(i), sandboxSecret)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"status":"`+tc.status+`"`, tc.eventID)
	}
	require.Equal(t, 3.0, f.count(resultUnmatched))

	events, audits := f.stored(t, "tenant-a")
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)
	events, audits = f.stored(t, "tenant-b")
	require.Zero(t, events, "the body's tenant_id is not trusted")
	require.Zero(t, audits)

	all, trail := f.platformView(t)
	require.Equal(t, []string{"ev-a APPLIED tenant-a", "ev-b UNMATCHED -", "ev-c UNMATCHED -", "ev-x UNMATCHED -"}, all)
	require.Equal(t, []string{
		"tenant-a BankWebhookReceived SUCCESS", "tenant-a BankWebhookApplied SUCCESS",
		"* BankWebhookReceived FAILED", "* BankWebhookReceived FAILED", "* BankWebhookReceived FAILED",
	}, trail)

	// A retry of an unmatched callback is acknowledged as a duplicate, still with no effect.
	rec := f.post(t, "sandbox", cases[3].body, f.now, "nonce-t9", sandboxSecret)
	require.Contains(t, rec.Body.String(), `"status":"duplicate"`)
}

// A nonce is remembered for the signature window plus skew (and a margin), then pruned.
func TestBankCallbackNoncesArePrunedAfterTheWindow(t *testing.T) {
	f := newWebhookFixture(t)
	f.sent(t, "ev-n1", "tenant-a", 10)
	f.sent(t, "ev-n2", "tenant-a", 10)
	f.sent(t, "ev-n3", "tenant-a", 10)
	require.Equal(t, http.StatusOK, f.post(t, "sandbox", callbackBody("ev-n1", "tenant-a", 10), f.now, "nonce-n", sandboxSecret).Code)

	// Within the window plus skew (10 minutes), the nonce is still refused.
	f.now = f.now.Add(10 * time.Minute)
	rec := f.post(t, "sandbox", callbackBody("ev-n2", "tenant-a", 10), f.now, "nonce-n", sandboxSecret)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())

	// After the retention, the next callback prunes it; a stale signature is still refused by
	// its timestamp, so nothing can be replayed.
	f.now = f.now.Add(bankwebhook.NonceRetention)
	require.Equal(t, http.StatusOK, f.post(t, "sandbox", callbackBody("ev-n3", "tenant-a", 10), f.now, "nonce-other", sandboxSecret).Code)
	var left int
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(t, crosstenant.Tx(ctx, f.d.Platform(t), "test inspection", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.bank_webhook_nonces WHERE nonce = 'nonce-n'`).Scan(&left)
	}))
	require.Zero(t, left)
}

// Without the platform role the callback cannot learn whose transfer it is: 503, nothing stored.
func TestBankCallbackWithoutPlatformPoolIs503(t *testing.T) {
	d := testkit.NewDB(t)
	srv := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: d.App, Registry: prometheus.NewRegistry(),
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret}})
	body := callbackBody("ev-1", "tenant-a", 10)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req := httptest.NewRequest(http.MethodPost, "/api/integration/bank-callback/sandbox", bytes.NewReader(body))
	req.Header.Set("x-svc-timestamp", ts)
	req.Header.Set("x-svc-nonce", "n1")
	req.Header.Set("x-svc-signature", SignWebhook(sandboxSecret, ts, "n1", body))
	rec := httptest.NewRecorder()
	srv.Engine.ServeHTTP(rec, req)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "NOT_CONFIGURED")
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
	f.sent(t, "ev-3", "tenant-a", 10)
	f.sent(t, "ev-4", "tenant-a", 10)
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

// Racing deliveries of one event (the partner retrying before our first answer) store it once;
// every answer is a 200, one accepted and the rest duplicates, whether the nonces differ or not.
func TestBankCallbackRacingDuplicatesStoreOnce(t *testing.T) {
	f := newWebhookFixture(t)
	f.sent(t, "ev-race", "tenant-a", 42)
	body := callbackBody("ev-race", "tenant-a", 42)
	const n = 24
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			nonce := "nonce-race" // half reuse one nonce, half bring their own
			if i%2 == 1 {
				nonce += strconv.Itoa(i)
			}
			rec := f.post(t, "sandbox", body, f.now, nonce, sandboxSecret)
			codes[i] = strconv.Itoa(rec.Code) + " " + rec.Body.String()
		})
	}
	wg.Wait()
	accepted := 0
	for _, c := range codes {
		require.True(t, strings.HasPrefix(c, "200 "), c)
		if strings.Contains(c, `"status":"accepted"`) {
			accepted++
		} else {
			require.Contains(t, c, `"status":"duplicate"`)
		}
	}
	require.Equal(t, 1, accepted)
	events, audits := f.stored(t, "tenant-a")
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)
}
