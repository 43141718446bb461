package orgs_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var checkActor = tenancy.WithActor(context.Background(), tenancy.System("admin-cli"))

// runChecks runs the checks as `wagerail admin check` does: through the audited cross-tenant path.
func runChecks(t *testing.T, d *testkit.DB) map[string]orgs.CheckResult {
	t.Helper()
	var res []orgs.CheckResult
	require.NoError(t, crosstenant.Tx(checkActor, d.Platform(t), "pre-deploy checks", func(tx pgx.Tx) error {
		var err error
		res, err = orgs.PreDeployChecks(checkActor, tx)
		return err
	}))
	names := make([]string, 0, len(res))
	out := map[string]orgs.CheckResult{}
	for _, r := range res {
		names = append(names, r.Name)
		require.NotEmpty(t, r.Requirement, r.Name)
		if r.Name != orgs.CheckPlatformAdminExists { // a missing row, not offending ones
			require.Equal(t, r.Count == 0, r.OK, "%s: ok exactly when nothing breaks it", r.Name)
		}
		out[r.Name] = r
	}
	require.Equal(t, []string{orgs.CheckMemberRoleSet, orgs.CheckMemberRolesKnown, orgs.CheckBusinessesPaired, orgs.CheckPlatformAdminExists}, names,
		"every check, in order, failed or not")
	return out
}

// newOrg signs a user up into a new organization of kind k, as the API does (runtime role, RLS).
func newOrg(t *testing.T, d *testkit.DB, email string, k orgs.Kind) (identity.User, orgs.Organization) {
	t.Helper()
	ctx := context.Background()
	u, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: email, Name: "Owner"})
	require.NoError(t, err)
	var o orgs.Organization
	id := orgs.NewOrganizationID()
	require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
		o, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Org " + email, Kind: k}, u.ID)
		return err
	}))
	return u, o
}

func TestPreDeployChecksPassOnHealthyData(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	for _, k := range orgs.Kinds {
		newOrg(t, d, "owner-"+string(k)+"@example.org", k)
	}
	admin, err := identity.CreateUser(context.Background(), d.Platform(t), identity.NewUser{Email: "root@example.org", Name: "Root"})
	require.NoError(t, err)
	require.NoError(t, identity.MakePlatformAdmin(context.Background(), d.Platform(t), admin.ID))

	for name, r := range runChecks(t, d) {
		require.True(t, r.OK, "%s: %+v", name, r)
		require.Empty(t, r.Offenders, name)
	}
}

// A fresh install has no platform admin: that check alone fails (rows every constraint allows).
func TestPreDeployChecksWantAPlatformAdmin(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	newOrg(t, d, "owner@example.org", orgs.Business)
	res := runChecks(t, d)
	require.False(t, res[orgs.CheckPlatformAdminExists].OK)
	for _, n := range []string{orgs.CheckMemberRoleSet, orgs.CheckMemberRolesKnown, orgs.CheckBusinessesPaired} {
		require.True(t, res[n].OK, n)
	}
	// A user without the PLATFORM profile does not count.
	var n int
	require.NoError(t, d.App.QueryRow(context.Background(), `SELECT count(*) FROM app.users`).Scan(&n))
	require.Equal(t, 1, n)
}

// Each check fails on the data it guards against, and names the offending rows. The schema refuses
// a null or unknown member role and a business without an organization (NOT NULL, the
// members_role CHECK, the foreign key), which is the point; the checks exist for databases that
// predate those constraints or had them dropped. So this test drops them in its own database copy,
// as the owner role, and writes the bad rows past them. A BUSINESS organization without its
// business row, and a business row whose organization is not a business, need no dropped
// constraint: the schema allows both.
func TestPreDeployChecksEachFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testkit.NewDB(t)
	owner, err := db.Open(ctx, d.OwnerDSN, 2)
	require.NoError(t, err)
	t.Cleanup(owner.Close)

	u, biz := newOrg(t, d, "owner@example.org", orgs.Business)
	_, fi := newOrg(t, d, "fi@example.org", orgs.FI)
	other, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "other@example.org", Name: "Other"})
	require.NoError(t, err)
	third, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "third@example.org", Name: "Third"})
	require.NoError(t, err)
	fourth, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "fourth@example.org", Name: "Fourth"})
	require.NoError(t, err)

	_, err = owner.Exec(ctx, `ALTER TABLE app.members DROP CONSTRAINT members_role;
		ALTER TABLE app.members ALTER COLUMN role DROP NOT NULL;
		ALTER TABLE app.businesses DROP CONSTRAINT businesses_id_fkey`)
	require.NoError(t, err)
	// RLS is FORCED, so the owner too writes inside its tenant.
	require.NoError(t, db.InTenantTx(ctx, owner, biz.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.members (id, tenant_id, user_id, role) VALUES
			('mem_null', $1, $2, NULL), ('mem_super', $1, $3, 'superuser'), ('mem_ctl', $1, $4, E'x\nowner')`,
			biz.ID, other.ID, third.ID, fourth.ID)
		return err
	}))
	require.NoError(t, db.InTenantTx(ctx, owner, fi.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.members (id, tenant_id, user_id, role) VALUES ('mem_root', $1, $2, 'root')`, fi.ID, u.ID)
		return err
	}))
	// A business profile with no organization at all.
	require.NoError(t, db.InTenantTx(ctx, owner, "org_orphan", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.businesses (id) VALUES ('org_orphan')`)
		return err
	}))
	// Allowed by every constraint: a business profile on the FI organization, and a BUSINESS
	// organization created without its profile.
	require.NoError(t, db.InTenantTx(ctx, d.App, fi.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.businesses (id) VALUES ($1)`, fi.ID)
		return err
	}))
	require.NoError(t, db.InTenantTx(ctx, d.App, "org_bare", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.organizations (id, kind, name) VALUES ('org_bare', 'BUSINESS', 'Bare')`)
		return err
	}))

	res := runChecks(t, d)
	require.Equal(t, orgs.CheckResult{Name: orgs.CheckMemberRoleSet, Requirement: res[orgs.CheckMemberRoleSet].Requirement,
		Count: 1, Offenders: []string{"mem_null"}}, res[orgs.CheckMemberRoleSet])
	require.Equal(t, orgs.CheckResult{Name: orgs.CheckMemberRolesKnown, Requirement: res[orgs.CheckMemberRolesKnown].Requirement,
		Count: 3, Offenders: []string{"root", "superuser", "x?owner"}}, res[orgs.CheckMemberRolesKnown])
	want := []string{"org_bare", fi.ID, "org_orphan"}
	require.ElementsMatch(t, want, res[orgs.CheckBusinessesPaired].Offenders)
	require.Equal(t, int64(3), res[orgs.CheckBusinessesPaired].Count)
	require.False(t, res[orgs.CheckBusinessesPaired].OK)
	require.False(t, res[orgs.CheckPlatformAdminExists].OK)

	// Repaired one by one, each check passes again.
	require.NoError(t, db.InTenantTx(ctx, owner, biz.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.members SET role = 'member' WHERE id IN ('mem_null', 'mem_super', 'mem_ctl')`)
		return err
	}))
	res = runChecks(t, d)
	require.True(t, res[orgs.CheckMemberRoleSet].OK)
	require.Equal(t, []string{"root"}, res[orgs.CheckMemberRolesKnown].Offenders)
	require.NoError(t, db.InTenantTx(ctx, owner, fi.ID, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.members SET role = 'admin' WHERE id = 'mem_root'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM app.businesses WHERE id = $1`, fi.ID)
		return err
	}))
	require.NoError(t, db.InTenantTx(ctx, owner, "org_orphan", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM app.businesses WHERE id = 'org_orphan'`)
		return err
	}))
	require.NoError(t, db.InTenantTx(ctx, d.App, "org_bare", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.businesses (id) VALUES ('org_bare')`)
		return err
	}))
	require.NoError(t, identity.MakePlatformAdmin(ctx, d.Platform(t), u.ID))
	for name, r := range runChecks(t, d) {
		require.True(t, r.OK, "%s: %+v", name, r)
	}
}

// A long list of offenders is counted in full and listed in part.
func TestPreDeployChecksBoundTheOffenderList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testkit.NewDB(t)
	for i := 0; i < 25; i++ {
		id := orgs.NewOrganizationID()
		require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.organizations (id, kind, name) VALUES ($1, 'BUSINESS', 'No profile')`, id)
			return err
		}))
	}
	r := runChecks(t, d)[orgs.CheckBusinessesPaired]
	require.False(t, r.OK)
	require.Equal(t, int64(25), r.Count)
	require.Len(t, r.Offenders, 20)
}

// Inside one tenant's transaction the checks would pass on rows they cannot see: refused.
func TestPreDeployChecksRefuseATenantScopedTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testkit.NewDB(t)
	_, o := newOrg(t, d, "owner@example.org", orgs.Business)
	err := db.InTenantTx(ctx, d.App, o.ID, func(tx pgx.Tx) error {
		_, err := orgs.PreDeployChecks(ctx, tx)
		return err
	})
	require.ErrorIs(t, err, orgs.ErrNotCrossTenant)
	// The platform role without crosstenant.Tx is tenant-scoped too.
	err = pgx.BeginFunc(ctx, d.Platform(t), func(tx pgx.Tx) error {
		_, err := orgs.PreDeployChecks(ctx, tx)
		return err
	})
	require.ErrorIs(t, err, orgs.ErrNotCrossTenant)
}
