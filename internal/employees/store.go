package employees

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Errors the store returns; the API maps each to one code.
var (
	// ErrNotFound: no such employee in the tenant, or it is deleted.
	ErrNotFound = errors.New("employees: not found")
	// ErrDuplicateNationalID: another (not deleted) employee of the tenant has the national id.
	ErrDuplicateNationalID = errors.New("employees: another employee of this business has this national id")
	// ErrDuplicateTIN: another (not deleted) employee of the tenant has the TIN.
	ErrDuplicateTIN = errors.New("employees: another employee of this business has this TIN")
	// ErrInvalidTransition: the status change is not allowed (Status.CanBecome).
	ErrInvalidTransition = errors.New("employees: status change not allowed")
	// ErrInvalid: an employee breaks a rule of Validate (the error wraps the *field.Error too).
	ErrInvalid = errors.New("employees: invalid employee")
)

// Page bounds of List.
const (
	DefaultPage = 50
	MaxPage     = 100
)

// columns are an employee as scan reads it. The pay cadence is the one of the payment frequency
// entry the employee names: the live entry of that name, else the one deleted last (an employee
// keeps the value filed before its entry was deleted, and is paid as that entry said), else the
// default (no payment frequency, or a name from before the catalogs).
const columns = `e.id, e.tenant_id, e.first_name, e.last_name, e.full_name, coalesce(e.email, ''), coalesce(e.phone, ''),
	e.national_id, coalesce(e.department, ''), coalesce(e.position, ''), coalesce(e.employment_type, ''),
	coalesce(e.payment_frequency, ''), e.hire_date, e.termination_date, coalesce(e.tin, ''), e.status,
	e.gross_monthly_salary_santim, e.payout_partner, e.payout_account_number, e.payout_holder_name, coalesce(e.user_id, ''),
	e.created_at, e.updated_at,
	coalesce((SELECT pf.cadence FROM app.payment_frequencies pf
		WHERE pf.tenant_id = e.tenant_id AND lower(pf.name) = lower(e.payment_frequency)
		ORDER BY pf.deleted_at IS NOT NULL, pf.deleted_at DESC LIMIT 1), '` + string(catalogs.DefaultCadence) + `')`

func scan(row pgx.Row) (Employee, error) {
	var e Employee
	var terminated *time.Time
	err := row.Scan(&e.ID, &e.TenantID, &e.FirstName, &e.LastName, &e.FullName, &e.Email, &e.Phone, &e.NationalID,
		&e.Department, &e.Position, &e.EmploymentType, &e.PaymentFrequency, &e.HireDate, &terminated, &e.TIN, &e.Status,
		&e.GrossMonthlySalarySantim, &e.Payout.Partner, &e.Payout.AccountNumber, &e.Payout.HolderName, &e.UserID,
		&e.CreatedAt, &e.UpdatedAt, &e.PayCadence)
	if errors.Is(err, pgx.ErrNoRows) {
		return Employee{}, ErrNotFound
	}
	if err != nil {
		return Employee{}, fmt.Errorf("employees: scan: %w", err)
	}
	e.HireDate = dateOf(e.HireDate)
	if terminated != nil {
		e.TerminationDate = dateOf(*terminated)
	}
	return e, nil
}

func collect(rows pgx.Rows, err error) ([]Employee, error) {
	if err != nil {
		return nil, fmt.Errorf("employees: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Employee, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("employees: list: %w", err)
	}
	return out, nil
}

// translate turns the database's refusals into the store's errors, once.
func translate(op string, err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == pgerrcode.UniqueViolation {
		switch pg.ConstraintName {
		case "employees_national_id":
			return ErrDuplicateNationalID
		case "employees_tin":
			return ErrDuplicateTIN
		case "employees_user":
			return ErrUserAlreadyLinked
		}
	}
	return fmt.Errorf("employees: %s: %w", op, err)
}

// valid normalizes and validates e for a write.
func valid(e *Employee) error {
	e.Normalize()
	if err := e.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func nullable(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// nullDate is d, or NULL for the zero time.
func nullDate(d time.Time) *time.Time {
	if d.IsZero() {
		return nil
	}
	return &d
}

// Create adds e to tenant with a fresh id (e.ID and e.TenantID are ignored; e.Status "" means
// ACTIVE) and returns it as stored. Errors: ErrInvalid, ErrDuplicateNationalID, ErrDuplicateTIN.
func Create(ctx context.Context, q db.Writer, tenant string, e Employee) (Employee, error) {
	e.ID, e.TenantID, e.UserID = NewID(), tenant, ""
	if e.Status == "" {
		e.Status = Active
	}
	if err := valid(&e); err != nil {
		return Employee{}, err
	}
	out, err := scan(q.QueryRow(ctx, `INSERT INTO app.employees AS e (id, tenant_id, first_name, last_name, full_name, email, phone,
			national_id, department, position, employment_type, payment_frequency, hire_date, status,
			gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name, termination_date, tin,
			payout_changed_by, payout_changed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
			$21, CASE WHEN $21::text IS NOT NULL THEN now() END)
		RETURNING `+columns,
		e.ID, tenant, e.FirstName, e.LastName, e.FullName, nullable(e.Email), nullable(e.Phone), e.NationalID,
		nullable(e.Department), nullable(e.Position), nullable(e.EmploymentType), nullable(e.PaymentFrequency),
		e.HireDate, string(e.Status), e.GrossMonthlySalarySantim, e.Payout.Partner, e.Payout.AccountNumber, e.Payout.HolderName,
		nullDate(e.TerminationDate), nullable(e.TIN), nullable(tenancy.Actor(ctx))))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Employee{}, translate("create", err)
	}
	return out, err
}

// ByID returns tenant's employee id; ErrNotFound when there is none or it is deleted.
func ByID(ctx context.Context, q db.Writer, tenant, id string) (Employee, error) {
	return scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.employees e
		WHERE e.tenant_id = $1 AND e.id = $2 AND e.deleted_at IS NULL`, tenant, id))
}

// Lock is lock for a caller that decides on the employee within its own transaction (a transfer
// reads the obligations of the locked record before it ends the employment).
func Lock(ctx context.Context, q db.Writer, tenant, id string) (Employee, error) {
	return lock(ctx, q, tenant, id)
}

// lock reads tenant's employee id under a row lock for the rest of the transaction, so
// concurrent changes apply one after the other.
func lock(ctx context.Context, q db.Writer, tenant, id string) (Employee, error) {
	return scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.employees e
		WHERE e.tenant_id = $1 AND e.id = $2 AND e.deleted_at IS NULL FOR UPDATE`, tenant, id))
}

// ByUser returns the employee of tenant linked to userID; ErrNotFound when there is none.
func ByUser(ctx context.Context, q db.Querier, tenant, userID string) (Employee, error) {
	return scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.employees e
		WHERE e.tenant_id = $1 AND e.user_id = $2 AND e.deleted_at IS NULL`, tenant, userID))
}

// LinkedTo returns the employees linked to userID in every tenant the transaction sees, oldest
// link first. In tenancy.InUserTx (a user and no tenant) that is every tenant: RLS shows a user
// their own employee rows and nothing else.
func LinkedTo(ctx context.Context, q db.Querier, userID string) ([]Employee, error) {
	return collect(q.Query(ctx, `SELECT `+columns+` FROM app.employees e
		WHERE e.user_id = $1 AND e.deleted_at IS NULL ORDER BY e.created_at, e.id`, userID))
}

// Filter selects and pages the employees List returns. Zero values select everything.
type Filter struct {
	Status Status
	// Department matches case-insensitively and exactly.
	Department string
	// Query matches a part of the first, last or full name, case-insensitively.
	Query string
	// After is the cursor: the last id of the previous page ("" from the start).
	After string
	// Limit is 1 to MaxPage (anything else means DefaultPage).
	Limit int
}

// List returns a page of tenant's employees (deleted ones left out) matching f, ordered by id.
func List(ctx context.Context, q db.Querier, tenant string, f Filter) ([]Employee, error) {
	if f.Limit < 1 || f.Limit > MaxPage {
		f.Limit = DefaultPage
	}
	var w db.Where
	w.Add("e.tenant_id = ?", tenant)
	w.Add("e.deleted_at IS NULL AND e.id > ?", f.After)
	w.AddIf(f.Status != "", "e.status = ?", string(f.Status))
	w.AddIf(f.Department != "", "lower(e.department) = lower(?)", f.Department)
	w.AddIf(f.Query != "", `(e.full_name ILIKE ? ESCAPE '\' OR e.first_name ILIKE ? ESCAPE '\' OR e.last_name ILIKE ? ESCAPE '\')`,
		"%"+likeEscaper.Replace(f.Query)+"%")
	limit := w.Next()
	return collect(q.Query(ctx, `SELECT `+columns+` FROM app.employees e WHERE `+w.String()+` ORDER BY e.id LIMIT `+limit,
		append(w.Args, f.Limit)...))
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// payoutChanged is true in an UPDATE of app.employees AS e that sets the payout account to
// $16-$18 (partner, account number, holder) when that is another account.
const payoutChanged = `(e.payout_partner, e.payout_account_number, e.payout_holder_name) IS DISTINCT FROM ($16::text, $17::text, $18::text)`

// Update applies change to tenant's employee id under a row lock and stores the result: every
// field but the id, tenant, linked user and timestamps, which stay as they were. A status
// change must be allowed (Status.CanBecome). A change of the payout account records the actor
// and the time (payout_changed_by, payout_changed_at): a payroll retry to the new account needs
// someone else (payroll.ClaimRetry), as Create's and the import's first account does. Errors: ErrNotFound, ErrInvalid,
// ErrInvalidTransition, ErrDuplicateNationalID, ErrDuplicateTIN, or change's own error.
func Update(ctx context.Context, q db.Writer, tenant, id string, change func(*Employee) error) (Employee, error) {
	cur, err := lock(ctx, q, tenant, id)
	if err != nil {
		return Employee{}, err
	}
	next := cur
	if err := change(&next); err != nil {
		return Employee{}, err
	}
	next.ID, next.TenantID, next.UserID, next.CreatedAt, next.UpdatedAt = cur.ID, cur.TenantID, cur.UserID, cur.CreatedAt, cur.UpdatedAt
	if cur.Status == Terminated && next.Status == Active {
		// A re-hire starts a new employment: the old last day would pay them nothing.
		next.TerminationDate = time.Time{}
	}
	if err := valid(&next); err != nil {
		return Employee{}, err
	}
	if next.Status != cur.Status && !cur.Status.CanBecome(next.Status) {
		return Employee{}, ErrInvalidTransition
	}
	out, err := scan(q.QueryRow(ctx, `UPDATE app.employees AS e SET first_name = $3, last_name = $4, full_name = $5, email = $6,
			phone = $7, national_id = $8, department = $9, position = $10, employment_type = $11, payment_frequency = $12,
			hire_date = $13, status = $14, gross_monthly_salary_santim = $15, payout_partner = $16,
			payout_account_number = $17, payout_holder_name = $18, termination_date = $19, tin = $20, updated_at = now(),
			payout_changed_by = CASE WHEN `+payoutChanged+` THEN $21 ELSE e.payout_changed_by END,
			payout_changed_at = CASE WHEN `+payoutChanged+` THEN (CASE WHEN $21::text IS NOT NULL THEN now() END) ELSE e.payout_changed_at END
		WHERE e.tenant_id = $1 AND e.id = $2 RETURNING `+columns,
		tenant, id, next.FirstName, next.LastName, next.FullName, nullable(next.Email), nullable(next.Phone), next.NationalID,
		nullable(next.Department), nullable(next.Position), nullable(next.EmploymentType), nullable(next.PaymentFrequency),
		next.HireDate, string(next.Status), next.GrossMonthlySalarySantim, next.Payout.Partner, next.Payout.AccountNumber,
		next.Payout.HolderName, nullDate(next.TerminationDate), nullable(next.TIN), nullable(tenancy.Actor(ctx))))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Employee{}, translate("update", err)
	}
	return out, err
}

// SetStatus moves tenant's employee id to status to and returns it with the status it had.
// Setting the status it already has changes nothing (changed is false). A re-hire (TERMINATED to
// ACTIVE) also clears the termination date. Errors: ErrNotFound, ErrInvalidTransition.
func SetStatus(ctx context.Context, q db.Writer, tenant, id string, to Status) (e Employee, from Status, changed bool, err error) {
	if !to.Valid() {
		return Employee{}, "", false, ErrInvalidTransition
	}
	cur, err := lock(ctx, q, tenant, id)
	if err != nil {
		return Employee{}, "", false, err
	}
	if cur.Status == to {
		return cur, cur.Status, false, nil
	}
	e, err = Update(ctx, q, tenant, id, func(e *Employee) error { e.Status = to; return nil })
	return e, cur.Status, err == nil, err
}

// SoftDelete marks tenant's employee id deleted at now: it disappears from reads and lists, its
// national id and linked user become free again, its pending link invitation stops working, and
// the row stays for the payrolls, requests and audit rows that name it. ErrNotFound when there
// is none (or it is already deleted).
func SoftDelete(ctx context.Context, q db.Querier, tenant, id string, now time.Time) (Employee, error) {
	cur, err := lock(ctx, q, tenant, id)
	if err != nil {
		return Employee{}, err
	}
	if err := spendLink(ctx, q, tenant, id, now); err != nil {
		return Employee{}, err
	}
	if _, err := q.Exec(ctx, `UPDATE app.employees SET deleted_at = $3, link_verification_id = NULL, updated_at = $3
		WHERE tenant_id = $1 AND id = $2`, tenant, id, now); err != nil {
		return Employee{}, translate("delete", err)
	}
	return cur, nil
}

// Counts are how many employees a tenant has (deleted ones left out): in all, in each status
// (every status present) and linked to a user account of their own.
type Counts struct {
	Total    int64
	Active   int64
	ByStatus map[Status]int64
	Linked   int64
}

// Statuses lists every employee status.
var Statuses = []Status{Active, OnLeave, Suspended, Terminated}

// Count counts tenant's employees in one query.
func Count(ctx context.Context, q db.Writer, tenant string) (Counts, error) {
	c := Counts{ByStatus: make(map[Status]int64, len(Statuses))}
	var byStatus [4]int64
	err := q.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'ACTIVE'),
			count(*) FILTER (WHERE status = 'ON_LEAVE'), count(*) FILTER (WHERE status = 'SUSPENDED'),
			count(*) FILTER (WHERE status = 'TERMINATED'), count(user_id)
		FROM app.employees WHERE tenant_id = $1 AND deleted_at IS NULL`, tenant).
		Scan(&c.Total, &byStatus[0], &byStatus[1], &byStatus[2], &byStatus[3], &c.Linked)
	if err != nil {
		return Counts{}, fmt.Errorf("employees: count: %w", err)
	}
	for i, st := range Statuses {
		c.ByStatus[st] = byStatus[i]
	}
	c.Active = c.ByStatus[Active]
	return c, nil
}

// CountActive counts tenant's ACTIVE employees (the ones a payroll run pays).
func CountActive(ctx context.Context, q db.Writer, tenant string) (int64, error) {
	c, err := Count(ctx, q, tenant)
	return c.Active, err
}

// IsLinkedUser reports whether the context's tenant's employee employeeID is linked to one of
// users (the employee's own account; "" is no user). A person does not act alone on their own
// case: an operator who is also the employee is refused the decision of their own dispute and the
// servicing of their own loan or plan.
func IsLinkedUser(ctx context.Context, q db.Writer, employeeID string, users ...string) (bool, error) {
	users = slices.DeleteFunc(slices.Clone(users), func(u string) bool { return u == "" })
	if len(users) == 0 {
		return false, nil
	}
	var linked bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.employees WHERE tenant_id = $1 AND id = $2 AND user_id = ANY($3::text[]))`,
		tenancy.TenantID(ctx), employeeID, users).Scan(&linked); err != nil {
		return false, fmt.Errorf("employees: linked user: %w", err)
	}
	return linked, nil
}
