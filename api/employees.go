package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/employeetransfer"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/savings"
)

// The spec's "Employees" routes, the employee ↔ user link (which the spec lists as missing; we
// build it), the self-service profile (/api/me/profile) and the business employee count (its row
// is in businessRoutes, its handler here).
//
// The tenant is always the route's: the active organization, or the path's businessId. A body
// businessId is only checked against it (403 TENANT_MISMATCH, audited), never used. Another
// tenant's employee is 404 like one that does not exist. National ids are shown masked to their
// last four characters in every response; audit rows and events name ids and field names, never
// values. A TIN, like the national id, is shown masked to its last four digits.
//
// A termination date is the employee's last day of work (pay is pro-rated up to and including
// it); it is not a status change: the employer still sets TERMINATED through the status route
// (a future date on an ACTIVE employee is a notice being served), and a re-hire (TERMINATED to
// ACTIVE) clears it. payCadence is read-only: the cadence of the payment frequency the employee
// names, MONTHLY when none.

// employeeRoutes serves the employee routes (/api/employees/*, the employee-user link, /api/me/profile, the business employee-count).
func (s *Server) employeeRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/employees", Auth: Org, Role: orgs.Admin, Summary: "Add an employee to the active organization", Handler: s.createEmployee},
		{Method: http.MethodPost, Path: "/api/employees/bulk-import", Auth: Org, Role: orgs.Admin, Summary: "Import employees from a CSV file (row by row; the valid rows in one transaction)", Handler: s.importEmployees, MaxBodyBytes: employees.MaxImportBytes, Body: BodyOwn},
		{Method: http.MethodGet, Path: "/api/employees", Auth: Org, Role: orgs.PlainMember, Summary: "The active organization's employees (paged, filtered)", Handler: s.listEmployees},
		{Method: http.MethodGet, Path: "/api/employees/active/:businessId", Auth: Org, Role: orgs.PlainMember, Tenant: "businessId", Summary: "A business's ACTIVE employees (paged)", Handler: s.listActiveEmployees},
		{Method: http.MethodGet, Path: "/api/employees/department/:businessId/:department", Auth: Org, Role: orgs.PlainMember, Tenant: "businessId", Summary: "A business's employees of one department (paged)", Handler: s.listDepartmentEmployees},
		{Method: http.MethodPost, Path: "/api/employees/link/sign-up", Auth: Public, Summary: "Create an account from an e-mailed employee link and accept it", Handler: s.signUpWithEmployeeLink},
		{Method: http.MethodPost, Path: "/api/employees/link/accept", Auth: Session, Summary: "Accept an employee link invitation: the caller becomes that employee for self-service", Handler: s.acceptEmployeeLink},
		{Method: http.MethodGet, Path: "/api/employees/:id", Auth: Org, Role: orgs.PlainMember, Summary: "An employee of the active organization", Handler: s.getEmployee},
		{Method: http.MethodPut, Path: "/api/employees/:id", Auth: Org, Role: orgs.Admin, Summary: "Change an employee's details", Handler: s.updateEmployee},
		{Method: http.MethodPut, Path: "/api/employees/:id/status", Auth: Org, Role: orgs.Admin, Summary: "Change an employee's status", Handler: s.setEmployeeStatus},
		{Method: http.MethodDelete, Path: "/api/employees/:id", Auth: Org, Role: orgs.Admin, Summary: "Delete an employee (soft)", Handler: s.deleteEmployee},
		{Method: http.MethodPost, Path: "/api/employees/:id/invite", Auth: Org, Role: orgs.Admin, Summary: "Send an employee a link invitation by e-mail or text", Handler: s.inviteEmployee},
		{Method: http.MethodGet, Path: "/api/me/profile", Auth: Session, Summary: "The caller's employee row", Handler: s.myEmployeeProfile},
	}
}

// Audit actions, audit target type and event types of this file.
const (
	actionCreateEmployee    = "CreateEmployee"
	actionUpdateEmployee    = "UpdateEmployee"
	actionSetEmployeeStatus = "SetEmployeeStatus"
	actionDeleteEmployee    = "DeleteEmployee"
	actionInviteEmployee    = "InviteEmployee"
	actionLinkEmployeeUser  = "LinkEmployeeUser"
	targetEmployee          = "Employee"

	eventEmployeeCreated = "employee.created.v1"
	eventEmployeeUpdated = "employee.updated.v1"
	eventEmployeeDeleted = "employee.deleted.v1"
)

var (
	errEmployeeNotFound  = NewError(http.StatusNotFound, "NOT_FOUND", "no such employee in this organization")
	errEmployeeNotLinked = NewError(http.StatusNotFound, "EMPLOYEE_NOT_LINKED", "your account is not linked to an employee; ask your employer for a link invitation")
)

type payoutAccountJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

// employeeJSON is an employee as every response shows it: the national id masked, absent
// optional fields null.
type employeeJSON struct {
	ID                       string            `json:"id"`
	BusinessID               string            `json:"businessId"`
	UserID                   *string           `json:"userId"`
	FirstName                string            `json:"firstName"`
	LastName                 string            `json:"lastName"`
	FullName                 string            `json:"fullName"`
	Email                    *string           `json:"email"`
	Phone                    *string           `json:"phone"`
	NationalID               string            `json:"nationalId"`
	Department               *string           `json:"department"`
	Position                 *string           `json:"position"`
	EmploymentType           *string           `json:"employmentType"`
	PaymentFrequency         *string           `json:"paymentFrequency"`
	HireDate                 string            `json:"hireDate"`
	TerminationDate          *string           `json:"terminationDate"`
	TIN                      *string           `json:"tin"`
	PayCadence               catalogs.Cadence  `json:"payCadence"`
	Status                   employees.Status  `json:"status"`
	GrossMonthlySalarySantim int64             `json:"grossMonthlySalarySantim"`
	PayoutAccount            payoutAccountJSON `json:"payoutAccount"`
	CreatedAt                time.Time         `json:"createdAt"`
	UpdatedAt                time.Time         `json:"updatedAt"`
}

const dateLayout = "2006-01-02"

func toEmployeeJSON(e employees.Employee) employeeJSON {
	var left *string
	if !e.TerminationDate.IsZero() {
		d := e.TerminationDate.Format(dateLayout)
		left = &d
	}
	return employeeJSON{
		TerminationDate: left, TIN: optionalString(e.MaskedTIN()), PayCadence: e.PayCadence,
		ID: e.ID, BusinessID: e.TenantID, UserID: optionalString(e.UserID),
		FirstName: e.FirstName, LastName: e.LastName, FullName: e.FullName,
		Email: optionalString(e.Email), Phone: optionalString(e.Phone), NationalID: e.MaskedNationalID(),
		Department: optionalString(e.Department), Position: optionalString(e.Position),
		EmploymentType: optionalString(e.EmploymentType), PaymentFrequency: optionalString(e.PaymentFrequency),
		HireDate: e.HireDate.Format(dateLayout), Status: e.Status, GrossMonthlySalarySantim: e.GrossMonthlySalarySantim,
		PayoutAccount: payoutAccountJSON{Partner: e.Payout.Partner, AccountNumber: e.Payout.AccountNumber, HolderName: e.Payout.HolderName},
		CreatedAt:     e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
	}
}

// employeeRequest is the body of create (the required fields present) and update (any subset,
// at least one). An absent or null field is left alone; "" clears an optional one.
type employeeRequest struct {
	BusinessID               *string               `json:"businessId"`
	FirstName                *string               `json:"firstName"`
	LastName                 *string               `json:"lastName"`
	FullName                 *string               `json:"fullName"`
	Email                    *string               `json:"email"`
	Phone                    *string               `json:"phone"`
	NationalID               *string               `json:"nationalId"`
	Department               *string               `json:"department"`
	Position                 *string               `json:"position"`
	EmploymentType           *string               `json:"employmentType"`
	PaymentFrequency         *string               `json:"paymentFrequency"`
	HireDate                 *string               `json:"hireDate"`
	TerminationDate          *string               `json:"terminationDate"`
	TIN                      *string               `json:"tin"`
	GrossMonthlySalarySantim *int64                `json:"grossMonthlySalarySantim"`
	PayoutAccount            *payoutAccountRequest `json:"payoutAccount"`
}

// payoutAccountRequest replaces the payout account as a whole: all three fields.
type payoutAccountRequest struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

// apply writes the given fields onto e and returns their names. The full name follows a change
// of the first or last name when it was the default ("first last") and is not given itself.
func (r *employeeRequest) apply(e *employees.Employee) ([]string, error) {
	var given []string
	set := func(name string, dst *string, v *string) {
		if v != nil {
			*dst = *v
			given = append(given, name)
		}
	}
	derived := e.FullName == "" || e.FullName == e.FirstName+" "+e.LastName
	set("firstName", &e.FirstName, r.FirstName)
	set("lastName", &e.LastName, r.LastName)
	set("fullName", &e.FullName, r.FullName)
	if r.FullName == nil && derived && (r.FirstName != nil || r.LastName != nil) {
		e.FullName = "" // Normalize derives it again
	}
	set("email", &e.Email, r.Email)
	set("phone", &e.Phone, r.Phone)
	set("nationalId", &e.NationalID, r.NationalID)
	set("department", &e.Department, r.Department)
	set("position", &e.Position, r.Position)
	set("employmentType", &e.EmploymentType, r.EmploymentType)
	set("paymentFrequency", &e.PaymentFrequency, r.PaymentFrequency)
	if r.HireDate != nil {
		d, err := time.Parse(dateLayout, *r.HireDate)
		if err != nil || d.Format(dateLayout) != *r.HireDate {
			return nil, &field.Error{Field: "hireDate", Problem: "must be a date such as 2024-03-01"}
		}
		e.HireDate = d
		given = append(given, "hireDate")
	}
	if r.TerminationDate != nil {
		e.TerminationDate = time.Time{} // "" clears it
		if v := *r.TerminationDate; v != "" {
			d, err := time.Parse(dateLayout, v)
			if err != nil || d.Format(dateLayout) != v {
				return nil, &field.Error{Field: "terminationDate", Problem: "must be a date such as 2026-11-30, or \"\" to clear it"}
			}
			e.TerminationDate = d
		}
		given = append(given, "terminationDate")
	}
	set("tin", &e.TIN, r.TIN)
	if r.GrossMonthlySalarySantim != nil {
		e.GrossMonthlySalarySantim = *r.GrossMonthlySalarySantim
		given = append(given, "grossMonthlySalarySantim")
	}
	if p := r.PayoutAccount; p != nil {
		e.Payout = employees.PayoutAccount{Partner: p.Partner, AccountNumber: p.AccountNumber, HolderName: p.HolderName}
		given = append(given, "payoutAccount")
	}
	return given, nil
}

// cataloguedFields are the fields given whose values come from the employer's catalogs: an update
// checks those against the catalogs, and leaves a value filed before its entry was deleted alone.
func (r *employeeRequest) cataloguedFields() []string {
	var out []string
	if r.EmploymentType != nil {
		out = append(out, "employmentType")
	}
	if r.PaymentFrequency != nil {
		out = append(out, "paymentFrequency")
	}
	return out
}

// employeeProbe is a valid employee. The employee rules are per field, so a change applied to it
// shows exactly the given fields' errors: an update is checked before any transaction opens. Its
// hire date is the earliest allowed, so a termination date given alone meets only its own rules
// here (the stored hire date is checked in the store); given with a hire date, the two are
// checked together.
var employeeProbe = employees.Employee{FirstName: "A", LastName: "B", FullName: "A B", NationalID: "PROBE0001",
	HireDate: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), Status: employees.Active,
	Payout: employees.PayoutAccount{Partner: "probe", AccountNumber: "1", HolderName: "A B"}}

// checkedEmployee applies r to base, normalizes and validates the result.
func (r *employeeRequest) checkedEmployee(base employees.Employee) (employees.Employee, []string, error) {
	e := base
	given, err := r.apply(&e)
	if err != nil {
		return employees.Employee{}, nil, err
	}
	e.Normalize()
	return e, given, e.Validate()
}

// employeeBusiness checks a body businessId: absent or "" means the route's tenant; another
// organization's is 403 TENANT_MISMATCH (audited). It has answered when it returns false.
func (s *Server) employeeBusiness(c *gin.Context, id *string) bool {
	if id == nil || *id == "" {
		return true
	}
	if err := field.Identifier("businessId", *id, 0); err != nil {
		writeError(c, fieldError(err))
		return false
	}
	return s.sameBusiness(c, *id)
}

// employeeError maps the employee store's errors to the API's: the refusals of a domain rule are
// audited DENIED (action on the employee id) when answered with s.answer.
func employeeError(action, id string, err error) error {
	var fe *field.Error
	var ce *employees.CatalogError
	switch {
	case errors.Is(err, employees.ErrNotFound):
		return errEmployeeNotFound
	case errors.As(err, &ce):
		return errNotInCatalog(ce)
	case errors.Is(err, employees.ErrInvalid) && errors.As(err, &fe):
		return fieldError(fe)
	case errors.Is(err, employees.ErrDuplicateNationalID):
		return refuse(http.StatusConflict, "DUPLICATE_NATIONAL_ID", "another employee of this business has this national id",
			action, targetEmployee, id)
	case errors.Is(err, employees.ErrDuplicateTIN):
		return refuse(http.StatusConflict, "DUPLICATE_TIN", "another employee of this business has this TIN", action, targetEmployee, id)
	case errors.Is(err, employees.ErrInvalidTransition):
		return refuse(http.StatusConflict, "EMPLOYEE_INVALID_TRANSITION",
			"a terminated employee can only be re-hired (status ACTIVE)", action, targetEmployee, id)
	case errors.Is(err, employees.ErrAlreadyLinked):
		return refuse(http.StatusConflict, "EMPLOYEE_ALREADY_LINKED", "this employee is already linked to a user", action, targetEmployee, id)
	case errors.Is(err, employees.ErrUserAlreadyLinked):
		return refuse(http.StatusConflict, "USER_ALREADY_LINKED", "your account is already linked to an employee of this business",
			action, targetEmployee, id)
	case errors.Is(err, employees.ErrNoContact):
		return refuse(http.StatusConflict, "EMPLOYEE_CONTACT_MISSING", "the employee has no address for this channel; add it first",
			action, targetEmployee, id)
	case errors.Is(err, employees.ErrLinkMismatch):
		return refuse(http.StatusForbidden, "EMPLOYEE_LINK_MISMATCH",
			"this link was sent to another e-mail or phone; sign in with the account that has it (a phone must be verified)",
			action, targetEmployee, id)
	case errors.Is(err, employees.ErrInvalidLink):
		return errInvalidToken
	}
	return err
}

// errNotInCatalog is the answer to an employment type or payment frequency that is no entry of
// the employer's catalog: well-formed, but not a value this employer has (422).
func errNotInCatalog(ce *employees.CatalogError) *Error {
	e := NewError(http.StatusUnprocessableEntity, "NOT_IN_CATALOG", ce.Error()+" (GET /api/employment-types, /api/payment-frequencies)")
	e.Details = map[string]string{"field": ce.Field}
	return e
}

// recordEmployee writes a change's audit row and event in the change's transaction.
func recordEmployee(ctx context.Context, tx pgx.Tx, action, event, id string, details map[string]any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: targetEmployee, TargetID: id,
		Details: details}); err != nil {
		return err
	}
	payload := map[string]any{"employeeId": id}
	if f, ok := details["fields"]; ok {
		payload["fields"] = f
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

// --- create, read, update, status, delete ---

func (s *Server) createEmployee(c *gin.Context) {
	var req employeeRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if !s.employeeBusiness(c, req.BusinessID) {
		return
	}
	if req.GrossMonthlySalarySantim == nil {
		writeError(c, fieldError(&field.Error{Field: "grossMonthlySalarySantim", Problem: "is required"}))
		return
	}
	e, given, err := req.checkedEmployee(employees.Employee{Status: employees.Active})
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Employee, error) {
		if err := employees.ResolveCatalogs(ctx, tx, &e); err != nil {
			return employees.Employee{}, employeeError(actionCreateEmployee, "", err)
		}
		out, err := employees.Create(ctx, tx, tenant, e)
		if err != nil {
			return out, employeeError(actionCreateEmployee, "", err)
		}
		return out, recordEmployee(ctx, tx, actionCreateEmployee, eventEmployeeCreated, out.ID, map[string]any{"fields": given})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusCreated, toEmployeeJSON(out))
}

func (s *Server) getEmployee(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	e, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Employee, error) {
		return employees.ByID(ctx, tx, tenant, id)
	})
	if err != nil {
		writeError(c, employeeError("", id, err))
		return
	}
	c.JSON(http.StatusOK, toEmployeeJSON(e))
}

func (s *Server) updateEmployee(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req employeeRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if !s.employeeBusiness(c, req.BusinessID) {
		return
	}
	_, given, err := req.checkedEmployee(employeeProbe)
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	if len(given) == 0 {
		writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", "give at least one field to change"))
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Employee, error) {
		out, err := employees.Update(ctx, tx, tenant, id, func(e *employees.Employee) error {
			if _, err := req.apply(e); err != nil {
				return err
			}
			if catalogued := req.cataloguedFields(); len(catalogued) > 0 {
				return employees.ResolveCatalogs(ctx, tx, e, catalogued...)
			}
			return nil
		})
		if err != nil {
			return out, employeeError(actionUpdateEmployee, id, err)
		}
		return out, recordEmployee(ctx, tx, actionUpdateEmployee, eventEmployeeUpdated, id, map[string]any{"fields": given})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, toEmployeeJSON(out))
}

type employeeStatusRequest struct {
	Status employees.Status `json:"status"`
}

func (s *Server) setEmployeeStatus(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req employeeStatusRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if !req.Status.Valid() {
		writeError(c, fieldError(&field.Error{Field: "status", Problem: "must be ACTIVE, ON_LEAVE, SUSPENDED or TERMINATED"}))
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Employee, error) {
		if req.Status == employees.Terminated {
			if err := endable(ctx, tx, tenant, id, actionSetEmployeeStatus, true, nil); err != nil {
				return employees.Employee{}, err
			}
		}
		e, from, changed, err := employees.SetStatus(ctx, tx, tenant, id, req.Status)
		if err != nil {
			return e, employeeError(actionSetEmployeeStatus, id, err)
		}
		if !changed {
			return e, nil // already in that status: nothing changed, nothing to record
		}
		fields := []string{"status"}
		if from == employees.Terminated && e.Status == employees.Active {
			fields = append(fields, "terminationDate") // a re-hire clears it
		}
		return e, recordEmployee(ctx, tx, actionSetEmployeeStatus, eventEmployeeUpdated, id,
			map[string]any{"fields": fields, "from": from, "to": e.Status})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, toEmployeeJSON(out))
}

func (s *Server) deleteEmployee(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		if err := endable(ctx, tx, tenant, id, actionDeleteEmployee, false, s.savingsHeld); err != nil {
			return err
		}
		if _, err := employees.SoftDelete(ctx, tx, tenant, id, s.now()); err != nil {
			return employeeError(actionDeleteEmployee, id, err)
		}
		return recordEmployee(ctx, tx, actionDeleteEmployee, eventEmployeeDeleted, id, nil)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, successBody)
}

// endable refuses to end employee id's employment, under its row lock, around the money it owes
// or that is moving for it (employeetransfer.Obligations): a termination (inFlightOnly) while
// money is in flight, 409 EMPLOYEE_MONEY_IN_FLIGHT; a delete, which frees the national id and
// drops the record from every read, while it owes anything, 409 EMPLOYEE_HAS_OBLIGATIONS. What
// is owed and not moving stays with a terminated record, as a transfer's RETAIN_WITH_SOURCE.
// more adds obligations of the action's own (a delete's: the saver's goals that hold money).
func endable(ctx context.Context, tx pgx.Tx, tenant, id, action string, inFlightOnly bool,
	more func(ctx context.Context, tx pgx.Tx, tenant, id string) ([]employeetransfer.Obligation, error)) error {
	if _, err := employees.Lock(ctx, tx, tenant, id); err != nil {
		return employeeError(action, id, err)
	}
	found, err := employeetransfer.Obligations(ctx, tx, tenant, id)
	if err != nil {
		return err
	}
	if more != nil {
		extra, err := more(ctx, tx, tenant, id)
		if err != nil {
			return err
		}
		found = append(found, extra...)
	}
	code, msg := "EMPLOYEE_HAS_OBLIGATIONS",
		"the employee owes money or has money moving (details.obligations): settle, cancel or transfer them first"
	if inFlightOnly {
		found = employeetransfer.InFlight(found)
		code, msg = "EMPLOYEE_MONEY_IN_FLIGHT", "money is moving for the employee (details.obligations): wait for it, or cancel it first"
	}
	if len(found) == 0 {
		return nil
	}
	r := refuse(http.StatusConflict, code, msg, action, targetEmployee, id)
	r.err.Details = map[string]any{"obligations": found}
	r.entry.Details = map[string]any{"code": code, "obligations": found}
	return r
}

// savingsHeld lists the employee's goals that hold money or have it moving (SAVINGS_GOAL): the
// saver reaches them only through their record, so deleting it would strand the money at the
// escrow. Read with the employee's row locked; a ledger that cannot answer is 503.
func (s *Server) savingsHeld(ctx context.Context, tx pgx.Tx, tenant, id string) ([]employeetransfer.Obligation, error) {
	goals, err := savings.OpenGoals(ctx, tx, id)
	if err != nil || len(goals) == 0 {
		return nil, err
	}
	if s.deps.Ledger == nil {
		return nil, errLedgerUnavailable
	}
	var out []employeetransfer.Obligation
	for _, g := range goals {
		h, err := s.goalHoldings(ctx, tenant, g.ID)
		if err != nil {
			return nil, err
		}
		if !h.Empty() {
			out = append(out, employeetransfer.Obligation{Kind: employeetransfer.SavingsGoal, ID: g.ID, Status: g.Status})
		}
	}
	return out, nil
}

// --- lists ---

type employeeListJSON struct {
	Employees  []employeeJSON `json:"employees"`
	NextCursor *string        `json:"nextCursor"`
}

// Query parameters of the employee lists.
const (
	qLimit      = "limit"
	qCursor     = "cursor"
	qStatus     = "status"
	qDepartment = "department"
	qName       = "q"
)

// employeeFilter reads a list's query: limit (1 to 100), cursor (the previous page's
// nextCursor) and the filters the route allows; a filter the route fixes itself is refused.
func employeeFilter(c *gin.Context, allowed ...string) (employees.Filter, bool) {
	q := c.Request.URL.Query()
	f := employees.Filter{Limit: employees.DefaultPage}
	refuse := func(err error) (employees.Filter, bool) {
		writeError(c, fieldError(err))
		return employees.Filter{}, false
	}
	for _, k := range []string{qLimit, qCursor, qStatus, qDepartment, qName} {
		if !q.Has(k) {
			continue
		}
		if len(q[k]) > 1 {
			return refuse(&field.Error{Field: k, Problem: "must be given at most once"})
		}
		v := q.Get(k)
		ok := k == qLimit || k == qCursor
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return refuse(&field.Error{Field: k, Problem: "is not a filter of this route"})
		}
		switch k {
		case qLimit:
			n, err := parseLimit(v)
			if err != nil {
				return refuse(err)
			}
			f.Limit = n
		case qCursor:
			if err := field.Identifier(k, v, 0); err != nil {
				return refuse(err)
			}
			f.After = v
		case qStatus:
			if st := employees.Status(v); !st.Valid() {
				return refuse(&field.Error{Field: k, Problem: "must be ACTIVE, ON_LEAVE, SUSPENDED or TERMINATED"})
			}
			f.Status = employees.Status(v)
		case qDepartment, qName:
			if err := listText(k, v); err != nil {
				return refuse(err)
			}
			if k == qName {
				f.Query = v
			} else {
				f.Department = v
			}
		}
	}
	return f, true
}

// listText checks a department or name filter: a name of at most employees.MaxLabel bytes.
func listText(name, v string) error {
	if err := field.Name(name, v); err != nil {
		return err
	}
	if len(v) > employees.MaxLabel {
		return &field.Error{Field: name, Problem: "must be at most 128 bytes"}
	}
	return nil
}

// listEmployeesWith answers one page of the route tenant's employees matching f.
func (s *Server) listEmployeesWith(c *gin.Context, f employees.Filter) {
	tenant := callerOf(c).Tenant
	limit := f.Limit
	f.Limit = limit + 1
	page, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]employees.Employee, error) {
		return employees.List(ctx, tx, tenant, f)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := employeeListJSON{Employees: []employeeJSON{}}
	page, out.NextCursor = pageOf(page, limit, func(e employees.Employee) string { return e.ID })
	for _, e := range page {
		out.Employees = append(out.Employees, toEmployeeJSON(e))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) listEmployees(c *gin.Context) {
	if f, ok := employeeFilter(c, qStatus, qDepartment, qName); ok {
		s.listEmployeesWith(c, f)
	}
}

func (s *Server) listActiveEmployees(c *gin.Context) {
	if f, ok := employeeFilter(c, qDepartment, qName); ok {
		f.Status = employees.Active
		s.listEmployeesWith(c, f)
	}
}

func (s *Server) listDepartmentEmployees(c *gin.Context) {
	dept := c.Param("department")
	if err := listText("department", dept); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if f, ok := employeeFilter(c, qStatus, qName); ok {
		f.Department = dept
		s.listEmployeesWith(c, f)
	}
}

// --- the business employee count (row in businessRoutes) ---

type employeeCountJSON struct {
	BusinessID          string `json:"businessId"`
	EmployeeCount       int64  `json:"employeeCount"`
	ActiveEmployeeCount int64  `json:"activeEmployeeCount"`
}

func (s *Server) businessEmployeeCount(c *gin.Context) {
	tenant := callerOf(c).Tenant
	n, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Counts, error) {
		if _, err := orgs.BusinessByID(ctx, tx, tenant); err != nil {
			return employees.Counts{}, err
		}
		return employees.Count(ctx, tx, tenant)
	})
	if err != nil {
		writeError(c, businessError(err))
		return
	}
	c.JSON(http.StatusOK, employeeCountJSON{BusinessID: tenant, EmployeeCount: n.Total, ActiveEmployeeCount: n.Active})
}

// --- the employee ↔ user link ---

type employeeInviteRequest struct {
	Channel employees.Channel `json:"channel"`
}

type employeeInviteJSON struct {
	EmployeeID string            `json:"employeeId"`
	Channel    employees.Channel `json:"channel"`
	SentTo     string            `json:"sentTo"` // masked to its last four characters
	ExpiresAt  time.Time         `json:"expiresAt"`
}

// inviteEmployee sends the employee a link invitation to the e-mail or phone their record has.
// A new invitation replaces the previous one. The message is sent after the transaction that
// minted the token commits, under notify.Invitation (it invites a person to act on Wagerail for an
// organization, as an organization invitation does).
func (s *Server) inviteEmployee(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req employeeInviteRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if !req.Channel.Valid() {
		writeError(c, fieldError(&field.Error{Field: "channel", Problem: "must be email or phone"}))
		return
	}
	tenant := callerOf(c).Tenant
	// The address decides the per-recipient rate limit, as for every route that sends a message.
	cur, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Employee, error) {
		return employees.ByID(ctx, tx, tenant, id)
	})
	if err != nil {
		writeError(c, employeeError(actionInviteEmployee, id, err))
		return
	}
	to := cur.Email
	if req.Channel == employees.ByPhone {
		to = cur.Phone
	}
	if !s.allow(c, ruleMessageIP, c.ClientIP()) || (to != "" && !s.allow(c, ruleMessageAccount, to)) {
		return
	}
	var (
		inv employees.LinkInvitation
		org orgs.Organization
	)
	err = s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if org, err = orgs.ByID(ctx, tx, tenant); err != nil {
			return err
		}
		if inv, err = employees.IssueLink(ctx, tx, tenant, id, req.Channel, s.now()); err != nil {
			return employeeError(actionInviteEmployee, id, err)
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionInviteEmployee, Outcome: audit.Success, TargetType: targetEmployee,
			TargetID: id, Details: map[string]string{"channel": string(inv.Channel)}})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	l := s.link("/employee-link", inv.Token)
	ctx := c.Request.Context()
	if inv.Channel == employees.ByEmail {
		s.sendEmail(ctx, notify.Email{To: inv.To, Subject: "Your employer invites you to Wagerail", Purpose: notify.Invitation, Secret: l,
			Text: org.Name + " invites you to see your pay and use your employee services on Wagerail.\n\n" +
				"Sign in (or sign up) with this e-mail address, then open this link within 7 days:\n\n" + l + "\n"})
	} else if err := s.deps.Texter.SendSMS(ctx, notify.SMS{To: inv.To, Purpose: notify.Invitation, Secret: l,
		Text: org.Name + " invites you to Wagerail. Sign in with this phone number verified, then open within 7 days: " + l}); err != nil {
		s.deps.Log.Error("text not sent", "purpose", string(notify.Invitation), "error", err)
	}
	c.JSON(http.StatusOK, employeeInviteJSON{EmployeeID: id, Channel: inv.Channel, SentTo: logging.MaskLast4(inv.To), ExpiresAt: inv.ExpiresAt.UTC()})
}

type employeeLinkRequest struct {
	Token string `json:"token"`
}

// acceptEmployeeLink links the signed-in caller to the employee a link invitation was sent for.
// The transaction is scoped to the business the token names, which the caller is usually not a
// member of: the only employee row it reads is the one the token's verification names.
func (s *Server) acceptEmployeeLink(c *gin.Context) {
	var req employeeLinkRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	tenant, ok := employees.LinkTenant(req.Token)
	if !ok {
		writeError(c, errInvalidToken)
		return
	}
	cl := callerOf(c)
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var out employees.Employee
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		switch org, err := orgs.ByID(ctx, tx, tenant); {
		case errors.Is(err, orgs.ErrNotFound), err == nil && org.Status == orgs.OrgDeleted:
			return errInvalidToken
		case err != nil:
			return err
		case org.Status == orgs.OrgSuspended:
			return refuse(http.StatusForbidden, "ORGANIZATION_SUSPENDED", "this organization is suspended; try again when it is active",
				actionLinkEmployeeUser, "Organization", tenant)
		}
		e, ch, err := employees.AcceptLink(ctx, tx, tenant, req.Token, cl.User, s.now())
		if err != nil {
			return employeeError(actionLinkEmployeeUser, e.ID, err)
		}
		out = e
		return recordEmployee(ctx, tx, actionLinkEmployeeUser, eventEmployeeUpdated, e.ID,
			map[string]any{"fields": []string{"userId"}, "userId": cl.User.ID, "channel": ch})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, toEmployeeJSON(out))
}

// myEmployeeProfile answers the caller's employee row. A user may be linked in several
// businesses: organizationId names one; without it, the row of the session's active
// organization, else the only one there is. Several and none chosen: 409
// EMPLOYEE_ORGANIZATION_REQUIRED (details list the organization ids). The read runs scoped to the
// user and no tenant, where RLS shows exactly the caller's own employee rows.
func (s *Server) myEmployeeProfile(c *gin.Context) {
	cl := callerOf(c)
	q := c.Request.URL.Query()
	want := q.Get("organizationId")
	if q.Has("organizationId") {
		if err := field.Identifier("organizationId", want, 0); err != nil || len(q["organizationId"]) > 1 {
			if err == nil {
				err = &field.Error{Field: "organizationId", Problem: "must be given at most once"}
			}
			writeError(c, fieldError(err))
			return
		}
	}
	linked, ok := s.linkedEmployees(c)
	if !ok {
		return
	}
	pick := func(tenant string) (employees.Employee, bool) {
		for _, e := range linked {
			if e.TenantID == tenant {
				return e, true
			}
		}
		return employees.Employee{}, false
	}
	var (
		e     employees.Employee
		found bool
	)
	switch {
	case want != "":
		e, found = pick(want)
	case cl.Session.ActiveOrganizationID != "":
		e, found = pick(cl.Session.ActiveOrganizationID)
	}
	if !found && want == "" {
		switch len(linked) {
		case 1:
			e, found = linked[0], true
		case 0:
		default:
			ids := make([]string, 0, len(linked))
			for _, x := range linked {
				ids = append(ids, x.TenantID)
			}
			err := NewError(http.StatusConflict, "EMPLOYEE_ORGANIZATION_REQUIRED",
				"you are an employee of several organizations; name one with organizationId")
			err.Details = map[string][]string{"organizationIds": ids}
			writeError(c, err)
			return
		}
	}
	if !found {
		writeError(c, errEmployeeNotLinked)
		return
	}
	c.JSON(http.StatusOK, toEmployeeJSON(e))
}

// linkedEmployees are the employee rows, in every organization, linked to the signed-in caller
// (read in the caller's own scope). It has answered when ok is false.
// ownEmployee is the caller's own linked employee row named by id (an employee acting for
// themselves in their employer's tenant, whichever organization is active), or nil when id is ""
// or names no row linked to the caller. It has answered when ok is false.
func (s *Server) ownEmployee(c *gin.Context, id string) (_ *employees.Employee, ok bool) {
	if id == "" {
		return nil, true
	}
	linked, ok := s.linkedEmployees(c)
	if !ok {
		return nil, false
	}
	for i := range linked {
		if linked[i].ID == id {
			return &linked[i], true
		}
	}
	return nil, true
}

func (s *Server) linkedEmployees(c *gin.Context) ([]employees.Employee, bool) {
	ctx := c.Request.Context()
	var linked []employees.Employee
	if err := tenancy.InUserTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		linked, err = employees.LinkedTo(ctx, tx, callerOf(c).User.ID)
		return err
	}); err != nil {
		writeError(c, err)
		return nil, false
	}
	return linked, true
}
