package api

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Probe checks one dependency; nil means up.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
}

// readiness runs the probes concurrently, each with its own deadline, and keeps
// svc_dependency_up current.
type readiness struct {
	probes []Probe
	up     *prometheus.GaugeVec
}

func newReadiness(probes []Probe, reg prometheus.Registerer) *readiness {
	up := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "svc_dependency_up",
		Help: "1 when the dependency answered its last readiness probe, 0 otherwise.",
	}, []string{"dependency"})
	reg.MustRegister(up)
	return &readiness{probes: probes, up: up}
}

type probeResult struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	TookMs int64  `json:"tookMs"`
}

func (r *readiness) check(ctx context.Context) (map[string]probeResult, bool) {
	out := make(map[string]probeResult, len(r.probes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	allUp := true
	for _, p := range r.probes {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			start := time.Now()
			err := p.Check(pctx)
			res := probeResult{Status: "up", TookMs: time.Since(start).Milliseconds()}
			v := 1.0
			if err != nil {
				res.Status, res.Error, v = "down", err.Error(), 0
			}
			r.up.WithLabelValues(p.Name).Set(v)
			mu.Lock()
			out[p.Name] = res
			if err != nil {
				allUp = false
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out, allUp
}

// watch refreshes the gauge every interval so alerts fire even when nobody calls /api/readyz.
func (r *readiness) watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

const defaultWatchInterval = 10 * time.Second
