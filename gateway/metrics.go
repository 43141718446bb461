package gateway

import (
	"context"
	"errors"
	"log/slog"
	"path"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	"google.golang.org/grpc"
)

// Metrics are the gateway's Prometheus series. None has a tenant label: tenants are unbounded
// and their ids must not leak into monitoring.
type Metrics struct {
	LookupSuccess  *prometheus.CounterVec   // lookup_success_total{partner}
	LookupFailure  *prometheus.CounterVec   // lookup_failure_total{partner,reason}
	LookupLatency  *prometheus.HistogramVec // lookup_latency_seconds{partner}
	Verify         *prometheus.CounterVec   // identity_verify_total{registry,outcome}
	VerifyLatency  *prometheus.HistogramVec // identity_verify_latency_seconds{registry}
	DependencyUp   *prometheus.GaugeVec     // svc_dependency_up{dependency}
	PartnerCalls   *prometheus.CounterVec   // gateway_partner_calls_total{partner,op,result}
	PartnerLatency *prometheus.HistogramVec // gateway_partner_call_latency_seconds{partner,op}
	AdapterHealth  *prometheus.GaugeVec     // gateway_adapter_degraded{partner}
	Requests       *prometheus.CounterVec   // svc_gateway_rpc_requests_total{rpc,outcome}
	Latency        *prometheus.HistogramVec // svc_gateway_rpc_latency_seconds{rpc}

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
		Verify: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "identity_verify_total", Help: "National id verifications by outcome (verified, not_found, revoked, deceased, name_mismatch, dob_mismatch; or why the registry could not answer: timeout, unavailable, partner_error, invalid).",
		}, []string{"registry", "outcome"}),
		VerifyLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "identity_verify_latency_seconds", Help: "National id verification latency as the caller sees it, retries included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"registry"}),
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
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_gateway_rpc_requests_total", Help: "Gateway gRPC calls by method and outcome (ok, or the error reason).",
		}, []string{"rpc", "outcome"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "svc_gateway_rpc_latency_seconds", Help: "Gateway gRPC call latency by method, partner calls included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"rpc"}),
		lastIngest: map[string]time.Time{},
		clock:      clock,
	}
	// Known label values start at 0, so a rate or an alert sees 0 rather than no series.
	for _, md := range gatewayv1.GatewayService_ServiceDesc.Methods {
		m.Requests.WithLabelValues(md.MethodName, "ok")
	}
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

// lookupFailureReasons are the reasons lookup_failure_total counts (its help text lists them).
var lookupFailureReasons = []string{"not_found", "account_closed", "name_mismatch", "timeout", "unavailable", "partner_error", "invalid"}

// knownPartner starts a configured partner's lookup counters at 0.
func (m *Metrics) knownPartner(name string) {
	if m == nil {
		return
	}
	m.LookupSuccess.WithLabelValues(name)
	for _, r := range lookupFailureReasons {
		m.LookupFailure.WithLabelValues(name, r)
	}
}

// verifyOutcomes are the outcomes identity_verify_total counts (its help text lists them).
var verifyOutcomes = []string{"verified", "not_found", "revoked", "deceased", "name_mismatch", "dob_mismatch",
	"timeout", "unavailable", "partner_error", "invalid"}

// knownRegistry starts a configured registry's verification counters at 0.
func (m *Metrics) knownRegistry(name string) {
	if m == nil {
		return
	}
	for _, o := range verifyOutcomes {
		m.Verify.WithLabelValues(name, o)
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.LookupSuccess, m.LookupFailure, m.LookupLatency, m.Verify, m.VerifyLatency, m.DependencyUp, m.PartnerCalls,
		m.PartnerLatency, m.AdapterHealth, m.Requests, m.Latency, m}
}

// Register adds the series to reg, for metrics built with NewMetrics(nil, …) before the
// rpcserve server whose interceptor they feed (NewMetrics → rpcserve.New → Register).
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// UnaryInterceptor counts and times every call and turns every error into its gRPC status in
// exactly one place (ToStatus): gateway errors keep their reason; anything else is logged and
// answered as INTERNAL without its text (it may hold SQL or connection details).
func (m *Metrics) UnaryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		rpc := path.Base(info.FullMethod)
		start := time.Now()
		resp, err := handler(ctx, req)
		m.Latency.WithLabelValues(rpc).Observe(time.Since(start).Seconds())
		outcome := "ok"
		if err != nil {
			switch ge := classify(err); {
			case errors.Is(err, context.Canceled):
				outcome = "CANCELED"
			case ge != nil:
				outcome = string(ge.Reason)
			default:
				outcome = string(ReasonInternal)
				log.Error("gateway rpc failed", "rpc", rpc, "err", err)
			}
			err = ToStatus(err).Err()
		}
		m.Requests.WithLabelValues(rpc, outcome).Inc()
		return resp, err
	}
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

// Observer returns the GuardConfig.Observe hook for partner (for a national ID registry,
// "registry:<name>", as its probes are labelled).
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
