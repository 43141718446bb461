package ledger

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var testAdjustmentKey = []byte("test-adjustment-key-0123456789abcdef")

// env is a ledger served over real gRPC on loopback, on a fresh migrated database.
type env struct {
	db          *testkit.DB
	store       *Store
	metrics     *Metrics
	srv         *rpcserve.Server
	rpc         ledgerv1.LedgerServiceClient
	client      *Client
	addr        string // the server's gRPC address
	metricsAddr string
}

// newEnv serves a ledger on a fresh database. Its pool commits without waiting for the WAL
// flush (synchronous_commit=off): durability is not what these tests check, and waiting for
// fsync would only make them slow. Benchmarks use the default, durable setting.
func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the store's pool configured further by configure (when not nil).
func newEnvWith(t testing.TB, configure func(*pgxpool.Config)) *env {
	t.Helper()
	d := testkit.NewDB(t)
	cfg, err := pgxpool.ParseConfig(d.AppDSN)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	cfg.MaxConns = 16
	if configure != nil {
		configure(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return serveOn(t, d, NewStore(pool))
}

// serveOn serves store the way runLedger does: rpcserve with the ledger's interceptor and metrics.
func serveOn(t testing.TB, d *testkit.DB, store *Store) *env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := NewMetrics()
	srv := rpcserve.New("ledger", log, m.UnaryInterceptor(log))
	require.NoError(t, m.Register(srv.Registry))
	ledgerv1.RegisterLedgerServiceServer(srv.GRPC, NewServer(store, testAdjustmentKey, m))
	conn, metricsURL := testkit.ServeGRPC(t, srv)
	rpc := ledgerv1.NewLedgerServiceClient(conn)
	return &env{
		db: d, store: store, metrics: m, srv: srv, rpc: rpc,
		client:      NewClient(rpc, ClientOptions{Timeout: 30 * time.Second}),
		addr:        conn.Target(),
		metricsAddr: strings.TrimPrefix(metricsURL, "http://"),
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ensure creates accounts (by name) for a tenant and returns their ids by name.
func (e *env) ensure(t testing.TB, tenant string, names ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, n := range names {
		r, err := e.client.EnsureAccount(ctxT(t), &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err, n)
		ids[n] = r.GetAccount().GetId()
	}
	return ids
}

func leg(name string, d ledgerv1.Direction, amount int64) *ledgerv1.EntryInput {
	return &ledgerv1.EntryInput{AccountName: name, Direction: d, AmountSantim: amount}
}

const (
	dr = ledgerv1.Direction_DIRECTION_DEBIT
	cr = ledgerv1.Direction_DIRECTION_CREDIT
)

// twoLeg is a posting that debits one account and credits another.
func twoLeg(tenant, key, debit, credit string, amount int64) *ledgerv1.PostTransactionRequest {
	return &ledgerv1.PostTransactionRequest{
		TenantId: tenant, IdempotencyKey: key,
		Entries: []*ledgerv1.EntryInput{leg(debit, dr, amount), leg(credit, cr, amount)},
	}
}

func (e *env) balance(t testing.TB, tenant, account string) *ledgerv1.Balance {
	t.Helper()
	r, err := e.client.GetBalance(ctxT(t), &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: account})
	require.NoError(t, err)
	return r.GetBalance()
}

// counts is how many rows of each ledger table a tenant has, read as the runtime role.
type counts struct{ accounts, transactions, entries, checkpoints int }

func (e *env) counts(t testing.TB, tenant string) counts {
	t.Helper()
	c, err := e.countsErr(tenant)
	require.NoError(t, err)
	return c
}

func (e *env) countsErr(tenant string) (counts, error) {
	var c counts
	err := asTenant(e.db.App, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT (SELECT count(*) FROM ledger.accounts), (SELECT count(*) FROM ledger.transactions),
			(SELECT count(*) FROM ledger.entries), (SELECT count(*) FROM ledger.balance_checkpoints)`).
			QueryRow(func(r pgx.Row) error { return r.Scan(&c.accounts, &c.transactions, &c.entries, &c.checkpoints) })
	})
	return c, err
}

// asTenant runs the queued statements as the runtime role inside one transaction scoped to
// tenant, in a single round trip (the test's checks run after every step of the property test).
func asTenant(pool *pgxpool.Pool, tenant string, queue func(b *pgx.Batch)) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue("SELECT set_config($1, $2, true)", db.TenantSetting, tenant)
	queue(b)
	b.Queue("COMMIT")
	return pool.SendBatch(ctx, b).Close()
}

// requireReason asserts err is a ledger error with the reason (and so its gRPC code).
func requireReason(t testing.TB, err error, r Reason) {
	t.Helper()
	require.Error(t, err)
	var le *Error
	require.ErrorAs(t, err, &le, "error %v is not a ledger error", err)
	require.Equal(t, r, le.Reason, "error: %v", err)
}
