package outbox

import (
	"context"
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricDomainEvents counts the products' state changes by event type.
const MetricDomainEvents = "svc_domain_events_total"

// EventCounter is a consumer named event-metrics that counts each event of the given domains
// (an event type's first dot-separated part: "bnpl", "wallet") in svc_domain_events_total{type}:
// the products' state changes — an agreement activated, a transfer settled, a goal withdrawn — as
// rates beside the audit rows and the events that record each one. Event types are constants of
// the code, never caller input, so the label is bounded by the code; events of other domains are
// not counted. Delivery is at least once: an event the relay delivers again counts again (the
// counter is for rates; the events are the record). It never fails. reg may be nil (nothing
// exported); a registry that already has the counter keeps counting in it.
func EventCounter(reg prometheus.Registerer, domains ...string) (Consumer, error) {
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricDomainEvents,
		Help: "Outbox events of the products' domains (bnpl, wallet, savings, equb) delivered to the worker, by event type.",
	}, []string{"type"})
	if reg != nil {
		if err := reg.Register(counter); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return nil, err
			}
			existing, ok := already.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, err
			}
			counter = existing
		}
	}
	counted := make(map[string]bool, len(domains))
	for _, d := range domains {
		counted[d] = true
	}
	return ConsumerFunc("event-metrics", func(_ context.Context, e Event) error {
		if domain, _, ok := strings.Cut(e.Type, "."); ok && counted[domain] {
			counter.WithLabelValues(e.Type).Inc()
		}
		return nil
	}), nil
}
