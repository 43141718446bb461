package catalogs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Per-employee allowances and deductions: which definitions apply to an employee, each with an
// optional amount of its own (in the unit of the definition's kind: AmountSantim or BasisPoints)
// that replaces the definition's. The table keeps the definition's kind on each assignment (a
// cascading key, migration app/0030), so the database too refuses an amount in the other unit. Unassigning is soft, like every delete here; the employee may be given the same
// definition again afterwards.
//
// The employee is the caller's to check: Assign takes an employee id it has already found in
// the organization (the employees store owns that question; the routes answer 404
// EMPLOYEE_NOT_FOUND). Until the foreign key of pending/0017 lands, nothing in the database does.

// Assignment is one definition applied to one employee.
type Assignment struct {
	ID         string
	EmployeeID string
	// Definition is the assigned definition as it stands now.
	Definition Definition
	// AmountSantim (a FIXED_SANTIM definition) or BasisPoints (a PERCENT_OF_GROSS_BASIS_POINTS
	// one), when set, replaces the definition's for this employee; at most the kind's one is set.
	AmountSantim *int64
	BasisPoints  *int64
	CreatedAt    time.Time
	DeletedAt    *time.Time
}

// EffectiveAmountSantim is the fixed amount that applies to the employee (their own, else the
// definition's); 0 for a percentage definition.
func (a Assignment) EffectiveAmountSantim() int64 {
	if a.AmountSantim != nil {
		return *a.AmountSantim
	}
	return a.Definition.AmountSantim
}

// EffectiveBasisPoints is the share of gross that applies to the employee (their own, else the
// definition's); 0 for a fixed definition.
func (a Assignment) EffectiveBasisPoints() int64 {
	if a.BasisPoints != nil {
		return *a.BasisPoints
	}
	return a.Definition.BasisPoints
}

// AssignmentTarget is the audit target type of c's assignments (EmployeeAllowance,
// EmployeeDeduction).
func (c *Compensation) AssignmentTarget() string { return "Employee" + c.Target }

func (c *Compensation) assignmentSelect() string {
	return `SELECT a.id, a.employee_id, a.amount_santim::bigint, a.basis_points::bigint, a.created_at, a.deleted_at, d.id, d.name, d.code,
		coalesce(d.description, ''), d.kind, ` + amountColumns("d.") + `, d.` + c.flag + `, d.active, d.created_at, d.updated_at, d.deleted_at
		FROM app.` + c.assignTable + ` a JOIN app.` + c.table + ` d ON d.tenant_id = a.tenant_id AND d.id = a.` + c.assignColumn
}

func scanAssignment(row pgx.Row) (Assignment, error) {
	var a Assignment
	d := &a.Definition
	err := row.Scan(&a.ID, &a.EmployeeID, &a.AmountSantim, &a.BasisPoints, &a.CreatedAt, &a.DeletedAt, &d.ID, &d.Name, &d.Code,
		&d.Description, &d.Kind, &d.AmountSantim, &d.BasisPoints, &d.Flag, &d.Active, &d.CreatedAt, &d.UpdatedAt, &d.DeletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Assignment{}, ErrNotFound
	}
	if err != nil {
		return Assignment{}, fmt.Errorf("catalogs: assignment: %w", err)
	}
	return a, nil
}

// CheckEmployeeID checks an employee id from outside (a path parameter) as an identifier.
func CheckEmployeeID(id string) error { return field.Identifier("employeeId", id, 0) }

// Assignments returns the employee's live assignments, by the definition's name.
func (c *Compensation) Assignments(ctx context.Context, q db.Querier, employeeID string) ([]Assignment, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, c.assignmentSelect()+` WHERE a.tenant_id = $1 AND a.employee_id = $2 AND a.deleted_at IS NULL
		ORDER BY lower(d.name), a.id LIMIT $3`, tenant, employeeID, MaxEntries)
	if err != nil {
		return nil, fmt.Errorf("catalogs: list %s: %w", c.assignTable, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Assignment, error) { return scanAssignment(r) })
}

// Own is an assignment's own amount: at most one field, in the definition's unit (both nil: the
// definition's amount applies).
type Own struct {
	AmountSantim, BasisPoints *int64
}

// Assign gives the employee the definition at at, with its own amount (zero Own: the
// definition's), and audits Assign<Target>. *field.Error (an id, or an amount out of bounds or
// both given), *AmountKindError (the amount is not in the definition's unit), ErrNotFound (no
// such definition), ErrInactive, ErrAlreadyAssigned.
func (c *Compensation) Assign(ctx context.Context, tx pgx.Tx, employeeID, definitionID string, own Own, at time.Time) (Assignment, error) {
	if err := CheckEmployeeID(employeeID); err != nil {
		return Assignment{}, err
	}
	if err := field.Identifier(c.idField, definitionID, 0); err != nil {
		return Assignment{}, err
	}
	if err := CheckAmounts(own.AmountSantim, own.BasisPoints); err != nil {
		return Assignment{}, err
	}
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Assignment{}, err
	}
	// The share lock holds the definition as it is (not deleted, this kind) until the commit; see
	// Delete.
	d, err := scanDefinition(tx.QueryRow(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR SHARE`, tenant, definitionID))
	if err != nil {
		return Assignment{}, err
	}
	if !d.Active {
		return Assignment{}, ErrInactive
	}
	if err := amountFor(d.Kind, own.AmountSantim, own.BasisPoints); err != nil {
		return Assignment{}, err
	}
	var id string
	err = tx.QueryRow(ctx, `INSERT INTO app.`+c.assignTable+` (id, tenant_id, employee_id, `+c.assignColumn+`, kind, amount_santim,
			basis_points, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		c.assignPrefix+identity.NewID(), tenant, employeeID, definitionID, string(d.Kind), own.AmountSantim, own.BasisPoints, at).Scan(&id)
	if err != nil {
		return Assignment{}, translate(err)
	}
	a, err := scanAssignment(tx.QueryRow(ctx, c.assignmentSelect()+` WHERE a.tenant_id = $1 AND a.id = $2`, tenant, id))
	if err != nil {
		return Assignment{}, err
	}
	return a, audit.Write(ctx, tx, audit.Entry{Action: "Assign" + c.Target, Outcome: audit.Success, TargetType: c.AssignmentTarget(),
		TargetID: a.ID, Details: map[string]any{"employeeId": employeeID, c.idField: definitionID, FieldAmountSantim: own.AmountSantim,
			FieldBasisPoints: own.BasisPoints}})
}

// Unassign ends the employee's assignment at at and audits Unassign<Target>. *field.Error,
// ErrNotFound (no such live assignment of this employee).
func (c *Compensation) Unassign(ctx context.Context, tx pgx.Tx, employeeID, assignmentID string, at time.Time) (Assignment, error) {
	if err := CheckEmployeeID(employeeID); err != nil {
		return Assignment{}, err
	}
	if err := field.Identifier("assignmentId", assignmentID, 0); err != nil {
		return Assignment{}, err
	}
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Assignment{}, err
	}
	tag, err := tx.Exec(ctx, `UPDATE app.`+c.assignTable+` SET deleted_at = $4
		WHERE tenant_id = $1 AND employee_id = $2 AND id = $3 AND deleted_at IS NULL`, tenant, employeeID, assignmentID, at)
	if err != nil {
		return Assignment{}, fmt.Errorf("catalogs: unassign: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Assignment{}, ErrNotFound
	}
	a, err := scanAssignment(tx.QueryRow(ctx, c.assignmentSelect()+` WHERE a.tenant_id = $1 AND a.id = $2`, tenant, assignmentID))
	if err != nil {
		return Assignment{}, err
	}
	return a, audit.Write(ctx, tx, audit.Entry{Action: "Unassign" + c.Target, Outcome: audit.Success, TargetType: c.AssignmentTarget(),
		TargetID: a.ID, Details: map[string]any{"employeeId": employeeID, c.idField: a.Definition.ID}})
}
