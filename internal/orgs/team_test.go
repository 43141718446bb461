package orgs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// teamOrg makes a business with an owner and returns its id and the owner's membership.
func teamOrg(t *testing.T, d *testkit.DB, email string) (string, orgs.Member) {
	t.Helper()
	ctx := context.Background()
	id := orgs.NewOrganizationID()
	var owner *orgs.Member
	require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: email, Name: "Owner", PasswordHash: "x"})
		if err != nil {
			return err
		}
		_, owner, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Org", Kind: orgs.Business}, u.ID)
		return err
	}))
	return id, *owner
}

func teamInTenant(t *testing.T, d *testkit.DB, tenant string, fn func(ctx context.Context, tx pgx.Tx) error) error {
	t.Helper()
	ctx := context.Background()
	return db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error { return fn(ctx, tx) })
}

func TestCheckAppRoles(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, _ := teamOrg(t, d, "a@example.com")
	b, _ := teamOrg(t, d, "b@example.com")
	require.NoError(t, teamInTenant(t, d, a, func(ctx context.Context, tx pgx.Tx) error {
		roles, err := orgs.CheckAppRoles(ctx, tx, a, nil)
		require.NoError(t, err)
		require.Empty(t, roles)
		roles, err = orgs.CheckAppRoles(ctx, tx, a, []string{orgs.AdminRole, orgs.AdminRole})
		require.NoError(t, err)
		require.Len(t, roles, 1)
		require.Equal(t, orgs.Full(orgs.Business), roles[0].Permissions)
		_, err = orgs.CheckAppRoles(ctx, tx, a, []string{orgs.AdminRole, "payroll_boss"})
		require.ErrorIs(t, err, orgs.ErrUnknownRole)
		// Another tenant's catalog is not this one's, even for the same name.
		_, err = orgs.CheckAppRoles(ctx, tx, b, []string{orgs.AdminRole})
		require.ErrorIs(t, err, orgs.ErrUnknownRole)
		return nil
	}))
}

func TestCovers(t *testing.T) {
	t.Parallel()
	full := orgs.Full(orgs.Business)
	view := orgs.Permissions{"payroll": {"view"}}
	for _, tc := range []struct {
		holder, grant orgs.Permissions
		want          bool
	}{
		{nil, nil, true},
		{nil, orgs.Permissions{}, true},
		{orgs.Permissions{}, view, false},
		{view, view, true},
		{view, orgs.Permissions{"payroll": {"view", "approve"}}, false},
		{full, view, true},
		{view, full, false},
		{full, full, true},
		{orgs.Permissions{"payroll": {"view"}}, orgs.Permissions{"employees": {"view"}}, false},
	} {
		require.Equal(t, tc.want, orgs.Covers(tc.holder, tc.grant), "%v covers %v", tc.holder, tc.grant)
	}
}

func TestRemovePending(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	a, owner := teamOrg(t, d, "owner-a@example.com")
	b, ownerB := teamOrg(t, d, "owner-b@example.com")
	invitee, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "invitee@example.com", Name: "Invitee"})
	require.NoError(t, err)
	var pending orgs.Member
	require.NoError(t, teamInTenant(t, d, a, func(ctx context.Context, tx pgx.Tx) error {
		pending, err = orgs.AddMember(ctx, tx, a, orgs.NewMember{UserID: invitee.ID, Role: orgs.Admin, Status: orgs.Invited,
			AppRoles: []string{orgs.AdminRole}})
		return err
	}))

	err = teamInTenant(t, d, a, func(ctx context.Context, tx pgx.Tx) error {
		_, err := orgs.RemovePending(ctx, tx, a, owner.ID)
		return err
	})
	require.ErrorIs(t, err, orgs.ErrNotPending, "an accepted membership is never deleted this way")
	err = teamInTenant(t, d, a, func(ctx context.Context, tx pgx.Tx) error {
		_, err := orgs.RemovePending(ctx, tx, a, ownerB.ID)
		return err
	})
	require.ErrorIs(t, err, orgs.ErrNotFound, "another tenant's member is not found")
	err = teamInTenant(t, d, b, func(ctx context.Context, tx pgx.Tx) error {
		_, err := orgs.RemovePending(ctx, tx, b, pending.ID)
		return err
	})
	require.ErrorIs(t, err, orgs.ErrNotFound, "nor from the other side")

	require.NoError(t, teamInTenant(t, d, a, func(ctx context.Context, tx pgx.Tx) error {
		m, err := orgs.RemovePending(ctx, tx, a, pending.ID)
		require.NoError(t, err)
		require.Equal(t, pending.ID, m.ID)
		require.Equal(t, orgs.Invited, m.Status)
		_, err = orgs.MemberByID(ctx, tx, a, pending.ID)
		require.ErrorIs(t, err, orgs.ErrNotFound)
		var roles int
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM app.member_roles WHERE member_id = $1`, pending.ID).Scan(&roles))
		require.Zero(t, roles, "its application roles went with it")
		_, err = orgs.RemovePending(ctx, tx, a, pending.ID)
		require.ErrorIs(t, err, orgs.ErrNotFound)
		return nil
	}))
}

// TestSpendTokens: spending a user's set-up tokens retires exactly those (identity.SpendTokens is
// team-member management's; identity has no test binary of its own to hold this).
func TestSpendTokens(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	u, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "setup@example.com", Name: "U"})
	require.NoError(t, err)
	other, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "other@example.com", Name: "O"})
	require.NoError(t, err)
	issue := func(p identity.Purpose, user identity.User) string {
		tok, err := identity.IssueToken(ctx, d.App, p, user.ID, user.Email, time.Hour, now)
		require.NoError(t, err)
		return tok
	}
	s1, s2 := issue(identity.AccountSetup, u), issue(identity.AccountSetup, u)
	reset := issue(identity.ResetPassword, u)
	others := issue(identity.AccountSetup, other)

	n, err := identity.SpendTokens(ctx, d.App, identity.AccountSetup, u.ID, now)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	for _, tok := range []string{s1, s2} {
		_, err := identity.ConsumeToken(ctx, d.App, identity.AccountSetup, tok, now)
		require.ErrorIs(t, err, identity.ErrInvalidSecret)
	}
	_, err = identity.ConsumeToken(ctx, d.App, identity.ResetPassword, reset, now)
	require.NoError(t, err, "another purpose is untouched")
	_, err = identity.ConsumeToken(ctx, d.App, identity.AccountSetup, others, now)
	require.NoError(t, err, "another user's is untouched")
	n, err = identity.SpendTokens(ctx, d.App, identity.AccountSetup, u.ID, now)
	require.NoError(t, err)
	require.Zero(t, n)
	fresh := issue(identity.AccountSetup, u)
	_, err = identity.ConsumeToken(ctx, d.App, identity.AccountSetup, fresh, now)
	require.NoError(t, err, "a token minted afterwards works")
}
