package api

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// GET /api/fi/loan-requests: the FI's decision queue (the spec's /api/fi/* "loan-requests") —
// the loans waiting for the financial institution to approve or reject them (REQUESTED), across
// the businesses that opted in to its products, oldest request first, each with what the FI
// decides on: the loan and its quoted schedule as GET /api/fi/loans/<id> shows it, the product's
// name, the affordability its request was judged on (origination's own figures, kept with the
// loan since app migration 0112; null on an older loan, none is made up), the borrower's other
// loans at this FI and how long it has waited; and the actions the caller may take on it now
// (the approve and reject routes, each shown only when the route's own guard would let the
// caller through: s.may over the route table). The whole filter's totals (how many wait, the
// principal they ask for, the oldest request and its age) come with every page. Read in one
// snapshot, page and totals alike. Rules: internal/lending/loan_requests.go.
//
// Access: as GET /api/fi/loans — a member of an FI with loans.view; any other kind of
// organization is 403 ORGANIZATION_NOT_FI (audited).

// codeLoanRequestTotalsOverflow is the 422 of a queue filter whose requested sum passes int64.
const codeLoanRequestTotalsOverflow = "LOAN_REQUEST_TOTALS_OVERFLOW"

func (s *Server) fiLoanRequestRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/fi/loan-requests", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView,
		Summary: "The financial institution's decision queue: the loans waiting for its approval, oldest first, with the filter's totals (paged)",
		Handler: snapshot(s.forKind(orgs.FI, s.fiLoanRequests))}}
}

var fiLoanRequestParams = map[string]bool{"productId": true, "businessId": true, "from": true, "to": true, "limit": true, "cursor": true}

// The actions a request offers, each a route of the table whose guard decides whether the caller
// sees it (TestFILoanRequestActionsAreRoutes).
var fiLoanRequestActions = []struct {
	action  string
	section dashboardSection
	path    func(id string) string
}{
	{"APPROVE", dashboardSection{"POST /api/fi/loans/:id/approve"}, func(id string) string { return "/api/fi/loans/" + id + "/approve" }},
	{"REJECT", dashboardSection{"POST /api/fi/loans/:id/reject"}, func(id string) string { return "/api/fi/loans/" + id + "/reject" }},
}

type loanRequestActionJSON struct {
	Action string `json:"action"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

type borrowerExposureJSON struct {
	OpenLoans              int64            `json:"openLoans"`
	ByStatus               map[string]int64 `json:"byStatus"`
	OutstandingSantim      int64            `json:"outstandingSantim"`
	PendingPrincipalSantim int64            `json:"pendingPrincipalSantim"`
}

// fiLoanRequestJSON is one request of the queue.
type fiLoanRequestJSON struct {
	BusinessID    string                  `json:"businessId"`
	ProductName   string                  `json:"productName"`
	WaitedSeconds int64                   `json:"waitedSeconds"`
	Loan          loanJSON                `json:"loan"`
	Affordability *affordabilityJSON      `json:"affordability"`
	BorrowerLoans borrowerExposureJSON    `json:"borrowerLoans"`
	Actions       []loanRequestActionJSON `json:"actions"`
}

type fiLoanRequestTotalsJSON struct {
	Count               int64      `json:"count"`
	RequestedSantim     int64      `json:"requestedSantim"`
	OldestRequestedAt   *time.Time `json:"oldestRequestedAt"`
	OldestWaitedSeconds *int64     `json:"oldestWaitedSeconds"`
}

type fiLoanRequestListJSON struct {
	AsOf       time.Time               `json:"asOf"`
	Items      []fiLoanRequestJSON     `json:"items"`
	NextCursor *string                 `json:"nextCursor"`
	Totals     fiLoanRequestTotalsJSON `json:"totals"`
}

func toAffordabilityJSON(a lending.Affordability) affordabilityJSON {
	return affordabilityJSON{Affordable: a.Affordable, MonthlyInstalmentSantim: a.InstalmentSantim,
		ProjectedNetSantim: a.ProjectedNetSantim, ExistingInstalmentsSantim: a.ExistingInstalmentsSantim,
		RecoverableSantim: a.RecoverableSantim, MaxDebtServiceBasisPoints: a.MaxDebtServiceBasisPoints,
		DebtServiceLimitSantim: a.DebtServiceLimitSantim, LimitSantim: a.LimitSantim, BindingLimit: a.Binding,
		HeadroomSantim: a.HeadroomSantim, MaxAmountSantim: a.MaxAmountSantim}
}

// toRequestAffordabilityJSON is the affordability l's request was judged on, nil (JSON null) for
// a loan requested before app migration 0112: none is made up for it. The queue's items and one
// loan's read (loanDetailJSON) both show it.
func toRequestAffordabilityJSON(l lending.Loan) *affordabilityJSON {
	a, ok := l.RequestAffordability()
	if !ok {
		return nil
	}
	j := toAffordabilityJSON(a)
	return &j
}

// fiLoanRequestQuery reads the queue's query: each parameter once and none but known, then the
// page (limit, and the cursor: a place in the queue's order), then the filter.
func fiLoanRequestQuery(q url.Values) (f lending.LoanRequestFilter, limit int, after lending.LoanRequestCursor, e *Error) {
	if e = listQuery(q, fiLoanRequestParams); e != nil {
		return f, 0, after, e
	}
	if limit, _, e = pageParams(q.Get("limit"), ""); e != nil {
		return f, 0, after, e
	}
	var err error
	if after, err = lending.ParseLoanRequestCursor(q.Get("cursor")); err != nil {
		return f, 0, after, fieldError(err)
	}
	e = readFilter(q, &f.From, &f.To, idParam("productId", &f.ProductID), idParam("businessId", &f.BusinessID))
	return f, limit, after, e
}

// fiLoanRequests answers GET /api/fi/loan-requests: the query checked before anything is read.
func (s *Server) fiLoanRequests(c *gin.Context) {
	f, limit, after, e := fiLoanRequestQuery(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	now := s.now().UTC()
	type read struct {
		rows       []lending.LoanRequest
		totals     lending.LoanRequestTotals
		mayApprove bool // the FI in good standing: what the approval asks first
	}
	got, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (r read, err error) {
		if r.rows, err = lending.ListLoanRequests(ctx, tx, f, after, limit+1, now); err != nil {
			return r, err
		}
		if r.totals, err = lending.SumLoanRequests(ctx, tx, f, now); err != nil {
			return r, err
		}
		r.mayApprove, err = lending.FIMayApprove(ctx, tx, tenancy.TenantID(ctx))
		return r, err
	})
	if err != nil {
		s.payrollAnswer(c, "", "", "", bookTotalsRefusal(err, codeLoanRequestTotalsOverflow))
		return
	}
	cl := callerOf(c)
	var allowed []int
	for i, a := range fiLoanRequestActions {
		if s.may(cl, a.section) && (a.action != "APPROVE" || got.mayApprove) {
			allowed = append(allowed, i)
		}
	}
	rows, next := pageOf(got.rows, limit, func(r lending.LoanRequest) string { return r.Cursor().String() })
	out := fiLoanRequestListJSON{AsOf: now, Items: make([]fiLoanRequestJSON, 0, len(rows)), NextCursor: next,
		Totals: fiLoanRequestTotalsJSON{Count: got.totals.Count, RequestedSantim: got.totals.RequestedSantim,
			OldestRequestedAt: got.totals.OldestRequestedAt, OldestWaitedSeconds: got.totals.OldestWaitedSeconds}}
	for _, r := range rows {
		it := fiLoanRequestJSON{BusinessID: r.Loan.TenantID, ProductName: r.ProductName, WaitedSeconds: r.WaitedSeconds,
			Loan: toLoanJSON(r.Loan), Affordability: toRequestAffordabilityJSON(r.Loan), Actions: make([]loanRequestActionJSON, 0, len(allowed)),
			BorrowerLoans: borrowerExposureJSON{OpenLoans: r.Borrower.OpenLoans, ByStatus: r.Borrower.ByStatus,
				OutstandingSantim: r.Borrower.OutstandingSantim, PendingPrincipalSantim: r.Borrower.PendingPrincipalSantim}}
		for _, i := range allowed {
			a := fiLoanRequestActions[i]
			it.Actions = append(it.Actions, loanRequestActionJSON{Action: a.action, Method: http.MethodPost, Path: a.path(r.Loan.ID)})
		}
		out.Items = append(out.Items, it)
	}
	c.JSON(http.StatusOK, out)
}
