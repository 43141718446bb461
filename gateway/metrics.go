package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the gateway's Prometheus series. None has a tenant label: tenants are unbounded
// and their ids must not leak into monitoring.
type Metrics struct {
	LookupSuccess  *prometheus.CounterVec   // lookup_success_total{partner}
	LookupFailure  *prometheus.CounterVec   // lookup_failure_total{partner,reason}
	LookupLatency  *prometheus.HistogramVec // lookup_latency_seconds{partner}
	DependencyUp   *prometheus.GaugeVec     // svc_dependency_up{dependency}
	PartnerCalls   *prometheus.CounterVec   // gateway_partner_calls_total{partner,op,result}
	PartnerLatency *prometheus.HistogramVec // gateway_partner_call_latency_seconds{partner,op}
	AdapterHealth  *prometheus.GaugeVec     // gateway_adapter_degraded{partner}

	mu         sync.Mutex
	lastIngest map[string]time.Time
	clock      Clock
}

// NewMetrics creates the series and registers them on reg (nil: not registered, for tests).
func NewMetrics(reg prometheus.Registerer, clock Clock) *Metrics {
	if clock == nil {
		clock = SystemClock{}
	}
	m := &Metrics{
		LookupSuccess: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lookup_success_total", Help: "Account lookups that confirmed an active account (and the expected holder name, when given).",
		}, []string{"partner"}),
		LookupFailure: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lookup_failure_total", Help: "Account lookups that did not confirm the account, by reason (not_found, account_closed, name_mismatch, timeout, unavailable, partner_error, invalid).",
		}, []string{"partner", "reason"}),
		LookupLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lookup_latency_seconds", Help: "Account lookup latency as the caller sees it, retries included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"partner"}),
		DependencyUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "svc_dependency_up", Help: "1 when the dependency answered its last probe, else 0.",
		}, []string{"dependency"}),
		PartnerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_partner_calls_total", Help: "Calls that reached a partner adapter, by operation and result kind (ok, not_found, rejected, conflict, invalid, unavailable, unknown).",
		}, []string{"partner", "op", "result"}),
		PartnerLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gateway_partner_call_latency_seconds", Help: "Latency of one attempt of a partner call.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"partner", "op"}),
		AdapterHealth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gateway_adapter_degraded", Help: "1 when the partner adapter is DEGRADED by the spec's rule, 0 when HEALTHY.",
		}, []string{"partner"}),
		lastIngest: map[string]time.Time{},
		clock:      clock,
	}
	if reg != nil {
		reg.MustRegister(m.LookupSuccess, m.LookupFailure, m.LookupLatency, m.DependencyUp, m.PartnerCalls, m.PartnerLatency, m.AdapterHealth, m)
	}
	return m
}

var ingestAgeDesc = prometheus.NewDesc("svc_statement_ingest_age_seconds",
	"Seconds since a statement of the partner was last ingested.", []string{"partner"}, nil)

// Describe implements prometheus.Collector for svc_statement_ingest_age_seconds, which is
// computed at scrape time so it keeps growing while no statement arrives.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { ch <- ingestAgeDesc }

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, t := range m.lastIngest {
		ch <- prometheus.MustNewConstMetric(ingestAgeDesc, prometheus.GaugeValue, now.Sub(t).Seconds(), p)
	}
}

// Ingested records a statement ingestion of partner at t (kept if newer than the last one).
func (m *Metrics) Ingested(partner string, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.After(m.lastIngest[partner]) {
		m.lastIngest[partner] = t
	}
}

// IngestAge returns the current ingest age of partner, and false when none was recorded.
func (m *Metrics) IngestAge(partner string) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lastIngest[partner]
	if !ok {
		return 0, false
	}
	return m.clock.Now().Sub(t), true
}

// LoadIngestState seeds the ingest ages from the database, so a restart does not reset them.
func (m *Metrics) LoadIngestState(ctx context.Context, s *Store) error {
	last, err := s.LastIngest(ctx)
	if err != nil {
		return err
	}
	for p, t := range last {
		m.Ingested(p, t)
	}
	return nil
}

// Observer returns the GuardConfig.Observe hook for partner.
func (m *Metrics) Observer(partner string) func(op string, latency time.Duration, err error) {
	return func(op string, latency time.Duration, err error) {
		result := "ok"
		if err != nil {
			result = AsPartnerError(err).Kind.String()
		}
		m.PartnerCalls.WithLabelValues(partner, op, result).Inc()
		m.PartnerLatency.WithLabelValues(partner, op).Observe(latency.Seconds())
	}
}
