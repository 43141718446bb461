package lending

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestLoanBookReadsThroughIndexes: every filter of the loan book reads the loans through an index
// across tenants, as the platform role reads them (sequential scans off: an index that can serve
// is used); a state alone through loans_book_status (migration 0106), not by walking every loan.
func TestLoanBookReadsThroughIndexes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithActor(context.Background(), "system:plan-test")
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		f     LoanBookFilter
		index string
	}{
		"everything": {LoanBookFilter{}, "loans_pkey"},
		"a state":    {LoanBookFilter{Status: LoanActive}, "loans_book_status"},
		"a business": {LoanBookFilter{BusinessID: "biz_1"}, "loans_"},
		"an FI":      {LoanBookFilter{FIID: "fi_1"}, "loans_"},
		"a window":   {LoanBookFilter{From: window, To: window.AddDate(0, 1, 0)}, "loans_pkey"},
	} {
		for _, before := range []string{"", "loan_x"} {
			var text string
			require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "plan test", func(tx pgx.Tx) error {
				sql, args := loanBookSQL(c.f, before, 51)
				var err error
				text, err = testkit.Plan(ctx, tx, sql, args...)
				return err
			}))
			require.NotContains(t, text, "Seq Scan on loans", "%s:\n%s", name, text)
			require.Contains(t, text, " "+c.index, "%s:\n%s", name, text)
		}
	}
}
