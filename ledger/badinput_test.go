package ledger

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
