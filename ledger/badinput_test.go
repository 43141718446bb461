package ledger

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestBadInput sends every bad posting of the issue through gRPC and checks the precise code,
// the stable reason, and that nothing at all was written.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant, other := testkit.Unique("t"), testkit.Unique("other")
	e.ensure(t, tenant, "payroll-clearing", "receivable-from-employee:e1")
	otherIDs := e.ensure(t, other, "receivable-from-employee:e1")
	_, err := e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "partner-bank:usd-bank:1", Currency: "USD"})
	require.NoError(t, err)

	ok := func() *ledgerv1.PostTransactionRequest {
		return twoLeg(tenant, testkit.Unique("k"), "payroll-clearing", "receivable-from-employee:e1", 100)
	}
	cases := []struct {
		name   string
		mutate func(r *ledgerv1.PostTransactionRequest)
		reason Reason
		code   codes.Code
	}{
		{"unbalanced", func(r *ledgerv1.PostTransactionRequest) { r.Entries[1].AmountSantim = 99 }, ReasonUnbalanced, codes.InvalidArgument},
		{"zero amount", func(r *ledgerv1.PostTransactionRequest) { r.Entries[0].AmountSantim, r.Entries[1].AmountSantim = 0, 0 }, ReasonInvalidAmount, codes.InvalidArgument},
		{"negative amount", func(r *ledgerv1.PostTransactionRequest) {
			r.Entries[0].AmountSantim, r.Entries[1].AmountSantim = -100, -100
		}, ReasonInvalidAmount, codes.InvalidArgument},
		{"overflowing amounts", func(r *ledgerv1.PostTransactionRequest) {
			r.Entries = []*ledgerv1.EntryInput{
				leg("payroll-clearing", dr, math.MaxInt64), leg("payroll-clearing", dr, 2),
				leg("receivable-from-employee:e1", cr, math.MaxInt64), leg("receivable-from-employee:e1", cr, 2),
			}
		}, ReasonAmountOutOfRange, codes.InvalidArgument},
		{"one entry", func(r *ledgerv1.PostTransactionRequest) { r.Entries = r.Entries[:1] }, ReasonTooFewEntries, codes.InvalidArgument},
		{"no entries", func(r *ledgerv1.PostTransactionRequest) { r.Entries = nil }, ReasonTooFewEntries, codes.InvalidArgument},
		{"unknown account", func(r *ledgerv1.PostTransactionRequest) { r.Entries[1].AccountName = "receivable-from-employee:ghost" }, ReasonAccountNotFound, codes.NotFound},
		{"account not in the chart", func(r *ledgerv1.PostTransactionRequest) { r.Entries[1].AccountName = "cash" }, ReasonInvalidAccountName, codes.InvalidArgument},
		{"account of another tenant", func(r *ledgerv1.PostTransactionRequest) {
			r.Entries[1] = &ledgerv1.EntryInput{AccountId: otherIDs["receivable-from-employee:e1"], Direction: cr, AmountSantim: 100}
		}, ReasonAccountNotFound, codes.NotFound},
		{"mixed currency", func(r *ledgerv1.PostTransactionRequest) { r.Entries[1].AccountName = "partner-bank:usd-bank:1" }, ReasonMixedCurrency, codes.InvalidArgument},
		{"missing idempotency key", func(r *ledgerv1.PostTransactionRequest) { r.IdempotencyKey = "" }, ReasonMissingIdempotencyKey, codes.InvalidArgument},
		{"missing tenant", func(r *ledgerv1.PostTransactionRequest) { r.TenantId = "" }, ReasonMissingTenant, codes.InvalidArgument},
		{"no direction", func(r *ledgerv1.PostTransactionRequest) {
			r.Entries[0].Direction = ledgerv1.Direction_DIRECTION_UNSPECIFIED
		}, ReasonInvalidArgument, codes.InvalidArgument},
		{"voided as initial status", func(r *ledgerv1.PostTransactionRequest) {
			r.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED
		}, ReasonInvalidArgument, codes.InvalidArgument},
		{"both account id and name", func(r *ledgerv1.PostTransactionRequest) {
			r.Entries[0].AccountId = otherIDs["receivable-from-employee:e1"]
		}, ReasonInvalidArgument, codes.InvalidArgument},
	}
	before, beforeOther := e.counts(t, tenant), e.counts(t, other)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ok()
			c.mutate(r)
			_, err := e.rpc.PostTransaction(ctx, r)
			st := status.Convert(err)
			require.Equal(t, c.code, st.Code(), "message: %s", st.Message())
			require.Contains(t, st.Message(), string(c.reason)+": ")
			requireReason(t, FromStatus(err), c.reason)

			// The same posting inside a batch fails alone, with the same reason.
			// (A batch's items inherit its tenant, so a missing tenant is the batch's.)
			b, err := e.rpc.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: r.TenantId, Transactions: []*ledgerv1.PostTransactionRequest{r}})
			if c.reason == ReasonMissingTenant {
				requireReason(t, FromStatus(err), ReasonMissingTenant)
				return
			}
			require.NoError(t, err)
			requireReason(t, ItemError(b.GetResults()[0]), c.reason)
		})
	}
	require.Equal(t, before, e.counts(t, tenant), "nothing written for the tenant")
	require.Equal(t, beforeOther, e.counts(t, other), "nothing written for the other tenant")

	// Commit/void/reverse of a transaction that does not exist, and malformed ids.
	_, err = e.rpc.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: "not-a-uuid"})
	requireReason(t, FromStatus(err), ReasonInvalidArgument)
	_, err = e.rpc.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "receivable-from-employee:ghost"})
	requireReason(t, FromStatus(err), ReasonAccountNotFound)
	_, err = e.rpc.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: tenant, AccountName: "payroll-clearing", PageToken: "%%%"})
	requireReason(t, FromStatus(err), ReasonInvalidArgument)
	_, err = e.rpc.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: make([]*ledgerv1.PostTransactionRequest, MaxBatch+1)})
	requireReason(t, FromStatus(err), ReasonBatchTooLarge)
	require.Equal(t, before, e.counts(t, tenant))
}

// TestGetBalancesBadInput: no accounts, more than MaxGetBalances, an account named twice (an id
// in any spelling), a malformed account at any position, or a bad tenant or as_of refuses the
// whole GetBalances call with InvalidArgument and the reason GetBalance gives for the same field,
// its message naming the account's position. None counts against the breaker, none is Internal,
// and nothing is written.
func TestGetBalancesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k1", "payroll-clearing", "fee-income", 100))
	require.NoError(t, err)
	id := ids["payroll-clearing"]
	byName := func(n string) *ledgerv1.AccountRef { return &ledgerv1.AccountRef{AccountName: n} }
	byID := func(id string) *ledgerv1.AccountRef { return &ledgerv1.AccountRef{AccountId: id} }
	tooMany := make([]*ledgerv1.AccountRef, MaxGetBalances+1)
	for i := range tooMany {
		tooMany[i] = byName(fmt.Sprintf("receivable-from-employee:e%d", i))
	}
	cases := []struct {
		name     string
		tenant   string
		accounts []*ledgerv1.AccountRef
		asOf     *timestamppb.Timestamp
		reason   Reason
		message  string
	}{
		{"no accounts", tenant, nil, nil, ReasonInvalidArgument, "accounts is required: 1 to 100 accounts"},
		{"over the maximum", tenant, tooMany, nil, ReasonBatchTooLarge, "accounts has 101 accounts, more than the maximum of 100"},
		{"over the maximum, all one account", tenant, slices.Repeat([]*ledgerv1.AccountRef{byName("fee-income")}, MaxGetBalances+1), nil, ReasonBatchTooLarge, "more than the maximum of 100"},
		{"a name twice", tenant, []*ledgerv1.AccountRef{byName("fee-income"), byID(id), byName("fee-income")}, nil, ReasonInvalidArgument, "accounts[2] names the same account as accounts[0]"},
		{"an id twice", tenant, []*ledgerv1.AccountRef{byID(id), byID(id)}, nil, ReasonInvalidArgument, "accounts[1] names the same account as accounts[0]"},
		{"an id twice, spelled apart", tenant, []*ledgerv1.AccountRef{byName("fee-income"), byID(strings.ToUpper(id)), byID("{" + id + "}")}, nil, ReasonInvalidArgument, "accounts[2] names the same account as accounts[1]"},
		{"an unknown id twice", tenant, []*ledgerv1.AccountRef{byID(otherUUID), byID(otherUUID)}, nil, ReasonInvalidArgument, "accounts[1] names the same account as accounts[0]"},
		{"not a uuid", tenant, []*ledgerv1.AccountRef{byName("fee-income"), byID("not-a-uuid")}, nil, ReasonInvalidArgument, "accounts[1]: account_id must be a uuid"},
		{"a uuid one digit too long", tenant, []*ledgerv1.AccountRef{byID("12345678-1234-1234-1234-1234567890123")}, nil, ReasonInvalidArgument, "accounts[0]: account_id must be a uuid"},
		{"a name not in the chart", tenant, []*ledgerv1.AccountRef{byName("fee-income"), byName("cash")}, nil, ReasonInvalidAccountName, "accounts[1]: "},
		{"a name with a NUL", tenant, []*ledgerv1.AccountRef{byName("fee-income\x00")}, nil, ReasonInvalidAccountName, "accounts[0]: "},
		{"an oversized name", tenant, []*ledgerv1.AccountRef{byName(strings.Repeat("a", 4096))}, nil, ReasonInvalidAccountName, "accounts[0]: "},
		{"both id and name", tenant, []*ledgerv1.AccountRef{{AccountId: id, AccountName: "fee-income"}}, nil, ReasonInvalidArgument, "accounts[0]: set account_id or account_name, not both"},
		{"neither id nor name", tenant, []*ledgerv1.AccountRef{byName("fee-income"), {}}, nil, ReasonInvalidArgument, "accounts[1]: account_id or account_name is required"},
		{"no tenant", "", []*ledgerv1.AccountRef{byName("fee-income")}, nil, ReasonMissingTenant, "tenant_id"},
		{"bad tenant", "a\x00b", []*ledgerv1.AccountRef{byName("fee-income")}, nil, ReasonInvalidArgument, "tenant_id"},
		{"as_of out of range", tenant, []*ledgerv1.AccountRef{byName("fee-income")}, &timestamppb.Timestamp{Seconds: 253402300800}, ReasonInvalidArgument, "as_of"},
		{"as_of malformed", tenant, []*ledgerv1.AccountRef{byName("fee-income")}, &timestamppb.Timestamp{Seconds: 1, Nanos: -1}, ReasonInvalidArgument, "as_of"},
	}
	before := e.counts(t, tenant)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.rpc.GetBalances(ctx, &ledgerv1.GetBalancesRequest{TenantId: c.tenant, Accounts: c.accounts, AsOf: c.asOf})
			st := status.Convert(err)
			require.Equal(t, codes.InvalidArgument, st.Code(), "message: %s", st.Message())
			require.Contains(t, st.Message(), string(c.reason)+": ")
			requireReason(t, FromStatus(err), c.reason)
			require.Contains(t, st.Message(), c.message)

			// Through the client: the same *Error, and the breaker stays closed.
			_, err = e.client.GetBalances(ctx, &ledgerv1.GetBalancesRequest{TenantId: c.tenant, Accounts: c.accounts, AsOf: c.asOf})
			requireReason(t, err, c.reason)
		})
	}
	// A malformed account refuses the call with the reason GetBalance gives for it alone.
	for _, ref := range []*ledgerv1.AccountRef{byID("not-a-uuid"), byName("cash"), {AccountId: id, AccountName: "fee-income"}, {}} {
		_, one := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountId: ref.AccountId, AccountName: ref.AccountName})
		_, many := e.client.GetBalances(ctx, &ledgerv1.GetBalancesRequest{TenantId: tenant, Accounts: []*ledgerv1.AccountRef{byName("fee-income"), ref}})
		var o, m *Error
		require.ErrorAs(t, one, &o)
		require.ErrorAs(t, many, &m)
		require.Equal(t, o.Reason, m.Reason, "%v", ref)
		require.Equal(t, "accounts[1]: "+o.Message, m.Message, "%v", ref)
	}
	require.Equal(t, before, e.counts(t, tenant), "nothing written")
	require.Equal(t, "closed", e.client.BreakerState(), "a caller's error does not count against the breaker")
	require.Zero(t, testutil.ToFloat64(e.metrics.requests.WithLabelValues("GetBalances", string(ReasonInternal))))
}

// otherUUID is a well-formed id no account has.
const otherUUID = "00000000-0000-4000-8000-000000000000"
