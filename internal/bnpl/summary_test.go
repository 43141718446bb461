package bnpl_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// newMerchant is a merchant organization with its settlement account (its bnpl_merchants row),
// written as rows in its own transaction: the agreements below name it.
func newMerchant(t *testing.T, d *testkit.DB) *payrolltest.Org {
	t.Helper()
	id := orgs.NewOrganizationID()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: id, Actor: tenancy.System("test")})
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		if _, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Shop " + id, Kind: orgs.Merchant}, ""); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number,
			discount_basis_points, updated_by, updated_at) VALUES ($1, 'sandbox', 'SHOP-1', 200, 'test', now())`, id)
		return err
	}))
	return &payrolltest.Org{ID: id, DB: d, Bun: db.NewBun(d.App), Ctx: ctx}
}

// inst is one instalment of a fixture agreement.
type inst struct {
	due     string // YYYY-MM-DD
	amount  int64
	status  string
	version int // schedule version (0: 1)
}

// agreement writes an agreement of business o's employee bought from merchant, in status, with
// instalments ins (indexes in order), as the sagas would have left it: within every CHECK
// (activated once past ACCEPTED and not FAILED, failed_at exactly when FAILED, a collection's
// workflow on a held or collected instalment, a collected one's journal and time).
func agreement(t *testing.T, o *payrolltest.Org, employee, merchant, status string, ins ...inst) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	var purchase int64
	for _, i := range ins {
		purchase += i.amount
	}
	at := time.Date(2027, 1, 5, 9, 0, 0, 0, time.UTC)
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		if _, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
				purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at,
				activated_at, updated_at, failed_at)
			VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, 'wf-' || $1, 'ltx-' || $1, 'test', $9,
				CASE WHEN $8 IN ('ACCEPTED', 'FAILED') THEN NULL ELSE $9::timestamptz END, $9,
				CASE WHEN $8 = 'FAILED' THEN $9::timestamptz END)`,
			id, o.ID, employee, merchant, "order-"+id[len(id)-12:], purchase, min(max(len(ins), 2), 12), status, at); err != nil {
			return err
		}
		for idx, i := range ins {
			version := max(i.version, 1)
			if _, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status,
					collect_workflow_id, collect_source, ledger_tx_id, collected_at, schedule_version)
				VALUES ($1, $2, $3::integer, $4::date, $5, $6,
					CASE WHEN $6 IN ('COLLECTING', 'COLLECTED') THEN 'wf-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $6 IN ('COLLECTING', 'COLLECTED') THEN 'MANUAL' END,
					CASE WHEN $6 = 'COLLECTED' THEN 'ltx-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $6 = 'COLLECTED' THEN $7::timestamptz END, $8)`,
				o.ID, id, idx, i.due, i.amount, i.status, at, version); err != nil {
				return fmt.Errorf("instalment %d: %w", idx, err)
			}
		}
		return nil
	}))
	return id
}

// summarize reads side's Summary in a transaction of o, in a pgx one (as List and Orders run) and
// in a bun one (as a dashboard reads every domain), which answer alike.
func summarize(t *testing.T, o *payrolltest.Org, side bnpl.Side, today time.Time) bnpl.Summary {
	t.Helper()
	var viaPgx, viaBun bnpl.Summary
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) (err error) {
		viaPgx, err = bnpl.Summarize(o.Ctx, tx, side, today)
		return err
	}))
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
		viaBun, err = bnpl.Summarize(ctx, tx, side, today)
		return err
	}))
	require.Equal(t, viaPgx, viaBun)
	return viaPgx
}

// statuses is every agreement state at 0 but those of counts.
func statuses(counts map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, s := range bnpl.AgreementStatuses {
		out[s] = counts[s]
	}
	return out
}

// TestSummarizeAgreements: a business's and a merchant's BNPL summary, figure by figure, on
// agreements in every state, a restructured schedule, instalments in every state and due dates
// on each side of the day asked and of the seven days after it.
func TestSummarizeAgreements(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	biz, other, idle := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	shop, shop2, idleShop := newMerchant(t, d), newMerchant(t, d), newMerchant(t, d)
	emp, otherEmp := biz.Employee(t, payrolltest.Employee{}), other.Employee(t, payrolltest.Employee{})
	const (
		due        = bnpl.InstalmentDue
		collecting = bnpl.InstalmentCollecting
		collected  = bnpl.InstalmentCollected
		superseded = bnpl.InstalmentSuperseded
		cancelled  = bnpl.InstalmentCancelled
		writtenOff = bnpl.StatusWrittenOff // the instalment state has the agreement's name
	)

	// ACTIVE, restructured once: version 1's collected instalment stays, its DUE one SUPERSEDED.
	agreement(t, biz, emp, shop.ID, bnpl.StatusActive,
		inst{"2027-01-31", 10_000, collected, 1},
		inst{"2027-02-28", 50_000, superseded, 1},
		inst{"2027-03-09", 10_000, due, 2},        // the day before: overdue
		inst{"2027-03-10", 20_000, due, 2},        // the day itself: not overdue, due in the 7 days
		inst{"2027-03-16", 30_000, collecting, 2}, // six days on: in the 7 days, not collected yet
		inst{"2027-03-17", 40_000, due, 2})        // seven days on: outstanding only
	agreement(t, biz, emp, shop2.ID, bnpl.StatusAccepted, inst{"2027-03-01", 7_000, due, 0}, inst{"2027-04-01", 7_000, due, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusSettled, inst{"2027-02-01", 3_000, collected, 0}, inst{"2027-03-01", 3_000, collected, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusFailed, inst{"2027-03-01", 4_000, cancelled, 0}, inst{"2027-04-01", 4_000, cancelled, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusWrittenOff, inst{"2027-02-01", 5_000, collected, 0}, inst{"2027-03-01", 5_000, writtenOff, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusDefaulted, inst{"2027-03-01", 9_000, due, 0}, inst{"2027-03-12", 9_000, due, 0})
	agreement(t, biz, emp, shop2.ID, bnpl.StatusActive, inst{"2027-02-01", 5_000, due, 0}, inst{"2027-04-30", 6_000, due, 0})
	// Another business's agreement with the same merchant.
	agreement(t, other, otherEmp, shop.ID, bnpl.StatusActive, inst{"2027-03-01", 1_000_000, due, 0}, inst{"2027-03-11", 1_000_000, due, 0})

	today := time.Date(2027, 3, 10, 15, 30, 0, 0, time.UTC)
	business := bnpl.Summary{ByStatus: statuses(map[string]int64{bnpl.StatusAccepted: 1, bnpl.StatusActive: 2, bnpl.StatusSettled: 1,
		bnpl.StatusFailed: 1, bnpl.StatusDefaulted: 1, bnpl.StatusWrittenOff: 1}),
		OutstandingSantim:  10_000 + 20_000 + 30_000 + 40_000 + 5_000 + 6_000,
		OverdueInstalments: 2, OverdueSantim: 10_000 + 5_000,
		DueNext7DaysSantim: 20_000 + 30_000}
	require.Equal(t, business, summarize(t, biz, bnpl.BusinessSide, today))
	// The day is UTC's: 01:00 on 11 March in Addis Ababa is still 10 March.
	require.Equal(t, business, summarize(t, biz, bnpl.BusinessSide, time.Date(2027, 3, 11, 1, 0, 0, 0, time.FixedZone("EAT", 3*60*60))))
	// A day earlier, the 9th is due, not overdue, and the 16th is past the seven days.
	require.Equal(t, bnpl.Summary{ByStatus: business.ByStatus, OutstandingSantim: business.OutstandingSantim,
		OverdueInstalments: 1, OverdueSantim: 5_000, DueNext7DaysSantim: 10_000 + 20_000},
		summarize(t, biz, bnpl.BusinessSide, today.AddDate(0, 0, -1)))

	require.Equal(t, bnpl.Summary{ByStatus: statuses(map[string]int64{bnpl.StatusActive: 1}), OutstandingSantim: 2_000_000,
		OverdueInstalments: 1, OverdueSantim: 1_000_000, DueNext7DaysSantim: 1_000_000}, summarize(t, other, bnpl.BusinessSide, today))

	// A merchant counts its orders of every business by state; it reads no instalment.
	require.Equal(t, bnpl.Summary{ByStatus: statuses(map[string]int64{bnpl.StatusActive: 2, bnpl.StatusSettled: 1, bnpl.StatusFailed: 1,
		bnpl.StatusDefaulted: 1, bnpl.StatusWrittenOff: 1})}, summarize(t, shop, bnpl.MerchantSide, today))
	require.Equal(t, bnpl.Summary{ByStatus: statuses(map[string]int64{bnpl.StatusAccepted: 1, bnpl.StatusActive: 1})},
		summarize(t, shop2, bnpl.MerchantSide, today))

	// Nothing of its own: every state at 0, every amount 0 — a business or merchant without
	// agreements, a business as a merchant, a merchant as a business.
	empty := bnpl.Summary{ByStatus: statuses(nil)}
	require.Len(t, empty.ByStatus, 6)
	require.Equal(t, empty, summarize(t, idle, bnpl.BusinessSide, today))
	require.Equal(t, empty, summarize(t, idleShop, bnpl.MerchantSide, today))
	require.Equal(t, empty, summarize(t, biz, bnpl.MerchantSide, today))
	require.Equal(t, empty, summarize(t, shop, bnpl.BusinessSide, today))
}

// TestSummarizeEmployee: one employee's BNPL plans (the employee's dashboard): their ACTIVE
// agreements' instalments still owed, the earliest of them next; an ACCEPTED, a SETTLED and a
// DEFAULTED agreement of theirs and another employee's ACTIVE one do not count.
func TestSummarizeEmployee(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	biz, shop := payrolltest.NewOrg(t, d), newMerchant(t, d)
	emp, otherEmp := biz.Employee(t, payrolltest.Employee{}), biz.Employee(t, payrolltest.Employee{})
	read := func(employee string) bnpl.EmployeeSummary {
		t.Helper()
		var viaPgx, viaBun bnpl.EmployeeSummary
		require.NoError(t, tenancy.InTx(biz.Ctx, biz.DB.App, func(tx pgx.Tx) (err error) {
			viaPgx, err = bnpl.SummarizeEmployee(biz.Ctx, tx, employee)
			return err
		}))
		require.NoError(t, biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
			viaBun, err = bnpl.SummarizeEmployee(ctx, tx, employee)
			return err
		}))
		require.Equal(t, viaPgx, viaBun)
		return viaPgx
	}
	require.Equal(t, bnpl.EmployeeSummary{}, read(emp), "no plan")

	restructured := agreement(t, biz, emp, shop.ID, bnpl.StatusActive,
		inst{"2027-01-31", 10_000, bnpl.InstalmentCollected, 1},
		inst{"2027-02-10", 50_000, bnpl.InstalmentSuperseded, 1},
		inst{"2027-03-09", 10_000, bnpl.InstalmentCollecting, 2},
		inst{"2027-04-09", 20_000, bnpl.InstalmentDue, 2})
	agreement(t, biz, emp, shop.ID, bnpl.StatusActive, inst{"2027-03-20", 7_000, bnpl.InstalmentDue, 0}, inst{"2027-04-20", 7_000, bnpl.InstalmentDue, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusAccepted, inst{"2027-02-01", 3_000, bnpl.InstalmentDue, 0}, inst{"2027-03-01", 3_000, bnpl.InstalmentDue, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusSettled, inst{"2027-02-01", 3_000, bnpl.InstalmentCollected, 0}, inst{"2027-03-01", 3_000, bnpl.InstalmentCollected, 0})
	agreement(t, biz, emp, shop.ID, bnpl.StatusDefaulted, inst{"2027-01-01", 9_000, bnpl.InstalmentDue, 0}, inst{"2027-02-01", 9_000, bnpl.InstalmentDue, 0})
	agreement(t, biz, otherEmp, shop.ID, bnpl.StatusActive, inst{"2027-01-01", 99_000, bnpl.InstalmentDue, 0}, inst{"2027-02-01", 99_000, bnpl.InstalmentDue, 0})

	require.Equal(t, bnpl.EmployeeSummary{Active: 2, OutstandingSantim: 10_000 + 20_000 + 7_000 + 7_000,
		Next: &bnpl.NextInstalment{AgreementID: restructured, DueDate: time.Date(2027, 3, 9, 0, 0, 0, 0, time.UTC), AmountSantim: 10_000}},
		read(emp), "a COLLECTING instalment is still owed until collected")
	require.Equal(t, int64(1), read(otherEmp).Active)
}
