package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/orgs"
)

// GET /api/employee/help: where the signed-in employee gets help, in one read — their employer's
// contact (the business profile's contact e-mail and phone, null when not given: the employer is
// who answers for pay, deductions and the employee record), the disputes they raised that are
// still open (OPENED or UNDER_INVESTIGATION, newest first, each as GET /api/me/disputes answers it,
// with its deadline and whether it is past it), and the routes that raise and follow one. The
// employee is the one the dashboard shows (myEmployee); an unlinked caller is 404
// EMPLOYEE_NOT_LINKED. One transaction of the employer's tenant on one snapshot.

// maxHelpDisputes bounds the open disputes the page lists; more says there are more (GET
// /api/me/disputes lists them all).
const maxHelpDisputes = 20

// The help page's actions: raising a dispute on a transaction of the employee's own receivable,
// the transactions that can be disputed, and every dispute raised.
var helpActions = []onboardingActionJSON{
	{Method: http.MethodPost, Path: "/api/me/disputes"},
	{Method: http.MethodGet, Path: "/api/me/ledger-transactions"},
	{Method: http.MethodGet, Path: "/api/me/disputes"},
}

type employerContactJSON struct {
	Name         string  `json:"name"`
	ContactEmail *string `json:"contactEmail"`
	ContactPhone *string `json:"contactPhone"`
}

type employeeHelpJSON struct {
	EmployeeID string              `json:"employeeId"`
	BusinessID string              `json:"businessId"`
	Employer   employerContactJSON `json:"employer"`
	Disputes   struct {
		Open []disputeJSON `json:"open"`
		More bool          `json:"more"`
	} `json:"disputes"`
	Actions []onboardingActionJSON `json:"actions"`
}

func (s *Server) employeeHelpRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/employee/help", Auth: Session,
		Summary: "Where the caller gets help as an employee: their employer's contact, their open disputes and the routes that raise and follow one",
		Handler: snapshot(s.employeeHelp)}}
}

func (s *Server) employeeHelp(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	now := s.now()
	type read struct {
		b    orgs.BusinessOrg
		open []disputes.Dispute
	}
	r, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) (read, error) {
		var r read
		var err error
		if r.b, err = orgs.BusinessByID(ctx, tx, tenant); err != nil {
			return r, err
		}
		for _, st := range []disputes.Status{disputes.Opened, disputes.UnderInvestigation} {
			rows, err := disputes.List(ctx, tx, disputes.Filter{Status: st, RaisedBy: disputes.RaisedByEmployee,
				RaisedBySubjectID: emp, Now: now, Limit: maxHelpDisputes + 1})
			if err != nil {
				return r, err
			}
			r.open = append(r.open, rows...)
		}
		return r, nil
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := employeeHelpJSON{EmployeeID: emp, BusinessID: tenant, Actions: helpActions,
		Employer: employerContactJSON{Name: r.b.Name, ContactEmail: optionalString(r.b.Profile.ContactEmail),
			ContactPhone: optionalString(r.b.Profile.ContactPhone)}}
	// Newest first across both states, as GET /api/me/disputes orders them (by id, descending).
	slices.SortFunc(r.open, func(a, b disputes.Dispute) int { return strings.Compare(b.ID, a.ID) })
	out.Disputes.Open, out.Disputes.More = []disputeJSON{}, len(r.open) > maxHelpDisputes
	for i, d := range r.open {
		if i == maxHelpDisputes {
			break
		}
		// As GET /api/me/disputes: the employee is told a decision, not who made it.
		d.DecisionBy, d.ApprovedBy = nil, nil
		out.Disputes.Open = append(out.Disputes.Open, toDisputeJSON(d, now))
	}
	c.JSON(http.StatusOK, out)
}
