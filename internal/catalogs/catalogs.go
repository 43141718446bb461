package catalogs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Errors of the store functions (besides *field.Error for a value that breaks its rule).
var (
	// ErrNotFound: no such entry, definition or assignment in the organization (deleted ones
	// and other organizations' look the same).
	ErrNotFound = errors.New("catalogs: not found")
	// ErrDuplicateName: another entry of the catalog that is not deleted has this name (compared
	// case-insensitively).
	ErrDuplicateName = errors.New("catalogs: the name is taken in this catalog")
	// ErrDuplicateCode: another entry of the catalog that is not deleted has this code (compared
	// case-insensitively).
	ErrDuplicateCode = errors.New("catalogs: the code is taken in this catalog")
	// ErrFull: the catalog already holds MaxEntries entries.
	ErrFull = errors.New("catalogs: the catalog is full")
	// ErrInUse: a definition is assigned to employees, so it cannot be deleted, nor its kind
	// changed while an assignment carries an amount of its own (in the old kind's unit).
	ErrInUse = errors.New("catalogs: the definition is assigned to employees")
	// ErrInactive: an inactive definition cannot be assigned.
	ErrInactive = errors.New("catalogs: the definition is not active")
	// ErrAlreadyAssigned: the employee already has this definition.
	ErrAlreadyAssigned = errors.New("catalogs: the definition is already assigned to the employee")
)

// Bounds of what a catalog holds.
const (
	// MaxEntries bounds the entries of one catalog (not deleted) in one organization, so a list
	// is one bounded answer rather than a paginated one.
	MaxEntries = 500
	// MaxNameBytes, MaxCodeBytes and MaxDescriptionBytes bound an entry's fields.
	MaxNameBytes        = 128
	MaxCodeBytes        = 32
	MaxDescriptionBytes = 512
)

// Catalog is one of the name lists an employee is filed under.
type Catalog struct {
	table  string
	prefix string
	// cadenced: the entries carry a Cadence (payment frequencies only).
	cadenced bool
	// Target names an entry in the domain's words: the audit rows' target type, and the noun of
	// their actions (Create<Target>, Update<Target>, Delete<Target>).
	Target string
}

// The four name catalogs.
var (
	Departments        = &Catalog{table: "departments", prefix: "dep_", Target: "Department"}
	Positions          = &Catalog{table: "positions", prefix: "pos_", Target: "Position"}
	EmploymentTypes    = &Catalog{table: "employment_types", prefix: "emt_", Target: "EmploymentType"}
	PaymentFrequencies = &Catalog{table: "payment_frequencies", prefix: "pfq_", Target: "PaymentFrequency", cadenced: true}
)

// Cadence is how often a payroll run pays the employees of a payment frequency.
type Cadence string

const (
	Monthly     Cadence = "MONTHLY"
	SemiMonthly Cadence = "SEMI_MONTHLY" // twice a month
	Biweekly    Cadence = "BIWEEKLY"     // every two weeks
	Weekly      Cadence = "WEEKLY"
)

// DefaultCadence is the cadence of an employee without a payment frequency, of a payment
// frequency created without one, and of every entry that existed before cadences (migration
// app/0030): the monthly run was the only one.
const DefaultCadence = Monthly

// Cadences lists the valid cadences.
var Cadences = []Cadence{Monthly, SemiMonthly, Biweekly, Weekly}

// Valid reports whether c is one of Cadences.
func (c Cadence) Valid() bool {
	switch c {
	case Monthly, SemiMonthly, Biweekly, Weekly:
		return true
	}
	return false
}

// Cadenced reports whether c's entries carry a cadence (payment frequencies).
func (c *Catalog) Cadenced() bool { return c.cadenced }

func checkCadence(c Cadence) error {
	if !c.Valid() {
		return &field.Error{Field: "cadence", Problem: "must be MONTHLY, SEMI_MONTHLY, BIWEEKLY or WEEKLY"}
	}
	return nil
}

// Entry is one entry of a name catalog. Code and Description are "" when not given.
type Entry struct {
	ID          string
	Name        string
	Code        string
	Description string
	// Cadence is a payment frequency's ("" in the other catalogs).
	Cadence   Cadence
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt *time.Time
}

// EntryInput is a new entry. Cadence is for payment frequencies only ("" there means
// DefaultCadence).
type EntryInput struct {
	Name, Code, Description string
	Cadence                 Cadence
}

// EntryChange changes the fields that are not nil; "" clears Code or Description. Cadence is for
// payment frequencies only.
type EntryChange struct {
	Name, Code, Description *string
	Cadence                 *Cadence
}

// CleanName trims a name and checks it: printable, not blank, at most MaxNameBytes.
func CleanName(v string) (string, error) {
	v = strings.TrimSpace(v)
	if err := field.Name("name", v); err != nil {
		return "", err
	}
	if len(v) > MaxNameBytes {
		return "", &field.Error{Field: "name", Problem: fmt.Sprintf("must be at most %d bytes", MaxNameBytes)}
	}
	return v, nil
}

// CleanCode checks a code: an identifier of at most MaxCodeBytes; "" is valid when optional.
func CleanCode(v string, optional bool) (string, error) {
	if v == "" && optional {
		return "", nil
	}
	return v, field.Identifier("code", v, MaxCodeBytes)
}

// CleanDescription trims a description and checks it as free text of at most MaxDescriptionBytes.
func CleanDescription(v string) (string, error) {
	v = strings.TrimSpace(v)
	return v, field.Text("description", v, MaxDescriptionBytes)
}

// Clean normalizes and checks a new entry.
func (in *EntryInput) Clean() error {
	var err error
	if in.Name, err = CleanName(in.Name); err != nil {
		return err
	}
	if in.Code, err = CleanCode(in.Code, true); err != nil {
		return err
	}
	if in.Description, err = CleanDescription(in.Description); err != nil {
		return err
	}
	if in.Cadence != "" {
		return checkCadence(in.Cadence)
	}
	return nil
}

// Clean normalizes and checks a change; a change of nothing is refused.
func (ch *EntryChange) Clean() error {
	if ch.Name == nil && ch.Code == nil && ch.Description == nil && ch.Cadence == nil {
		return &field.Error{Field: "body", Problem: "must change at least one field"}
	}
	if ch.Cadence != nil {
		if err := checkCadence(*ch.Cadence); err != nil {
			return err
		}
	}
	return cleanPtrs(&ch.Name, &ch.Code, &ch.Description, true)
}

// cadenceOnly refuses a cadence for a catalog whose entries have none.
func (c *Catalog) cadenceOnly(given bool) error {
	if given && !c.cadenced {
		return &field.Error{Field: "cadence", Problem: "is for payment frequencies only"}
	}
	return nil
}

// cleanPtrs cleans the optional name, code and description of a change in place.
func cleanPtrs(name, code, desc **string, codeOptional bool) error {
	if *name != nil {
		v, err := CleanName(**name)
		if err != nil {
			return err
		}
		*name = &v
	}
	if *code != nil {
		v, err := CleanCode(**code, codeOptional)
		if err != nil {
			return err
		}
		*code = &v
	}
	if *desc != nil {
		v, err := CleanDescription(**desc)
		if err != nil {
			return err
		}
		*desc = &v
	}
	return nil
}

// columns are the columns of an entry; the name catalogs without a cadence read it as ”.
func (c *Catalog) columns() string {
	cadence := "''"
	if c.cadenced {
		cadence = "cadence"
	}
	return `id, name, coalesce(code, ''), coalesce(description, ''), ` + cadence + `, created_at, updated_at, deleted_at`
}

func scanEntry(row pgx.Row) (Entry, error) {
	var e Entry
	err := row.Scan(&e.ID, &e.Name, &e.Code, &e.Description, &e.Cadence, &e.CreatedAt, &e.UpdatedAt, &e.DeletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("catalogs: entry: %w", err)
	}
	return e, nil
}

// tenantOf is the context's tenant: every query names it, since a platform admin's cross-tenant
// transaction would otherwise see every organization's rows.
func tenantOf(ctx context.Context) (string, error) {
	t := tenancy.TenantID(ctx)
	if t == "" {
		return "", tenancy.ErrNoTenant
	}
	return t, nil
}

// List returns the catalog's entries that are not deleted, by name.
func (c *Catalog) List(ctx context.Context, q db.Querier) ([]Entry, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY lower(name), id LIMIT $2`, tenant, MaxEntries)
	if err != nil {
		return nil, fmt.Errorf("catalogs: list %s: %w", c.table, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) { return scanEntry(r) })
}

// Resolve finds names among the catalog's entries that are not deleted, compared
// case-insensitively as the catalog's unique index compares them, and returns each one found
// mapped to the entry's own spelling; a name that is no entry is absent from the map. An
// employee's employment type or payment frequency must be an entry (internal/employees).
func (c *Catalog) Resolve(ctx context.Context, q db.Querier, names []string) (map[string]string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT v.name, e.name FROM unnest($2::text[]) AS v(name)
		JOIN app.`+c.table+` e ON e.tenant_id = $1 AND e.deleted_at IS NULL AND lower(e.name) = lower(v.name)`, tenant, names)
	if err != nil {
		return nil, fmt.Errorf("catalogs: resolve %s: %w", c.table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var given, entry string
		if err := rows.Scan(&given, &entry); err != nil {
			return nil, fmt.Errorf("catalogs: resolve %s: %w", c.table, err)
		}
		out[given] = entry
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalogs: resolve %s: %w", c.table, err)
	}
	return out, nil
}

// ByID returns the entry unless it is deleted. ErrNotFound.
func (c *Catalog) ByID(ctx context.Context, q db.Querier, id string) (Entry, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Entry{}, err
	}
	return scanEntry(q.QueryRow(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tenant, id))
}

// Create adds an entry at at and audits Create<Target>. *field.Error, ErrDuplicateName,
// ErrDuplicateCode, ErrFull.
func (c *Catalog) Create(ctx context.Context, tx pgx.Tx, in EntryInput, at time.Time) (Entry, error) {
	if err := in.Clean(); err != nil {
		return Entry{}, err
	}
	if err := c.cadenceOnly(in.Cadence != ""); err != nil {
		return Entry{}, err
	}
	if c.cadenced && in.Cadence == "" {
		in.Cadence = DefaultCadence
	}
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Entry{}, err
	}
	if err := reserve(ctx, tx, c.table, tenant); err != nil {
		return Entry{}, err
	}
	cols, vals, args := "", "", []any{c.prefix + identity.NewID(), tenant, in.Name, in.Code, in.Description, at}
	if c.cadenced {
		cols, vals, args = ", cadence", ", $7", append(args, string(in.Cadence))
	}
	e, err := scanEntry(tx.QueryRow(ctx, `INSERT INTO app.`+c.table+` (id, tenant_id, name, code, description, created_at, updated_at`+cols+`)
		VALUES ($1, $2, $3, nullif($4, ''), nullif($5, ''), $6, $6`+vals+`) RETURNING `+c.columns(), args...))
	if err != nil {
		return Entry{}, translate(err)
	}
	return e, audit.Write(ctx, tx, audit.Entry{Action: "Create" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: e.ID, Details: c.details(e)})
}

// details are an entry's audit details: its name and code, and a payment frequency's cadence.
func (c *Catalog) details(e Entry) map[string]any {
	d := map[string]any{"name": e.Name, "code": e.Code}
	if c.cadenced {
		d["cadence"] = e.Cadence
	}
	return d
}

// Update applies ch to the entry at at and audits Update<Target>. *field.Error, ErrNotFound,
// ErrDuplicateName, ErrDuplicateCode.
func (c *Catalog) Update(ctx context.Context, tx pgx.Tx, id string, ch EntryChange, at time.Time) (Entry, error) {
	if err := ch.Clean(); err != nil {
		return Entry{}, err
	}
	if err := c.cadenceOnly(ch.Cadence != nil); err != nil {
		return Entry{}, err
	}
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Entry{}, err
	}
	cur, err := scanEntry(tx.QueryRow(ctx, `SELECT `+c.columns()+` FROM app.`+c.table+`
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`, tenant, id))
	if err != nil {
		return Entry{}, err
	}
	next := cur
	set(&next.Name, ch.Name)
	set(&next.Code, ch.Code)
	set(&next.Description, ch.Description)
	set(&next.Cadence, ch.Cadence)
	setCadence, args := "", []any{tenant, id, next.Name, next.Code, next.Description, at}
	if c.cadenced {
		setCadence, args = ", cadence = $7", append(args, string(next.Cadence))
	}
	e, err := scanEntry(tx.QueryRow(ctx, `UPDATE app.`+c.table+` SET name = $3, code = nullif($4, ''),
		description = nullif($5, ''), updated_at = $6`+setCadence+` WHERE tenant_id = $1 AND id = $2 RETURNING `+c.columns(), args...))
	if err != nil {
		return Entry{}, translate(err)
	}
	details := c.details(e)
	details["changed"] = changed(map[string]bool{"name": ch.Name != nil, "code": ch.Code != nil, "description": ch.Description != nil,
		"cadence": ch.Cadence != nil})
	return e, audit.Write(ctx, tx, audit.Entry{Action: "Update" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: e.ID, Details: details})
}

// Delete soft-deletes the entry at at and audits Delete<Target>. ErrNotFound.
func (c *Catalog) Delete(ctx context.Context, tx pgx.Tx, id string, at time.Time) (Entry, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return Entry{}, err
	}
	e, err := scanEntry(tx.QueryRow(ctx, `UPDATE app.`+c.table+` SET deleted_at = $3, updated_at = $3
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING `+c.columns(), tenant, id, at))
	if err != nil {
		return Entry{}, err
	}
	return e, audit.Write(ctx, tx, audit.Entry{Action: "Delete" + c.Target, Outcome: audit.Success, TargetType: c.Target,
		TargetID: e.ID, Details: c.details(e)})
}

// reserve orders concurrent additions to one catalog of one organization (an advisory lock for
// the rest of the transaction) and refuses one past MaxEntries.
func reserve(ctx context.Context, tx pgx.Tx, table, tenant string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('catalog:' || $1 || ':' || $2, 0))`, table, tenant); err != nil {
		return fmt.Errorf("catalogs: lock %s: %w", table, err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.`+table+` WHERE tenant_id = $1 AND deleted_at IS NULL`, tenant).Scan(&n); err != nil {
		return fmt.Errorf("catalogs: count %s: %w", table, err)
	}
	if n >= MaxEntries {
		return ErrFull
	}
	return nil
}

// translate turns the unique indexes' refusals into this package's errors.
func translate(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == pgerrcode.UniqueViolation {
		switch {
		case strings.HasSuffix(pe.ConstraintName, "_live_name"):
			return ErrDuplicateName
		case strings.HasSuffix(pe.ConstraintName, "_live_code"):
			return ErrDuplicateCode
		case strings.HasSuffix(pe.ConstraintName, "_live"):
			return ErrAlreadyAssigned
		}
	}
	if errors.Is(err, ErrNotFound) {
		return err
	}
	return fmt.Errorf("catalogs: %w", err)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// changed names the fields a change set (sorted), for its audit row.
func changed(set map[string]bool) []string {
	out := []string{}
	for name, ok := range set {
		if ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
