package disputes

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/promreg"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// SLABreachedMetric is the gauge SLAMetrics exports: the open disputes (OPENED or
// UNDER_INVESTIGATION) past their SLA deadline, by raiser, over every tenant (no tenant label).
const SLABreachedMetric = "svc_disputes_sla_breached"

// SLAMetricsRefresh is how often SLAMetrics reads the database at most: scrapes in between get
// the last count. A read that finds breached disputes writes a CrossTenantAccess audit row (a
// system job's look across tenants, crosstenant.JobTx), so this bounds those rows to a few hundred
// a day while any dispute is breached, and none while none is.
const SLAMetricsRefresh = 5 * time.Minute

var slaBreachedDesc = prometheus.NewDesc(SLABreachedMetric,
	"Open disputes (OPENED or UNDER_INVESTIGATION) past their SLA deadline, by who raised them, over every tenant.",
	[]string{"raised_by_type"}, nil)

// SLAMetrics exports svc_disputes_sla_breached, read from app.disputes through the cross-tenant
// role (the worker registers it when DATABASE_PLATFORM_URL is set). Every raiser's series exists
// from the first read, at 0 when none is breached; a read that fails leaves the scrape without a
// sample (svc_dependency_up says why).
type SLAMetrics struct {
	platform db.Beginner
	counts   promreg.Throttled[map[RaisedBy]int]
}

// NewSLAMetrics returns the collector over platform (a pool that logs in as wagerail_platform),
// reading at most once per every (SLAMetricsRefresh when 0).
func NewSLAMetrics(platform db.Beginner, every time.Duration) *SLAMetrics {
	if every <= 0 {
		every = SLAMetricsRefresh
	}
	m := &SLAMetrics{platform: platform}
	m.counts.Every = every
	return m
}

// Describe implements prometheus.Collector.
func (m *SLAMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- slaBreachedDesc }

// Collect implements prometheus.Collector.
func (m *SLAMetrics) Collect(ch chan<- prometheus.Metric) {
	counts, ok := m.counts.Get(m.read)
	if !ok {
		return
	}
	for _, r := range RaisedByKinds {
		ch <- prometheus.MustNewConstMetric(slaBreachedDesc, prometheus.GaugeValue, float64(counts[r]), string(r))
	}
}

// read counts the breached disputes by raiser at the database's clock.
func (m *SLAMetrics) read(ctx context.Context) (map[RaisedBy]int, error) {
	counts := map[RaisedBy]int{}
	ctx = tenancy.WithActor(ctx, tenancy.System("dispute-sla-metrics"))
	err := crosstenant.JobTx(ctx, m.platform, "count the disputes past their SLA deadline (svc_disputes_sla_breached)", func(tx pgx.Tx) (int, error) {
		rows, err := tx.Query(ctx, `SELECT raised_by_type, count(*) FROM app.disputes
			WHERE status IN ('OPENED', 'UNDER_INVESTIGATION') AND sla_deadline < now() GROUP BY raised_by_type`)
		if err != nil {
			return 0, err
		}
		total := 0
		for rows.Next() {
			var r RaisedBy
			var n int
			if err := rows.Scan(&r, &n); err != nil {
				return 0, err
			}
			counts[r] = n
			total += n
		}
		return total, rows.Err()
	})
	return counts, err
}
