package bnpl_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// overseen writes an agreement of business o's employee bought from merchant, made at created,
// in status, for purchase, with instalments ins, within every CHECK as the sagas leave it
// (activated past ACCEPTED and not FAILED, failed_at exactly when FAILED); a WRITTEN_OFF one gets
// its POSTED write-off, completed an hour after it was made.
func overseen(t *testing.T, o *payrolltest.Org, employee, merchant, status string, purchase int64, created time.Time, ins ...inst) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		if _, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
				purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at,
				activated_at, updated_at, failed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $10, $7, $8, 'wf-' || $1, 'ltx-' || $1, 'test', $9,
				CASE WHEN $8 IN ('ACCEPTED', 'FAILED') THEN NULL ELSE $9::timestamptz + interval '1 minute' END, $9,
				CASE WHEN $8 = 'FAILED' THEN $9::timestamptz + interval '2 minutes' END)`,
			id, o.ID, employee, merchant, "order-"+id[len(id)-12:], purchase, min(max(len(ins), 2), 12), status, created, purchase/40); err != nil {
			return err
		}
		for idx, i := range ins {
			if _, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status,
					collect_workflow_id, collect_source, ledger_tx_id, collected_at, schedule_version)
				VALUES ($1, $2, $3::integer, $4::date, $5, $6,
					CASE WHEN $6 IN ('COLLECTING', 'COLLECTED') THEN 'wf-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $6 IN ('COLLECTING', 'COLLECTED') THEN 'MANUAL' END,
					CASE WHEN $6 = 'COLLECTED' THEN 'ltx-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $6 = 'COLLECTED' THEN $7::timestamptz END, $8)`,
				o.ID, id, idx, i.due, i.amount, i.status, created, max(i.version, 1)); err != nil {
				return fmt.Errorf("instalment %d: %w", idx, err)
			}
		}
		if status == bnpl.StatusWrittenOff {
			_, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_write_offs (tenant_id, agreement_id, workflow_id, amount_santim, merchant_status,
					reason, status, ledger_tx_id, requested_by, requested_at, completed_at)
				VALUES ($1, $2, 'wf-wo-' || $2, 1, 'REFUNDED', 'refunded', 'POSTED', 'ltx-wo-' || $2, 'test', $3, $3::timestamptz + interval '1 hour')`,
				o.ID, id, created)
			return err
		}
		return nil
	}))
	return id
}

// oversee runs fn as a platform admin on the audited cross-tenant path of platform (a pool that
// logs in as the platform role).
func oversee(t *testing.T, platform *pgxpool.Pool, fn func(ctx context.Context, tx pgx.Tx) error) error {
	t.Helper()
	ctx := tenancy.WithActor(context.Background(), "usr_bnpl-oversight")
	return crosstenant.Tx(ctx, platform, "test: bnpl oversight", func(tx pgx.Tx) error { return fn(ctx, tx) })
}

func adminIDs(as []bnpl.AdminAgreement) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

// TestAdminList: the platform's list of agreements over two businesses and two merchants: newest
// first (a tie by id), each with its business's and merchant's names, its instalments collected
// of those scheduled (a restructure's superseded ones not counted), what is owed by the package's
// rule, and the instants of a failure and a write-off; filtered by state, business, merchant and
// creation window, alone and together; paged without a duplicate or a gap; a cursor that names no
// agreement reads nothing. The totals are the items' sums, state by state, under every filter.
// The runtime role's tenant transaction sees its own business's agreements only.
func TestAdminList(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	platform := d.Platform(t)
	biz, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	shop, shop2 := newMerchant(t, d), newMerchant(t, d)
	emp, otherEmp := biz.Employee(t, payrolltest.Employee{}), other.Employee(t, payrolltest.Employee{})
	day := func(n int) time.Time { return time.Date(2027, 1, n, 10, 0, 0, 0, time.UTC) }
	const (
		due, collecting, collected = bnpl.InstalmentDue, bnpl.InstalmentCollecting, bnpl.InstalmentCollected
		superseded, cancelled      = bnpl.InstalmentSuperseded, bnpl.InstalmentCancelled
	)

	active := overseen(t, biz, emp, shop.ID, bnpl.StatusActive, 120_000, day(1),
		inst{"2027-01-31", 40_000, collected, 0}, inst{"2027-02-28", 40_000, collecting, 0}, inst{"2027-03-31", 40_000, due, 0})
	accepted := overseen(t, other, otherEmp, shop.ID, bnpl.StatusAccepted, 50_000, day(2),
		inst{"2027-02-28", 25_000, due, 0}, inst{"2027-03-31", 25_000, due, 0})
	failed := overseen(t, biz, emp, shop2.ID, bnpl.StatusFailed, 60_000, day(3),
		inst{"2027-03-31", 30_000, cancelled, 0}, inst{"2027-04-30", 30_000, cancelled, 0})
	settled := overseen(t, other, otherEmp, shop2.ID, bnpl.StatusSettled, 20_000, day(4),
		inst{"2027-02-28", 10_000, collected, 0}, inst{"2027-03-31", 10_000, collected, 0})
	writtenOff := overseen(t, biz, emp, shop.ID, bnpl.StatusWrittenOff, 20_000, day(5),
		inst{"2027-02-28", 10_000, collected, 0}, inst{"2027-03-31", 10_000, bnpl.StatusWrittenOff, 0})
	restructured := overseen(t, other, otherEmp, shop.ID, bnpl.StatusActive, 60_000, day(5), // the same instant: by id
		inst{"2027-02-28", 20_000, collected, 0}, inst{"2027-03-31", 20_000, superseded, 0}, inst{"2027-04-30", 20_000, superseded, 0},
		inst{"2027-04-30", 20_000, due, 2}, inst{"2027-05-31", 20_000, due, 2})
	defaulted := overseen(t, biz, emp, shop.ID, bnpl.StatusDefaulted, 15_000, day(6), inst{"2027-02-28", 15_000, due, 0})
	tied := []string{writtenOff, restructured}
	if tied[0] < tied[1] {
		tied[0], tied[1] = tied[1], tied[0]
	}
	newestFirst := []string{defaulted, tied[0], tied[1], settled, failed, accepted, active}

	list := func(f bnpl.AdminFilter, after string, limit int) []bnpl.AdminAgreement {
		t.Helper()
		var out []bnpl.AdminAgreement
		require.NoError(t, oversee(t, platform, func(ctx context.Context, tx pgx.Tx) (err error) {
			out, err = bnpl.AdminList(ctx, tx, f, after, limit)
			return err
		}))
		return out
	}
	totals := func(f bnpl.AdminFilter) map[string]bnpl.AdminTotal {
		t.Helper()
		var out map[string]bnpl.AdminTotal
		require.NoError(t, oversee(t, platform, func(ctx context.Context, tx pgx.Tx) (err error) {
			out, err = bnpl.AdminTotals(ctx, tx, f)
			return err
		}))
		return out
	}

	all := list(bnpl.AdminFilter{}, "", 100)
	require.Equal(t, newestFirst, adminIDs(all))
	byID := map[string]bnpl.AdminAgreement{}
	for _, a := range all {
		byID[a.ID] = a
	}
	type view struct {
		Business, BusinessName, Merchant, MerchantName string
		Collected, Scheduled                           int
		Outstanding                                    int64
		Failed, WrittenOff                             bool
	}
	viewOf := func(id string) view {
		a := byID[id]
		return view{a.TenantID, a.BusinessName, a.MerchantID, a.MerchantName, a.InstalmentsCollected(), a.InstalmentsScheduled(),
			a.OutstandingSantim(), a.FailedAt != nil, a.WrittenOffAt != nil}
	}
	bizName, otherName := "Org "+biz.ID, "Org "+other.ID
	shopName, shop2Name := "Shop "+shop.ID, "Shop "+shop2.ID
	require.Equal(t, view{biz.ID, bizName, shop.ID, shopName, 1, 3, 80_000, false, false}, viewOf(active), "collecting and due are owed")
	require.Equal(t, view{other.ID, otherName, shop.ID, shopName, 0, 2, 50_000, false, false}, viewOf(accepted))
	require.Equal(t, view{biz.ID, bizName, shop2.ID, shop2Name, 0, 2, 0, true, false}, viewOf(failed), "a failed one owes nothing")
	require.Equal(t, view{other.ID, otherName, shop2.ID, shop2Name, 2, 2, 0, false, false}, viewOf(settled))
	require.Equal(t, view{biz.ID, bizName, shop.ID, shopName, 1, 2, 0, false, true}, viewOf(writtenOff))
	require.Equal(t, view{other.ID, otherName, shop.ID, shopName, 1, 3, 40_000, false, false}, viewOf(restructured),
		"the superseded instalments are history")
	require.Equal(t, view{biz.ID, bizName, shop.ID, shopName, 0, 1, 15_000, false, false}, viewOf(defaulted))
	require.Equal(t, day(3).Add(2*time.Minute), byID[failed].FailedAt.UTC())
	require.Equal(t, day(5).Add(time.Hour), byID[writtenOff].WrittenOffAt.UTC())
	require.Equal(t, int64(1_500), byID[failed].DiscountSantim)
	require.Len(t, byID[restructured].Instalments, 5)

	// Filters, alone and together.
	only := func(ids ...string) []string {
		keep := map[string]bool{}
		for _, id := range ids {
			keep[id] = true
		}
		out := []string{}
		for _, id := range newestFirst {
			if keep[id] {
				out = append(out, id)
			}
		}
		return out
	}
	filters := []struct {
		f    bnpl.AdminFilter
		want []string
	}{
		{bnpl.AdminFilter{}, newestFirst},
		{bnpl.AdminFilter{Status: bnpl.StatusActive}, only(active, restructured)},
		{bnpl.AdminFilter{Status: bnpl.StatusFailed}, only(failed)},
		{bnpl.AdminFilter{BusinessID: other.ID}, only(accepted, settled, restructured)},
		{bnpl.AdminFilter{MerchantID: shop2.ID}, only(failed, settled)},
		{bnpl.AdminFilter{From: day(2), To: day(5)}, only(accepted, failed, settled)},
		{bnpl.AdminFilter{From: day(5)}, only(writtenOff, restructured, defaulted)},
		{bnpl.AdminFilter{To: day(2)}, only(active)},
		{bnpl.AdminFilter{BusinessID: biz.ID, MerchantID: shop.ID, Status: bnpl.StatusActive}, only(active)},
		{bnpl.AdminFilter{BusinessID: other.ID, MerchantID: shop2.ID, Status: bnpl.StatusActive}, only()},
		{bnpl.AdminFilter{BusinessID: shop.ID}, only()},
		{bnpl.AdminFilter{MerchantID: "nobody"}, only()},
	}
	for _, c := range filters {
		items := list(c.f, "", 100)
		require.Equal(t, c.want, adminIDs(items), "%+v", c.f)

		// The totals are the items', state by state: the same rule of what is owed.
		want := map[string]bnpl.AdminTotal{}
		for _, s := range bnpl.AgreementStatuses {
			if c.f.Status == "" || c.f.Status == s {
				want[s] = bnpl.AdminTotal{}
			}
		}
		for _, a := range items {
			w := want[a.Status]
			w.Count++
			w.PurchaseSantim += a.PurchaseSantim
			w.OutstandingSantim += a.OutstandingSantim()
			want[a.Status] = w
		}
		require.Equal(t, want, totals(c.f), "%+v", c.f)

		// Pages of two: each agreement once, in order.
		paged := []string{}
		after := ""
		for range 10 {
			page := list(c.f, after, 3) // limit+1 as the API asks
			if len(page) > 2 {
				page = page[:2]
				paged = append(paged, adminIDs(page)...)
				after = page[1].ID
				continue
			}
			paged = append(paged, adminIDs(page)...)
			break
		}
		require.Equal(t, c.want, paged, "%+v", c.f)
	}
	require.Empty(t, list(bnpl.AdminFilter{}, "bnpl_nobody", 100), "a cursor that names no agreement")
	require.Equal(t, map[string]bnpl.AdminTotal{bnpl.StatusActive: {Count: 2, PurchaseSantim: 180_000, OutstandingSantim: 120_000}},
		totals(bnpl.AdminFilter{Status: bnpl.StatusActive}))

	// The runtime role, in a business's transaction, reads that business's agreements only.
	var own []bnpl.AdminAgreement
	require.NoError(t, tenancy.InTx(biz.Ctx, d.App, func(tx pgx.Tx) (err error) {
		own, err = bnpl.AdminList(biz.Ctx, tx, bnpl.AdminFilter{}, "", 100)
		return err
	}))
	require.Equal(t, only(active, failed, writtenOff, defaulted), adminIDs(own))
}

// TestAdminTotalsOverflow: sums past int64 santim are money.ErrOverflow (the route's
// BNPL_TOTALS_OVERFLOW, 422), never a wrapped figure nor a database error that aborts the
// transaction; each agreement is still listed, and a narrower filter answers.
func TestAdminTotalsOverflow(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	platform := d.Platform(t)
	biz := payrolltest.NewOrg(t, d)
	shop := newMerchant(t, d)
	emp := biz.Employee(t, payrolltest.Employee{})
	const huge int64 = 4_000_000_000_000_000_000 // three of them pass int64
	at := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 3 {
		ids = append(ids, overseen(t, biz, emp, shop.ID, bnpl.StatusActive, 100_000, at.Add(time.Duration(i)*time.Hour),
			inst{"2027-02-28", huge, bnpl.InstalmentDue, 0}))
	}
	err := oversee(t, platform, func(ctx context.Context, tx pgx.Tx) error {
		_, err := bnpl.AdminTotals(ctx, tx, bnpl.AdminFilter{})
		return err
	})
	require.ErrorIs(t, err, money.ErrOverflow)
	require.False(t, db.IsCode(err, pgerrcode.NumericValueOutOfRange), "%v", err)

	var items []bnpl.AdminAgreement
	require.NoError(t, oversee(t, platform, func(ctx context.Context, tx pgx.Tx) (err error) {
		items, err = bnpl.AdminList(ctx, tx, bnpl.AdminFilter{}, "", 100)
		return err
	}))
	require.Len(t, items, 3)
	for _, a := range items {
		require.Equal(t, huge, a.OutstandingSantim())
	}
	var narrow map[string]bnpl.AdminTotal
	require.NoError(t, oversee(t, platform, func(ctx context.Context, tx pgx.Tx) (err error) {
		narrow, err = bnpl.AdminTotals(ctx, tx, bnpl.AdminFilter{To: at.Add(2 * time.Hour)})
		return err
	}))
	require.Equal(t, bnpl.AdminTotal{Count: 2, PurchaseSantim: 200_000, OutstandingSantim: 2 * huge}, narrow[bnpl.StatusActive])
	require.Equal(t, ids[2], items[0].ID)
}
