package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/equb"
)

// GET /api/admin/equbs: the platform's equb oversight (the spec's /api/admin/equbs among the
// portal families) — every savings circle of every business, newest first, narrowed by state,
// business and a window on createdAt, with the filter's totals by state (the groups and their
// per-round pots); on the audited cross-tenant path (a CrossTenantAccess row names the admin and
// the route). List and totals are read on one snapshot. The escrow account is named by its
// partner only, never its number. Rules: internal/equb/admin_list.go. A group's own routes
// (GET /api/equb/groups/<id>, its business's) take it from there.

func (s *Server) adminEqubRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/admin/equbs", Auth: Platform,
		Summary: "The platform's equb groups across every business (newest first; by state, business, window; paged, with totals)",
		Handler: snapshot(s.listAdminEqubs)}}
}

var adminEqubParams = map[string]bool{"status": true, "businessId": true, "from": true, "to": true, "limit": true, "cursor": true}

// adminEqubCursorPrefix starts every group's id (the table's CHECK), so a cursor that does not is
// no nextCursor of this list.
const adminEqubCursorPrefix = "equb_"

// adminEqubRoundJSON is a group's latest round (cycle): the current one while it is not PAID.
type adminEqubRoundJSON struct {
	Number   int        `json:"number"`
	Status   string     `json:"status"`
	OpenedAt time.Time  `json:"openedAt"`
	DueAt    time.Time  `json:"dueAt"`
	PaidAt   *time.Time `json:"paidAt"`
}

type adminEqubJSON struct {
	ID                   string              `json:"id"`
	BusinessID           string              `json:"businessId"`
	BusinessName         string              `json:"businessName"`
	Name                 string              `json:"name"`
	ContributionSantim   int64               `json:"contributionSantim"`
	ContributionDueHours int                 `json:"contributionDueHours"`
	PayoutOrder          string              `json:"payoutOrder"`
	DefaultRule          string              `json:"defaultRule"`
	MaxMembers           int                 `json:"maxMembers"`
	ActiveMembers        int64               `json:"activeMembers"`
	PotSantim            int64               `json:"potSantim"`
	RoundsTotal          int                 `json:"roundsTotal"`
	CurrentRound         *adminEqubRoundJSON `json:"currentRound"`
	Status               string              `json:"status"`
	EscrowPartner        string              `json:"escrowPartner"`
	CreatedAt            time.Time           `json:"createdAt"`
	UpdatedAt            time.Time           `json:"updatedAt"`
}

func toAdminEqubJSON(g equb.AdminGroup) adminEqubJSON {
	out := adminEqubJSON{ID: g.ID, BusinessID: g.TenantID, BusinessName: g.BusinessName, Name: g.Name,
		ContributionSantim: g.ContributionSantim, ContributionDueHours: g.ContributionDueHours, PayoutOrder: g.PayoutOrder,
		DefaultRule: g.DefaultRule, MaxMembers: g.MaxMembers, ActiveMembers: g.ActiveMembers, PotSantim: g.PotSantim,
		RoundsTotal: g.CyclesTotal, Status: g.Status, EscrowPartner: g.EscrowPartner, CreatedAt: g.CreatedAt.UTC(), UpdatedAt: g.UpdatedAt.UTC()}
	if g.CycleNumber != nil && g.CycleStatus != nil && g.CycleOpenedAt != nil && g.CycleDueAt != nil {
		out.CurrentRound = &adminEqubRoundJSON{Number: *g.CycleNumber, Status: *g.CycleStatus, OpenedAt: g.CycleOpenedAt.UTC(),
			DueAt: g.CycleDueAt.UTC(), PaidAt: utcPtr(g.CyclePaidAt)}
	}
	return out
}

type adminEqubTotalJSON struct {
	Count     int64 `json:"count"`
	PotSantim int64 `json:"potSantim"`
}

// adminEqubListJSON is the equb oversight list's answer.
type adminEqubListJSON = totalsPage[adminEqubJSON, adminEqubTotalJSON]

// adminEqubFilter reads the list's query: each parameter once, none but known; a cursor is a
// group's id.
func adminEqubFilter(q url.Values) (f equb.AdminFilter, limit int, cursor string, e *Error) {
	if limit, cursor, e = idListQuery(q, adminEqubParams); e != nil {
		return f, 0, "", e
	}
	if e = prefixedCursor(cursor, adminEqubCursorPrefix); e == nil {
		e = readFilter(q, &f.From, &f.To, enumParam("status", &f.Status, "must be FORMING, RUNNING or COMPLETED", equb.GroupStatuses...),
			idParam("businessId", &f.BusinessID))
	}
	return f, limit, cursor, e
}

func (s *Server) listAdminEqubs(c *gin.Context) {
	f, limit, cursor, e := adminEqubFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []equb.AdminGroup
	var totals map[string]equb.AdminTotal
	err := s.asPlatform(c, func(tx pgx.Tx) (err error) {
		ctx := c.Request.Context()
		if rows, err = equb.AdminList(ctx, tx, f, cursor, limit+1); err == nil {
			totals, err = equb.AdminTotals(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		// Totals past int64 (money.ErrOverflow) and a listed figure past it (equb's refusal) are
		// both EQUB_TOTALS_OVERFLOW (422).
		writeError(c, bookTotalsRefusal(payrollError(err), equb.CodeAdminTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(g equb.AdminGroup) string { return g.ID }, toAdminEqubJSON,
		func(t equb.AdminTotal) adminEqubTotalJSON {
			return adminEqubTotalJSON{Count: t.Count, PotSantim: t.PotSantim}
		})
}
