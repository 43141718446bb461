package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/ewa"
)

// GET /api/admin/ewa: the platform's advance book (the spec's /api/admin/ewa among the portal
// families) — every early wage access request of every business, newest first, narrowed by
// status, business and a window on requestedAt, with the filter's totals by status; on the
// audited cross-tenant path (a CrossTenantAccess row names the admin and the route). List and
// totals are read on one snapshot. Rules: internal/ewa/admin_list.go. A request's own route
// (GET /api/ewa/requests/<id>, its business's) takes it from there.

// codeEwaTotalsOverflow refuses an advance book whose totals pass int64 santim (422): the caller
// narrows the filter.
const codeEwaTotalsOverflow = "EWA_TOTALS_OVERFLOW"

func (s *Server) adminEwaRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/admin/ewa", Auth: Platform,
		Summary: "The platform's early wage access requests across every business (newest first; by status, business, window; paged, with totals)",
		Handler: snapshot(s.listAdminEwa)}}
}

var adminEwaParams = map[string]bool{"status": true, "businessId": true, "from": true, "to": true, "limit": true, "cursor": true}

type adminEwaJSON struct {
	ID                string     `json:"id"`
	BusinessID        string     `json:"businessId"`
	BusinessName      string     `json:"businessName"`
	EmployeeID        string     `json:"employeeId"`
	PrincipalSantim   int64      `json:"principalSantim"`
	FeeSantim         int64      `json:"feeSantim"`
	TotalSantim       int64      `json:"totalSantim"`
	RepaidSantim      int64      `json:"repaidSantim"`
	OutstandingSantim int64      `json:"outstandingSantim"`
	Status            ewa.Status `json:"status"`
	RequestedAt       time.Time  `json:"requestedAt"`
	DisbursedAt       *time.Time `json:"disbursedAt"`
	RepaidAt          *time.Time `json:"repaidAt"`
	CancelledAt       *time.Time `json:"cancelledAt"`
	UpdatedAt         time.Time  `json:"updatedAt"`
}

func toAdminEwaJSON(e ewa.AdvanceBookEntry) adminEwaJSON {
	r := e.Request
	return adminEwaJSON{ID: r.ID, BusinessID: r.TenantID, BusinessName: e.BusinessName, EmployeeID: r.EmployeeID,
		PrincipalSantim: r.PrincipalSantim, FeeSantim: r.FeeSantim, TotalSantim: r.PrincipalSantim + r.FeeSantim,
		RepaidSantim: r.RepaidAmountSantim, OutstandingSantim: r.OwedSantim(), Status: r.Status, RequestedAt: r.RequestedAt.UTC(),
		DisbursedAt: optionalTime(r.DisbursedAt), RepaidAt: optionalTime(r.RepaidAt), CancelledAt: optionalTime(e.CancelledAt),
		UpdatedAt: r.UpdatedAt.UTC()}
}

type adminEwaTotalJSON struct {
	Count             int64 `json:"count"`
	PrincipalSantim   int64 `json:"principalSantim"`
	FeeSantim         int64 `json:"feeSantim"`
	OutstandingSantim int64 `json:"outstandingSantim"`
}

// adminEwaListJSON is the advance book's answer.
type adminEwaListJSON = totalsPage[adminEwaJSON, adminEwaTotalJSON]

// adminEwaFilter reads the advance book's query: each parameter once, none but known.
func adminEwaFilter(q url.Values) (f ewa.AdvanceBookFilter, limit int, cursor string, e *Error) {
	statuses := make([]string, 0, len(ewa.Statuses))
	for _, s := range ewa.Statuses {
		statuses = append(statuses, string(s))
	}
	if limit, cursor, e = idListQuery(q, adminEwaParams); e == nil {
		e = readFilter(q, &f.From, &f.To, enumParam("status", (*string)(&f.Status), "must be "+bookStatusWords(statuses), statuses...),
			idParam("businessId", &f.BusinessID))
	}
	return f, limit, cursor, e
}

func (s *Server) listAdminEwa(c *gin.Context) {
	f, limit, cursor, e := adminEwaFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []ewa.AdvanceBookEntry
	var totals map[ewa.Status]ewa.AdvanceBookTotal
	err := s.asPlatform(c, func(tx pgx.Tx) (err error) {
		ctx := c.Request.Context()
		if rows, err = ewa.AdvanceBook(ctx, tx, f, cursor, limit+1); err == nil {
			totals, err = ewa.AdvanceBookTotals(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeEwaTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(e ewa.AdvanceBookEntry) string { return e.ID }, toAdminEwaJSON,
		func(t ewa.AdvanceBookTotal) adminEwaTotalJSON { return adminEwaTotalJSON(t) })
}
