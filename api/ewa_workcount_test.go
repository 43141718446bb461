package api

import (
	"context"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// TestBenchmarkReportEwaWork counts (asserts nothing about) the work one EWA disbursement costs on
// the real stack, deterministically whatever the machine's load: the statements every component
// sends Postgres (pg_stat_statements over the stack's database: API, ledger, gateway, bank
// sandbox, their background loops), by query, per saga, with the commits, WAL, rows written and
// Postgres CPU per saga and the CPU of a round trip and of a one-row write, and the saga's
// history events (count and bytes) by type.
// `make bench` runs it on its own with WAGERAIL_COUNT_STATEMENTS=1 (testkit then loads
// pg_stat_statements, which the other reports do without); WAGERAIL_COUNT_SAGAS sets how many
// sagas (default 20), one at a time.
func TestBenchmarkReportEwaWork(t *testing.T) {
	if os.Getenv("WAGERAIL_COUNT_STATEMENTS") == "" {
		t.Skip("set WAGERAIL_COUNT_STATEMENTS=1 to run")
	}
	n := envInt("WAGERAIL_COUNT_SAGAS", 20)
	s := newEwaStack(t, ewaStackOpts{settleDelay: time.Millisecond})
	s.approveKyc(t)
	rec := s.owner.call(http.MethodPut, "/api/employees/"+s.employee, map[string]any{"grossMonthlySalarySantim": 100_000_000_00})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	disburseAll(t, s, requests(t, s, 3), 1) // warm-up: first-use reads and caches
	analyzeStack(t, s)

	ctx := context.Background()
	super, err := pgx.Connect(ctx, testkit.PG(t).SuperDSN(s.d.Name))
	require.NoError(t, err)
	defer super.Close(ctx)
	_, err = super.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	require.NoError(t, err)

	ids := requests(t, s, n)
	waitStatsPublished() // the requests' own work, counted before the window opens
	_, err = super.Exec(ctx, `SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')`)
	require.NoError(t, err)
	commits0, rows0 := dbWork(t, s)
	c0 := cpuNow(t, s.temporal)
	t0 := time.Now()
	_, _, wfIDs, _ := disburseAll(t, s, ids, 1)
	time.Sleep(500 * time.Millisecond) // the last callback's and outbox's work
	elapsed := time.Since(t0)
	c1 := cpuNow(t, s.temporal)
	t.Logf("statements per saga over %d sagas, one at a time (%s, background loops included):", n, elapsed.Round(time.Millisecond))
	logStatements(t, super, s.d.Name, float64(n), 0) // counted as each statement ends: read at once

	// The counters below are published late; the wait adds the background loops' idle looks
	// (read-only commits) to them.
	waitStatsPublished()
	commits1, rows1 := dbWork(t, s)
	var walRecords, walSyncs, walBytes float64
	require.NoError(t, super.QueryRow(ctx, `SELECT wal_records, wal_sync, wal_bytes FROM pg_stat_wal`).Scan(&walRecords, &walSyncs, &walBytes))
	t.Logf("per saga: %.2f commits in the stack's database, %.2f WAL flushes (wal_sync, the whole server), %.1f WAL records, %.0f WAL bytes",
		float64(commits1-commits0)/float64(n), walSyncs/float64(n), walRecords/float64(n), walBytes/float64(n))
	t.Logf("per saga: %.1f rows written (Postgres's CPU with pg_stat_statements loaded in the split below)", float64(rows1-rows0)/float64(n))
	cpuPer(t, "saga, one at a time", n, c1.since(c0))
	pgUnitCosts(t, s)

	events, bytes := map[string]int{}, map[string]int{}
	for _, id := range wfIDs {
		it := s.tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			require.NoError(t, err)
			k := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
			events[k]++
			bytes[k] += proto.Size(e)
		}
	}
	var names []string
	for k := range events {
		names = append(names, k)
	}
	sort.Strings(names)
	t.Logf("history events per saga (%s): count, bytes", workflows.EwaDisburseWorkflowName)
	total := 0
	for _, k := range names {
		t.Logf("  %5.2f %6.0f  %s", float64(events[k])/float64(n), float64(bytes[k])/float64(n), k)
		total += bytes[k]
	}
	t.Logf("  %12.0f  bytes in all", float64(total)/float64(n))
}

// pgUnitCosts logs what Postgres's processes spend on a statement's round trip and on a one-row
// write in a transaction of its own, on this machine and server: the units of a saga's Postgres
// CPU beside its statements and rows written.
func pgUnitCosts(t *testing.T, s *ewaStack) {
	t.Helper()
	ctx := context.Background()
	const n = 2000
	unit := func(what string, op func() error) {
		pg0 := postgresCPU(t)
		for range n {
			require.NoError(t, op())
		}
		pg1 := postgresCPU(t)
		t.Logf("  %-72s %s", what, ((pg1 - pg0) / n).Round(time.Microsecond))
	}
	t.Logf("Postgres CPU per operation (%d of each, one at a time):", n)
	var one int
	unit("a round trip (SELECT 1)", func() error { return s.d.App.QueryRow(ctx, `SELECT 1`).Scan(&one) })
	insert := `INSERT INTO app.audit_log (tenant_id, actor, action, outcome) VALUES (app.current_tenant(), 'system:bench', 'BenchUnit', 'SUCCESS')`
	unit("a one-row insert in one round trip (tenant setting, insert, commit)", func() error {
		return db.InTenantBatch(ctx, s.d.App, s.tenant, func(b *pgx.Batch) { b.Queue(insert) })
	})
	unit("the same in a transaction of three round trips (begin, insert, commit)", func() error {
		return db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, insert)
			return err
		})
	})
}

// logStatements logs what pg_stat_statements counted in database db since its last reset, per
// unit (calls and execution time divided by per), the statements by calls, the first most only
// (0: all). The server must load pg_stat_statements (WAGERAIL_COUNT_STATEMENTS).
func logStatements(t *testing.T, super *pgx.Conn, db string, per float64, most int) {
	t.Helper()
	rows, err := super.Query(context.Background(), `SELECT s.calls, s.total_exec_time, s.total_plan_time, s.query FROM pg_stat_statements s
		JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_statements%' ORDER BY s.calls DESC`, db)
	require.NoError(t, err)
	type stmt struct {
		calls  int64
		ms     float64
		planMs float64
		query  string
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stmt, error) {
		var st stmt
		return st, r.Scan(&st.calls, &st.ms, &st.planMs, &st.query)
	})
	require.NoError(t, err)
	var calls int64
	var ms, planMs float64
	for _, st := range all {
		calls, ms, planMs = calls+st.calls, ms+st.ms, planMs+st.planMs
	}
	t.Logf("  %8.2f statements, %8.3f ms executing, %8.3f ms planning, per unit (%d statements, %.0f ms in all)",
		float64(calls)/per, ms/per, planMs/per, calls, ms+planMs)
	for i, st := range all {
		if most > 0 && i == most {
			break
		}
		q := strings.Join(strings.Fields(st.query), " ")
		if len(q) > 150 {
			q = q[:150] + "…"
		}
		t.Logf("  %8.2f  %8.3f ms  %8.3f ms planning  %s", float64(st.calls)/per, st.ms/per, st.planMs/per, q)
	}
}
