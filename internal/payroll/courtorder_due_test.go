package payroll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The court-order auto-submit's candidates are read a page at a time until the tenants whose
// policy is on fill the answer: a tenant that remits outside the platform (policy off, its runs
// candidates for good) sorting first must not hide another's due runs. Found by an audit: with
// the limit applied before the policy, 500 such runs kept a tenant's court orders from ever
// being submitted. Here the page is 2 and the tenant with the policy off has 3 runs.
func TestDueCourtOrderRemitsLooksPastTenantsWithThePolicyOff(t *testing.T) {
	d := testkit.NewDB(t)
	first, second := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	if second.ID < first.ID {
		first, second = second, first
	}
	courtRuns := func(o *payrolltest.Org, periods ...string) []string {
		emp := o.Employee(t, payrolltest.Employee{})
		o.CourtOrder(t, emp, 10000, nil)
		var ids []string
		for _, p := range periods {
			r, err := runAs(t, o, "u-maker", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
				r, _, err := payroll.CreateRun(ctx, tx, p, runNow)
				if err != nil {
					return r, err
				}
				return payroll.CalculateRun(ctx, tx, r.ID, runNow)
			})
			require.NoError(t, err)
			_, err = runAs(t, o, "u-checker", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
				return payroll.ApproveRun(ctx, tx, r.ID, runNow)
			})
			require.NoError(t, err)
			exec(t, o, `UPDATE app.payroll_entries SET status = 'PAID', paid_at = now() WHERE run_id = $1`, r.ID)
			exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, r.ID)
			ids = append(ids, r.ID)
		}
		return ids
	}
	courtRuns(first, "2026-02", "2026-03", "2026-04")
	due := courtRuns(second, "2026-02")
	_, err := changeSettings(second, payroll.SettingsChange{CourtOrderAutoSubmit: payroll.To(true)})
	require.NoError(t, err)

	ctx := tenancy.WithActor(context.Background(), "system:test")
	for _, page := range []int{2, payroll.MaxDueCourtOrderRemits} {
		require.NoError(t, crosstenant.BunTx(ctx, db.NewBun(d.Platform(t)), "court-order due test", func(tx db.BunTx) error {
			got, err := payroll.DueCourtOrderRemitsPaged(ctx, tx, page)
			require.NoError(t, err)
			require.Equal(t, []payroll.DueRun{{TenantID: second.ID, RunID: due[0]}}, got, fmt.Sprintf("page %d", page))
			return nil
		}))
	}
}
