// Package inflight watches the money the sagas hold in flight: every row a saga has put in a
// state it must leave (an advance DISBURSING, a remittance REMITTING, a transfer PENDING), over
// every tenant. A saga that died — its workflow terminated, its history lost — leaves such a row
// in flight for good, and the money with it: the bank may have paid and the books not say so.
// The gauges svc_sagas_in_flight{saga} and svc_saga_oldest_in_flight_age_seconds{saga} show each
// kind's count and its oldest row's age, and an alert (deploy/prometheus/alerts.yml) fires when a
// kind's oldest row is older than any saga of that kind runs.
//
// Each domain declares its own kinds (a Kind per table and state: the domain owns what "in
// flight" means for its rows); the worker hands them all to one Metrics, which reads them in one
// statement. Migration app/0099 gives each kind a partial index on its instant, whose predicate is
// the kind's Where: the read touches the rows in flight only, however large the tables grow
// (TestKindsReadThroughTheirIndexes).
package inflight

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/promreg"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Metric names (the spec's svc_ prefix; no tenant label).
const (
	MetricInFlight  = "svc_sagas_in_flight"
	MetricOldestAge = "svc_saga_oldest_in_flight_age_seconds"
)

// Refresh is how often Metrics reads the database at most: scrapes in between get the last read.
// A read that finds rows in flight writes a CrossTenantAccess audit row (a system job's look
// across tenants), so this bounds those to one a minute while money is in flight.
const Refresh = time.Minute

// Kind is one kind of money a saga holds in flight: the rows of Table (schema-qualified) for which
// Where holds, each in flight since its Since column, named by Key (an expression giving the
// row's identity as text) and held by the saga whose workflow id Workflow gives (an expression,
// NULL when the row names none). Every field is the domain's own SQL, never a caller's; Where is
// exactly the predicate of the kind's partial index.
type Kind struct {
	Saga     string // the label: the saga and the step, e.g. "ewa_disburse"
	Table    string
	Where    string
	Since    string
	Key      string
	Workflow string
}

// Row is one row a saga holds in flight, as List lists it.
type Row struct {
	TenantID   string
	Key        string
	WorkflowID string // "" when the row names none
	Since      time.Time
	// AgeSeconds is how long it has been in flight, at the database's clock (as the gauges).
	AgeSeconds float64
}

// MaxList bounds List: the oldest rows of a kind, which are the ones to look at first.
const MaxList = 100

// Figures are one kind's rows in flight as of a read.
type Figures struct {
	Count int64
	// OldestAgeSeconds is the oldest row's age (0 when none).
	OldestAgeSeconds float64
}

var (
	inFlightDesc = prometheus.NewDesc(MetricInFlight,
		"Rows a saga holds in flight (a disbursement, a remittance, a transfer, a posting not yet settled), by saga, over every tenant.",
		[]string{"saga"}, nil)
	oldestDesc = prometheus.NewDesc(MetricOldestAge,
		"Age of the oldest row a saga holds in flight (0 when none), by saga, over every tenant.",
		[]string{"saga"}, nil)
)

// Metrics exports the gauges over kinds, read through the cross-tenant role (the worker registers
// it when DATABASE_PLATFORM_URL is set). Every kind's series exists from the first read, at 0
// when nothing is in flight; a read that fails leaves the scrape without a sample
// (svc_dependency_up says why).
type Metrics struct {
	platform db.Beginner
	kinds    []Kind
	sql      string
	figures  promreg.Throttled[map[string]Figures]
}

// NewMetrics returns the collector of kinds over platform (a pool that logs in as
// wagerail_platform), reading at most once per every (Refresh when 0). Two kinds of one saga
// label are an error, as is a kind with an empty field.
func NewMetrics(platform db.Beginner, kinds []Kind, every time.Duration) (*Metrics, error) {
	if every <= 0 {
		every = Refresh
	}
	q, err := query(kinds)
	if err != nil {
		return nil, err
	}
	m := &Metrics{platform: platform, kinds: kinds, sql: q}
	m.figures.Every = every
	return m, nil
}

// query is the one statement that reads every kind: a row per kind, its count and its oldest
// row's age at the database's clock.
func query(kinds []Kind) (string, error) {
	if len(kinds) == 0 {
		return "", fmt.Errorf("inflight: no kinds")
	}
	seen := map[string]bool{}
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if k.Saga == "" || k.Table == "" || k.Where == "" || k.Since == "" || k.Key == "" || k.Workflow == "" || strings.Contains(k.Saga, "'") {
			return "", fmt.Errorf("inflight: kind %+v is incomplete", k)
		}
		if seen[k.Saga] {
			return "", fmt.Errorf("inflight: two kinds labelled %q", k.Saga)
		}
		seen[k.Saga] = true
		parts = append(parts, fmt.Sprintf(`SELECT '%s'::text AS saga, count(*) AS n,
			coalesce(extract(epoch FROM now() - min(%s)), 0)::float8 AS oldest FROM %s WHERE %s`, k.Saga, k.Since, k.Table, k.Where))
	}
	return strings.Join(parts, "\nUNION ALL\n"), nil
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { ch <- inFlightDesc; ch <- oldestDesc }

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	figures, ok := m.figures.Get(m.Read)
	if !ok {
		return
	}
	for _, k := range m.kinds {
		f := figures[k.Saga]
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(f.Count), k.Saga)
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, f.OldestAgeSeconds, k.Saga)
	}
}

// Read reads every kind's figures now, in one statement on the audited cross-tenant path (a
// system job's: audited only when it finds something).
func (m *Metrics) Read(ctx context.Context) (map[string]Figures, error) {
	var out map[string]Figures
	ctx = tenancy.WithActor(ctx, tenancy.System("inflight-metrics"))
	err := crosstenant.JobTx(ctx, m.platform, "count the money the sagas hold in flight (svc_sagas_in_flight)", func(tx pgx.Tx) (int, error) {
		var err error
		out, err = summarize(ctx, tx, m.sql)
		total := 0
		for _, f := range out {
			total += int(f.Count)
		}
		return total, err
	})
	if err != nil {
		return nil, fmt.Errorf("inflight: read: %w", err)
	}
	return out, nil
}

// Summarize reads every kind's figures now in tx, a cross-tenant transaction whose audit row the
// caller's path writes (a platform admin's: crosstenant.Tx).
func Summarize(ctx context.Context, tx db.Querier, kinds []Kind) (map[string]Figures, error) {
	q, err := query(kinds)
	if err != nil {
		return nil, err
	}
	return summarize(ctx, tx, q)
}

// summarize runs query's statement: a figure for every kind (zero when nothing is in flight).
func summarize(ctx context.Context, tx db.Querier, q string) (map[string]Figures, error) {
	rows, err := tx.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("inflight: summarize: %w", err)
	}
	defer rows.Close()
	out := map[string]Figures{}
	for rows.Next() {
		var saga string
		var f Figures
		if err := rows.Scan(&saga, &f.Count, &f.OldestAgeSeconds); err != nil {
			return nil, fmt.Errorf("inflight: summarize: %w", err)
		}
		out[saga] = f
	}
	return out, rows.Err()
}

// Find is the kind of kinds labelled saga.
func Find(kinds []Kind, saga string) (Kind, bool) {
	for _, k := range kinds {
		if k.Saga == saga {
			return k, true
		}
	}
	return Kind{}, false
}

// List lists the oldest rows (at most limit, 1 to MaxList) of kind k in flight, oldest first, in
// tx: a platform admin's cross-tenant transaction (crosstenant.Tx), whose audit row the caller's
// path writes. It reads through the kind's partial index.
func List(ctx context.Context, tx db.Querier, k Kind, limit int) ([]Row, error) {
	if limit < 1 || limit > MaxList {
		return nil, fmt.Errorf("inflight: list %d rows: 1 to %d", limit, MaxList)
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT tenant_id, (%s)::text, coalesce((%s)::text, ''), %[3]s,
			greatest(extract(epoch FROM now() - %[3]s), 0)::float8
		FROM %s WHERE %s ORDER BY %[3]s, tenant_id LIMIT $1`, k.Key, k.Workflow, k.Since, k.Table, k.Where), limit)
	if err != nil {
		return nil, fmt.Errorf("inflight: list %s: %w", k.Saga, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Row, error) {
		var v Row
		err := r.Scan(&v.TenantID, &v.Key, &v.WorkflowID, &v.Since, &v.AgeSeconds)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("inflight: list %s: %w", k.Saga, err)
	}
	return out, nil
}
