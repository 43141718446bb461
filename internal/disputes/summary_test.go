package disputes_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// openFor opens a dispute of amount on transaction txID at at (raised by an employee: the SLA is
// 7 calendar days).
func openFor(t *testing.T, d *testkit.DB, tenant, txID string, amount int64, at time.Time) disputes.Dispute {
	t.Helper()
	got, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		return disputes.Open(ctx, tx, disputes.Ethiopia(), disputes.OpenInput{TenantID: tenant, LedgerTransactionID: txID,
			LedgerAccountID: "acc-1", LedgerAccountName: "receivable-from-employee:emp_1", AmountSantim: amount,
			RaisedBy: disputes.RaisedByEmployee, RaisedBySubjectID: "emp_1", Reason: "not mine"}, at)
	})
	require.NoError(t, err)
	return got
}

// summarizeDisputes reads tenant's Summary at now in a pgx transaction (as List runs) and in a bun
// one (as a dashboard reads every domain), which answer alike.
func summarizeDisputes(t *testing.T, d *testkit.DB, tenant string, now time.Time) disputes.Summary {
	t.Helper()
	viaPgx, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Summary, error) {
		return disputes.Summarize(ctx, tx, now)
	})
	require.NoError(t, err)
	var viaBun disputes.Summary
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), tenant), "user:test")
	require.NoError(t, tenancy.InBunTx(ctx, db.NewBun(d.App), func(tx db.BunTx) (err error) {
		viaBun, err = disputes.Summarize(ctx, tx, now)
		return err
	}))
	require.Equal(t, viaPgx, viaBun)
	return viaPgx
}

// statusCounts is every dispute state at 0 but those of counts.
func statusCounts(counts map[disputes.Status]int64) map[string]int64 {
	out := map[string]int64{}
	for _, s := range disputes.Statuses {
		out[string(s)] = counts[s]
	}
	return out
}

// TestSummarizeDisputes: the disputes by state (every state reached through the store's own
// moves), the open ones, those open past their SLA deadline on each side of it to the
// nanosecond (as Dispute.Breached answers), and the open amount; another tenant's are not seen,
// and a tenant without disputes answers zeros with every state.
func TestSummarizeDisputes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	tenant, other, idle := newTenant(t, d), newTenant(t, d), newTenant(t, d)
	t1 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	apply := func(id string, m disputes.Move) {
		t.Helper()
		_, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
			return disputes.Apply(ctx, tx, id, m, t1.Add(30*time.Minute))
		})
		require.NoError(t, err)
	}
	decide := func(txID string, amount int64, m disputes.Move) string {
		t.Helper()
		x := openFor(t, d, tenant, txID, amount, t1)
		m.Trigger, m.Reason, m.Actor = disputes.TriggerDecide, "decided", "usr_operator"
		apply(x.ID, m)
		return x.ID
	}

	d1 := openFor(t, d, tenant, "tx-1", 10_000, t1) // OPENED, the earliest deadline
	d2 := openFor(t, d, tenant, "tx-2", 20_000, t1.Add(time.Hour))
	apply(d2.ID, disputes.Move{Trigger: disputes.TriggerInvestigate}) // UNDER_INVESTIGATION, an hour later's deadline
	openFor(t, d, tenant, "tx-3", 30_000, t1.Add(3*time.Hour))        // OPENED, later still
	closed := decide("tx-4", 40_000, disputes.Move{Decision: disputes.NoAction})
	// tx-4's first dispute REOPENED, its successor OPENED (the same amount, its own deadline).
	reopened, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		_, next, err := disputes.Reopen(ctx, tx, disputes.Ethiopia(), closed, "usr_admin", "new evidence", t1.Add(2*time.Hour))
		return next, err
	})
	require.NoError(t, err)
	decide("tx-5", 50_000, disputes.Move{Decision: disputes.Reversal, ReversalTxID: "ltx-reversal"})
	decide("tx-6", 60_000, disputes.Move{Decision: disputes.Chargeback, PartnerChargebackRef: "cb-6"})
	decide("tx-7", 70_000, disputes.Move{Decision: disputes.Adjustment, ApprovedBy: "usr_admin", AdjustmentTxID: "ltx-adjustment"})
	decide("tx-8", 80_000, disputes.Move{Decision: disputes.NoAction})
	// Another tenant's dispute, long past its deadline.
	openFor(t, d, other, "tx-1", 1_000_000, t1.AddDate(0, -1, 0))

	require.True(t, d1.SLADeadline.Before(d2.SLADeadline))
	require.True(t, d2.SLADeadline.Before(reopened.SLADeadline))
	byStatus := statusCounts(map[disputes.Status]int64{disputes.Opened: 3, disputes.UnderInvestigation: 1, disputes.ClosedNoAction: 1,
		disputes.ResolvedAdjustment: 1, disputes.ResolvedReversal: 1, disputes.EscalatedToPartner: 1, disputes.Reopened: 1})
	open := int64(10_000 + 20_000 + 30_000 + 40_000)
	for _, tc := range []struct {
		name     string
		now      time.Time
		breached int64
	}{
		{"before the first deadline", d1.SLADeadline, 0},
		{"just past the first deadline", d1.SLADeadline.Add(time.Nanosecond), 1},
		{"at the second deadline", d2.SLADeadline, 1},
		{"a nanosecond past the second deadline", d2.SLADeadline.Add(time.Nanosecond), 2},
		{"long after", t1.AddDate(1, 0, 0), 4},
	} {
		got := summarizeDisputes(t, d, tenant, tc.now)
		require.Equal(t, disputes.Summary{ByStatus: byStatus, Open: 4, SLABreached: tc.breached, OpenAmountSantim: open}, got, tc.name)
		// The same as the package's own rule over the listed disputes.
		all, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) ([]disputes.Dispute, error) {
			return disputes.List(ctx, tx, disputes.Filter{Limit: 100})
		})
		require.NoError(t, err)
		var breached int64
		for _, x := range all {
			if x.Breached(tc.now) {
				breached++
			}
		}
		require.Equal(t, breached, got.SLABreached, tc.name)
	}

	require.Equal(t, disputes.Summary{ByStatus: statusCounts(map[disputes.Status]int64{disputes.Opened: 1}), Open: 1, SLABreached: 1,
		OpenAmountSantim: 1_000_000}, summarizeDisputes(t, d, other, t1))
	empty := summarizeDisputes(t, d, idle, t1)
	require.Equal(t, disputes.Summary{ByStatus: statusCounts(nil)}, empty)
	require.Len(t, empty.ByStatus, len(disputes.Statuses))
}
