package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// holdAccountLock stalls every posting on account: it takes, in a transaction of its own, the
// lock the entries trigger takes per account, as a long posting on the account would. The
// returned func releases it.
func (e *env) holdAccountLock(t *testing.T, account string) (release func()) {
	t.Helper()
	tx, err := e.db.App.Begin(ctxT(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), `SELECT pg_advisory_xact_lock(ledger.account_lock_key($1::uuid))`, account)
	require.NoError(t, err)
	released := false
	release = func() {
		if !released {
			released = true
			require.NoError(t, tx.Rollback(context.Background()))
		}
	}
	t.Cleanup(release)
	return release
}

// lockWaiters is how many backends of the test's database wait for an account lock.
func (e *env) lockWaiters(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, e.db.App.QueryRow(ctxT(t), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&n))
	return n
}

// waitLockWaiters waits until n backends wait for an account lock.
func (e *env) waitLockWaiters(t *testing.T, n int, within time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := e.lockWaiters(t)
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d backends wait for an account lock after %v, want %d", why, got, within, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settled waits until no backend of the test's database but this one runs a statement, so a
// posting still on its way would have committed by now.
func (e *env) settled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		require.NoError(t, e.db.App.QueryRow(ctxT(t), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
				AND state = 'active'`).Scan(&n))
		if n == 0 {
			return
		}
		require.False(t, time.Now().After(deadline), "%d backends still busy", n)
		time.Sleep(20 * time.Millisecond)
	}
}

// pendingTwoLeg is a hold that takes amount off payroll-clearing's available balance (a credit
// on a debit-normal account).
func pendingTwoLeg(tenant, key string, amount int64) *ledgerv1.PostTransactionRequest {
	r := twoLeg(tenant, key, "fee-income", "payroll-clearing", amount)
	r.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	return r
}

// requireNoTransaction asserts that nothing is under key: what a saga voiding by key finds.
func (e *env) requireNoTransaction(t *testing.T, tenant, key string) {
	t.Helper()
	_, err := e.rpc.GetTransaction(ctxT(t), &ledgerv1.GetTransactionRequest{TenantId: tenant, IdempotencyKey: key})
	require.Equal(t, codes.NotFound, status.Code(err), "key %s: %v", key, err)
}

// TestPostingNeverCommitsAfterItsDeadline stalls the database under a posting (the lock of its
// account held elsewhere) until the caller's deadline passes. The caller is told
// DeadlineExceeded and, as a saga compensating by key does, finds nothing under its key; so
// nothing may ever commit under that key: the database gives up at the deadline too, and once
// the stall ends no PENDING hold is left to shrink the account's available balance forever.
func TestPostingNeverCommitsAfterItsDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, rpc := range []string{"PostTransaction", "PostTransactions"} {
		t.Run(rpc, func(t *testing.T) {
			tenant := testkit.Unique("dl")
			ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
			before := e.balance(t, tenant, "payroll-clearing")
			rows := e.counts(t, tenant)
			release := e.holdAccountLock(t, ids["payroll-clearing"])

			const key = "saga-1:disburse"
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			var err error
			if rpc == "PostTransaction" {
				_, err = e.rpc.PostTransaction(ctx, pendingTwoLeg(tenant, key, 500))
			} else {
				_, err = e.rpc.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant,
					Transactions: []*ledgerv1.PostTransactionRequest{pendingTwoLeg(tenant, key, 500)}})
			}
			require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
			// The saga compensates: no transaction under the key, nothing to void.
			e.requireNoTransaction(t, tenant, key)
			// The database itself stopped waiting, not only the client.
			e.waitLockWaiters(t, 0, 5*time.Second, "the posting's statement outlived its deadline")

			release()
			e.settled(t)
			e.requireNoTransaction(t, tenant, key)
			require.Equal(t, rows, e.counts(t, tenant), "nothing was written")
			after := e.balance(t, tenant, "payroll-clearing")
			require.Equal(t, before.GetAvailableSantim(), after.GetAvailableSantim(), "no hold left behind")

			// The key is free: a later posting under it is new, not a replay.
			r, err := e.rpc.PostTransaction(ctxT(t), pendingTwoLeg(tenant, key, 500))
			require.NoError(t, err)
			require.False(t, r.GetReplayed())
			require.Equal(t, before.GetAvailableSantim()-500, e.balance(t, tenant, "payroll-clearing").GetAvailableSantim(),
				"a hold shows in the available balance")
		})
	}
}

// TestCoalescedBatchEndsAtEarliestDeadline stalls the database while postings with different
// deadlines wait for one batch. A batch must not outlive the earliest deadline among its
// callers: a posting committed after its own caller was told DeadlineExceeded is the orphaned
// hold above. The callers with time left are written again without it, and succeed once the
// stall ends; one whose deadline passed while it waited in the queue is never written.
func TestCoalescedBatchEndsAtEarliestDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := testkit.Unique("dl")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	rows := e.counts(t, tenant)
	before := e.balance(t, tenant, "payroll-clearing").GetAvailableSantim()
	release := e.holdAccountLock(t, ids["payroll-clearing"])

	type answer struct {
		key string
		err error
	}
	answers := make(chan answer, 4)
	post := func(key string, deadline time.Time) {
		go func() {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			_, err := e.rpc.PostTransaction(ctx, pendingTwoLeg(tenant, key, 100))
			answers <- answer{key, err}
		}()
	}
	t0 := time.Now()
	// The first posting of an idle tenant is written at once, alone; it stalls, and its writer
	// with it, until its deadline.
	post("first", t0.Add(1500*time.Millisecond))
	e.waitLockWaiters(t, 1, time.Second, "the first posting's batch waits for the account")
	// These queue behind it: one whose deadline passes in the queue, and two that the writer
	// then takes as one batch, one with far more time than the other.
	post("queued-out", t0.Add(1200*time.Millisecond))
	post("short", t0.Add(3*time.Second))
	post("long", t0.Add(time.Minute))

	got := map[string]error{}
	for len(got) < 3 {
		a := <-answers
		require.NotEqual(t, "long", a.key, "the long posting is answered before the stall ends: %v", a.err)
		got[a.key] = a.err
	}
	for _, k := range []string{"first", "queued-out", "short"} {
		require.Equal(t, codes.DeadlineExceeded, status.Code(got[k]), "%s: %v", k, got[k])
	}
	// The short one's deadline ended its batch; the long one is written again, alone.
	e.waitLockWaiters(t, 1, 5*time.Second, "the long posting is written again")
	release()
	a := <-answers
	require.Equal(t, "long", a.key)
	require.NoError(t, a.err)

	e.settled(t)
	for _, k := range []string{"first", "queued-out", "short"} {
		e.requireNoTransaction(t, tenant, k)
	}
	r, err := e.rpc.GetTransaction(ctxT(t), &ledgerv1.GetTransactionRequest{TenantId: tenant, IdempotencyKey: "long"})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING, r.GetTransaction().GetStatus())
	require.Equal(t, rows.transactions+1, e.counts(t, tenant).transactions)
	held := before - e.balance(t, tenant, "payroll-clearing").GetAvailableSantim()
	require.Equal(t, int64(100), held, "the long posting's hold, and no other")
}

// postHold posts a hold of 500 santim on payroll-clearing under key through c, as
// PostTransaction (the coalescer's path) or as a PostTransactions of one (the store's).
func postHold(ctx context.Context, c ledgerv1.LedgerServiceClient, batch bool, tenant, key string) error {
	if !batch {
		_, err := c.PostTransaction(ctx, pendingTwoLeg(tenant, key, 500))
		return err
	}
	_, err := c.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant,
		Transactions: []*ledgerv1.PostTransactionRequest{pendingTwoLeg(tenant, key, 500)}})
	return err
}

func rpcName(batch bool) string {
	if batch {
		return "PostTransactions"
	}
	return "PostTransaction"
}

// requireNoCommitAfterDeadline stalls a posting sent through c on its account's lock until the
// caller is told DeadlineExceeded, and ends the stall at once, as a posting that finished on the
// account would: the posting's backend, if still waiting, gets the lock then. A saga voiding by
// key right after finds nothing, so nothing may ever commit under the key.
func (e *env) requireNoCommitAfterDeadline(t *testing.T, c ledgerv1.LedgerServiceClient, batch bool) {
	t.Helper()
	tenant := testkit.Unique("dl")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	before := e.balance(t, tenant, "payroll-clearing").GetAvailableSantim()
	rows := e.counts(t, tenant)
	release := e.holdAccountLock(t, ids["payroll-clearing"])

	const key = "saga-1:disburse"
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := postHold(ctx, c, batch, tenant, key)
	require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	release()

	e.settled(t)
	e.requireNoTransaction(t, tenant, key)
	require.Equal(t, rows, e.counts(t, tenant), "nothing was written")
	require.Equal(t, before, e.balance(t, tenant, "payroll-clearing").GetAvailableSantim(), "no hold left behind")
}

// lateCancels holds back the cancel requests pgx sends for a pool's connections (on a
// connection of their own, when a context ends) until let is called: a cancel request that
// lands late, as one may on a loaded network or server.
type lateCancels struct {
	held chan struct{}
	once sync.Once
}

func newLateCancels() *lateCancels { return &lateCancels{held: make(chan struct{})} }

func (l *lateCancels) let() { l.once.Do(func() { close(l.held) }) }

func (l *lateCancels) configure(cfg *pgxpool.Config) {
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lateCancelConn{Conn: c, held: l.held}, nil
	}
}

type lateCancelConn struct {
	net.Conn
	held <-chan struct{}
}

// cancelRequestCode is the protocol's CancelRequest code, after the message length.
const cancelRequestCode = 80877102

func (c *lateCancelConn) Write(p []byte) (int, error) {
	if len(p) >= 8 && binary.BigEndian.Uint32(p[4:8]) == cancelRequestCode {
		<-c.held
	}
	return c.Conn.Write(p)
}

// TestPostingNeverCommitsAfterItsDeadlineWhenTheCancelLandsLate: at a posting's deadline pgx closes its
// connection and sends the database a cancel request, which travels on a connection of its own.
// A backend that gets the account's lock before the request lands inserts and commits at the
// pipeline's Sync although its client is gone. The database must give up by itself.
func TestPostingNeverCommitsAfterItsDeadlineWhenTheCancelLandsLate(t *testing.T) {
	t.Parallel()
	late := newLateCancels()
	e := newEnvWith(t, late.configure)
	t.Cleanup(late.let) // before the pool closes: it waits for its connections' cancel requests
	for _, batch := range []bool{false, true} {
		t.Run(rpcName(batch), func(t *testing.T) { e.requireNoCommitAfterDeadline(t, e.rpc, batch) })
	}
}

// slowLink delivers what is written on it (a client's requests) after delay, in order.
type slowLink struct {
	net.Conn
	delay time.Duration
	out   chan linkChunk
	done  chan struct{}
	once  sync.Once
}

type linkChunk struct {
	at time.Time
	b  []byte
}

func dialSlow(delay time.Duration) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		l := &slowLink{Conn: c, delay: delay, out: make(chan linkChunk, 1024), done: make(chan struct{})}
		go l.deliver()
		return l, nil
	}
}

func (l *slowLink) Write(p []byte) (int, error) {
	select {
	case l.out <- linkChunk{at: time.Now().Add(l.delay), b: bytes.Clone(p)}:
		return len(p), nil
	case <-l.done:
		return 0, net.ErrClosed
	}
}

func (l *slowLink) deliver() {
	for {
		select {
		case c := <-l.out:
			time.Sleep(time.Until(c.at))
			if _, err := l.Conn.Write(c.b); err != nil {
				return
			}
		case <-l.done:
			return
		}
	}
}

func (l *slowLink) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Conn.Close()
}

// TestPostingNeverCommitsAfterItsDeadlineInTransit: gRPC sends a deadline as the time left, so
// the server's deadline is the caller's plus the request's transit time. A server that works
// until its own deadline still commits after its caller gave up.
func TestPostingNeverCommitsAfterItsDeadlineInTransit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const transit = 100 * time.Millisecond
	require.Less(t, transit, deadlineMargin/2, "the margin covers the transit with room for the commit")
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dialSlow(transit)))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	slow := ledgerv1.NewLedgerServiceClient(conn)
	for _, batch := range []bool{false, true} {
		t.Run(rpcName(batch), func(t *testing.T) { e.requireNoCommitAfterDeadline(t, slow, batch) })
	}
}

// TestCallWithLessThanTheDeadlineMarginIsRefused: a call whose caller has less than deadlineMargin left
// could not finish before the caller gives up; it is answered DeadlineExceeded and writes
// nothing. With more time left, the same call is served.
func TestCallWithLessThanTheDeadlineMarginIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, tenant string) error
	}{
		{"PostTransaction", func(ctx context.Context, tenant string) error { return postHold(ctx, e.rpc, false, tenant, "k") }},
		{"PostTransactions", func(ctx context.Context, tenant string) error { return postHold(ctx, e.rpc, true, tenant, "k") }},
		{"EnsureAccount", func(ctx context.Context, tenant string) error {
			_, err := e.rpc.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "misc-loss"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tenant := testkit.Unique("dl")
			e.ensure(t, tenant, "payroll-clearing", "fee-income")
			rows := e.counts(t, tenant)

			ctx, cancel := context.WithTimeout(context.Background(), deadlineMargin/2)
			defer cancel()
			err := tc.call(ctx, tenant)
			require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
			e.settled(t)
			require.Equal(t, rows, e.counts(t, tenant), "nothing was written")
			e.requireNoTransaction(t, tenant, "k")

			ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, tc.call(ctx, tenant))
			require.NotEqual(t, rows, e.counts(t, tenant))
		})
	}
}

// TestDatabaseEndsAStatementAtItsDeadline: the database gives up on a statement at its
// context's deadline by itself, not only when told by a cancel request: here pgx leaves the
// connection alone for long after the deadline, so only the database can end the wait for the
// account's lock. Its refusal is DeadlineExceeded (an outcome unknown to the caller, who looks
// its key up), never Internal, and a coalesced batch it ended is written again for the callers
// with time left.
func TestDatabaseEndsAStatementAtItsDeadline(t *testing.T) {
	t.Parallel()
	const pgxLate = 10 * time.Second
	e := newEnvWith(t, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn(), DeadlineDelay: pgxLate}
		}
	})
	tenant := testkit.Unique("dl")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	release := e.holdAccountLock(t, ids["payroll-clearing"])

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.store.PostBatch(ctx, tenant, []Posting{PostingFromPB(pendingTwoLeg(tenant, "alone", 100))})
	require.Less(t, time.Since(start), pgxLate/2, "the database ended the statement")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, codes.DeadlineExceeded, ToStatus(err).Code(), "%v", err)
	require.Equal(t, 0, e.lockWaiters(t))

	// One batch for two callers: the short one's deadline ends it, the long one is written again.
	c := newCoalescer(e.store)
	req := func(key string, d time.Duration) *postRequest {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return &postRequest{ctx: ctx, p: PostingFromPB(pendingTwoLeg(tenant, key, 100)), done: make(chan PostResult, 1)}
	}
	short, long := req("short", 500*time.Millisecond), req("long", time.Minute)
	start = time.Now()
	again := c.writeBatch(tenant, []*postRequest{short, long})
	require.Less(t, time.Since(start), pgxLate/2, "the database ended the statement")
	require.Equal(t, []*postRequest{long}, again)
	require.ErrorIs(t, (<-short.done).Err, context.DeadlineExceeded)

	release()
	require.Nil(t, c.writeBatch(tenant, again))
	res := <-long.done
	require.NoError(t, res.Err)
	require.Equal(t, Pending, res.Transaction.Status)
	e.settled(t)
	e.requireNoTransaction(t, tenant, "alone")
	e.requireNoTransaction(t, tenant, "short")
}

// TestInterceptorServesBeforeTheCallersDeadline: every ledger RPC is served under a deadline
// deadlineMargin before its caller's; a call that timed out is answered no earlier than the
// caller's own deadline (a statement the database was giving up on may commit until then); a
// caller with less than the margin left is not served. The health and reflection services
// answered by the same server keep their callers' deadlines.
func TestInterceptorServesBeforeTheCallersDeadline(t *testing.T) {
	t.Parallel()
	intercept := NewMetrics().UnaryInterceptor(slog.New(slog.NewTextHandler(io.Discard, nil)))
	method := func(m string) *grpc.UnaryServerInfo { return &grpc.UnaryServerInfo{FullMethod: m} }
	ledgerCall := method(ledgerv1.LedgerService_PostTransaction_FullMethodName)
	withDeadline := func(left time.Duration) (context.Context, time.Time) {
		ctx, cancel := context.WithTimeout(context.Background(), left)
		t.Cleanup(cancel)
		d, _ := ctx.Deadline()
		return ctx, d
	}

	t.Run("timed out", func(t *testing.T) {
		ctx, caller := withDeadline(time.Second)
		var served time.Time
		_, err := intercept(ctx, nil, ledgerCall, func(ctx context.Context, _ any) (any, error) {
			served, _ = ctx.Deadline()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
		require.Equal(t, caller.Add(-deadlineMargin), served)
		require.False(t, time.Now().Before(caller), "answered before the caller's deadline")
	})
	t.Run("served in time", func(t *testing.T) {
		ctx, _ := withDeadline(time.Second)
		start := time.Now()
		resp, err := intercept(ctx, nil, ledgerCall, func(context.Context, any) (any, error) { return "ok", nil })
		require.NoError(t, err)
		require.Equal(t, "ok", resp)
		require.Less(t, time.Since(start), deadlineMargin, "answered at once")
	})
	t.Run("less than the margin left", func(t *testing.T) {
		ctx, _ := withDeadline(deadlineMargin / 2)
		_, err := intercept(ctx, nil, ledgerCall, func(context.Context, any) (any, error) {
			t.Error("served")
			return nil, nil
		})
		requireReason(t, FromStatus(err), ReasonDeadlineExceeded)
	})
	t.Run("health", func(t *testing.T) {
		ctx, caller := withDeadline(deadlineMargin / 2)
		var served time.Time
		_, err := intercept(ctx, nil, method("/grpc.health.v1.Health/Check"), func(ctx context.Context, _ any) (any, error) {
			served, _ = ctx.Deadline()
			return "SERVING", nil
		})
		require.NoError(t, err)
		require.Equal(t, caller, served)
	})
}
