package reconcile

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// countingLedger passes every call to the real ledger client and records the batch reads.
type countingLedger struct {
	LedgerReader
	mu          sync.Mutex
	listEntries int
	batches     []*ledgerv1.GetTransactionsRequest
}

func (c *countingLedger) ListEntries(ctx context.Context, r *ledgerv1.ListEntriesRequest) (*ledgerv1.ListEntriesResponse, error) {
	c.mu.Lock()
	c.listEntries++
	c.mu.Unlock()
	return c.LedgerReader.ListEntries(ctx, r)
}

func (c *countingLedger) GetTransactions(ctx context.Context, r *ledgerv1.GetTransactionsRequest) (*ledgerv1.GetTransactionsResponse, error) {
	c.mu.Lock()
	c.batches = append(c.batches, r)
	c.mu.Unlock()
	return c.LedgerReader.GetTransactions(ctx, r)
}

// TestMirrorMovementsReadTransactionsInBatches: the references of 1,500 movements on a mirror
// account come from two GetTransactions calls (one per page of entries), not one read per
// transaction, and each movement carries its own bank reference, idempotency key and id.
func TestMirrorMovementsReadTransactionsInBatches(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raw, tenant, account, mirror := mirrorLedger(ctx, t)
	leg := func(name string, d ledgerv1.Direction, amount int64) *ledgerv1.EntryInput {
		return &ledgerv1.EntryInput{AccountName: name, Direction: d, AmountSantim: amount}
	}
	const dr, cr = ledgerv1.Direction_DIRECTION_DEBIT, ledgerv1.Direction_DIRECTION_CREDIT

	const n = 1500
	batch := &ledgerv1.PostTransactionsRequest{TenantId: tenant}
	for i := range n {
		p := &ledgerv1.PostTransactionRequest{IdempotencyKey: fmt.Sprintf("mv-%04d", i), Metadata: map[string]string{}}
		amount := int64(100 + i)
		if i%2 == 0 { // money into the bank account
			p.Entries = []*ledgerv1.EntryInput{leg(mirror, dr, amount), leg("payroll-clearing", cr, amount)}
		} else {
			p.Entries = []*ledgerv1.EntryInput{leg("payroll-clearing", dr, amount), leg(mirror, cr, amount)}
		}
		if i%3 == 0 {
			p.Metadata["bank_reference"] = fmt.Sprintf("FT%04d", i)
		}
		batch.Transactions = append(batch.Transactions, p)
	}
	// A movement that nets to nothing on the mirror is no money that moved; a hold is not either,
	// but is returned as one (for the bank line of its transfer).
	batch.Transactions = append(batch.Transactions,
		&ledgerv1.PostTransactionRequest{IdempotencyKey: "mv-there-and-back", Entries: []*ledgerv1.EntryInput{
			leg(mirror, dr, 5), leg("payroll-clearing", cr, 5), leg("payroll-clearing", dr, 5), leg(mirror, cr, 5)}},
		&ledgerv1.PostTransactionRequest{IdempotencyKey: "mv-hold", Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING,
			Entries: []*ledgerv1.EntryInput{leg(mirror, dr, 9), leg("payroll-clearing", cr, 9)}})
	res, err := raw.PostTransactions(ctx, batch)
	require.NoError(t, err)
	ids := make([]string, n)
	for i, r := range res.GetResults() {
		require.NoError(t, ledger.ItemError(r))
		if i < n {
			ids[i] = r.GetTransaction().GetId()
		}
	}

	l := &countingLedger{LedgerReader: ledger.NewClient(raw, ledger.ClientOptions{})}
	now := time.Now()
	items, err := mirrorMovements(ctx, l, tenant, gateway.SandboxPartner, account, now.Add(-time.Hour), now.Add(time.Hour))
	require.NoError(t, err)

	require.Len(t, items, n+1)
	hold := items[n]
	require.Equal(t, HoldOpen, hold.Hold)
	require.Equal(t, Credit, hold.Direction)
	require.Equal(t, int64(9), hold.AmountSantim)
	require.Equal(t, "mv-hold", hold.References[1])
	for i, it := range items[:n] {
		require.Empty(t, it.Hold)
		ref := ""
		if i%3 == 0 {
			ref = fmt.Sprintf("FT%04d", i)
		}
		require.Equal(t, ids[i], it.TransactionID)
		require.Equal(t, []string{ref, fmt.Sprintf("mv-%04d", i), ids[i]}, it.References, "movement %d", i)
		require.Equal(t, int64(100+i), it.AmountSantim)
		if i%2 == 0 {
			require.Equal(t, Credit, it.Direction, "a debit of the mirror is money arriving at the bank")
		} else {
			require.Equal(t, Debit, it.Direction)
		}
	}
	// 1,503 entries on the mirror: two pages, two batch reads, none larger than the ledger takes.
	require.Equal(t, 2, l.listEntries)
	require.Len(t, l.batches, 2)
	require.Len(t, l.batches[0].GetTransactionIds(), ledger.MaxGetTransactions)
	require.Len(t, l.batches[1].GetTransactionIds(), n+1-ledger.MaxGetTransactions)
	for _, b := range l.batches {
		require.True(t, b.GetOmitEntries(), "only the references are needed")
		require.Equal(t, tenant, b.GetTenantId())
	}
}

// TestMirrorMovementsHoldBeforeTheWindow: a hold entered before the window and voided within it
// is returned as the voided hold it is, in the hold's direction (a debit of the mirror: money
// arriving at the bank, Credit). Found by an audit: the sign of such a release was flipped.
func TestMirrorMovementsHoldBeforeTheWindow(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, tenant, account, mirror := mirrorLedger(ctx, t)
	res, err := raw.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "hold-early",
		Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING, Entries: []*ledgerv1.EntryInput{
			{AccountName: mirror, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 9},
			{AccountName: "payroll-clearing", Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 9}}})
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	from := time.Now()
	time.Sleep(20 * time.Millisecond)
	_, err = raw.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: res.GetTransaction().GetId(), Reason: "TEST"})
	require.NoError(t, err)

	items, err := mirrorMovements(ctx, ledger.NewClient(raw, ledger.ClientOptions{}), tenant, gateway.SandboxPartner, account,
		from, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, HoldVoided, items[0].Hold)
	require.Equal(t, Credit, items[0].Direction)
	require.Equal(t, int64(9), items[0].AmountSantim)
}

// mirrorLedger serves a ledger on a database of its own with a tenant's partner-bank mirror
// account (of account at the sandbox) and payroll-clearing.
func mirrorLedger(ctx context.Context, t *testing.T) (raw ledgerv1.LedgerServiceClient, tenant, account, mirror string) {
	t.Helper()
	d := testkit.NewDB(t)
	raw = ledgertest.Serve(t, d.App, nil)
	tenant, account = uniq("tenant"), uniq("co")
	mirror = chart.PartnerBankAccount(gateway.SandboxPartner, account)
	for _, n := range []string{mirror, "payroll-clearing"} {
		_, err := raw.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err)
	}
	return raw, tenant, account, mirror
}
