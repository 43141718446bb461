package promreg_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/promreg"
)

func counter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_test_total", Help: "test"}, []string{"outcome"})
}

// Two creators on one registry count into the first's series; a nil registry registers nothing;
// a clash that is not the same collector panics.
func TestShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := promreg.Shared(reg, counter())
	b := promreg.Shared(reg, counter())
	require.Same(t, a, b)
	b.WithLabelValues("ok").Inc()
	require.Equal(t, 1.0, testutil.ToFloat64(a.WithLabelValues("ok")))

	c := counter()
	require.Same(t, c, promreg.Shared(nil, c))

	other := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_test_total", Help: "different help"}, []string{"outcome"})
	require.Panics(t, func() { promreg.Shared(reg, other) })
}
