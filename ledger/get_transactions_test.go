package ledger

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestGetTransactions reads a full batch (MaxGetTransactions ids) in one call: the tenant's
// transactions come back in request order, each exactly as GetTransaction returns it; unknown
// ids and another tenant's are left out; repeated ids (in any spelling) are answered once.
func TestGetTransactions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant, other := testkit.Unique("t"), testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	e.ensure(t, other, "payroll-clearing", "fee-income")

	const n = 900
	batch := &ledgerv1.PostTransactionsRequest{TenantId: tenant}
	for i := range n {
		p := twoLeg(tenant, fmt.Sprintf("gt-%d", i), "payroll-clearing", "fee-income", int64(100+i))
		p.Metadata = map[string]string{"bank_reference": fmt.Sprintf("FT%05d", i)}
		if i%3 == 0 {
			p.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
		}
		batch.Transactions = append(batch.Transactions, p)
	}
	posted, err := e.client.PostTransactions(ctx, batch)
	require.NoError(t, err)
	ids := make([]string, n)
	for i, r := range posted.GetResults() {
		require.NoError(t, ItemError(r))
		ids[i] = r.GetTransaction().GetId()
	}
	// Every status and kind a transaction can have: committed, voided, reversed, a reversal.
	_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: ids[0]})
	require.NoError(t, err)
	_, err = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: ids[3], Reason: "lookup failed"})
	require.NoError(t, err)
	rev, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: ids[1], Reason: "refund", IdempotencyKey: "gt-rev"})
	require.NoError(t, err)
	ids = append(ids, rev.GetReversal().GetId())
	theirs, err := e.client.PostTransaction(ctx, twoLeg(other, "gt-other", "payroll-clearing", "fee-income", 7))
	require.NoError(t, err)

	// Newest first (not the ledger's order), with the other tenant's id, unknown ids and
	// repeats mixed in, padded with repeats to exactly the maximum.
	want := slices.Clone(ids)
	slices.Reverse(want)
	req := slices.Clone(want)
	req = slices.Insert(req, 10, theirs.GetTransaction().GetId())
	req = slices.Insert(req, 20, uuid.NewString())
	req = slices.Insert(req, 30, want[5], strings.ToUpper(want[6]), "{"+want[7]+"}")
	for len(req) < MaxGetTransactions {
		req = append(req, want[len(req)%len(want)])
	}
	require.Len(t, req, MaxGetTransactions)

	resp, err := e.client.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: tenant, TransactionIds: req})
	require.NoError(t, err)
	got := resp.GetTransactions()
	gotIDs := make([]string, len(got))
	for i, tx := range got {
		gotIDs[i] = tx.GetId()
	}
	require.Equal(t, want, gotIDs, "the tenant's transactions, each once, in the order first asked for")
	for i, tx := range got {
		if i%50 != 0 && !slices.Contains([]string{ids[0], ids[1], ids[3], rev.GetReversal().GetId()}, tx.GetId()) {
			continue
		}
		one, err := e.client.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: tx.GetId()})
		require.NoError(t, err)
		require.True(t, proto.Equal(one.GetTransaction(), tx), "%s: as GetTransaction returns it\nbatch: %v\n  one: %v", tx.GetId(), tx, one.GetTransaction())
		require.NotEmpty(t, tx.GetEntries())
	}
	byID := map[string]*ledgerv1.Transaction{}
	for _, tx := range got {
		byID[tx.GetId()] = tx
	}
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, byID[ids[0]].GetStatus())
	require.Len(t, byID[ids[0]].GetEntries(), 6, "holds, posted copies, releases")
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, byID[ids[1]].GetStatus())
	require.Equal(t, rev.GetReversal().GetId(), byID[ids[1]].GetReversedByTransactionId())
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, byID[ids[3]].GetStatus())
	require.Equal(t, "FT00899", byID[ids[n-1]].GetMetadata()["bank_reference"])
	require.Equal(t, "gt-899", byID[ids[n-1]].GetIdempotencyKey())

	// omit_entries: the same transactions without their entries.
	lean, err := e.client.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: tenant, TransactionIds: req, OmitEntries: true})
	require.NoError(t, err)
	require.Len(t, lean.GetTransactions(), len(got))
	for i, tx := range lean.GetTransactions() {
		full := proto.Clone(got[i]).(*ledgerv1.Transaction)
		full.Entries = nil
		require.True(t, proto.Equal(full, tx), "%s without entries", tx.GetId())
	}

	// The other tenant sees only its own; nobody's ids answer an empty list.
	mine, err := e.client.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: other, TransactionIds: req})
	require.NoError(t, err)
	require.Len(t, mine.GetTransactions(), 1)
	require.Equal(t, theirs.GetTransaction().GetId(), mine.GetTransactions()[0].GetId())
	none, err := e.client.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: testkit.Unique("t"), TransactionIds: req})
	require.NoError(t, err)
	require.Empty(t, none.GetTransactions())
	empty, err := e.client.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Empty(t, empty.GetTransactions())

	require.Equal(t, 5.0, testutil.ToFloat64(e.metrics.requests.WithLabelValues("GetTransactions", "ok")))
	resp2, err := http.Get("http://" + e.metricsAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	require.Contains(t, string(body), `svc_ledger_rpc_latency_seconds_count{rpc="GetTransactions"} 5`, "timed like every other RPC")
}

// TestGetTransactionsRefusals: more than the maximum, a malformed id or no tenant is the
// caller's error, whatever else the request holds.
func TestGetTransactionsRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")

	tooMany := make([]string, MaxGetTransactions+1)
	for i := range tooMany {
		tooMany[i] = uuid.NewString()
	}
	cases := []struct {
		name    string
		tenant  string
		ids     []string
		reason  Reason
		message string
	}{
		{"over the maximum", tenant, tooMany, ReasonBatchTooLarge, "transaction_ids has 1001 ids, more than the maximum of 1000"},
		{"over the maximum, all one id", tenant, slices.Repeat([]string{tooMany[0]}, MaxGetTransactions+1), ReasonBatchTooLarge, "transaction_ids"},
		{"not a uuid", tenant, []string{uuid.NewString(), "not-a-uuid"}, ReasonInvalidArgument, "transaction_ids[1] must be a uuid"},
		{"empty id", tenant, []string{""}, ReasonInvalidArgument, "transaction_ids[0] is required"},
		{"an id one digit too long", tenant, []string{uuid.NewString(), "12345678-1234-1234-1234-1234567890123"}, ReasonInvalidArgument, "transaction_ids[1] must be a uuid"},
		{"no tenant", "", []string{uuid.NewString()}, ReasonMissingTenant, "tenant_id"},
		{"bad tenant", "a\x00b", []string{uuid.NewString()}, ReasonInvalidArgument, "tenant_id"},
	}
	for _, c := range cases {
		_, err := e.client.GetTransactions(ctx, &ledgerv1.GetTransactionsRequest{TenantId: c.tenant, TransactionIds: c.ids})
		requireReason(t, err, c.reason)
		require.Equal(t, codes.InvalidArgument, err.(*Error).Code(), c.name)
		require.Contains(t, err.Error(), c.message, c.name)
	}
	require.Equal(t, 2.0, testutil.ToFloat64(e.metrics.requests.WithLabelValues("GetTransactions", string(ReasonBatchTooLarge))))
	require.Equal(t, "closed", e.client.BreakerState(), "a caller's error does not count against the breaker")
}
