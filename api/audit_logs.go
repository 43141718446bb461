package api

import (
	"context"
	"net/http"
	"regexp"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The audit trail's readers (the spec's /api/admin/audit-logs among the portal families): an
// organization's owners and admins read their own trail; a platform admin reads every tenant's,
// including the platform-wide rows (tenant "*": cross-tenant reads, sign-ins, two-factor and
// passkey changes), on the audited cross-tenant path. Both filter by actor, action, outcome,
// target and time, newest first, paged by the row's id (audit.Find).

func (s *Server) auditLogRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/audit-logs", Auth: Org, Role: orgs.Admin, Summary: "The organization's audit trail (filtered, newest first)", Handler: s.listAuditLogs},
		{Method: http.MethodGet, Path: "/api/admin/audit-logs", Auth: Platform, Summary: "Every tenant's audit trail (filtered, newest first)", Handler: s.listAllAuditLogs},
	}
}

// The trail readers' query parameters: an organization's list; the platform's (tenantId too); a
// user's own activity (none that names another party).
var (
	auditLogFilters = map[string]bool{"limit": true, "cursor": true, "actor": true, "action": true, "outcome": true,
		"targetType": true, "targetId": true, "from": true, "to": true}
	platformAuditLogFilters = map[string]bool{"limit": true, "cursor": true, "actor": true, "action": true, "outcome": true,
		"targetType": true, "targetId": true, "from": true, "to": true, "tenantId": true}
	accountActivityFilters = map[string]bool{"limit": true, "cursor": true, "action": true, "outcome": true, "from": true, "to": true}
)

var (
	// auditName is an action or a target type as the writers spell them (DisburseEwa, EwaRequest).
	auditName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,63}$`)
	// auditText is an actor or a target id: 1 to 200 visible ASCII characters (a user id,
	// partner:<name>, system:<name>, a row id, an upload's key).
	auditText = regexp.MustCompile(`^[!-~]{1,200}$`)
)

// auditLogJSON is one row of the trail as these lists show it.
type auditLogJSON struct {
	auditRowJSON
	TenantID string `json:"tenantId"`
}

// auditSearch reads a trail list's query: each parameter once, none but known.
func auditSearch(c *gin.Context, known map[string]bool) (audit.Search, *Error) {
	q := c.Request.URL.Query()
	var s audit.Search
	limit, before, e := seqListQuery(q, known)
	if e != nil {
		return s, e
	}
	s.Limit, s.Before = limit+1, before
	for _, p := range []struct {
		name, problem string
		re            *regexp.Regexp
		dst           *string
	}{
		{"actor", "must be an actor as the trail shows it (a user id, partner:<name> or system:<name>)", auditText, &s.Actor},
		{"targetId", "must be 1 to 200 visible ASCII characters", auditText, &s.TargetID},
		{"action", "must be an action as the trail spells it, e.g. DisburseEwa", auditName, &s.Action},
		{"targetType", "must be a target type as the trail spells it, e.g. EwaRequest", auditName, &s.TargetType},
	} {
		if q.Has(p.name) {
			if *p.dst = q.Get(p.name); !p.re.MatchString(*p.dst) {
				return s, fieldError(&field.Error{Field: p.name, Problem: p.problem})
			}
		}
	}
	if q.Has("outcome") {
		switch o := audit.Outcome(q.Get("outcome")); o {
		case audit.Success, audit.Denied, audit.Failed:
			s.Outcome = o
		default:
			return s, fieldError(&field.Error{Field: "outcome", Problem: "must be SUCCESS, DENIED or FAILED"})
		}
	}
	if q.Has("tenantId") {
		if s.TenantID = q.Get("tenantId"); s.TenantID != crosstenant.PlatformTenant {
			if err := field.Identifier("tenantId", s.TenantID, 0); err != nil {
				return s, fieldError(&field.Error{Field: "tenantId", Problem: "must be an organization's id, or * for the platform-wide rows"})
			}
		}
	}
	if s.From, s.To, e = timeWindow(q); e != nil {
		return s, e
	}
	return s, nil
}

func (s *Server) listAuditLogs(c *gin.Context) {
	q, e := auditSearch(c, auditLogFilters)
	if e != nil {
		writeError(c, e)
		return
	}
	q.TenantID = callerOf(c).Tenant
	rows, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]audit.Row, error) {
		return audit.Find(ctx, tx, q)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	writeAuditLogs(c, rows, q.Limit-1)
}

func (s *Server) listAllAuditLogs(c *gin.Context) {
	q, e := auditSearch(c, platformAuditLogFilters)
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []audit.Row
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		rows, err = audit.Find(c.Request.Context(), tx, q)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	writeAuditLogs(c, rows, q.Limit-1)
}

// writeAuditLogs answers a page read with limit+1 rows.
func writeAuditLogs(c *gin.Context, rows []audit.Row, limit int) {
	rows, next := pageOf(rows, limit, func(r audit.Row) string { return strconv.FormatInt(r.ID, 10) })
	items := make([]auditLogJSON, 0, len(rows))
	for _, r := range rows {
		items = append(items, auditLogJSON{auditRowJSON: toAuditRowJSON(r), TenantID: r.TenantID})
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "nextCursor": next})
}
