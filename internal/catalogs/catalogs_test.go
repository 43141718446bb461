package catalogs_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var at = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// org is a business with an owner, and a context scoped to it as that owner.
type org struct {
	id  string
	ctx context.Context
	d   *testkit.DB
}

func newOrg(t *testing.T, d *testkit.DB, email string) *org {
	t.Helper()
	ctx := context.Background()
	id := orgs.NewOrganizationID()
	var uid string
	require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: email, Name: "Owner", PasswordHash: "x"})
		if err != nil {
			return err
		}
		uid = u.ID
		_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Org " + email, Kind: orgs.Business}, u.ID)
		return err
	}))
	return &org{id: id, d: d, ctx: tenancy.WithActor(tenancy.WithTenant(ctx, id), uid)}
}

// in runs fn in a transaction of the organization; fn's error rolls it back.
func (o *org) in(fn func(ctx context.Context, tx pgx.Tx) error) error {
	return tenancy.InTx(o.ctx, o.d.App, func(tx pgx.Tx) error { return fn(o.ctx, tx) })
}

func (o *org) audits(t *testing.T, action string) int {
	t.Helper()
	var n int
	require.NoError(t, o.in(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'SUCCESS'`, action).Scan(&n)
	}))
	return n
}

// employee returns the id of an employee of o to assign to. Once app.employees exists (migration
// 0014) the pending foreign key (pending/0017) wants a real row, so it inserts a minimal one;
// before that any well-formed id does.
func (o *org) employee(t *testing.T) string {
	t.Helper()
	id := "emp_" + identity.NewID()
	nationalID := strings.ToUpper(strings.ReplaceAll(id, "-", ""))
	nationalID = nationalID[len(nationalID)-16:] // the uuid's random end
	require.NoError(t, o.in(func(ctx context.Context, tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('app.employees') IS NOT NULL`).Scan(&exists); err != nil || !exists {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name)
			VALUES ($1, $2, 'Abebe', 'Kebede', 'Abebe Kebede', $3, '2026-01-01', 1000000, 'cbe', '1000123456789', 'Abebe Kebede')`,
			id, o.id, nationalID)
		return err
	}))
	return id
}

func fieldOf(t *testing.T, err error) string {
	t.Helper()
	fe, ok := err.(*field.Error)
	require.True(t, ok, "want a *field.Error, got %v", err)
	return fe.Field
}

func ptr[T any](v T) *T { return &v }

func TestNameCatalogs(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, b := newOrg(t, d, "a@example.com"), newOrg(t, d, "b@example.com")
	for _, c := range []*catalogs.Catalog{catalogs.Departments, catalogs.Positions, catalogs.EmploymentTypes, catalogs.PaymentFrequencies} {
		t.Run(c.Target, func(t *testing.T) {
			var e catalogs.Entry
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				var err error
				e, err = c.Create(ctx, tx, catalogs.EntryInput{Name: "  Engineering ", Code: "ENG", Description: " builds "}, at)
				return err
			}))
			require.Equal(t, "Engineering", e.Name, "trimmed")
			require.Equal(t, "ENG", e.Code)
			require.Equal(t, "builds", e.Description)
			require.Equal(t, 1, a.audits(t, "Create"+c.Target))

			// Names and codes are unique among live entries, case-insensitively.
			err := a.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Create(ctx, tx, catalogs.EntryInput{Name: "ENGINEERING"}, at)
				return err
			})
			require.ErrorIs(t, err, catalogs.ErrDuplicateName)
			err = a.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Create(ctx, tx, catalogs.EntryInput{Name: "Other", Code: "eng"}, at)
				return err
			})
			require.ErrorIs(t, err, catalogs.ErrDuplicateCode)
			require.Equal(t, 1, a.audits(t, "Create"+c.Target), "a refused create writes nothing")

			// Another organization has its own catalog: the same name is free there, and A's entry
			// is invisible to it.
			require.NoError(t, b.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Create(ctx, tx, catalogs.EntryInput{Name: "Engineering", Code: "ENG"}, at)
				return err
			}))
			require.NoError(t, b.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Update(ctx, tx, e.ID, catalogs.EntryChange{Name: ptr("Stolen")}, at)
				require.ErrorIs(t, err, catalogs.ErrNotFound)
				_, err = c.Delete(ctx, tx, e.ID, at)
				require.ErrorIs(t, err, catalogs.ErrNotFound)
				_, err = c.ByID(ctx, tx, e.ID)
				require.ErrorIs(t, err, catalogs.ErrNotFound)
				return nil
			}))

			// Update: only the given fields; "" clears the code.
			var u catalogs.Entry
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				var err error
				u, err = c.Update(ctx, tx, e.ID, catalogs.EntryChange{Name: ptr("Research"), Code: ptr("")}, at.Add(time.Hour))
				return err
			}))
			require.Equal(t, "Research", u.Name)
			require.Empty(t, u.Code)
			require.Equal(t, "builds", u.Description)
			require.True(t, u.UpdatedAt.After(u.CreatedAt))
			require.Equal(t, 1, a.audits(t, "Update"+c.Target))
			err = a.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Update(ctx, tx, e.ID, catalogs.EntryChange{}, at)
				return err
			})
			require.Equal(t, "body", fieldOf(t, err))

			// Delete is soft: the row stays, the list drops it and its name is free again.
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				del, err := c.Delete(ctx, tx, e.ID, at.Add(2*time.Hour))
				require.NotNil(t, del.DeletedAt)
				return err
			}))
			require.Equal(t, 1, a.audits(t, "Delete"+c.Target))
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Delete(ctx, tx, e.ID, at)
				require.ErrorIs(t, err, catalogs.ErrNotFound, "deleting twice")
				list, err := c.List(ctx, tx)
				require.NoError(t, err)
				require.Empty(t, list)
				_, err = c.Create(ctx, tx, catalogs.EntryInput{Name: "Research"}, at)
				return err
			}))
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				list, err := c.List(ctx, tx)
				require.NoError(t, err)
				require.Len(t, list, 1)
				return nil
			}))
		})
	}
}

// TestPaymentFrequencyCadence: a payment frequency has a cadence (MONTHLY unless given), which an
// update may change and which the other catalogs refuse to carry.
func TestPaymentFrequencyCadence(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a := newOrg(t, d, "a@example.com")
	pf := catalogs.PaymentFrequencies
	var monthly, weekly catalogs.Entry
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if monthly, err = pf.Create(ctx, tx, catalogs.EntryInput{Name: "Monthly"}, at); err != nil {
			return err
		}
		weekly, err = pf.Create(ctx, tx, catalogs.EntryInput{Name: "Weekly", Cadence: catalogs.Weekly}, at)
		return err
	}))
	require.Equal(t, catalogs.Monthly, monthly.Cadence, "the default")
	require.Equal(t, catalogs.Weekly, weekly.Cadence)

	var got catalogs.Entry
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		var err error
		got, err = pf.Update(ctx, tx, monthly.ID, catalogs.EntryChange{Cadence: ptr(catalogs.SemiMonthly)}, at)
		return err
	}))
	require.Equal(t, catalogs.SemiMonthly, got.Cadence)
	require.Equal(t, "Monthly", got.Name, "untouched")
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		list, err := pf.List(ctx, tx)
		require.Equal(t, []catalogs.Cadence{catalogs.SemiMonthly, catalogs.Weekly}, []catalogs.Cadence{list[0].Cadence, list[1].Cadence})
		return err
	}))

	for _, err := range []error{
		a.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := pf.Create(ctx, tx, catalogs.EntryInput{Name: "Daily", Cadence: "DAILY"}, at)
			return err
		}),
		a.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := pf.Update(ctx, tx, weekly.ID, catalogs.EntryChange{Cadence: ptr(catalogs.Cadence("monthly"))}, at)
			return err
		}),
		a.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := catalogs.Departments.Create(ctx, tx, catalogs.EntryInput{Name: "Ops", Cadence: catalogs.Weekly}, at)
			return err
		}),
	} {
		require.Equal(t, "cadence", fieldOf(t, err))
	}
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		dep, err := catalogs.Departments.Create(ctx, tx, catalogs.EntryInput{Name: "Ops"}, at)
		require.Empty(t, dep.Cadence, "a department has none")
		return err
	}))
	err := a.in(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payment_frequencies SET cadence = 'DAILY' WHERE id = $1`, weekly.ID)
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.CheckViolation), "the table refuses an unknown cadence: %v", err)
}

func TestEntryValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    catalogs.EntryInput
		field string
	}{
		{catalogs.EntryInput{Name: ""}, "name"},
		{catalogs.EntryInput{Name: "   "}, "name"},
		{catalogs.EntryInput{Name: "a\x00b"}, "name"},
		{catalogs.EntryInput{Name: "a\u202eb"}, "name"},
		{catalogs.EntryInput{Name: "\xff"}, "name"},
		{catalogs.EntryInput{Name: strings.Repeat("n", catalogs.MaxNameBytes+1)}, "name"},
		{catalogs.EntryInput{Name: "ok", Code: "has space"}, "code"},
		{catalogs.EntryInput{Name: "ok", Code: strings.Repeat("C", catalogs.MaxCodeBytes+1)}, "code"},
		{catalogs.EntryInput{Name: "ok", Description: strings.Repeat("d", catalogs.MaxDescriptionBytes+1)}, "description"},
		{catalogs.EntryInput{Name: "ok", Description: "bell\a"}, "description"},
	} {
		in := tc.in
		require.Equal(t, tc.field, fieldOf(t, in.Clean()), "%q", tc.in)
	}
	ok := catalogs.EntryInput{Name: strings.Repeat("n", catalogs.MaxNameBytes), Code: strings.Repeat("C", catalogs.MaxCodeBytes),
		Description: "line one\nline two"}
	require.NoError(t, ok.Clean())
}

// TestAmountBounds: every int64 edge of both units, and the kind's own field required with a
// kind and the other refused.
func TestAmountBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind   catalogs.Kind
		amount int64
		ok     bool
	}{
		{catalogs.FixedSantim, 0, true},
		{catalogs.FixedSantim, 1, true},
		{catalogs.FixedSantim, catalogs.MaxFixedSantim, true},
		{catalogs.FixedSantim, catalogs.MaxFixedSantim + 1, false},
		{catalogs.FixedSantim, math.MaxInt64, false},
		{catalogs.FixedSantim, -1, false},
		{catalogs.FixedSantim, math.MinInt64, false},
		{catalogs.PercentOfGross, 0, true},
		{catalogs.PercentOfGross, 10_000, true},
		{catalogs.PercentOfGross, 10_001, false},
		{catalogs.PercentOfGross, math.MaxInt64, false},
		{catalogs.PercentOfGross, -1, false},
		{catalogs.PercentOfGross, math.MinInt64, false},
	} {
		santim, bp := &tc.amount, (*int64)(nil)
		if tc.kind == catalogs.PercentOfGross {
			santim, bp = nil, &tc.amount
		}
		for _, err := range []error{catalogs.CheckKindAmounts(tc.kind, santim, bp), catalogs.CheckAmounts(santim, bp)} {
			if tc.ok {
				require.NoError(t, err, "%s %d", tc.kind, tc.amount)
			} else {
				require.Equal(t, tc.kind.Field(), fieldOf(t, err), "%s %d", tc.kind, tc.amount)
			}
		}
	}
	one := ptr(int64(1))
	require.Equal(t, "kind", fieldOf(t, catalogs.CheckKindAmounts("PERCENT", nil, one)))
	require.Equal(t, "kind", fieldOf(t, catalogs.CheckKindAmounts("", one, nil)))
	require.Equal(t, "amountSantim", fieldOf(t, catalogs.CheckKindAmounts(catalogs.FixedSantim, nil, nil)), "the kind's own field is required")
	require.Equal(t, "basisPoints", fieldOf(t, catalogs.CheckKindAmounts(catalogs.PercentOfGross, nil, nil)))
	require.Equal(t, "basisPoints", fieldOf(t, catalogs.CheckKindAmounts(catalogs.FixedSantim, one, one)), "never both")
	require.Equal(t, "basisPoints", fieldOf(t, catalogs.CheckKindAmounts(catalogs.FixedSantim, nil, one)), "the other kind's field")
	require.Equal(t, "amountSantim", fieldOf(t, catalogs.CheckKindAmounts(catalogs.PercentOfGross, one, nil)))
	require.Equal(t, "basisPoints", fieldOf(t, catalogs.CheckAmounts(one, one)))
	require.NoError(t, catalogs.CheckAmounts(nil, nil))
}

func TestDefinitions(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, b := newOrg(t, d, "a@example.com"), newOrg(t, d, "b@example.com")
	for _, c := range []*catalogs.Compensation{catalogs.Allowances, catalogs.Deductions} {
		t.Run(c.Target, func(t *testing.T) {
			create := func(o *org, in catalogs.DefinitionInput) (catalogs.Definition, error) {
				var def catalogs.Definition
				err := o.in(func(ctx context.Context, tx pgx.Tx) error {
					var err error
					def, err = c.Create(ctx, tx, in, at)
					return err
				})
				return def, err
			}
			update := func(o *org, id string, ch catalogs.DefinitionChange) (catalogs.Definition, error) {
				var def catalogs.Definition
				err := o.in(func(ctx context.Context, tx pgx.Tx) error {
					var err error
					def, err = c.Update(ctx, tx, id, ch, at.Add(time.Minute))
					return err
				})
				return def, err
			}
			fixed, err := create(a, catalogs.DefinitionInput{Name: "Transport", Code: "TRN", Kind: catalogs.FixedSantim,
				AmountSantim: ptr(catalogs.MaxFixedSantim), Flag: true, Active: true})
			require.NoError(t, err)
			require.Equal(t, catalogs.MaxFixedSantim, fixed.AmountSantim)
			require.Zero(t, fixed.BasisPoints)
			require.True(t, fixed.Flag)
			require.True(t, fixed.Active)
			pct, err := create(a, catalogs.DefinitionInput{Name: "Pension", Code: "PEN", Kind: catalogs.PercentOfGross, BasisPoints: ptr(int64(700))})
			require.NoError(t, err)
			require.False(t, pct.Active)
			require.Equal(t, int64(700), pct.BasisPoints)
			require.Zero(t, pct.AmountSantim)
			require.Equal(t, 2, a.audits(t, "Create"+c.Target))

			// Refusals write nothing.
			for _, in := range []catalogs.DefinitionInput{
				{Name: "x", Code: "X", Kind: catalogs.PercentOfGross, BasisPoints: ptr(int64(10_001))},
				{Name: "x", Code: "X", Kind: catalogs.FixedSantim, AmountSantim: ptr(int64(-1))},
				{Name: "x", Code: "X", Kind: catalogs.FixedSantim, AmountSantim: ptr(int64(math.MaxInt64))},
				{Name: "x", Code: "X", Kind: "BOGUS", AmountSantim: ptr(int64(1))},
				{Name: "x", Code: "", Kind: catalogs.FixedSantim, AmountSantim: ptr(int64(1))},
				{Name: "x", Code: "X", Kind: catalogs.FixedSantim},
				{Name: "x", Code: "X", Kind: catalogs.FixedSantim, BasisPoints: ptr(int64(1))},
				{Name: "x", Code: "X", Kind: catalogs.PercentOfGross, AmountSantim: ptr(int64(1))},
				{Name: "x", Code: "X", Kind: catalogs.PercentOfGross, AmountSantim: ptr(int64(1)), BasisPoints: ptr(int64(1))},
			} {
				_, err := create(a, in)
				var fe *field.Error
				require.ErrorAs(t, err, &fe, "%+v", in)
			}
			_, err = create(a, catalogs.DefinitionInput{Name: "transport", Code: "T2", Kind: catalogs.FixedSantim, AmountSantim: ptr(int64(0))})
			require.ErrorIs(t, err, catalogs.ErrDuplicateName)
			_, err = create(a, catalogs.DefinitionInput{Name: "T2", Code: "trn", Kind: catalogs.FixedSantim, AmountSantim: ptr(int64(0))})
			require.ErrorIs(t, err, catalogs.ErrDuplicateCode)
			require.Equal(t, 2, a.audits(t, "Create"+c.Target))

			// A new kind comes with its own amount; an amount alone must be in the stored kind's unit.
			_, err = update(a, fixed.ID, catalogs.DefinitionChange{Kind: ptr(catalogs.PercentOfGross)})
			require.Equal(t, "basisPoints", fieldOf(t, err), "a kind without its amount")
			_, err = update(a, fixed.ID, catalogs.DefinitionChange{Kind: ptr(catalogs.PercentOfGross), AmountSantim: ptr(int64(1))})
			require.Equal(t, "amountSantim", fieldOf(t, err), "a kind with the other unit's amount")
			_, err = update(a, pct.ID, catalogs.DefinitionChange{BasisPoints: ptr(int64(10_001))})
			require.Equal(t, "basisPoints", fieldOf(t, err))
			_, err = update(a, pct.ID, catalogs.DefinitionChange{BasisPoints: ptr(int64(-1))})
			require.Equal(t, "basisPoints", fieldOf(t, err))
			_, err = update(a, pct.ID, catalogs.DefinitionChange{AmountSantim: ptr(int64(5)), BasisPoints: ptr(int64(5))})
			require.Equal(t, "basisPoints", fieldOf(t, err), "never both")
			var mismatch *catalogs.AmountKindError
			_, err = update(a, pct.ID, catalogs.DefinitionChange{AmountSantim: ptr(int64(5))})
			require.ErrorAs(t, err, &mismatch, "santim for a stored percentage")
			require.Equal(t, catalogs.AmountKindError{Field: "amountSantim", Kind: catalogs.PercentOfGross}, *mismatch)
			_, err = update(a, fixed.ID, catalogs.DefinitionChange{BasisPoints: ptr(int64(5))})
			require.ErrorIs(t, err, catalogs.ErrAmountKind)
			_, err = update(a, pct.ID, catalogs.DefinitionChange{Kind: ptr(catalogs.Kind("x"))})
			require.Equal(t, "kind", fieldOf(t, err))
			_, err = update(a, pct.ID, catalogs.DefinitionChange{})
			require.Equal(t, "body", fieldOf(t, err))
			_, err = update(a, pct.ID, catalogs.DefinitionChange{Code: ptr("")})
			require.Equal(t, "code", fieldOf(t, err), "a definition's code is required")
			_, err = update(a, pct.ID, catalogs.DefinitionChange{Name: ptr("TRANSPORT")})
			require.ErrorIs(t, err, catalogs.ErrDuplicateName)
			got, err := update(a, pct.ID, catalogs.DefinitionChange{BasisPoints: ptr(int64(725))})
			require.NoError(t, err)
			require.Equal(t, int64(725), got.BasisPoints, "an amount in the stored kind's unit")
			got, err = update(a, fixed.ID, catalogs.DefinitionChange{Kind: ptr(catalogs.PercentOfGross), BasisPoints: ptr(int64(10_000)),
				Flag: ptr(false), Active: ptr(false), Description: ptr("all of it")})
			require.NoError(t, err)
			require.Equal(t, catalogs.PercentOfGross, got.Kind)
			require.Equal(t, int64(10_000), got.BasisPoints)
			require.Zero(t, got.AmountSantim, "the other unit's amount is gone")
			require.False(t, got.Flag)
			require.False(t, got.Active)
			require.Equal(t, "all of it", got.Description)
			require.Equal(t, "Transport", got.Name, "untouched")
			require.Equal(t, 2, a.audits(t, "Update"+c.Target))

			// Another organization sees none of it.
			_, err = update(b, fixed.ID, catalogs.DefinitionChange{Active: ptr(true)})
			require.ErrorIs(t, err, catalogs.ErrNotFound)
			require.NoError(t, b.in(func(ctx context.Context, tx pgx.Tx) error {
				list, err := c.List(ctx, tx)
				require.Empty(t, list)
				return err
			}))

			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				list, err := c.List(ctx, tx)
				require.NoError(t, err)
				require.Equal(t, []string{"Pension", "Transport"}, []string{list[0].Name, list[1].Name}, "by name, inactive too")
				_, err = c.Delete(ctx, tx, pct.ID, at)
				return err
			}))
			require.Equal(t, 1, a.audits(t, "Delete"+c.Target))
		})
	}
}

// TestAmountCheckedByDatabase: the bounds, and exactly the kind's one amount, hold even for a
// writer that skips this package.
func TestAmountCheckedByDatabase(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a := newOrg(t, d, "a@example.com")
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		table, kind  string
		santim, bp   *int64
		wantAccepted bool
	}{
		{"allowances", "FIXED_SANTIM", n(catalogs.MaxFixedSantim), nil, true},
		{"allowances", "FIXED_SANTIM", n(catalogs.MaxFixedSantim + 1), nil, false},
		{"allowances", "FIXED_SANTIM", n(-1), nil, false},
		{"allowances", "FIXED_SANTIM", nil, nil, false},
		{"allowances", "FIXED_SANTIM", nil, n(1), false},
		{"allowances", "FIXED_SANTIM", n(1), n(1), false},
		{"deductions", "PERCENT_OF_GROSS_BASIS_POINTS", nil, n(10_000), true},
		{"deductions", "PERCENT_OF_GROSS_BASIS_POINTS", nil, n(10_001), false},
		{"deductions", "PERCENT_OF_GROSS_BASIS_POINTS", nil, n(-1), false},
		{"deductions", "PERCENT_OF_GROSS_BASIS_POINTS", n(1), nil, false},
		{"deductions", "PERCENT_OF_GROSS_BASIS_POINTS", nil, nil, false},
	} {
		flag := map[string]string{"allowances": "taxable", "deductions": "pre_tax"}[tc.table]
		err := a.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.`+tc.table+` (id, tenant_id, name, code, kind, amount_santim, basis_points, `+flag+`,
					active, created_at, updated_at)
				VALUES ('x', $1, 'n', 'c', $2, $3, $4, true, true, now(), now())`, a.id, tc.kind, tc.santim, tc.bp)
			if err == nil {
				return errRollback
			}
			return err
		})
		if tc.wantAccepted {
			require.ErrorIs(t, err, errRollback, "%+v", tc)
			continue
		}
		require.True(t, db.IsCode(err, pgerrcode.CheckViolation), "%+v: want a check violation, got %v", tc, err)
	}

	// An assignment's own amount is in its definition's unit, and follows it: the kind cannot
	// change under an assignment with an amount of its own.
	emp := a.employee(t)
	var def catalogs.Definition
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		var err error
		def, err = catalogs.Allowances.Create(ctx, tx, catalogs.DefinitionInput{Name: "Fuel", Code: "FUEL", Kind: catalogs.FixedSantim,
			AmountSantim: n(100), Active: true}, at)
		return err
	}))
	insert := func(id string, santim, bp *int64) error {
		return a.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.employee_allowances (id, tenant_id, employee_id, allowance_id, kind, amount_santim,
					basis_points, created_at) VALUES ($1, $2, $3, $4, 'FIXED_SANTIM', $5, $6, now())`, id, a.id, emp, def.ID, santim, bp)
			return err
		})
	}
	require.True(t, db.IsCode(insert("eal_1", nil, n(5)), pgerrcode.CheckViolation), "basis points on a fixed definition")
	require.True(t, db.IsCode(insert("eal_1", n(catalogs.MaxFixedSantim+1), nil), pgerrcode.CheckViolation))
	require.True(t, db.IsCode(a.in(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.employee_allowances (id, tenant_id, employee_id, allowance_id, kind, created_at)
			VALUES ('eal_2', $1, $2, $3, 'PERCENT_OF_GROSS_BASIS_POINTS', now())`, a.id, emp, def.ID)
		return err
	}), pgerrcode.ForeignKeyViolation), "an assignment of another kind than its definition's")
	require.NoError(t, insert("eal_1", n(7), nil))
	require.True(t, db.IsCode(a.in(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.allowances SET kind = 'PERCENT_OF_GROSS_BASIS_POINTS', amount_santim = NULL, basis_points = 1
			WHERE id = $1`, def.ID)
		return err
	}), pgerrcode.CheckViolation), "the cascade refuses to re-kind an amount of its own")
}

var errRollback = errors.New("roll back")

func TestAssignments(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, b := newOrg(t, d, "a@example.com"), newOrg(t, d, "b@example.com")
	for _, c := range []*catalogs.Compensation{catalogs.Allowances, catalogs.Deductions} {
		t.Run(c.Target, func(t *testing.T) {
			emp1, emp2 := a.employee(t), a.employee(t)
			var fixed, pct, off catalogs.Definition
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				var err error
				if fixed, err = c.Create(ctx, tx, catalogs.DefinitionInput{Name: "Housing", Code: "HSG", Kind: catalogs.FixedSantim,
					AmountSantim: ptr(int64(50_000)), Active: true}, at); err != nil {
					return err
				}
				if pct, err = c.Create(ctx, tx, catalogs.DefinitionInput{Name: "Bonus", Code: "BNS", Kind: catalogs.PercentOfGross,
					BasisPoints: ptr(int64(500)), Active: true}, at); err != nil {
					return err
				}
				off, err = c.Create(ctx, tx, catalogs.DefinitionInput{Name: "Old", Code: "OLD", Kind: catalogs.FixedSantim, AmountSantim: ptr(int64(1))}, at)
				return err
			}))
			assign := func(o *org, emp, def string, own catalogs.Own) (catalogs.Assignment, error) {
				var as catalogs.Assignment
				err := o.in(func(ctx context.Context, tx pgx.Tx) error {
					var err error
					as, err = c.Assign(ctx, tx, emp, def, own, at)
					return err
				})
				return as, err
			}
			none := catalogs.Own{}
			as1, err := assign(a, emp1, fixed.ID, none)
			require.NoError(t, err)
			require.Equal(t, int64(50_000), as1.EffectiveAmountSantim())
			require.Zero(t, as1.EffectiveBasisPoints())
			as2, err := assign(a, emp1, pct.ID, catalogs.Own{BasisPoints: ptr(int64(10_000))})
			require.NoError(t, err)
			require.Equal(t, int64(10_000), as2.EffectiveBasisPoints())
			require.Nil(t, as2.AmountSantim)
			require.Equal(t, 2, a.audits(t, "Assign"+c.Target))

			_, err = assign(a, emp1, fixed.ID, none)
			require.ErrorIs(t, err, catalogs.ErrAlreadyAssigned)
			_, err = assign(a, emp2, pct.ID, catalogs.Own{BasisPoints: ptr(int64(10_001))})
			require.Equal(t, "basisPoints", fieldOf(t, err))
			_, err = assign(a, emp2, fixed.ID, catalogs.Own{AmountSantim: ptr(int64(-1))})
			require.Equal(t, "amountSantim", fieldOf(t, err))
			_, err = assign(a, emp2, fixed.ID, catalogs.Own{AmountSantim: ptr(int64(math.MaxInt64))})
			require.Equal(t, "amountSantim", fieldOf(t, err))
			_, err = assign(a, emp2, fixed.ID, catalogs.Own{AmountSantim: ptr(int64(1)), BasisPoints: ptr(int64(1))})
			require.Equal(t, "basisPoints", fieldOf(t, err), "never both")
			var mismatch *catalogs.AmountKindError
			_, err = assign(a, emp2, pct.ID, catalogs.Own{AmountSantim: ptr(int64(1))})
			require.ErrorAs(t, err, &mismatch, "the override is in the definition's unit")
			require.Equal(t, "amountSantim", mismatch.Field)
			_, err = assign(a, emp2, fixed.ID, catalogs.Own{BasisPoints: ptr(int64(1))})
			require.ErrorIs(t, err, catalogs.ErrAmountKind)
			_, err = assign(a, emp2, off.ID, none)
			require.ErrorIs(t, err, catalogs.ErrInactive)
			_, err = assign(a, "emp 2", fixed.ID, none)
			require.Equal(t, "employeeId", fieldOf(t, err))
			_, err = assign(a, emp2, "../x", none)
			require.Error(t, err)
			_, err = assign(b, emp1, fixed.ID, none)
			require.ErrorIs(t, err, catalogs.ErrNotFound, "another organization's definition")
			require.Equal(t, 2, a.audits(t, "Assign"+c.Target))

			// A definition in use is neither deleted nor re-kinded under an override.
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Delete(ctx, tx, fixed.ID, at)
				require.ErrorIs(t, err, catalogs.ErrInUse)
				_, err = c.Update(ctx, tx, pct.ID, catalogs.DefinitionChange{Kind: ptr(catalogs.FixedSantim), AmountSantim: ptr(int64(1))}, at)
				require.ErrorIs(t, err, catalogs.ErrInUse)
				// Without an override the kind may change: the definition's amount is the one read.
				_, err = c.Update(ctx, tx, fixed.ID, catalogs.DefinitionChange{Kind: ptr(catalogs.PercentOfGross), BasisPoints: ptr(int64(100))}, at)
				return err
			}))

			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				list, err := c.Assignments(ctx, tx, emp1)
				require.NoError(t, err)
				require.Len(t, list, 2)
				require.Equal(t, "Bonus", list[0].Definition.Name)
				require.Equal(t, int64(100), list[1].EffectiveBasisPoints(), "the definition as it stands now")
				require.Zero(t, list[1].EffectiveAmountSantim())
				other, err := c.Assignments(ctx, tx, emp2)
				require.Empty(t, other)
				return err
			}))
			require.NoError(t, b.in(func(ctx context.Context, tx pgx.Tx) error {
				list, err := c.Assignments(ctx, tx, emp1)
				require.Empty(t, list, "another organization asking about A's employee")
				return err
			}))

			// Unassign: only the employee's own live assignment.
			require.NoError(t, b.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Unassign(ctx, tx, emp1, as1.ID, at)
				require.ErrorIs(t, err, catalogs.ErrNotFound)
				return nil
			}))
			require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
				_, err := c.Unassign(ctx, tx, emp2, as1.ID, at)
				require.ErrorIs(t, err, catalogs.ErrNotFound, "another employee's assignment")
				gone, err := c.Unassign(ctx, tx, emp1, as1.ID, at)
				require.NoError(t, err)
				require.NotNil(t, gone.DeletedAt)
				_, err = c.Unassign(ctx, tx, emp1, as1.ID, at)
				require.ErrorIs(t, err, catalogs.ErrNotFound, "twice")
				// Now unused, the definition can go; it can be assigned again first if wanted.
				_, err = c.Delete(ctx, tx, fixed.ID, at)
				return err
			}))
			require.Equal(t, 1, a.audits(t, "Unassign"+c.Target))
			_, err = assign(a, emp1, fixed.ID, none)
			require.ErrorIs(t, err, catalogs.ErrNotFound, "a deleted definition")
			_, err = assign(a, emp1, pct.ID, none)
			require.ErrorIs(t, err, catalogs.ErrAlreadyAssigned)
		})
	}
}

func TestCatalogFull(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a := newOrg(t, d, "a@example.com")
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		for i := 0; i < catalogs.MaxEntries; i++ {
			if _, err := catalogs.Positions.Create(ctx, tx, catalogs.EntryInput{Name: fmt.Sprintf("P%d", i)}, at); err != nil {
				return err
			}
		}
		return nil
	}))
	var last catalogs.Entry
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		_, err := catalogs.Positions.Create(ctx, tx, catalogs.EntryInput{Name: "one too many"}, at)
		require.ErrorIs(t, err, catalogs.ErrFull)
		list, err := catalogs.Positions.List(ctx, tx)
		require.Len(t, list, catalogs.MaxEntries)
		last = list[0]
		return err
	}))
	// A deleted entry frees its place.
	require.NoError(t, a.in(func(ctx context.Context, tx pgx.Tx) error {
		if _, err := catalogs.Positions.Delete(ctx, tx, last.ID, at); err != nil {
			return err
		}
		_, err := catalogs.Positions.Create(ctx, tx, catalogs.EntryInput{Name: "one too many"}, at)
		return err
	}))
}

// TestSoftDeleteOnly: the runtime role cannot remove a catalog row at all.
func TestSoftDeleteOnly(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a := newOrg(t, d, "a@example.com")
	for _, table := range []string{"departments", "positions", "employment_types", "payment_frequencies", "allowances", "deductions",
		"employee_allowances", "employee_deductions"} {
		err := a.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `DELETE FROM app.`+table)
			return err
		})
		require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "%s: want insufficient_privilege, got %v", table, err)
	}
}

// TestPlatformPathStaysInTenant: a platform admin's cross-tenant transaction sees every tenant,
// so the store's own tenant filter is what keeps a request to one organization.
func TestPlatformPathStaysInTenant(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, b := newOrg(t, d, "a@example.com"), newOrg(t, d, "b@example.com")
	for _, o := range []*org{a, b} {
		require.NoError(t, o.in(func(ctx context.Context, tx pgx.Tx) error {
			_, err := catalogs.Departments.Create(ctx, tx, catalogs.EntryInput{Name: "Ops of " + o.id}, at)
			return err
		}))
	}
	var bEntry catalogs.Entry
	require.NoError(t, b.in(func(ctx context.Context, tx pgx.Tx) error {
		list, err := catalogs.Departments.List(ctx, tx)
		bEntry = list[0]
		return err
	}))
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), a.id), "user_platform")
	require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "test: platform admin in A", func(tx pgx.Tx) error {
		list, err := catalogs.Departments.List(ctx, tx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, "Ops of "+a.id, list[0].Name)
		_, err = catalogs.Departments.Update(ctx, tx, bEntry.ID, catalogs.EntryChange{Name: ptr("x")}, at)
		require.ErrorIs(t, err, catalogs.ErrNotFound)
		// The platform admin's change lands in A, audited there.
		_, err = catalogs.Departments.Create(ctx, tx, catalogs.EntryInput{Name: "Platform-made"}, at)
		return err
	}))
	require.Equal(t, 2, a.audits(t, "CreateDepartment"), "A's own create and the platform admin's")
}
