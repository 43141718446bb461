package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/workflows"
)

// GET /api/health/payroll: the payroll jobs' schedules as Temporal has them (workflows.PayrollCrons).
// ready: Temporal answered; healthy: ready and no built job is PAUSED or OVERDUE (a job this
// release does not have yet is NOT_BUILT and does not make the answer unhealthy: it was never
// going to run). 200 when healthy, else 503, with the same body. The route is public, so the
// answer is read at most once per payrollHealthTTL and shared.

// payrollHealthTTL is how long one read of the schedules answers every caller.
const payrollHealthTTL = 5 * time.Second

type payrollHealth struct {
	Ready       bool                   `json:"ready"`
	Healthy     bool                   `json:"healthy"`
	Crons       []workflows.CronStatus `json:"crons"`
	GeneratedAt time.Time              `json:"generatedAt"`
	Error       string                 `json:"error,omitempty"`
}

type payrollHealthCache struct {
	mu   sync.Mutex
	last payrollHealth
}

func (s *Server) payrollHealth(c *gin.Context) {
	h := s.payrollHealthCache.read(c.Request.Context(), s.readPayrollHealth)
	status := http.StatusOK
	if !h.Healthy {
		status = http.StatusServiceUnavailable
	}
	c.JSON(status, h)
}

func (p *payrollHealthCache) read(ctx context.Context, read func(context.Context) payrollHealth) payrollHealth {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last.GeneratedAt) < payrollHealthTTL {
		return p.last
	}
	p.last = read(ctx)
	return p.last
}

func (s *Server) readPayrollHealth(ctx context.Context) payrollHealth {
	now := time.Now().UTC()
	h := payrollHealth{GeneratedAt: now, Crons: []workflows.CronStatus{}}
	if s.deps.Temporal == nil {
		h.Error = "Temporal is not configured"
		return h
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	crons, err := workflows.PayrollCrons(ctx, s.deps.Temporal, now)
	if err != nil {
		h.Error = "Temporal did not answer"
		return h
	}
	h.Ready, h.Healthy, h.Crons = true, true, crons
	for _, c := range crons {
		switch c.State {
		case workflows.CronPaused, workflows.CronOverdue, workflows.CronMissing, workflows.CronFailing:
			h.Healthy = false
		}
	}
	return h
}
