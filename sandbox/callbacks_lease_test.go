package sandbox

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// gate is a callback receiver that holds each attempt until the test answers it.
type gate struct {
	*httptest.Server
	arrived chan struct{}
	answer  chan int
}

func newGate(t *testing.T) *gate {
	g := &gate{arrived: make(chan struct{}, 10), answer: make(chan int)}
	stop := make(chan struct{})
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		g.arrived <- struct{}{}
		select {
		case status := <-g.answer:
			w.WriteHeader(status)
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(g.Close)
	t.Cleanup(func() { close(stop) }) // runs first: a held attempt lets the server close
	return g
}

func (g *gate) waitArrived(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the callback attempt never reached the receiver")
	}
}

// twoBanks is two bank processes on one database, neither running its workers: the test runs
// their delivery rounds. Bank a calls urlA, bank b calls urlB. One transfer has settled, so one
// callback is due; its transfer id is returned.
func twoBanks(t *testing.T, urlA, urlB string) (e *env, a, b *Bank, transferID string) {
	t.Helper()
	d := testkit.NewDB(t)
	cfg := Config{SettleDelay: time.Hour, PollInterval: 20 * time.Millisecond, CallbackSecret: testSecret,
		CallbackTimeout: 30 * time.Second, CallbackBackoffMin: 20 * time.Millisecond, CallbackBackoffMax: 100 * time.Millisecond,
		FaultCacheTTL: time.Millisecond}
	ca, cb := cfg, cfg
	ca.CallbackURL, cb.CallbackURL = urlA, urlB
	a, err := New(d.App, ca, testLogger())
	require.NoError(t, err)
	b, err = New(d.App, cb, testLogger())
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	e = &env{t: t, db: d, bank: a, srv: srv, http: &http.Client{Timeout: 30 * time.Second}}
	e.openAccount("LL-SRC", "Source", 10_000)
	e.openAccount("LL-DST", "Destination", 0)
	tr := e.create(e.transfer(ref("ll"), "LL-SRC", "LL-DST", 100))
	e.makeDue()
	n, err := a.store.settleDue(context.Background(), 10, a.faults)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	return e, a, b, tr.ID
}

// deliverInBackground runs one delivery round of bank in a goroutine; the channel gets its error.
func deliverInBackground(t *testing.T, bank *Bank) <-chan error {
	done := make(chan error, 1)
	go func() {
		n, err := bank.deliverer.deliverOnce(context.Background())
		if err == nil && n != 1 {
			t.Errorf("the round claimed %d callbacks, want 1", n)
		}
		done <- err
	}()
	return done
}

func waitRound(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the delivery round never ended")
	}
}

// expireLease makes the callback's lease run out, as a slow round outliving it would.
func expireLease(t *testing.T, e *env, transferID string) {
	t.Helper()
	_, err := e.db.App.Exec(context.Background(), `UPDATE sandbox.callbacks SET lease_until = now() - interval '1 second'
		WHERE transfer_id = $1::uuid AND lease_until IS NOT NULL`, transferID)
	require.NoError(t, err)
}

type callbackState struct {
	Attempts   int
	LastStatus *int
	Delivered  bool
	GaveUp     bool
	Leased     bool
}

func stateOf(t *testing.T, e *env, transferID string) callbackState {
	t.Helper()
	var s callbackState
	require.NoError(t, e.db.App.QueryRow(context.Background(), `SELECT attempts, last_status, delivered_at IS NOT NULL,
		gave_up_at IS NOT NULL, lease_until IS NOT NULL FROM sandbox.callbacks WHERE transfer_id = $1::uuid`, transferID).
		Scan(&s.Attempts, &s.LastStatus, &s.Delivered, &s.GaveUp, &s.Leased))
	return s
}

// TestCallbackOutcomeAfterLostLease: bank A's attempt outlives its lease, bank B (another
// process on the same database) takes the callback over. What A learns afterwards must not undo
// what B recorded: a late failure does not make a delivered callback due again (it would be sent
// twice and its attempts counted twice), and a late acknowledgement is kept even if B's attempt
// then fails.
func TestCallbackOutcomeAfterLostLease(t *testing.T) {
	t.Parallel()
	t.Run("late failure", func(t *testing.T) {
		t.Parallel()
		slowA := newGate(t)
		recvB := newReceiver(t, testSecret)
		e, a, b, id := twoBanks(t, slowA.URL, recvB.URL+"/callback")

		doneA := deliverInBackground(t, a)
		slowA.waitArrived(t)
		expireLease(t, e, id)
		n, err := b.deliverer.deliverOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, n, "B takes over the callback whose lease ran out")
		require.Len(t, ackedFor(recvB.waitAcked(t, 5*time.Second, func(cs []receivedCallback) bool { return len(cs) == 1 }), id), 1)
		require.True(t, stateOf(t, e, id).Delivered)

		slowA.answer <- http.StatusInternalServerError
		waitRound(t, doneA)
		s := stateOf(t, e, id)
		require.True(t, s.Delivered, "A's late failure does not undo B's delivery")
		require.False(t, s.GaveUp)
		require.False(t, s.Leased)
		require.Equal(t, 1, s.Attempts, "A's attempt is not counted over B's delivery")
		require.Equal(t, 200, *s.LastStatus)

		_, err = e.db.App.Exec(context.Background(), `UPDATE sandbox.callbacks SET next_attempt_at = now()`)
		require.NoError(t, err)
		for _, bank := range []*Bank{a, b} {
			n, err := bank.deliverer.deliverOnce(context.Background())
			require.NoError(t, err)
			require.Zero(t, n, "a delivered callback is never claimed again")
		}
		attempts, _ := recvB.snapshot()
		require.Len(t, attempts, 1)
	})
	t.Run("late acknowledgement", func(t *testing.T) {
		t.Parallel()
		slowA, slowB := newGate(t), newGate(t)
		e, a, b, id := twoBanks(t, slowA.URL, slowB.URL)

		doneA := deliverInBackground(t, a)
		slowA.waitArrived(t)
		expireLease(t, e, id)
		doneB := deliverInBackground(t, b)
		slowB.waitArrived(t)

		slowA.answer <- http.StatusOK
		waitRound(t, doneA)
		s := stateOf(t, e, id)
		require.True(t, s.Delivered, "the receiver acknowledged A's attempt: the callback is delivered")
		require.Equal(t, 1, s.Attempts)

		slowB.answer <- http.StatusInternalServerError
		waitRound(t, doneB)
		s = stateOf(t, e, id)
		require.True(t, s.Delivered, "B's late failure does not undo A's delivery")
		require.False(t, s.Leased)
		require.Equal(t, 1, s.Attempts)
		require.Equal(t, 200, *s.LastStatus)

		_, err := e.db.App.Exec(context.Background(), `UPDATE sandbox.callbacks SET next_attempt_at = now()`)
		require.NoError(t, err)
		for _, bank := range []*Bank{a, b} {
			n, err := bank.deliverer.deliverOnce(context.Background())
			require.NoError(t, err)
			require.Zero(t, n, "a delivered callback is never claimed again")
		}
	})
}

// TestCallbackRoundFitsItsLease: a slow receiver (each attempt takes half the callback timeout)
// and more callbacks than one lease can carry. Every attempt is made, and answered, while its
// callback's lease is held, so no other process could have taken it over meanwhile; and every
// callback is delivered once. Ordinary callbacks are bounded by how many a round claims; held-back
// out-of-order ones, which go one by one, by a round starting no attempt it cannot finish.
func TestCallbackRoundFitsItsLease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		concurrency int
		outOfOrder  bool
	}{
		{"ordinary", 1, false},
		{"out of order", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := testkit.NewDB(t)
			var outsideLease atomic.Int64
			var mu sync.Mutex
			perEvent := map[string]int{}
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body CallbackBody
				raw, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(raw, &body); err != nil {
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				time.Sleep(250 * time.Millisecond)
				// Still leased as the answer goes out?
				var held bool
				if err := d.App.QueryRow(r.Context(), `SELECT coalesce(lease_until > clock_timestamp(), false)
					FROM sandbox.callbacks WHERE event_id = $1::uuid`, body.EventID).Scan(&held); err != nil {
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				if !held {
					outsideLease.Add(1)
				}
				mu.Lock()
				perEvent[body.EventID]++
				mu.Unlock()
			}))
			t.Cleanup(slow.Close)
			bank, err := New(d.App, Config{SettleDelay: time.Hour, PollInterval: 20 * time.Millisecond, CallbackURL: slow.URL,
				CallbackSecret: testSecret, CallbackTimeout: 500 * time.Millisecond, CallbackConcurrency: tc.concurrency,
				CallbackBackoffMin: 20 * time.Millisecond, CallbackBackoffMax: 100 * time.Millisecond,
				OutOfOrderWindow: 100 * time.Millisecond, FaultCacheTTL: time.Millisecond}, testLogger())
			require.NoError(t, err)
			// A lease of 4×500 ms + 200 ms: the twelve callbacks, 250 ms each, do not fit in one.
			bank.deliverer.leaseGrace, bank.deliverer.recordGrace = 200*time.Millisecond, 100*time.Millisecond
			e := startEnv(t, d, bank, newReceiver(t, testSecret))
			if tc.outOfOrder {
				e.setFaults(GlobalScope, Faults{OutOfOrderCallbacks: true})
			}
			e.openAccount("RL-SRC", "Source", 100_000)
			e.openAccount("RL-DST", "Destination", 0)
			const transfers = 12
			for i := range transfers {
				e.create(e.transfer(ref("rl"), "RL-SRC", "RL-DST", int64(100+i)))
			}
			e.makeDue()
			require.Eventually(t, func() bool {
				return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE delivered_at IS NOT NULL`) == transfers
			}, 30*time.Second, 20*time.Millisecond)
			require.Equal(t, transfers, e.count(`SELECT count(*) FROM sandbox.callbacks WHERE out_of_order = $1`, tc.outOfOrder))
			require.Zero(t, outsideLease.Load(), "attempts answered after their lease ran out")
			require.Equal(t, transfers, e.count(`SELECT count(*) FROM sandbox.callbacks WHERE attempts = 1`))
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, perEvent, transfers)
			for ev, n := range perEvent {
				require.Equal(t, 1, n, "event %s", ev)
			}
		})
	}
}
