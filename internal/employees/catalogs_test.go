package employees_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// TestResolveCatalogs: an employment type and a payment frequency resolve to the entries of the
// employer's own catalogs (in any case, spelled as the catalog spells them); another
// organization's entry, a deleted one and made-up text are *CatalogError naming the field; ""
// passes; `only` limits the check to the fields an update changes; an import marks each row.
func TestResolveCatalogs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := w.org(), w.org()
	scope := func(tenant string) context.Context {
		return tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("employees-test")})
	}
	in := func(tenant string, fn func(ctx context.Context, tx pgx.Tx) error) error {
		ctx := scope(tenant)
		return tenancy.InTx(ctx, w.pool, func(tx pgx.Tx) error { return fn(ctx, tx) })
	}
	add := func(tenant string, c *catalogs.Catalog, name string) catalogs.Entry {
		var e catalogs.Entry
		require.NoError(t, in(tenant, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			e, err = c.Create(ctx, tx, catalogs.EntryInput{Name: name}, now)
			return err
		}))
		return e
	}
	add(a, catalogs.EmploymentTypes, "Full time")
	add(a, catalogs.PaymentFrequencies, "Monthly")
	add(b, catalogs.EmploymentTypes, "Contract")
	weekly := add(a, catalogs.PaymentFrequencies, "Weekly")
	require.NoError(t, in(a, func(ctx context.Context, tx pgx.Tx) error {
		_, err := catalogs.PaymentFrequencies.Delete(ctx, tx, weekly.ID, now)
		return err
	}))

	resolve := func(e employees.Employee, only ...string) (employees.Employee, error) {
		err := in(a, func(ctx context.Context, tx pgx.Tx) error { return employees.ResolveCatalogs(ctx, tx, &e, only...) })
		return e, err
	}
	got, err := resolve(employees.Employee{EmploymentType: "FULL TIME", PaymentFrequency: "monthly"})
	require.NoError(t, err)
	require.Equal(t, "Full time", got.EmploymentType)
	require.Equal(t, "Monthly", got.PaymentFrequency)
	_, err = resolve(employees.Employee{})
	require.NoError(t, err, `"" is none`)

	for _, tc := range []struct {
		e     employees.Employee
		field string
	}{
		{employees.Employee{EmploymentType: "Contract"}, "employmentType"}, // B's
		{employees.Employee{EmploymentType: "Made up"}, "employmentType"},
		{employees.Employee{PaymentFrequency: "Weekly"}, "paymentFrequency"}, // deleted
	} {
		_, err := resolve(tc.e)
		var ce *employees.CatalogError
		require.True(t, errors.As(err, &ce), "%+v: %v", tc.e, err)
		require.Equal(t, tc.field, ce.Field)
		require.ErrorIs(t, err, employees.ErrNotInCatalog)
	}
	// An update that changes only the frequency leaves a stale type alone.
	got, err = resolve(employees.Employee{EmploymentType: "Retired entry", PaymentFrequency: "MONTHLY"}, "paymentFrequency")
	require.NoError(t, err)
	require.Equal(t, "Retired entry", got.EmploymentType)
	require.Equal(t, "Monthly", got.PaymentFrequency)

	rows := []employees.ImportRow{
		{Line: 2, Employee: employees.Employee{EmploymentType: "full time"}},
		{Line: 3, Employee: employees.Employee{EmploymentType: "Contract"}},
		{Line: 4, Employee: employees.Employee{PaymentFrequency: "Weekly"}},
		{Line: 5, Employee: employees.Employee{EmploymentType: "Made up"}, Err: employees.ErrRowCells},
	}
	require.NoError(t, in(a, func(ctx context.Context, tx pgx.Tx) error { return employees.ResolveImportCatalogs(ctx, tx, rows) }))
	require.NoError(t, rows[0].Err)
	require.Equal(t, "Full time", rows[0].Employee.EmploymentType)
	require.ErrorIs(t, rows[1].Err, employees.ErrNotInCatalog)
	require.ErrorIs(t, rows[2].Err, employees.ErrNotInCatalog)
	require.ErrorIs(t, rows[3].Err, employees.ErrRowCells, "a row already refused keeps its reason")
}
