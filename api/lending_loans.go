package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Loans, without money movement yet (issue 24, second part): a business's admins originate a
// loan for an employee (POST /api/loans, Idem, audit RequestLoan) and cancel it before it is paid
// out; the lending FI's members with loans.approve approve, reject or cancel the loans they fund
// (/api/fi/loans/*); org members read the business's loans, FI members with loans.view the FI's,
// and an employee their own (/api/me/loans). States and rules: internal/lending/loans.go.

// loanRoutes serves the loan routes of this file.
func (s *Server) loanRoutes() []Route {
	idem := func(r Route) Route { r.Idem = true; return r }
	return []Route{
		idem(s.bizRoute(http.MethodPost, "/api/loans", "Originate a loan for an employee (REQUESTED)", orgs.Admin, s.originateLoan, BodyByMethod)),
		s.bizRoute(http.MethodGet, "/api/loans", "The organization's loans (paged, filtered)", orgs.PlainMember, s.listLoans, BodyByMethod),
		s.bizRoute(http.MethodGet, "/api/loans/:id", "One loan with its instalments", orgs.PlainMember, s.getLoan, BodyByMethod),
		s.bizRoute(http.MethodPost, "/api/loans/:id/cancel", "Cancel a loan before it is paid out", orgs.Admin, s.cancelLoan, BodyNone),
		s.fiRoute(http.MethodGet, "/api/fi/loans", "The loans the financial institution funds (paged, filtered)", orgs.LoansView, s.listFILoans, BodyByMethod),
		s.fiRoute(http.MethodGet, "/api/fi/loans/:id", "One loan the financial institution funds, with its instalments", orgs.LoansView, s.getFILoan, BodyByMethod),
		s.fiRoute(http.MethodPost, "/api/fi/loans/:id/approve", "Approve a requested loan", orgs.LoansApprove, s.approveLoan, BodyNone),
		s.fiRoute(http.MethodPost, "/api/fi/loans/:id/reject", "Reject a requested loan, with a reason", orgs.LoansApprove, s.rejectLoan, BodyByMethod),
		s.fiRoute(http.MethodPost, "/api/fi/loans/:id/cancel", "Cancel a loan the financial institution funds before it is paid out", orgs.LoansApprove, s.fiCancelLoan, BodyNone),
		{Method: http.MethodGet, Path: "/api/me/loans", Auth: Session, Summary: "The caller's own loans", Handler: s.myLoans},
		{Method: http.MethodGet, Path: "/api/me/loans/:id", Auth: Session, Summary: "One of the caller's own loans", Handler: s.myLoan},
		// The disbursement saga (api/lending_disburse.go), last so the fuzz seeds above keep their rows.
		idem(s.bizRoute(http.MethodPost, "/api/loans/:id/disburse", "Disburse an approved loan (gates, ledger, partner transfer)", orgs.Admin, s.disburseLoan, BodyNone)),
	}
}

// --- JSON ---

type loanInstalmentJSON struct {
	Index           int    `json:"index"`
	DuePeriod       string `json:"duePeriod"`
	PrincipalSantim int64  `json:"principalSantim"`
	InterestSantim  int64  `json:"interestSantim"`
	FeeSantim       int64  `json:"feeSantim"`
	TotalSantim     int64  `json:"totalSantim"`
	BalanceSantim   int64  `json:"balanceSantim"`
	RepaidSantim    int64  `json:"repaidSantim"`
	Status          string `json:"status"`
}

type loanJSON struct {
	ID                      string               `json:"id"`
	BusinessID              string               `json:"businessId"`
	BorrowerID              string               `json:"borrowerId"`
	FIPartnerID             string               `json:"fiPartnerId"`
	ProductID               string               `json:"productId"`
	ProductVersion          int                  `json:"productVersion"`
	Status                  string               `json:"status"`
	PrincipalSantim         int64                `json:"principalSantim"`
	AnnualRateBasisPoints   int64                `json:"annualRateBasisPoints"`
	TermMonths              int                  `json:"termMonths"`
	FeeFlatSantim           int64                `json:"feeFlatSantim"`
	FeeBasisPoints          int64                `json:"feeBasisPoints"`
	FeeSantim               int64                `json:"feeSantim"`
	PaymentSantim           int64                `json:"paymentSantim"`
	MonthlyInstalmentSantim int64                `json:"monthlyInstalmentSantim"`
	TotalInterestSantim     int64                `json:"totalInterestSantim"`
	TotalRepayableSantim    int64                `json:"totalRepayableSantim"`
	APRBasisPoints          *int64               `json:"aprBasisPoints"`
	FirstDuePeriod          string               `json:"firstDuePeriod"`
	RequestedBy             string               `json:"requestedBy"`
	RequestedAt             time.Time            `json:"requestedAt"`
	DecidedBy               *string              `json:"decidedBy"`
	DecidedAt               *time.Time           `json:"decidedAt"`
	DecisionReason          *string              `json:"decisionReason"`
	DisbursedAt             *time.Time           `json:"disbursedAt,omitempty"`
	LastDisbursementFailure *string              `json:"lastDisbursementFailure,omitempty"`
	PayoutAccount           *payoutAccountJSON   `json:"payoutAccount"`
	UpdatedAt               time.Time            `json:"updatedAt"`
	Instalments             []loanInstalmentJSON `json:"instalments,omitempty"`
}

func toLoanJSON(l lending.Loan) loanJSON {
	out := loanJSON{ID: l.ID, BusinessID: l.TenantID, BorrowerID: l.BorrowerID, FIPartnerID: l.FIID, ProductID: l.ProductID,
		ProductVersion: l.ProductVersion, Status: l.Status, PrincipalSantim: l.PrincipalSantim, AnnualRateBasisPoints: l.AnnualRateBasisPoints,
		TermMonths: l.TermMonths, FeeFlatSantim: l.FeeFlatSantim, FeeBasisPoints: l.FeeBasisPoints, FeeSantim: l.FeeSantim,
		PaymentSantim: l.PaymentSantim, MonthlyInstalmentSantim: l.MonthlyInstalmentSantim, TotalInterestSantim: l.TotalInterestSantim,
		TotalRepayableSantim: l.TotalRepayableSantim, APRBasisPoints: l.APRBasisPoints, FirstDuePeriod: l.FirstDuePeriod,
		RequestedBy: l.RequestedBy, RequestedAt: l.RequestedAt.UTC(), DecidedBy: l.DecidedBy, DecidedAt: utcPtr(l.DecidedAt),
		DecisionReason: l.DecisionReason, UpdatedAt: l.UpdatedAt.UTC(), DisbursedAt: utcPtr(l.DisbursedAt),
		LastDisbursementFailure: l.LastDisbursementFailure}
	if l.PayoutAccountNumber != "" {
		out.PayoutAccount = &payoutAccountJSON{Partner: l.PayoutPartner, AccountNumber: l.PayoutAccountNumber, HolderName: l.PayoutHolderName}
	}
	for _, in := range l.Instalments {
		out.Instalments = append(out.Instalments, loanInstalmentJSON{Index: in.Index, DuePeriod: in.DuePeriod,
			PrincipalSantim: in.PrincipalSantim, InterestSantim: in.InterestSantim, FeeSantim: in.FeeSantim, TotalSantim: in.TotalSantim,
			BalanceSantim: in.BalanceSantim, RepaidSantim: in.RepaidSantim, Status: in.Status})
	}
	return out
}

// loanDetailJSON is one loan's own read (GET /api/loans/{id}, /api/fi/loans/{id} and
// /api/me/loans/{id}; the schema LendingLoanDetail): the loan as every answer shows it, and the
// affordability its request was judged on (what the FI decides and services the loan on, what the
// business was quoted). One loan's read only: a list's page and a decision's answer stay loanJSON,
// and the FI's queue shows the same figures beside its loan.
type loanDetailJSON struct {
	loanJSON
	RequestAffordability *affordabilityJSON `json:"requestAffordability"`
}

func toLoanDetailJSON(l lending.Loan) loanDetailJSON {
	return loanDetailJSON{loanJSON: toLoanJSON(l), RequestAffordability: toRequestAffordabilityJSON(l)}
}

// loanListJSON is a page of loans.
type loanListJSON = itemsPage[loanJSON]

// answerLoanPage answers loans read with limit+1 as one page.
func answerLoanPage(c *gin.Context, rows []lending.Loan, limit int) {
	c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(l lending.Loan) string { return l.ID }, toLoanJSON))
}

// loanFilter reads a loan list's repeatable status, its borrowerId (when borrower) and its page.
func loanFilter(c *gin.Context, borrower bool) (lending.LoanFilter, int, bool) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return lending.LoanFilter{}, 0, false
	}
	f := lending.LoanFilter{Page: db.Page{After: cursor, Limit: limit + 1}}
	statuses := c.Request.URL.Query()["status"]
	if len(statuses) > len(lending.LoanStatuses) {
		writeError(c, fieldError(&field.Error{Field: "status", Problem: "must be given at most 9 times"}))
		return f, 0, false
	}
	check := enumCheck("status", "must be REQUESTED, APPROVED, REJECTED, CANCELLED, DISBURSING, ACTIVE, REPAID, DEFAULTED or WRITTEN_OFF", lending.LoanStatuses...)
	for _, v := range statuses {
		if err := check(v); err != nil {
			writeError(c, fieldError(err))
			return f, 0, false
		}
	}
	f.Statuses = statuses
	if borrower {
		if f.BorrowerID, ok = singleQuery(c, "borrowerId", false, identifierCheck("borrowerId")); !ok {
			return f, 0, false
		}
	}
	return f, limit, true
}

// --- the business's ---

func (s *Server) originateLoan(c *gin.Context) {
	in, ok := s.loanRequest(c, "judged")
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "RequestLoan", "Employee", in.EmployeeID, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.Originate(ctx, tx, s.deps.LoanProjection, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toLoanJSON(out))
	}
}

func (s *Server) listLoansAs(c *gin.Context, p lending.Party) {
	f, limit, ok := loanFilter(c, true)
	if !ok {
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.Loan, error) {
		return lending.ListLoans(ctx, tx, p, f)
	})
	if ok {
		answerLoanPage(c, rows, limit)
	}
}

func (s *Server) getLoanAs(c *gin.Context, p lending.Party) {
	answerPathRow(s, c, "", "", func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, p, id)
	}, toLoanDetailJSON)
}

func (s *Server) listLoans(c *gin.Context)   { s.listLoansAs(c, lending.Business) }
func (s *Server) getLoan(c *gin.Context)     { s.getLoanAs(c, lending.Business) }
func (s *Server) listFILoans(c *gin.Context) { s.listLoansAs(c, lending.Lender) }
func (s *Server) getFILoan(c *gin.Context)   { s.getLoanAs(c, lending.Lender) }

// decideLoan runs a decision on the path's loan and answers the loan (refusals audited DENIED as
// action).
func (s *Server) decideLoan(c *gin.Context, action string, fn func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error)) {
	answerPathRow(s, c, action, "Loan", fn, toLoanJSON)
}

func (s *Server) cancelLoan(c *gin.Context) {
	s.decideLoan(c, "CancelLoan", func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.CancelLoan(ctx, tx, lending.Business, id, s.now())
	})
}

// --- the FI's ---

func (s *Server) approveLoan(c *gin.Context) {
	s.decideLoan(c, "ApproveLoan", func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.ApproveLoan(ctx, tx, id, s.now())
	})
}

// reasonRequest is the body of a loan decision that takes nothing but its reason (a rejection, a
// write-off, the FI's approval of one).
type reasonRequest struct {
	Reason *string `json:"reason"`
}

// pathReason reads the path's id, then a reasonRequest body whose reason is given and passes
// lending.CheckReason. It has answered when ok is false.
func pathReason(c *gin.Context) (id, reason string, ok bool) {
	if id, ok = pathID(c); !ok {
		return "", "", false
	}
	var req reasonRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return "", "", false
	}
	if e := missingField(required{"reason", req.Reason != nil}); e != nil {
		writeError(c, e)
		return "", "", false
	}
	if err := lending.CheckReason("reason", *req.Reason); err != nil {
		writeError(c, fieldError(err))
		return "", "", false
	}
	return id, *req.Reason, true
}

func (s *Server) rejectLoan(c *gin.Context) {
	_, reason, ok := pathReason(c)
	if !ok {
		return
	}
	s.decideLoan(c, "RejectLoan", func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.RejectLoan(ctx, tx, id, reason, s.now())
	})
}

func (s *Server) fiCancelLoan(c *gin.Context) {
	s.decideLoan(c, "CancelLoan", func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.CancelLoan(ctx, tx, lending.Lender, id, s.now())
	})
}

// --- the employee's own ---

// myEmployee is the employee linked to the caller in the session's active organization, else in
// the one organization they are linked in (as /api/me/ewa/requests); it has answered 404
// EMPLOYEE_NOT_LINKED when there is none.
func (s *Server) myEmployee(c *gin.Context) (tenant, employeeID string, ok bool) {
	linked, ok := s.linkedEmployees(c)
	if !ok {
		return "", "", false
	}
	active := callerOf(c).Session.ActiveOrganizationID
	for _, e := range linked {
		if e.TenantID == active {
			return e.TenantID, e.ID, true
		}
	}
	if len(linked) == 1 {
		return linked[0].TenantID, linked[0].ID, true
	}
	writeError(c, errEmployeeNotLinked)
	return "", "", false
}

// asEmployee runs fn in the employee's tenant as the caller.
func asEmployee[T any](s *Server, c *gin.Context, tenant string, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	var out T
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	err := tenancy.InBunTx(ctx, s.bun, func(tx db.BunTx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

func (s *Server) myLoans(c *gin.Context) {
	f, limit, ok := loanFilter(c, false)
	if !ok {
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	f.BorrowerID = emp
	rows, err := asEmployee(s, c, tenant, func(ctx context.Context, tx db.BunTx) ([]lending.Loan, error) {
		return lending.ListLoans(ctx, tx, lending.Business, f)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	answerLoanPage(c, rows, limit)
}

func (s *Server) myLoan(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	out, err := asEmployee(s, c, tenant, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		l, err := lending.GetLoan(ctx, tx, lending.Business, id)
		if err == nil && l.BorrowerID != emp {
			return lending.Loan{}, lending.ErrLoanNotFound // another employee's loan
		}
		return l, err
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	// The borrower reads the affordability too: its figures are their own (their projected pay,
	// their other loans' instalments) and the product's share, which the loan was judged on.
	c.JSON(http.StatusOK, toLoanDetailJSON(out))
}
