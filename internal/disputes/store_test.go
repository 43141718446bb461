package disputes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newTenant(t *testing.T, d *testkit.DB) string {
	t.Helper()
	ctx := context.Background()
	id := orgs.NewOrganizationID()
	require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
		owner, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: "owner-" + strings.ToLower(id[len(id)-8:]) + "@dsp.test", Name: "Owner", PasswordHash: "x"})
		if err != nil {
			return err
		}
		_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Org " + id, Kind: orgs.Business}, owner.ID)
		return err
	}))
	return id
}

func inTenant[T any](t *testing.T, d *testkit.DB, tenant string, fn func(ctx context.Context, tx pgx.Tx) (T, error)) (T, error) {
	t.Helper()
	var out T
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), tenant), "user:test")
	err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

func open(t *testing.T, d *testkit.DB, tenant, txID string, at time.Time) disputes.Dispute {
	t.Helper()
	got, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		return disputes.Open(ctx, tx, disputes.Ethiopia(), disputes.OpenInput{TenantID: tenant, LedgerTransactionID: txID,
			LedgerAccountID: "acc-1", LedgerAccountName: "receivable-from-employee:emp_1", AmountSantim: 12_345,
			RaisedBy: disputes.RaisedByEmployee, RaisedBySubjectID: "emp_1", Reason: "I did not take this advance", ActorUserID: "usr_1"}, at)
	})
	require.NoError(t, err)
	return got
}

// requireStateIsLog: the dispute's status is its latest event's.
func requireStateIsLog(t *testing.T, d *testkit.DB, tenant, id string) []disputes.Event {
	t.Helper()
	type both struct {
		d  disputes.Dispute
		ev []disputes.Event
	}
	b, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (both, error) {
		x, err := disputes.Get(ctx, tx, id)
		if err != nil {
			return both{}, err
		}
		ev, err := disputes.Events(ctx, tx, id)
		return both{x, ev}, err
	})
	require.NoError(t, err)
	require.NotEmpty(t, b.ev)
	require.Equal(t, b.d.Status, b.ev[len(b.ev)-1].Status, "the latest event is the effective state")
	return b.ev
}

func TestDisputeStoreLifecycle(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	tenant := newTenant(t, d)
	opened := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	x := open(t, d, tenant, "tx-1", opened)
	require.Equal(t, disputes.Opened, x.Status)
	require.True(t, opened.AddDate(0, 0, 7).Equal(x.SLADeadline))

	_, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		return disputes.Open(ctx, tx, disputes.Ethiopia(), disputes.OpenInput{TenantID: tenant, LedgerTransactionID: "tx-1",
			LedgerAccountID: "acc-1", LedgerAccountName: "n", AmountSantim: 1, RaisedBy: disputes.RaisedByEmployee, RaisedBySubjectID: "emp_1", Reason: "again"}, opened)
	})
	require.ErrorIs(t, err, disputes.ErrAlreadyOpen)

	apply := func(m disputes.Move) (disputes.Dispute, error) {
		return inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
			return disputes.Apply(ctx, tx, x.ID, m, opened.Add(time.Hour))
		})
	}
	// The same attachment twice (a record step retried after its commit's answer was lost): one
	// event, audit row and outbox event.
	for range 2 {
		_, err = apply(disputes.Move{Trigger: disputes.TriggerEvidence, Actor: "usr_admin", UploadKeys: []string{"k1"}, Note: "payslip",
			EvidenceID: "evidence:u1"})
		require.NoError(t, err)
	}
	requireStateIsLog(t, d, tenant, x.ID)
	_, err = apply(disputes.Move{Trigger: disputes.TriggerDecide, Decision: disputes.Adjustment, Reason: "r", Actor: "op", AdjustmentTxID: "adj"})
	require.ErrorIs(t, err, disputes.ErrApprovalMissing)
	_, err = apply(disputes.Move{Trigger: disputes.TriggerDecide, Decision: disputes.Adjustment, Reason: "r", Actor: "op", ApprovedBy: "op", AdjustmentTxID: "adj"})
	require.ErrorIs(t, err, disputes.ErrSelfApproved)
	y, err := apply(disputes.Move{Trigger: disputes.TriggerDecide, Decision: disputes.NoAction, Reason: "payslip shows it", Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, disputes.ClosedNoAction, y.Status)
	again, err := apply(disputes.Move{Trigger: disputes.TriggerDecide, Decision: disputes.NoAction, Reason: "payslip shows it", Actor: "op"})
	require.NoError(t, err, "a retried record step")
	require.Equal(t, y.UpdatedAt, again.UpdatedAt)
	_, err = apply(disputes.Move{Trigger: disputes.TriggerDecide, Decision: disputes.Reversal, Reason: "x", Actor: "op", ReversalTxID: "r"})
	require.ErrorIs(t, err, disputes.ErrInvalidTransition, "forward only")
	ev := requireStateIsLog(t, d, tenant, x.ID)
	var types []disputes.EventType
	for _, e := range ev {
		types = append(types, e.EventType)
	}
	require.Equal(t, []disputes.EventType{disputes.EventOpened, disputes.EventInvestigationStarted, disputes.EventEvidenceAttached, disputes.EventDecided}, types)

	// Decided, the transaction is not disputed anew (an adjustment or a reversal would move its
	// money again; found by an audit): only a reopen disputes it again.
	_, err = inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		return disputes.Open(ctx, tx, disputes.Ethiopia(), disputes.OpenInput{TenantID: tenant, LedgerTransactionID: "tx-1",
			LedgerAccountID: "acc-1", LedgerAccountName: "n", AmountSantim: 1, RaisedBy: disputes.RaisedByEmployee, RaisedBySubjectID: "emp_1", Reason: "again"}, opened)
	})
	require.ErrorIs(t, err, disputes.ErrAlreadyDisputed)
	require.Equal(t, disputes.CodeAlreadyDisputed, disputes.CodeOf(err))

	type pair struct{ prev, next disputes.Dispute }
	p, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (pair, error) {
		a, b, err := disputes.Reopen(ctx, tx, disputes.Ethiopia(), x.ID, "usr_platform", "new evidence", opened.Add(48*time.Hour))
		return pair{a, b}, err
	})
	require.NoError(t, err)
	require.Equal(t, disputes.Reopened, p.prev.Status)
	require.Equal(t, disputes.Opened, p.next.Status)
	require.Equal(t, x.ID, *p.next.ReopensDisputeID)
	requireStateIsLog(t, d, tenant, x.ID)
	requireStateIsLog(t, d, tenant, p.next.ID)
	_, err = inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (pair, error) {
		a, b, err := disputes.Reopen(ctx, tx, disputes.Ethiopia(), x.ID, "usr_platform", "again", opened.Add(49*time.Hour))
		return pair{a, b}, err
	})
	require.ErrorIs(t, err, disputes.ErrAlreadyReopened)

	var events int
	_, err = inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (int, error) {
		return 0, tx.QueryRow(ctx, `SELECT count(*) FROM app.outbox WHERE type LIKE 'dispute.%'`).Scan(&events)
	})
	require.NoError(t, err)
	require.Equal(t, 5, events, "opened, evidence_attached, decided, opened (the successor), reopened")
}

// TestDisputeEventsAppendOnly: no role — the runtime role, the platform role, the owner — updates,
// deletes or truncates a dispute event.
func TestDisputeEventsAppendOnly(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	tenant := newTenant(t, d)
	x := open(t, d, tenant, "tx-append", time.Now())
	ctx := context.Background()
	owner, err := pgx.Connect(ctx, d.OwnerDSN)
	require.NoError(t, err)
	defer owner.Close(ctx)
	// The owner sees the tenant's rows (RLS is forced on it too), so the trigger is what refuses.
	_, err = owner.Exec(ctx, `SELECT set_config('app.tenant_id', $1, false)`, tenant)
	require.NoError(t, err)
	for _, stmt := range []string{
		`UPDATE app.dispute_events SET status = 'CLOSED_NO_ACTION' WHERE dispute_id = $1`,
		`DELETE FROM app.dispute_events WHERE dispute_id = $1`,
	} {
		_, err := inTenant(t, d, tenant, func(ctx context.Context, tx pgx.Tx) (int, error) {
			_, err := tx.Exec(ctx, stmt, x.ID)
			return 0, err
		})
		require.Error(t, err, "runtime role: %s", stmt)
		_, err = owner.Exec(ctx, stmt, x.ID)
		require.ErrorContains(t, err, "append-only", "owner: %s", stmt)
		plat := d.Platform(t)
		_, err = plat.Exec(ctx, stmt, x.ID)
		require.Error(t, err, "platform role: %s", stmt)
	}
	_, err = owner.Exec(ctx, `TRUNCATE app.dispute_events CASCADE`)
	require.ErrorContains(t, err, "append-only")
	requireStateIsLog(t, d, tenant, x.ID)
}

// TestDisputeTenantIsolation: another tenant sees nothing.
func TestDisputeTenantIsolation(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, b := newTenant(t, d), newTenant(t, d)
	x := open(t, d, a, "tx-iso", time.Now())
	_, err := inTenant(t, d, b, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) { return disputes.Get(ctx, tx, x.ID) })
	require.ErrorIs(t, err, disputes.ErrNotFound)
	ev, err := inTenant(t, d, b, func(ctx context.Context, tx pgx.Tx) ([]disputes.Event, error) { return disputes.Events(ctx, tx, x.ID) })
	require.NoError(t, err)
	require.Empty(t, ev)
	// A tenant's override changes the next dispute's deadline.
	_, err = inTenant(t, d, a, func(ctx context.Context, tx pgx.Tx) (int, error) {
		return 0, disputes.SetPolicy(ctx, tx, a, disputes.RaisedByEmployee, disputes.Policy{DayKind: disputes.BusinessDays, Days: 2}, "usr", time.Now())
	})
	require.NoError(t, err)
	mon := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	y := open(t, d, a, "tx-override", mon)
	require.True(t, mon.AddDate(0, 0, 2).Equal(y.SLADeadline), "2 business days: %s", y.SLADeadline)
}
