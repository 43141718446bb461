package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/sandbox"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

func today() string { return time.Now().UTC().Format(time.DateOnly) }

func fetch(e *env, tenant, account string, f gatewayv1.StatementFormat) (*gatewayv1.FetchStatementResponse, error) {
	return e.rpc.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{
		Partner: SandboxPartner, TenantId: tenant, Account: account, FromDate: today(), ToDate: today(), Format: f, IncludeRaw: true,
	})
}

func TestFetchStatement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	tenant := uniq("tenant")
	co, emp := acct("co"), acct("emp")
	e.account(t, co, "Employer PLC", 1_000_000)
	e.account(t, emp, "Abebe Kebede", 0)
	ref := uniq("ewa")
	r, err := disburse(e, ref, co, emp, 250_075)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	e.waitStatus(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	e.bankCall(t, http.MethodPost, "/api/v1/sandbox/accounts/"+co+"/fund", map[string]any{"amountSantim": 1, "reference": "topup-1"}, http.StatusOK, nil)

	csv, err := fetch(e, tenant, co, gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV, csv.GetFormat())
	require.Equal(t, int64(3), csv.GetIngested())
	require.Zero(t, csv.GetAlreadyPresent())
	require.Len(t, csv.GetSha256(), 64)
	require.NotEmpty(t, csv.GetRaw())
	lines := csv.GetLines()
	require.Len(t, lines, 3)
	// Opening balance, the disbursement's hold at the source, the top-up; balances run exactly.
	require.Equal(t, gatewayv1.Direction_DIRECTION_CREDIT, lines[0].GetDirection())
	require.Equal(t, int64(1_000_000), lines[0].GetAmountSantim())
	require.Equal(t, ref, lines[1].GetReference())
	require.Equal(t, gatewayv1.Direction_DIRECTION_DEBIT, lines[1].GetDirection())
	require.Equal(t, int64(250_075), lines[1].GetAmountSantim())
	require.Equal(t, emp, lines[1].GetCounterparty())
	require.Equal(t, int64(749_925), lines[1].GetBalanceAfterSantim())
	require.Equal(t, "topup-1", lines[2].GetReference())
	require.Equal(t, int64(749_926), lines[2].GetBalanceAfterSantim())
	for _, l := range lines {
		require.Equal(t, today(), l.GetBookingDate())
		require.Equal(t, "ETB", l.GetCurrency())
		require.NotEmpty(t, l.GetEntryRef())
	}

	require.Equal(t, int64(3), csv.GetLineCount())

	// Fetching again stores nothing twice; an ingest-only caller gets counts, not lines.
	again, err := e.rpc.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{
		Partner: SandboxPartner, TenantId: tenant, Account: co, FromDate: today(), ToDate: today(), OmitLines: true,
	})
	require.NoError(t, err)
	require.Zero(t, again.GetIngested())
	require.Equal(t, int64(3), again.GetAlreadyPresent())
	require.Equal(t, int64(3), again.GetLineCount())
	require.Empty(t, again.GetLines())
	require.Empty(t, again.GetRaw())
	require.Equal(t, csv.GetSha256(), again.GetSha256(), "the same file")

	// camt.053 of the same period is the same lines (no running balance in that format).
	camt, err := fetch(e, tenant, co, gatewayv1.StatementFormat_STATEMENT_FORMAT_CAMT053)
	require.NoError(t, err)
	require.Zero(t, camt.GetIngested())
	require.Equal(t, int64(3), camt.GetAlreadyPresent())
	require.Len(t, camt.GetLines(), 3)
	for i, l := range camt.GetLines() {
		c := lines[i]
		require.Equal(t, c.GetEntryRef(), l.GetEntryRef())
		require.Equal(t, c.GetReference(), l.GetReference())
		require.Equal(t, c.GetDirection(), l.GetDirection())
		require.Equal(t, c.GetAmountSantim(), l.GetAmountSantim())
		require.Equal(t, c.GetBookingDate(), l.GetBookingDate())
		require.Nil(t, l.BalanceAfterSantim)
	}
	stored, err := e.store.StatementLines(context.Background(), tenant, SandboxPartner, co, time.Now().UTC().AddDate(0, 0, -1), time.Now().UTC())
	require.NoError(t, err)
	require.Len(t, stored, 3)
	require.Equal(t, int64(749_926), *stored[2].BalanceAfterSantim, "the CSV's running balance is kept")

	age, ok := e.metrics.IngestAge(SandboxPartner)
	require.True(t, ok)
	require.Less(t, age, time.Minute)
	require.Contains(t, e.scrape(t), `svc_statement_ingest_age_seconds{partner="sandbox"}`)

	// Another tenant cannot ingest (or see) these lines.
	other := uniq("tenant")
	_, err = fetch(e, other, co, gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV)
	requireCode(t, err, codes.PermissionDenied, ReasonStatementForeign)
	seen, err := e.store.StatementLines(context.Background(), other, SandboxPartner, "", time.Now().UTC().AddDate(0, 0, -1), time.Now().UTC())
	require.NoError(t, err)
	require.Empty(t, seen)
	require.Zero(t, countRows(t, e, other, "gateway.statement_fetches"), "a refused fetch leaves no trace")
	require.Equal(t, 3, countRows(t, e, tenant, "gateway.statement_fetches"))

	// Bad periods.
	for _, req := range []*gatewayv1.FetchStatementRequest{
		{Partner: SandboxPartner, TenantId: tenant, Account: co, FromDate: "2026-13-01", ToDate: today()},
		{Partner: SandboxPartner, TenantId: tenant, Account: co, FromDate: today(), ToDate: "2020-01-01"},
		{Partner: SandboxPartner, TenantId: tenant, Account: co, FromDate: "2025-01-01", ToDate: "2025-12-31"},
		{Partner: SandboxPartner, TenantId: "", Account: co, FromDate: today(), ToDate: today()},
	} {
		_, err := e.rpc.FetchStatement(context.Background(), req)
		requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
	}
}

func countRows(t *testing.T, e *env, tenant, table string) int {
	t.Helper()
	var n int
	require.NoError(t, db.InTenantTx(context.Background(), e.db.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n)
	}))
	return n
}

// TestFetchMalformedStatement: a bank that sends a broken statement gets DATA_LOSS and nothing
// of it is stored.
func TestFetchMalformedStatement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		_, _ = w.Write([]byte("bookingDate,valueDate,entryRef,reference,direction,amountSantim,currency,counterparty,balanceAfterSantim\n" +
			"2026-03-02,2026-03-02,E1,r1,CRDT,100,ETB,cp,100\n" +
			"2026-03-02,2026-03-02,E2,r2,CRDT,12.50,ETB,cp,200\n"))
	}))
	t.Cleanup(bad.Close)
	a, err := NewSandboxAdapter(bad.URL, nil)
	require.NoError(t, err)
	g := New(e.store, NewMetrics(nil, nil), testLog(), nil, Guard(a, DefaultGuardConfig()))
	srv := NewServer(g)
	tenant := uniq("tenant")
	_, err = srv.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: tenant, Account: "acc-1", FromDate: "2026-03-02", ToDate: "2026-03-02"})
	err = ToStatus(err).Err() // what the interceptor sends
	requireCode(t, err, codes.DataLoss, ReasonStatementBad)
	require.ErrorContains(t, err, "line 3 amountSantim")
	require.Zero(t, countRows(t, e, tenant, "gateway.statement_lines"))
	require.Zero(t, countRows(t, e, tenant, "gateway.statement_fetches"))
}

// TestFetchLongestPeriodTheBankServes: the longest period the gateway asks for is one the bank
// serves (the bank refuses longer ones), so a reconciliation never fails on the bound.
func TestFetchLongestPeriodTheBankServes(t *testing.T) {
	t.Parallel()
	require.Equal(t, MaxStatementPeriod, time.Duration(sandbox.MaxStatementDays)*24*time.Hour)
	e := newEnv(t, envOpt{})
	tenant, co := uniq("tenant"), acct("lp")
	e.account(t, co, "Employer PLC", 1_000)
	days := int(MaxStatementPeriod / (24 * time.Hour))
	from := time.Now().UTC().AddDate(0, 0, -days).Format(time.DateOnly)
	for _, f := range []gatewayv1.StatementFormat{gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV, gatewayv1.StatementFormat_STATEMENT_FORMAT_CAMT053} {
		r, err := e.rpc.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{
			Partner: SandboxPartner, TenantId: tenant, Account: co, FromDate: from, ToDate: today(), Format: f})
		require.NoError(t, err, "%s", f)
		require.Equal(t, int64(1), r.GetLineCount(), "%s: the opening line", f)
	}
	longer := time.Now().UTC().AddDate(0, 0, -days-1).Format(time.DateOnly)
	_, err := e.rpc.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{
		Partner: SandboxPartner, TenantId: tenant, Account: co, FromDate: longer, ToDate: today()})
	requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
}

// TestFetchRecordedAsOfTheRequest: a statement holds what the bank had booked when it was asked
// for, and reconciliation counts a day as covered whole only by a statement asked for after the
// day ended. The fetch is recorded as of the request, not of the ingest after a slow answer: one
// asked for just before midnight and stored just after must not pass for the day's whole statement.
func TestFetchRecordedAsOfTheRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	tenant := uniq("tenant")
	co := acct("co")
	e.account(t, co, "Employer PLC", 1_000)
	e.fault(t, co, map[string]any{"latencyMs": 1500})
	asked := time.Now()
	_, err := fetch(e, tenant, co, gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV)
	require.NoError(t, err)
	stored := time.Now()
	var fetchedAt time.Time
	require.NoError(t, db.InTenantTx(context.Background(), e.db.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "SELECT fetched_at FROM gateway.statement_fetches").Scan(&fetchedAt)
	}))
	// The bank answers no sooner than 1,500 ms after it is asked, and the fetch is stored after
	// the answer: recorded as of the request, fetched_at is at least that long before the fetch
	// returned (1 ms less, for the database's microseconds), and not before the test asked.
	require.False(t, fetchedAt.Before(asked.Add(-time.Millisecond)), "fetched_at %v before the request %v", fetchedAt, asked)
	require.False(t, fetchedAt.After(stored.Add(-1499*time.Millisecond)),
		"fetched_at %v is within the bank's latency of the fetch's return %v: recorded as of the ingest", fetchedAt, stored)
}
