package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// The portal dashboards (the spec's /api/business/*, /api/fi/* and /api/bnpl/* "dashboard"
// families): one read answers what a portal's first screen shows, each figure from its domain's
// own summary (internal/<domain>/Summarize), all in one transaction of the caller's tenant so
// row-level security applies as on every other read. A dashboard never shows more than the
// caller could read through the domain's own routes: each section names the list route whose
// guard decides it (dashboardSection), and a section the caller may not read is null. The
// figures are each exact when read; the transaction is READ COMMITTED, so two sections may
// straddle a change that commits between their reads.

// dashboardRoutes serves the dashboards.
func (s *Server) dashboardRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/business/:id/dashboard", Auth: Org, Role: orgs.PlainMember, Tenant: "id",
			Summary: "A business's dashboard: employees, payroll, advances, loans, BNPL, equb, disputes (sections the caller may not read are null)",
			Handler: s.businessDashboard},
		{Method: http.MethodGet, Path: "/api/admin/dashboard", Auth: Platform,
			Summary: "The platform's dashboard: organizations by kind and status, and the queues waiting for a platform admin",
			Handler: s.adminDashboard},
	}
}

// dashboardSection is one section of a dashboard: it is shown to a caller whom the guard of the
// route (method and path, a row of the route table) admits.
type dashboardSection struct{ route string }

var (
	sectionEmployees = dashboardSection{"GET /api/employees"}
	sectionPayroll   = dashboardSection{"GET /api/payroll"}
	sectionEwa       = dashboardSection{"GET /api/ewa/requests"}

	dashboardSections = []dashboardSection{sectionEmployees, sectionPayroll, sectionEwa}
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

type businessDashboardJSON struct {
	BusinessID string               `json:"businessId"`
	AsOf       time.Time            `json:"asOf"`
	Employees  *employeeSummaryJSON `json:"employees"`
	Payroll    *payrollSummaryJSON  `json:"payroll"`
	Ewa        *ewaSummaryJSON      `json:"ewa"`
}

// businessDashboard answers GET /api/business/<id>/dashboard.
func (s *Server) businessDashboard(c *gin.Context) {
	cl := callerOf(c)
	if cl.Access.OrgKind != orgs.Business {
		writeError(c, NewError(http.StatusNotFound, "NOT_FOUND", "no such organization"))
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
			e, err := ewa.Summarize(ctx, tx, cl.Tenant, now)
			if err != nil {
				return d, err
			}
			d.Ewa = &ewaSummaryJSON{ByStatus: statusCounts(e.ByStatus), OutstandingCount: e.OutstandingCount,
				OutstandingSantim: e.OutstandingSantim, InFlightSantim: e.InFlightSantim, DisbursedThisMonthSantim: e.DisbursedThisMonthSantim}
		}
		return d, nil
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
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
