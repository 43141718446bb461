package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/ledger/chart"
)

// Pair is one tenant and partner to reconcile.
type Pair struct {
	TenantID string
	Partner  string
}

// FindPairs returns every tenant and partner whose partner-bank mirror accounts there is money to
// reconcile in, restricted to partners when it is not empty, in (tenant, partner) order, with no
// list to keep. It reads, on the cross-tenant path, the ledger's mirror accounts
// (partner-bank:<partner>:<account>, chart.PartnerBankAccount, the accounts the runner
// reconciles): a mirror that only ever received money (the escrow of savings deposits sent from
// the saver's bank at another partner) is named by no transfer of its partner. And the gateway's
// transfer register (gateway.transfers): every partner a tenant sent money from, mirrored or
// not, as before. The read is audited, once per call.
//
// platform must log in as wagerail_platform (crosstenant.Tx).
func FindPairs(ctx context.Context, platform db.Beginner, partners []string) ([]Pair, error) {
	if tenancy.Actor(ctx) == "" {
		ctx = tenancy.WithActor(ctx, tenancy.System("reconcile"))
	}
	var out []Pair
	err := crosstenant.Tx(ctx, platform, "reconcile: find every tenant with partner-bank mirror accounts", func(tx pgx.Tx) error {
		// A mirror's name is the prefix, the partner, ':' and the account (without a ':' of its
		// own: a longer name is a sub-account, which the runner does not reconcile either).
		rows, err := tx.Query(ctx, `
			WITH pairs AS (
				SELECT tenant_id, partner FROM gateway.transfers
				UNION
				SELECT tenant_id, split_part(substr(name, length($2) + 1), ':', 1) FROM ledger.accounts
				WHERE starts_with(name, $2) AND substr(name, length($2) + 1) ~ '^[^:]+:[^:]+$')
			SELECT tenant_id, partner FROM pairs
			WHERE coalesce(cardinality($1::text[]), 0) = 0 OR partner = ANY($1)
			ORDER BY tenant_id, partner`, partners, chart.PartnerBank+":")
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Pair])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile.find_pairs: %w", err)
	}
	return out, nil
}

// Outcome is one whole reconciliation run, as RecordOutcome stores it.
type Outcome struct {
	// WorkflowID and RunID are the run's Temporal ids: recording the same run twice (a retried
	// activity) keeps the first record.
	WorkflowID, RunID string
	// Everyone: the run covered every pair FindPairs found, not a given list of tenants.
	Everyone               bool
	From, To               string // YYYY-MM-DD, inclusive
	Pairs, Flagged, Errors int
}

// Succeeded reports whether the run counts as "reconciliation succeeded": it covered everyone
// and no pair had a runner error (flags are findings, not failures).
func (o Outcome) Succeeded() bool { return o.Everyone && o.Errors == 0 }

// RecordOutcome stores a finished run in app.reconciliations (not tenant-scoped: it holds counts
// only). A run already recorded is left as it is.
func (s *Store) RecordOutcome(ctx context.Context, o Outcome) error {
	from, err := time.Parse(time.DateOnly, o.From)
	if err != nil {
		return fmt.Errorf("reconcile.record_outcome: from %q: %w", o.From, err)
	}
	to, err := time.Parse(time.DateOnly, o.To)
	if err != nil {
		return fmt.Errorf("reconcile.record_outcome: to %q: %w", o.To, err)
	}
	if o.WorkflowID == "" || o.RunID == "" {
		return errors.New("reconcile.record_outcome: the run's workflow and run ids are required")
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO app.reconciliations (workflow_id, run_id, everyone, period_from, period_to, pairs, flagged, errors)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (workflow_id, run_id) DO NOTHING`,
		o.WorkflowID, o.RunID, o.Everyone, from, to, o.Pairs, o.Flagged, o.Errors)
	if err != nil {
		return fmt.Errorf("reconcile.record_outcome: %w", err)
	}
	return nil
}

// LastSuccess is when the last run that covered everyone without a runner error finished; ok is
// false when none has yet.
func (s *Store) LastSuccess(ctx context.Context) (at time.Time, ok bool, err error) {
	var t *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT max(finished_at) FROM app.reconciliations WHERE everyone AND errors = 0`).Scan(&t); err != nil {
		return time.Time{}, false, fmt.Errorf("reconcile.last_success: %w", err)
	}
	if t == nil {
		return time.Time{}, false, nil
	}
	return *t, true, nil
}

// LastSuccessMetric is the name of the gauge Metrics exports.
const LastSuccessMetric = "svc_reconcile_last_success_timestamp_seconds"

var lastSuccessDesc = prometheus.NewDesc(LastSuccessMetric,
	"Unix time at which the last reconciliation covering every tenant finished without a runner error (0: none yet).", nil, nil)

// Metrics exports svc_reconcile_last_success_timestamp_seconds, read from app.reconciliations at
// scrape time: every worker replica reports the same time, a restart loses nothing, and it reads
// 0 until a reconciliation has succeeded, so the alert on its age fires when none ever ran. When
// the database does not answer, the scrape has no sample (svc_dependency_up says why).
type Metrics struct {
	store *Store
}

// NewMetrics returns the collector; register it on the worker's registry.
func NewMetrics(s *Store) *Metrics { return &Metrics{store: s} }

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { ch <- lastSuccessDesc }

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	at, ok, err := m.store.LastSuccess(ctx)
	if err != nil {
		return
	}
	v := 0.0
	if ok {
		v = float64(at.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(lastSuccessDesc, prometheus.GaugeValue, v)
}
