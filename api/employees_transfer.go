package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/employeetransfer"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// POST /api/employees/<id>/transfer (the spec's planned route; internal/employeetransfer holds
// the rules). Who may call: an admin (or owner) of the active organization, which is the
// employee's business (another tenant's employee is 404), who is also an admin or owner of the
// target business: the target consents through one of its own admins, since the transfer creates
// a record and PENDING mandates there. A platform admin may do both sides: a member of no
// organization, they call POST /api/admin/employees/<id>/transfer, whose Resolve finds the
// employee's business from the employee on the audited cross-tenant path (resolveTenantOf), and the
// same handler runs in that business's scope (the idempotency key, the DENIED audit rows and the
// source side are the business's; the transfer's rows name the platform admin as actor). The
// organization route takes a platform admin too when they have an active organization. The transfer runs in
// one transaction on the audited cross-tenant path (crosstenant.BunTx), because it writes in two
// tenants and no money moves (see internal/employeetransfer's doc). Idempotency-Key is required:
// a retry answers the stored response.

// employeeTransferRoutes serves the transfer routes (their rows sit with the employee routes): the
// organization's admins', and the platform admins', whose Resolve finds the employee's business.
func (s *Server) employeeTransferRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/employees/:id/transfer", Auth: Org, Role: orgs.Admin, Idem: true,
			Summary: "Move an employee to another business of the platform, their obligations handled explicitly", Handler: s.transferEmployee},
		{Method: http.MethodPost, Path: "/api/admin/employees/:id/transfer", Auth: Platform, Idem: true, Resolve: s.resolveEmployeeTenant,
			Summary: "Move an employee to another business of the platform (platform admin; the employee's business found from the employee)",
			Handler: s.transferEmployee},
	}
}

// resolveEmployeeTenant puts the business of the path's employee into the request (the Resolve
// step of the platform admin's transfer route): 400 for an id that is no identifier, 404
// NOT_FOUND for an employee that is nowhere (or deleted).
func (s *Server) resolveEmployeeTenant(c *gin.Context) {
	s.resolveTenantOf(c, `SELECT tenant_id FROM app.employees WHERE id = $1 AND deleted_at IS NULL`, errEmployeeNotFound)
}

// maxTransferReason bounds the transfer's free-text reason (bytes).
const maxTransferReason = 500

type transferPlanJSON struct {
	EwaAdvances       employeetransfer.Handling `json:"ewaAdvances"`
	Loans             employeetransfer.Handling `json:"loans"`
	DeductionMandates employeetransfer.Handling `json:"deductionMandates"`
	BnplAgreements    employeetransfer.Handling `json:"bnplAgreements"`
	EqubMemberships   employeetransfer.Handling `json:"equbMemberships"`
}

func (p *transferPlanJSON) plan() employeetransfer.Plan {
	out := employeetransfer.Plan{}
	if p == nil {
		return out
	}
	for k, h := range map[employeetransfer.Kind]employeetransfer.Handling{
		employeetransfer.EwaAdvance: p.EwaAdvances, employeetransfer.Loan: p.Loans, employeetransfer.DeductionMandate: p.DeductionMandates,
		employeetransfer.BnplAgreement: p.BnplAgreements, employeetransfer.EqubMembership: p.EqubMemberships,
	} {
		if h != "" {
			out[k] = h
		}
	}
	return out
}

// transferFields names each plan kind's JSON field (for a 400's details.field).
var transferFields = map[employeetransfer.Kind]string{
	employeetransfer.EwaAdvance: "obligations.ewaAdvances", employeetransfer.Loan: "obligations.loans",
	employeetransfer.DeductionMandate: "obligations.deductionMandates", employeetransfer.BnplAgreement: "obligations.bnplAgreements",
	employeetransfer.EqubMembership: "obligations.equbMemberships",
}

type employeeTransferRequest struct {
	TargetBusinessID         string            `json:"targetBusinessId"`
	EffectiveDate            *string           `json:"effectiveDate"`
	GrossMonthlySalarySantim *int64            `json:"grossMonthlySalarySantim"`
	Reason                   string            `json:"reason"`
	Obligations              *transferPlanJSON `json:"obligations"`
}

// check validates the body and returns the domain request's fields.
func (r *employeeTransferRequest) check() (time.Time, employeetransfer.Plan, error) {
	if err := field.Identifier("targetBusinessId", r.TargetBusinessID, 0); err != nil {
		return time.Time{}, nil, err
	}
	var day time.Time
	if r.EffectiveDate != nil {
		d, err := time.Parse(dateLayout, *r.EffectiveDate)
		if err != nil || d.Format(dateLayout) != *r.EffectiveDate {
			return time.Time{}, nil, &field.Error{Field: "effectiveDate", Problem: "must be a date such as 2026-12-31"}
		}
		if err := employees.ValidHireDate("effectiveDate", d); err != nil {
			return time.Time{}, nil, err
		}
		day = d
	}
	if r.GrossMonthlySalarySantim != nil {
		if err := employees.ValidSalary("grossMonthlySalarySantim", *r.GrossMonthlySalarySantim); err != nil {
			return time.Time{}, nil, err
		}
	}
	if r.Reason != "" {
		if err := field.Text("reason", r.Reason, maxTransferReason); err != nil {
			return time.Time{}, nil, err
		}
	}
	plan := r.Obligations.plan()
	for k, h := range plan {
		if (employeetransfer.Plan{k: h}).Check() != nil {
			return time.Time{}, nil, &field.Error{Field: transferFields[k], Problem: "is not a handling this kind of obligation allows"}
		}
	}
	return day, plan, nil
}

type employeeTransferSideJSON struct {
	BusinessID string       `json:"businessId"`
	Employee   employeeJSON `json:"employee"`
}

type employeeTransferJSON struct {
	ID            string                        `json:"id"`
	EffectiveDate string                        `json:"effectiveDate"`
	Source        employeeTransferSideJSON      `json:"source"`
	Target        employeeTransferSideJSON      `json:"target"`
	Obligations   []employeetransfer.Obligation `json:"obligations"`
}

const actionTransferEmployee = "TransferEmployee"

func (s *Server) transferEmployee(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req employeeTransferRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	day, plan, err := req.check()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	cl := callerOf(c)
	source := cl.Tenant
	if req.TargetBusinessID == source {
		writeError(c, fieldError(&field.Error{Field: "targetBusinessId", Problem: "must be another business than the employee's own"}))
		return
	}
	if !s.targetConsents(c, cl, req.TargetBusinessID) {
		return
	}
	if s.platformBun == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "employee transfers need the platform role (DATABASE_PLATFORM_URL)"))
		return
	}
	var res employeetransfer.Result
	reason := "employee transfer " + source + " -> " + req.TargetBusinessID
	err = crosstenant.BunTx(c.Request.Context(), s.platformBun, reason, func(tx db.BunTx) error {
		var err error
		res, err = employeetransfer.Transfer(c.Request.Context(), tx, employeetransfer.Request{
			SourceTenant: source, EmployeeID: id, TargetTenant: req.TargetBusinessID, EffectiveDate: day,
			GrossMonthlySalarySantim: req.GrossMonthlySalarySantim, Reason: req.Reason, Plan: plan, Now: s.now(),
		})
		return err
	})
	if err != nil {
		s.answer(c, source, transferError(id, err))
		return
	}
	c.JSON(http.StatusCreated, employeeTransferJSON{
		ID: res.ID, EffectiveDate: res.EffectiveDate.Format(dateLayout),
		Source:      employeeTransferSideJSON{BusinessID: source, Employee: toEmployeeJSON(res.Source)},
		Target:      employeeTransferSideJSON{BusinessID: req.TargetBusinessID, Employee: toEmployeeJSON(res.Target)},
		Obligations: res.Obligations,
	})
}

// targetConsents checks the caller's standing in the target business: a platform admin, or an
// active admin (or owner) of it; the target must be a business that is neither deleted nor
// suspended. It has answered when it returns false.
func (s *Server) targetConsents(c *gin.Context, cl *caller, target string) bool {
	ctx := tenancy.WithTenant(c.Request.Context(), target)
	acc, err := s.access.Get(cl.User.ID, target, func() (orgs.Access, error) {
		var a orgs.Access
		err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
			var err error
			a, err = orgs.LoadAccess(ctx, tx, target, cl.User.ID)
			return err
		})
		return a, err
	})
	switch {
	case errors.Is(err, orgs.ErrNotFound):
		acc = orgs.Access{}
	case err != nil:
		writeError(c, err)
		return false
	}
	if !cl.Platform && (!acc.Member || !acc.Role.AtLeast(orgs.Admin)) {
		// Unknown organizations and those the caller is no admin of look alike.
		s.deny(c, target, "TARGET_ADMIN_REQUIRED", "you must be an admin or owner of the target business (or a platform admin)")
		return false
	}
	if acc.OrgKind != orgs.Business || acc.OrgStatus == orgs.OrgDeleted {
		writeError(c, NewError(http.StatusNotFound, "TARGET_BUSINESS_NOT_FOUND", "no such business"))
		return false
	}
	if acc.OrgStatus == orgs.OrgSuspended {
		s.deny(c, target, "ORGANIZATION_SUSPENDED", "the target business is suspended; it cannot take on employees")
		return false
	}
	return true
}

// transferError maps the domain's refusals to the HTTP answer (refusals audited DENIED under the
// source business).
func transferError(id string, err error) error {
	var blocked *employeetransfer.Blocked
	var paid *employeetransfer.PaidThrough
	switch {
	case errors.As(err, &blocked):
		r := refuse(http.StatusConflict, "EMPLOYEE_TRANSFER_BLOCKED",
			"the employee has obligations the request does not handle, or money moves in flight; see details.obligations",
			actionTransferEmployee, targetEmployee, id)
		r.err.Details = map[string]any{"obligations": blocked.Obligations}
		r.entry.Details = map[string]any{"code": "EMPLOYEE_TRANSFER_BLOCKED", "obligations": blocked.Obligations}
		return r
	case errors.Is(err, employeetransfer.ErrNotTransferable):
		return refuse(http.StatusConflict, "EMPLOYEE_NOT_TRANSFERABLE",
			"the employee's employment has ended (TERMINATED, or transferred already)", actionTransferEmployee, targetEmployee, id)
	case errors.Is(err, employeetransfer.ErrBeforeHire):
		return refuse(http.StatusUnprocessableEntity, "TRANSFER_DATE_BEFORE_HIRE",
			"effectiveDate must not be before the employee's hire date", actionTransferEmployee, targetEmployee, id)
	case errors.As(err, &paid):
		r := refuse(http.StatusUnprocessableEntity, "TRANSFER_DATE_ALREADY_PAID",
			"the business's payroll has fixed the employee's pay through details.paidThrough (an approved run): effectiveDate must not be before it",
			actionTransferEmployee, targetEmployee, id)
		r.err.Details = map[string]any{"paidThrough": paid.Day.Format(time.DateOnly)}
		r.entry.Details = map[string]any{"code": "TRANSFER_DATE_ALREADY_PAID", "paidThrough": paid.Day.Format(time.DateOnly)}
		return r
	case errors.Is(err, employeetransfer.ErrTooLate):
		return refuse(http.StatusUnprocessableEntity, "TRANSFER_DATE_TOO_LATE",
			"effectiveDate must not be in a later month than today's: the deduction mandates move at once; record the transfer in its month",
			actionTransferEmployee, targetEmployee, id)
	case errors.Is(err, employees.ErrDuplicateNationalID):
		return refuse(http.StatusConflict, "DUPLICATE_NATIONAL_ID", "the target business already has an employee with this national id",
			actionTransferEmployee, targetEmployee, id)
	case errors.Is(err, employees.ErrDuplicateTIN):
		return refuse(http.StatusConflict, "DUPLICATE_TIN", "the target business already has an employee with this TIN",
			actionTransferEmployee, targetEmployee, id)
	}
	return employeeError(actionTransferEmployee, id, err)
}
