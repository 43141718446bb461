package equb_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// moneyWorld is an organization with a group, two members and one cycle, written as rows (the
// sagas' record steps are what is tested, not how a group gets there).
type moneyWorld struct {
	b                *bun.DB
	ctx              context.Context
	group, cycle     string
	memberA, memberB string
	at               time.Time
}

func newMoneyWorld(t *testing.T) *moneyWorld {
	t.Helper()
	d := testkit.NewDB(t)
	tenant := orgs.NewOrganizationID()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("test")})
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: tenant, Name: "Equb Org", Kind: orgs.Business}, "")
		return err
	}))
	w := &moneyWorld{b: db.NewBun(d.App), ctx: ctx, at: time.Date(2026, 12, 9, 9, 0, 0, 0, time.UTC), memberA: "eqm_a", memberB: "eqm_b"}
	w.step(t, func(ctx context.Context, tx db.BunTx) error {
		g, err := equb.CreateGroup(ctx, tx, equb.GroupInput{Name: "Circle", ContributionSantim: 1000, MaxMembers: 2,
			PayoutOrder: equb.OrderFixed, EscrowPartner: "sandbox", EscrowAccountNumber: "ESCROW"}, w.at)
		if err != nil {
			return err
		}
		w.group, w.cycle = g.ID, "eqc_"+identity.NewID()
		for i, m := range []string{w.memberA, w.memberB} {
			if _, err := tx.Exec(ctx, `INSERT INTO app.equb_memberships (id, tenant_id, group_id, employee_id, user_id, status, position, joined_at)
				VALUES ($1, $2, $3, $4, $5, 'ACTIVE', $6, $7)`, m, tenant, g.ID, "emp_"+m, "usr_"+m, i+1, w.at); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO app.equb_cycles (id, tenant_id, group_id, number, recipient_id, contribution_santim, members_due,
			status, opened_by, opened_at, due_at) VALUES ($1, $2, $3, 1, $4, 1000, 2, 'PAYING', 'test', $5, $5)`, w.cycle, tenant, g.ID, w.memberA, w.at)
		return err
	})
	return w
}

// step runs fn in one transaction of the organization, as a record step does.
func (w *moneyWorld) step(t *testing.T, fn func(ctx context.Context, tx db.BunTx) error) {
	t.Helper()
	require.NoError(t, tenancy.InBunTx(w.ctx, w.b, func(tx db.BunTx) error { return fn(w.ctx, tx) }))
}

// pending writes a saga's PENDING row (a contribution or a payout) of member under wfID, as its
// claim leaves it.
func (w *moneyWorld) pending(t *testing.T, table, id, member, wfID string) {
	t.Helper()
	w.step(t, func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.`+table+` (id, tenant_id, group_id, cycle_id, membership_id, amount_santim, status,
			workflow_id, ledger_tx_id, created_at, updated_at) VALUES ($1, app.current_tenant(), $2, $3, $4, 2000, 'PENDING', $5, $6, $7, $7)`,
			id, w.group, w.cycle, member, wfID, "ltx-"+wfID, w.at)
		return err
	})
}

func (w *moneyWorld) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	w.step(t, func(ctx context.Context, tx db.BunTx) error { return tx.QueryRow(ctx, query, args...).Scan(&n) })
	return n
}

// A payout saga whose steps run again after a lost workflow task finds the payout it concluded,
// FAILED or PAID, with what it recorded (PayoutConcludedBy); another run, a PENDING payout and no
// payout are not concluded. Marking the outcome again is a no-op: nothing recorded twice.
func TestPayoutConcludedBy(t *testing.T) {
	w := newMoneyWorld(t)
	concluded := func(wfID string) (equb.Payout, bool) {
		var po equb.Payout
		var ok bool
		w.step(t, func(ctx context.Context, tx db.BunTx) (err error) {
			po, ok, err = equb.PayoutConcludedBy(ctx, tx, wfID)
			return err
		})
		return po, ok
	}
	w.pending(t, "equb_payouts", "eqp_a", w.memberA, "wf-a")
	_, ok := concluded("wf-a")
	require.False(t, ok, "PENDING: the run goes on")

	mark := func(fn func(ctx context.Context, tx db.BunTx) (equb.Payout, error)) equb.Payout {
		var po equb.Payout
		w.step(t, func(ctx context.Context, tx db.BunTx) (err error) { po, err = fn(ctx, tx); return err })
		return po
	}
	failed := func(ctx context.Context, tx db.BunTx) (equb.Payout, error) {
		return equb.MarkPayoutFailed(ctx, tx, "wf-a", "ACCOUNT_CLOSED", w.at)
	}
	require.Equal(t, equb.MoneyFailed, mark(failed).Status)
	po, ok := concluded("wf-a")
	require.True(t, ok)
	require.Equal(t, "eqp_a", po.ID)
	require.Equal(t, equb.MoneyFailed, po.Status)
	require.Equal(t, "ACCOUNT_CLOSED", *po.FailureCode)
	plan := po.ConcludedPlan()
	require.Equal(t, &equb.Concluded{Status: equb.MoneyFailed, LedgerTxID: "ltx-wf-a", FailureCode: "ACCOUNT_CLOSED"}, plan.Concluded)
	require.Equal(t, w.group, plan.GroupID)
	require.Equal(t, w.cycle, plan.CycleID)
	_, ok = concluded("wf-b")
	require.False(t, ok, "another run's payout")
	_, ok = concluded("")
	require.False(t, ok)

	// The run records its failure again: a no-op, nothing written twice.
	again := mark(failed)
	require.Equal(t, equb.MoneyFailed, again.Status)
	require.Equal(t, "ACCOUNT_CLOSED", *again.FailureCode)
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'EqubPayoutFailed'`))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'equb.payout_failed.v1'`))

	// A new key pays the cycle (OPEN again): PAID under its run.
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.equb_cycles WHERE id = $1 AND status = 'OPEN'`, w.cycle))
	w.pending(t, "equb_payouts", "eqp_b", w.memberA, "wf-b")
	paid := func(ctx context.Context, tx db.BunTx) (equb.Payout, error) {
		return equb.MarkPayoutPaid(ctx, tx, "wf-b", "tr-b", "wf-b", w.at)
	}
	require.Equal(t, equb.MoneyPaid, mark(paid).Status)
	po, ok = concluded("wf-b")
	require.True(t, ok)
	require.Equal(t, equb.MoneyPaid, po.Status)
	require.Equal(t, &equb.Concluded{Status: equb.MoneyPaid, LedgerTxID: "ltx-wf-b", TransferID: "tr-b"}, po.ConcludedPlan().Concluded)
	po, ok = concluded("wf-a")
	require.True(t, ok, "the first run still finds its own FAILED payout, not the paid one")
	require.Equal(t, "eqp_a", po.ID)
	require.Equal(t, equb.MoneyPaid, mark(paid).Status, "MarkPaid again is a no-op")
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'EqubPayoutPaid'`))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'equb.payout_paid.v1'`))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.equb_cycles WHERE id = $1 AND status = 'PAID'`, w.cycle))
}

// The same for a contribution (ContributionConcludedBy): POSTED or FAILED under the asking run.
func TestContributionConcludedBy(t *testing.T) {
	w := newMoneyWorld(t)
	concluded := func(wfID string) (equb.Contribution, bool) {
		var ct equb.Contribution
		var ok bool
		w.step(t, func(ctx context.Context, tx db.BunTx) (err error) {
			ct, ok, err = equb.ContributionConcludedBy(ctx, tx, wfID)
			return err
		})
		return ct, ok
	}
	mark := func(fn func(ctx context.Context, tx db.BunTx) (equb.Contribution, error)) equb.Contribution {
		var ct equb.Contribution
		w.step(t, func(ctx context.Context, tx db.BunTx) (err error) { ct, err = fn(ctx, tx); return err })
		return ct
	}
	w.pending(t, "equb_contributions", "eqt_a", w.memberA, "wf-a")
	w.pending(t, "equb_contributions", "eqt_b", w.memberB, "wf-b")
	_, ok := concluded("wf-a")
	require.False(t, ok, "PENDING: the run goes on")

	posted := func(ctx context.Context, tx db.BunTx) (equb.Contribution, error) {
		return equb.MarkContributionPosted(ctx, tx, "wf-a", "tr-a", "wf-a", w.at)
	}
	failed := func(ctx context.Context, tx db.BunTx) (equb.Contribution, error) {
		return equb.MarkContributionFailed(ctx, tx, "wf-b", "ACCOUNT_FROZEN", w.at)
	}
	require.Equal(t, equb.MoneyPosted, mark(posted).Status)
	require.Equal(t, equb.MoneyFailed, mark(failed).Status)

	ct, ok := concluded("wf-a")
	require.True(t, ok)
	require.Equal(t, "eqt_a", ct.ID)
	require.Equal(t, &equb.Concluded{Status: equb.MoneyPosted, LedgerTxID: "ltx-wf-a", TransferID: "tr-a"}, ct.ConcludedPlan().Concluded)
	ct, ok = concluded("wf-b")
	require.True(t, ok)
	require.Equal(t, "eqt_b", ct.ID)
	plan := ct.ConcludedPlan()
	require.Equal(t, &equb.Concluded{Status: equb.MoneyFailed, LedgerTxID: "ltx-wf-b", FailureCode: "ACCOUNT_FROZEN"}, plan.Concluded)
	require.Equal(t, w.group, plan.GroupID)
	require.Equal(t, w.memberB, plan.MembershipID)
	_, ok = concluded("wf-c")
	require.False(t, ok, "another run: no contribution of its own")

	// Marked again: no-ops.
	require.Equal(t, equb.MoneyPosted, mark(posted).Status)
	require.Equal(t, equb.MoneyFailed, mark(failed).Status)
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'EqubContributionPosted'`))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'EqubContributionFailed'`))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'equb.contribution_failed.v1'`))
}
