// Package ledgertest serves the real ledger over gRPC for other packages' tests.
package ledgertest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Serve runs the ledger on pool (the runtime role) until the test ends. adjustmentKey may be nil
// (every adjustment refused).
func Serve(t testing.TB, pool *pgxpool.Pool, adjustmentKey []byte) ledgerv1.LedgerServiceClient {
	t.Helper()
	c, _ := ServeAddr(t, pool, adjustmentKey)
	return c
}

// ServeAddr is Serve that also returns the server's gRPC address, for a client in another
// process (a worker run as the real binary).
func ServeAddr(t testing.TB, pool *pgxpool.Pool, adjustmentKey []byte) (ledgerv1.LedgerServiceClient, string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := ledger.NewMetrics()
	srv := rpcserve.New("ledger", log, m.UnaryInterceptor(log))
	if err := m.Register(srv.Registry); err != nil {
		t.Fatalf("ledgertest: %v", err)
	}
	ledgerv1.RegisterLedgerServiceServer(srv.GRPC, ledger.NewServer(ledger.NewStore(pool), adjustmentKey, m))
	conn, _ := testkit.ServeGRPC(t, srv)
	return ledgerv1.NewLedgerServiceClient(conn), conn.Target()
}
