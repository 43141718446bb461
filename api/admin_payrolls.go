package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/logging"
)

// The platform's oversight of payroll money across every tenant (the spec's /api/admin/payrolls
// and /api/admin/remittances among the portal families): every business's payroll runs, and
// every remittance the platform sends from a business's payroll account (to the FIs for loans,
// to the payees of court orders), each with the filter's totals. Both are reads on the audited
// cross-tenant path (a CrossTenantAccess row names the admin and the route), the page and its
// totals read in one snapshot. Rules: internal/payroll/admin_list.go and
// internal/lending/remittance_feed.go. A business's own routes (GET /api/payroll, the run's
// court-order remittances) and an FI's (GET /api/fi/settlements) take it from there.

// Codes of a list whose totals pass int64 santim (422): the caller narrows the filter.
const (
	codePayrollTotalsOverflow    = "PAYROLL_TOTALS_OVERFLOW"
	codeRemittanceTotalsOverflow = "REMITTANCE_TOTALS_OVERFLOW"
)

func (s *Server) adminPayrollRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/admin/payrolls", Auth: Platform, Handler: snapshot(s.listAdminPayrolls),
			Summary: "Every business's payroll runs (newest first; by status, business, creation window; paged, with totals by status)"},
		{Method: http.MethodGet, Path: "/api/admin/remittances", Auth: Platform, Handler: snapshot(s.listAdminRemittances),
			Summary: "Every loan and court-order remittance (newest change of state first; by kind, status, business, window; paged, with totals)"},
	}
}

// --- GET /api/admin/payrolls ---

var adminPayrollParams = map[string]bool{"status": true, "businessId": true, "from": true, "to": true, "limit": true, "cursor": true}

// adminPayrollRunJSON is a run as the platform's list shows it: its business, its stored figures
// and the instant of each state it has been in (null for one it has not).
type adminPayrollRunJSON struct {
	ID                          string     `json:"id"`
	BusinessID                  string     `json:"businessId"`
	BusinessName                string     `json:"businessName"`
	Period                      string     `json:"period"`
	Status                      string     `json:"status"`
	Locked                      bool       `json:"locked"`
	Calculating                 bool       `json:"calculating"`
	EmployeeCount               int        `json:"employeeCount"`
	GrossSantim                 int64      `json:"grossSantim"`
	DeductionsSantim            int64      `json:"deductionsSantim"`
	NetSantim                   int64      `json:"netSantim"`
	EmployerContributionsSantim int64      `json:"employerContributionsSantim"`
	CarriedForwardSantim        int64      `json:"carriedForwardSantim"`
	CreatedAt                   time.Time  `json:"createdAt"`
	UpdatedAt                   time.Time  `json:"updatedAt"`
	CalculatedAt                *time.Time `json:"calculatedAt"`
	ApprovedAt                  *time.Time `json:"approvedAt"`
	DisbursingAt                *time.Time `json:"disbursingAt"`
	DisbursedAt                 *time.Time `json:"disbursedAt"`
	CompletingAt                *time.Time `json:"completingAt"`
	CancelledAt                 *time.Time `json:"cancelledAt"`
	LockedAt                    *time.Time `json:"lockedAt"`
}

func toAdminPayrollRunJSON(r payroll.PlatformRun) adminPayrollRunJSON {
	return adminPayrollRunJSON{ID: r.ID, BusinessID: r.TenantID, BusinessName: r.BusinessName, Period: r.Period, Status: r.Status,
		Locked: r.Locked(), Calculating: r.Calculating(), EmployeeCount: r.EmployeeCount, GrossSantim: r.GrossSantim,
		DeductionsSantim: r.DeductionsSantim, NetSantim: r.NetSantim, EmployerContributionsSantim: r.EmployerContributionsSantim,
		CarriedForwardSantim: r.CarriedForwardSantim, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		CalculatedAt: optionalTime(r.CalculatedAt), ApprovedAt: optionalTime(r.ApprovedAt), DisbursingAt: optionalTime(r.DisbursingAt),
		DisbursedAt: optionalTime(r.DisbursedAt), CompletingAt: optionalTime(r.CompletingAt), CancelledAt: optionalTime(r.CancelledAt),
		LockedAt: optionalTime(r.LockedAt)}
}

type adminPayrollRunTotalJSON struct {
	Count            int64 `json:"count"`
	GrossSantim      int64 `json:"grossSantim"`
	DeductionsSantim int64 `json:"deductionsSantim"`
	NetSantim        int64 `json:"netSantim"`
}

// adminPayrollFilter reads the list's query: each parameter once, none but known.
func adminPayrollFilter(q url.Values) (f payroll.PlatformRunFilter, limit int, after string, e *Error) {
	if limit, after, e = idListQuery(q, adminPayrollParams); e == nil {
		e = readFilter(q, &f.From, &f.To, enumParam("status", &f.Status,
			"must be DRAFT, CALCULATED, APPROVED, DISBURSING, DISBURSED, COMPLETED or CANCELLED", payroll.RunStatuses...),
			idParam("businessId", &f.BusinessID))
	}
	return f, limit, after, e
}

func (s *Server) listAdminPayrolls(c *gin.Context) {
	f, limit, after, e := adminPayrollFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []payroll.PlatformRun
	var totals map[string]payroll.PlatformRunTotal
	err := s.asPlatformBun(c, func(tx db.BunTx) (err error) {
		ctx := c.Request.Context()
		if rows, err = payroll.ListPlatformRuns(ctx, tx, f, after, limit+1); err == nil {
			totals, err = payroll.PlatformRunTotals(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codePayrollTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(r payroll.PlatformRun) string { return r.ID }, toAdminPayrollRunJSON,
		func(t payroll.PlatformRunTotal) adminPayrollRunTotalJSON { return adminPayrollRunTotalJSON(t) })
}

// --- GET /api/admin/remittances ---

var adminRemittanceParams = map[string]bool{"kind": true, "status": true, "businessId": true, "from": true, "to": true,
	"limit": true, "cursor": true}

// adminRemitAccountJSON is an account of a remittance: its partner bank and its number masked to
// the last four characters (never shown in full).
type adminRemitAccountJSON struct {
	Partner             string `json:"partner"`
	MaskedAccountNumber string `json:"maskedAccountNumber"`
}

type adminRemitLoanJSON struct {
	LoanID string `json:"loanId"`
	Index  int    `json:"index"`
	FIID   string `json:"fiId"`
	FIName string `json:"fiName"`
}

type adminRemitCourtOrderJSON struct {
	RunID  string `json:"runId"`
	Period string `json:"period"`
	Orders int    `json:"orders"`
}

// adminRemittanceJSON is one remittance of the feed: its kind's own part (loan or courtOrder)
// is set, the other null.
type adminRemittanceJSON struct {
	Kind             string                    `json:"kind"`
	BusinessID       string                    `json:"businessId"`
	BusinessName     string                    `json:"businessName"`
	Status           string                    `json:"status"`
	Attempt          int                       `json:"attempt"`
	AmountSantim     int64                     `json:"amountSantim"`
	From             adminRemitAccountJSON     `json:"from"`
	To               adminRemitAccountJSON     `json:"to"`
	PartnerReference string                    `json:"partnerReference"`
	WorkflowID       string                    `json:"workflowId"`
	TransferID       *string                   `json:"transferId"`
	FailureReason    *string                   `json:"failureReason"`
	CreatedAt        time.Time                 `json:"createdAt"`
	UpdatedAt        time.Time                 `json:"updatedAt"`
	RemittedAt       *time.Time                `json:"remittedAt"`
	Loan             *adminRemitLoanJSON       `json:"loan"`
	CourtOrder       *adminRemitCourtOrderJSON `json:"courtOrder"`
}

func toAdminRemittanceJSON(it lending.RemittanceFeedItem) adminRemittanceJSON {
	out := adminRemittanceJSON{Kind: it.Kind, BusinessID: it.TenantID, BusinessName: it.BusinessName, Status: it.Status,
		Attempt: it.Attempt, AmountSantim: it.AmountSantim,
		From:             adminRemitAccountJSON{Partner: it.From.Partner, MaskedAccountNumber: logging.MaskLast4(it.From.AccountNumber)},
		To:               adminRemitAccountJSON{Partner: it.To.Partner, MaskedAccountNumber: logging.MaskLast4(it.To.AccountNumber)},
		PartnerReference: it.Reference, WorkflowID: it.WorkflowID, TransferID: optionalString(it.TransferID),
		FailureReason: optionalString(it.FailureReason), CreatedAt: it.CreatedAt.UTC(), UpdatedAt: it.UpdatedAt.UTC(),
		RemittedAt: utcPtr(it.RemittedAt)}
	switch it.Kind {
	case lending.RemittanceKindLoan:
		out.Loan = &adminRemitLoanJSON{LoanID: it.LoanID, Index: it.Index, FIID: it.FIID, FIName: it.FIName}
	case lending.RemittanceKindCourtOrder:
		out.CourtOrder = &adminRemitCourtOrderJSON{RunID: it.RunID, Period: it.Period, Orders: it.Orders}
	}
	return out
}

// adminRemittanceFilter reads the feed's query (remittanceFeedQuery, shared with a business's
// bills) and its business.
func adminRemittanceFilter(q url.Values) (f lending.RemittanceFeedFilter, limit int, after lending.RemittanceFeedCursor, e *Error) {
	var business string
	f, limit, after, e = remittanceFeedQuery(q, adminRemittanceParams, lending.RemittanceKinds, idParam("businessId", &business))
	f.BusinessID = business
	return f, limit, after, e
}

func (s *Server) listAdminRemittances(c *gin.Context) {
	f, limit, after, e := adminRemittanceFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []lending.RemittanceFeedItem
	var totals map[string]map[string]lending.SettlementTotal
	err := s.asPlatform(c, func(tx pgx.Tx) (err error) {
		ctx := c.Request.Context()
		if rows, err = lending.ListRemittanceFeed(ctx, tx, f, after, limit+1); err == nil {
			totals, err = lending.RemittanceFeedTotals(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeRemittanceTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(r lending.RemittanceFeedItem) string { return r.Cursor().String() }, toAdminRemittanceJSON,
		remitTotalsJSON)
}
