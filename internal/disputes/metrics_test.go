package disputes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestSLABreachedGauge: svc_disputes_sla_breached counts the open disputes past their deadline
// over every tenant, by raiser: a dispute within its SLA and a decided one do not count, every
// raiser's series exists at 0.
func TestSLABreachedGauge(t *testing.T) {
	d := testkit.NewDB(t)
	a, b := newTenant(t, d), newTenant(t, d)
	long := time.Now().AddDate(0, 0, -30) // an employee's 7 days ran out long ago
	open(t, d, a, "00000000-0000-7000-8000-0000000000a1", long)
	open(t, d, b, "00000000-0000-7000-8000-0000000000b1", long)
	open(t, d, b, "00000000-0000-7000-8000-0000000000b2", time.Now()) // within its SLA
	reg := prometheus.NewRegistry()
	m := disputes.NewSLAMetrics(d.Platform(t), time.Nanosecond)
	require.NoError(t, reg.Register(m))
	want := func(employee int) string {
		return "# HELP svc_disputes_sla_breached Open disputes (OPENED or UNDER_INVESTIGATION) past their SLA deadline, by who raised them, over every tenant.\n" +
			"# TYPE svc_disputes_sla_breached gauge\n" +
			"svc_disputes_sla_breached{raised_by_type=\"EMPLOYEE\"} " + string(rune('0'+employee)) + "\n" +
			"svc_disputes_sla_breached{raised_by_type=\"INTERNAL\"} 0\n" +
			"svc_disputes_sla_breached{raised_by_type=\"PARTNER_BANK\"} 0\n"
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want(2)), disputes.SLABreachedMetric))

	// Decided, it no longer counts.
	breached := open(t, d, a, "00000000-0000-7000-8000-0000000000a2", long)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want(3)), disputes.SLABreachedMetric))
	decide(t, d, a, breached.ID)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want(2)), disputes.SLABreachedMetric))
}

// decide closes dispute id with no action (investigated first).
func decide(t *testing.T, d *testkit.DB, tenant, id string) {
	t.Helper()
	for _, m := range []disputes.Move{{Trigger: disputes.TriggerInvestigate},
		{Trigger: disputes.TriggerDecide, Decision: disputes.NoAction, Reason: "taken", Actor: "op"}} {
		_, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
			return disputes.Apply(ctx, tx, id, m, time.Now())
		})
		require.NoError(t, err)
	}
}
