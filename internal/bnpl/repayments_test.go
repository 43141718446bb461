package bnpl_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestRepaymentsReadThroughTheirIndex: every filter of a business's repayment feed, from the start
// and after a cursor, reads the collected instalments through bnpl_instalments_repaid (sequential
// scans off: an index that can serve is used).
func TestRepaymentsReadThroughTheirIndex(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithTenant(context.Background(), "biz_1")
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, f := range map[string]bnpl.RepaymentFilter{
		"everything":   {},
		"a source":     {Source: bnpl.SourcePayroll},
		"an employee":  {EmployeeID: "emp_1"},
		"a merchant":   {MerchantID: "org_1"},
		"an agreement": {AgreementID: "bnpl_1"},
		"a window":     {From: window, To: window.AddDate(0, 1, 0)},
	} {
		for _, after := range []bnpl.RepaymentCursor{{}, {At: window, Agreement: "bnpl_1", Index: 2}} {
			var text string
			require.NoError(t, db.InTenantTx(ctx, d.App, "biz_1", func(tx pgx.Tx) error {
				sql, args := bnpl.RepaymentsSQL(ctx, f, after, 51)
				var err error
				text, err = testkit.Plan(ctx, tx, sql, args...)
				return err
			}))
			require.NotContains(t, text, "Seq Scan on bnpl_instalments", "%s:\n%s", name, text)
			require.Contains(t, text, "bnpl_instalments_repaid", "%s:\n%s", name, text)
		}
	}
}
