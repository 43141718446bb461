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
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var sandboxSecret = []byte("sandbox-test-secret")

type webhookFixture struct {
	srv  *Server
	d    *testkit.DB
	now  time.Time
	saga *sagaHarness // the sagas callbacks are delivered to (nil in the hardening fixture)
	run  string       // prefixes references: tests share the Temporal server
}

func newWebhookFixture(t *testing.T) *webhookFixture {
	f := &webhookFixture{d: testkit.NewDB(t), now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), saga: newSagaHarness(t), run: testkit.Unique("cb")}
	f.srv = f.server(t, f.saga.tc)
	return f
}

// server is an API on f's database whose Temporal client is temporal.
func (f *webhookFixture) server(t *testing.T, temporal client.Client) *Server {
	srv := New(Deps{
		Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:             f.d.App,
		Platform:       f.d.Platform(t),
		Registry:       prometheus.NewRegistry(),
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret},
		Now:            func() time.Time { return f.now },
		Temporal:       temporal,
	})
	return srv
}

// ref is the reference of the transfer a callback for eventID refers to.
func (f *webhookFixture) ref(eventID string) string { return f.run + "-ref-" + eventID }

// sent records, as the gateway does before it calls the partner, the transfer a callback for
// eventID refers to, and starts its saga (a recorder with the reference as its workflow id).
func (f *webhookFixture) sent(t *testing.T, eventID, tenant string, amount int64) {
	t.Helper()
	f.sentOnly(t, eventID, tenant, amount)
	f.saga.start(t, f.ref(eventID), false)
}

// sentOnly records the transfer without starting a saga.
func (f *webhookFixture) sentOnly(t *testing.T, eventID, tenant string, amount int64) {
	t.Helper()
	require.NoError(t, gateway.NewStore(f.d.App).RecordTransfers(context.Background(), tenant, []gateway.TransferRecord{{
		Partner: "sandbox", Reference: f.ref(eventID), TenantID: tenant, Domain: "EWA", AmountSantim: amount,
		Currency: "ETB", FromAccount: "employer-1", ToAccount: "employee-1",
	}}))
}

// body is a SETTLED callback for eventID about the transfer f.ref(eventID).
func (f *webhookFixture) body(eventID, tenant string, amount int64) []byte {
	return callbackBodyRef(f.ref(eventID), eventID, "SETTLED", tenant, amount)
}

// seen is what the saga of eventID's transfer has seen.
func (f *webhookFixture) seen(t *testing.T, eventID string) recorderState {
	t.Helper()
	return f.saga.seen(t, f.ref(eventID))
}

func callbackBodyRef(ref, eventID, status, tenant string, amount int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"eventId": eventID, "tenant_id": tenant, "domain": "EWA", "reference": ref,
		"transferId": "tr-" + eventID, "status": status, "amountSantim": amount, "occurredAt": "2026-11-21T12:00:00Z",
	})
	return b
}

func (f *webhookFixture) post(t *testing.T, partner string, body []byte, ts time.Time, nonce string, secret []byte) *httptest.ResponseRecorder {
	t.Helper()
	tsStr := strconv.FormatInt(ts.Unix(), 10)
	// The signature covers the raw bytes, which the contract client sends as they are.
	return newAPIClient(t, f.srv).call(http.MethodPost, "/api/integration/bank-callback/"+partner, body,
		"x-svc-timestamp", tsStr, "x-svc-nonce", nonce, "x-svc-signature", callbacksig.Sign(secret, tsStr, nonce, body))
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

// The gateway's transfer register learns a transfer's end from its callback, as it does from a
// saga's status lookup: SETTLED or FAILED with the partner's id and code, once, never backwards;
// a callback about no transfer of ours records nothing.
func TestBankCallbackRecordsTheSettlementInTheTransferRegister(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	register := func(eventID string) gateway.TransferRecord {
		t.Helper()
		var r gateway.TransferRecord
		require.NoError(t, db.InTenantTx(context.Background(), f.d.App, "tenant-a", func(tx pgx.Tx) error {
			var err error
			r, err = gateway.FindTransfer(context.Background(), tx, "sandbox", f.ref(eventID))
			return err
		}))
		return r
	}
	f.sent(t, "ev-settled", "tenant-a", 150_000)
	f.sent(t, "ev-failed", "tenant-a", 90_000)
	require.Equal(t, gateway.TransferInitiated, register("ev-settled").Status)

	rec := f.post(t, "sandbox", f.body("ev-settled", "tenant-a", 150_000), f.now, "nonce-s", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := register("ev-settled")
	require.Equal(t, gateway.TransferSettled, got.Status)
	require.Equal(t, "tr-ev-settled", got.PartnerTransferID)

	failed, _ := json.Marshal(map[string]any{"eventId": "ev-failed", "tenant_id": "tenant-a", "domain": "EWA", "reference": f.ref("ev-failed"),
		"transferId": "tr-ev-failed", "status": "FAILED", "failureCode": "ACCOUNT_CLOSED", "amountSantim": 90_000, "occurredAt": "2026-11-21T12:00:00Z"})
	rec = f.post(t, "sandbox", failed, f.now, "nonce-f", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = register("ev-failed")
	require.Equal(t, gateway.TransferFailed, got.Status)
	require.Equal(t, "ACCOUNT_CLOSED", got.FailureCode)

	// A later contradicting callback (another event about the settled transfer) does not move a
	// final status: the register only goes forward.
	contra := callbackBodyRef(f.ref("ev-settled"), "ev-settled-2", "FAILED", "tenant-a", 150_000)
	rec = f.post(t, "sandbox", contra, f.now, "nonce-s2", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, gateway.TransferSettled, register("ev-settled").Status)

	// A callback about a reference we never sent: acknowledged, nothing recorded anywhere.
	rec = f.post(t, "sandbox", callbackBodyRef(f.ref("ev-none"), "ev-none", "SETTLED", "tenant-a", 1), f.now, "nonce-n", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, db.InTenantTx(context.Background(), f.d.App, "tenant-a", func(tx pgx.Tx) error {
		_, err := gateway.FindTransfer(context.Background(), tx, "sandbox", f.ref("ev-none"))
		require.ErrorIs(t, err, gateway.ErrTransferNotFound)
		return nil
	}))
}

func TestBankCallbackAcceptedOnceAndRetriesAreAcknowledged(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-1", "tenant-a", 150_000)
	body := f.body("ev-1", "tenant-a", 150_000)
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
	// The saga got the settlement once: the retries were recorded, not signalled.
	st := f.seen(t, "ev-1")
	require.Equal(t, []string{"ev-1"}, st.Seen)
	require.Equal(t, 1, st.Signals)
	require.Equal(t, []string{"RECEIPT APPLIED", "PARTNER_RETRY DUPLICATE", "PARTNER_RETRY DUPLICATE"}, f.attempts(t, "ev-1"))
}

// The same event id with another body is not a retry: 409, and what we hold is unchanged.
func TestBankCallbackEventIDReusedWithAnotherBodyIsAConflict(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-9", "tenant-a", 500)
	rec := f.post(t, "sandbox", f.body("ev-9", "tenant-a", 500), f.now, "nonce-9a", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	other := f.body("ev-9", "tenant-a", 500)
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
	rec = f.post(t, "sandbox", f.body("ev-10", "tenant-a", 7), f.now, "nonce-9b", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// The tenant comes from the transfer the callback references, never from the body. A callback
// that matches no transfer of ours, or contradicts the one it names, is kept as UNMATCHED with no
// tenant and acknowledged; no tenant sees it or an Applied audit row.
func TestBankCallbackTenantComesFromTheTransfer(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-a", "tenant-a", 1_000)
	f.sent(t, "ev-b", "tenant-a", 1_000)
	f.sent(t, "ev-c", "tenant-a", 1_000)

	cases := []struct {
		eventID string
		body    []byte
		status  string
	}{
		{"ev-a", f.body("ev-a", "tenant-a", 1_000), "accepted"},
		// The body claims tenant-b for tenant-a's transfer.
		{"ev-b", f.body("ev-b", "tenant-b", 1_000), "unmatched"},
		// The amount differs from what we sent.
		{"ev-c", f.body("ev-c", "tenant-a", 9_999), "unmatched"},
		// No transfer of ours has this reference.
		{"ev-x", f.body("ev-x", "tenant-b", 1_000), "unmatched"},
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

	// Nothing was signalled to the sagas of the contradicted transfers.
	require.Equal(t, []string{"ev-a"}, f.seen(t, "ev-a").Seen)
	require.Zero(t, f.seen(t, "ev-b").Signals, "another tenant's transfer: nothing signalled")
	require.Zero(t, f.seen(t, "ev-c").Signals)
}

// A nonce is remembered for the signature window plus skew (and a margin), then pruned.
func TestBankCallbackNoncesArePrunedAfterTheWindow(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-n1", "tenant-a", 10)
	f.sent(t, "ev-n2", "tenant-a", 10)
	f.sent(t, "ev-n3", "tenant-a", 10)
	require.Equal(t, http.StatusOK, f.post(t, "sandbox", f.body("ev-n1", "tenant-a", 10), f.now, "nonce-n", sandboxSecret).Code)

	// Within the window plus skew (10 minutes), the nonce is still refused.
	f.now = f.now.Add(10 * time.Minute)
	rec := f.post(t, "sandbox", f.body("ev-n2", "tenant-a", 10), f.now, "nonce-n", sandboxSecret)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())

	// After the retention, the next callback prunes it; a stale signature is still refused by
	// its timestamp, so nothing can be replayed.
	f.now = f.now.Add(bankwebhook.NonceRetention)
	require.Equal(t, http.StatusOK, f.post(t, "sandbox", f.body("ev-n3", "tenant-a", 10), f.now, "nonce-other", sandboxSecret).Code)
	var left int
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(t, crosstenant.Tx(ctx, f.d.Platform(t), "test inspection", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.bank_webhook_nonces WHERE nonce = 'nonce-n'`).Scan(&left)
	}))
	require.Zero(t, left)
}

// Without the platform role the callback cannot learn whose transfer it is: 503, nothing stored.
func TestBankCallbackWithoutPlatformPoolIs503(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	srv := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: d.App, Registry: prometheus.NewRegistry(),
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret}})
	body := callbackBodyRef("ref-ev-1", "ev-1", "SETTLED", "tenant-a", 10)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	rec := newAPIClient(t, srv).call(http.MethodPost, "/api/integration/bank-callback/sandbox", body,
		"x-svc-timestamp", ts, "x-svc-nonce", "n1", "x-svc-signature", callbacksig.Sign(sandboxSecret, ts, "n1", body))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "NOT_CONFIGURED")
}

func TestBankCallbackRejectsAndChangesNothing(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	good := f.body("ev-2", "tenant-a", 100)
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
		{"stale by 301 s", "sandbox", good, f.now.Add(-301 * time.Second), sandboxSecret, nil, 401, "SIGNATURE_STALE", resultSignatureRejected},
		{"future by 301 s", "sandbox", good, f.now.Add(301 * time.Second), sandboxSecret, nil, 401, "SIGNATURE_STALE", resultSignatureRejected},
		{"body changed after signing", "sandbox", good, f.now, sandboxSecret, func(r *http.Request) {
			r.Body = io.NopCloser(bytes.NewReader(f.body("ev-2", "tenant-a", 999_999)))
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
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-svc-timestamp", tsStr)
			req.Header.Set("x-svc-nonce", nonce)
			req.Header.Set("x-svc-signature", callbacksig.Sign(tc.secret, tsStr, nonce, tc.body))
			if tc.tamper != nil {
				tc.tamper(req)
			}
			rec := newAPIClient(t, f.srv).hostileRequest(req)
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
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-3", "tenant-a", 10)
	f.sent(t, "ev-4", "tenant-a", 10)
	rec := f.post(t, "sandbox", f.body("ev-3", "tenant-a", 10), f.now, "nonce-x", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code)
	rec = f.post(t, "sandbox", f.body("ev-4", "tenant-a", 10), f.now, "nonce-x", sandboxSecret)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "REPLAYED_NONCE")
	events, audits := f.stored(t, "tenant-a")
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)
}

// Racing deliveries of one event (the partner retrying before our first answer) store it once;
// every answer is a 200, one accepted and the rest duplicates, whether the nonces differ or not.
func TestBankCallbackRacingDuplicatesStoreOnce(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-race", "tenant-a", 42)
	body := f.body("ev-race", "tenant-a", 42)
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
	st := f.seen(t, "ev-race")
	require.Equal(t, []string{"ev-race"}, st.Seen)
	require.Equal(t, 1, st.Signals, "racing deliveries signal once")
}

// attempts lists the recorded delivery attempts of eventID as "trigger outcome".
func (f *webhookFixture) attempts(t *testing.T, eventID string) []string {
	t.Helper()
	var out []string
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(t, crosstenant.Tx(ctx, f.d.Platform(t), "test inspection", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT d.trigger || ' ' || d.outcome FROM app.bank_webhook_deliveries d
			JOIN app.bank_webhook_events e ON e.id = d.webhook_event_id WHERE e.event_id = $1 ORDER BY d.id`, eventID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

// eventOutcome is the stored outcome of eventID.
func (f *webhookFixture) eventOutcome(t *testing.T, eventID string) string {
	t.Helper()
	var out string
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(t, crosstenant.Tx(ctx, f.d.Platform(t), "test inspection", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT outcome || ' ' || coalesce(tenant_id, '-') FROM app.bank_webhook_events WHERE event_id = $1`, eventID).Scan(&out)
	}))
	return out
}

// The signature window is inclusive: exactly 300 s either way is accepted (and delivered).
func TestBankCallbackWindowBoundariesAreAccepted(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	for i, off := range []time.Duration{-300 * time.Second, 300 * time.Second} {
		ev := "ev-edge-" + strconv.Itoa(i)
		f.sent(t, ev, "tenant-a", 10)
		rec := f.post(t, "sandbox", f.body(ev, "tenant-a", 10), f.now.Add(off), "nonce-edge-"+strconv.Itoa(i), sandboxSecret)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"outcome":"APPLIED"`)
		require.Equal(t, []string{ev}, f.seen(t, ev).Seen)
	}
}

// Out of order: a FAILED event after a SETTLED one for the same transfer (two event ids). Both
// are delivered, in the order they came; the saga decides what they mean.
func TestBankCallbackOutOfOrderBothDelivered(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-o", "tenant-a", 700)
	ref := f.ref("ev-o")
	for i, tc := range []struct{ eventID, status string }{{"ev-o-settled", "SETTLED"}, {"ev-o-failed", "FAILED"}} {
		rec := f.post(t, "sandbox", callbackBodyRef(ref, tc.eventID, tc.status, "tenant-a", 700), f.now, "nonce-o"+strconv.Itoa(i), sandboxSecret)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"outcome":"APPLIED"`)
	}
	st := f.seen(t, "ev-o")
	require.Equal(t, []string{"ev-o-settled", "ev-o-failed"}, st.Seen)
	require.Equal(t, []string{"SETTLED", "FAILED"}, st.Statuses)
	require.Equal(t, 2, st.Signals)
	require.Equal(t, 2.0, f.count(resultAccepted))
}

// A callback for a saga that has finished is stored and acknowledged as SAGA_FINISHED; one for a
// transfer whose workflow does not exist as UNMATCHED (for the transfer's tenant). Neither is
// audited as applied; a retry of either is a duplicate.
func TestBankCallbackFinishedOrMissingSaga(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sentOnly(t, "ev-fin", "tenant-a", 10)
	f.saga.start(t, f.ref("ev-fin"), true)
	f.sentOnly(t, "ev-nowf", "tenant-a", 10)

	rec := f.post(t, "sandbox", f.body("ev-fin", "tenant-a", 10), f.now, "nonce-fin", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"status":"saga_finished"`)
	require.Contains(t, rec.Body.String(), `"outcome":"SAGA_FINISHED"`)
	require.Equal(t, "SAGA_FINISHED tenant-a", f.eventOutcome(t, "ev-fin"))
	require.Equal(t, 1.0, f.count(resultSagaFinished))

	rec = f.post(t, "sandbox", f.body("ev-nowf", "tenant-a", 10), f.now, "nonce-nowf", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"outcome":"UNMATCHED"`)
	require.Equal(t, "UNMATCHED tenant-a", f.eventOutcome(t, "ev-nowf"))

	_, audits := f.stored(t, "tenant-a")
	require.Zero(t, audits, "nothing was applied")
	rec = f.post(t, "sandbox", f.body("ev-fin", "tenant-a", 10), f.now, "nonce-fin2", sandboxSecret)
	require.Contains(t, rec.Body.String(), `"outcome":"DUPLICATE"`)
	require.Equal(t, []string{"RECEIPT SAGA_FINISHED", "PARTNER_RETRY DUPLICATE"}, f.attempts(t, "ev-fin"))
	require.Equal(t, []string{"RECEIPT UNMATCHED"}, f.attempts(t, "ev-nowf"))
}

// Temporal unreachable: the callback is stored PENDING and answered 503 so the partner retries;
// the retry (once Temporal answers) delivers it, once. Without any Temporal client the answer is
// 503 NOT_CONFIGURED, also stored for a later delivery.
func TestBankCallbackTemporalDownIs503AndTheRetryDelivers(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	f.sent(t, "ev-down", "tenant-a", 10)
	body := f.body("ev-down", "tenant-a", 10)
	down := f.server(t, testkit.TemporalDown(t))
	down.webhooks.applier.Timeout = time.Second // a server that is down fails the attempt sooner
	ts := strconv.FormatInt(f.now.Unix(), 10)
	rec := newAPIClient(t, down).call(http.MethodPost, "/api/integration/bank-callback/sandbox", body,
		"x-svc-timestamp", ts, "x-svc-nonce", "nonce-down-1", "x-svc-signature", callbacksig.Sign(sandboxSecret, ts, "nonce-down-1", body))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "TEMPORAL_UNAVAILABLE")
	require.Equal(t, 1.0, testutil.ToFloat64(down.webhooks.requests.WithLabelValues(resultUndelivered)))
	require.Equal(t, "PENDING tenant-a", f.eventOutcome(t, "ev-down"))
	_, audits := f.stored(t, "tenant-a")
	require.Zero(t, audits, "not applied yet")

	// The partner retries (a new nonce) and Temporal answers now.
	rec = f.post(t, "sandbox", body, f.now, "nonce-down-2", sandboxSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"outcome":"APPLIED"`)
	require.Equal(t, "APPLIED tenant-a", f.eventOutcome(t, "ev-down"))
	require.Equal(t, []string{"RECEIPT UNDELIVERED", "PARTNER_RETRY APPLIED"}, f.attempts(t, "ev-down"))
	st := f.seen(t, "ev-down")
	require.Equal(t, []string{"ev-down"}, st.Seen)
	require.Equal(t, 1, st.Signals)
	events, audits := f.stored(t, "tenant-a")
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)

	// No Temporal client at all.
	f.sent(t, "ev-none", "tenant-a", 10)
	none := f.server(t, nil)
	body = f.body("ev-none", "tenant-a", 10)
	rec = newAPIClient(t, none).call(http.MethodPost, "/api/integration/bank-callback/sandbox", body,
		"x-svc-timestamp", ts, "x-svc-nonce", "nonce-none", "x-svc-signature", callbacksig.Sign(sandboxSecret, ts, "nonce-none", body))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "NOT_CONFIGURED")
	require.Equal(t, "PENDING tenant-a", f.eventOutcome(t, "ev-none"))
	require.Zero(t, f.seen(t, "ev-none").Signals)
}
