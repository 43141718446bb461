package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// GET /api/payroll/:id/audit: the run's audit trail (payroll.RunAudit over audit.List), oldest
// first, paged by audit row id.

type auditRowJSON struct {
	ID         string          `json:"id"`
	Actor      string          `json:"actor"`
	Action     string          `json:"action"`
	Outcome    string          `json:"outcome"`
	TargetType string          `json:"targetType"`
	TargetID   string          `json:"targetId"`
	Details    json.RawMessage `json:"details"`
	RequestID  *string         `json:"requestId"`
	OccurredAt time.Time       `json:"occurredAt"`
}

func (s *Server) payrollRunAudit(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	after, e := idCursor(cursor)
	if e != nil {
		writeError(c, e)
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]audit.Row, error) {
		return payroll.RunAudit(ctx, tx, id, after, limit+1)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(r audit.Row) string { return strconv.FormatInt(r.ID, 10) }, toAuditRowJSON))
}

func toAuditRowJSON(r audit.Row) auditRowJSON {
	j := auditRowJSON{ID: strconv.FormatInt(r.ID, 10), Actor: r.Actor, Action: r.Action, Outcome: string(r.Outcome),
		TargetType: r.TargetType, TargetID: r.TargetID, Details: r.Details, OccurredAt: r.OccurredAt.UTC()}
	if r.RequestID != "" {
		j.RequestID = &r.RequestID
	}
	return j
}
