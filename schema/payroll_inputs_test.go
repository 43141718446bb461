package schema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/schema"
)

// TestPayrollInputsMigrationKeepsRows: app/0030 moves every existing allowance, deduction and
// assignment amount into the column of its kind, makes every payment frequency MONTHLY, and its
// down migration puts them back.
func TestPayrollInputsMigrationKeepsRows(t *testing.T) {
	d := testkit.NewDB(t)
	d.App.Close() // DDL below must not wait on the runtime pool
	require.NoError(t, schema.DownBelow(d.OwnerDSN, "app", 30))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.OwnerDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	const tenant = "org_migrate"
	// The rows as the code before 0030 wrote them (the owner, scoped to the tenant, meets FORCED
	// row-level security like everyone).
	require.NoError(t, db.InTenantTx(ctx, conn, tenant, func(tx pgx.Tx) error {
		for _, q := range []string{
			`INSERT INTO app.organizations (id, name, kind) VALUES ('org_migrate', 'Migrate', 'BUSINESS')`,
			`INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name, payment_frequency)
			 VALUES ('emp_1', 'org_migrate', 'A', 'B', 'A B', 'MIGRATE01', '2024-01-01', 100, 'sandbox', '1', 'A B', 'Weekly')`,
			`INSERT INTO app.payment_frequencies (id, tenant_id, name, created_at, updated_at)
			 VALUES ('pfq_1', 'org_migrate', 'Weekly', now(), now())`,
			`INSERT INTO app.allowances (id, tenant_id, name, code, kind, amount, taxable, active, created_at, updated_at) VALUES
				('alw_fixed', 'org_migrate', 'Fixed', 'F', 'FIXED_SANTIM', 1000000000, true, true, now(), now()),
				('alw_pct', 'org_migrate', 'Pct', 'P', 'PERCENT_OF_GROSS_BASIS_POINTS', 10000, true, true, now(), now())`,
			`INSERT INTO app.deductions (id, tenant_id, name, code, kind, amount, pre_tax, active, created_at, updated_at) VALUES
				('ded_pct', 'org_migrate', 'Pct', 'P', 'PERCENT_OF_GROSS_BASIS_POINTS', 700, false, true, now(), now())`,
			`INSERT INTO app.employee_allowances (id, tenant_id, employee_id, allowance_id, amount, created_at) VALUES
				('eal_1', 'org_migrate', 'emp_1', 'alw_fixed', 5000, now()),
				('eal_2', 'org_migrate', 'emp_1', 'alw_pct', 250, now())`,
			`INSERT INTO app.employee_deductions (id, tenant_id, employee_id, deduction_id, amount, created_at) VALUES
				('edd_1', 'org_migrate', 'emp_1', 'ded_pct', NULL, now())`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}))

	require.NoError(t, schema.Up(d.OwnerDSN))
	type amounts struct {
		Kind       string
		Santim, BP *int64
	}
	read := func(q string) map[string]amounts {
		out := map[string]amounts{}
		require.NoError(t, db.InTenantTx(ctx, conn, tenant, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, q)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				var a amounts
				if err := rows.Scan(&id, &a.Kind, &a.Santim, &a.BP); err != nil {
					return err
				}
				out[id] = a
			}
			return rows.Err()
		}))
		return out
	}
	n := func(v int64) *int64 { return &v }
	require.Equal(t, map[string]amounts{
		"alw_fixed": {Kind: "FIXED_SANTIM", Santim: n(1_000_000_000)},
		"alw_pct":   {Kind: "PERCENT_OF_GROSS_BASIS_POINTS", BP: n(10_000)},
		"ded_pct":   {Kind: "PERCENT_OF_GROSS_BASIS_POINTS", BP: n(700)},
	}, read(`SELECT id, kind, amount_santim::bigint, basis_points::bigint FROM app.allowances
		UNION ALL SELECT id, kind, amount_santim::bigint, basis_points::bigint FROM app.deductions`))
	require.Equal(t, map[string]amounts{
		"eal_1": {Kind: "FIXED_SANTIM", Santim: n(5000)},
		"eal_2": {Kind: "PERCENT_OF_GROSS_BASIS_POINTS", BP: n(250)},
		"edd_1": {Kind: "PERCENT_OF_GROSS_BASIS_POINTS"},
	}, read(`SELECT id, kind, amount_santim::bigint, basis_points::bigint FROM app.employee_allowances
		UNION ALL SELECT id, kind, amount_santim::bigint, basis_points::bigint FROM app.employee_deductions`))
	var cadence string
	require.NoError(t, db.InTenantTx(ctx, conn, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT cadence FROM app.payment_frequencies WHERE id = 'pfq_1'`).Scan(&cadence)
	}))
	require.Equal(t, "MONTHLY", cadence, "every existing payment frequency was paid monthly")

	// And back: one amount column again, the values where they were.
	require.NoError(t, schema.DownBelow(d.OwnerDSN, "app", 30))
	got := map[string]int64{}
	require.NoError(t, db.InTenantTx(ctx, conn, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, amount FROM app.allowances UNION ALL SELECT id, coalesce(amount, -1) FROM app.employee_allowances
			UNION ALL SELECT id, coalesce(amount, -1) FROM app.employee_deductions`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var v int64
			if err := rows.Scan(&id, &v); err != nil {
				return err
			}
			got[id] = v
		}
		return rows.Err()
	}))
	require.Equal(t, map[string]int64{"alw_fixed": 1_000_000_000, "alw_pct": 10_000, "eal_1": 5000, "eal_2": 250, "edd_1": -1}, got)
	require.NoError(t, schema.Up(d.OwnerDSN))
}
