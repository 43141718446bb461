package api

import (
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/inflight"
	"github.com/wagerail/wagerail/workflows"
)

// The money the sagas hold in flight, for the platform's operators (internal/platform/inflight):
// GET /api/admin/in-flight, every kind's count and oldest row's age now (what the worker's
// svc_sagas_in_flight gauges show, read live), and GET /api/admin/in-flight/<saga>, that kind's
// oldest rows with their tenant, key and workflow id — where SagaMoneyInFlightLong sends them.
// Both on the audited cross-tenant path.

func (s *Server) adminInFlightRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/admin/in-flight", Auth: Platform,
			Summary: "The money the sagas hold in flight now: each kind's count and oldest row's age", Handler: s.inFlightSummary},
		{Method: http.MethodGet, Path: "/api/admin/in-flight/:saga", Auth: Platform,
			Summary: "A kind's oldest rows in flight: tenant, key, workflow id, since", Handler: s.inFlightRows},
	}
}

type inFlightKindJSON struct {
	Saga             string `json:"saga"`
	Count            int64  `json:"count"`
	OldestAgeSeconds int64  `json:"oldestAgeSeconds"`
}

type inFlightRowJSON struct {
	TenantID   string    `json:"tenantId"`
	Key        string    `json:"key"`
	WorkflowID *string   `json:"workflowId"`
	Since      time.Time `json:"since"`
	AgeSeconds int64     `json:"ageSeconds"`
}

func (s *Server) inFlightSummary(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	kinds := workflows.InFlight()
	var got map[string]inflight.Figures
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		got, err = inflight.Summarize(c.Request.Context(), tx, kinds)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	items := make([]inFlightKindJSON, 0, len(kinds))
	for _, k := range kinds {
		f := got[k.Saga]
		items = append(items, inFlightKindJSON{Saga: k.Saga, Count: f.Count, OldestAgeSeconds: int64(math.Floor(f.OldestAgeSeconds))})
	}
	c.JSON(http.StatusOK, gin.H{"kinds": items})
}

var inFlightRowParams = map[string]bool{"limit": true}

func (s *Server) inFlightRows(c *gin.Context) {
	k, ok := inflight.Find(workflows.InFlight(), c.Param("saga"))
	if !ok {
		// The saga is echoed back only when it is an identifier (never a caller's control bytes).
		e := NewError(http.StatusNotFound, "IN_FLIGHT_KIND_NOT_FOUND", "no saga holds money in flight under this name (GET /api/admin/in-flight lists them)")
		if field.Identifier("saga", c.Param("saga"), 64) == nil {
			e.Details = map[string]string{"saga": c.Param("saga")}
		}
		writeError(c, e)
		return
	}
	q := c.Request.URL.Query()
	if e := listQuery(q, inFlightRowParams); e != nil {
		writeError(c, e)
		return
	}
	limit, _, e := pageParams(q.Get("limit"), "")
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []inflight.Row
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		rows, err = inflight.List(c.Request.Context(), tx, k, limit)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	items := make([]inFlightRowJSON, 0, len(rows))
	for _, r := range rows {
		it := inFlightRowJSON{TenantID: r.TenantID, Key: r.Key, Since: r.Since.UTC(), AgeSeconds: int64(math.Floor(r.AgeSeconds))}
		if r.WorkflowID != "" {
			w := r.WorkflowID
			it.WorkflowID = &w
		}
		items = append(items, it)
	}
	c.JSON(http.StatusOK, gin.H{"saga": k.Saga, "items": items})
}
