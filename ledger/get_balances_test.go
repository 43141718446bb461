package ledger

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"pgregory.net/rapid"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestGetBalancesEqualsGetBalance: for random sets of accounts (by id, in any spelling, or by
// name; the tenant's, unknown ones and another tenant's; now or as of an earlier instant),
// GetBalances answers each account exactly as GetBalance answers it alone: the same balance, or
// the same error in the account's own result. The accounts carry posted, pending, committed,
// voided and reversed transactions, and a checkpoint is due every third entry, so reads go
// through checkpoints and write them.
func TestGetBalancesEqualsGetBalance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.store.CheckpointEvery = 3
	ctx := ctxT(t)
	tenant, other := testkit.Unique("gb"), testkit.Unique("gb-other")

	names := []string{"payroll-clearing", "fee-income", "misc-loss"}
	for i := range 30 {
		names = append(names, fmt.Sprintf("receivable-from-employee:e%02d", i), fmt.Sprintf("payable-to-employee:e%02d", i))
	}
	ids := e.ensure(t, tenant, names...)
	theirs := e.ensure(t, other, "payroll-clearing", "receivable-from-employee:e00")
	_, err := e.client.PostTransaction(ctx, twoLeg(other, "gb-other", "payroll-clearing", "receivable-from-employee:e00", 5))
	require.NoError(t, err)

	// Three waves of postings, with the instants between them kept for as_of reads. "misc-loss"
	// never gets an entry: a balance of zero that exists.
	r := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	var instants []time.Time
	key := 0
	for wave := range 3 {
		batch := &ledgerv1.PostTransactionsRequest{TenantId: tenant}
		for range 80 {
			a, b := names[r.IntN(len(names)-3)+3], names[r.IntN(2)]
			if r.IntN(2) == 0 {
				a, b = b, a
			}
			key++
			p := twoLeg("", fmt.Sprintf("gb-%d", key), a, b, 1+r.Int64N(100_000))
			if r.IntN(3) == 0 {
				p.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
			}
			batch.Transactions = append(batch.Transactions, p)
		}
		res, err := e.client.PostTransactions(ctx, batch)
		require.NoError(t, err)
		for i, it := range res.GetResults() {
			require.NoError(t, ItemError(it))
			tx := it.GetTransaction()
			switch {
			case tx.GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING && i%2 == 0:
				_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: tx.GetId()})
			case tx.GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING && i%3 == 0:
				_, err = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: tx.GetId(), Reason: "test"})
			case tx.GetStatus() == ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED && i%11 == 0:
				_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: tx.GetId(), Reason: "test", IdempotencyKey: fmt.Sprintf("gb-rev-%d-%d", wave, i)})
			}
			require.NoError(t, err)
		}
		time.Sleep(5 * time.Millisecond) // entries' created_at before and after the instant differ
		instants = append(instants, time.Now())
		time.Sleep(5 * time.Millisecond)
	}

	// The pool of references a draw picks from, none naming an account twice the same way: every
	// account by name and by id, unknown names and ids, the other tenant's accounts by id (and by
	// a name this tenant does not have).
	var pool []*ledgerv1.AccountRef
	for _, n := range names {
		pool = append(pool, &ledgerv1.AccountRef{AccountName: n}, &ledgerv1.AccountRef{AccountId: ids[n]})
	}
	for i := range 5 {
		pool = append(pool, &ledgerv1.AccountRef{AccountName: fmt.Sprintf("receivable-from-employee:ghost%d", i)},
			&ledgerv1.AccountRef{AccountId: uuid.NewString()})
	}
	for _, id := range theirs {
		pool = append(pool, &ledgerv1.AccountRef{AccountId: id})
	}

	checks := 0
	rapid.Check(t, func(rt *rapid.T) {
		checks++
		n := rapid.IntRange(1, MaxGetBalances).Draw(rt, "n")
		picked := rapid.SliceOfNDistinct(rapid.IntRange(0, len(pool)-1), n, n, rapid.ID[int]).Draw(rt, "accounts")
		req := &ledgerv1.GetBalancesRequest{TenantId: tenant}
		for _, i := range picked {
			ref := proto.Clone(pool[i]).(*ledgerv1.AccountRef)
			if ref.AccountId != "" && rapid.Bool().Draw(rt, "upper") {
				ref.AccountId = strings.ToUpper(ref.AccountId) // another spelling of the same id
			}
			req.Accounts = append(req.Accounts, ref)
		}
		if at := rapid.IntRange(-1, len(instants)-1).Draw(rt, "as_of"); at >= 0 {
			req.AsOf = timestamppb.New(instants[at])
		}

		got, err := e.client.GetBalances(ctx, req)
		if err != nil {
			rt.Fatalf("GetBalances: %v", err)
		}
		if len(got.GetResults()) != len(req.GetAccounts()) {
			rt.Fatalf("%d results for %d accounts", len(got.GetResults()), len(req.GetAccounts()))
		}
		for i, ref := range req.GetAccounts() {
			one, oneErr := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{
				TenantId: tenant, AccountId: ref.GetAccountId(), AccountName: ref.GetAccountName(), AsOf: req.GetAsOf()})
			res := got.GetResults()[i]
			if oneErr != nil {
				itemErr := ItemError(res)
				if itemErr == nil || itemErr.Error() != oneErr.Error() {
					rt.Fatalf("accounts[%d] %v: GetBalance failed with %v, GetBalances answered %v (%v)", i, ref, oneErr, itemErr, res)
				}
				if res.GetBalance() != nil || codes.Code(res.GetErrorCode()) != codes.NotFound {
					rt.Fatalf("accounts[%d] %v: a failed result carries code %d and balance %v", i, ref, res.GetErrorCode(), res.GetBalance())
				}
				continue
			}
			if err := ItemError(res); err != nil {
				rt.Fatalf("accounts[%d] %v: GetBalance answered, GetBalances failed with %v", i, ref, err)
			}
			want, have := one.GetBalance(), proto.Clone(res.GetBalance()).(*ledgerv1.Balance)
			if req.GetAsOf() == nil {
				have.AsOf = want.GetAsOf() // "now" is each read's own clock
			}
			if !proto.Equal(want, have) {
				rt.Fatalf("accounts[%d] %v:\n  GetBalance  %v\n  GetBalances %v", i, ref, want, res.GetBalance())
			}
		}
	})
	t.Logf("%d random sets compared", checks)

	// Reads through checkpoints wrote some, and every one agrees with the entries.
	require.Positive(t, e.counts(t, tenant).checkpoints)
	v, err := e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Empty(t, v.GetMismatches())
}

// TestGetBalances reads the maximum in one call: results in request order; the tenant's
// accounts by id and by name (one account named both ways is answered twice); an absent account
// (unknown, or another tenant's) answered in its own result as GetBalance answers it; the call
// counted and timed like every other RPC.
func TestGetBalances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant, other := testkit.Unique("gb"), testkit.Unique("gb-other")
	var names []string
	for i := range MaxGetBalances - 3 {
		names = append(names, fmt.Sprintf("receivable-from-employee:e%03d", i))
	}
	ids := e.ensure(t, tenant, append([]string{"payroll-clearing"}, names...)...)
	theirs := e.ensure(t, other, "payroll-clearing")
	batch := &ledgerv1.PostTransactionsRequest{TenantId: tenant}
	for i, n := range names {
		batch.Transactions = append(batch.Transactions, twoLeg("", fmt.Sprintf("gb-%d", i), n, "payroll-clearing", int64(100+i)))
	}
	res, err := e.client.PostTransactions(ctx, batch)
	require.NoError(t, err)
	for _, it := range res.GetResults() {
		require.NoError(t, ItemError(it))
	}

	req := &ledgerv1.GetBalancesRequest{TenantId: tenant}
	for i, n := range names {
		if i%2 == 0 {
			req.Accounts = append(req.Accounts, &ledgerv1.AccountRef{AccountName: n})
		} else {
			req.Accounts = append(req.Accounts, &ledgerv1.AccountRef{AccountId: ids[n]})
		}
	}
	req.Accounts = append(req.Accounts,
		&ledgerv1.AccountRef{AccountName: "receivable-from-employee:ghost"},
		&ledgerv1.AccountRef{AccountId: theirs["payroll-clearing"]},
		&ledgerv1.AccountRef{AccountName: names[1]}) // names[1] again, by name this time
	require.Len(t, req.Accounts, MaxGetBalances)

	got, err := e.client.GetBalances(ctx, req)
	require.NoError(t, err)
	require.Len(t, got.GetResults(), MaxGetBalances)
	for i, n := range names {
		b := got.GetResults()[i].GetBalance()
		require.NoError(t, ItemError(got.GetResults()[i]))
		require.Equal(t, n, b.GetAccountName(), "request order")
		require.Equal(t, ids[n], b.GetAccountId())
		require.Equal(t, int64(100+i), b.GetPostedSantim())
	}
	for i, acct := range []string{"receivable-from-employee:ghost", theirs["payroll-clearing"]} {
		r := got.GetResults()[len(names)+i]
		require.Nil(t, r.GetBalance())
		require.Equal(t, int32(codes.NotFound), r.GetErrorCode())
		requireReason(t, ItemError(r), ReasonAccountNotFound)
		require.ErrorIs(t, ItemError(r), ErrAccountNotFound)
		require.Equal(t, "ACCOUNT_NOT_FOUND: account "+acct+" not found", ItemError(r).Error(), "as GetBalance says it")
	}
	require.True(t, proto.Equal(got.GetResults()[1].GetBalance(), got.GetResults()[MaxGetBalances-1].GetBalance()), "an account by id and by name: one balance")

	// The other tenant reads its own account and none of this tenant's.
	mine, err := e.client.GetBalances(ctx, &ledgerv1.GetBalancesRequest{TenantId: other, Accounts: []*ledgerv1.AccountRef{
		{AccountId: ids[names[0]]}, {AccountName: "payroll-clearing"}}})
	require.NoError(t, err)
	requireReason(t, ItemError(mine.GetResults()[0]), ReasonAccountNotFound)
	require.Equal(t, theirs["payroll-clearing"], mine.GetResults()[1].GetBalance().GetAccountId())

	require.Equal(t, 2.0, testutil.ToFloat64(e.metrics.requests.WithLabelValues("GetBalances", "ok")))
	resp, err := http.Get("http://" + e.metricsAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(body), `svc_ledger_rpc_latency_seconds_count{rpc="GetBalances"} 2`, "timed like every other RPC")
}
