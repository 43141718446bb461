package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
)

// TestOrganizationRequiresTwoFactor: an owner requires two-factor of the organization's members.
// Before the owner has it on, the requirement is refused TWO_FACTOR_NOT_ENABLED (audited, nothing
// changed); once set (audited once; setting it again changes nothing), a member with two-factor
// off is refused TWO_FACTOR_SETUP_REQUIRED on the organization's routes and on the auth
// organization routes that act in it, but may still turn two-factor on, read their session and
// leave; turning it on lets them in, turning it off keeps them out again, and lifting the
// requirement lets everyone back. Another organization is not touched; admins may not set it;
// bodies that are not the policy are 400.
func TestOrganizationRequiresTwoFactor(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	owner, res := f.signUp("owner@policy.test", "BUSINESS")
	tenant := res.Organization.ID
	f.addMember(tenant, "admin@policy.test", orgs.Admin)
	f.addMember(tenant, "clerk@policy.test", orgs.PlainMember)
	f.addMember(tenant, "leaver@policy.test", orgs.PlainMember)
	admin, clerk, leaver := f.signIn("admin@policy.test"), f.signIn("clerk@policy.test"), f.signIn("leaver@policy.test")
	otherOwner, _ := f.signUp("owner@policy-other.test", "BUSINESS")
	const path = "/api/organization/security-policy"
	policy := func(a *apiClient) securityPolicyJSON {
		t.Helper()
		rec := a.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[securityPolicyJSON](t, rec)
	}
	put := func(a *apiClient, on bool) securityPolicyJSON {
		t.Helper()
		rec := a.call(http.MethodPut, path, map[string]any{"requireTwoFactor": on})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[securityPolicyJSON](t, rec)
	}
	kept := func(a *apiClient) {
		t.Helper()
		requireStatus(t, a.call(http.MethodGet, path, nil), http.StatusForbidden, "TWO_FACTOR_SETUP_REQUIRED")
		requireStatus(t, a.call(http.MethodGet, "/api/employees", nil), http.StatusForbidden, "TWO_FACTOR_SETUP_REQUIRED")
	}

	got := policy(clerk)
	require.Equal(t, securityPolicyJSON{OrganizationID: tenant, MembersWithoutTwoFactor: 4}, got)
	requireStatus(t, admin.call(http.MethodPut, path, map[string]any{"requireTwoFactor": true}), http.StatusForbidden, "INSUFFICIENT_ROLE")
	requireStatus(t, owner.call(http.MethodPut, path, map[string]any{"requireTwoFactor": true}), http.StatusConflict, "TWO_FACTOR_NOT_ENABLED")
	require.Equal(t, 1, authxAudits(t, f, actionUpdateSecurityPolicy, "DENIED"))
	require.False(t, policy(owner).RequireTwoFactor)
	for _, body := range []any{map[string]any{}, map[string]any{"requireTwoFactor": "yes"}, map[string]any{"requireTwoFactor": nil},
		map[string]any{"requireTwoFactor": true, "requireWebAuthn": true}, []byte(`{"requireTwoFactor":true,"requireTwoFactor":false}`)} {
		requireStatus(t, owner.hostile(http.MethodPut, path, body), http.StatusBadRequest, "INVALID_REQUEST")
	}

	// The owner turns two-factor on, then requires it.
	authxEnableTwoFactor(t, f, owner)
	got = put(owner, true)
	require.True(t, got.RequireTwoFactor)
	require.Equal(t, 3, got.MembersWithoutTwoFactor)
	require.Equal(t, bizUserID(t, owner), *got.UpdatedBy)
	require.NotNil(t, got.UpdatedAt)
	require.Equal(t, got, put(owner, true), "setting it again changes nothing")
	require.Equal(t, 1, authxAudits(t, f, actionUpdateSecurityPolicy, "SUCCESS"))

	// Members without two-factor are kept out, on the organization's routes and the auth
	// organization routes; their own account stays theirs.
	kept(clerk)
	kept(admin)
	requireStatus(t, admin.call(http.MethodPost, "/api/auth/organization/invite-member",
		map[string]any{"organizationId": tenant, "email": "new@policy.test", "role": "member"}), http.StatusForbidden, "TWO_FACTOR_SETUP_REQUIRED")
	require.Equal(t, http.StatusOK, clerk.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	rec := leaver.call(http.MethodPost, "/api/auth/organization/leave", map[string]any{"organizationId": tenant})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, otherOwner.call(http.MethodGet, path, nil).Code, "another organization is not held to it")

	// Two-factor on lets the clerk in; off keeps them out again.
	authxEnableTwoFactor(t, f, clerk)
	require.Equal(t, 1, policy(clerk).MembersWithoutTwoFactor, "the admin")
	require.Equal(t, http.StatusOK, clerk.call(http.MethodGet, "/api/employees", nil).Code)
	rec = clerk.call(http.MethodPost, "/api/auth/two-factor/disable", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	kept(clerk)
	require.Positive(t, authxAudits(t, f, "AccessRoute", "DENIED"))

	// Lifting the requirement lets everyone back.
	require.False(t, put(owner, false).RequireTwoFactor)
	require.Equal(t, 2, authxAudits(t, f, actionUpdateSecurityPolicy, "SUCCESS"))
	require.Equal(t, http.StatusOK, admin.call(http.MethodGet, "/api/employees", nil).Code)
	require.Equal(t, http.StatusOK, clerk.call(http.MethodGet, path, nil).Code)
}

// FuzzSecurityPolicy: hostile bodies to the policy route, as its owner (who has two-factor off)
// or a plain member: a 4xx or, for the owner's exact {"requireTwoFactor": false}, 200; never a
// 5xx, and the requirement is never switched on.
func FuzzSecurityPolicy(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("fuzz-policy@example.com", "BUSINESS")
	fx.addMember(res.Organization.ID, "fuzz-policy-clerk@example.com", orgs.PlainMember)
	clerk := fx.signIn("fuzz-policy-clerk@example.com")
	for _, body := range []string{`{"requireTwoFactor":true}`, `{"requireTwoFactor":false}`, `{"requireTwoFactor":1}`, `{"requireTwoFactor":"true"}`,
		`{"requireTwoFactor":null}`, `{}`, `[]`, `{"requireTwoFactor":false,"x":1}`, "{\"requireTwoFactor\":fals\u0000e}", "\xff", ""} {
		f.Add(body, false)
		f.Add(body, true)
	}
	f.Fuzz(func(t *testing.T, body string, asClerk bool) {
		a := owner.clone()
		if asClerk {
			a = clerk.clone()
		}
		a.t = t
		rec := a.hostile(http.MethodPut, "/api/organization/security-policy", body, "Content-Type", "application/json")
		requireNoServerError(t, rec, body)
		if rec.Code == http.StatusOK {
			require.False(t, asClerk, "a plain member set the policy")
			require.False(t, decode[securityPolicyJSON](t, rec).RequireTwoFactor)
		}
		got := owner.clone()
		got.t = t
		rec = got.call(http.MethodGet, "/api/organization/security-policy", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.False(t, decode[securityPolicyJSON](t, rec).RequireTwoFactor, "switched on by %q", body)
	})
}
