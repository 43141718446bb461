package lending

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestBusinessBillsReadThroughIndexes: a business's bills, every filter, from the top and after
// a cursor of each kind, read each kind's rows through its (tenant_id, instant) index of app
// migration 0110, as the business's own tenant transaction reads them (sequential scans off: an
// index that can serve is used), and the totals never scan a table either.
func TestBusinessBillsReadThroughIndexes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	indexes := map[string]string{RemittanceKindLoan: "loan_remittances_bills", RemittanceKindCourtOrder: "payroll_court_order_remittances_bills",
		RemittanceKindBnpl: "bnpl_agreements_bills"}
	tables := map[string]string{RemittanceKindLoan: "loan_remittances", RemittanceKindCourtOrder: "payroll_court_order_remittances",
		RemittanceKindBnpl: "bnpl_agreements"}
	for name, f := range map[string]RemittanceFeedFilter{
		"everything":  {},
		"a kind":      {Kind: RemittanceKindBnpl},
		"a state":     {Status: RemitRemitted},
		"a window":    {From: window, To: window.AddDate(0, 1, 0)},
		"all of them": {Kind: RemittanceKindCourtOrder, Status: RemitFailed, From: window},
	} {
		for _, after := range []RemittanceFeedCursor{{}, {At: window, Kind: RemittanceKindLoan, Seq: 7},
			{At: window, Kind: RemittanceKindCourtOrder, Seq: 7}, {At: window, Kind: RemittanceKindBnpl, Seq: 7}} {
			bf, err := f.bills("biz_1")
			require.NoError(t, err)
			var text, totals string
			require.NoError(t, db.InTenantTx(ctx, d.App, "biz_1", func(tx pgx.Tx) error {
				sql, args := remittanceFeedSQL(bf, after, 51)
				var err error
				if text, err = testkit.Plan(ctx, tx, sql, args...); err != nil {
					return err
				}
				sql, args = remittanceTotalsSQL(bf)
				totals, err = testkit.Plan(ctx, tx, sql, args...)
				return err
			}))
			for _, s := range bf.sources() {
				require.NotContains(t, text, "Seq Scan on "+tables[s.kind], "%s after %v:\n%s", name, after, text)
				require.Contains(t, text, indexes[s.kind], "%s after %v:\n%s", name, after, text)
				require.NotContains(t, totals, "Seq Scan on "+tables[s.kind], "%s totals:\n%s", name, totals)
			}
		}
	}
}

// TestBusinessBillsSQL: a business's bills read every kind of BillKinds and name the business in
// every kind's statement; the platform's feed still reads its two kinds only; a bills read of no
// business is refused before any statement.
func TestBusinessBillsSQL(t *testing.T) {
	f, err := RemittanceFeedFilter{BusinessID: "org_other"}.bills("org_1")
	require.NoError(t, err)
	var kinds []string
	for _, s := range f.sources() {
		kinds = append(kinds, s.kind)
	}
	require.Equal(t, BillKinds, kinds)
	sql, args := remittanceFeedSQL(f, RemittanceFeedCursor{}, 10)
	require.Equal(t, 3, strings.Count(sql, "r.tenant_id = $"), sql)
	require.Contains(t, args, any("org_1"))
	require.NotContains(t, args, any("org_other"))
	kinds = nil
	for _, s := range (RemittanceFeedFilter{}).sources() {
		kinds = append(kinds, s.kind)
	}
	require.Equal(t, RemittanceKinds, kinds)
	require.Empty(t, RemittanceFeedFilter{Kind: RemittanceKindBnpl}.sources(), "no BNPL in the platform's feed")
	_, err = RemittanceFeedFilter{}.bills("")
	require.Error(t, err)
	_, err = ListBusinessBills(context.Background(), nil, "", RemittanceFeedFilter{}, RemittanceFeedCursor{}, 10)
	require.Error(t, err)
}
