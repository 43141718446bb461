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
	"github.com/wagerail/wagerail/internal/orgs"
)

// Per-employee allowances and deductions: a catalog definition applied to one employee, with an
// optional amount of their own in the definition's unit (amountSantim for a FIXED_SANTIM
// definition, basisPoints for a PERCENT_OF_GROSS_BASIS_POINTS one; the other unit is 422
// AMOUNT_KIND_MISMATCH). The employee must be the active
// organization's (another tenant's, deleted or unknown: 404 EMPLOYEE_NOT_FOUND); the store audits
// every assignment and its end.

func (s *Server) catalogAssignmentRoutes() []Route {
	var rs []Route
	for _, m := range catalogDefinitionMounts {
		view, edit := orgs.Permission{Module: m.module, Action: "view"}, orgs.Permission{Module: m.module, Action: "edit"}
		path := "/api/employees/:id/" + m.plural
		rs = append(rs,
			Route{Method: http.MethodGet, Path: path, Auth: Org, Role: orgs.Admin, Permission: view,
				Summary: "The employee's " + m.plural, Handler: s.listAssignments(m)},
			Route{Method: http.MethodPost, Path: path, Auth: Org, Role: orgs.Admin, Permission: edit,
				Summary: "Give the employee an " + m.noun, Handler: s.assign(m)},
			Route{Method: http.MethodDelete, Path: path + "/:assignmentId", Auth: Org, Role: orgs.Admin, Permission: edit,
				Summary: "End one of the employee's " + m.plural, Handler: s.unassign(m)},
		)
	}
	return rs
}

// assignmentJSON is an assignment: the employee's own amount (null: the definition's) and the
// effective one, each in the definition's unit (the other unit's field null).
type assignmentJSON struct {
	ID                    string                `json:"id"`
	EmployeeID            string                `json:"employeeId"`
	Definition            catalogDefinitionJSON `json:"definition"`
	AmountSantim          *int64                `json:"amountSantim"`
	BasisPoints           *int64                `json:"basisPoints"`
	EffectiveAmountSantim *int64                `json:"effectiveAmountSantim"`
	EffectiveBasisPoints  *int64                `json:"effectiveBasisPoints"`
	CreatedAt             time.Time             `json:"createdAt"`
}

func (m catalogDefinitionMount) assignmentJSON(a catalogs.Assignment) assignmentJSON {
	out := assignmentJSON{ID: a.ID, EmployeeID: a.EmployeeID, Definition: m.toJSON(a.Definition), AmountSantim: a.AmountSantim,
		BasisPoints: a.BasisPoints, CreatedAt: a.CreatedAt.UTC()}
	out.EffectiveAmountSantim, out.EffectiveBasisPoints = kindAmounts(a.Definition.Kind, a.EffectiveAmountSantim(), a.EffectiveBasisPoints())
	return out
}

// withEmployee runs fn in the tenant's transaction once the path's employee is found there.
func (s *Server) withEmployee(c *gin.Context, fn func(ctx context.Context, tx pgx.Tx, employeeID string) error) error {
	id := c.Param("id")
	if err := catalogs.CheckEmployeeID(id); err != nil {
		return fieldError(err)
	}
	tenant := callerOf(c).Tenant
	return s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		e, err := employees.ByID(ctx, tx, tenant, id)
		if errors.Is(err, employees.ErrNotFound) {
			return errEmployeeNotFound
		}
		if err != nil {
			return err
		}
		return fn(ctx, tx, e.ID)
	})
}

func (s *Server) listAssignments(m catalogDefinitionMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		items := []assignmentJSON{}
		err := s.withEmployee(c, func(ctx context.Context, tx pgx.Tx, employeeID string) error {
			as, err := m.catalog.Assignments(ctx, tx, employeeID)
			for _, a := range as {
				items = append(items, m.assignmentJSON(a))
			}
			return err
		})
		if err != nil {
			s.catalogFail(c, m.noun, "", "", "", err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"items": items})
	}
}

// assignRequest names the definition (allowanceId or deductionId, by catalog) and, optionally,
// the employee's own amount (at most one of amountSantim and basisPoints).
type assignRequest struct {
	AllowanceID  string `json:"allowanceId"`
	DeductionID  string `json:"deductionId"`
	AmountSantim *int64 `json:"amountSantim"`
	BasisPoints  *int64 `json:"basisPoints"`
}

func (s *Server) assign(m catalogDefinitionMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		var req assignRequest
		if e := bindJSON(c, &req); e != nil {
			writeError(c, e)
			return
		}
		def, other := req.AllowanceID, req.DeductionID
		idField := "allowanceId"
		if m.module == "deductions" {
			def, other, idField = req.DeductionID, req.AllowanceID, "deductionId"
		}
		if other != "" || def == "" {
			writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", idField+" is required (and only it)"))
			return
		}
		if err := catalogs.CheckAmounts(req.AmountSantim, req.BasisPoints); err != nil {
			writeError(c, fieldError(err))
			return
		}
		var out assignmentJSON
		err := s.withEmployee(c, func(ctx context.Context, tx pgx.Tx, employeeID string) error {
			a, err := m.catalog.Assign(ctx, tx, employeeID, def, catalogs.Own{AmountSantim: req.AmountSantim, BasisPoints: req.BasisPoints}, s.now())
			out = m.assignmentJSON(a)
			return err
		})
		if err != nil {
			s.catalogFail(c, m.noun, "Assign"+m.catalog.Target, m.catalog.AssignmentTarget(), c.Param("id"), err)
			return
		}
		c.JSON(http.StatusCreated, out)
	}
}

func (s *Server) unassign(m catalogDefinitionMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		assignmentID := c.Param("assignmentId")
		err := s.withEmployee(c, func(ctx context.Context, tx pgx.Tx, employeeID string) error {
			_, err := m.catalog.Unassign(ctx, tx, employeeID, assignmentID, s.now())
			return err
		})
		if err != nil {
			s.catalogFail(c, m.noun+" assignment", "", "", "", err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"success": true})
	}
}
