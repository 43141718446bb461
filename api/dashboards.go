package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payslip"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// The portal dashboards (the spec's /api/business/*, /api/fi/* and /api/bnpl/* "dashboard"
// families): one read answers what a portal's first screen shows, each figure from its domain's
// own summary (internal/<domain>/Summarize), all in one transaction of the caller's tenant so
// row-level security applies as on every other read. A dashboard never shows more than the
// caller could read through the domain's own routes: each section names the list route whose
// guard decides it (dashboardSection), and a section the caller may not read is null. The
// transaction sees one snapshot (REPEATABLE READ, db.WithSnapshot), so every figure of a
// dashboard is as of the same instant: a change that commits while it reads shows in all of its
// sections or in none.
//
// A section whose sums pass int64 santim (its summary's money.ErrOverflow) is null on the
// business's dashboard and the rest still answers (sectionOverflowed), as a section the caller may
// not read is null there: a dashboard has no filter to narrow, and one domain's figures too large
// to carry are no reason to hide the others. The sums are read as text, so the overflow raises
// nothing in the database and the transaction reads on. A dashboard whose sections may not be
// null answers 422 instead: the FI's (its loans are its one section,
// FI_DASHBOARD_TOTALS_OVERFLOW) and the employee's (its loans and BNPL sections are always
// objects; only the ledger's figures are null when unread, EMPLOYEE_DASHBOARD_TOTALS_OVERFLOW).

// dashboardRoutes serves the dashboards.
func (s *Server) dashboardRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/business/:id/dashboard", Auth: Org, Role: orgs.PlainMember, Tenant: "id",
			Summary: "A business's dashboard: employees, payroll, advances, loans, BNPL, equb, disputes (sections the caller may not read are null)",
			Handler: snapshot(s.businessDashboard)},
		{Method: http.MethodGet, Path: "/api/fi/dashboard", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView,
			Summary: "The financial institution's dashboard: the loans it funds by state, what they still owe, past due and due this month",
			Handler: snapshot(s.forKind(orgs.FI, s.fiDashboard))},
		{Method: http.MethodGet, Path: "/api/bnpl/merchant/dashboard", Auth: Org, Role: orgs.PlainMember, Permission: orgs.BnplView,
			Summary: "The merchant's dashboard: the BNPL agreements bought from it, by state",
			Handler: snapshot(s.forKind(orgs.Merchant, s.merchantDashboard))},
		{Method: http.MethodGet, Path: "/api/employee/dashboard", Auth: Session,
			Summary: "The caller's own dashboard as an employee: wallet, advances, loans, BNPL, savings, equb, unread notifications, latest payslip",
			Handler: snapshot(s.employeeDashboard)},
		{Method: http.MethodGet, Path: "/api/admin/dashboard", Auth: Platform,
			Summary: "The platform's dashboard: organizations by kind and status, and the queues waiting for a platform admin",
			Handler: snapshot(s.adminDashboard)},
	}
}

// snapshot runs h with every transaction it opens on one snapshot (db.WithSnapshot).
func snapshot(h gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Request = c.Request.WithContext(db.WithSnapshot(c.Request.Context()))
		h(c)
	}
}

// dashboardSection is one section of a dashboard: it is shown to a caller whom the guard of the
// route (method and path, a row of the route table) admits.
type dashboardSection struct{ route string }

var (
	sectionEmployees = dashboardSection{"GET /api/employees"}
	sectionPayroll   = dashboardSection{"GET /api/payroll"}
	sectionEwa       = dashboardSection{"GET /api/ewa/requests"}
	sectionLoans     = dashboardSection{"GET /api/loans"}
	sectionBnpl      = dashboardSection{"GET /api/bnpl/agreements"}
	sectionEqub      = dashboardSection{"GET /api/equb/groups"}
	sectionDisputes  = dashboardSection{"GET /api/disputes"}

	dashboardSections = []dashboardSection{sectionEmployees, sectionPayroll, sectionEwa, sectionLoans, sectionBnpl, sectionEqub, sectionDisputes}
)

// may reports whether the caller, admitted to the dashboard's organization (cl.Access), would
// pass the guard of the section's route there: a platform admin always; for an Org route, a
// member with the route's role and permission.
func (s *Server) may(cl *caller, sec dashboardSection) bool {
	r, ok := s.guards[sec.route]
	if !ok {
		panic("api: dashboard section of an unknown route " + sec.route) // TestDashboardSectionsNameRoutes
	}
	switch {
	case cl.Platform:
		return true
	case r.Auth == Operator:
		return cl.Operator
	case r.Auth != Org:
		return r.Auth == Session // Platform: not a platform admin
	}
	return cl.Access.Member && cl.Access.Role.AtLeast(r.Role) && (r.Permission.Module == "" || cl.Access.Permissions.Allows(r.Permission))
}

// The dashboards that answer 422 when their sums pass int64 santim: the FI's (its loans) and the
// employee's (their own loans or BNPL agreements).
const (
	codeFIDashboardTotalsOverflow       = "FI_DASHBOARD_TOTALS_OVERFLOW"
	codeEmployeeDashboardTotalsOverflow = "EMPLOYEE_DASHBOARD_TOTALS_OVERFLOW"
)

// sectionOverflowed reports whether a dashboard section's read failed because a sum passes int64
// santim (money.ErrOverflow), logging it: the section is then null and the dashboard answers the
// rest. Any other error is not this, and fails the read.
func (s *Server) sectionOverflowed(section string, err error) bool {
	if !errors.Is(err, money.ErrOverflow) {
		return false
	}
	s.deps.Log.Warn("dashboard: a section's sums pass int64 santim; it is null", "section", section, "error", err)
	return true
}

// statusCounts is a summary's counts by status as JSON (every status present).
func statusCounts[S ~string](m map[S]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

type employeeSummaryJSON struct {
	Total    int64            `json:"total"`
	ByStatus map[string]int64 `json:"byStatus"`
	Linked   int64            `json:"linked"` // with a user account of their own
}

type payrollSummaryJSON struct {
	RunsByStatus     map[string]int64 `json:"runsByStatus"`
	LatestRun        *payrollRunJSON  `json:"latestRun"`
	LastCompletedRun *payrollRunJSON  `json:"lastCompletedRun"`
}

type ewaSummaryJSON struct {
	ByStatus                 map[string]int64 `json:"byStatus"`
	OutstandingCount         int64            `json:"outstandingCount"`
	OutstandingSantim        int64            `json:"outstandingSantim"`
	InFlightSantim           int64            `json:"inFlightSantim"`
	DisbursedThisMonthSantim int64            `json:"disbursedThisMonthSantim"`
}

type loanSummaryJSON struct {
	ByStatus           map[string]int64 `json:"byStatus"`
	OutstandingSantim  int64            `json:"outstandingSantim"`
	OverdueLoans       int64            `json:"overdueLoans"`
	OverdueSantim      int64            `json:"overdueSantim"`
	DueThisMonthSantim int64            `json:"dueThisMonthSantim"`
}

func toLoanSummaryJSON(l lending.Summary) *loanSummaryJSON {
	return &loanSummaryJSON{ByStatus: l.ByStatus, OutstandingSantim: l.OutstandingSantim, OverdueLoans: l.OverdueLoans,
		OverdueSantim: l.OverdueSantim, DueThisMonthSantim: l.DueThisMonthSantim}
}

type bnplSummaryJSON struct {
	ByStatus           map[string]int64 `json:"byStatus"`
	OutstandingSantim  int64            `json:"outstandingSantim"`
	OverdueInstalments int64            `json:"overdueInstalments"`
	OverdueSantim      int64            `json:"overdueSantim"`
	DueNext7DaysSantim int64            `json:"dueNext7DaysSantim"`
}

type equbSummaryJSON struct {
	ByStatus      map[string]int64 `json:"byStatus"`
	ActiveMembers int64            `json:"activeMembers"`
	OpenCycles    int64            `json:"openCycles"`
}

type disputeSummaryJSON struct {
	ByStatus         map[string]int64 `json:"byStatus"`
	Open             int64            `json:"open"`
	SLABreached      int64            `json:"slaBreached"`
	OpenAmountSantim int64            `json:"openAmountSantim"`
}

type businessDashboardJSON struct {
	BusinessID string               `json:"businessId"`
	AsOf       time.Time            `json:"asOf"`
	Employees  *employeeSummaryJSON `json:"employees"`
	Payroll    *payrollSummaryJSON  `json:"payroll"`
	Ewa        *ewaSummaryJSON      `json:"ewa"`
	Loans      *loanSummaryJSON     `json:"loans"`
	Bnpl       *bnplSummaryJSON     `json:"bnpl"`
	Equb       *equbSummaryJSON     `json:"equb"`
	Disputes   *disputeSummaryJSON  `json:"disputes"`
}

// businessPath answers 404 NOT_FOUND (false) unless the organization the path names (the route's
// Tenant parameter, admitted by the guard) is a business: a route under /api/business/<id> reads
// a business's figures, and another kind has none.
func businessPath(c *gin.Context) bool {
	if callerOf(c).Access.OrgKind != orgs.Business {
		writeError(c, NewError(http.StatusNotFound, "NOT_FOUND", "no such organization"))
		return false
	}
	return true
}

// businessDashboard answers GET /api/business/<id>/dashboard.
func (s *Server) businessDashboard(c *gin.Context) {
	cl := callerOf(c)
	if !businessPath(c) {
		return
	}
	now := s.now().UTC()
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (businessDashboardJSON, error) {
		d := businessDashboardJSON{BusinessID: cl.Tenant, AsOf: now}
		if s.may(cl, sectionEmployees) {
			n, err := employees.Count(ctx, tx, cl.Tenant)
			if err != nil {
				return d, err
			}
			d.Employees = &employeeSummaryJSON{Total: n.Total, ByStatus: statusCounts(n.ByStatus), Linked: n.Linked}
		}
		if s.may(cl, sectionPayroll) {
			p, err := payroll.Summarize(ctx, tx)
			if err != nil {
				return d, err
			}
			d.Payroll = &payrollSummaryJSON{RunsByStatus: p.ByStatus}
			if p.Latest != nil {
				j := toPayrollRunJSON(*p.Latest)
				d.Payroll.LatestRun = &j
			}
			if p.LastCompleted != nil {
				j := toPayrollRunJSON(*p.LastCompleted)
				d.Payroll.LastCompletedRun = &j
			}
		}
		if s.may(cl, sectionEwa) {
			switch e, err := ewa.Summarize(ctx, tx, cl.Tenant, now); {
			case s.sectionOverflowed("ewa", err):
			case err != nil:
				return d, err
			default:
				d.Ewa = &ewaSummaryJSON{ByStatus: statusCounts(e.ByStatus), OutstandingCount: e.OutstandingCount,
					OutstandingSantim: e.OutstandingSantim, InFlightSantim: e.InFlightSantim, DisbursedThisMonthSantim: e.DisbursedThisMonthSantim}
			}
		}
		if s.may(cl, sectionLoans) {
			switch l, err := lending.Summarize(ctx, tx, lending.Business, now); {
			case s.sectionOverflowed("loans", err):
			case err != nil:
				return d, err
			default:
				d.Loans = toLoanSummaryJSON(l)
			}
		}
		if s.may(cl, sectionBnpl) {
			switch b, err := bnpl.Summarize(ctx, tx, bnpl.BusinessSide, now); {
			case s.sectionOverflowed("bnpl", err):
			case err != nil:
				return d, err
			default:
				d.Bnpl = &bnplSummaryJSON{ByStatus: b.ByStatus, OutstandingSantim: b.OutstandingSantim, OverdueInstalments: b.OverdueInstalments,
					OverdueSantim: b.OverdueSantim, DueNext7DaysSantim: b.DueNext7DaysSantim}
			}
		}
		if s.may(cl, sectionEqub) {
			e, err := equb.Summarize(ctx, tx)
			if err != nil {
				return d, err
			}
			d.Equb = &equbSummaryJSON{ByStatus: e.ByStatus, ActiveMembers: e.ActiveMembers, OpenCycles: e.OpenCycles}
		}
		if s.may(cl, sectionDisputes) {
			switch ds, err := disputes.Summarize(ctx, tx, now); {
			case s.sectionOverflowed("disputes", err):
			case err != nil:
				return d, err
			default:
				d.Disputes = &disputeSummaryJSON{ByStatus: ds.ByStatus, Open: ds.Open, SLABreached: ds.SLABreached, OpenAmountSantim: ds.OpenAmountSantim}
			}
		}
		return d, nil
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

type fiDashboardJSON struct {
	OrganizationID string           `json:"organizationId"`
	AsOf           time.Time        `json:"asOf"`
	Loans          *loanSummaryJSON `json:"loans"`
}

// fiDashboard answers GET /api/fi/dashboard: the loans the active FI funds (422
// FI_DASHBOARD_TOTALS_OVERFLOW when their sums pass int64 santim: the loans are its one section).
func (s *Server) fiDashboard(c *gin.Context) {
	cl := callerOf(c)
	now := s.now().UTC()
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (fiDashboardJSON, error) {
		l, err := lending.Summarize(ctx, tx, lending.Lender, now)
		return fiDashboardJSON{OrganizationID: cl.Tenant, AsOf: now, Loans: toLoanSummaryJSON(l)}, err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeFIDashboardTotalsOverflow))
		return
	}
	c.JSON(http.StatusOK, out)
}

type merchantDashboardJSON struct {
	OrganizationID string    `json:"organizationId"`
	AsOf           time.Time `json:"asOf"`
	Agreements     struct {
		ByStatus map[string]int64 `json:"byStatus"`
	} `json:"agreements"`
}

// merchantDashboard answers GET /api/bnpl/merchant/dashboard: the agreements bought from the
// active merchant, by state (a merchant reads no instalment, so no amount owed).
func (s *Server) merchantDashboard(c *gin.Context) {
	cl := callerOf(c)
	now := s.now().UTC()
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (merchantDashboardJSON, error) {
		d := merchantDashboardJSON{OrganizationID: cl.Tenant, AsOf: now}
		b, err := bnpl.Summarize(ctx, tx, bnpl.MerchantSide, now)
		d.Agreements.ByStatus = b.ByStatus
		return d, err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

type employeeDashboardJSON struct {
	EmployeeID string    `json:"employeeId"`
	BusinessID string    `json:"businessId"`
	AsOf       time.Time `json:"asOf"`
	// Wallet and Savings are null when the ledger could not be read (the rest still answers).
	Wallet              *walletFiguresJSON  `json:"wallet"`
	Ewa                 ewaFiguresJSON      `json:"ewa"`
	Loans               borrowerLoansJSON   `json:"loans"`
	Bnpl                employeeBnplJSON    `json:"bnpl"`
	Savings             *savingsFiguresJSON `json:"savings"`
	Equb                employeeEqubJSON    `json:"equb"`
	UnreadNotifications int64               `json:"unreadNotifications"`
	LatestPayslip       *latestPayslipJSON  `json:"latestPayslip"`
}

type walletFiguresJSON struct {
	PostedSantim    int64 `json:"postedSantim"`
	AvailableSantim int64 `json:"availableSantim"`
}

type ewaFiguresJSON struct {
	Eligible           bool   `json:"eligible"`
	AvailableSantim    int64  `json:"availableSantim"`
	MaxPrincipalSantim int64  `json:"maxPrincipalSantim"`
	OutstandingSantim  int64  `json:"outstandingSantim"`
	PeriodEnd          string `json:"periodEnd"`
}

type borrowerLoansJSON struct {
	Active            int64         `json:"active"`
	OutstandingSantim int64         `json:"outstandingSantim"`
	Next              *loanNextJSON `json:"nextInstalment"`
}

type loanNextJSON struct {
	LoanID       string `json:"loanId"`
	DuePeriod    string `json:"duePeriod"`
	AmountSantim int64  `json:"amountSantim"`
}

type employeeBnplJSON struct {
	Active            int64         `json:"active"`
	OutstandingSantim int64         `json:"outstandingSantim"`
	Next              *bnplNextJSON `json:"nextInstalment"`
}

type bnplNextJSON struct {
	AgreementID  string `json:"agreementId"`
	DueDate      string `json:"dueDate"`
	AmountSantim int64  `json:"amountSantim"`
}

type savingsFiguresJSON struct {
	OpenGoals   int64 `json:"openGoals"`
	SavedSantim int64 `json:"savedSantim"`
}

type employeeEqubJSON struct {
	ActiveMemberships int64 `json:"activeMemberships"`
}

type latestPayslipJSON struct {
	RunID     string `json:"runId"`
	Period    string `json:"period"`
	NetSantim int64  `json:"netSantim"`
}

// employeeDashboard answers GET /api/employee/dashboard: the caller's own figures as the
// employee their account is linked to (the active organization's, or their only one), read in
// one transaction of the employer's tenant; the wallet and the savings from the ledger (null when
// it could not be read).
func (s *Server) employeeDashboard(c *gin.Context) {
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	now := s.now().UTC()
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	out := employeeDashboardJSON{EmployeeID: emp, BusinessID: tenant, AsOf: now}
	var goals []savings.Goal
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		e, err := s.advances().Eligibility(ctx, tx, tenant, emp, now)
		if err != nil {
			return err
		}
		out.Ewa.Eligible, out.Ewa.AvailableSantim = e.EmployeeActive && e.MaxPrincipalSantim > 0, e.AvailableSantim
		out.Ewa.MaxPrincipalSantim, out.Ewa.OutstandingSantim = e.MaxPrincipalSantim, e.OutstandingSantim
		out.Ewa.PeriodEnd = e.PeriodEnd.Format(time.DateOnly)
		l, err := lending.SummarizeBorrower(ctx, tx, emp)
		if err != nil {
			return err
		}
		out.Loans.Active, out.Loans.OutstandingSantim = l.Active, l.OutstandingSantim
		if n := l.Next; n != nil {
			out.Loans.Next = &loanNextJSON{LoanID: n.LoanID, DuePeriod: n.DuePeriod, AmountSantim: n.AmountSantim}
		}
		b, err := bnpl.SummarizeEmployee(ctx, tx, emp)
		if err != nil {
			return err
		}
		out.Bnpl.Active, out.Bnpl.OutstandingSantim = b.Active, b.OutstandingSantim
		if n := b.Next; n != nil {
			out.Bnpl.Next = &bnplNextJSON{AgreementID: n.AgreementID, DueDate: n.DueDate.Format(time.DateOnly), AmountSantim: n.AmountSantim}
		}
		if out.Equb.ActiveMemberships, err = equb.ActiveMemberships(ctx, tx, emp); err != nil {
			return err
		}
		if out.UnreadNotifications, err = notifications.UnreadCount(ctx, tx, tenant, cl.User.ID); err != nil {
			return err
		}
		slips, err := payslip.ListIssued(ctx, tx, emp, "", 1)
		if err != nil {
			return err
		}
		if len(slips) == 1 {
			out.LatestPayslip = &latestPayslipJSON{RunID: slips[0].RunID, Period: slips[0].Period, NetSantim: slips[0].NetSantim}
		}
		goals, err = savings.OpenGoals(ctx, tx, emp)
		return err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(ewaError("", emp, err), codeEmployeeDashboardTotalsOverflow))
		return
	}
	s.employeeLedgerFigures(c.Request.Context(), tenant, emp, goals, &out)
	c.JSON(http.StatusOK, out)
}

// employeeLedgerFigures sets the dashboard's wallet and savings from the ledger: the wallet's and
// every open goal's balance in one GetBalances call (an account the ledger does not have yet is
// a zero balance). A failed read leaves its section null and is logged; the dashboard still
// answers.
func (s *Server) employeeLedgerFigures(ctx context.Context, tenant, emp string, goals []savings.Goal, out *employeeDashboardJSON) {
	if s.deps.Ledger == nil {
		return
	}
	accounts := make([]string, 0, 1+len(goals))
	accounts = append(accounts, wallet.Account(emp))
	for _, g := range goals {
		accounts = append(accounts, savings.Account(g.ID))
	}
	balances := s.employeeBalances(ctx, tenant, accounts)
	if b := balances[0]; b != nil {
		out.Wallet = &walletFiguresJSON{PostedSantim: b.GetPostedSantim(), AvailableSantim: b.GetAvailableSantim()}
	}
	var saved int64
	for _, b := range balances[1:] {
		if b == nil {
			return
		}
		saved += b.GetPostedSantim()
	}
	out.Savings = &savingsFiguresJSON{OpenGoals: int64(len(goals)), SavedSantim: saved}
}

// employeeBalances reads the balances of the named accounts of tenant, in order: one
// GetBalances call per ledger.MaxGetBalances accounts (one call unless an employee has that many
// open goals). An account the ledger does not have yet is a zero balance; one whose read failed
// is nil, and logged.
func (s *Server) employeeBalances(ctx context.Context, tenant string, accounts []string) []*ledgerv1.Balance {
	out := make([]*ledgerv1.Balance, len(accounts))
	for start := 0; start < len(accounts); start += ledger.MaxGetBalances {
		part := accounts[start:min(start+ledger.MaxGetBalances, len(accounts))]
		req := &ledgerv1.GetBalancesRequest{TenantId: tenant, Accounts: make([]*ledgerv1.AccountRef, len(part))}
		for i, a := range part {
			req.Accounts[i] = &ledgerv1.AccountRef{AccountName: a}
		}
		resp, err := s.deps.Ledger.GetBalances(ctx, req)
		if err == nil && len(resp.GetResults()) != len(part) {
			err = fmt.Errorf("ledger answered %d balances for %d accounts", len(resp.GetResults()), len(part))
		}
		if err != nil {
			s.deps.Log.Warn("employee dashboard: ledger read failed", "accounts", len(part), "account", part[0], "error", err)
			continue
		}
		for i, r := range resp.GetResults() {
			switch err := ledger.ItemError(r); {
			case errors.Is(err, ledger.ErrAccountNotFound):
				out[start+i] = &ledgerv1.Balance{}
			case err != nil:
				s.deps.Log.Warn("employee dashboard: ledger read failed", "account", part[i], "error", err)
			default:
				out[start+i] = r.GetBalance()
			}
		}
	}
	return out
}

type orgKindSummaryJSON struct {
	ByStatus   map[string]int64 `json:"byStatus"`
	KycPending int64            `json:"kycPending"`
}

type adminDashboardJSON struct {
	AsOf          time.Time                     `json:"asOf"`
	Organizations map[string]orgKindSummaryJSON `json:"organizations"`
	KycQueue      struct {
		Pending  int64 `json:"pending"`
		InReview int64 `json:"inReview"`
	} `json:"kycQueue"`
	SanctionsAwaitingReview int64 `json:"sanctionsAwaitingReview"`
	DeadLetters             int64 `json:"deadLetters"`
}

// adminDashboard answers GET /api/admin/dashboard: every figure across tenants, read on the
// audited cross-tenant path.
func (s *Server) adminDashboard(c *gin.Context) {
	ctx := c.Request.Context()
	out := adminDashboardJSON{AsOf: s.now().UTC(), Organizations: map[string]orgKindSummaryJSON{}}
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		kinds, err := orgs.CountByKind(ctx, tx)
		if err != nil {
			return err
		}
		for k, n := range kinds {
			out.Organizations[string(k)] = orgKindSummaryJSON{ByStatus: n.ByStatus, KycPending: n.KYCPending}
		}
		if out.KycQueue.Pending, out.KycQueue.InReview, err = kyc.QueueCounts(ctx, tx); err != nil {
			return err
		}
		if out.SanctionsAwaitingReview, err = sanctions.AwaitingReview(ctx, tx); err != nil {
			return err
		}
		out.DeadLetters, err = outbox.CountDeadLetters(ctx, tx)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
