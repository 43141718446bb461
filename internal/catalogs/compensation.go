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

// Kind is which amount a definition applies, and so which of its amount fields is set.
type Kind string

const (
	// FixedSantim: AmountSantim santim per employee and pay period.
	FixedSantim Kind = "FIXED_SANTIM"
	// PercentOfGross: BasisPoints (1/100 of a percent) of the employee's gross salary for the
	// period.
	PercentOfGross Kind = "PERCENT_OF_GROSS_BASIS_POINTS"
)

// Amount bounds (the database checks them again, migration app/0030).
const (
	// MaxFixedSantim bounds a fixed amount: 10 million ETB per employee and pay period, far above
	// any salary line, and low enough that 10,000 employees at the maximum stay within one ledger
	// transaction's bound (money.MaxTransactionSantim).
	MaxFixedSantim int64 = 1_000_000_000
	// MaxBasisPoints is 100% of gross.
	MaxBasisPoints int64 = 10_000
)

// The API's names of the two amount fields.
const (
	FieldAmountSantim = "amountSantim"
	FieldBasisPoints  = "basisPoints"
)

// Kinds lists the valid kinds.
var Kinds = []Kind{FixedSantim, PercentOfGross}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == FixedSantim || k == PercentOfGross }

// Field is the API name of k's amount field (amountSantim or basisPoints; "" for an unknown kind).
func (k Kind) Field() string {
	switch k {
	case FixedSantim:
		return FieldAmountSantim
	case PercentOfGross:
		return FieldBasisPoints
	}
	return ""
}

// ErrAmountKind: an amount was given in the unit of the other kind than the one it applies to
// (the stored definition's, when the change or assignment names no kind). It comes as an
// *AmountKindError.
var ErrAmountKind = errors.New("catalogs: the amount is not in the unit of the definition's kind")

// AmountKindError is ErrAmountKind for one field: Field was given, Kind wants Kind.Field().
type AmountKindError struct {
	Field string
	Kind  Kind
}

func (e *AmountKindError) Error() string {
	return fmt.Sprintf("%s does not apply to a %s definition; give %s", e.Field, e.Kind, e.Kind.Field())
}
func (e *AmountKindError) Unwrap() error { return ErrAmountKind }

// CheckSantim checks a fixed amount: 0 to MaxFixedSantim.
func CheckSantim(v int64) error {
	if v < 0 || v > MaxFixedSantim {
		return &field.Error{Field: FieldAmountSantim, Problem: fmt.Sprintf("must be a whole number of santim from 0 to %d", MaxFixedSantim)}
	}
	return nil
}

// CheckBasisPoints checks a share of gross: 0 to MaxBasisPoints.
func CheckBasisPoints(v int64) error {
	if v < 0 || v > MaxBasisPoints {
		return &field.Error{Field: FieldBasisPoints, Problem: fmt.Sprintf("must be a whole number of basis points from 0 to %d (100%%)", MaxBasisPoints)}
	}
	return nil
}

// CheckAmounts checks the amount fields given (nil: absent), each within its bound and never
// both: a body names one amount.
func CheckAmounts(santim, bp *int64) error {
	if santim != nil && bp != nil {
		return &field.Error{Field: FieldBasisPoints, Problem: "must not be given with amountSantim: give the one amount of the kind"}
	}
	if santim != nil {
		return CheckSantim(*santim)
	}
	if bp != nil {
		return CheckBasisPoints(*bp)
	}
	return nil
}

// CheckKindAmounts checks a kind given in a body with its amount fields: the kind's own field is
// required and the other one refused (a kind is never given without its amount, so a definition
// never changes unit silently).
func CheckKindAmounts(k Kind, santim, bp *int64) error {
	if !k.Valid() {
		return &field.Error{Field: "kind", Problem: "must be FIXED_SANTIM or PERCENT_OF_GROSS_BASIS_POINTS"}
	}
	if err := CheckAmounts(santim, bp); err != nil {
		return err
	}
	own, other := santim, bp
	if k == PercentOfGross {
		own, other = bp, santim
	}
	if other != nil {
		return &field.Error{Field: otherField(k), Problem: "must be absent for kind " + string(k) + " (give " + k.Field() + ")"}
	}
	if own == nil {
		return &field.Error{Field: k.Field(), Problem: "is required for kind " + string(k)}
	}
	return nil
}

func otherField(k Kind) string {
	if k == PercentOfGross {
		return FieldAmountSantim
	}
	return FieldBasisPoints
}

// amountFor checks that the amount fields given (at most one, checked by CheckAmounts) are in
// k's unit: *AmountKindError otherwise.
func amountFor(k Kind, santim, bp *int64) error {
	switch {
	case santim != nil && k != FixedSantim:
		return &AmountKindError{Field: FieldAmountSantim, Kind: k}
	case bp != nil && k != PercentOfGross:
		return &AmountKindError{Field: FieldBasisPoints, Kind: k}
	}
	return nil
}

// columns reads a definition's amounts: the other kind's is NULL in the table and 0 here.
func amountColumns(alias string) string {
	return `coalesce(` + alias + `amount_santim, 0)::bigint, coalesce(` + alias + `basis_points, 0)::bigint`
}

// nullUnless is v when the kind is k's, else NULL: what the other kind's column holds.
func nullUnless(want, k Kind, v int64) *int64 {
	if want != k {
		return nil
	}
	return &v
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
	// AmountSantim is what a FIXED_SANTIM definition applies, BasisPoints what a
	// PERCENT_OF_GROSS_BASIS_POINTS one does; the other kind's is 0 (NULL in the table).
	AmountSantim int64
	BasisPoints  int64
	Flag         bool
	Active       bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
	DeletedAt    *time.Time
}

// DefinitionInput is a new definition; Code is required, and exactly the kind's amount field
// (AmountSantim for FIXED_SANTIM, BasisPoints for PERCENT_OF_GROSS_BASIS_POINTS).
type DefinitionInput struct {
	Name, Code, Description string
	Kind                    Kind
	AmountSantim            *int64
	BasisPoints             *int64
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
	return CheckKindAmounts(in.Kind, in.AmountSantim, in.BasisPoints)
}

// DefinitionChange changes the fields that are not nil; "" clears Description. A new Kind comes
// with its own amount field (the other one is cleared); an amount without a kind must be in the
// unit of the stored kind (*AmountKindError otherwise).
type DefinitionChange struct {
	Name, Code, Description *string
	Kind                    *Kind
	AmountSantim            *int64
	BasisPoints             *int64
	Flag                    *bool
	Active                  *bool
}

// Clean normalizes and checks what a change can check without the stored definition.
func (ch *DefinitionChange) Clean() error {
	if ch.Name == nil && ch.Code == nil && ch.Description == nil && ch.Kind == nil && ch.AmountSantim == nil &&
		ch.BasisPoints == nil && ch.Flag == nil && ch.Active == nil {
		return &field.Error{Field: "body", Problem: "must change at least one field"}
	}
	if err := cleanPtrs(&ch.Name, &ch.Code, &ch.Description, false); err != nil {
		return err
	}
	if ch.Kind != nil {
		return CheckKindAmounts(*ch.Kind, ch.AmountSantim, ch.BasisPoints)
	}
	return CheckAmounts(ch.AmountSantim, ch.BasisPoints)
}

func (c *Compensation) columns() string {
	return `id, name, code, coalesce(description, ''), kind, ` + amountColumns("") + `, ` + c.flag + `, active, created_at, updated_at, deleted_at`
}

func scanDefinition(row pgx.Row) (Definition, error) {
	var d Definition
	err := row.Scan(&d.ID, &d.Name, &d.Code, &d.Description, &d.Kind, &d.AmountSantim, &d.BasisPoints, &d.Flag, &d.Active,
		&d.CreatedAt, &d.UpdatedAt, &d.DeletedAt)
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
	out := map[string]any{"name": d.Name, "code": d.Code, "kind": d.Kind, c.flag: d.Flag, "active": d.Active}
	if d.Kind == PercentOfGross {
		out[FieldBasisPoints] = d.BasisPoints
	} else {
		out[FieldAmountSantim] = d.AmountSantim
	}
	return out
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
			(id, tenant_id, name, code, description, kind, amount_santim, basis_points, `+c.flag+`, active, created_at, updated_at)
		VALUES ($1, $2, $3, $4, nullif($5, ''), $6, $7, $8, $9, $10, $11, $11) RETURNING `+c.columns(),
		c.prefix+identity.NewID(), tenant, in.Name, in.Code, in.Description, string(in.Kind), in.AmountSantim, in.BasisPoints,
		in.Flag, in.Active, at))
	if err != nil {
		return Definition{}, translate(err)
	}
	return d, audit.Write(ctx, tx, audit.Entry{Action: "Create" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: d.ID, Details: c.details(d)})
}

// Update applies ch to the definition at at and audits Update<Target>. *field.Error,
// *AmountKindError (an amount without a kind, in the other unit than the stored kind's),
// ErrNotFound, ErrDuplicateName, ErrDuplicateCode, ErrInUse (a new kind while an assignment
// carries its own amount).
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
	set(&next.AmountSantim, ch.AmountSantim)
	set(&next.BasisPoints, ch.BasisPoints)
	set(&next.Flag, ch.Flag)
	set(&next.Active, ch.Active)
	if err := amountFor(next.Kind, ch.AmountSantim, ch.BasisPoints); err != nil {
		return Definition{}, err
	}
	if next.Kind != cur.Kind {
		// A past assignment keeps its kind: the cascading key (app/0030) moves only the live ones,
		// so count every assignment with an amount of its own, ended or not.
		var overrides int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.`+c.assignTable+` WHERE tenant_id = $1 AND `+c.assignColumn+` = $2
			AND (amount_santim IS NOT NULL OR basis_points IS NOT NULL)`, tenant, id).Scan(&overrides); err != nil {
			return Definition{}, fmt.Errorf("catalogs: %s overrides: %w", c.table, err)
		}
		if overrides > 0 {
			return Definition{}, ErrInUse
		}
	}
	d, err := scanDefinition(tx.QueryRow(ctx, `UPDATE app.`+c.table+` SET name = $3, code = $4, description = nullif($5, ''),
		kind = $6, amount_santim = $7, basis_points = $8, `+c.flag+` = $9, active = $10, updated_at = $11
		WHERE tenant_id = $1 AND id = $2 RETURNING `+c.columns(),
		tenant, id, next.Name, next.Code, next.Description, string(next.Kind), nullUnless(FixedSantim, next.Kind, next.AmountSantim),
		nullUnless(PercentOfGross, next.Kind, next.BasisPoints), next.Flag, next.Active, at))
	if err != nil {
		return Definition{}, translate(err)
	}
	details := c.details(d)
	details["changed"] = changed(map[string]bool{"name": ch.Name != nil, "code": ch.Code != nil, "description": ch.Description != nil,
		"kind": ch.Kind != nil, FieldAmountSantim: ch.AmountSantim != nil, FieldBasisPoints: ch.BasisPoints != nil, c.flag: ch.Flag != nil,
		"active": ch.Active != nil})
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
