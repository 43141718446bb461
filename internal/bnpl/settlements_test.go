package bnpl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/schema"
)

// utc is an instant written in UTC (Addis Ababa is three hours ahead).
func utc(v string) time.Time {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		panic(err)
	}
	return t
}

// sale is one agreement of a statement's fixture: its merchant and state, P and d, when it was
// made (its settlement sent), paid (activated) and failed.
type sale struct {
	merchant           string
	status             string
	purchase, discount int64
	created            time.Time
	paid, failed       *time.Time
}

// sell writes sale s of business o's employee as the sagas leave it: activated_at once paid,
// updated_at at the last change, failed_at (a FAILED one's) its failure, as MarkFailed sets it.
func sell(t *testing.T, o *payrolltest.Org, employee string, s sale) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	updated := s.created
	if s.paid != nil {
		updated = *s.paid
	}
	if s.failed != nil {
		updated = *s.failed
	}
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
				purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at,
				activated_at, updated_at, failed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 2, $8, 'wf-' || $1, 'ltx-' || $1, 'test', $9, $10, $11, $12)`,
			id, o.ID, employee, s.merchant, "order-"+id[len(id)-12:], s.purchase, s.discount, s.status, s.created, s.paid, updated, s.failed)
		return err
	}))
	return id
}

func statement(t *testing.T, o *payrolltest.Org, from, to string) bnpl.Statement {
	t.Helper()
	w, err := bnpl.ParseStatementWindow(from, to)
	require.NoError(t, err)
	var st bnpl.Statement
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) (err error) {
		st, err = bnpl.SettlementStatement(o.Ctx, tx, w)
		return err
	}))
	return st
}

func figures(orders, purchase, discount int64) bnpl.SettlementFigures {
	return bnpl.SettlementFigures{Orders: orders, PurchaseSantim: purchase, DiscountSantim: discount, MerchantReceivesSantim: purchase - discount}
}

// TestSettlementStatement: a merchant's statement, figure by figure, over orders of two
// businesses: each paid order on the Addis Ababa day of the instant it was paid (not the UTC one,
// not the day it was made; an order paid and since SETTLED or WRITTEN_OFF stays paid), the days'
// totals, the settlements sent in the window still in flight and those that failed in it (by the
// failure's instant, which the merchant's later word does not move). Another merchant's orders
// never count; a business has no statement of its own.
func TestSettlementStatement(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	biz, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	shop, shop2 := newMerchant(t, d), newMerchant(t, d)
	emp, otherEmp := biz.Employee(t, payrolltest.Employee{}), other.Employee(t, payrolltest.Employee{})
	at := func(v string) *time.Time { x := utc(v); return &x }

	// 1 March (Addis Ababa): 08:00 and 23:59:59.
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusActive, purchase: 100_000, discount: 2_500,
		created: utc("2027-03-01T04:59:00Z"), paid: at("2027-03-01T05:00:00Z")})
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusSettled, purchase: 50_001, discount: 1_250,
		created: utc("2027-03-01T20:00:00Z"), paid: at("2027-03-01T20:59:59Z")})
	// 2 March: midnight in Addis Ababa is still 1 March in UTC; an order made in February and paid
	// on the 2nd is the 2nd's; another business's order with the same merchant counts.
	sell(t, other, otherEmp, sale{merchant: shop.ID, status: bnpl.StatusActive, purchase: 70_000, discount: 0,
		created: utc("2027-03-01T20:59:00Z"), paid: at("2027-03-01T21:00:00Z")})
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusDefaulted, purchase: 12_345, discount: 308,
		created: utc("2027-02-27T09:00:00Z"), paid: at("2027-03-02T09:00:00Z")})
	// 3 March: an order written off since was still paid.
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusWrittenOff, purchase: 30_000, discount: 750,
		created: utc("2027-03-03T09:59:00Z"), paid: at("2027-03-03T10:00:00Z")})
	// Outside: 23:59:59 on 28 February and midnight on 4 March in Addis Ababa (both UTC days are
	// inside), and an order made on the 3rd but paid on the 4th.
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusActive, purchase: 1_000_000, discount: 1,
		created: utc("2027-02-28T20:00:00Z"), paid: at("2027-02-28T20:59:59Z")})
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusActive, purchase: 2_000_000, discount: 2,
		created: utc("2027-03-03T20:00:00Z"), paid: at("2027-03-03T21:00:00Z")})
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusActive, purchase: 3_000_000, discount: 3,
		created: utc("2027-03-03T20:30:00Z"), paid: at("2027-03-03T21:30:00Z")})

	// In flight: sent at 01:00 on 1 March and on 2 March; not one sent at 23:00 on 28 February.
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusAccepted, purchase: 40_000, discount: 1_000, created: utc("2027-02-28T22:00:00Z")})
	sell(t, other, otherEmp, sale{merchant: shop.ID, status: bnpl.StatusAccepted, purchase: 9_999, discount: 249, created: utc("2027-03-02T12:00:00Z")})
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusAccepted, purchase: 4_000_000, discount: 4, created: utc("2027-02-28T20:00:00Z")})
	// Failed: one sent in February that failed at 03:30 on 1 March counts; one sent on 3 March
	// that failed at 00:05 on the 4th does not.
	failed := sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusFailed, purchase: 80_000, discount: 2_000,
		created: utc("2027-02-28T10:00:00Z"), failed: at("2027-03-01T00:30:00Z")})
	sell(t, biz, emp, sale{merchant: shop.ID, status: bnpl.StatusFailed, purchase: 5_000_000, discount: 5,
		created: utc("2027-03-03T20:00:00Z"), failed: at("2027-03-03T21:05:00Z")})

	// Another merchant's sales, on the same days.
	sell(t, biz, emp, sale{merchant: shop2.ID, status: bnpl.StatusActive, purchase: 999_999, discount: 9,
		created: utc("2027-03-01T05:00:00Z"), paid: at("2027-03-01T06:00:00Z")})
	sell(t, biz, emp, sale{merchant: shop2.ID, status: bnpl.StatusAccepted, purchase: 888_888, discount: 8, created: utc("2027-03-02T06:00:00Z")})
	sell(t, other, otherEmp, sale{merchant: shop2.ID, status: bnpl.StatusFailed, purchase: 777_777, discount: 7,
		created: utc("2027-03-02T06:00:00Z"), failed: at("2027-03-02T07:00:00Z")})

	want := bnpl.Statement{
		Days: []bnpl.StatementDay{
			{Date: "2027-03-01", SettlementFigures: figures(2, 150_001, 3_750)},
			{Date: "2027-03-02", SettlementFigures: figures(2, 82_345, 308)},
			{Date: "2027-03-03", SettlementFigures: figures(1, 30_000, 750)},
		},
		Paid:    figures(5, 262_346, 4_808),
		Pending: figures(2, 49_999, 1_249),
		Failed:  figures(1, 80_000, 2_000),
	}
	got := statement(t, shop, "2027-03-01", "2027-03-03")
	want.Window = got.Window
	require.Equal(t, want, got)
	require.Equal(t, int64(150_001-3_750+82_345-308+30_000-750), got.Paid.MerchantReceivesSantim)
	require.Equal(t, utc("2027-02-28T21:00:00Z"), got.Window.Start().UTC())
	require.Equal(t, utc("2027-03-03T21:00:00Z"), got.Window.End().UTC())

	// The merchant's later word on the failed order moves its updated_at, not its failure.
	require.NoError(t, tenancy.InTx(biz.Ctx, biz.DB.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(biz.Ctx, `UPDATE app.bnpl_agreements SET updated_at = $2 WHERE id = $1`, failed, utc("2027-04-01T00:00:00Z"))
		return err
	}))
	got = statement(t, shop, "2027-03-01", "2027-03-03")
	require.Equal(t, figures(1, 80_000, 2_000), got.Failed)
	require.Equal(t, bnpl.SettlementFigures{}, statement(t, shop, "2027-04-01", "2027-04-01").Failed)

	// One day: 2 March alone.
	got = statement(t, shop, "2027-03-02", "2027-03-02")
	require.Equal(t, []bnpl.StatementDay{{Date: "2027-03-02", SettlementFigures: figures(2, 82_345, 308)}}, got.Days)
	require.Equal(t, figures(2, 82_345, 308), got.Paid)
	require.Equal(t, figures(1, 9_999, 249), got.Pending)
	require.Equal(t, bnpl.SettlementFigures{}, got.Failed)
	// The 4th: the orders paid at and after its midnight, the failure at 00:05.
	got = statement(t, shop, "2027-03-04", "2027-03-04")
	require.Equal(t, []bnpl.StatementDay{{Date: "2027-03-04", SettlementFigures: figures(2, 5_000_000, 5)}}, got.Days)
	require.Equal(t, figures(1, 5_000_000, 5), got.Failed)

	// The other merchant sees its own only; a business, and a window without sales, see nothing.
	got = statement(t, shop2, "2027-03-01", "2027-03-03")
	require.Equal(t, []bnpl.StatementDay{{Date: "2027-03-01", SettlementFigures: figures(1, 999_999, 9)}}, got.Days)
	require.Equal(t, figures(1, 888_888, 8), got.Pending)
	require.Equal(t, figures(1, 777_777, 7), got.Failed)
	empty := bnpl.Statement{Days: []bnpl.StatementDay{}}
	for _, o := range []*payrolltest.Org{biz, other} {
		got = statement(t, o, "2027-03-01", "2027-03-03")
		empty.Window = got.Window
		require.Equal(t, empty, got)
	}
	got = statement(t, shop, "2026-03-01", "2027-02-28")
	require.Equal(t, []bnpl.StatementDay{{Date: "2027-02-28", SettlementFigures: figures(1, 1_000_000, 1)}}, got.Days)
	require.Equal(t, figures(1, 4_000_000, 4), got.Pending, "sent at 23:00 on 28 February")
	require.Equal(t, bnpl.SettlementFigures{}, got.Failed)
}

// TestParseStatementWindow: a window's dates are calendar dates that exist, written YYYY-MM-DD,
// from ≤ to, at most 366 days both included; each refusal names its field.
func TestParseStatementWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, to string }{
		{"2027-03-01", "2027-03-01"}, {"2024-01-01", "2024-12-31"}, {"2023-03-01", "2024-02-29"}, {"2027-01-01", "2028-01-01"},
		{"0001-01-01", "0001-01-01"}, {"9999-12-31", "9999-12-31"},
	} {
		w, err := bnpl.ParseStatementWindow(c.from, c.to)
		require.NoError(t, err, "%s..%s", c.from, c.to)
		require.Equal(t, c.from, w.From.Format(time.DateOnly))
		require.Equal(t, c.to, w.To.Format(time.DateOnly))
		require.LessOrEqual(t, w.Days(), bnpl.MaxStatementDays)
	}
	w, err := bnpl.ParseStatementWindow("2027-01-01", "2028-01-01")
	require.NoError(t, err)
	require.Equal(t, 366, w.Days())

	for _, c := range []struct{ from, to, field string }{
		{"", "2027-03-01", "from"}, {"2027-03-01", "", "to"},
		{"2027-02-29", "2027-03-01", "from"}, {"2027-03-01", "2027-04-31", "to"}, {"2027-13-01", "2027-13-01", "from"},
		{"2027-3-01", "2027-03-01", "from"}, {"27-03-01", "2027-03-01", "from"}, {"2027-03-01T00:00:00Z", "2027-03-01", "from"},
		{" 2027-03-01", "2027-03-01", "from"}, {"2027-03-01", "2027-03-01 ", "to"}, {"+2027-03-01", "2027-03-01", "from"},
		{"２０２７-03-01", "2027-03-01", "from"}, {"2027-03-00", "2027-03-01", "from"}, {"0000-01-01", "0000-01-01", "from"},
		{"2027-03-01", "20270301", "to"}, {"2027-03-01", strings.Repeat("9", 4096), "to"}, {"2027-03-01\x00", "2027-03-01", "from"},
		{"2027-03-02", "2027-03-01", "to"}, // to before from
		{"2027-01-01", "2028-01-02", "to"}, // 367 days
		{"2024-01-01", "2025-01-01", "to"}, // 367 days across 29 February
		{"0001-01-01", "9999-12-31", "to"}, // far past the bound
	} {
		_, err := bnpl.ParseStatementWindow(c.from, c.to)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, "%q..%q", c.from, c.to)
		require.Equal(t, c.field, fe.Field, "%q..%q", c.from, c.to)
	}
}

// TestSettlementStatementMigrationKeepsFailures: app/0095 gives each agreement FAILED before it the
// instant it failed: its updated_at, unless the merchant's word was applied after the failure
// (merchant_status_at = updated_at), then the failure's audit row's time. From then on a later
// change of the row does not move it, a FAILED agreement cannot lose it, and stays FAILED.
func TestSettlementStatementMigrationKeepsFailures(t *testing.T) {
	d := testkit.NewDB(t)
	d.App.Close() // DDL below must not wait on the runtime pool
	require.NoError(t, schema.DownBelow(d.OwnerDSN, "app", 95))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.OwnerDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	const biz, shop = "org_stmt_biz", "org_stmt_shop"
	exec := func(tenant string, qs ...string) {
		t.Helper()
		require.NoError(t, db.InTenantTx(ctx, conn, tenant, func(tx pgx.Tx) error {
			for _, q := range qs {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	exec(shop, `INSERT INTO app.organizations (id, name, kind) VALUES ('org_stmt_shop', 'Shop', 'MERCHANT')`,
		`INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number, discount_basis_points, updated_by, updated_at)
		 VALUES ('org_stmt_shop', 'sandbox', 'SHOP-1', 250, 'test', now())`)
	const agreement = `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference, purchase_santim,
			discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at, activated_at, updated_at,
			merchant_status, merchant_callback_id, merchant_status_at)
		VALUES ('%[1]s', 'org_stmt_biz', 'emp_1', 'org_stmt_shop', '%[1]s', 10000, 250, 2, '%[2]s', 'wf-%[1]s', 'ltx-%[1]s', 'test',
			'2027-03-01T09:00:00Z', %[3]s, '%[4]s', %[5]s)`
	exec(biz, `INSERT INTO app.organizations (id, name, kind) VALUES ('org_stmt_biz', 'Biz', 'BUSINESS')`,
		`INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
			gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name)
		 VALUES ('emp_1', 'org_stmt_biz', 'A', 'B', 'A B', 'STMT0001', '2024-01-01', 100, 'sandbox', '1', 'A B')`,
		`INSERT INTO app.bnpl_merchant_callbacks (partner, event_id, nonce, merchant_id, agreement_id, merchant_reference, kind,
			tenant_id, outcome, raw_body, signed_at)
		 VALUES ('sandbox', 'ev-after', 'n-after', 'org_stmt_shop', 'bnpl_after', 'bnpl_after', 'CANCELLED', 'org_stmt_biz', 'RECORDED', '\\x00', now()),
			('sandbox', 'ev-before', 'n-before', 'org_stmt_shop', 'bnpl_before', 'bnpl_before', 'DELIVERED', 'org_stmt_biz', 'RECORDED', '\\x00', now())`,
		// Failed at 10:00, nothing since.
		fmt.Sprintf(agreement, "bnpl_plain", "FAILED", "NULL", "2027-03-01T10:00:00Z", "NULL, NULL, NULL"),
		// Failed at 10:05 (its audit row), the merchant's CANCELLED applied at 12:00.
		fmt.Sprintf(agreement, "bnpl_after", "FAILED", "NULL", "2027-03-01T12:00:00Z",
			"'CANCELLED', (SELECT id FROM app.bnpl_merchant_callbacks WHERE event_id = 'ev-after'), '2027-03-01T12:00:00Z'"),
		`INSERT INTO app.audit_log (tenant_id, actor, action, target_type, target_id, outcome, details, occurred_at)
		 VALUES ('org_stmt_biz', 'system:bnpl-activate', 'BnplAgreementFailed', 'BnplAgreement', 'bnpl_after', 'FAILED', '{}', '2027-03-01T10:05:00Z')`,
		// The merchant's DELIVERED applied at 09:30, while the settlement was in flight; failed at 10:10.
		fmt.Sprintf(agreement, "bnpl_before", "FAILED", "NULL", "2027-03-01T10:10:00Z",
			"'DELIVERED', (SELECT id FROM app.bnpl_merchant_callbacks WHERE event_id = 'ev-before'), '2027-03-01T09:30:00Z'"),
		fmt.Sprintf(agreement, "bnpl_paid", "ACTIVE", "'2027-03-01T09:05:00Z'", "2027-03-01T09:05:00Z", "NULL, NULL, NULL"))

	require.NoError(t, schema.Up(d.OwnerDSN))
	failedAt := func() map[string]*time.Time {
		t.Helper()
		out := map[string]*time.Time{}
		require.NoError(t, db.InTenantTx(ctx, conn, biz, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT id, failed_at FROM app.bnpl_agreements`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				var at *time.Time
				if err := rows.Scan(&id, &at); err != nil {
					return err
				}
				if at != nil {
					x := at.UTC()
					at = &x
				}
				out[id] = at
			}
			return rows.Err()
		}))
		return out
	}
	at := func(v string) *time.Time { x := utc(v); return &x }
	want := map[string]*time.Time{"bnpl_plain": at("2027-03-01T10:00:00Z"), "bnpl_after": at("2027-03-01T10:05:00Z"),
		"bnpl_before": at("2027-03-01T10:10:00Z"), "bnpl_paid": nil}
	require.Equal(t, want, failedAt())

	exec(biz, `UPDATE app.bnpl_agreements SET updated_at = '2027-04-01T00:00:00Z'`)
	require.Equal(t, want, failedAt(), "a later change moves no failure, and gives none to an agreement that did not fail")
	for _, q := range []string{
		`UPDATE app.bnpl_agreements SET status = 'ACCEPTED' WHERE id = 'bnpl_plain'`,
		`UPDATE app.bnpl_agreements SET failed_at = NULL WHERE id = 'bnpl_plain'`,
		`UPDATE app.bnpl_agreements SET failed_at = now() WHERE id = 'bnpl_paid'`,
	} {
		require.Error(t, db.InTenantTx(ctx, conn, biz, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q)
			return err
		}), "failed_at is FAILED's and FAILED is terminal: %s", q)
	}
}
