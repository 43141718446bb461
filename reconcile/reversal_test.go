package reconcile

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/db"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// reverse reverses a ledger transaction the way an operator does, and returns the reversal's id.
func (b *books) reverse(t *testing.T, txID string) string {
	t.Helper()
	r, err := b.e.rawLed.Reverse(context.Background(), &ledgerv1.ReverseRequest{
		TenantId: b.tenant, TransactionId: txID, Reason: "posted in error", IdempotencyKey: txID + "-reversal"})
	require.NoError(t, err)
	return r.GetReversal().GetId()
}

// backdate moves a ledger transaction's entries and posting back by days, as if posted then.
// The ledger is append-only: the test's own database lifts that for one statement.
func (b *books) backdate(t *testing.T, txID string, days int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, b.e.db.OwnerDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, $2, true)`, db.TenantSetting, b.tenant); err != nil {
			return err
		}
		for _, q := range []string{
			`ALTER TABLE ledger.entries DISABLE TRIGGER entries_append_only`,
			`ALTER TABLE ledger.transactions DISABLE TRIGGER transactions_guard`,
			`UPDATE ledger.entries SET created_at = created_at - make_interval(days => $2) WHERE transaction_id = $1::uuid`,
			`UPDATE ledger.transactions SET created_at = created_at - make_interval(days => $2),
			    posted_at = posted_at - make_interval(days => $2) WHERE id = $1::uuid`,
			`SET CONSTRAINTS ALL IMMEDIATE`, // the ledger's consistency check runs before the guards return
			`ALTER TABLE ledger.entries ENABLE TRIGGER entries_append_only`,
			`ALTER TABLE ledger.transactions ENABLE TRIGGER transactions_guard`,
		} {
			var args []any
			if q[0] == 'U' {
				args = []any{txID, days}
			}
			tag, err := tx.Exec(ctx, q, args...)
			if err != nil {
				return err
			}
			if args != nil && tag.RowsAffected() == 0 {
				return fmt.Errorf("%s: no row", q)
			}
		}
		return nil
	}))
}

func (b *books) flagsByTx(t *testing.T) map[string]StoredFlag {
	t.Helper()
	all, err := b.e.store.Flags(b.ctx(), gateway.SandboxPartner, false)
	require.NoError(t, err)
	out := map[string]StoredFlag{}
	for _, f := range all {
		out[f.TxID] = f
	}
	return out
}

// An operator reverses a ledger posting the bank never made: the pair moved nothing at the bank,
// so the next run flags neither and resolves the posting's flag. Reversing a posting the bank did
// make is another matter: the ledger now expects the bank's refund, and flags its absence.
func TestReconcileReversalOfWhatTheBankNeverBooked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	paidRef, _ := b.disburse(t, 100_000, 100_000, nil)
	e.stack.WaitTransfer(t, paidRef, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	b.ensure(t, "receivable-from-employee:ghost")
	ghost := b.post(t, uniq("ghost"), "GHOST-REF-1", "receivable-from-employee:ghost", b.mirror, 33_000)

	r := e.runner()
	_, err := r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	sum, err := r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, map[FlagKind]int{MissingDebitAtBank: 1}, sum.FlagsByKind)
	require.Equal(t, int64(33_000), sum.DriftSantim)

	rev := b.reverse(t, ghost)
	sum, err = r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	require.Zero(t, sum.DriftSantim)
	require.Equal(t, sum.Scanned, sum.Matched)
	require.Equal(t, "CLEAN", b.runStatus(t, sum.RunID))
	flags := b.flagsByTx(t)
	require.Len(t, flags, 1)
	require.Equal(t, "RESOLVED", flags[ghost].Status)
	require.NotContains(t, flags, rev)

	// The paid advance reversed in the ledger without the bank's refund.
	paid, err := e.rawLed.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: b.tenant, IdempotencyKey: paidRef})
	require.NoError(t, err)
	paidRev := b.reverse(t, paid.GetTransaction().GetId())
	sum, err = r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, map[FlagKind]int{MissingCreditAtBank: 1}, sum.FlagsByKind)
	require.Equal(t, "OPEN", b.flagsByTx(t)[paidRev].Status)
	require.Equal(t, "RESOLVED", b.flagsByTx(t)[ghost].Status)
}

// The realistic order: the run of the day the ghost was posted flags it, the operator reverses it
// days later. That day's run sees only the reversal; it cancels it against the ghost, as the
// ghost's day's statement shows no line for it, and resolves the ghost's flag. Re-running the
// ghost's day then leaves it resolved. A reversal of a posting whose day's statement was never
// fetched stands on its own: whether the bank booked the posting is unknown.
func TestReconcileReversalDaysLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	b.ensure(t, "receivable-from-employee:ghost")
	ghost := b.post(t, uniq("ghost"), "GHOST-REF-1", "receivable-from-employee:ghost", b.mirror, 33_000)
	b.backdate(t, ghost, 5)
	unseen := b.post(t, uniq("ghost"), "GHOST-REF-2", "receivable-from-employee:ghost", b.mirror, 44_000)
	b.backdate(t, unseen, 9)
	then := time.Now().UTC().AddDate(0, 0, -5).Format(time.DateOnly)
	ghostDay := PairRequest{TenantID: b.tenant, Partner: gateway.SandboxPartner, From: then, To: then}

	r := e.runner()
	_, err := r.FetchStatements(context.Background(), ghostDay)
	require.NoError(t, err)
	sum, err := r.ReconcilePair(context.Background(), ghostDay)
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Equal(t, map[FlagKind]int{MissingDebitAtBank: 1}, sum.FlagsByKind, "%+v", sum)
	require.Equal(t, "OPEN", b.flagsByTx(t)[ghost].Status)

	rev := b.reverse(t, ghost)
	unseenRev := b.reverse(t, unseen)
	_, err = r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	sum, err = r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, map[FlagKind]int{MissingCreditAtBank: 1}, sum.FlagsByKind, "only the reversal of the unseen posting")
	flags := b.flagsByTx(t)
	require.Equal(t, "RESOLVED", flags[ghost].Status)
	require.NotContains(t, flags, rev)
	require.Equal(t, "OPEN", flags[unseenRev].Status)

	sum, err = r.ReconcilePair(context.Background(), ghostDay)
	require.NoError(t, err)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	require.Equal(t, 1, sum.Matched, "the ghost, cancelled by its reversal")
	require.Equal(t, "RESOLVED", b.flagsByTx(t)[ghost].Status)
}

// The bank returns a settled transfer's money (the beneficiary's bank sent it back, under the
// transfer's reference): a credit the ledger has no movement for. The operator reverses the
// posting, and the reversal, answering to its original's references, pairs with the bank's
// credit: the next run is clean and the flag resolved.
func TestReconcileReversalPairsWithTheBanksReturn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	ref, _ := b.disburse(t, 80_000, 80_000, nil)
	e.stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	e.stack.Bank(t, "POST", "/api/v1/sandbox/accounts/"+b.company+"/fund",
		map[string]any{"amountSantim": 80_000, "reference": ref}, 200, nil)

	r := e.runner()
	_, err := r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	sum, err := r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, map[FlagKind]int{MissingCreditInLedger: 1}, sum.FlagsByKind)

	paid, err := e.rawLed.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: b.tenant, IdempotencyKey: ref})
	require.NoError(t, err)
	b.reverse(t, paid.GetTransaction().GetId())
	_, err = r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	sum, err = r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	require.Zero(t, sum.DriftSantim)
	require.Equal(t, sum.Scanned, sum.Matched)
	open, err := e.store.Flags(b.ctx(), gateway.SandboxPartner, true)
	require.NoError(t, err)
	require.Empty(t, open)
}
