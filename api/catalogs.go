package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The compensation catalogs of the active organization (spec: Employees > Compensation
// catalogs): departments, positions, employment types and payment frequencies (name lists), and
// allowance and deduction definitions. Every route needs an admin or owner of the active
// organization holding the row's permission (a platform admin with an active organization
// passes); the stores (internal/catalogs) scope every query to the organization, write the audit
// row of every change in its transaction, and delete softly. A refusal by a rule (409) is audited
// DENIED in a transaction of its own.
//
// Per-employee allowances and deductions (/api/employees/<employeeId>/allowances, /deductions)
// are in catalog_assignments.go.
//
// A payment frequency also has a cadence (MONTHLY, SEMI_MONTHLY, BIWEEKLY, WEEKLY; MONTHLY when
// not given), which payroll runs read; the other name catalogs refuse the field. An allowance or
// deduction has one amount in the unit of its kind: amountSantim (FIXED_SANTIM) or basisPoints
// (PERCENT_OF_GROSS_BASIS_POINTS); the other is null in responses and refused in requests.

var (
	catalogEmployeesView   = orgs.Permission{Module: "employees", Action: "view"}
	catalogEmployeesAdd    = orgs.Permission{Module: "employees", Action: "add"}
	catalogEmployeesEdit   = orgs.Permission{Module: "employees", Action: "edit"}
	catalogEmployeesDelete = orgs.Permission{Module: "employees", Action: "delete"}
)

// catalogEntryMount is a name catalog's routes: its path, its store and the permission of each verb.
type catalogEntryMount struct {
	path, noun, plural      string
	catalog                 *catalogs.Catalog
	view, add, edit, remove orgs.Permission
}

var catalogEntryMounts = []catalogEntryMount{
	{path: "/api/departments", noun: "department", plural: "departments", catalog: catalogs.Departments,
		view: catalogEmployeesView, add: catalogEmployeesAdd, edit: catalogEmployeesEdit, remove: catalogEmployeesDelete},
	{path: "/api/positions", noun: "position", plural: "positions", catalog: catalogs.Positions,
		view: catalogEmployeesView, add: catalogEmployeesAdd, edit: catalogEmployeesEdit, remove: catalogEmployeesDelete},
	{path: "/api/employment-types", noun: "employment type", plural: "employment types", catalog: catalogs.EmploymentTypes,
		view: catalogEmployeesView, add: catalogEmployeesEdit, edit: catalogEmployeesEdit, remove: catalogEmployeesEdit},
	{path: "/api/payment-frequencies", noun: "payment frequency", plural: "payment frequencies", catalog: catalogs.PaymentFrequencies,
		view: catalogEmployeesView, add: catalogEmployeesEdit, edit: catalogEmployeesEdit, remove: catalogEmployeesEdit},
}

// catalogDefinitionMount is a compensation catalog's routes; flag is the JSON name of its boolean.
type catalogDefinitionMount struct {
	path, noun, plural, module, flag string
	catalog                          *catalogs.Compensation
	flagDefault                      bool
}

var catalogDefinitionMounts = []catalogDefinitionMount{
	{path: "/api/allowances", noun: "allowance", plural: "allowances", module: "allowances", flag: "taxable",
		catalog: catalogs.Allowances, flagDefault: true},
	{path: "/api/deductions", noun: "deduction", plural: "deductions", module: "deductions", flag: "preTax",
		catalog: catalogs.Deductions, flagDefault: false},
}

// catalogRoutes serves the compensation catalogs (departments, positions, employment types, payment frequencies, allowances, deductions).
func (s *Server) catalogRoutes() []Route {
	org := func(method, path, summary string, perm orgs.Permission, h gin.HandlerFunc) Route {
		return Route{Method: method, Path: path, Auth: Org, Role: orgs.Admin, Permission: perm, Summary: summary, Handler: h}
	}
	var rs []Route
	for _, m := range catalogEntryMounts {
		rs = append(rs,
			org(http.MethodGet, m.path, "List the "+m.plural, m.view, s.listCatalogEntries(m)),
			org(http.MethodPost, m.path, "Add a "+m.noun, m.add, s.createCatalogEntry(m)),
			org(http.MethodPut, m.path+"/:id", "Change a "+m.noun, m.edit, s.updateCatalogEntry(m)),
			org(http.MethodDelete, m.path+"/:id", "Delete a "+m.noun, m.remove, s.deleteFromCatalog(m.noun, m.catalog.Target, func(ctx context.Context, tx pgx.Tx, id string, at time.Time) error {
				_, err := m.catalog.Delete(ctx, tx, id, at)
				return err
			})),
		)
	}
	for _, m := range catalogDefinitionMounts {
		view, edit := orgs.Permission{Module: m.module, Action: "view"}, orgs.Permission{Module: m.module, Action: "edit"}
		rs = append(rs,
			org(http.MethodGet, m.path, "List the "+m.plural, view, s.listCatalogDefinitions(m)),
			org(http.MethodPost, m.path, "Define an "+m.noun, edit, s.createCatalogDefinition(m)),
			org(http.MethodPut, m.path+"/:id", "Change an "+m.noun, edit, s.updateCatalogDefinition(m)),
			org(http.MethodDelete, m.path+"/:id", "Delete an "+m.noun, edit, s.deleteFromCatalog(m.noun, m.catalog.Target, func(ctx context.Context, tx pgx.Tx, id string, at time.Time) error {
				_, err := m.catalog.Delete(ctx, tx, id, at)
				return err
			})),
		)
	}
	return rs
}

// catalogEntryJSON is a name catalog's entry as the API shows it; only a payment frequency has a
// cadence.
type catalogEntryJSON struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Code        string            `json:"code"`
	Description string            `json:"description"`
	Cadence     *catalogs.Cadence `json:"cadence,omitempty"`
	CreatedAt   time.Time         `json:"createdAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
}

func toCatalogEntryJSON(e catalogs.Entry) catalogEntryJSON {
	out := catalogEntryJSON{ID: e.ID, Name: e.Name, Code: e.Code, Description: e.Description,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
	if e.Cadence != "" {
		c := e.Cadence
		out.Cadence = &c
	}
	return out
}

// catalogDefinitionJSON is an allowance or deduction as the API shows it; exactly one of Taxable
// and PreTax is set, by catalog.
type catalogDefinitionJSON struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Code        string        `json:"code"`
	Description string        `json:"description"`
	Kind        catalogs.Kind `json:"kind"`
	// AmountSantim is set for FIXED_SANTIM, BasisPoints for PERCENT_OF_GROSS_BASIS_POINTS; the
	// other is null.
	AmountSantim *int64    `json:"amountSantim"`
	BasisPoints  *int64    `json:"basisPoints"`
	Taxable      *bool     `json:"taxable,omitempty"`
	PreTax       *bool     `json:"preTax,omitempty"`
	Active       bool      `json:"active"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

func (m catalogDefinitionMount) toJSON(d catalogs.Definition) catalogDefinitionJSON {
	out := catalogDefinitionJSON{ID: d.ID, Name: d.Name, Code: d.Code, Description: d.Description, Kind: d.Kind,
		Active: d.Active, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	out.AmountSantim, out.BasisPoints = kindAmounts(d.Kind, d.AmountSantim, d.BasisPoints)
	flag := d.Flag
	if m.flag == "taxable" {
		out.Taxable = &flag
	} else {
		out.PreTax = &flag
	}
	return out
}

// kindAmounts are a definition's two amount fields as the API shows them: the kind's one set,
// the other null.
func kindAmounts(k catalogs.Kind, santim, bp int64) (*int64, *int64) {
	if k == catalogs.PercentOfGross {
		return nil, &bp
	}
	return &santim, nil
}

// catalogError maps the catalog stores' errors to the routes' codes; anything else stays a 500.
func catalogError(noun string, err error) error {
	var (
		e  *Error
		fe *field.Error
		ke *catalogs.AmountKindError
	)
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &fe):
		return fieldError(fe)
	case errors.As(err, &ke):
		out := NewError(http.StatusUnprocessableEntity, "AMOUNT_KIND_MISMATCH", "the "+noun+" is "+string(ke.Kind)+": "+ke.Error())
		out.Details = map[string]string{"field": ke.Field, "kind": string(ke.Kind), "expected": ke.Kind.Field()}
		return out
	case errors.Is(err, catalogs.ErrNotFound):
		return NewError(http.StatusNotFound, "NOT_FOUND", "no such "+noun)
	case errors.Is(err, catalogs.ErrDuplicateName):
		return NewError(http.StatusConflict, "DUPLICATE_NAME", "another "+noun+" has this name")
	case errors.Is(err, catalogs.ErrDuplicateCode):
		return NewError(http.StatusConflict, "DUPLICATE_CODE", "another "+noun+" has this code")
	case errors.Is(err, catalogs.ErrFull):
		return NewError(http.StatusConflict, "CATALOG_FULL", "the organization already has the maximum number of these")
	case errors.Is(err, catalogs.ErrInUse):
		return NewError(http.StatusConflict, "DEFINITION_IN_USE",
			"the "+noun+" is assigned to employees: it cannot be deleted until it is removed from them, nor change kind once an assignment had an amount of its own (define a new one)")
	case errors.Is(err, catalogs.ErrInactive):
		return NewError(http.StatusConflict, "DEFINITION_INACTIVE", "the "+noun+" is not active")
	case errors.Is(err, catalogs.ErrAlreadyAssigned):
		return NewError(http.StatusConflict, "ALREADY_ASSIGNED", "the employee already has this "+noun)
	}
	return err
}

// catalogFail answers err; a refusal by a rule (409) of a mutation is audited as DENIED first.
func (s *Server) catalogFail(c *gin.Context, noun, action, targetType, target string, err error) {
	err = catalogError(noun, err)
	var e *Error
	if action != "" && errors.As(err, &e) && e.Status == http.StatusConflict {
		cl := callerOf(c)
		if aerr := s.auditIn(c.Request.Context(), cl.Tenant, cl.User.ID, audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: targetType, TargetID: target, Details: map[string]string{"code": e.Code}}); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	writeError(c, err)
}

// catalogID is the path's entry id, or the 400 a malformed one gets.
func catalogID(c *gin.Context) (string, *Error) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		return "", fieldError(err)
	}
	return id, nil
}

// catalogEntryRequest is the body of POST (name required) and PUT (any field, at least one).
type catalogEntryRequest struct {
	Name        *string `json:"name"`
	Code        *string `json:"code"`
	Description *string `json:"description"`
}

// paymentFrequencyRequest is a payment frequency's body: an entry's fields and its cadence (the
// other catalogs' bodies refuse cadence as an unknown field).
type paymentFrequencyRequest struct {
	catalogEntryRequest
	Cadence *catalogs.Cadence `json:"cadence"`
}

// bind reads m's body: the entry's fields, and the cadence when m's entries have one.
func (m catalogEntryMount) bind(c *gin.Context) (catalogEntryRequest, *catalogs.Cadence, *Error) {
	if m.catalog.Cadenced() {
		var req paymentFrequencyRequest
		e := bindJSON(c, &req)
		return req.catalogEntryRequest, req.Cadence, e
	}
	var req catalogEntryRequest
	e := bindJSON(c, &req)
	return req, nil, e
}

// catalogString is *p, or "" for a field the body left out.
func catalogString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Server) listCatalogEntries(m catalogEntryMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		list, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]catalogs.Entry, error) {
			return m.catalog.List(ctx, tx)
		})
		if err != nil {
			s.catalogFail(c, m.noun, "", "", "", err)
			return
		}
		out := make([]catalogEntryJSON, 0, len(list))
		for _, e := range list {
			out = append(out, toCatalogEntryJSON(e))
		}
		c.JSON(http.StatusOK, gin.H{"items": out})
	}
}

func (s *Server) createCatalogEntry(m catalogEntryMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, cadence, e := m.bind(c)
		if e != nil {
			writeError(c, e)
			return
		}
		if req.Name == nil {
			writeError(c, fieldError(&field.Error{Field: "name", Problem: "is required"}))
			return
		}
		in := catalogs.EntryInput{Name: *req.Name, Code: catalogString(req.Code), Description: catalogString(req.Description)}
		if cadence != nil {
			if !cadence.Valid() { // "" too: the store would read it as the default
				writeError(c, fieldError(&field.Error{Field: "cadence", Problem: "must be MONTHLY, SEMI_MONTHLY, BIWEEKLY or WEEKLY"}))
				return
			}
			in.Cadence = *cadence
		}
		if err := in.Clean(); err != nil {
			writeError(c, fieldError(err))
			return
		}
		out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (catalogs.Entry, error) {
			return m.catalog.Create(ctx, tx, in, s.now())
		})
		if err != nil {
			s.catalogFail(c, m.noun, "Create"+m.catalog.Target, m.catalog.Target, "", err)
			return
		}
		c.JSON(http.StatusCreated, toCatalogEntryJSON(out))
	}
}

func (s *Server) updateCatalogEntry(m catalogEntryMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, e := catalogID(c)
		if e != nil {
			writeError(c, e)
			return
		}
		req, cadence, e := m.bind(c)
		if e != nil {
			writeError(c, e)
			return
		}
		ch := catalogs.EntryChange{Name: req.Name, Code: req.Code, Description: req.Description, Cadence: cadence}
		if err := ch.Clean(); err != nil {
			writeError(c, fieldError(err))
			return
		}
		out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (catalogs.Entry, error) {
			return m.catalog.Update(ctx, tx, id, ch, s.now())
		})
		if err != nil {
			s.catalogFail(c, m.noun, "Update"+m.catalog.Target, m.catalog.Target, id, err)
			return
		}
		c.JSON(http.StatusOK, toCatalogEntryJSON(out))
	}
}

// catalogDefinitionFields are the fields both definition bodies share.
type catalogDefinitionFields struct {
	Name         *string        `json:"name"`
	Code         *string        `json:"code"`
	Description  *string        `json:"description"`
	Kind         *catalogs.Kind `json:"kind"`
	AmountSantim *int64         `json:"amountSantim"`
	BasisPoints  *int64         `json:"basisPoints"`
	Active       *bool          `json:"active"`
}

// The definition bodies: each names only its own catalog's boolean, so an allowance body with
// preTax (or a deduction body with taxable) is refused as an unknown field.
type catalogAllowanceRequest struct {
	catalogDefinitionFields
	Taxable *bool `json:"taxable"`
}

type catalogDeductionRequest struct {
	catalogDefinitionFields
	PreTax *bool `json:"preTax"`
}

// bind reads m's body into its common fields and the catalog's boolean.
func (m catalogDefinitionMount) bind(c *gin.Context) (catalogDefinitionFields, *bool, *Error) {
	if m.flag == "taxable" {
		var req catalogAllowanceRequest
		e := bindJSON(c, &req)
		return req.catalogDefinitionFields, req.Taxable, e
	}
	var req catalogDeductionRequest
	e := bindJSON(c, &req)
	return req.catalogDefinitionFields, req.PreTax, e
}

func (s *Server) listCatalogDefinitions(m catalogDefinitionMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		list, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]catalogs.Definition, error) {
			return m.catalog.List(ctx, tx)
		})
		if err != nil {
			s.catalogFail(c, m.noun, "", "", "", err)
			return
		}
		out := make([]catalogDefinitionJSON, 0, len(list))
		for _, d := range list {
			out = append(out, m.toJSON(d))
		}
		c.JSON(http.StatusOK, gin.H{"items": out})
	}
}

func (s *Server) createCatalogDefinition(m catalogDefinitionMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, flag, e := m.bind(c)
		if e != nil {
			writeError(c, e)
			return
		}
		if e := missingField(required{"name", req.Name != nil}, required{"code", req.Code != nil}, required{"kind", req.Kind != nil}); e != nil {
			writeError(c, e)
			return
		}
		in := catalogs.DefinitionInput{Name: *req.Name, Code: *req.Code, Description: catalogString(req.Description), Kind: *req.Kind,
			AmountSantim: req.AmountSantim, BasisPoints: req.BasisPoints, Flag: m.flagDefault, Active: true}
		if flag != nil {
			in.Flag = *flag
		}
		if req.Active != nil {
			in.Active = *req.Active
		}
		if err := in.Clean(); err != nil {
			writeError(c, fieldError(err))
			return
		}
		d, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (catalogs.Definition, error) {
			return m.catalog.Create(ctx, tx, in, s.now())
		})
		if err != nil {
			s.catalogFail(c, m.noun, "Create"+m.catalog.Target, m.catalog.Target, "", err)
			return
		}
		c.JSON(http.StatusCreated, m.toJSON(d))
	}
}

func (s *Server) updateCatalogDefinition(m catalogDefinitionMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, e := catalogID(c)
		if e != nil {
			writeError(c, e)
			return
		}
		req, flag, e := m.bind(c)
		if e != nil {
			writeError(c, e)
			return
		}
		ch := catalogs.DefinitionChange{Name: req.Name, Code: req.Code, Description: req.Description, Kind: req.Kind,
			AmountSantim: req.AmountSantim, BasisPoints: req.BasisPoints, Flag: flag, Active: req.Active}
		if err := ch.Clean(); err != nil {
			writeError(c, fieldError(err))
			return
		}
		d, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (catalogs.Definition, error) {
			return m.catalog.Update(ctx, tx, id, ch, s.now())
		})
		if err != nil {
			s.catalogFail(c, m.noun, "Update"+m.catalog.Target, m.catalog.Target, id, err)
			return
		}
		c.JSON(http.StatusOK, m.toJSON(d))
	}
}

// deleteFromCatalog serves DELETE …/:id of any catalog: a soft delete through del (the store
// audits it), a refusal by a rule audited DENIED.
func (s *Server) deleteFromCatalog(noun, target string, del func(ctx context.Context, tx pgx.Tx, id string, at time.Time) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, e := catalogID(c)
		if e != nil {
			writeError(c, e)
			return
		}
		err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error { return del(ctx, tx, id, s.now()) })
		if err != nil {
			s.catalogFail(c, noun, "Delete"+target, target, id, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"success": true})
	}
}
