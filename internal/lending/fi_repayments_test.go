package lending

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestFIRepaymentsReadThroughTheFeedIndex: every filter of an FI's repayment feed, from the
// start and after a cursor, reads the FI's repayments through loan_repayments_fi_feed (sequential
// scans off: an index that can serve is used), as the FI's tenant reads them.
func TestFIRepaymentsReadThroughTheFeedIndex(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, f := range map[string]FIRepaymentFilter{
		"everything":  {},
		"a state":     {Status: RepaymentPosted},
		"a source":    {Source: RepaySourcePayroll},
		"a business":  {BusinessID: "biz_1"},
		"a loan":      {LoanID: "loan_1"},
		"a window":    {From: window, To: window.AddDate(0, 1, 0)},
		"all of them": {Status: RepaymentFailed, Source: RepaySourceManual, BusinessID: "biz_1", LoanID: "loan_1", From: window},
	} {
		for _, before := range []string{"", "lrep_x"} {
			var text string
			require.NoError(t, db.InTenantTx(ctx, d.App, "fi_1", func(tx pgx.Tx) error {
				sql, args := fiRepaymentsSQL("fi_1", f, before, 51)
				var err error
				text, err = testkit.Plan(ctx, tx, sql, args...)
				return err
			}))
			require.NotContains(t, text, "Seq Scan on loan_repayments", "%s:\n%s", name, text)
			require.Contains(t, text, "loan_repayments_fi_feed", "%s:\n%s", name, text)
		}
	}
}
