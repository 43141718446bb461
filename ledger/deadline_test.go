package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
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
