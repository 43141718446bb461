package ledger

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func TestReconcileWithBank(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant, other := testkit.Unique("t"), testkit.Unique("o")
	funding, escrow := chart.PartnerBankAccount("cbe", "1000-funding"), chart.PartnerBankAccount("cbe", "2000-escrow")
	e.ensure(t, tenant, funding, escrow, "receivable-from-employee:e1", "equb:pool:"+tenant+":c1", chart.PartnerBankAccount("awash", "9"))
	start := time.Now()

	// Disbursements out of the funding account (money out at the bank: a credit of the mirror).
	for i, amt := range []int64{10_000, 2_500} {
		req := twoLeg(tenant, []string{"disb-1", "disb-2"}[i], "receivable-from-employee:e1", funding, amt)
		req.Metadata = map[string]string{"bank_reference": []string{"BR-1", "BR-2"}[i]}
		_, err := e.client.PostTransaction(ctx, req)
		require.NoError(t, err)
	}
	// An equb contribution into escrow (money in: a debit of the mirror), matched by key.
	_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "contrib-1", escrow, "equb:pool:"+tenant+":c1", 7_000))
	require.NoError(t, err)
	// A pending hold is not money at the bank yet.
	hold := twoLeg(tenant, "disb-3", "receivable-from-employee:e1", funding, 999)
	hold.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	_, err = e.client.PostTransaction(ctx, hold)
	require.NoError(t, err)
	// Another tenant's postings on the same partner never count.
	e.ensure(t, other, funding, "fee-income")
	_, err = e.client.PostTransaction(ctx, twoLeg(other, "x", funding, "fee-income", 123))
	require.NoError(t, err)
	end := time.Now().Add(time.Second)

	// The bank agrees about escrow; about funding it has BR-1, BR-2 for 2,400 (not 2,500), a
	// fee line the ledger never saw, and a closing balance that says so.
	r, err := e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{
		TenantId: tenant, Partner: "cbe", PeriodStart: timestamppb.New(start), PeriodEnd: timestamppb.New(end),
		Accounts: []*ledgerv1.BankStatementAccount{
			{Account: "1000-funding", HasClosingBalance: true, ClosingBalanceSantim: -10_000 - 2_400 - 50, Lines: []*ledgerv1.BankStatementLine{
				{Reference: "BR-1", AmountSantim: -10_000}, {Reference: "BR-2", AmountSantim: -2_400}, {Reference: "FEE-7", AmountSantim: -50},
			}},
			{Account: "2000-escrow", HasClosingBalance: true, ClosingBalanceSantim: 7_000, Lines: []*ledgerv1.BankStatementLine{
				{Reference: "contrib-1", AmountSantim: 7_000},
			}},
			{Account: "3000-unknown", HasClosingBalance: true, ClosingBalanceSantim: 500},
		},
	})
	require.NoError(t, err)
	require.False(t, r.GetInBalance())
	byAcct := map[string]*ledgerv1.AccountDrift{}
	for _, a := range r.GetAccounts() {
		byAcct[a.GetAccount()] = a
	}
	f := byAcct["1000-funding"]
	require.Equal(t, int64(-12_500), f.GetLedgerBalanceSantim(), "posted only; the hold is not at the bank")
	require.Equal(t, int64(50), f.GetDriftSantim(), "bank − ledger: -12,450 − (-12,500)")
	require.Equal(t, int32(1), f.GetLinesMatched())
	require.Len(t, f.GetAmountMismatch(), 1)
	require.Equal(t, "BR-2", f.GetAmountMismatch()[0].GetReference())
	require.Equal(t, int64(-2_500), f.GetAmountMismatch()[0].GetLedgerAmountSantim())
	require.Len(t, f.GetMissingInLedger(), 1)
	require.Equal(t, "FEE-7", f.GetMissingInLedger()[0].GetReference())
	require.Empty(t, f.GetMissingAtBank())
	esc := byAcct["2000-escrow"]
	require.Zero(t, esc.GetDriftSantim())
	require.Equal(t, int32(1), esc.GetLinesMatched())
	u := byAcct["3000-unknown"]
	require.False(t, u.GetLedgerAccountExists())
	require.Equal(t, int64(500), u.GetDriftSantim())
	require.Equal(t, int64(550), r.GetTotalAbsDriftSantim())
	require.Equal(t, 550.0, testutil.ToFloat64(e.metrics.drift.WithLabelValues("cbe")))

	// Drift is reported, never corrected: the ledger is as it was.
	require.Equal(t, int64(-12_500), e.balance(t, tenant, funding).GetPostedSantim())

	// Without a statement, every mirror account of the partner is listed with its balance.
	r, err = e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{TenantId: tenant, Partner: "cbe"})
	require.NoError(t, err)
	require.Len(t, r.GetAccounts(), 2)
	require.True(t, r.GetInBalance())

	// Once the bank and the ledger agree on every account the gauge drops back to zero for this
	// tenant (an account left out of a report keeps its drift: TestDriftGaugeKeepsAccountsNotReported).
	r, err = e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{TenantId: tenant, Partner: "cbe", PeriodEnd: timestamppb.New(end),
		Accounts: []*ledgerv1.BankStatementAccount{{Account: "1000-funding", HasClosingBalance: true, ClosingBalanceSantim: -12_500},
			{Account: "2000-escrow", HasClosingBalance: true, ClosingBalanceSantim: 7_000}, {Account: "3000-unknown", HasClosingBalance: true}}})
	require.NoError(t, err)
	require.True(t, r.GetInBalance())
	require.Equal(t, 0.0, testutil.ToFloat64(e.metrics.drift.WithLabelValues("cbe")))

	_, err = e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{TenantId: tenant, Partner: "bad partner"})
	requireReason(t, err, ReasonInvalidArgument)
}

// A transfer in flight at the period's end: the bank debited the account when it accepted it,
// the ledger holds the amount (PENDING) until it settles. The bank's line explains the open hold,
// so the day closes without drift; the ledger commits after the end and nothing changes for that
// period. A hold the bank's statement does not show is not money at the bank (drift, as before).
func TestReconcileCountsOpenHoldsTheBankBooked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	funding := chart.PartnerBankAccount("cbe", "1000-funding")
	e.ensure(t, tenant, funding, "receivable-from-employee:e1")
	start := time.Now()
	hold := twoLeg(tenant, "ewa-1", "receivable-from-employee:e1", funding, 40_000)
	hold.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	hold.Metadata = map[string]string{"bank_reference": "BR-H1"}
	held, err := e.client.PostTransaction(ctx, hold)
	require.NoError(t, err)
	unbooked := twoLeg(tenant, "ewa-2", "receivable-from-employee:e1", funding, 7_000)
	unbooked.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	_, err = e.client.PostTransaction(ctx, unbooked)
	require.NoError(t, err)
	end := time.Now().Add(time.Millisecond)
	time.Sleep(5 * time.Millisecond)

	reconcile := func(closing bool) *ledgerv1.ReconcileWithBankResponse {
		t.Helper()
		r, err := e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{
			TenantId: tenant, Partner: "cbe", PeriodStart: timestamppb.New(start), PeriodEnd: timestamppb.New(end),
			Accounts: []*ledgerv1.BankStatementAccount{{Account: "1000-funding", HasClosingBalance: closing, ClosingBalanceSantim: -40_000,
				Lines: []*ledgerv1.BankStatementLine{{Reference: "BR-H1", AmountSantim: -40_000}}}},
		})
		require.NoError(t, err)
		return r
	}
	for _, closing := range []bool{true, false} {
		r := reconcile(closing)
		require.Zero(t, r.GetTotalAbsDriftSantim(), "closing balance %v", closing)
		require.True(t, r.GetInBalance())
		a := r.GetAccounts()[0]
		require.Equal(t, int32(1), a.GetLinesMatched())
		require.Empty(t, a.GetMissingInLedger())
		require.Zero(t, a.GetLedgerBalanceSantim(), "posted only")
	}

	// Settled after the end: the period's answer is the same.
	_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: held.GetTransaction().GetId()})
	require.NoError(t, err)
	require.Zero(t, reconcile(true).GetTotalAbsDriftSantim())

	// A line of another amount does not explain the hold.
	r, err := e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{
		TenantId: tenant, Partner: "cbe", PeriodStart: timestamppb.New(start), PeriodEnd: timestamppb.New(end),
		Accounts: []*ledgerv1.BankStatementAccount{{Account: "1000-funding", HasClosingBalance: true, ClosingBalanceSantim: -40_001,
			Lines: []*ledgerv1.BankStatementLine{{Reference: "BR-H1", AmountSantim: -40_001}}}},
	})
	require.NoError(t, err)
	require.Equal(t, int64(40_001), r.GetTotalAbsDriftSantim())
	require.Len(t, r.GetAccounts()[0].GetMissingInLedger(), 1)
}

// The drift gauge says how far the books are off now: reconciling an old day again (clean, as
// it was then) does not clear the figure of a later day that drifted; reconciling that day again
// does. Tenants add up; each keeps its own latest figure; a restart keeps the figures.
func TestDriftGaugeKeepsTheLatestPeriod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant, other := testkit.Unique("t"), testkit.Unique("o")
	funding := chart.PartnerBankAccount("dashen", "1000-funding")
	e.ensure(t, tenant, funding)
	e.ensure(t, other, funding)
	day := func(n int) *timestamppb.Timestamp {
		return timestamppb.New(time.Now().AddDate(0, 0, n).Truncate(24 * time.Hour))
	}
	report := func(tenant string, from, to int, bankBalance int64) {
		t.Helper()
		_, err := e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{
			TenantId: tenant, Partner: "dashen", PeriodStart: day(from), PeriodEnd: day(to),
			Accounts: []*ledgerv1.BankStatementAccount{{Account: "1000-funding", HasClosingBalance: true, ClosingBalanceSantim: bankBalance}},
		})
		require.NoError(t, err)
	}
	gauge := func() float64 { return testutil.ToFloat64(e.metrics.drift.WithLabelValues("dashen")) }

	report(tenant, -1, 0, 33_000) // yesterday: the bank holds 33,000 the ledger does not know
	require.Equal(t, 33_000.0, gauge())
	report(tenant, -6, -5, 0) // a week-old day, clean
	require.Equal(t, 33_000.0, gauge(), "an older period leaves the latest figure")
	report(other, -2, -1, 7)
	require.Equal(t, 33_007.0, gauge())
	report(tenant, -1, 0, 0) // yesterday again, after the correction
	require.Equal(t, 7.0, gauge())

	// A restarted ledger (new metrics, the same database) exports the drift that stands at once
	// (it used to export nothing until the next run: the alert resolved while the drift stood).
	m := NewMetrics()
	require.NoError(t, NewServer(e.store, testAdjustmentKey, m).LoadDrift(ctx))
	require.Equal(t, 7.0, testutil.ToFloat64(m.drift.WithLabelValues("dashen")))
	// The figures hold no tenant: the runtime role reads them outside any tenant, and cannot
	// write them.
	var total float64
	require.NoError(t, e.db.App.QueryRow(ctx, `SELECT abs_drift_santim::float8 FROM ledger.reconcile_drift_totals WHERE partner = 'dashen'`).Scan(&total))
	require.Equal(t, 7.0, total)
	_, err := e.db.App.Exec(ctx, `UPDATE ledger.reconcile_drift_totals SET abs_drift_santim = 0`)
	require.Error(t, err)
}

// The drift is kept per account: a report that compared only some of a partner's accounts (the
// others' statements not fetched, say) replaces their figures and leaves the others' drift
// standing (it used to replace the tenant's whole figure for the partner: the drift of the
// account left out vanished and the alert resolved while it stood). An older period of one
// account leaves its latest figure; a report without accounts changes nothing.
func TestDriftGaugeKeepsAccountsNotReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, chart.PartnerBankAccount("dashen", "A"), chart.PartnerBankAccount("dashen", "B"))
	day := func(n int) *timestamppb.Timestamp {
		return timestamppb.New(time.Now().AddDate(0, 0, n).Truncate(24 * time.Hour))
	}
	report := func(from, to int, balances map[string]int64) *ledgerv1.ReconcileWithBankResponse {
		t.Helper()
		req := &ledgerv1.ReconcileWithBankRequest{TenantId: tenant, Partner: "dashen", PeriodStart: day(from), PeriodEnd: day(to)}
		for _, a := range []string{"A", "B"} {
			if bal, ok := balances[a]; ok {
				req.Accounts = append(req.Accounts, &ledgerv1.BankStatementAccount{Account: a, HasClosingBalance: true, ClosingBalanceSantim: bal})
			}
		}
		r, err := e.client.ReconcileWithBank(ctx, req)
		require.NoError(t, err)
		return r
	}
	gauge := func() float64 { return testutil.ToFloat64(e.metrics.drift.WithLabelValues("dashen")) }
	totals := func() float64 {
		got, err := e.store.DriftTotals(ctx)
		require.NoError(t, err)
		return got["dashen"]
	}

	report(-2, -1, map[string]int64{"A": 500, "B": 0}) // day 1: A drifts
	require.Equal(t, 500.0, gauge())
	require.Equal(t, 500.0, totals())
	r := report(-1, 0, map[string]int64{"B": 0}) // day 2: only B could be compared
	require.Zero(t, r.GetTotalAbsDriftSantim(), "the report itself covers B only")
	require.Equal(t, 500.0, gauge(), "A's drift stands until A is reconciled again")
	require.Equal(t, 500.0, totals())
	report(-1, 0, map[string]int64{"B": -30}) // B drifts too: the figures add up
	require.Equal(t, 530.0, gauge())
	report(-6, -5, map[string]int64{"A": 0}) // an older period of A leaves A's latest figure
	require.Equal(t, 530.0, gauge())
	report(-1, 0, map[string]int64{"A": 0, "B": 0})
	require.Equal(t, 0.0, gauge())
	require.Equal(t, 0.0, totals())
	report(0, 1, nil) // no account: the partner's mirrors are listed, nothing drifts
	require.Equal(t, 0.0, gauge())

	// A figure kept for the partner as a whole (before drift was kept per account) stands until
	// a report with accounts supersedes it.
	owner, err := db.Open(ctx, e.db.OwnerDSN, 1)
	require.NoError(t, err)
	defer owner.Close()
	legacy := testkit.Unique("legacy")
	require.NoError(t, db.InTenantTx(ctx, owner, legacy, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO ledger.reconcile_drift (tenant_id, partner, period_end, abs_drift_santim) VALUES ($1, 'dashen', $2, 70)`,
			legacy, day(-1).AsTime())
		return err
	}))
	tenant = legacy
	e.ensure(t, tenant, chart.PartnerBankAccount("dashen", "A"))
	require.Equal(t, 70.0, totals())
	report(-1, 0, map[string]int64{"A": 0})
	require.Equal(t, 0.0, totals())
}

func TestVerifyCheckpointsFindsCorruption(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	e.store.CheckpointEvery = 2
	for i := range 6 {
		_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k"+string(rune('a'+i)), "payroll-clearing", "fee-income", 100))
		require.NoError(t, err)
		e.balance(t, tenant, "fee-income")
	}
	v, err := e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Positive(t, v.GetCheckpointsChecked())
	require.Empty(t, v.GetMismatches())

	// A checkpoint that lies, written straight into the table at the newest entry (one no
	// balance read has checkpointed yet), is found and named. Only the owner role can still
	// write one by hand (TestHardening3_CheckpointsCannotLie: the runtime role cannot).
	_, err = e.client.PostTransaction(ctx, twoLeg(tenant, "late", "payroll-clearing", "fee-income", 1))
	require.NoError(t, err)
	owner, err := db.Open(ctx, e.db.OwnerDSN, 1)
	require.NoError(t, err)
	defer owner.Close()
	err = db.InTenantTx(ctx, owner, tenant, func(tx pgx.Tx) error {
		var id string
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT a.id::text, max(e.seq) FROM ledger.entries e JOIN ledger.accounts a ON a.id = e.account_id
			WHERE a.name = 'fee-income' GROUP BY a.id`).Scan(&id, &seq); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, forgedCheckpointSQL, tenant, id, "ETB", seq, 1, time.Now(), 0, 999, 0, 0)
		return err
	})
	require.NoError(t, err)
	v, err = e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Len(t, v.GetMismatches(), 1)
	require.Equal(t, "fee-income", v.GetMismatches()[0].GetAccountName())
	require.Contains(t, v.GetMismatches()[0].GetDetail(), "posted=0/999")
}

// forgedCheckpointSQL writes a checkpoint with the values it is given, as the ledger itself no
// longer does (ledger.write_checkpoint computes them).
const forgedCheckpointSQL = `INSERT INTO ledger.balance_checkpoints (tenant_id, account_id, currency, seq,
		entry_count, last_entry_at, posted_debits, posted_credits, pending_debits, pending_credits)
	VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10)`
