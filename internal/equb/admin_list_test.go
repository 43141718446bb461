package equb_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// overseenOrg is a business whose groups are written as the stores and sagas leave them.
type overseenOrg struct {
	id  string
	b   *bun.DB
	ctx context.Context
}

func newOverseenOrg(t *testing.T, d *testkit.DB) *overseenOrg {
	t.Helper()
	id := orgs.NewOrganizationID()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: id, Actor: tenancy.System("test")})
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Org " + id, Kind: orgs.Business}, "")
		return err
	}))
	return &overseenOrg{id: id, b: db.NewBun(d.App), ctx: ctx}
}

// group creates a group (CreateGroup) at created with contribution, members (ACTIVE or LEFT, in
// that order of positions) and cycles (their states, numbered from 1), in status.
func (o *overseenOrg) group(t *testing.T, name string, contribution int64, created time.Time, status string, members, cycles []string) string {
	t.Helper()
	var id string
	require.NoError(t, tenancy.InBunTx(o.ctx, o.b, func(tx db.BunTx) error {
		ctx := o.ctx
		g, err := equb.CreateGroup(ctx, tx, equb.GroupInput{Name: name, ContributionSantim: contribution, MaxMembers: 10,
			PayoutOrder: equb.OrderFixed, EscrowPartner: "sandbox", EscrowAccountNumber: "ESCROW-" + name}, created)
		if err != nil {
			return err
		}
		id = g.ID
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
				left = &created
			}
			if _, err := tx.Exec(ctx, `INSERT INTO app.equb_memberships (id, tenant_id, group_id, employee_id, user_id, status, position,
					joined_at, left_at) VALUES ($1, app.current_tenant(), $2, $3, $4, $5, $6, $7, $8)`,
				ids[i], g.ID, "emp_"+ids[i], "usr_"+ids[i], st, i+1, created, left); err != nil {
				return err
			}
		}
		for i, st := range cycles {
			opened := created.Add(time.Duration(i+1) * 24 * time.Hour)
			var paid *time.Time
			if st == equb.CyclePaid {
				p := opened.Add(time.Hour)
				paid = &p
			}
			if _, err := tx.Exec(ctx, `INSERT INTO app.equb_cycles (id, tenant_id, group_id, number, recipient_id, contribution_santim,
					members_due, status, opened_by, opened_at, due_at, paid_at)
				VALUES ($1, app.current_tenant(), $2, $3, $4, $5, $6, $7, 'test', $8, $8::timestamptz + interval '168 hours', $9)`,
				"eqc_"+identity.NewID(), g.ID, i+1, ids[i], contribution, len(members), st, opened, paid); err != nil {
				return err
			}
		}
		return nil
	}))
	return id
}

// overseeEqub runs fn as a platform admin on the audited cross-tenant path of platform (a pool
// that logs in as the platform role).
func overseeEqub(t *testing.T, platform *pgxpool.Pool, fn func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	ctx := tenancy.WithActor(context.Background(), "usr_equb-oversight")
	require.NoError(t, crosstenant.Tx(ctx, platform, "test: equb oversight", func(tx pgx.Tx) error { return fn(ctx, tx) }))
}

func groupIDs(gs []equb.AdminGroup) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, g.ID)
	}
	return out
}

// TestAdminList: the platform's list of groups over two businesses: newest first (a tie by id),
// each with its business's name, its ACTIVE members, its per-round pot (the contribution times
// them), its latest cycle and its escrow partner; filtered by state, business and creation
// window, alone and together; paged without a duplicate or a gap; a cursor that names no group
// reads nothing. The totals are the items' counts and pots, state by state, under every filter;
// in a bun transaction they read the same. The runtime role's tenant transaction sees its own.
func TestAdminList(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	platform := d.Platform(t)
	platformBun := db.NewBun(platform)
	biz, other := newOverseenOrg(t, d), newOverseenOrg(t, d)
	day := func(n int) time.Time { return time.Date(2027, 1, n, 10, 0, 0, 0, time.UTC) }
	A, L := equb.MemberActive, equb.MemberLeft

	forming := biz.group(t, "Forming", 10_000, day(1), equb.GroupForming, []string{A, A, L}, nil)
	running := other.group(t, "Running", 25_000, day(2), equb.GroupRunning, []string{A, A, A}, []string{equb.CyclePaid, equb.CycleOpen})
	completed := biz.group(t, "Completed", 5_000, day(3), equb.GroupCompleted, []string{A, A}, []string{equb.CyclePaid, equb.CyclePaid})
	empty := other.group(t, "Empty", 100, day(4), equb.GroupForming, nil, nil)
	tieA := biz.group(t, "TieA", 1_000, day(5), equb.GroupRunning, []string{A, A}, []string{equb.CyclePaying})
	tieB := other.group(t, "TieB", 2_000, day(5), equb.GroupForming, []string{A}, nil)
	tied := []string{tieA, tieB}
	if tied[0] < tied[1] {
		tied[0], tied[1] = tied[1], tied[0]
	}
	newestFirst := []string{tied[0], tied[1], empty, completed, running, forming}

	list := func(f equb.AdminFilter, after string, limit int) []equb.AdminGroup {
		t.Helper()
		var out []equb.AdminGroup
		overseeEqub(t, platform, func(ctx context.Context, tx pgx.Tx) (err error) {
			out, err = equb.AdminList(ctx, tx, f, after, limit)
			return err
		})
		return out
	}
	totals := func(f equb.AdminFilter) map[string]equb.AdminTotal {
		t.Helper()
		var viaPgx, viaBun map[string]equb.AdminTotal
		overseeEqub(t, platform, func(ctx context.Context, tx pgx.Tx) (err error) {
			viaPgx, err = equb.AdminTotals(ctx, tx, f)
			return err
		})
		ctx := tenancy.WithActor(context.Background(), "usr_equb-oversight")
		require.NoError(t, crosstenant.BunTx(ctx, platformBun, "test: equb oversight", func(tx db.BunTx) (err error) {
			viaBun, err = equb.AdminTotals(ctx, tx, f)
			return err
		}))
		require.Equal(t, viaPgx, viaBun)
		return viaPgx
	}

	all := list(equb.AdminFilter{}, "", 100)
	require.Equal(t, newestFirst, groupIDs(all))
	byID := map[string]equb.AdminGroup{}
	for _, g := range all {
		byID[g.ID] = g
	}
	type view struct {
		Business, BusinessName, Name, Status string
		Members, Pot                         int64
		Cycle                                *int
		CycleStatus                          *string
	}
	num := func(n int) *int { return &n }
	str := func(s string) *string { return &s }
	viewOf := func(id string) view {
		g := byID[id]
		return view{g.TenantID, g.BusinessName, g.Name, g.Status, g.ActiveMembers, g.PotSantim, g.CycleNumber, g.CycleStatus}
	}
	bizName, otherName := "Org "+biz.id, "Org "+other.id
	require.Equal(t, view{biz.id, bizName, "Forming", "FORMING", 2, 20_000, nil, nil}, viewOf(forming), "who left pays no more")
	require.Equal(t, view{other.id, otherName, "Running", "RUNNING", 3, 75_000, num(2), str("OPEN")}, viewOf(running))
	require.Equal(t, view{biz.id, bizName, "Completed", "COMPLETED", 2, 10_000, num(2), str("PAID")}, viewOf(completed))
	require.Equal(t, view{other.id, otherName, "Empty", "FORMING", 0, 0, nil, nil}, viewOf(empty))
	require.Equal(t, view{biz.id, bizName, "TieA", "RUNNING", 2, 2_000, num(1), str("PAYING")}, viewOf(tieA))
	r := byID[running]
	require.Equal(t, [6]any{int64(25_000), "sandbox", 3, equb.OrderFixed, equb.RuleWait, equb.DefaultDueHours},
		[6]any{r.ContributionSantim, r.EscrowPartner, r.CyclesTotal, r.PayoutOrder, r.DefaultRule, r.ContributionDueHours})
	require.Equal(t, day(2).Add(48*time.Hour), r.CycleOpenedAt.UTC())
	require.Equal(t, day(2).Add(48*time.Hour+168*time.Hour), r.CycleDueAt.UTC())
	require.Nil(t, r.CyclePaidAt)
	require.Equal(t, day(3).Add(49*time.Hour), byID[completed].CyclePaidAt.UTC())
	require.Equal(t, day(2), r.CreatedAt.UTC())

	only := func(ids ...string) []string {
		keep := map[string]bool{}
		for _, id := range ids {
			keep[id] = true
		}
		out := []string{}
		for _, id := range newestFirst {
			if keep[id] {
				out = append(out, id)
			}
		}
		return out
	}
	for _, c := range []struct {
		f    equb.AdminFilter
		want []string
	}{
		{equb.AdminFilter{}, newestFirst},
		{equb.AdminFilter{Status: equb.GroupForming}, only(forming, empty, tieB)},
		{equb.AdminFilter{Status: equb.GroupCompleted}, only(completed)},
		{equb.AdminFilter{BusinessID: other.id}, only(running, empty, tieB)},
		{equb.AdminFilter{From: day(2), To: day(5)}, only(running, completed, empty)},
		{equb.AdminFilter{From: day(5)}, only(tieA, tieB)},
		{equb.AdminFilter{BusinessID: biz.id, Status: equb.GroupRunning}, only(tieA)},
		{equb.AdminFilter{BusinessID: biz.id, Status: equb.GroupRunning, To: day(5)}, only()},
		{equb.AdminFilter{BusinessID: "nobody"}, only()},
	} {
		items := list(c.f, "", 100)
		require.Equal(t, c.want, groupIDs(items), "%+v", c.f)
		want := map[string]equb.AdminTotal{}
		for _, s := range equb.GroupStatuses {
			if c.f.Status == "" || c.f.Status == s {
				want[s] = equb.AdminTotal{}
			}
		}
		for _, g := range items {
			w := want[g.Status]
			w.Count++
			w.PotSantim += g.PotSantim
			want[g.Status] = w
		}
		require.Equal(t, want, totals(c.f), "%+v", c.f)

		paged := []string{}
		after := ""
		for range 10 {
			page := list(c.f, after, 3)
			if len(page) > 2 {
				paged = append(paged, groupIDs(page[:2])...)
				after = page[1].ID
				continue
			}
			paged = append(paged, groupIDs(page)...)
			break
		}
		require.Equal(t, c.want, paged, "%+v", c.f)
	}
	require.Empty(t, list(equb.AdminFilter{}, "equb_nobody", 100), "a cursor that names no group")

	var own []equb.AdminGroup
	require.NoError(t, tenancy.InBunTx(biz.ctx, biz.b, func(tx db.BunTx) (err error) {
		own, err = equb.AdminList(biz.ctx, tx, equb.AdminFilter{}, "", 100)
		return err
	}))
	require.Equal(t, only(forming, completed, tieA), groupIDs(own))
}
