package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/lending"
)

// GET /api/admin/loans: the platform's loan book (the spec's /api/admin/loans among the portal
// families) — every salary-backed loan of every business, whichever FI funds it, newest first,
// narrowed by state, business, FI and a window on requestedAt, with the filter's totals by state;
// on the audited cross-tenant path (a CrossTenantAccess row names the admin and the route). List
// and totals are read on one snapshot. Rules: internal/lending/admin_list.go. A loan's own route
// (GET /api/loans/<id>, its business's) takes it from there.

// codeLoanTotalsOverflow refuses a loan book whose totals pass int64 santim (422): the caller
// narrows the filter.
const codeLoanTotalsOverflow = "LOAN_TOTALS_OVERFLOW"

func (s *Server) adminLoanRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/admin/loans", Auth: Platform,
		Summary: "The platform's loans across every business and FI (newest first; by state, business, FI, window; paged, with totals)",
		Handler: snapshot(s.listAdminLoans)}}
}

var adminLoanParams = map[string]bool{"status": true, "businessId": true, "fiId": true, "from": true, "to": true, "limit": true, "cursor": true}

type adminLoanJSON struct {
	ID                string     `json:"id"`
	BusinessID        string     `json:"businessId"`
	BusinessName      string     `json:"businessName"`
	FIID              string     `json:"fiId"`
	FIName            string     `json:"fiName"`
	EmployeeID        string     `json:"employeeId"`
	ProductID         string     `json:"productId"`
	ProductVersion    int        `json:"productVersion"`
	PrincipalSantim   int64      `json:"principalSantim"`
	OutstandingSantim int64      `json:"outstandingSantim"`
	TermMonths        int        `json:"termMonths"`
	Status            string     `json:"status"`
	RequestedAt       time.Time  `json:"requestedAt"`
	DecidedAt         *time.Time `json:"decidedAt"`
	DisbursedAt       *time.Time `json:"disbursedAt"`
	UpdatedAt         time.Time  `json:"updatedAt"`
}

func toAdminLoanJSON(e lending.LoanBookEntry) adminLoanJSON {
	return adminLoanJSON{ID: e.ID, BusinessID: e.BusinessID, BusinessName: e.BusinessName, FIID: e.FIID, FIName: e.FIName,
		EmployeeID: e.BorrowerID, ProductID: e.ProductID, ProductVersion: e.ProductVersion, PrincipalSantim: e.PrincipalSantim,
		OutstandingSantim: e.OutstandingSantim, TermMonths: e.TermMonths, Status: e.Status, RequestedAt: e.RequestedAt.UTC(),
		DecidedAt: utcPtr(e.DecidedAt), DisbursedAt: utcPtr(e.DisbursedAt), UpdatedAt: e.UpdatedAt.UTC()}
}

type adminLoanTotalJSON struct {
	Count             int64 `json:"count"`
	PrincipalSantim   int64 `json:"principalSantim"`
	OutstandingSantim int64 `json:"outstandingSantim"`
}

// adminLoanListJSON is the loan book's answer.
type adminLoanListJSON = totalsPage[adminLoanJSON, adminLoanTotalJSON]

// adminLoanFilter reads the loan book's query: each parameter once, none but known.
func adminLoanFilter(q url.Values) (f lending.LoanBookFilter, limit int, cursor string, e *Error) {
	if limit, cursor, e = idListQuery(q, adminLoanParams); e == nil {
		e = readFilter(q, &f.From, &f.To,
			enumParam("status", &f.Status, "must be "+bookStatusWords(lending.LoanStatuses), lending.LoanStatuses...),
			idParam("businessId", &f.BusinessID), idParam("fiId", &f.FIID))
	}
	return f, limit, cursor, e
}

func (s *Server) listAdminLoans(c *gin.Context) {
	f, limit, cursor, e := adminLoanFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []lending.LoanBookEntry
	var totals map[string]lending.LoanBookTotal
	err := s.asPlatform(c, func(tx pgx.Tx) (err error) {
		ctx := c.Request.Context()
		if rows, err = lending.LoanBook(ctx, tx, f, cursor, limit+1); err == nil {
			totals, err = lending.LoanBookTotals(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeLoanTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(e lending.LoanBookEntry) string { return e.ID }, toAdminLoanJSON,
		func(t lending.LoanBookTotal) adminLoanTotalJSON { return adminLoanTotalJSON(t) })
}

// bookStatusWords is a list of allowed values as a refusal names them: "A, B or C".
func bookStatusWords(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
