package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
)

// End-to-end tests of /api/members/* over the contract client.

type membersDetail struct {
	Member orgAuthMember `json:"member"`
}

func TestMembersMe(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUp("owner@me.test", "BUSINESS")
	rec := owner.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	me := decode[membersDetail](t, rec).Member
	require.Equal(t, res.User.ID, me.UserID)
	require.Equal(t, res.Organization.ID, me.OrganizationID)
	require.Equal(t, "owner", me.Role)
	require.Equal(t, "ACTIVE", me.Status)
	require.Equal(t, []string{"organization_admin"}, me.AppRoles)
	require.Equal(t, map[string][]string(orgs.Union(orgs.Full(orgs.Business))), me.Permissions, "the union of the roles: all a business may grant")

	// A plain member starts with no permission.
	member, _ := f.orgAuthJoin(owner, res.Organization.ID, "member@me.test", "member")
	rec = member.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	me = decode[membersDetail](t, rec).Member
	require.Equal(t, "member", me.Role)
	require.Empty(t, me.AppRoles)
	require.Empty(t, me.Permissions)

	// No active organization (a platform admin here): 404 NO_ACTIVE_MEMBERSHIP; no session: 401.
	p := f.platformAdmin("root@me.test")
	rec = p.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "NO_ACTIVE_MEMBERSHIP", errCode(rec))
	require.Equal(t, http.StatusUnauthorized, f.client().call(http.MethodGet, pathMembersMe, nil).Code)
}

func TestMembersGetPatchDelete(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUp("owner@members.test", "BUSINESS")
	org := res.Organization.ID
	ownerID := res.User.ID
	admin, adminID := f.orgAuthJoin(owner, org, "admin@members.test", "admin")
	member, memberID := f.orgAuthJoin(owner, org, "member@members.test", "member")

	// GET: admins read any member of the active organization, with permissions.
	rec := admin.call(http.MethodGet, pathMemberOf+memberID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[membersDetail](t, rec).Member
	require.Equal(t, "member@members.test", got.Email)
	require.Equal(t, "member", got.Role)
	require.NotNil(t, got.Permissions)
	rec = member.call(http.MethodGet, pathMemberOf+adminID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = admin.call(http.MethodGet, pathMemberOf+"user-nobody", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = admin.hostile(http.MethodGet, pathMemberOf+"a%20b", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	rec = f.platformAdmin("root@members.test").call(http.MethodGet, pathMemberOf+memberID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "TENANT_CONTEXT_MISSING", errCode(rec), "the active organization's route needs one")

	// PATCH roles: the member gains organization_admin's permissions at once.
	rec = admin.call(http.MethodPatch, pathMemberOf+memberID+"/roles", map[string]any{"appRoles": []string{"organization_admin", "organization_admin"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[membersDetail](t, rec).Member
	require.Equal(t, []string{"organization_admin"}, got.AppRoles)
	require.Equal(t, map[string][]string(orgs.Union(orgs.Full(orgs.Business))), got.Permissions)
	rec = member.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, map[string][]string(orgs.Union(orgs.Full(orgs.Business))), decode[membersDetail](t, rec).Member.Permissions)
	require.Equal(t, 1, f.orgAuthAudits(org, "UpdateMemberRoles", "SUCCESS"))
	// The pipeline's cached access of the member is dropped with the change: a member request
	// fills it, a role change empties it.
	require.Equal(t, http.StatusForbidden, member.call(http.MethodGet, pathMemberOf+adminID, nil).Code)
	rec = admin.call(http.MethodPatch, pathMemberOf+memberID+"/roles", map[string]any{"appRoles": []string{}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	reloaded := false
	_, err := f.srv.access.Get(memberID, org, func() (orgs.Access, error) { reloaded = true; return orgs.Access{}, nil })
	require.NoError(t, err)
	require.True(t, reloaded, "the change invalidated the member's cached access")
	f.srv.access.Invalidate(memberID, org)
	rec = member.call(http.MethodGet, pathMembersMe, nil)
	me := decode[membersDetail](t, rec).Member
	require.Empty(t, me.AppRoles)
	require.Empty(t, me.Permissions)

	// Unknown role names: 400 UNKNOWN_ROLE and nothing changes.
	rec = admin.call(http.MethodPatch, pathMemberOf+memberID+"/roles", map[string]any{"appRoles": []string{"organization_admin", "payroll_god"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "UNKNOWN_ROLE", errCode(rec))
	rec = member.call(http.MethodGet, pathMembersMe, nil)
	require.Empty(t, decode[membersDetail](t, rec).Member.AppRoles)

	// Only an owner changes an owner's roles (audited when refused).
	rec = admin.call(http.MethodPatch, pathMemberOf+ownerID+"/roles", map[string]any{"appRoles": []string{}})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	require.Equal(t, 1, f.orgAuthAudits(org, "UpdateMemberRoles", "DENIED"))
	rec = owner.call(http.MethodPatch, pathMemberOf+ownerID+"/roles", map[string]any{"appRoles": []string{"organization_admin"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = admin.call(http.MethodPatch, pathMemberOf+"user-nobody/roles", map[string]any{"appRoles": []string{}})
	require.Equal(t, http.StatusNotFound, rec.Code)

	// Bad bodies.
	many := make([]string, 33)
	for i := range many {
		many[i] = "r"
	}
	for _, body := range []any{
		`{"appRoles":null}`, `{}`, `{"appRoles":"organization_admin"}`, `{"appRoles":[],"role":"owner"}`,
		map[string]any{"appRoles": many}, map[string]any{"appRoles": []string{"a\x00"}}, map[string]any{"appRoles": []string{" "}},
		map[string]any{"appRoles": []string{strings.Repeat("r", 257)}},
	} {
		rec := admin.hostile(http.MethodPatch, pathMemberOf+memberID+"/roles", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", body, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec))
	}

	// DELETE: an admin cannot remove an owner; nobody the last owner; the member goes, at once.
	rec = admin.call(http.MethodDelete, pathMemberOf+ownerID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = owner.call(http.MethodDelete, pathMemberOf+ownerID, nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	require.Equal(t, 2, f.orgAuthAudits(org, "RemoveMember", "DENIED"))
	rec = member.call(http.MethodDelete, pathMemberOf+adminID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code, "members cannot remove anyone")
	require.Equal(t, http.StatusOK, member.call(http.MethodGet, pathMembersMe, nil).Code)
	rec = admin.call(http.MethodDelete, pathMemberOf+memberID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, memberID, decode[membersDetail](t, rec).Member.UserID)
	require.Equal(t, 1, f.orgAuthAudits(org, "RemoveMember", "SUCCESS"))
	rec = member.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "NO_ACTIVE_MEMBERSHIP", errCode(rec))
	rec = member.call(http.MethodDelete, pathMemberOf+adminID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	rec = admin.call(http.MethodDelete, pathMemberOf+memberID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "already gone")
}

// TestMembersRolesNotGrantable: an admin who does not hold a role's permissions cannot grant it
// (or any admin could hand themselves organization_admin); the refusal changes nothing.
func TestMembersRolesNotGrantable(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	_, res := f.signUp("owner@grant.test", "BUSINESS")
	f.addMember(res.Organization.ID, "bare-admin@grant.test", orgs.Admin)
	admin := f.signIn("bare-admin@grant.test")
	var adminID string
	require.NoError(t, f.d.App.QueryRow(context.Background(), `SELECT id FROM app.users WHERE email = 'bare-admin@grant.test'`).Scan(&adminID))
	rec := admin.call(http.MethodPatch, pathMemberOf+adminID+"/roles", map[string]any{"appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "ROLE_NOT_GRANTABLE", errCode(rec))
	rec = admin.call(http.MethodGet, "/api/members/me", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), orgs.AdminRole, "the refused grant changed nothing")
}
