package ledger

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// parallel runs fn(i) for i in [0, n) at once, released together, and waits for all.
func parallel(n int, fn func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			start.Wait()
			fn(i)
		}()
	}
	start.Done()
	done.Wait()
}

func TestConcurrentSameIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "receivable-from-employee:e1")

	const n = 1000
	ids := make([]string, n)
	replayed := make([]bool, n)
	errs := make([]error, n)
	parallel(n, func(i int) {
		r, err := e.client.PostTransaction(ctx, twoLeg(tenant, "one-key", "payroll-clearing", "receivable-from-employee:e1", 4_200))
		if err != nil {
			errs[i] = err
			return
		}
		ids[i], replayed[i] = r.GetTransaction().GetId(), r.GetReplayed()
	})
	fresh := 0
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, ids[0], ids[i], "every caller gets the one transaction")
		if !replayed[i] {
			fresh++
		}
	}
	require.Equal(t, 1, fresh, "exactly one call wrote; the others replayed it")
	c := e.counts(t, tenant)
	require.Equal(t, 1, c.transactions)
	require.Equal(t, 2, c.entries)
	require.Equal(t, int64(4_200), e.balance(t, tenant, "payroll-clearing").GetPostedSantim())
}

func TestConcurrentHotAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.store.CheckpointEvery = 16 // balance reads during the storm write checkpoints
	names := []string{"payroll-clearing"}
	for i := range 10 {
		names = append(names, fmt.Sprintf("receivable-from-employee:e%d", i))
	}
	e.ensure(t, tenant, names...)

	const n = 200
	errs := make([]error, n+20)
	parallel(n+20, func(i int) {
		if i >= n { // readers racing the writers
			_, errs[i] = e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "payroll-clearing"})
			return
		}
		// Half the postings debit the hot account, half credit it, against ten other accounts,
		// so lock order matters in both directions.
		other := names[1+i%10]
		req := twoLeg(tenant, fmt.Sprintf("hot-%d", i), "payroll-clearing", other, int64(i+1))
		if i%2 == 1 {
			req = twoLeg(tenant, fmt.Sprintf("hot-%d", i), other, "payroll-clearing", int64(i+1))
		}
		_, errs[i] = e.client.PostTransaction(ctx, req)
	})
	var want int64
	for i := range n {
		require.NoError(t, errs[i])
		if i%2 == 0 {
			want += int64(i + 1)
		} else {
			want -= int64(i + 1)
		}
	}
	for i := n; i < n+20; i++ {
		require.NoError(t, errs[i])
	}
	b := e.balance(t, tenant, "payroll-clearing")
	require.Equal(t, want, b.GetPostedSantim())
	var debits int64
	for i := 0; i < n; i += 2 {
		debits += int64(i + 1)
	}
	require.Equal(t, debits, b.GetPostedDebitsSantim())
	c := e.counts(t, tenant)
	require.Equal(t, n, c.transactions)
	require.Equal(t, 2*n, c.entries)
	v, err := e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Empty(t, v.GetMismatches(), "checkpoints written under concurrent posting are exact")
}

func TestConcurrentCommitAndVoid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "partner-bank:p:funding", "receivable-from-employee:e1")

	for round := range 20 {
		req := twoLeg(tenant, fmt.Sprintf("hold-%d", round), "receivable-from-employee:e1", "partner-bank:p:funding", 1_000)
		req.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
		p, err := e.client.PostTransaction(ctx, req)
		require.NoError(t, err)
		id := p.GetTransaction().GetId()

		// Two committers and two voiders race.
		errs := make([]error, 4)
		parallel(4, func(i int) {
			if i%2 == 0 {
				_, errs[i] = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: id})
			} else {
				_, errs[i] = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: id, Reason: "race"})
			}
		})
		winners := 0
		for _, err := range errs {
			if err == nil {
				winners++
				continue
			}
			if !IsReason(err, ReasonAlreadyPosted) && !IsReason(err, ReasonAlreadyVoided) {
				t.Fatalf("round %d: unexpected error %v", round, err)
			}
		}
		require.Equal(t, 1, winners, "round %d: exactly one of commit/void wins", round)
		g, err := e.client.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: id})
		require.NoError(t, err)
		tx := g.GetTransaction()
		want := 2 + 2 // holds + releases
		if tx.GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED {
			want += 2
			for i, err := range errs {
				if err != nil {
					require.True(t, IsReason(err, ReasonAlreadyPosted), "call %d: %v", i, err)
				}
			}
		} else {
			require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, tx.GetStatus())
			for i, err := range errs {
				if err != nil {
					require.True(t, IsReason(err, ReasonAlreadyVoided), "call %d: %v", i, err)
				}
			}
		}
		require.Len(t, tx.GetEntries(), want)
	}
	b := e.balance(t, tenant, "partner-bank:p:funding")
	require.Zero(t, b.GetPendingCreditsSantim(), "every hold was released")
	require.Zero(t, b.GetPendingDebitsSantim())
}

func TestConcurrentReversals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	p, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k", "payroll-clearing", "fee-income", 300))
	require.NoError(t, err)
	id := p.GetTransaction().GetId()

	const n = 16
	errs := make([]error, n)
	revs := make([]string, n)
	parallel(n, func(i int) {
		// Half share one key (retries of one activity), half use their own keys.
		key := "rev-shared"
		if i%2 == 1 {
			key = fmt.Sprintf("rev-%d", i)
		}
		r, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: id, Reason: "dup", IdempotencyKey: key})
		errs[i] = err
		if err == nil {
			revs[i] = r.GetReversal().GetId()
		}
	})
	distinct := map[string]bool{}
	for i, err := range errs {
		if err == nil {
			distinct[revs[i]] = true
			continue
		}
		require.True(t, IsReason(err, ReasonAlreadyReversed), "call %d: %v", i, err)
	}
	require.Len(t, distinct, 1, "one reversal, whoever wins")
	require.Equal(t, int64(0), e.balance(t, tenant, "fee-income").GetPostedSantim())
	require.Equal(t, 2, e.counts(t, tenant).transactions)
}

// TestCoalescerDrains drives the coalescer as the benchmark does, clients posting one after
// another, and checks that every posting is written once with its own result and that nothing
// stays queued: a writer that leaves a few postings to another one must never strand them.
func TestCoalescerDrains(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	names := []string{"payroll-clearing"}
	for i := range 16 {
		names = append(names, fmt.Sprintf("receivable-from-employee:e%d", i))
	}
	e.ensure(t, tenant, names...)
	c := newCoalescer(e.store)

	const clients, each = 12, 40
	seen := make([][]string, clients)
	errs := make([]error, clients)
	parallel(clients, func(i int) {
		for j := range each {
			key := fmt.Sprintf("c%d-%d", i, j)
			p := PostingFromPB(twoLeg(tenant, key, names[1+(i+j)%16], "payroll-clearing", int64(1+j)))
			tx, replayed, err := c.post(ctx, p)
			if err != nil {
				errs[i] = err
				return
			}
			if replayed || tx.IdempotencyKey != key {
				errs[i] = fmt.Errorf("posting %s got transaction %s (key %s, replayed %v)", key, tx.ID, tx.IdempotencyKey, replayed)
				return
			}
			seen[i] = append(seen[i], tx.ID)
		}
	})
	ids := map[string]bool{}
	for i := range clients {
		require.NoError(t, errs[i])
		require.Len(t, seen[i], each)
		for _, id := range seen[i] {
			ids[id] = true
		}
	}
	require.Len(t, ids, clients*each, "each posting has its own transaction")
	require.Equal(t, clients*each, e.counts(t, tenant).transactions)
	var want int64
	for j := range each {
		want += int64(1+j) * clients
	}
	require.Equal(t, -want, e.balance(t, tenant, "payroll-clearing").GetPostedSantim())
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Empty(t, c.tenants, "no queue is left behind")
}
