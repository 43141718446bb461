package lending

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestLoanRequestCursor: a page's cursor reads back as itself; what the pattern matches is a
// cursor, anything else is a field error on "cursor".
func TestLoanRequestCursor(t *testing.T) {
	at := time.Date(2026, 11, 3, 10, 0, 0, 123_456_000, time.UTC)
	long := "loan_" + strings.Repeat("f", 64)
	for _, c := range []LoanRequestCursor{
		{At: at, ID: "loan_0190a0b0-0000-7000-8000-000000000001"},
		{At: time.UnixMicro(0).UTC(), ID: "loan_x"},
		{At: time.UnixMicro(9_999_999_999_999_999).UTC(), ID: long},
	} {
		s := c.String()
		require.LessOrEqual(t, len(s), MaxLoanRequestCursor, s)
		got, err := ParseLoanRequestCursor(s)
		require.NoError(t, err, s)
		require.Equal(t, c, got, s)
	}
	require.Equal(t, "1793700000123456.loan_a", LoanRequestCursor{At: at, ID: "loan_a"}.String())
	require.Equal(t, MaxLoanRequestCursor, len(LoanRequestCursor{At: time.UnixMicro(9_999_999_999_999_999).UTC(), ID: long}.String()))
	top, err := ParseLoanRequestCursor("")
	require.NoError(t, err)
	require.Equal(t, LoanRequestCursor{}, top)
	for _, v := range []string{"12", "1.", "1.loan_", "1.ewa_x", "01.loan_x", "-1.loan_x", "1.loan_x ", " 1.loan_x", "1.loan_x\x00",
		"1.LOAN_x", "1..loan_x", "1.loan_a b", "1.loan_é", strings.Repeat("9", 17) + ".loan_x", "1." + long + "f", "1.loan_x/y"} {
		_, err := ParseLoanRequestCursor(v)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, "%q", v)
		require.Equal(t, "cursor", fe.Field, "%q", v)
	}
}

func TestWaited(t *testing.T) {
	at := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	require.Equal(t, int64(0), Waited(at, at))
	require.Equal(t, int64(0), Waited(at, at.Add(999*time.Millisecond)))
	require.Equal(t, int64(90), Waited(at, at.Add(90*time.Second+999*time.Millisecond)))
	require.Equal(t, int64(0), Waited(at, at.Add(-time.Hour)), "a clock behind the request is no negative wait")
}

// TestLoanRequestsReadThroughIndexes: the queue's page (from the top and after a cursor, under
// every filter), its totals and the borrowers' loans read the FI's rows through indexes, as the
// FI's own tenant transaction reads them (sequential scans off: an index that can serve is used):
// the page and the totals along loans_fi_requests (app migration 0112), in its order (no sort).
func TestLoanRequestsReadThroughIndexes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	bdb := db.NewBun(d.App)
	ctx := tenancy.WithTenant(context.Background(), "fi_1")
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, f := range map[string]LoanRequestFilter{
		"everything":  {},
		"a product":   {ProductID: "lprod_1"},
		"a business":  {BusinessID: "biz_1"},
		"a window":    {From: window, To: window.AddDate(0, 1, 0)},
		"all of them": {ProductID: "lprod_1", BusinessID: "biz_1", From: window},
	} {
		for _, after := range []LoanRequestCursor{{}, {At: window, ID: "loan_7"}} {
			var page, totals, borrowers string
			require.NoError(t, tenancy.InBunTx(ctx, bdb, func(tx db.BunTx) error {
				var loans []Loan
				page = loanRequestsQuery(ctx, tx, &loans, f, after, 51).String()
				totals = loanRequestTotalsQuery(ctx, tx, f).String()
				borrowers = borrowerLoansQuery(ctx, tx, []string{"biz_1", "biz_2"}, []string{"emp_1", "emp_2"}).String()
				return nil
			}))
			for what, sql := range map[string]string{"page": page, "totals": totals, "borrowers": borrowers} {
				var plan string
				require.NoError(t, db.InTenantTx(ctx, d.App, "fi_1", func(tx pgx.Tx) error {
					var err error
					plan, err = testkit.Plan(ctx, tx, sql)
					return err
				}))
				require.NotContains(t, plan, "Seq Scan", "%s %s after %v:\n%s", name, what, after, plan)
				switch what {
				case "page":
					require.Contains(t, plan, "loans_fi_requests", "%s after %v:\n%s", name, after, plan)
					require.NotContains(t, plan, "Sort", "%s after %v: read in the index's order\n%s", name, after, plan)
				case "totals":
					require.Contains(t, plan, "loans_fi_requests", "%s:\n%s", name, plan)
				}
			}
		}
	}
}

// TestRequestAffordability: the figures Originate keeps read back as the Affordability they came
// from (the largest instalment being the loan's); a loan without them (requested before app
// migration 0112) has none, and a partial set is none either.
func TestRequestAffordability(t *testing.T) {
	a := Affordability{Affordable: true, InstalmentSantim: 35_000, ProjectedNetSantim: 1_655_000, ExistingInstalmentsSantim: 53_158,
		RecoverableSantim: 551_666, MaxDebtServiceBasisPoints: 3_333, DebtServiceLimitSantim: 551_611, LimitSantim: 551_611,
		Binding: BindingDebtService, HeadroomSantim: 516_611, MaxAmountSantim: 3_113_070}
	l := Loan{MonthlyInstalmentSantim: 35_000}
	_, ok := l.RequestAffordability()
	require.False(t, ok)
	l.keepAffordability(a)
	got, ok := l.RequestAffordability()
	require.True(t, ok)
	require.Equal(t, a, got)
	l.MonthlyInstalmentSantim = 600_000
	got, _ = l.RequestAffordability()
	require.False(t, got.Affordable)
	require.Equal(t, int64(551_611-600_000), got.HeadroomSantim)
	l.AffordBinding = nil
	_, ok = l.RequestAffordability()
	require.False(t, ok)
}
