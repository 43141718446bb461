package orgs_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var now = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

type world struct {
	t    *testing.T
	pool *pgxpool.Pool
	ctx  context.Context
}

func newWorld(t *testing.T) *world {
	return &world{t: t, pool: testkit.NewDB(t).App, ctx: context.Background()}
}

func (w *world) user(email string) identity.User {
	w.t.Helper()
	u, err := identity.CreateUser(w.ctx, w.pool, identity.NewUser{Email: email, Name: "User " + email})
	require.NoError(w.t, err)
	return u
}

// org creates a BUSINESS organization owned by owner, as the runtime role in a transaction scoped
// to it.
func (w *world) org(name string, owner identity.User) orgs.Organization {
	w.t.Helper()
	id := orgs.NewOrganizationID()
	var o orgs.Organization
	require.NoError(w.t, db.InTenantTx(w.ctx, w.pool, id, func(tx pgx.Tx) error {
		var err error
		o, _, err = orgs.Create(w.ctx, tx, orgs.NewOrganization{ID: id, Name: name, Kind: orgs.Business}, owner.ID)
		return err
	}))
	return o
}

// in runs fn in a transaction scoped to tenant (as no user).
func (w *world) in(tenant string, fn func(tx pgx.Tx) error) error {
	return db.InTenantTx(w.ctx, w.pool, tenant, fn)
}

func (w *world) add(tenant string, u identity.User, role orgs.MemberRole) orgs.Member {
	w.t.Helper()
	var m orgs.Member
	require.NoError(w.t, w.in(tenant, func(tx pgx.Tx) error {
		var err error
		m, err = orgs.AddMember(w.ctx, tx, tenant, orgs.NewMember{UserID: u.ID, Role: role, AppRoles: orgs.DefaultAppRoles(role)})
		return err
	}))
	return m
}

func (w *world) invite(tenant, email string, role orgs.MemberRole, inviter identity.User, at time.Time) orgs.IssuedInvitation {
	w.t.Helper()
	var inv orgs.IssuedInvitation
	require.NoError(w.t, w.in(tenant, func(tx pgx.Tx) error {
		var err error
		inv, err = orgs.CreateInvitation(w.ctx, tx, tenant, orgs.NewInvitation{Email: email, Role: role, InviterID: inviter.ID}, at)
		return err
	}))
	return inv
}

func (w *world) accept(tenant, token string, u identity.User, at time.Time) (orgs.Member, error) {
	var m orgs.Member
	err := w.in(tenant, func(tx pgx.Tx) error {
		var err error
		_, m, err = orgs.AcceptInvitation(w.ctx, tx, tenant, token, u.Email, true, u.ID, at)
		return err
	})
	return m, err
}

// tenantTables are the tenant-scoped tables of organizations; organizations and businesses carry
// their tenant as a generated tenant_id.
var tenantTables = []string{"organizations", "businesses", "members", "roles", "member_roles", "invitations"}

func count(t *testing.T, ctx context.Context, tx pgx.Tx, table, where string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM app.`+table+` WHERE `+where, args...).Scan(&n))
	return n
}

// TestRuntimeRoleSeesOneTenant: as the runtime role with tenant A set, nothing of tenant B is
// visible in any organization table, though B has rows in every one of them.
func TestRuntimeRoleSeesOneTenant(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice, bob := w.user("alice@a.test"), w.user("bob@b.test")
	a, b := w.org("A", alice), w.org("B", bob)
	w.invite(a.ID, "new@a.test", orgs.PlainMember, alice, now)
	w.invite(b.ID, "new@b.test", orgs.Admin, bob, now)

	require.NoError(t, w.in(b.ID, func(tx pgx.Tx) error {
		for _, tbl := range tenantTables {
			require.Positive(t, count(t, w.ctx, tx, tbl, `tenant_id = $1`, b.ID), "B has rows in %s", tbl)
		}
		return nil
	}))
	// Tenant A alone, and tenant A with A's own user: B is invisible, A is all there is.
	for _, user := range []string{"", alice.ID} {
		require.NoError(t, db.InScopedTx(w.ctx, w.pool, a.ID, user, func(tx pgx.Tx) error {
			for _, tbl := range tenantTables {
				require.Zero(t, count(t, w.ctx, tx, tbl, `tenant_id = $1`, b.ID), "%s leaks tenant B (user %q)", tbl, user)
				require.Zero(t, count(t, w.ctx, tx, tbl, `tenant_id <> $1`, a.ID), "%s shows another tenant (user %q)", tbl, user)
				require.Positive(t, count(t, w.ctx, tx, tbl, `tenant_id = $1`, a.ID), "%s shows A (user %q)", tbl, user)
			}
			_, err := orgs.ByID(w.ctx, tx, b.ID)
			require.ErrorIs(t, err, orgs.ErrNotFound)
			_, err = orgs.MemberByUser(w.ctx, tx, b.ID, bob.ID)
			require.ErrorIs(t, err, orgs.ErrNotFound)
			invs, err := orgs.PendingInvitations(w.ctx, tx, b.ID, now)
			require.NoError(t, err)
			require.Empty(t, invs)
			return nil
		}))
	}
	// Writes aimed at B from A's transaction are refused by the policies' WITH CHECK.
	err := w.in(a.ID, func(tx pgx.Tx) error {
		_, err := orgs.AddMember(w.ctx, tx, b.ID, orgs.NewMember{UserID: alice.ID, Role: orgs.Owner})
		return err
	})
	require.Error(t, err)
	err = w.in(a.ID, func(tx pgx.Tx) error {
		_, err := orgs.CreateInvitation(w.ctx, tx, b.ID, orgs.NewInvitation{Email: "x@b.test", Role: orgs.Owner, InviterID: alice.ID}, now)
		return err
	})
	require.Error(t, err)
}

// TestUserScopeSeesOwnMemberships: with only the user set, a user sees exactly their own
// memberships and the organizations (and business profiles) they name; nothing else of any tenant.
func TestUserScopeSeesOwnMemberships(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice, bob, carol := w.user("alice@u.test"), w.user("bob@u.test"), w.user("carol@u.test")
	a, b, c := w.org("A", alice), w.org("B", bob), w.org("C", carol)
	mine := []string{w.add(b.ID, alice, orgs.PlainMember).ID}
	w.add(a.ID, bob, orgs.Admin) // bob's membership of A is not alice's to see
	w.invite(c.ID, "alice@u.test", orgs.Admin, carol, now)

	ctx := tenancy.WithActor(w.ctx, alice.ID)
	require.NoError(t, tenancy.InUserTx(ctx, w.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, user_id FROM app.members`)
		require.NoError(t, err)
		type row struct{ ID, User string }
		got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
		require.NoError(t, err)
		var ids []string
		for _, r := range got {
			require.Equal(t, alice.ID, r.User, "only alice's own memberships")
			ids = append(ids, r.ID)
		}
		ms, err := orgs.ListForUser(ctx, tx, alice.ID, "")
		require.NoError(t, err)
		require.Len(t, ms, 2)
		mine = append(mine, ms[0].MemberID) // her ownership of A, created first
		sort.Strings(ids)
		sort.Strings(mine)
		require.Equal(t, mine, ids)
		require.Equal(t, []string{a.ID, b.ID}, []string{ms[0].Organization.ID, ms[1].Organization.ID})
		require.Equal(t, orgs.Owner, ms[0].Role)
		require.Equal(t, orgs.PlainMember, ms[1].Role)

		rows, err = tx.Query(ctx, `SELECT id FROM app.organizations ORDER BY created_at, id`)
		require.NoError(t, err)
		orgIDs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Equal(t, []string{a.ID, b.ID}, orgIDs, "C is not hers")
		require.Equal(t, 2, count(t, ctx, tx, "businesses", "true"))
		for _, tbl := range []string{"roles", "member_roles", "invitations"} {
			require.Zero(t, count(t, ctx, tx, tbl, "true"), "%s needs the tenant; the user scope shows none", tbl)
		}
		return nil
	}))
}

// TestLastOwnerUnderConcurrentDemotions: two owners demote each other's... each other at once:
// exactly one demotion commits, the other is ErrLastOwner, and one owner is left.
func TestLastOwnerUnderConcurrentDemotions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o1, o2 := w.user("o1@race.test"), w.user("o2@race.test")
	org := w.org("Race", o1)
	m2 := w.add(org.ID, o2, orgs.Owner)
	var m1 orgs.Member
	require.NoError(t, w.in(org.ID, func(tx pgx.Tx) error {
		var err error
		m1, err = orgs.MemberByUser(w.ctx, tx, org.ID, o1.ID)
		return err
	}))

	for round := 0; round < 5; round++ {
		demote := func(id string, op string) error {
			return w.in(org.ID, func(tx pgx.Tx) error {
				if op == "remove" {
					_, err := orgs.RemoveMember(w.ctx, tx, org.ID, id)
					return err
				}
				_, err := orgs.UpdateMember(w.ctx, tx, org.ID, id, func(m *orgs.Member) error { m.Role = orgs.Admin; return nil })
				return err
			})
		}
		ops := [][2]string{{"demote", "demote"}, {"demote", "remove"}, {"remove", "remove"}}[round%3]
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i, id := range []string{m1.ID, m2.ID} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = demote(id, ops[i])
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				require.ErrorIs(t, err, orgs.ErrLastOwner, "the loser is refused by the rule, not by a deadlock")
			}
		}
		require.Equal(t, 1, ok, "round %d: exactly one change commits", round)
		var owners []orgs.Member
		require.NoError(t, w.in(org.ID, func(tx pgx.Tx) error {
			var err error
			owners, err = orgs.ListMembers(w.ctx, tx, org.ID, orgs.Owner)
			return err
		}))
		require.Len(t, owners, 1)
		// Restore two owners for the next round.
		require.NoError(t, w.in(org.ID, func(tx pgx.Tx) error {
			for _, u := range []identity.User{o1, o2} {
				m, err := orgs.MemberByUser(w.ctx, tx, org.ID, u.ID)
				if errors.Is(err, orgs.ErrNotFound) {
					if m, err = orgs.AddMember(w.ctx, tx, org.ID, orgs.NewMember{UserID: u.ID, Role: orgs.Owner}); err != nil {
						return err
					}
				} else if err != nil {
					return err
				}
				if _, err := orgs.UpdateMember(w.ctx, tx, org.ID, m.ID, func(m *orgs.Member) error { m.Role = orgs.Owner; return nil }); err != nil {
					return err
				}
				if u.ID == o1.ID {
					m1 = m
				} else {
					m2 = m
				}
			}
			return nil
		}))
	}
}

func TestInvitationLifecycle(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	owner, dawit, eve := w.user("owner@inv.test"), w.user("dawit@inv.test"), w.user("eve@inv.test")
	org := w.org("Inv", owner)

	first := w.invite(org.ID, "Dawit@Inv.test", orgs.Admin, owner, now)
	require.Equal(t, "dawit@inv.test", first.Email, "bound to the normalized e-mail")
	require.Equal(t, now.Add(orgs.InvitationTTL), first.ExpiresAt.UTC())
	require.Empty(t, first.Canceled)
	tenant, ok := orgs.InvitationTenant(first.Token)
	require.True(t, ok)
	require.Equal(t, org.ID, tenant)

	// A second invitation of the same e-mail cancels the first.
	second := w.invite(org.ID, "dawit@inv.test", orgs.PlainMember, owner, now.Add(time.Minute))
	require.Equal(t, []string{first.ID}, second.Canceled)
	_, err := w.accept(org.ID, first.Token, dawit, now.Add(2*time.Minute))
	require.ErrorIs(t, err, orgs.ErrInvalidInvitation, "the canceled link is dead")
	require.NoError(t, w.in(org.ID, func(tx pgx.Tx) error {
		invs, err := orgs.PendingInvitations(w.ctx, tx, org.ID, now.Add(2*time.Minute))
		require.NoError(t, err)
		require.Len(t, invs, 1)
		require.Equal(t, second.ID, invs[0].ID)
		return nil
	}))

	// Bound to the e-mail: eve holding dawit's token is refused, and it stays usable for dawit.
	var mismatch orgs.Invitation
	err = w.in(org.ID, func(tx pgx.Tx) error {
		var err error
		mismatch, _, err = orgs.AcceptInvitation(w.ctx, tx, org.ID, second.Token, eve.Email, true, eve.ID, now)
		return err
	})
	require.ErrorIs(t, err, orgs.ErrInvitationEmail)
	require.Equal(t, second.ID, mismatch.ID)

	// A wrong tenant for a real token finds nothing.
	other := w.org("Other", eve)
	_, err = w.accept(other.ID, second.Token, dawit, now)
	require.ErrorIs(t, err, orgs.ErrInvalidInvitation)

	m, err := w.accept(org.ID, second.Token, dawit, now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, orgs.PlainMember, m.Role)
	require.Equal(t, orgs.Active, m.Status)
	require.Empty(t, m.AppRoles, "members start without application roles")
	_, err = w.accept(org.ID, second.Token, dawit, now.Add(time.Hour))
	require.ErrorIs(t, err, orgs.ErrInvalidInvitation, "single use")

	// Expiry: usable until just before InvitationTTL, not at it.
	third := w.invite(org.ID, "eve@inv.test", orgs.Admin, owner, now)
	_, err = w.accept(org.ID, third.Token, eve, now.Add(orgs.InvitationTTL))
	require.ErrorIs(t, err, orgs.ErrInvalidInvitation)
	m, err = w.accept(org.ID, third.Token, eve, now.Add(orgs.InvitationTTL-time.Second))
	require.NoError(t, err)
	require.Equal(t, []string{orgs.AdminRole}, m.AppRoles, "admins start with organization_admin")

	// An invitation of someone who became a member meanwhile cannot add them twice.
	fourth := w.invite(org.ID, "eve@inv.test", orgs.Owner, owner, now)
	_, err = w.accept(org.ID, fourth.Token, eve, now)
	require.ErrorIs(t, err, orgs.ErrAlreadyMember)
}

func TestInvitationAcceptedOnceUnderRace(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	owner, fana := w.user("owner@once.test"), w.user("fana@once.test")
	org := w.org("Once", owner)
	inv := w.invite(org.ID, fana.Email, orgs.Admin, owner, now)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = w.accept(org.ID, inv.Token, fana, now)
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		require.ErrorIs(t, err, orgs.ErrInvalidInvitation)
	}
	require.Equal(t, 1, ok)
}

func TestInvitationTokenShape(t *testing.T) {
	t.Parallel()
	good := "org_0192.abc" + identity.NewToken()[3:]
	_, ok := orgs.InvitationTenant(good)
	require.True(t, ok)
	for _, bad := range []string{"", ".", "org", identity.NewToken(), "org_1." + identity.NewToken() + "x",
		"org 1." + identity.NewToken(), "org_1." + identity.NewToken()[:42] + "=", "org_1.." + identity.NewToken()[1:]} {
		_, ok := orgs.InvitationTenant(bad)
		require.False(t, ok, "%q", bad)
	}
}

func FuzzInvitationTenant(f *testing.F) {
	for _, s := range []string{"", "a.b", "org_1." + identity.NewToken(), "\xff.\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		tenant, ok := orgs.InvitationTenant(token)
		if ok && (tenant == "" || len(token) != len(tenant)+1+43) {
			t.Fatalf("accepted %q as %q", token, tenant)
		}
	})
}

func TestAppRolesFollowMemberRole(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"clerk", orgs.AdminRole}, orgs.AppRolesAfterRoleChange([]string{"clerk"}, orgs.PlainMember, orgs.Admin))
	require.Equal(t, []string{"clerk"}, orgs.AppRolesAfterRoleChange([]string{orgs.AdminRole, "clerk"}, orgs.Owner, orgs.PlainMember))
	require.Equal(t, []string{orgs.AdminRole}, orgs.AppRolesAfterRoleChange([]string{orgs.AdminRole}, orgs.Admin, orgs.Owner))
	require.Empty(t, orgs.AppRolesAfterRoleChange(nil, orgs.PlainMember, orgs.PlainMember))
	require.Equal(t, []string{orgs.AdminRole}, orgs.DefaultAppRoles(orgs.Owner))
	require.Nil(t, orgs.DefaultAppRoles(orgs.PlainMember))
}
