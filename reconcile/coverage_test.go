package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// nextMorning is 07:30 UTC tomorrow, when the daily schedule runs: today has ended.
func nextMorning() time.Time {
	return day(time.Now()).AddDate(0, 0, 1).Add(7*time.Hour + 30*time.Minute)
}

// refetchedAt moves the tenant's latest fetch of account to at, as if the statement had been
// asked for then (the gateway records the time it asked the bank).
func (b *books) refetchedAt(t *testing.T, account string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, b.e.db.OwnerDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, $2, true)`, db.TenantSetting, b.tenant); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE gateway.statement_fetches SET fetched_at = $2 WHERE id =
			(SELECT max(id) FROM gateway.statement_fetches WHERE account = $1)`, account, at)
		if err == nil && tag.RowsAffected() != 1 {
			t.Fatalf("no fetch of %s", account)
		}
		return err
	}))
}

// The audit's finding: a statement fetched while its day was still running counted as the
// day's whole statement. Today's statement is fetched, then the employer pays 64000 (the bank
// books it, the ledger posts it). Reconciling today the next morning without fetching again used
// to compare the day's ledger with the statement as it stood at the fetch: the payment was
// flagged missing at the bank and paged as 64000 of drift, with no statement to match it. The
// partial statement is now reported (fetch it again), and once fetched after the day ended the
// day reconciles clean.
func TestReconcileStatementFetchedBeforeTheDayEndedIsPartial(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	r := e.runner()
	_, err := r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	ref, _ := b.disburse(t, 64_000, 64_000, nil)
	e.stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	drift := func() float64 {
		t.Helper()
		totals, err := ledger.NewStore(e.db.App).DriftTotals(context.Background())
		require.NoError(t, err)
		return totals[gateway.SandboxPartner]
	}

	r.Now = nextMorning
	sum, err := r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, 1, sum.Errors, "%+v", sum)
	require.Contains(t, sum.ErrorDetails[0], b.company)
	require.Contains(t, sum.ErrorDetails[0], "partial")
	require.Contains(t, sum.NextAction, "FetchStatement")
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	require.Zero(t, sum.DriftSantim)
	require.Zero(t, drift(), "no drift paged for lines the statement was fetched too early to hold")
	require.Equal(t, "ERROR", b.runStatus(t, sum.RunID))

	_, err = r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	b.refetchedAt(t, b.company, nextMorning().Add(-time.Minute))
	sum, err = r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	require.Equal(t, sum.Scanned, sum.Matched)
	require.Equal(t, 4, sum.Matched, "opening and payment, on both sides")
	require.Zero(t, sum.DriftSantim)
	require.Equal(t, "none: reconciled clean", sum.NextAction)
	require.Equal(t, "CLEAN", b.runStatus(t, sum.RunID))
}

// The silent side of the same finding: a statement fetched before its day ended used to prove
// that the bank had booked nothing that day. A payment the ledger posted yesterday went out at
// the bank only today, after today's statement was fetched; an operator reversed it in the
// ledger today. Reconciling yesterday the next morning, the reversal's day (today) counted as
// covered, its statement had no line for the payment, so the payment "cancelled out" with its
// reversal: nothing flagged, although the bank paid 64000 the ledger now says it did not.
func TestReconcilePartialStatementDoesNotCancelAReversal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	r := e.runner()
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	yesterdayPair := PairRequest{TenantID: b.tenant, Partner: gateway.SandboxPartner, From: yesterday, To: yesterday}
	_, err := r.FetchStatements(context.Background(), yesterdayPair)
	require.NoError(t, err)
	_, err = r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)

	ref, _ := b.disburse(t, 64_000, 64_000, nil)
	e.stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	paid, err := e.rawLed.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: b.tenant, IdempotencyKey: ref})
	require.NoError(t, err)
	b.backdate(t, paid.GetTransaction().GetId(), 1)
	b.reverse(t, paid.GetTransaction().GetId())

	r.Now = nextMorning
	sum, err := r.ReconcilePair(context.Background(), yesterdayPair)
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Equal(t, map[FlagKind]int{MissingDebitAtBank: 1}, sum.FlagsByKind,
		"today's statement was fetched before the payment went out: it cannot show the bank never made it")
	require.Equal(t, paid.GetTransaction().GetId(), b.flagsByTx(t)[paid.GetTransaction().GetId()].TxID)
}
