package sandbox

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestCallbacksVerifyWithSharedSecretOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("CB-SRC", "Source", 10_000)
	e.openAccount("CB-DST", "Destination", 0)
	tr := e.create(e.transfer(ref("cb"), "CB-SRC", "CB-DST", 100))
	e.makeDue()
	acked := e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, tr.ID)) == 1 })
	c := ackedFor(acked, tr.ID)[0]
	require.True(t, callbacksig.Verify([]byte(testSecret), c.Timestamp, c.Nonce, c.Raw, c.Signature))
	require.False(t, callbacksig.Verify([]byte("a-wrong-secret"), c.Timestamp, c.Nonce, c.Raw, c.Signature))
	require.Regexp(t, `^[0-9a-f]{32}$`, c.Nonce)
	secs, err := strconv.ParseInt(c.Timestamp, 10, 64)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), time.Unix(secs, 0), time.Minute, "timestamp is unix seconds, now")
}

func TestCallbacksRetriedUntilAcknowledged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.recv.mu.Lock()
	e.recv.failFirst = 3
	e.recv.mu.Unlock()
	e.openAccount("RT-SRC", "Source", 10_000)
	e.openAccount("RT-DST", "Destination", 0)
	tr := e.create(e.transfer(ref("rt"), "RT-SRC", "RT-DST", 100))
	e.makeDue()
	acked := e.recv.waitAcked(t, 15*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, tr.ID)) == 1 })
	attempts, _ := e.recv.snapshot()
	mine := ackedFor(attempts, tr.ID)
	require.Len(t, mine, 4, "three 500s, then acknowledged")
	eventID := ackedFor(acked, tr.ID)[0].Body.EventID
	nonces := map[string]bool{}
	for i, a := range mine {
		require.Equal(t, eventID, a.Body.EventID, "a retry is the same event")
		require.Equal(t, string(mine[0].Raw), string(a.Raw), "and the same body")
		require.True(t, a.Verified)
		nonces[a.Nonce] = true
		if i > 0 {
			require.GreaterOrEqual(t, a.At.Sub(mine[i-1].At), 15*time.Millisecond, "backoff between attempts")
		}
	}
	require.Len(t, nonces, 4, "a fresh nonce per attempt")
	// The outcome is recorded just after the receiver answered.
	var recs []CallbackRecord
	require.Eventually(t, func() bool {
		recs = decodeAs[struct{ Callbacks []CallbackRecord }](t, e.do("GET", "/api/v1/sandbox/callbacks?transferId="+tr.ID, nil)).Callbacks
		return len(recs) == 1 && recs[0].DeliveredAt != nil
	}, 5*time.Second, 20*time.Millisecond)
	require.Equal(t, 4, recs[0].Attempts)
	require.NotNil(t, recs[0].DeliveredAt)
	require.Equal(t, 200, *recs[0].LastStatus)
}

func TestCallbacksGiveUpAfterMaxAge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.CallbackMaxAge = time.Second })
	e.recv.mu.Lock()
	e.recv.failFirst = 1 << 30
	e.recv.mu.Unlock()
	e.openAccount("GU-SRC", "Source", 10_000)
	e.openAccount("GU-DST", "Destination", 0)
	tr := e.create(e.transfer(ref("gu"), "GU-SRC", "GU-DST", 100))
	e.makeDue()
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE transfer_id = $1::uuid AND gave_up_at IS NOT NULL`, tr.ID) == 1
	}, 15*time.Second, 20*time.Millisecond)
	attempts, acked := e.recv.snapshot()
	require.Empty(t, acked)
	n := len(ackedFor(attempts, tr.ID))
	require.GreaterOrEqual(t, n, 2)
	require.Equal(t, n, e.count(`SELECT attempts FROM sandbox.callbacks WHERE transfer_id = $1::uuid`, tr.ID))
	// Let the retry the callback would have had fall due, then run a delivery round: a given-up
	// callback is not claimed, so nothing more reaches the receiver.
	_, err := e.db.App.Exec(context.Background(), `UPDATE sandbox.callbacks SET next_attempt_at = now() WHERE transfer_id = $1::uuid`, tr.ID)
	require.NoError(t, err)
	require.Zero(t, e.deliverRound(), "a given-up callback is never claimed")
	attempts, _ = e.recv.snapshot()
	require.Len(t, ackedFor(attempts, tr.ID), n, "no attempt after giving up")
	require.Equal(t, StatusSettled, e.getTransfer(tr.ID).Status, "the transfer stands; only its callback was given up")
}

func TestCallbackToTransferURLAndDownReceiver(t *testing.T) {
	t.Parallel()
	other := newReceiver(t, testSecret)
	down := newReceiver(t, testSecret)
	downURL := down.URL
	down.Close()
	e := newEnv(t, func(c *Config) { c.CallbackAllowlist = []string{other.URL + "/hook", downURL} })
	e.openAccount("CU-SRC", "Source", 10_000)
	e.openAccount("CU-DST", "Destination", 0)
	req := e.transfer(ref("cu"), "CU-SRC", "CU-DST", 100)
	req.CallbackURL = other.URL + "/hook"
	tr := e.create(req)
	require.Equal(t, req.CallbackURL, tr.CallbackURL)
	// A receiver that is down at first: the bank keeps trying, and delivers once it is up.
	req2 := e.transfer(ref("cu"), "CU-SRC", "CU-DST", 200)
	req2.CallbackURL = downURL
	tr2 := e.create(req2)
	e.makeDue()
	other.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, tr.ID)) == 1 })
	_, defaultAcked := e.recv.snapshot()
	require.Empty(t, ackedFor(defaultAcked, tr.ID), "the transfer's own callbackUrl wins over the default")
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE transfer_id = $1::uuid AND attempts >= 2 AND delivered_at IS NULL`, tr2.ID) == 1
	}, 10*time.Second, 20*time.Millisecond)
	var lastErr string
	require.NoError(t, e.db.App.QueryRow(context.Background(), `SELECT last_error FROM sandbox.callbacks WHERE transfer_id = $1::uuid`, tr2.ID).Scan(&lastErr))
	require.Contains(t, lastErr, "connect")

	// The receiver comes back on its address: the next retry is delivered.
	back := &receiver{secret: testSecret, perEvent: map[string]int{}, notify: make(chan struct{}, 1)}
	back.Server = httptest.NewUnstartedServer(http.HandlerFunc(back.serve))
	back.Listener.Close()
	ln, err := net.Listen("tcp", strings.TrimPrefix(downURL, "http://"))
	require.NoError(t, err)
	back.Listener = ln
	back.Start()
	t.Cleanup(back.Close)
	acked := back.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, tr2.ID)) == 1 })
	require.Equal(t, int64(200), ackedFor(acked, tr2.ID)[0].Body.AmountSantim)
}

func TestRunStopsPromptlyWithCallbacksInFlight(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	release := make(chan struct{})
	arrived := make(chan struct{}, 10)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	bank, err := New(d.App, Config{SettleDelay: 0, PollInterval: 20 * time.Millisecond, CallbackURL: slow.URL,
		CallbackSecret: testSecret, CallbackTimeout: time.Minute}, testLogger())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = bank.Run(ctx) }()
	srv := httptest.NewServer(bank.Handler())
	defer srv.Close()
	e := &env{t: t, db: d, bank: bank, srv: srv, http: &http.Client{Timeout: 30 * time.Second}}
	e.openAccount("SD-A", "A", 1_000)
	e.openAccount("SD-B", "B", 0)
	e.create(e.transfer(ref("sd"), "SD-A", "SD-B", 10))
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("callback never attempted")
	}
	start := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("settler and deliverer did not stop")
	}
	t.Logf("stopped in %s", time.Since(start))
	// The interrupted attempt is not recorded as delivered: its lease runs out and it is sent again.
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.callbacks WHERE delivered_at IS NULL AND attempts = 0 AND lease_until IS NOT NULL`))
}

// TestCallbackRedirectIsAFailedAttempt: a receiver that answers 3xx has not acknowledged the
// callback. Following a 302 would turn the POST into a bodyless GET whose 2xx marks the callback
// delivered; following a 307/308 would re-send the signed body to a host the allowlist never
// named. The bank follows neither: the attempt fails with the 3xx, and the target is never asked.
func TestCallbackRedirectIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	// The target answers 200 to anything, as a page behind a redirect would.
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	redirect := func(code int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", code)
		}))
		t.Cleanup(s.Close)
		return s
	}
	found, temporary, permanent := redirect(http.StatusFound), redirect(http.StatusTemporaryRedirect), redirect(http.StatusPermanentRedirect)
	hooks := []string{found.URL + "/hook", temporary.URL + "/hook", permanent.URL + "/hook"}
	e := newEnv(t, func(c *Config) { c.CallbackAllowlist = hooks })
	e.openAccount("RD-SRC", "Source", 10_000)
	e.openAccount("RD-DST", "Destination", 0)
	ids := make([]string, len(hooks))
	for i, hook := range hooks {
		req := e.transfer(ref("rd"), "RD-SRC", "RD-DST", 100)
		req.CallbackURL = hook
		ids[i] = e.create(req).ID
	}
	e.makeDue()
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE transfer_id = ANY($1::uuid[])
			AND (attempts >= 2 OR delivered_at IS NOT NULL)`, ids) == len(ids)
	}, 15*time.Second, 20*time.Millisecond, "every callback retried (or taken as delivered)")
	for i, id := range ids {
		var status int
		var delivered *time.Time
		var lastErr string
		require.NoError(t, e.db.App.QueryRow(context.Background(), `SELECT last_status, delivered_at, coalesce(last_error, '')
			FROM sandbox.callbacks WHERE transfer_id = $1::uuid`, id).Scan(&status, &delivered, &lastErr))
		require.Nil(t, delivered, "%s: a redirect is not an acknowledgement", hooks[i])
		require.Contains(t, []int{302, 307, 308}, status, hooks[i])
		require.Contains(t, lastErr, "receiver answered 30", hooks[i])
	}
	require.Zero(t, hits.Load(), "no redirect is followed to the target")
}
