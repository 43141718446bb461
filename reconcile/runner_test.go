package reconcile

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// env is a real bank sandbox and gateway, a real ledger over gRPC, on one test database.
type env struct {
	db     *testkit.DB
	stack  *gatewaytest.Stack
	rawLed ledgerv1.LedgerServiceClient
	ledger *ledger.Client
	store  *Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	d := testkit.NewDB(t)
	raw := ledgertest.Serve(t, d.App, nil)
	return &env{db: d, stack: gatewaytest.Start(t, d.App, gatewaytest.Options{}), rawLed: raw,
		ledger: ledger.NewClient(raw, ledger.ClientOptions{}), store: NewStore(d.App)}
}

func (e *env) runner() *Runner {
	return &Runner{Ledger: e.ledger, Statements: e.stack.Store, Store: e.store, Gateway: gatewayFetcher(e.stack.Gateway)}
}

func gatewayFetcher(c gatewayv1.GatewayServiceClient) FetchFunc {
	return func(ctx context.Context, r *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error) {
		return c.FetchStatement(ctx, r)
	}
}

// writes counts every row reconciliation or statement ingestion ever inserted (sequences are
// not subject to row-level security, so this sees every tenant's).
func (e *env) writes(t *testing.T) int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), e.db.OwnerDSN)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int64
	for _, seq := range []string{"statement_lines_id_seq", "statement_fetches_id_seq", "recon_runs_id_seq", "recon_flags_id_seq"} {
		var last int64
		var called bool
		require.NoError(t, conn.QueryRow(context.Background(), "SELECT last_value, is_called FROM gateway."+seq).Scan(&last, &called))
		if called {
			n += last
		}
	}
	return n
}

func today() string        { return time.Now().UTC().Format(time.DateOnly) }
func uniq(p string) string { return gatewaytest.Unique(p) }
func pairToday(b *books) PairRequest {
	return PairRequest{TenantID: b.tenant, Partner: gateway.SandboxPartner, From: today(), To: today()}
}

// books is one tenant's employer account at the sandbox with its ledger mirror.
type books struct {
	e       *env
	tenant  string
	company string
	mirror  string
}

func newBooks(t *testing.T, e *env, opening int64) *books {
	t.Helper()
	b := &books{e: e, tenant: uniq("tenant"), company: uniq("co")}
	b.mirror = chart.PartnerBankAccount(gateway.SandboxPartner, b.company)
	e.stack.Account(t, b.company, "Employer PLC", opening)
	b.ensure(t, b.mirror, "opening-balance-equity")
	// The ledger brings the opening balance in under the reference the bank booked it with.
	b.post(t, uniq("open"), "OPENING-BALANCE", b.mirror, "opening-balance-equity", opening)
	return b
}

func (b *books) ctx() context.Context { return tenancy.WithTenant(context.Background(), b.tenant) }

func (b *books) ensure(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := b.e.rawLed.EnsureAccount(context.Background(), &ledgerv1.EnsureAccountRequest{TenantId: b.tenant, Name: n})
		require.NoError(t, err, n)
	}
}

// post records debit/credit in the ledger with metadata bank_reference (if set), and returns
// the transaction's id.
func (b *books) post(t *testing.T, key, bankRef, debit, credit string, amount int64) string {
	t.Helper()
	md := map[string]string{}
	if bankRef != "" {
		md["bank_reference"] = bankRef
	}
	r, err := b.e.rawLed.PostTransaction(context.Background(), &ledgerv1.PostTransactionRequest{
		TenantId: b.tenant, IdempotencyKey: key, Metadata: md,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: debit, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amount},
			{AccountName: credit, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amount},
		},
	})
	require.NoError(t, err)
	return r.GetTransaction().GetId()
}

// disburse pays an employee through the gateway and books it in the ledger the way an EWA
// workflow does: receivable-from-employee debited, the employer's bank mirror credited, the
// transfer reference as the idempotency key. ledgerAmount lets a test book a wrong amount.
func (b *books) disburse(t *testing.T, ledgerAmount, bankAmount int64, fault map[string]any) (ref, employee string) {
	t.Helper()
	employee = uniq("emp")
	b.e.stack.Account(t, employee, "Employee "+employee, 0)
	if fault != nil {
		b.e.stack.Fault(t, employee, fault)
	}
	ref = uniq("ewa")
	r, err := b.e.stack.Gateway.InitiateDisbursement(context.Background(), &gatewayv1.InitiateDisbursementRequest{
		Partner: gateway.SandboxPartner, Reference: ref, FromAccount: b.company, ToAccount: employee, AmountSantim: bankAmount,
		TenantId: b.tenant, Domain: "EWA",
	})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	recv := "receivable-from-employee:" + employee
	b.ensure(t, recv)
	b.post(t, ref, "", recv, b.mirror, ledgerAmount)
	return ref, employee
}

func (b *books) runStatus(t *testing.T, runID int64) string {
	t.Helper()
	s, err := b.e.store.RunStatus(b.ctx(), runID)
	require.NoError(t, err)
	return s
}

func TestReconcileCleanBooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	var refs []string
	for _, amt := range []int64{100_000, 250_075, 1} {
		ref, _ := b.disburse(t, amt, amt, nil)
		refs = append(refs, ref)
	}
	// A settlement that fails at the bank is refunded; the ledger reverses it (same bank reference).
	failRef, emp := b.disburse(t, 42_000, 42_000, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
	for _, r := range refs {
		e.stack.WaitTransfer(t, r, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	}
	e.stack.WaitTransfer(t, failRef, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED)
	b.post(t, failRef+"-reversal", failRef, b.mirror, "receivable-from-employee:"+emp, 42_000)

	r := e.runner()
	fc, err := r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, FetchCounts{Accounts: 1, Lines: 6, New: 6}, fc)
	again, err := r.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, FetchCounts{Accounts: 1, Lines: 6, AlreadyPresent: 6}, again, "ingestion is idempotent per line")

	sum, err := r.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	// Bank: opening, 4 holds, 1 refund. Ledger: opening, 4 disbursements, 1 reversal.
	require.Equal(t, 12, sum.Scanned)
	require.Equal(t, 12, sum.Matched)
	require.Equal(t, 1, sum.Accounts)
	require.Zero(t, sum.DriftSantim, "the ledger's own reconciliation agrees")
	require.Contains(t, sum.NextAction, "none")
	flags, err := e.store.Flags(b.ctx(), gateway.SandboxPartner, false)
	require.NoError(t, err)
	require.Empty(t, flags)
	require.Equal(t, "CLEAN", b.runStatus(t, sum.RunID))
}

func TestReconcileFlagsInjectedDiscrepancies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)

	okRef, _ := b.disburse(t, 100_000, 100_000, nil)
	dupRef, _ := b.disburse(t, 70_000, 70_000, nil)                                                          // the bank will show this debit twice
	centRef, _ := b.disburse(t, 250_001, 250_000, nil)                                                       // the ledger booked one santim too many
	failRef, failEmp := b.disburse(t, 42_000, 42_000, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"}) // refunded, never reversed
	twiceRef, twiceEmp := b.disburse(t, 9_000, 9_000, nil)
	b.post(t, uniq("again"), twiceRef, "receivable-from-employee:"+twiceEmp, b.mirror, 9_000) // the ledger paid it twice
	// Money the ledger believes arrived at the bank (a repayment) that the bank never booked.
	repRef := uniq("repay")
	b.post(t, repRef, repRef, b.mirror, "receivable-from-employee:"+failEmp, 5_000)
	// A bank line the ledger never heard of.
	e.stack.Bank(t, http.MethodPost, "/api/v1/sandbox/accounts/"+b.company+"/fund", map[string]any{"amountSantim": 777, "reference": "mystery-topup"}, http.StatusOK, nil)
	for _, r := range []string{okRef, dupRef, centRef, twiceRef} {
		e.stack.WaitTransfer(t, r, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	}
	e.stack.WaitTransfer(t, failRef, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED)
	rec := e.runner()
	_, err := rec.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	// The bank debits dupRef a second time (injected straight into the ingested statement, as a
	// bank that double-booked would send it).
	require.NoError(t, db.InTenantTx(context.Background(), e.db.App, b.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `
			INSERT INTO gateway.statement_lines (tenant_id, partner, account, entry_ref, booking_date, value_date, reference,
			    direction, amount_santim, currency, counterparty, source_format, statement_sha256)
			VALUES ($1, 'sandbox', $2, $3, CURRENT_DATE, CURRENT_DATE, $4, 'DBIT', 70000, 'ETB', '', 'csv', 'injected')`,
			b.tenant, b.company, uniq("DUP"), dupRef)
		return err
	}))

	sum, err := rec.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	want := map[FlagKind]int{
		DuplicateBankLine:     1, // dupRef debited twice
		AmountMismatch:        1, // centRef, one santim
		MissingCreditInLedger: 1, // failRef's refund
		DuplicateLedgerEntry:  1, // twiceRef
		MissingCreditAtBank:   1, // repRef
		UnknownBankLine:       1, // mystery-topup
	}
	require.Equal(t, want, sum.FlagsByKind)
	require.Equal(t, 6, sum.Flagged)
	require.NotZero(t, sum.DriftSantim)
	require.Contains(t, sum.NextAction, "review 6")
	require.Equal(t, "FLAGGED", b.runStatus(t, sum.RunID))

	flags, err := e.store.Flags(b.ctx(), gateway.SandboxPartner, true)
	require.NoError(t, err)
	require.Len(t, flags, 6)
	byKind := map[FlagKind]StoredFlag{}
	for _, f := range flags {
		byKind[f.Kind] = f
		require.Equal(t, "OPEN", f.Status)
		require.Equal(t, 1, f.SeenCount)
		require.Equal(t, b.company, f.Account)
	}
	require.Equal(t, dupRef, byKind[DuplicateBankLine].Reference)
	require.Equal(t, centRef, byKind[AmountMismatch].Reference)
	require.Contains(t, byKind[AmountMismatch].Detail, "difference -1")
	require.Equal(t, failRef, byKind[MissingCreditInLedger].Reference)
	require.Equal(t, twiceRef, byKind[DuplicateLedgerEntry].Reference)
	require.Equal(t, repRef, byKind[MissingCreditAtBank].Reference)
	require.Equal(t, "mystery-topup", byKind[UnknownBankLine].Reference)

	// Running again finds the same discrepancies: no new rows, seen twice.
	sum2, err := rec.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, want, sum2.FlagsByKind)
	flags, err = e.store.Flags(b.ctx(), gateway.SandboxPartner, false)
	require.NoError(t, err)
	require.Len(t, flags, 6)
	for _, f := range flags {
		require.Equal(t, 2, f.SeenCount)
	}

	// The operator reverses the failed transfer in the ledger: the next run resolves that flag.
	b.post(t, failRef+"-reversal", failRef, b.mirror, "receivable-from-employee:"+failEmp, 42_000)
	sum3, err := rec.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, 5, sum3.Flagged)
	open, err := e.store.Flags(b.ctx(), gateway.SandboxPartner, true)
	require.NoError(t, err)
	require.Len(t, open, 5)
	all, err := e.store.Flags(b.ctx(), gateway.SandboxPartner, false)
	require.NoError(t, err)
	for _, f := range all {
		if f.Kind == MissingCreditInLedger {
			require.Equal(t, "RESOLVED", f.Status)
		}
	}

	// Another tenant sees none of it.
	other, err := e.store.Flags(tenancy.WithTenant(context.Background(), uniq("tenant")), gateway.SandboxPartner, false)
	require.NoError(t, err)
	require.Empty(t, other)
}

// A statement the ledger does not mirror at all is a discrepancy to see (every line unknown to
// the ledger), not a runner error.
func TestReconcileStatementWithoutMirror(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 10_000)
	stray := uniq("stray")
	e.stack.Account(t, stray, "Unmirrored PLC", 3_000)
	for _, acct := range []string{b.company, stray} {
		_, err := e.stack.Gateway.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{
			Partner: gateway.SandboxPartner, TenantId: b.tenant, Account: acct, FromDate: today(), ToDate: today(), OmitLines: true})
		require.NoError(t, err)
	}
	sum, err := e.runner().ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Equal(t, 2, sum.Accounts)
	require.Equal(t, map[FlagKind]int{UnknownBankLine: 1}, sum.FlagsByKind)
	require.Equal(t, 2, sum.Matched) // the mirrored opening balance on both sides
}

func TestReconcileUncoveredPeriodIsAFindingNotAFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 1_000)
	// No statement fetched for the period: reported in the summary (retrying would not fetch
	// it), not a wall of MISSING_AT_BANK flags.
	sum, err := e.runner().ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Equal(t, 1, sum.Errors)
	require.Zero(t, sum.Flagged)
	require.Contains(t, sum.NextAction, "FetchStatement")
	require.Equal(t, "ERROR", b.runStatus(t, sum.RunID))
}

// The review's bug: an outage used to be folded into the summary, so the activity succeeded and
// Temporal never retried. Now each dependency that does not answer is an error the caller sees,
// and the failed attempt writes nothing.
func TestReconcileOutagesAreErrorsAndWriteNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 1_000)
	_, err := e.runner().FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	before := e.writes(t)

	conn, err := grpc.NewClient("127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	downLedger := e.runner()
	downLedger.Ledger = ledger.NewClient(ledgerv1.NewLedgerServiceClient(conn), ledger.ClientOptions{Timeout: 2 * time.Second})
	_, err = downLedger.ReconcilePair(context.Background(), pairToday(b))
	require.ErrorIs(t, err, ledger.ErrUnavailable)
	require.Contains(t, err.Error(), "ledger list accounts")
	_, err = downLedger.FetchStatements(context.Background(), pairToday(b))
	require.ErrorIs(t, err, ledger.ErrUnavailable)

	downGateway := e.runner()
	downGateway.Gateway = gatewayFetcher(gatewayv1.NewGatewayServiceClient(conn))
	_, err = downGateway.FetchStatements(context.Background(), pairToday(b))
	require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)

	closed, err := pgxpool.New(context.Background(), e.db.AppDSN)
	require.NoError(t, err)
	closed.Close()
	downDB := e.runner()
	downDB.Store = NewStore(closed)
	_, err = downDB.ReconcilePair(context.Background(), pairToday(b))
	require.Error(t, err)
	require.Contains(t, err.Error(), "reconcile.statement_covers")

	require.Equal(t, before, e.writes(t), "a failed attempt leaves no run and no flag behind")

	// The same pair with everything up reconciles.
	sum, err := e.runner().ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Equal(t, 2, sum.Matched)

	_, err = (&Runner{Ledger: e.ledger, Statements: e.stack.Store, Store: e.store}).FetchStatements(context.Background(), pairToday(b))
	require.ErrorIs(t, err, ErrNoGateway)
}

// A tenant, partner or period that is not valid input is refused before anything reaches the
// ledger, the gateway or the database, as *field.Error (retrying cannot help).
func TestReconcileRefusesHostilePairs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.writes(t)
	r := e.runner()
	day := "2026-03-01"
	n := 0
	sb := gateway.SandboxPartner
	for _, p := range []PairRequest{
		{"t\x00", sb, day, day}, {"t\xff", sb, day, day}, {strings.Repeat("t", 129), sb, day, day}, {"", sb, day, day},
		{"t x", sb, day, day}, {"tenant-a", "sand\x00box", day, day}, {"tenant-a", "", day, day},
		{"tenant-a", strings.Repeat("p", 65), day, day},
		{"tenant-a", sb, "01/03/2026", day}, {"tenant-a", sb, day, "2026-3-2"},
		{"tenant-a", sb, "2026-03-02", day}, {"tenant-a", sb, "2025-01-01", "2025-12-31"},
	} {
		var fe *field.Error
		_, err := r.ReconcilePair(context.Background(), p)
		require.True(t, errors.As(err, &fe), "%q: %v", p, err)
		_, err = r.FetchStatements(context.Background(), p)
		require.True(t, errors.As(err, &fe), "%q: %v", p, err)
		require.NotContains(t, err.Error(), "\x00")
		n += 2
	}
	require.Equal(t, before, e.writes(t))
	t.Logf("probes reconcile pair %d: all refused before the database", n)
}

// A transfer in flight when the day is reconciled: the bank booked its debit when it accepted
// it, the saga's posting is still a hold. Nothing is flagged and the ledger's own figure has no
// drift: the bank's line explains the open hold (before, svc_ledger_reconcile_drift_santim paged
// for every transfer that settled after the period's end).
func TestReconcileTransferInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBooks(t, e, 5_000_000)
	employee := uniq("emp")
	e.stack.Account(t, employee, "Employee "+employee, 0)
	ref := uniq("ewa")
	r, err := e.stack.Gateway.InitiateDisbursement(context.Background(), &gatewayv1.InitiateDisbursementRequest{
		Partner: gateway.SandboxPartner, Reference: ref, FromAccount: b.company, ToAccount: employee, AmountSantim: 64_000,
		TenantId: b.tenant, Domain: "EWA",
	})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	recv := "receivable-from-employee:" + employee
	b.ensure(t, recv)
	_, err = e.rawLed.PostTransaction(context.Background(), &ledgerv1.PostTransactionRequest{
		TenantId: b.tenant, IdempotencyKey: ref, Metadata: map[string]string{"bank_reference": ref},
		Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: recv, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 64_000},
			{AccountName: b.mirror, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 64_000},
		},
	})
	require.NoError(t, err)

	rec := e.runner()
	_, err = rec.FetchStatements(context.Background(), pairToday(b))
	require.NoError(t, err)
	sum, err := rec.ReconcilePair(context.Background(), pairToday(b))
	require.NoError(t, err)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	require.Zero(t, sum.DriftSantim)
	require.Equal(t, "CLEAN", b.runStatus(t, sum.RunID))
}

// A run that could compare only some of a partner's accounts leaves the drift of the others as
// it stands. Day 1 both accounts are compared and A holds 500 the ledger never booked; day 2
// A's statement was not fetched and only B is compared: the partner's drift is still A's 500
// (it was the tenant's figure for the partner, replaced by B's 0: the alert resolved while the
// drift stood).
func TestReconcilePartialRunKeepsDriftOfAccountsLeftOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newBooks(t, e, 10_000)
	accountB := uniq("co")
	e.stack.Account(t, accountB, "Employer PLC", 20_000)
	mirrorB := chart.PartnerBankAccount(gateway.SandboxPartner, accountB)
	a.ensure(t, mirrorB)
	a.post(t, uniq("open"), "OPENING-BALANCE", mirrorB, "opening-balance-equity", 20_000)
	e.stack.Bank(t, http.MethodPost, "/api/v1/sandbox/accounts/"+a.company+"/fund", map[string]any{"amountSantim": 500, "reference": "mystery-topup"}, http.StatusOK, nil)
	ctx := context.Background()
	drift := func() float64 {
		t.Helper()
		totals, err := ledger.NewStore(e.db.App).DriftTotals(ctx)
		require.NoError(t, err)
		return totals[gateway.SandboxPartner]
	}

	r := e.runner()
	fc, err := r.FetchStatements(ctx, pairToday(a))
	require.NoError(t, err)
	require.Equal(t, 2, fc.Accounts)
	sum, err := r.ReconcilePair(ctx, pairToday(a))
	require.NoError(t, err)
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Equal(t, int64(500), sum.DriftSantim)
	require.Equal(t, 500.0, drift())

	day2 := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	_, err = e.stack.Gateway.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{
		Partner: gateway.SandboxPartner, TenantId: a.tenant, Account: accountB, FromDate: day2, ToDate: day2, OmitLines: true})
	require.NoError(t, err)
	sum, err = r.ReconcilePair(ctx, PairRequest{TenantID: a.tenant, Partner: gateway.SandboxPartner, From: day2, To: day2})
	require.NoError(t, err)
	require.Equal(t, 1, sum.Errors, "%v", sum.ErrorDetails)
	require.Contains(t, sum.ErrorDetails[0], a.company)
	require.Zero(t, sum.DriftSantim, "B, the account compared, is clean")
	require.Equal(t, 500.0, drift(), "A's drift stands until A is reconciled again")
}
