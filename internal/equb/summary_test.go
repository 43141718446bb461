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

// summaryOrg is an organization whose groups are written as rows (how a group gets into a state
// is the sagas' and their tests'; the summary reads the states).
type summaryOrg struct {
	b   *bun.DB
	ctx context.Context
	at  time.Time
}

func newSummaryOrg(t *testing.T, d *testkit.DB) *summaryOrg {
	t.Helper()
	tenant := orgs.NewOrganizationID()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("test")})
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: tenant, Name: "Equb Org", Kind: orgs.Business}, "")
		return err
	}))
	return &summaryOrg{b: db.NewBun(d.App), ctx: ctx, at: time.Date(2026, 12, 9, 9, 0, 0, 0, time.UTC)}
}

func (o *summaryOrg) in(t *testing.T, fn func(ctx context.Context, tx db.BunTx) error) {
	t.Helper()
	require.NoError(t, tenancy.InBunTx(o.ctx, o.b, func(tx db.BunTx) error { return fn(o.ctx, tx) }))
}

// group writes a group in status with members (ACTIVE or LEFT, positions in order) and cycles
// (their states, numbered from 1; each pays the member at its position).
func (o *summaryOrg) group(t *testing.T, status string, members, cycles []string) {
	t.Helper()
	o.in(t, func(ctx context.Context, tx db.BunTx) error {
		g, err := equb.CreateGroup(ctx, tx, equb.GroupInput{Name: "Circle", ContributionSantim: 1000, MaxMembers: 10,
			PayoutOrder: equb.OrderFixed, EscrowPartner: "sandbox", EscrowAccountNumber: "ESCROW"}, o.at)
		if err != nil {
			return err
		}
		if status != equb.GroupForming {
			if _, err := tx.Exec(ctx, `UPDATE app.equb_groups SET status = $2, cycles_total = $3 WHERE id = $1`, g.ID, status, len(members)); err != nil {
				return err
			}
		}
		ids := make([]string, len(members))
		for i, st := range members {
			ids[i] = "eqm_" + identity.NewID()
			var left *time.Time
			if st == equb.MemberLeft {
				left = &o.at
			}
			if _, err := tx.Exec(ctx, `INSERT INTO app.equb_memberships (id, tenant_id, group_id, employee_id, user_id, status, position,
					joined_at, left_at) VALUES ($1, app.current_tenant(), $2, $3, $4, $5, $6, $7, $8)`,
				ids[i], g.ID, "emp_"+ids[i], "usr_"+ids[i], st, i+1, o.at, left); err != nil {
				return err
			}
		}
		for i, st := range cycles {
			var paid *time.Time
			if st == equb.CyclePaid {
				paid = &o.at
			}
			if _, err := tx.Exec(ctx, `INSERT INTO app.equb_cycles (id, tenant_id, group_id, number, recipient_id, contribution_santim,
					members_due, status, opened_by, opened_at, due_at, paid_at) VALUES ($1, app.current_tenant(), $2, $3, $4, 1000, 2, $5, 'test', $6, $6, $7)`,
				"eqc_"+identity.NewID(), g.ID, i+1, ids[i], st, o.at, paid); err != nil {
				return err
			}
		}
		return nil
	})
}

func (o *summaryOrg) summarize(t *testing.T) equb.Summary {
	t.Helper()
	var s equb.Summary
	o.in(t, func(ctx context.Context, tx db.BunTx) (err error) {
		s, err = equb.Summarize(ctx, tx)
		return err
	})
	return s
}

// TestSummarizeEqub: the groups by state, the ACTIVE members of FORMING and RUNNING groups (not
// those who left, nor a COMPLETED group's), the cycles not PAID (OPEN and PAYING); another
// organization's groups are not seen, and one without groups answers zeros with every state.
func TestSummarizeEqub(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	org, other, idle := newSummaryOrg(t, d), newSummaryOrg(t, d), newSummaryOrg(t, d)
	const active, left = equb.MemberActive, equb.MemberLeft
	org.group(t, equb.GroupForming, []string{active, active, left}, nil)
	org.group(t, equb.GroupRunning, []string{active, active, left}, []string{equb.CyclePaid, equb.CycleOpen})
	org.group(t, equb.GroupRunning, []string{active, active}, []string{equb.CyclePaying})
	org.group(t, equb.GroupCompleted, []string{active, active}, []string{equb.CyclePaid, equb.CyclePaid})
	other.group(t, equb.GroupRunning, []string{active, active, active}, []string{equb.CycleOpen})

	require.Equal(t, equb.Summary{ByStatus: map[string]int64{equb.GroupForming: 1, equb.GroupRunning: 2, equb.GroupCompleted: 1},
		ActiveMembers: 6, OpenCycles: 2}, org.summarize(t))
	require.Equal(t, equb.Summary{ByStatus: map[string]int64{equb.GroupForming: 0, equb.GroupRunning: 1, equb.GroupCompleted: 0},
		ActiveMembers: 3, OpenCycles: 1}, other.summarize(t))
	require.Equal(t, equb.Summary{ByStatus: map[string]int64{equb.GroupForming: 0, equb.GroupRunning: 0, equb.GroupCompleted: 0}},
		idle.summarize(t))
}
