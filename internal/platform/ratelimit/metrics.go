package ratelimit

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/promreg"
)

// Metrics holds svc_rate_limited_total{rule}. A nil *Metrics counts nothing.
type Metrics struct {
	refusals *prometheus.CounterVec
}

// NewMetrics registers the counter on reg (nil: not registered). The API and the worker may share
// one registry (wagerail dev): a second registration reuses the first's counter. Pass the rules
// the process uses to export each at 0 from the start (an alert on a rate needs the series to
// exist before the first refusal).
func NewMetrics(reg prometheus.Registerer, rules ...Rule) *Metrics {
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_rate_limited_total",
		Help: "Hits refused by a rate limit (429), by rule.",
	}, []string{"rule"})
	cv = promreg.Shared(reg, cv)
	for _, r := range rules {
		cv.WithLabelValues(r.Name)
	}
	return &Metrics{refusals: cv}
}

func (m *Metrics) refused(rule string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(rule).Inc()
}
