package ledger

import (
	"context"
	"errors"
	"log/slog"
	"path"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Metrics are the ledger's Prometheus series. None carries a tenant label: tenants are
// unbounded and their names are not for a metrics backend.
type Metrics struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	entries     prometheus.Counter
	transitions *prometheus.CounterVec
	drift       *prometheus.GaugeVec
}

// NewMetrics builds the ledger's series; Register puts them on a registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_ledger_rpc_requests_total",
			Help: "Ledger gRPC calls by method and outcome (ok, or the error reason).",
		}, []string{"rpc", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "svc_ledger_rpc_latency_seconds",
			Help:    "Ledger gRPC call latency by method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"rpc"}),
		entries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_ledger_entries_posted_total",
			Help: "Ledger entries written (every phase: posted, hold, release).",
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_ledger_transaction_status_transitions_total",
			Help: "Transaction status changes; from=NONE is a new transaction.",
		}, []string{"from", "to"}),
		drift: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "svc_ledger_reconcile_drift_santim",
			Help: "Absolute drift between partner-bank mirror accounts and the bank, summed over tenants, each over the latest period reconciled.",
		}, []string{"partner"}),
	}
	// Known label values start at 0, so a rate or an alert sees 0 rather than no series.
	for _, md := range ledgerv1.LedgerService_ServiceDesc.Methods {
		m.requests.WithLabelValues(md.MethodName, "ok")
	}
	for _, t := range [][2]Status{{"", Pending}, {"", Posted}, {Pending, Posted}, {Pending, Voided}, {Posted, Reversed}} {
		m.transitions.WithLabelValues(transitionFrom(t[0]), string(t[1]))
	}
	return m
}

func transitionFrom(s Status) string {
	if s == "" {
		return "NONE"
	}
	return string(s)
}

// Register adds the series to reg (the rpcserve registry, served on the metrics port).
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.entries, m.transitions, m.drift} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m *Metrics) entriesWritten(n int) { m.entries.Add(float64(n)) }

func (m *Metrics) transition(from, to Status) {
	m.transitions.WithLabelValues(transitionFrom(from), string(to)).Inc()
}

// setDrift exports the drift totals (Store.DriftTotals): per partner, every tenant's latest
// reconciliation's absolute drift, summed. The figures live in the database, so the gauge says
// how far the books are off now, also after a restart, and an old day reconciled again does not
// change it.
func (m *Metrics) setDrift(totals map[string]float64) {
	for partner, v := range totals {
		m.drift.WithLabelValues(partner).Set(v)
	}
}

// UnaryInterceptor counts and times every call and turns every error into its gRPC status in
// exactly one place: ledger errors keep their reason; anything else is logged and answered as
// INTERNAL without its text (it may hold SQL or connection details).
//
// It also serves every ledger RPC under a deadline deadlineMargin before its caller's (see
// callDeadline), and answers at once, unserved, a caller with less than the margin left. A call
// that timed out is answered no earlier than its caller's own deadline: until then, a statement
// granted its lock just before the database gave up may still commit (within the margin), and
// the answer must not reach the caller before the commit, which the caller would look up.
func (m *Metrics) UnaryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		rpc := path.Base(info.FullMethod)
		start := time.Now()
		var resp any
		var err error
		if serve, cancel, ok := callDeadline(ctx, info.FullMethod); ok {
			resp, err = handler(serve, req)
			if err != nil && serve.Err() == context.DeadlineExceeded && ToStatus(err).Code() == codes.DeadlineExceeded {
				<-ctx.Done()
			}
			cancel()
		} else {
			err = errorf(ReasonDeadlineExceeded, "less than %v left before the deadline: not served", deadlineMargin)
		}
		m.latency.WithLabelValues(rpc).Observe(time.Since(start).Seconds())
		outcome := "ok"
		if err != nil {
			var le *Error
			switch {
			case errors.As(err, &le):
				outcome = string(le.Reason)
			case errors.Is(err, context.Canceled):
				outcome = "CANCELED"
			case errors.Is(err, context.DeadlineExceeded):
				outcome = string(ReasonDeadlineExceeded)
			default:
				outcome = string(ReasonInternal)
				log.Error("ledger rpc failed", "rpc", rpc, "err", err)
			}
			err = ToStatus(err).Err()
		}
		m.requests.WithLabelValues(rpc, outcome).Inc()
		return resp, err
	}
}
