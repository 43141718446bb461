package inflight_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/inflight"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestKindsReadThroughTheirIndexes: every kind the sagas declare is read, as the cross-tenant
// role reads it, through its own partial index (migration app/0099): the read touches the rows in
// flight only, however many settled rows the table holds. Sequential scans are disabled so that
// a kind whose Where no index predicate matches shows as the scan it would be on a large table.
func TestKindsReadThroughTheirIndexes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	kinds := workflows.InFlight()
	require.NotEmpty(t, kinds)
	conn, err := d.Platform(t).Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	for _, k := range kinds {
		var plan string
		require.NoError(t, pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting); err != nil {
				return err
			}
			var err error
			plan, err = testkit.Plan(ctx, tx, fmt.Sprintf(`SELECT count(*), min(%s) FROM %s WHERE %s`, k.Since, k.Table, k.Where))
			return err
		}), k.Saga)
		index := strings.TrimPrefix(k.Table, "app.") + "_in_flight"
		require.Contains(t, plan, index, "%s is not read through %s:\n%s", k.Saga, index, plan)
		require.NotContains(t, plan, "Seq Scan", "%s:\n%s", k.Saga, plan)
	}
}

// TestMetricsCountEveryTenantsRowsInFlight: the gauges count each kind's rows in flight over
// every tenant, with the oldest one's age, and nothing in another state; every kind has its two
// series from the first scrape, at 0 when nothing is in flight; a read writes a CrossTenantAccess
// audit row only when it found something.
func TestMetricsCountEveryTenantsRowsInFlight(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	run := func(tenant, period, status string, age time.Duration) {
		t.Helper()
		require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.payroll_runs (id, tenant_id, period, status, created_by, calculated_by, calculated_at,
					approved_by, approved_at, disbursing_at, disbursing_by, disbursement_workflow_id)
				VALUES ($1, $2, $3, $4, 'maker', 'maker', now(), 'checker', now(), now() - $5::interval, 'checker', 'wf-' || $1)`,
				"prun_"+testkit.Unique("f"), tenant, period, status, fmt.Sprintf("%d seconds", int(age.Seconds())))
			return err
		}))
	}
	for _, tenant := range []string{"org_inflight_a", "org_inflight_b"} {
		require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.organizations (id, name, kind) VALUES ($1, $1, 'BUSINESS')`, tenant)
			return err
		}))
	}
	m, err := inflight.NewMetrics(d.Platform(t), workflows.InFlight(), time.Nanosecond)
	require.NoError(t, err)
	audits := func() int {
		t.Helper()
		var n int
		require.NoError(t, db.InTenantTx(ctx, d.App, "*", func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = 'CrossTenantAccess' AND actor = 'system:inflight-metrics'`).Scan(&n)
		}))
		return n
	}

	// Nothing in flight: every series at 0, no audit row.
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(m))
	n, err := testutil.GatherAndCount(reg, inflight.MetricInFlight, inflight.MetricOldestAge)
	require.NoError(t, err)
	require.Equal(t, 2*len(workflows.InFlight()), n)
	require.Zero(t, value(t, reg, inflight.MetricInFlight, "payroll_disburse"))
	require.Zero(t, audits())

	// Two tenants' runs disbursing (one for two hours), one completed: two in flight, the oldest
	// two hours old.
	run("org_inflight_a", "2026-11", "DISBURSING", 2*time.Hour)
	run("org_inflight_b", "2026-11", "DISBURSING", time.Minute)
	run("org_inflight_b", "2026-10", "COMPLETED", 30*24*time.Hour)
	got, err := m.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), got["payroll_disburse"].Count)
	require.InDelta(t, 7200, got["payroll_disburse"].OldestAgeSeconds, 60)
	for _, k := range workflows.InFlight() {
		if k.Saga != "payroll_disburse" {
			require.Equal(t, inflight.Figures{}, got[k.Saga], k.Saga)
		}
	}
	require.Equal(t, float64(2), value(t, reg, inflight.MetricInFlight, "payroll_disburse"))
	require.InDelta(t, 7200, value(t, reg, inflight.MetricOldestAge, "payroll_disburse"), 60)
	require.Positive(t, audits(), "a look across tenants that found money in flight is audited")

	// The rows themselves, oldest first, each with its tenant and key; every kind's list reads.
	var ids []string
	conn, err := d.Platform(t).Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	require.NoError(t, pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting); err != nil {
			return err
		}
		for _, k := range workflows.InFlight() {
			rows, err := inflight.List(ctx, tx, k, inflight.MaxList)
			if err != nil {
				return err
			}
			if k.Saga != "payroll_disburse" {
				require.Empty(t, rows, k.Saga)
				continue
			}
			require.Len(t, rows, 2)
			require.Equal(t, [2]string{"org_inflight_a", "org_inflight_b"}, [2]string{rows[0].TenantID, rows[1].TenantID}, "oldest first")
			require.True(t, rows[0].Since.Before(rows[1].Since))
			for _, r := range rows {
				require.Regexp(t, `^prun_`, r.Key)
				require.Equal(t, "wf-"+r.Key, r.WorkflowID, "the saga that holds it")
				ids = append(ids, r.Key)
			}
			one, err := inflight.List(ctx, tx, k, 1)
			if err != nil {
				return err
			}
			require.Equal(t, rows[:1], one)
		}
		return nil
	}))
	require.Len(t, ids, 2)
	for _, n := range []int{0, inflight.MaxList + 1} {
		_, err := inflight.List(ctx, nil, workflows.InFlight()[0], n)
		require.Error(t, err, n)
	}
}

// TestNewMetricsRefusesBadKinds: an incomplete kind, or two kinds of one label, is an error.
func TestNewMetricsRefusesBadKinds(t *testing.T) {
	k := inflight.Kind{Saga: "x", Table: "app.t", Where: "status = 'P'", Since: "created_at", Key: "id", Workflow: "workflow_id"}
	for _, kinds := range [][]inflight.Kind{nil, {k, k}, {{Saga: "x", Table: "app.t", Where: "status = 'P'"}}, {{Saga: "x'", Table: "app.t", Where: "w", Since: "s"}}} {
		_, err := inflight.NewMetrics(nil, kinds, 0)
		require.Error(t, err, "%+v", kinds)
	}
}

// value is reg's sample of name for saga (it fails the test when there is none).
func value(t *testing.T, reg *prometheus.Registry, name, saga string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "saga" && l.GetValue() == saga {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{saga=%q}", name, saga)
	return 0
}
