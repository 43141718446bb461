// Package devtemporaltest gives tests the embedded Temporal servers (internal/platform/devtemporal)
// their test binary shares, stopped by testkit.Main once the tests have ended. It stands apart
// from testkit so that the test binaries that need only Postgres do not link the Temporal server.
package devtemporaltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var (
	sqliteOnce sync.Once
	sqlite     *devtemporal.Server
	sqliteErr  error

	pgOnce sync.Once
	pg     *devtemporal.Server
	pgErr  error
)

// Server returns the embedded Temporal server shared by this test binary, on SQLite in memory
// (namespace "default", search attributes TenantId and BusinessKey registered). Tests use unique
// workflow ids.
func Server(t testing.TB) *devtemporal.Server {
	t.Helper()
	sqliteOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sqlite, sqliteErr = devtemporal.Start(ctx, devtemporal.Config{WorkflowTaskTimeout: workflowTaskTimeout()})
		if sqliteErr == nil {
			testkit.AtExit(func() { _ = sqlite.Stop() })
		}
	})
	if sqliteErr != nil {
		t.Fatalf("devtemporaltest: %v", sqliteErr)
	}
	return sqlite
}

// OnPostgres returns a second embedded Temporal server shared by this test binary, whose default
// and visibility stores are two databases of the binary's Postgres server (testkit.PG) rather than
// SQLite: the same namespace and search attributes as Server, so a benchmark can run the same
// work on both persistences in one run. It connects as the login role devtemporal.PostgresUser.
func OnPostgres(t testing.TB) *devtemporal.Server {
	t.Helper()
	s := testkit.PG(t)
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// The role is cluster-wide and test binaries may share a server (DATABASE_URL): every
		// binary derives the same password, as testkit does for the other roles.
		sum := sha256.Sum256([]byte("wagerail-test-temporal:" + s.SuperDSN("postgres")))
		cfg := devtemporal.PostgresConfig{
			Host: s.Host, Port: s.Port, User: devtemporal.PostgresUser, Password: hex.EncodeToString(sum[:12]),
			Database:           fmt.Sprintf("temporal_t_%d", os.Getpid()),
			VisibilityDatabase: fmt.Sprintf("temporal_visibility_t_%d", os.Getpid()),
		}
		// Registered first, so it runs after the server has stopped.
		testkit.AtExit(func() {
			s.DropDatabase(cfg.Database)
			s.DropDatabase(cfg.VisibilityDatabase)
		})
		if pgErr = devtemporal.ProvisionPostgres(ctx, s.SuperDSN("postgres"), cfg); pgErr != nil {
			return
		}
		pg, pgErr = devtemporal.Start(ctx, devtemporal.Config{Postgres: &cfg, WorkflowTaskTimeout: workflowTaskTimeout()})
		if pgErr == nil {
			testkit.AtExit(func() { _ = pg.Stop() })
		}
	})
	if pgErr != nil {
		t.Fatalf("devtemporaltest: on postgres: %v", pgErr)
	}
	return pg
}

// workflowTaskTimeout is the test servers' workflow task timeout: 2 s instead of Temporal's 10, so
// a test that kills a worker mid-task sees another worker take the workflow over 8 s sooner (the
// crash tests each wait for that once or more). A live worker is not hurried by it: while its
// local activities run, the SDK extends the task before 80% of the timeout. Benchmarks keep
// Temporal's default, as the server `make run` starts does.
func workflowTaskTimeout() time.Duration {
	if testkit.Benchmarking() {
		return 0
	}
	return 2 * time.Second
}
