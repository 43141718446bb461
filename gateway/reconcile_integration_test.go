package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wagerail/wagerail/internal/db"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// books is one tenant's employer account at the sandbox with its ledger mirror.
type books struct {
	e       *env
	ledger  ledgerv1.LedgerServiceClient
	tenant  string
	company string
	mirror  string
}

func newBooks(t *testing.T, e *env, lc ledgerv1.LedgerServiceClient, opening int64) *books {
	t.Helper()
	b := &books{e: e, ledger: lc, tenant: uniq("tenant"), company: acct("co")}
	b.mirror = MirrorAccountName(SandboxPartner, b.company)
	e.account(t, b.company, "Employer PLC", opening)
	b.ensure(t, b.mirror, "opening-balance-equity")
	// The ledger brings the opening balance in under the reference the bank booked it with.
	b.post(t, uniq("open"), "OPENING-BALANCE", b.mirror, "opening-balance-equity", opening)
	return b
}

func (b *books) ensure(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := b.ledger.EnsureAccount(context.Background(), &ledgerv1.EnsureAccountRequest{TenantId: b.tenant, Name: n})
		require.NoError(t, err, n)
	}
}

// post records debit/credit in the ledger with metadata bank_reference (if set).
func (b *books) post(t *testing.T, key, bankRef, debit, credit string, amount int64) {
	t.Helper()
	md := map[string]string{}
	if bankRef != "" {
		md["bank_reference"] = bankRef
	}
	_, err := b.ledger.PostTransaction(context.Background(), &ledgerv1.PostTransactionRequest{
		TenantId: b.tenant, IdempotencyKey: key, Metadata: md,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: debit, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amount},
			{AccountName: credit, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amount},
		},
	})
	require.NoError(t, err)
}

// disburse pays an employee through the gateway and books it in the ledger the way an EWA
// workflow does: receivable-from-employee debited, the employer's bank mirror credited, the
// transfer reference as the idempotency key. ledgerAmount lets a test book a wrong amount.
func (b *books) disburse(t *testing.T, ledgerAmount, bankAmount int64, fault map[string]any) (ref, employee string) {
	t.Helper()
	employee = acct("emp")
	b.e.account(t, employee, "Employee "+employee, 0)
	if fault != nil {
		b.e.fault(t, employee, fault)
	}
	ref = uniq("ewa")
	r, err := b.e.rpc.InitiateDisbursement(context.Background(), &gatewayv1.InitiateDisbursementRequest{
		Partner: SandboxPartner, Reference: ref, FromAccount: b.company, ToAccount: employee, AmountSantim: bankAmount,
		TenantId: b.tenant, Domain: "EWA",
	})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	recv := "receivable-from-employee:" + employee
	b.ensure(t, recv)
	b.post(t, ref, "", recv, b.mirror, ledgerAmount)
	return ref, employee
}

func (b *books) fetch(t *testing.T) {
	t.Helper()
	_, err := b.e.rpc.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{
		Partner: SandboxPartner, TenantId: b.tenant, Account: b.company, FromDate: today(), ToDate: today(),
	})
	require.NoError(t, err)
}

func reconcilerFor(e *env, lc ledgerv1.LedgerServiceClient) *Reconciler {
	return &Reconciler{Store: e.store, Ledger: LedgerGRPC{Client: lc}, Log: testLog()}
}

func nowDay() time.Time { return day(time.Now()) }

func TestReconcileCleanBooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	lc := e.ledger(t)
	b := newBooks(t, e, lc, 5_000_000)
	var refs []string
	for _, amt := range []int64{100_000, 250_075, 1} {
		ref, _ := b.disburse(t, amt, amt, nil)
		refs = append(refs, ref)
	}
	// A settlement that fails at the bank is refunded; the ledger reverses it (same bank reference).
	failRef, emp := b.disburse(t, 42_000, 42_000, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
	for _, r := range refs {
		e.waitStatus(t, r, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	}
	e.waitStatus(t, failRef, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED)
	b.post(t, failRef+"-reversal", failRef, b.mirror, "receivable-from-employee:"+emp, 42_000)
	b.fetch(t)

	sum := reconcilerFor(e, lc).Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
	require.Zero(t, sum.Errors, "%v", sum.ErrorDetails)
	require.Zero(t, sum.Flagged, "%+v", sum.FlagsByKind)
	// Bank: opening, 4 holds, 1 refund. Ledger: opening, 4 disbursements, 1 reversal.
	require.Equal(t, 12, sum.Scanned)
	require.Equal(t, 12, sum.Matched)
	require.Equal(t, 1, sum.Accounts)
	require.Zero(t, sum.DriftSantim, "the ledger's own reconciliation agrees")
	require.Contains(t, sum.NextAction, "none")
	flags, err := e.store.Flags(context.Background(), b.tenant, SandboxPartner, false)
	require.NoError(t, err)
	require.Empty(t, flags)
	require.Equal(t, "CLEAN", runStatus(t, e, b.tenant, sum.RunID))
}

func TestReconcileFlagsInjectedDiscrepancies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	lc := e.ledger(t)
	b := newBooks(t, e, lc, 5_000_000)

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
	e.bankCall(t, http.MethodPost, "/api/v1/sandbox/accounts/"+b.company+"/fund", map[string]any{"amountSantim": 777, "reference": "mystery-topup"}, http.StatusOK, nil)
	for _, r := range []string{okRef, dupRef, centRef, twiceRef} {
		e.waitStatus(t, r, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	}
	e.waitStatus(t, failRef, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED)
	b.fetch(t)
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

	rec := reconcilerFor(e, lc)
	sum := rec.Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
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
	require.Equal(t, "FLAGGED", runStatus(t, e, b.tenant, sum.RunID))

	flags, err := e.store.Flags(context.Background(), b.tenant, SandboxPartner, true)
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
	sum2 := rec.Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
	require.Equal(t, want, sum2.FlagsByKind)
	flags, err = e.store.Flags(context.Background(), b.tenant, SandboxPartner, false)
	require.NoError(t, err)
	require.Len(t, flags, 6)
	for _, f := range flags {
		require.Equal(t, 2, f.SeenCount)
	}

	// The operator reverses the failed transfer in the ledger: the next run resolves that flag.
	b.post(t, failRef+"-reversal", failRef, b.mirror, "receivable-from-employee:"+failEmp, 42_000)
	sum3 := rec.Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
	require.Equal(t, 5, sum3.Flagged)
	open, err := e.store.Flags(context.Background(), b.tenant, SandboxPartner, true)
	require.NoError(t, err)
	require.Len(t, open, 5)
	all, err := e.store.Flags(context.Background(), b.tenant, SandboxPartner, false)
	require.NoError(t, err)
	for _, f := range all {
		if f.Kind == MissingCreditInLedger {
			require.Equal(t, "RESOLVED", f.Status)
		}
	}

	// Another tenant sees none of it.
	other, err := e.store.Flags(context.Background(), uniq("tenant"), SandboxPartner, false)
	require.NoError(t, err)
	require.Empty(t, other)
}

func runStatus(t *testing.T, e *env, tenant string, runID int64) string {
	t.Helper()
	var s string
	require.NoError(t, db.InTenantTx(context.Background(), e.db.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT status FROM gateway.recon_runs WHERE id = $1`, runID).Scan(&s)
	}))
	return s
}

func TestReconcileRunnerErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	lc := e.ledger(t)
	b := newBooks(t, e, lc, 1_000)

	// No statement fetched for the period: an error, not a wall of MISSING_AT_BANK flags.
	rec := reconcilerFor(e, lc)
	sum := rec.Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
	require.Equal(t, 1, sum.Errors)
	require.Zero(t, sum.Flagged)
	require.Contains(t, sum.NextAction, "FetchStatement")
	require.Equal(t, "ERROR", runStatus(t, e, b.tenant, sum.RunID))

	// A ledger that cannot be reached.
	b.fetch(t)
	conn, err := grpc.NewClient("127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	down := &Reconciler{Store: e.store, Ledger: LedgerGRPC{Client: ledgerv1.NewLedgerServiceClient(conn), Timeout: 2 * time.Second}}
	sum = down.Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
	require.Equal(t, 1, sum.Errors)
	require.Contains(t, sum.ErrorDetails[0], "ledger list accounts")

	// The aggregate says the runner failed; merely flagged pairs do not.
	ok := rec.Reconcile(context.Background(), b.tenant, SandboxPartner, nowDay(), nowDay())
	require.Zero(t, ok.Errors, "%v", ok.ErrorDetails)
	rep := Summarise([]PairSummary{ok, sum})
	require.Equal(t, 2, rep.Aggregate.Pairs)
	require.Equal(t, 1, rep.Aggregate.Errors)
	require.Contains(t, rep.Aggregate.NextAction, "runner errors")
	rep = Summarise([]PairSummary{ok, {Flagged: 2, FlagsByKind: map[FlagKind]int{UnknownBankLine: 2}}})
	require.Zero(t, rep.Aggregate.Errors)
	require.Equal(t, 2, rep.Aggregate.FlagsByKind[UnknownBankLine])
	require.Contains(t, rep.Aggregate.NextAction, "review 2")
}
