package devtemporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func echoWorkflow(_ workflow.Context, s string) (string, error) { return "done " + s, nil }

// runTagged runs echoWorkflow to completion on s with the two custom search attributes and
// returns its run id. It does not retry the start: Start promises the attributes are usable.
func runTagged(t *testing.T, ctx context.Context, c client.Client, id, tenant, key string) string {
	t.Helper()
	queue := testkit.Unique("tq")
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(echoWorkflow)
	require.NoError(t, w.Start())
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("TenantId").ValueSet(tenant),
			temporal.NewSearchAttributeKeyKeyword("BusinessKey").ValueSet(key),
		),
	}, echoWorkflow, "x")
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, "done x", out)
	return run.GetRunID()
}

// findByAttributes polls the visibility store (eventually consistent) until the query by tenant
// and business key returns the completed run.
func findByAttributes(t *testing.T, ctx context.Context, c client.Client, tenant, key, runID string) {
	t.Helper()
	query := fmt.Sprintf("TenantId = '%s' AND BusinessKey = '%s'", tenant, key)
	assert.EventuallyWithT(t, func(ct *assert.CollectT) {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if !assert.NoError(ct, err) {
			return
		}
		if !assert.Len(ct, resp.GetExecutions(), 1) {
			return
		}
		ex := resp.GetExecutions()[0]
		assert.Equal(ct, runID, ex.GetExecution().GetRunId())
		assert.Equal(ct, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, ex.GetStatus())
	}, 30*time.Second, 50*time.Millisecond)
	require.False(t, t.Failed())
}

// frontend is a Temporal server's address and namespace: an embedded one or a test process.
type frontend interface {
	HostPort() string
	Namespace() string
}

func dial(t *testing.T, s frontend) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.HostPort(), Namespace: s.Namespace(), Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	return c
}

// A server on Postgres creates its databases' schemas, registers the namespace with the search
// attributes, runs a workflow that is then found by them, and keeps it all across a restart on the
// same databases (whose schemas are then already current).
func TestPostgresServerSurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pgs := testkit.PG(t)
	pg := devtemporal.PostgresConfig{
		Host: pgs.Host, Port: pgs.Port, User: "wagerail_temporal_restart", Password: testkit.Unique("pw"),
		Database:           fmt.Sprintf("temporal_restart_%d", os.Getpid()),
		VisibilityDatabase: fmt.Sprintf("temporal_restart_vis_%d", os.Getpid()),
	}
	require.NoError(t, devtemporal.ProvisionPostgres(ctx, pgs.SuperDSN("postgres"), pg))
	t.Cleanup(func() {
		ctx := context.Background() // the test's own has ended
		conn, err := pgx.Connect(ctx, pgs.SuperDSN("postgres"))
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		for _, name := range []string{pg.Database, pg.VisibilityDatabase} {
			_, _ = conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
		}
		_, _ = conn.Exec(ctx, fmt.Sprintf("DROP ROLE IF EXISTS %s", pg.User))
	})

	s, err := devtemporal.Start(ctx, devtemporal.Config{Postgres: &pg, Namespace: "wagerail-pg"})
	require.NoError(t, err)
	c := dial(t, s)
	tenant, key := testkit.Unique("tenant"), testkit.Unique("key")
	runID := runTagged(t, ctx, c, "pg-restart", tenant, key)
	findByAttributes(t, ctx, c, tenant, key, runID)
	c.Close()
	require.NoError(t, s.Stop())

	// Provisioning again (as every `wagerail dev` start does) keeps the databases.
	require.NoError(t, devtemporal.ProvisionPostgres(ctx, pgs.SuperDSN("postgres"), pg))
	s, err = devtemporal.Start(ctx, devtemporal.Config{Postgres: &pg, Namespace: "wagerail-pg"})
	require.NoError(t, err)
	defer s.Stop()
	c = dial(t, s)
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, "pg-restart", runID)
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.GetWorkflowExecutionInfo().GetStatus())
	findByAttributes(t, ctx, c, tenant, key, runID)
	// And the restarted server runs new work tagged the same way.
	tenant2 := testkit.Unique("tenant")
	runID2 := runTagged(t, ctx, c, "pg-restart-2", tenant2, key)
	findByAttributes(t, ctx, c, tenant2, key, runID2)
}

// The tests' shared server on Postgres runs tagged workflows and finds them, as the SQLite one.
func TestSharedTestServerOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := devtemporaltest.OnPostgres(t)
	require.Same(t, s, devtemporaltest.OnPostgres(t))
	require.NotEqual(t, devtemporaltest.Server(t).HostPort(), s.HostPort())
	c := dial(t, s)
	defer c.Close()
	tenant, key := testkit.Unique("tenant"), testkit.Unique("key")
	runID := runTagged(t, ctx, c, testkit.Unique("wf"), tenant, key)
	findByAttributes(t, ctx, c, tenant, key, runID)
}

// A file-backed server runs new work after a restart: the membership the previous process left in
// the file is forgotten at start, so the new services do not wait on the old ones' addresses.
func TestFileBackedServerRunsWorkAfterRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	file := filepath.Join(t.TempDir(), "temporal.db")
	s, err := devtemporal.Start(ctx, devtemporal.Config{DatabaseFile: file})
	require.NoError(t, err)
	c := dial(t, s)
	tenant, key := testkit.Unique("tenant"), testkit.Unique("key")
	runTagged(t, ctx, c, "file-before", tenant, key)
	c.Close()
	require.NoError(t, s.Stop())

	s, err = devtemporal.Start(ctx, devtemporal.Config{DatabaseFile: file})
	require.NoError(t, err)
	defer s.Stop()
	c = dial(t, s)
	defer c.Close()
	runID := runTagged(t, ctx, c, "file-after", tenant, key)
	desc, err := c.DescribeWorkflowExecution(ctx, "file-after", runID)
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.GetWorkflowExecutionInfo().GetStatus())
}

// Given a role that may create databases and none made for it, Start creates both databases.
func TestPostgresServerCreatesMissingDatabases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pgs := testkit.PG(t)
	pg := devtemporal.PostgresConfig{
		Host: pgs.Host, Port: pgs.Port, User: "wagerail_temporal_createdb", Password: testkit.Unique("pw"),
		Database:           fmt.Sprintf("temporal_created_%d", os.Getpid()),
		VisibilityDatabase: fmt.Sprintf("temporal_created_vis_%d", os.Getpid()),
	}
	conn, err := pgx.Connect(context.Background(), pgs.SuperDSN("postgres"))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, fmt.Sprintf(`DROP ROLE IF EXISTS %s`, pg.User))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s LOGIN CREATEDB PASSWORD '%s'`, pg.User, pg.Password))
	require.NoError(t, err)
	t.Cleanup(func() {
		bg := context.Background()
		for _, name := range []string{pg.Database, pg.VisibilityDatabase} {
			_, _ = conn.Exec(bg, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
		}
		_, _ = conn.Exec(bg, fmt.Sprintf(`DROP ROLE IF EXISTS %s`, pg.User))
		conn.Close(bg)
	})

	s, err := devtemporal.Start(ctx, devtemporal.Config{Postgres: &pg})
	require.NoError(t, err)
	defer s.Stop()
	for _, name := range []string{pg.Database, pg.VisibilityDatabase} {
		var owner string
		require.NoError(t, conn.QueryRow(ctx, `SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1`, name).Scan(&owner))
		require.Equal(t, pg.User, owner, name)
	}
	c := dial(t, s)
	defer c.Close()
	tenant, key := testkit.Unique("tenant"), testkit.Unique("key")
	runID := runTagged(t, ctx, c, "created-dbs", tenant, key)
	findByAttributes(t, ctx, c, tenant, key, runID)
}
