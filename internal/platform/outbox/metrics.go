package outbox

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names (the spec's svc_ prefix). None carries a tenant or an event type: tenants are
// unbounded and not for a metrics backend, and an event type is one label value per type ever
// written. The consumer label is bounded by the consumers the code registers.
const (
	MetricOldestAge        = "svc_outbox_oldest_unpublished_age_seconds"
	MetricPublished        = "svc_outbox_events_published_total"
	MetricPublishFailures  = "svc_outbox_publish_failures_total"
	MetricConsumerFailures = "svc_outbox_consumer_failures_total"
	MetricDeadLettered     = "svc_outbox_dead_lettered_total"
	MetricRelayErrors      = "svc_outbox_relay_errors_total"
)

type metrics struct {
	published        prometheus.Counter
	publishFailures  prometheus.Counter
	consumerFailures *prometheus.CounterVec
	deadLettered     prometheus.Counter
	relayErrors      prometheus.Counter
	oldestAge        prometheus.GaugeFunc

	// oldest is the created_at (Unix nanoseconds) of the oldest unpublished event the relay saw
	// in its latest transaction, 0 when there was none. The gauge is computed from it when
	// scraped, so it keeps growing while the relay cannot reach the database: a stuck relay
	// shows as an ageing outbox, never as a frozen one.
	oldest atomic.Int64
}

func newMetrics(now func() time.Time) *metrics {
	m := &metrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricPublished,
			Help: "Outbox events delivered to every consumer registered for their type (none dead-lettered them) and marked published.",
		}),
		publishFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricPublishFailures,
			Help: "Outbox event deliveries in which a consumer failed (returned an error or ran out of the batch's time); that consumer retries or dead-letters the event.",
		}),
		consumerFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricConsumerFailures,
			Help: "Errors returned by each registered outbox consumer.",
		}, []string{"consumer"}),
		deadLettered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricDeadLettered,
			Help: "Outbox dead letters written to app.outbox_dead_letter: one consumer's delivery of an event that exhausted its attempts.",
		}),
		relayErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricRelayErrors,
			Help: "Outbox relay cycles that failed to claim or record (database unreachable, …).",
		}),
	}
	m.oldestAge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MetricOldestAge,
		Help: "Age of the oldest outbox event not yet published (0 when none), as of the relay's latest look at the table.",
	}, func() float64 {
		o := m.oldest.Load()
		if o == 0 {
			return 0
		}
		return max(0, now().Sub(time.Unix(0, o)).Seconds())
	})
	return m
}

func (m *metrics) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{m.published, m.publishFailures, m.consumerFailures, m.deadLettered, m.relayErrors, m.oldestAge} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m *metrics) observe(s stats) {
	if s.oldest == nil {
		m.oldest.Store(0)
		return
	}
	m.oldest.Store(s.oldest.UnixNano())
}
