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

// voidKey voids by key through the wire, as a saga whose posting step never answered does.
func (e *env) voidKey(ctx context.Context, tenant, key string) (*ledgerv1.VoidPendingResponse, error) {
	return e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, IdempotencyKey: key, Reason: "UNANSWERED"})
}

// A void by key with no transaction under the key voids the key: every later posting under it,
// single, batched (beside a posting that goes through) or a reversal, is refused KEY_VOIDED and
// writes nothing. Voiding it again answers the same.
func TestVoidByKeyRefusesEveryLaterPostingUnderTheKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := testkit.Unique("vk")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	before := e.balance(t, tenant, "payroll-clearing").GetAvailableSantim()
	rows := e.counts(t, tenant)

	const key = "saga-1:disburse"
	for range 2 {
		r, err := e.voidKey(ctxT(t), tenant, key)
		require.NoError(t, err)
		require.True(t, r.GetKeyVoided())
		require.Nil(t, r.GetTransaction())
	}

	_, err := e.client.PostTransaction(ctxT(t), pendingTwoLeg(tenant, key, 500))
	requireReason(t, err, ReasonKeyVoided)
	_, err = e.rpc.PostTransaction(ctxT(t), pendingTwoLeg(tenant, key, 500))
	require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)

	br, err := e.rpc.PostTransactions(ctxT(t), &ledgerv1.PostTransactionsRequest{TenantId: tenant,
		Transactions: []*ledgerv1.PostTransactionRequest{pendingTwoLeg(tenant, key, 500), pendingTwoLeg(tenant, "other", 70)}})
	require.NoError(t, err)
	require.Equal(t, string(ReasonKeyVoided), br.GetResults()[0].GetErrorReason())
	require.Empty(t, br.GetResults()[1].GetErrorReason(), "the batch's other posting is written")

	posted, err := e.rpc.PostTransaction(ctxT(t), twoLeg(tenant, "paid", "fee-income", "payroll-clearing", 30))
	require.NoError(t, err)
	_, err = e.client.Reverse(ctxT(t), &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: posted.GetTransaction().GetId(),
		Reason: "refund", IdempotencyKey: key})
	requireReason(t, err, ReasonKeyVoided)

	e.requireNoTransaction(t, tenant, key)
	got := e.counts(t, tenant)
	require.Equal(t, rows.transactions+2, got.transactions, "the batch's other posting and the posted one, nothing under the key")
	require.Equal(t, before-70-30, e.balance(t, tenant, "payroll-clearing").GetAvailableSantim())
}

// A void by key that meets a posting under the key still in flight (written, not yet committed:
// waiting for its account's lock) waits for it and voids the transaction it commits.
func TestVoidByKeyWaitsForThePostingInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := testkit.Unique("vk")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	before := e.balance(t, tenant, "payroll-clearing").GetAvailableSantim()
	release := e.holdAccountLock(t, ids["payroll-clearing"])

	const key = "saga-2:disburse"
	posted := make(chan error, 1)
	go func() {
		_, err := e.rpc.PostTransaction(ctxT(t), pendingTwoLeg(tenant, key, 500))
		posted <- err
	}()
	e.waitLockWaiters(t, 1, 10*time.Second, "the posting waits for its account")
	voided := make(chan *ledgerv1.VoidPendingResponse, 1)
	voidErr := make(chan error, 1)
	go func() {
		r, err := e.voidKey(ctxT(t), tenant, key)
		voided <- r
		voidErr <- err
	}()
	e.waitLockWaiters(t, 2, 10*time.Second, "the void waits for the posting's key")
	release()

	require.NoError(t, <-posted)
	r := <-voided
	require.NoError(t, <-voidErr)
	require.False(t, r.GetKeyVoided())
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, r.GetTransaction().GetStatus())
	require.Equal(t, before, e.balance(t, tenant, "payroll-clearing").GetAvailableSantim(), "no hold left behind")
}

// A posting that reaches the key while a void of it is under way (the key's lock held, the key
// recorded, not yet committed) waits for the void and is refused: it reads the voided keys only
// once it holds the lock.
func TestPostingArrivingDuringAVoidByKeyIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := testkit.Unique("vk")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	before := e.balance(t, tenant, "payroll-clearing").GetAvailableSantim()

	const key = "saga-3:disburse"
	tx, err := e.db.App.Begin(ctxT(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(ctxT(t), `SELECT set_config('app.tenant_id', $1, true)`, tenant)
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), `SELECT pg_advisory_xact_lock(ledger.key_lock_class(), ledger.key_lock_key($1, $2))`, tenant, key)
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), `INSERT INTO ledger.voided_keys (tenant_id, idempotency_key, reason) VALUES ($1, $2, 'UNANSWERED')`, tenant, key)
	require.NoError(t, err)

	posted := make(chan error, 1)
	go func() {
		_, err := e.client.PostTransaction(ctxT(t), pendingTwoLeg(tenant, key, 500))
		posted <- err
	}()
	e.waitLockWaiters(t, 1, 10*time.Second, "the posting waits for the void's key lock")
	require.NoError(t, tx.Commit(ctxT(t)))

	requireReason(t, <-posted, ReasonKeyVoided)
	e.requireNoTransaction(t, tenant, key)
	require.Equal(t, before, e.balance(t, tenant, "payroll-clearing").GetAvailableSantim(), "no hold")
}

// A void by key of a posted transaction is ALREADY_POSTED, of a voided one ALREADY_VOIDED, as by
// id; both names at once are refused.
func TestVoidByKeyOfASettledTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := testkit.Unique("vk")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	_, err := e.rpc.PostTransaction(ctxT(t), twoLeg(tenant, "posted", "fee-income", "payroll-clearing", 30))
	require.NoError(t, err)
	_, err = e.voidKey(ctxT(t), tenant, "posted")
	requireReason(t, err, ReasonAlreadyPosted)

	p, err := e.rpc.PostTransaction(ctxT(t), pendingTwoLeg(tenant, "held", 40))
	require.NoError(t, err)
	r, err := e.voidKey(ctxT(t), tenant, "held")
	require.NoError(t, err)
	require.Equal(t, p.GetTransaction().GetId(), r.GetTransaction().GetId())
	_, err = e.voidKey(ctxT(t), tenant, "held")
	requireReason(t, err, ReasonAlreadyVoided)

	_, err = e.client.VoidPending(ctxT(t), &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: p.GetTransaction().GetId(), IdempotencyKey: "held"})
	requireReason(t, err, ReasonInvalidArgument)
}
