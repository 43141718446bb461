package outbox

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

func TestEventCounterCountsTheNamedDomainsByType(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := EventCounter(reg, "bnpl", "wallet")
	require.NoError(t, err)
	require.Equal(t, "event-metrics", c.Name())
	for _, typ := range []string{"bnpl.activated.v1", "bnpl.activated.v1", "wallet.transfer_settled.v1", "ewa.disbursed.v1", "bnpl", ""} {
		require.NoError(t, c.Consume(context.Background(), Event{Type: typ}))
	}
	require.Equal(t, 2, testutil.CollectAndCount(reg, MetricDomainEvents), "one series per counted type; other domains and malformed types none")
	require.Equal(t, map[string]float64{"bnpl.activated.v1": 2, "wallet.transfer_settled.v1": 1}, eventCounts(t, reg))

	// A second consumer on the same registry counts into the same series.
	again, err := EventCounter(reg, "bnpl")
	require.NoError(t, err)
	require.NoError(t, again.Consume(context.Background(), Event{Type: "bnpl.activated.v1"}))
	require.Equal(t, 3.0, eventCounts(t, reg)["bnpl.activated.v1"])

	// Without a registry nothing is exported and nothing fails.
	bare, err := EventCounter(nil, "bnpl")
	require.NoError(t, err)
	require.NoError(t, bare.Consume(context.Background(), Event{Type: "bnpl.activated.v1"}))
}

// eventCounts is svc_domain_events_total by type.
func eventCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return got
}
