// Package payrolltest sets up what the payroll stores' tests need: a business with an owner, a
// context scoped to it as that owner, bun over the runtime role, and employees with a salary.
package payrolltest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// Org is a business with an owner.
type Org struct {
	ID    string
	Owner string
	// Ctx carries the organization as tenant and the owner as actor.
	Ctx context.Context
	DB  *testkit.DB
	Bun *bun.DB
}

// NewOrg creates a business whose owner's e-mail is unique to the test.
func NewOrg(t testing.TB, d *testkit.DB) *Org {
	t.Helper()
	ctx := context.Background()
	id := orgs.NewOrganizationID()
	var uid string
	require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: strings.ToLower(id) + "@example.com", Name: "Owner", PasswordHash: "x"})
		if err != nil {
			return err
		}
		uid = u.ID
		_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Org " + id, Kind: orgs.Business}, u.ID)
		return err
	}))
	return &Org{ID: id, Owner: uid, DB: d, Bun: db.NewBun(d.App),
		Ctx: tenancy.With(ctx, tenancy.Scope{TenantID: id, Actor: uid, RequestID: "req-" + id})}
}

// In runs fn in a bun transaction of the organization; fn's error rolls it back.
func (o *Org) In(fn func(ctx context.Context, tx db.BunTx) error) error {
	return tenancy.InBunTx(o.Ctx, o.Bun, func(tx db.BunTx) error { return fn(o.Ctx, tx) })
}

// Employee is what Employee creates.
type Employee struct {
	Salary   int64     // gross monthly salary, santim
	HireDate time.Time // a date (UTC midnight)
}

// Employee adds an ACTIVE employee with e's salary and hire date (zero: 10,000 ETB since
// 2026-01-01) and returns its id.
func (o *Org) Employee(t testing.TB, e Employee) string {
	t.Helper()
	if e.Salary == 0 {
		e.Salary = 1_000_000
	}
	if e.HireDate.IsZero() {
		e.HireDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	id := "emp_" + identity.NewID()
	nationalID := strings.ToUpper(strings.ReplaceAll(id, "-", ""))
	nationalID = nationalID[len(nationalID)-16:] // the uuid's random end
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(o.Ctx, `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name)
			VALUES ($1, $2, 'Abebe', 'Kebede', 'Abebe Kebede', $3, $4, $5, 'cbe', '1000123456789', 'Abebe Kebede')`,
			id, o.ID, nationalID, e.HireDate, e.Salary)
		return err
	}))
	return id
}

// Count counts the organization's rows of a query such as
// `SELECT count(*) FROM app.audit_log WHERE action = $1`.
func (o *Org) Count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		return tx.QueryRow(ctx, query, args...).Scan(&n)
	}))
	return n
}

// CourtOrder adds an ACTIVE court order on employee (made and activated by two others, since
// 2026-01), withholding amount a month up to total (nil: no total), and returns its id
// (mdt_<employee>).
func (o *Org) CourtOrder(t testing.TB, employee string, amount int64, total *int64) string {
	t.Helper()
	id := "mdt_" + employee
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(o.Ctx, `INSERT INTO app.payroll_deduction_mandates (id, tenant_id, employee_id, kind, amount_santim,
				total_santim, start_period, priority, status, reference, payee_partner, payee_account_number, payee_holder_name,
				created_by, created_at, activated_by, activated_at, updated_at)
			VALUES ($1, $2, $3, 'COURT_ORDER', $4, $5, '2026-01', 0, 'ACTIVE', 'FHC-1', 'sandbox', 'COURT-1', 'Federal Court',
				'u-maker', now(), 'u-checker', now(), now())`, id, o.ID, employee, amount, total)
		return err
	}))
	return id
}
