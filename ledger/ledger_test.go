package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func TestEnsureAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")

	r1, err := e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "payable-to-fi-partner[fi-7]"})
	require.NoError(t, err)
	require.True(t, r1.GetCreated())
	a := r1.GetAccount()
	require.Equal(t, ledgerv1.AccountType_ACCOUNT_TYPE_LIABILITY, a.GetType())
	require.Equal(t, ledgerv1.Direction_DIRECTION_CREDIT, a.GetNormalSide())
	require.Equal(t, "ETB", a.GetCurrency())

	r2, err := e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "payable-to-fi-partner[fi-7]",
		Type: ledgerv1.AccountType_ACCOUNT_TYPE_LIABILITY})
	require.NoError(t, err)
	require.False(t, r2.GetCreated(), "ensure is idempotent by tenant and name")
	require.Equal(t, a.GetId(), r2.GetAccount().GetId())

	_, err = e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "payable-to-fi-partner[fi-7]", Currency: "USD"})
	requireReason(t, err, ReasonAccountConflict)
	require.Equal(t, codes.AlreadyExists, status.Code(ToStatus(err).Err()))

	_, err = e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "cash"})
	requireReason(t, err, ReasonInvalidAccountName)
	_, err = e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "misc-loss", Type: ledgerv1.AccountType_ACCOUNT_TYPE_ASSET})
	requireReason(t, err, ReasonInvalidAccountType)

	for _, n := range []string{"receivable-from-employee:emp-1", "equb:pool:" + tenant + ":cycle-3", "partner-bank:cbe:1000123", "fee-income", "misc-loss"} {
		_, err := e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err, n)
	}
	g, err := e.client.GetAccount(ctx, &ledgerv1.GetAccountRequest{TenantId: tenant, AccountName: "fee-income"})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.AccountType_ACCOUNT_TYPE_INCOME, g.GetAccount().GetType())
	g2, err := e.client.GetAccount(ctx, &ledgerv1.GetAccountRequest{TenantId: tenant, AccountId: g.GetAccount().GetId()})
	require.NoError(t, err)
	require.Equal(t, "fee-income", g2.GetAccount().GetName())

	// Paging through every account, two at a time, returns each once in name order.
	var names []string
	token := ""
	for {
		l, err := e.client.ListAccounts(ctx, &ledgerv1.ListAccountsRequest{TenantId: tenant, PageSize: 2, PageToken: token})
		require.NoError(t, err)
		for _, a := range l.GetAccounts() {
			names = append(names, a.GetName())
		}
		if token = l.GetNextPageToken(); token == "" {
			break
		}
	}
	require.Equal(t, []string{"equb:pool:" + tenant + ":cycle-3", "fee-income", "misc-loss", "partner-bank:cbe:1000123",
		"payable-to-fi-partner[fi-7]", "receivable-from-employee:emp-1"}, names)
	l, err := e.client.ListAccounts(ctx, &ledgerv1.ListAccountsRequest{TenantId: tenant, NamePrefix: "partner-bank:cbe:"})
	require.NoError(t, err)
	require.Len(t, l.GetAccounts(), 1)
}

func TestPostAndReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "receivable-from-employee:e1")

	req := twoLeg(tenant, "ewa-repay-1", "payroll-clearing", "receivable-from-employee:e1", 12_345)
	req.Metadata = map[string]string{"ewa_request_id": "r-1"}
	req.Lineage = &ledgerv1.Lineage{WorkflowId: "wf-1", RunId: "run-1", Step: "post-repayment"}
	r1, err := e.client.PostTransaction(ctx, req)
	require.NoError(t, err)
	require.False(t, r1.GetReplayed())
	tx := r1.GetTransaction()
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
	require.Len(t, tx.GetEntries(), 2)
	require.Equal(t, "wf-1", tx.GetLineage().GetWorkflowId())
	require.NotNil(t, tx.GetPostedAt())

	// Same key, same content (entries in another order, a new run id): the original comes back.
	again := twoLeg(tenant, "ewa-repay-1", "payroll-clearing", "receivable-from-employee:e1", 12_345)
	again.Entries[0], again.Entries[1] = again.Entries[1], again.Entries[0]
	again.Metadata = map[string]string{"ewa_request_id": "r-1"}
	again.Lineage = &ledgerv1.Lineage{WorkflowId: "wf-1", RunId: "run-2", Step: "post-repayment"}
	r2, err := e.client.PostTransaction(ctx, again)
	require.NoError(t, err)
	require.True(t, r2.GetReplayed())
	require.Equal(t, tx.GetId(), r2.GetTransaction().GetId())
	require.Equal(t, "run-1", r2.GetTransaction().GetLineage().GetRunId(), "the replay returns the original")
	require.Len(t, r2.GetTransaction().GetEntries(), 2)

	// Same key, other content: a distinct error, nothing written.
	before := e.counts(t, tenant)
	_, err = e.client.PostTransaction(ctx, twoLeg(tenant, "ewa-repay-1", "payroll-clearing", "receivable-from-employee:e1", 12_346))
	requireReason(t, err, ReasonIdempotencyConflict)
	require.Equal(t, before, e.counts(t, tenant))

	b := e.balance(t, tenant, "payroll-clearing")
	require.Equal(t, int64(12_345), b.GetPostedSantim())
	require.Equal(t, int64(12_345), b.GetAvailableSantim())
	b = e.balance(t, tenant, "receivable-from-employee:e1")
	require.Equal(t, int64(-12_345), b.GetPostedSantim(), "a credit lowers a debit-normal account")

	g, err := e.client.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, IdempotencyKey: "ewa-repay-1"})
	require.NoError(t, err)
	require.Equal(t, tx.GetId(), g.GetTransaction().GetId())
	require.Equal(t, "r-1", g.GetTransaction().GetMetadata()["ewa_request_id"])
}

func TestTwoPhase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "partner-bank:cbe:funding", "receivable-from-employee:e1", "payable-to-employee:e2")

	hold := func(key string, amount int64) *ledgerv1.Transaction {
		req := twoLeg(tenant, key, "receivable-from-employee:e1", "partner-bank:cbe:funding", amount)
		req.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
		r, err := e.client.PostTransaction(ctx, req)
		require.NoError(t, err)
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING, r.GetTransaction().GetStatus())
		return r.GetTransaction()
	}
	p1 := hold("disburse-1", 10_000)
	p2 := hold("disburse-2", 3_000)

	b := e.balance(t, tenant, "partner-bank:cbe:funding")
	require.Equal(t, int64(0), b.GetPostedSantim())
	require.Equal(t, int64(13_000), b.GetPendingCreditsSantim())
	require.Equal(t, int64(-13_000), b.GetAvailableSantim(), "outgoing holds reduce what is available")
	b = e.balance(t, tenant, "receivable-from-employee:e1")
	require.Equal(t, int64(13_000), b.GetPendingDebitsSantim())
	require.Equal(t, int64(0), b.GetAvailableSantim(), "incoming holds are not available before commit")
	require.Equal(t, int64(13_000), b.GetPendingSantim())

	c, err := e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: p1.GetId()})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, c.GetTransaction().GetStatus())
	require.Len(t, c.GetTransaction().GetEntries(), 6, "holds, posted copies, releases")
	v, err := e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: p2.GetId(), Reason: "account lookup failed"})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, v.GetTransaction().GetStatus())
	require.Equal(t, "account lookup failed", v.GetTransaction().GetVoidReason())

	b = e.balance(t, tenant, "partner-bank:cbe:funding")
	require.Equal(t, int64(-10_000), b.GetPostedSantim())
	require.Equal(t, int64(0), b.GetPendingCreditsSantim())
	require.Equal(t, int64(0), b.GetPendingDebitsSantim())

	// At most once, and never the other way round; nothing is written by a refused call.
	before := e.counts(t, tenant)
	_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: p1.GetId()})
	requireReason(t, err, ReasonAlreadyPosted)
	_, err = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: p1.GetId()})
	requireReason(t, err, ReasonAlreadyPosted)
	_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: p2.GetId()})
	requireReason(t, err, ReasonAlreadyVoided)
	_, err = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: p2.GetId()})
	requireReason(t, err, ReasonAlreadyVoided)
	_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: "6f1c1d7e-64b4-4d8f-9d0c-1a5e3b1f2a77"})
	requireReason(t, err, ReasonTransactionNotFound)
	require.Equal(t, before, e.counts(t, tenant))
}

func TestReverse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "receivable-from-borrower:b1", "fee-income")

	post, err := e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "repay-1",
		Entries: []*ledgerv1.EntryInput{leg("payroll-clearing", dr, 1_000), leg("receivable-from-borrower:b1", cr, 900), leg("fee-income", cr, 100)}})
	require.NoError(t, err)
	orig := post.GetTransaction()

	r, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: orig.GetId(), Reason: "posted twice by mistake", IdempotencyKey: "rev-1"})
	require.NoError(t, err)
	require.False(t, r.GetReplayed())
	rev := r.GetReversal()
	require.Equal(t, ledgerv1.TransactionKind_TRANSACTION_KIND_REVERSAL, rev.GetKind())
	require.Equal(t, orig.GetId(), rev.GetReversesTransactionId())
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, r.GetOriginal().GetStatus())
	require.Equal(t, rev.GetId(), r.GetOriginal().GetReversedByTransactionId())
	require.Len(t, rev.GetEntries(), 3)
	for _, a := range []string{"payroll-clearing", "receivable-from-borrower:b1", "fee-income"} {
		b := e.balance(t, tenant, a)
		require.Equal(t, int64(0), b.GetPostedSantim(), "reversal nets %s to zero", a)
		require.Equal(t, b.GetPostedDebitsSantim(), b.GetPostedCreditsSantim())
	}

	// The same call again (an activity retry) returns the first reversal.
	r2, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: orig.GetId(), Reason: "posted twice by mistake", IdempotencyKey: "rev-1"})
	require.NoError(t, err)
	require.True(t, r2.GetReplayed())
	require.Equal(t, rev.GetId(), r2.GetReversal().GetId())

	before := e.counts(t, tenant)
	_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: orig.GetId(), Reason: "again", IdempotencyKey: "rev-2"})
	requireReason(t, err, ReasonAlreadyReversed)
	_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: rev.GetId(), Reason: "undo the undo", IdempotencyKey: "rev-3"})
	requireReason(t, err, ReasonNotReversible)
	_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: orig.GetId(), Reason: "other reason", IdempotencyKey: "rev-1"})
	requireReason(t, err, ReasonIdempotencyConflict)
	_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: orig.GetId(), Reason: "no key"})
	requireReason(t, err, ReasonMissingIdempotencyKey)

	pend := twoLeg(tenant, "hold-1", "payroll-clearing", "fee-income", 5)
	pend.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	p, err := e.client.PostTransaction(ctx, pend)
	require.NoError(t, err)
	before.transactions++
	before.entries += 2
	_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: p.GetTransaction().GetId(), Reason: "x", IdempotencyKey: "rev-4"})
	requireReason(t, err, ReasonNotPosted)
	require.Equal(t, before, e.counts(t, tenant))
}

func TestPostAdjustment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "misc-loss", "receivable-from-employee:e9")

	req := func() *ledgerv1.PostAdjustmentRequest {
		return &ledgerv1.PostAdjustmentRequest{
			TenantId: tenant, IdempotencyKey: "dispute-42-adjust",
			Adjustment: &ledgerv1.Adjustment{Source: "dispute", Reason: "dsp_42:duplicate charge confirmed by partner",
				ApprovedBy: "admin-1", RequestedBy: "operator-7"},
			Entries: []*ledgerv1.EntryInput{leg("misc-loss", dr, 2_500), leg("receivable-from-employee:e9", cr, 2_500)},
		}
	}
	before := e.counts(t, tenant)
	_, err := e.client.PostAdjustment(ctx, req())
	requireReason(t, err, ReasonSignatureMissing)

	forged := req()
	SignAdjustmentRequest([]byte("some-other-key-that-is-long-enough-xx"), forged)
	_, err = e.client.PostAdjustment(ctx, forged)
	requireReason(t, err, ReasonSignatureInvalid)

	tampered := req()
	SignAdjustmentRequest(testAdjustmentKey, tampered)
	tampered.Entries[0].AmountSantim, tampered.Entries[1].AmountSantim = 25_000, 25_000
	_, err = e.client.PostAdjustment(ctx, tampered)
	requireReason(t, err, ReasonSignatureInvalid)

	self := req()
	self.Adjustment.ApprovedBy = "operator-7"
	SignAdjustmentRequest(testAdjustmentKey, self)
	_, err = e.client.PostAdjustment(ctx, self)
	requireReason(t, err, ReasonSelfApproved)
	require.Equal(t, codes.PermissionDenied, ReasonSelfApproved.Code())
	require.Equal(t, before, e.counts(t, tenant), "refused adjustments write nothing")

	ok := req()
	SignAdjustmentRequest(testAdjustmentKey, ok)
	r, err := e.client.PostAdjustment(ctx, ok)
	require.NoError(t, err)
	tx := r.GetTransaction()
	require.Equal(t, ledgerv1.TransactionKind_TRANSACTION_KIND_ADJUSTMENT, tx.GetKind())
	require.Equal(t, "dsp_42:duplicate charge confirmed by partner", tx.GetAdjustment().GetReason(), "reason kept verbatim")
	require.Equal(t, "admin-1", tx.GetAdjustment().GetApprovedBy())
	require.Equal(t, int64(2_500), e.balance(t, tenant, "misc-loss").GetPostedSantim())

	r2, err := e.client.PostAdjustment(ctx, ok)
	require.NoError(t, err)
	require.True(t, r2.GetReplayed())
	require.Equal(t, tx.GetId(), r2.GetTransaction().GetId())

	// An adjustment is reversible like any posting.
	rv, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: tx.GetId(), Reason: "dispute reopened", IdempotencyKey: "dispute-42-undo"})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, rv.GetOriginal().GetStatus())
	require.Equal(t, int64(0), e.balance(t, tenant, "misc-loss").GetPostedSantim())
}

func TestPostTransactionsBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "receivable-from-employee:a", "receivable-from-employee:b")

	_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k-old", "payroll-clearing", "receivable-from-employee:a", 7))
	require.NoError(t, err)

	var items []*ledgerv1.PostTransactionRequest
	for i := range 300 {
		items = append(items, twoLeg("", "k-"+string(rune('A'+i%26))+time.Duration(i).String(), "payroll-clearing", "receivable-from-employee:b", int64(i+1)))
	}
	unbalanced := twoLeg("", "k-bad", "payroll-clearing", "receivable-from-employee:b", 5)
	unbalanced.Entries[1].AmountSantim = 4
	items = append(items,
		unbalanced,
		twoLeg("", "k-unknown", "payroll-clearing", "receivable-from-employee:nobody", 5),
		twoLeg("", "k-old", "payroll-clearing", "receivable-from-employee:a", 7),  // replay of an earlier call
		twoLeg("", "k-old", "payroll-clearing", "receivable-from-employee:a", 8),  // conflict with it
		twoLeg("", "k-dup", "payroll-clearing", "receivable-from-employee:a", 9),  // new
		twoLeg("", "k-dup", "payroll-clearing", "receivable-from-employee:a", 9),  // same key again in the batch
		twoLeg("", "k-dup", "payroll-clearing", "receivable-from-employee:a", 10), // same key, other content
		twoLeg("other-tenant", "k-x", "payroll-clearing", "receivable-from-employee:a", 1),
	)
	r, err := e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: items})
	require.NoError(t, err)
	res := r.GetResults()
	require.Len(t, res, len(items))
	var sum int64
	for i := range 300 {
		require.NoError(t, ItemError(res[i]))
		require.False(t, res[i].GetReplayed())
		sum += int64(i + 1)
	}
	n := 300
	requireReason(t, ItemError(res[n]), ReasonUnbalanced)
	requireReason(t, ItemError(res[n+1]), ReasonAccountNotFound)
	require.NoError(t, ItemError(res[n+2]))
	require.True(t, res[n+2].GetReplayed())
	requireReason(t, ItemError(res[n+3]), ReasonIdempotencyConflict)
	require.NoError(t, ItemError(res[n+4]))
	require.NoError(t, ItemError(res[n+5]))
	require.True(t, res[n+5].GetReplayed())
	require.Equal(t, res[n+4].GetTransaction().GetId(), res[n+5].GetTransaction().GetId())
	requireReason(t, ItemError(res[n+6]), ReasonIdempotencyConflict)
	requireReason(t, ItemError(res[n+7]), ReasonInvalidArgument)
	require.Equal(t, int32(codes.InvalidArgument), res[n].GetErrorCode())

	require.Equal(t, -sum, e.balance(t, tenant, "receivable-from-employee:b").GetPostedSantim())
	require.Equal(t, sum+7+9, e.balance(t, tenant, "payroll-clearing").GetPostedSantim())
	c := e.counts(t, tenant)
	require.Equal(t, 1+300+1, c.transactions)
	require.Equal(t, 2*(1+300+1), c.entries)

	// The whole batch is replayable: a second call writes nothing and replays every success.
	r, err = e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: items[:300]})
	require.NoError(t, err)
	for _, it := range r.GetResults() {
		require.True(t, it.GetReplayed())
	}
	require.Equal(t, c, e.counts(t, tenant))
}

func TestBalanceAsOfAndEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	e.store.CheckpointEvery = 3

	var marks []time.Time
	for i := range 10 {
		_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k"+time.Duration(i).String(), "payroll-clearing", "fee-income", 100))
		require.NoError(t, err)
		if i%2 == 1 {
			e.balance(t, tenant, "fee-income") // writes checkpoints along the way
		}
		marks = append(marks, time.Now())
	}
	for i, m := range marks {
		r, err := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "fee-income", AsOf: timestamppb.New(m)})
		require.NoError(t, err)
		require.Equal(t, int64(100*(i+1)), r.GetBalance().GetPostedSantim(), "as of after posting %d", i)
	}
	r, err := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "fee-income", AsOf: timestamppb.New(marks[0].Add(-time.Hour))})
	require.NoError(t, err)
	require.Equal(t, int64(0), r.GetBalance().GetPostedSantim())
	require.Positive(t, e.counts(t, tenant).checkpoints)

	var seqs []int64
	token := ""
	for {
		l, err := e.client.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: tenant, AccountName: "fee-income", PageSize: 4, PageToken: token})
		require.NoError(t, err)
		for _, en := range l.GetEntries() {
			seqs = append(seqs, en.GetSeq())
			require.Equal(t, ledgerv1.Direction_DIRECTION_CREDIT, en.GetDirection())
		}
		if token = l.GetNextPageToken(); token == "" {
			break
		}
	}
	require.Len(t, seqs, 10)
	require.IsIncreasing(t, seqs)
	l, err := e.client.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: tenant, AccountName: "fee-income",
		From: timestamppb.New(marks[3]), To: timestamppb.New(marks[6])})
	require.NoError(t, err)
	require.Len(t, l.GetEntries(), 3, "entries of postings 4, 5 and 6")

	v, err := e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Positive(t, v.GetCheckpointsChecked())
	require.Empty(t, v.GetMismatches())
}
