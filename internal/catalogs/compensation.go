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

// Kind is how a definition's amount is read.
type Kind string

const (
	// FixedSantim: the amount is santim per employee and pay period.
	FixedSantim Kind = "FIXED_SANTIM"
	// PercentOfGross: the amount is basis points (1/100 of a percent) of the employee's gross
	// salary for the period.
	PercentOfGross Kind = "PERCENT_OF_GROSS_BASIS_POINTS"
)

// Amount bounds (the database checks them again, migration app/0015).
const (
	// MaxFixedSantim bounds a fixed amount: 10 million ETB per employee and pay period, far above
	// any salary line, and low enough that 10,000 employees at the maximum stay within one ledger
	// transaction's bound (money.MaxTransactionSantim).
	MaxFixedSantim int64 = 1_000_000_000
	// MaxBasisPoints is 100% of gross.
	MaxBasisPoints int64 = 10_000
)

// Kinds lists the valid kinds.
var Kinds = []Kind{FixedSantim, PercentOfGross}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == FixedSantim || k == PercentOfGross }

// Max is the largest amount of kind k (0 for an unknown kind).
func (k Kind) Max() int64 {
	switch k {
	case FixedSantim:
		return MaxFixedSantim
	case PercentOfGross:
		return MaxBasisPoints
	}
	return 0
}

// CheckAmount checks an amount of kind k: 0 to k.Max(). name is the field it came from.
func CheckAmount(name string, k Kind, amount int64) error {
	if !k.Valid() {
		return &field.Error{Field: "kind", Problem: "must be FIXED_SANTIM or PERCENT_OF_GROSS_BASIS_POINTS"}
	}
	if amount < 0 {
		return &field.Error{Field: name, Problem: "must not be negative"}
	}
	if amount > k.Max() {
		unit := "santim"
		if k == PercentOfGross {
			unit = "basis points (100%)"
		}
		return &field.Error{Field: name, Problem: fmt.Sprintf("must be at most %d %s", k.Max(), unit)}
	}
	return nil
}

// Compensation is a catalog of allowance or deduction definitions, and their assignments to
// employees.
type Compensation struct {
	table  string
	prefix string
	flag   string // the definition's boolean column: taxable (allowances), pre_tax (deductions)
	// Target names a definition in the domain's words: the audit rows' target type, and the noun
	// of their actions (Create<Target>, Assign<Target>, …).
	Target string
	// assignments: the per-employee table, its definition column and id prefix, and the name
	// the API gives a definition's id (allowanceId, deductionId).
	assignTable, assignColumn, assignPrefix, idField string
}

// The two compensation catalogs.
var (
	Allowances = &Compensation{table: "allowances", prefix: "alw_", flag: "taxable", Target: "Allowance",
		assignTable: "employee_allowances", assignColumn: "allowance_id", assignPrefix: "eal_", idField: "allowanceId"}
	Deductions = &Compensation{table: "deductions", prefix: "ded_", flag: "pre_tax", Target: "Deduction",
		assignTable: "employee_deductions", assignColumn: "deduction_id", assignPrefix: "edd_", idField: "deductionId"}
)

// Definition is an allowance or a deduction. Flag is the catalog's one boolean: for an allowance
// whether it is taxable income, for a deduction whether it is taken before income tax.
type Definition struct {
	ID          string
	Name        string
	Code        string
	Description string // "" when none
	Kind        Kind
	Amount      int64 // santim or basis points, by Kind
	Flag        bool
	Active      bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
	DeletedAt   *time.Time
}

// DefinitionInput is a new definition; Code is required.
type DefinitionInput struct {
	Name, Code, Description string
	Kind                    Kind
	Amount                  int64
	Flag                    bool
	Active                  bool
}

// Clean normalizes and checks a new definition.
func (in *DefinitionInput) Clean() error {
	var err error
	if in.Name, err = CleanName(in.Name); err != nil {
		return err
	}
	if in.Code, err = CleanCode(in.Code, false); err != nil {
		return err
	}
	if in.Description, err = CleanDescription(in.Description); err != nil {
		return err
	}
	return CheckAmount("amount", in.Kind, in.Amount)
}

// DefinitionChange changes the fields that are not nil; "" clears Description. Kind and Amount
// are checked together against the definition as it stands (a new kind alone must fit the
// stored amount).
type DefinitionChange struct {
	Name, Code, Description *string
	Kind                    *Kind
	Amount                  *int64
	Flag                    *bool
	Active                  *bool
}

// Clean normalizes and checks what a change can check without the stored definition.
func (ch *DefinitionChange) Clean() error {
	if ch.Name == nil && ch.Code == nil && ch.Description == nil && ch.Kind == nil && ch.Amount == nil && ch.Flag == nil && ch.Active == nil {
		return &field.Error{Field: "body", Problem: "must change at least one field"}
	}
	if err := cleanPtrs(&ch.Name, &ch.Code, &ch.Description, false); err != nil {
		return err
	}
	if ch.Kind != nil && !ch.Kind.Valid() {
		return &field.Error{Field: "kind", Problem: "must be FIXED_SANTIM or PERCENT_OF_GROSS_BASIS_POINTS"}
	}
	if ch.Amount != nil {
		k := FixedSantim // the larger bound: the stored kind decides in Update
		if ch.Kind != nil {
			k = *ch.Kind
		}
		return CheckAmount("amount", k, *ch.Amount)
	}
	return nil
}

func (c *Compensation) columns() string {
	return `id, name, code, coalesce(description, ''), kind, amount, ` + c.flag + `, active, created_at, updated_at, deleted_at`
}

func scanDefinition(row pgx.Row) (Definition, error) {
	var d Definition
	err := row.Scan(&d.ID, &d.Name, &d.Code, &d.Description, &d.Kind, &d.Amount, &d.Flag, &d.Active, &d.CreatedAt, &d.UpdatedAt, &d.DeletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Definition{}, ErrNotFound
	}
	if err != nil {
		return Definition{}, fmt.Errorf("catalogs: definition: %w", err)
	}
	return d, nil
}

// List returns the definitions that are not deleted (inactive ones too), by name.
func (c *Compensation) List(ctx context.Context, q db.Querier) ([]Definition, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY lower(name), id LIMIT $2`, tenant, MaxEntries)
	if err != nil {
		return nil, fmt.Errorf("catalogs: list %s: %w", c.table, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Definition, error) { return scanDefinition(r) })
}

// ByID returns the definition unless it is deleted. ErrNotFound.
func (c *Compensation) ByID(ctx context.Context, q db.Querier, id string) (Definition, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Definition{}, err
	}
	return scanDefinition(q.QueryRow(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenant, id))
}

func (c *Compensation) details(d Definition) map[string]any {
	return map[string]any{"name": d.Name, "code": d.Code, "kind": d.Kind, "amount": d.Amount, c.flag: d.Flag, "active": d.Active}
}

// Create adds a definition at at and audits Create<Target>. *field.Error, ErrDuplicateName,
// ErrDuplicateCode, ErrFull.
func (c *Compensation) Create(ctx context.Context, tx pgx.Tx, in DefinitionInput, at time.Time) (Definition, error) {
	if err := in.Clean(); err != nil {
		return Definition{}, err
	}
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Definition{}, err
	}
	if err := reserve(ctx, tx, c.table, tenant); err != nil {
		return Definition{}, err
	}
	d, err := scanDefinition(tx.QueryRow(ctx, `INSERT INTO app.`+c.table+`
			(id, tenant_id, name, code, description, kind, amount, `+c.flag+`, active, created_at, updated_at)
		VALUES ($1, $2, $3, $4, nullif($5, ''), $6, $7, $8, $9, $10, $10) RETURNING `+c.columns(),
		c.prefix+identity.NewID(), tenant, in.Name, in.Code, in.Description, string(in.Kind), in.Amount, in.Flag, in.Active, at))
	if err != nil {
		return Definition{}, translate(err)
	}
	return d, audit.Write(ctx, tx, audit.Entry{Action: "Create" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: d.ID, Details: c.details(d)})
}

// Update applies ch to the definition at at and audits Update<Target>. *field.Error (the
// resulting amount does not fit the resulting kind), ErrNotFound, ErrDuplicateName,
// ErrDuplicateCode, ErrInUse (a new kind while an assignment carries its own amount).
func (c *Compensation) Update(ctx context.Context, tx pgx.Tx, id string, ch DefinitionChange, at time.Time) (Definition, error) {
	if err := ch.Clean(); err != nil {
		return Definition{}, err
	}
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Definition{}, err
	}
	cur, err := scanDefinition(tx.QueryRow(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`, tenant, id))
	if err != nil {
		return Definition{}, err
	}
	next := cur
	set(&next.Name, ch.Name)
	set(&next.Code, ch.Code)
	set(&next.Description, ch.Description)
	set(&next.Kind, ch.Kind)
	set(&next.Amount, ch.Amount)
	set(&next.Flag, ch.Flag)
	set(&next.Active, ch.Active)
	if err := CheckAmount("amount", next.Kind, next.Amount); err != nil {
		return Definition{}, err
	}
	if next.Kind != cur.Kind {
		var overrides int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.`+c.assignTable+` WHERE tenant_id = $1 AND `+c.assignColumn+` = $2
			AND deleted_at IS NULL AND amount IS NOT NULL`, tenant, id).Scan(&overrides); err != nil {
			return Definition{}, fmt.Errorf("catalogs: %s overrides: %w", c.table, err)
		}
		if overrides > 0 {
			return Definition{}, ErrInUse
		}
	}
	d, err := scanDefinition(tx.QueryRow(ctx, `UPDATE app.`+c.table+` SET name = $3, code = $4, description = nullif($5, ''),
		kind = $6, amount = $7, `+c.flag+` = $8, active = $9, updated_at = $10
		WHERE tenant_id = $1 AND id = $2 RETURNING `+c.columns(),
		tenant, id, next.Name, next.Code, next.Description, string(next.Kind), next.Amount, next.Flag, next.Active, at))
	if err != nil {
		return Definition{}, translate(err)
	}
	details := c.details(d)
	details["changed"] = changed(map[string]bool{"name": ch.Name != nil, "code": ch.Code != nil, "description": ch.Description != nil,
		"kind": ch.Kind != nil, "amount": ch.Amount != nil, c.flag: ch.Flag != nil, "active": ch.Active != nil})
	return d, audit.Write(ctx, tx, audit.Entry{Action: "Update" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: d.ID, Details: details})
}

// Delete soft-deletes the definition at at and audits Delete<Target>. ErrNotFound, ErrInUse (it
// is assigned to an employee: unassign it first, so no payroll loses a line silently).
func (c *Compensation) Delete(ctx context.Context, tx pgx.Tx, id string, at time.Time) (Definition, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Definition{}, err
	}
	// The row lock orders this against Assign, which holds a share lock on the definition until
	// its insert commits: either the assignment is counted here, or Assign finds the definition
	// deleted.
	if _, err := scanDefinition(tx.QueryRow(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`, tenant, id)); err != nil {
		return Definition{}, err
	}
	var assigned int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.`+c.assignTable+` WHERE tenant_id = $1 AND `+c.assignColumn+` = $2
		AND deleted_at IS NULL`, tenant, id).Scan(&assigned); err != nil {
		return Definition{}, fmt.Errorf("catalogs: %s assignments: %w", c.table, err)
	}
	if assigned > 0 {
		return Definition{}, ErrInUse
	}
	d, err := scanDefinition(tx.QueryRow(ctx, `UPDATE app.`+c.table+` SET deleted_at = $3, updated_at = $3
		WHERE tenant_id = $1 AND id = $2 RETURNING `+c.columns(), tenant, id, at))
	if err != nil {
		return Definition{}, err
	}
	return d, audit.Write(ctx, tx, audit.Entry{Action: "Delete" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: d.ID, Details: c.details(d)})
}
