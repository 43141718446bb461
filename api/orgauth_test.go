package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// End-to-end tests of /api/auth/organization/* over the contract client.

type orgAuthMember struct {
	ID             string              `json:"id"`
	OrganizationID string              `json:"organizationId"`
	UserID         string              `json:"userId"`
	Email          string              `json:"email"`
	Role           string              `json:"role"`
	Status         string              `json:"status"`
	AppRoles       []string            `json:"appRoles"`
	Permissions    map[string][]string `json:"permissions"`
}

type orgAuthInvitation struct {
	ID             string    `json:"id"`
	OrganizationID string    `json:"organizationId"`
	Email          string    `json:"email"`
	Role           string    `json:"role"`
	Status         string    `json:"status"`
	ExpiresAt      time.Time `json:"expiresAt"`
}

type orgAuthFull struct {
	Organization struct {
		ID     string `json:"id"`
		Kind   string `json:"kind"`
		Status string `json:"status"`
	} `json:"organization"`
	Members []orgAuthMember `json:"members"`
	Roles   []struct {
		Name        string              `json:"name"`
		Builtin     bool                `json:"builtin"`
		Permissions map[string][]string `json:"permissions"`
	} `json:"roles"`
	Invitations *[]orgAuthInvitation `json:"invitations"`
}

func (x orgAuthFull) member(t *testing.T, email string) orgAuthMember {
	t.Helper()
	for _, m := range x.Members {
		if m.Email == email {
			return m
		}
	}
	t.Fatalf("no member %s in %s", email, x.Organization.ID)
	return orgAuthMember{}
}

const (
	pathCreateOrg   = "/api/auth/organization/create"
	pathInvite      = "/api/auth/organization/invite-member"
	pathAccept      = "/api/auth/organization/accept-invitation"
	pathLeave       = "/api/auth/organization/leave"
	pathUpdateRole  = "/api/auth/organization/update-member-role"
	pathRemove      = "/api/auth/organization/remove-member"
	pathListOrgs    = "/api/auth/organization/list"
	pathFullOrg     = "/api/auth/organization/get-full-organization"
	pathMembersMe   = "/api/members/me"
	pathMemberOf    = "/api/members/"
	orgAuthTestKind = "BUSINESS"
)

// orgAuthInvitationToken is the token of the latest invitation mailed to email, read from the link
// as the user would open it.
func (f *authFixture) orgAuthInvitationToken(email string) string {
	f.t.Helper()
	m, ok := f.inbox.LatestEmail(email, notify.Invitation)
	require.True(f.t, ok, "no invitation mailed to %s", email)
	require.Contains(f.t, m.Text, m.Secret)
	u, err := url.Parse(m.Secret)
	require.NoError(f.t, err)
	require.Equal(f.t, "/accept-invitation", u.Path)
	tok := u.Query().Get("token")
	require.NotEmpty(f.t, tok)
	return tok
}

// orgAuthInvite invites email to orgID as role (the inviter must be allowed) and returns the
// mailed token.
func (f *authFixture) orgAuthInvite(inviter *apiClient, orgID, email, role string) string {
	f.t.Helper()
	rec := inviter.call(http.MethodPost, pathInvite, map[string]any{"organizationId": orgID, "email": email, "role": role})
	require.Equal(f.t, http.StatusCreated, rec.Code, rec.Body.String())
	return f.orgAuthInvitationToken(email)
}

// orgAuthJoin signs email up (with an organization of their own), has owner invite them to orgID
// as role, and accepts: the returned client's active organization is orgID.
func (f *authFixture) orgAuthJoin(owner *apiClient, orgID, email, role string) (*apiClient, string) {
	f.t.Helper()
	b, res := f.signUpVerified(email, "MERCHANT")
	tok := f.orgAuthInvite(owner, orgID, email, role)
	rec := b.call(http.MethodPost, pathAccept, map[string]any{"token": tok})
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return b, res.User.ID
}

func (f *authFixture) orgAuthFull(a *apiClient, orgID string) orgAuthFull {
	f.t.Helper()
	rec := a.call(http.MethodGet, pathFullOrg+"?organizationId="+orgID, nil)
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[orgAuthFull](f.t, rec)
}

// orgAuthAudits counts tenant's audit rows of action with outcome, read as the runtime role.
func (f *authFixture) orgAuthAudits(tenant, action, outcome string) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, db.InTenantTx(context.Background(), f.d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = $2`,
			action, outcome).Scan(&n)
	}))
	return n
}

func activeOrg(t *testing.T, a *apiClient) string {
	t.Helper()
	rec := a.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	s := decode[sessionResult](t, rec)
	if s.Session.ActiveOrganizationID == nil {
		return ""
	}
	return *s.Session.ActiveOrganizationID
}

func TestOrgAuthCreateOrganization(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a, first := f.signUpVerified("creator@example.com", "BUSINESS")

	// Without setActive: answered, the session unchanged.
	before := a.cookie.Value
	rec := a.call(http.MethodPost, pathCreateOrg, map[string]any{"name": "  Second Co  ", "kind": "FI"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	second := decode[struct {
		Organization struct{ ID, Name, Kind string } `json:"organization"`
		Session      *sessionJSON                    `json:"session"`
	}](t, rec)
	require.Equal(t, "Second Co", second.Organization.Name)
	require.Equal(t, "FI", second.Organization.Kind)
	require.Nil(t, second.Session)
	require.Equal(t, before, a.cookie.Value)
	require.Equal(t, first.Organization.ID, activeOrg(t, a))
	require.Equal(t, 1, f.orgAuthAudits(second.Organization.ID, "CreateOrganization", "SUCCESS"))

	// The caller owns it with organization_admin; its catalog holds the FI's (empty) full role.
	full := f.orgAuthFull(a, second.Organization.ID)
	require.Len(t, full.Members, 1)
	require.Equal(t, "owner", full.Members[0].Role)
	require.Equal(t, []string{"organization_admin"}, full.Members[0].AppRoles)
	require.Len(t, full.Roles, 1)
	require.True(t, full.Roles[0].Builtin)

	// With setActive: the session rotates into it; the old token dies.
	old := a.clone()
	rec = a.call(http.MethodPost, pathCreateOrg, map[string]any{"name": "Third", "kind": "MERCHANT", "setActive": true})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	third := decode[struct {
		Organization struct{ ID string } `json:"organization"`
		Session      sessionJSON         `json:"session"`
	}](t, rec)
	require.NotEqual(t, old.cookie.Value, a.cookie.Value)
	require.Equal(t, third.Organization.ID, *third.Session.ActiveOrganizationID)
	require.Equal(t, third.Organization.ID, activeOrg(t, a))
	require.Equal(t, http.StatusUnauthorized, old.call(http.MethodGet, "/api/auth/get-session", nil).Code)

	rec = a.call(http.MethodGet, pathListOrgs, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	list := decode[struct {
		Organizations []struct{ ID, Role, Kind string } `json:"organizations"`
	}](t, rec)
	require.Len(t, list.Organizations, 3)
	for _, o := range list.Organizations {
		require.Equal(t, "owner", o.Role)
	}

	// Refusals.
	for _, body := range []any{
		map[string]any{"name": "", "kind": "FI"},
		map[string]any{"name": "X", "kind": "BANK"},
		map[string]any{"name": "A\x00B", "kind": "FI"},
		map[string]any{"name": "X", "kind": "FI", "owner": "someone"},
		map[string]any{"name": strings.Repeat("n", 257), "kind": "FI"},
		`{"name":"X","kind":"FI","setActive":"yes"}`,
	} {
		rec := a.hostile(http.MethodPost, pathCreateOrg, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", body, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec))
	}
	rec = f.client().call(http.MethodPost, pathCreateOrg, map[string]any{"name": "X", "kind": "FI"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

func TestOrgAuthInviteAndAccept(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@invite.test", "BUSINESS")
	org := res.Organization.ID
	bob, bobRes := f.signUpVerified("bob@invite.test", "MERCHANT")

	// Invite bob as admin: mailed, bound to his e-mail, 7 days.
	rec := owner.call(http.MethodPost, pathInvite, map[string]any{"organizationId": org, "email": " Bob@Invite.test ", "role": "admin"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	inv := decode[struct {
		Invitation orgAuthInvitation `json:"invitation"`
	}](t, rec).Invitation
	require.Equal(t, "bob@invite.test", inv.Email)
	require.Equal(t, "PENDING", inv.Status)
	require.True(t, f.now().Add(7*24*time.Hour).Equal(inv.ExpiresAt), "%v", inv.ExpiresAt)
	firstToken := f.orgAuthInvitationToken("bob@invite.test")
	m, _ := f.inbox.LatestEmail("bob@invite.test", notify.Invitation)
	require.Contains(t, m.Text, "Org of owner@invite.test")
	require.Equal(t, 1, f.orgAuthAudits(org, "InviteMember", "SUCCESS"))

	// A second invitation cancels the first: its link is dead, the new one works.
	token := f.orgAuthInvite(owner, org, "bob@invite.test", "admin")
	require.NotEqual(t, firstToken, token)
	full := f.orgAuthFull(owner, org)
	require.NotNil(t, full.Invitations)
	require.Len(t, *full.Invitations, 1, "one pending invitation per e-mail")
	rec = bob.call(http.MethodPost, pathAccept, map[string]any{"token": firstToken})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	// Someone else holding bob's link is refused (audited) and the link stays good for bob.
	eve, _ := f.signUpVerified("eve@invite.test", "FI")
	rec = eve.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INVITATION_EMAIL_MISMATCH", errCode(rec))
	require.Equal(t, 1, f.orgAuthAudits(org, "AcceptInvitation", "DENIED"))

	// Bob accepts: member as admin with organization_admin, the session rotated into the org.
	before := bob.clone()
	rec = bob.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	acc := decode[struct {
		Organization struct{ ID string } `json:"organization"`
		Member       orgAuthMember       `json:"member"`
		Session      sessionJSON         `json:"session"`
	}](t, rec)
	require.Equal(t, org, acc.Organization.ID)
	require.Equal(t, "admin", acc.Member.Role)
	require.Equal(t, bobRes.User.ID, acc.Member.UserID)
	require.Equal(t, []string{"organization_admin"}, acc.Member.AppRoles)
	require.Equal(t, org, *acc.Session.ActiveOrganizationID)
	require.NotEqual(t, before.cookie.Value, bob.cookie.Value, "joining is a privilege change")
	require.Equal(t, http.StatusUnauthorized, before.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Equal(t, 1, f.orgAuthAudits(org, "AcceptInvitation", "SUCCESS"))
	require.Empty(t, *f.orgAuthFull(owner, org).Invitations, "accepted: no longer pending")

	// Single use.
	rec = bob.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	// Already a member: 409, audited.
	rec = owner.call(http.MethodPost, pathInvite, map[string]any{"organizationId": org, "email": "bob@invite.test", "role": "member"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "ALREADY_MEMBER", errCode(rec))
	require.Equal(t, 1, f.orgAuthAudits(org, "InviteMember", "DENIED"))

	// Bob (admin) may invite members and admins, not owners; a plain member may not invite.
	f.orgAuthInvite(bob, org, "carol@invite.test", "member")
	rec = bob.call(http.MethodPost, pathInvite, map[string]any{"organizationId": org, "email": "carol@invite.test", "role": "owner"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	carol, _ := f.signUpVerified("carol@invite.test", "FI")
	rec = carol.call(http.MethodPost, pathAccept, map[string]any{"token": f.orgAuthInvitationToken("carol@invite.test")})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "member", decode[struct {
		Member orgAuthMember `json:"member"`
	}](t, rec).Member.Role)
	rec = carol.call(http.MethodPost, pathInvite, map[string]any{"organizationId": org, "email": "dan@invite.test", "role": "member"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	// An owner may invite an owner.
	f.orgAuthInvite(owner, org, "dan@invite.test", "owner")

	// Bad input: 400 before anything happens.
	for _, body := range []any{
		map[string]any{"organizationId": org, "email": "not-an-email", "role": "member"},
		map[string]any{"organizationId": org, "email": "x@invite.test", "role": "root"},
		map[string]any{"organizationId": "bad id", "email": "x@invite.test", "role": "member"},
		map[string]any{"organizationId": org, "email": "x@invite.test"},
	} {
		rec := owner.hostile(http.MethodPost, pathInvite, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v", body)
		require.Equal(t, "INVALID_REQUEST", errCode(rec))
	}
	for _, tok := range []string{"", "garbage", org + ".short", org + "." + identity.NewToken(), "other." + identity.NewToken()} {
		rec := bob.hostile(http.MethodPost, pathAccept, map[string]any{"token": tok})
		require.Equal(t, http.StatusBadRequest, rec.Code, tok)
		require.Equal(t, "INVALID_TOKEN", errCode(rec), tok)
	}
	require.Equal(t, http.StatusUnauthorized, f.client().call(http.MethodPost, pathAccept, map[string]any{"token": token}).Code)

	// Expiry after 7 days (sessions last 7 days too: eve signs in again to try).
	token = f.orgAuthInvite(owner, org, "eve@invite.test", "member")
	f.advance(7*24*time.Hour + time.Second)
	eve = f.signIn("eve@invite.test")
	rec = eve.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))
}

// TestOrgAuthInviteLimitedPerRecipient: five invitations to one e-mail in 15 minutes, then 429.
func TestOrgAuthInviteLimitedPerRecipient(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@limit.test", "BUSINESS")
	for i := 0; i < 5; i++ {
		f.orgAuthInvite(owner, res.Organization.ID, "spam@limit.test", "member")
	}
	rec := owner.call(http.MethodPost, pathInvite, map[string]any{"organizationId": res.Organization.ID, "email": "spam@limit.test", "role": "member"})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
}

// TestOrgAuthAcceptRace: two sessions of the invited user accept at once; exactly one joins.
func TestOrgAuthAcceptRace(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@race.test", "BUSINESS")
	f.signUpVerified("racer@race.test", "FI")
	token := f.orgAuthInvite(owner, res.Organization.ID, "racer@race.test", "member")
	clients := []*apiClient{f.signIn("racer@race.test"), f.signIn("racer@race.test")}
	codes := make([]int, len(clients))
	errs := make([]string, len(clients))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rec := c.call(http.MethodPost, pathAccept, map[string]any{"token": token})
			codes[i], errs[i] = rec.Code, errCode(rec)
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for i := range codes {
		if codes[i] == http.StatusOK {
			ok++
			continue
		}
		require.Equal(t, http.StatusBadRequest, codes[i])
		require.Equal(t, "INVALID_TOKEN", errs[i])
	}
	require.Equal(t, 1, ok)
	full := f.orgAuthFull(owner, res.Organization.ID)
	require.Len(t, full.Members, 2)
}

func TestOrgAuthLeave(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@leave.test", "BUSINESS")
	org := res.Organization.ID
	member, _ := f.orgAuthJoin(owner, org, "member@leave.test", "member")
	require.Equal(t, org, activeOrg(t, member))

	// The last owner cannot leave (audited).
	rec := owner.call(http.MethodPost, pathLeave, map[string]any{"organizationId": org})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	require.Equal(t, 1, f.orgAuthAudits(org, "LeaveOrganization", "DENIED"))

	// The member leaves their active organization: the session rotates to none.
	before := member.clone()
	rec = member.call(http.MethodPost, pathLeave, map[string]any{"organizationId": org})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Nil(t, decode[struct {
		Session sessionJSON `json:"session"`
	}](t, rec).Session.ActiveOrganizationID)
	require.NotEqual(t, before.cookie.Value, member.cookie.Value)
	require.Equal(t, "", activeOrg(t, member))
	require.Equal(t, 1, f.orgAuthAudits(org, "LeaveOrganization", "SUCCESS"))
	require.Len(t, f.orgAuthFull(owner, org).Members, 1)

	// Gone: leaving again, or reading the organization, is NOT_A_MEMBER.
	rec = member.call(http.MethodPost, pathLeave, map[string]any{"organizationId": org})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	rec = member.call(http.MethodGet, pathFullOrg+"?organizationId="+org, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))

	// A second owner may leave; leaving an organization that is not the active one keeps the
	// session as it is.
	second, secondRes := f.signUpVerified("second@leave.test", "FI")
	rec = second.call(http.MethodPost, pathAccept, map[string]any{"token": f.orgAuthInvite(owner, org, "second@leave.test", "owner")})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = second.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": secondRes.Organization.ID})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	kept := second.cookie.Value
	rec = second.call(http.MethodPost, pathLeave, map[string]any{"organizationId": org})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, kept, second.cookie.Value)
	require.Equal(t, secondRes.Organization.ID, activeOrg(t, second))
	rec = owner.call(http.MethodPost, pathLeave, map[string]any{"organizationId": org})
	require.Equal(t, http.StatusConflict, rec.Code, "the owner is the last one again")
	rec = owner.hostile(http.MethodPost, pathLeave, map[string]any{"organizationId": "x\x00"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestOrgAuthUpdateMemberRole(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@role.test", "BUSINESS")
	org := res.Organization.ID
	admin, adminID := f.orgAuthJoin(owner, org, "admin@role.test", "admin")
	member, memberID := f.orgAuthJoin(owner, org, "member@role.test", "member")
	full := f.orgAuthFull(owner, org)
	ownerM, adminM, memberM := full.member(t, "owner@role.test"), full.member(t, "admin@role.test"), full.member(t, "member@role.test")

	// The member cannot read another member (admin route) — and the refusal is now cached.
	rec := member.call(http.MethodGet, pathMemberOf+adminID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = member.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": memberM.ID, "role": "admin"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))

	// Promoted by the admin: takes effect on the very next request, with organization_admin.
	rec = admin.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": memberM.ID, "role": "admin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[struct {
		Member orgAuthMember `json:"member"`
	}](t, rec).Member
	require.Equal(t, "admin", got.Role)
	require.Equal(t, []string{"organization_admin"}, got.AppRoles)
	require.Equal(t, http.StatusOK, member.call(http.MethodGet, pathMemberOf+adminID, nil).Code, "the role cache was invalidated")
	require.Equal(t, 1, f.orgAuthAudits(org, "UpdateMemberRole", "SUCCESS"))

	// An admin cannot change an owner nor grant the owner role (audited).
	rec = admin.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": ownerM.ID, "role": "member"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = admin.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": memberM.ID, "role": "owner"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	require.Equal(t, 2, f.orgAuthAudits(org, "UpdateMemberRole", "DENIED"))

	// The owner demotes the admin: access lost at once, organization_admin with it.
	require.Equal(t, http.StatusOK, admin.call(http.MethodGet, pathMemberOf+memberID, nil).Code)
	rec = owner.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": adminM.ID, "role": "member"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = admin.call(http.MethodGet, pathMemberOf+memberID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code, "a demoted admin loses access on the next request")
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = admin.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	me := decode[struct {
		Member orgAuthMember `json:"member"`
	}](t, rec).Member
	require.Equal(t, "member", me.Role)
	require.Empty(t, me.AppRoles)
	require.Empty(t, me.Permissions, "no permission survives the demotion")

	// The last owner cannot be demoted, even by themselves.
	rec = owner.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": ownerM.ID, "role": "admin"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	// With a second owner it can.
	rec = owner.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": memberM.ID, "role": "owner"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = owner.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": ownerM.ID, "role": "admin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// Unknown member, bad role, bad ids.
	rec = member.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": "mem_nobody", "role": "admin"})
	require.Equal(t, http.StatusNotFound, rec.Code)
	for _, body := range []any{
		map[string]any{"organizationId": org, "memberId": adminM.ID, "role": "superuser"},
		map[string]any{"organizationId": org, "memberId": "a b", "role": "admin"},
		map[string]any{"organizationId": org, "role": "admin"},
	} {
		rec := member.hostile(http.MethodPost, pathUpdateRole, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v", body)
	}
}

// TestOrgAuthInvitationDiesWithItsInvitersRight: an invitation is accepted only while its inviter
// may still send it (an ACTIVE admin or owner, an owner for an owner invitation, or a platform
// admin); one sent by an admin who was removed or demoted since is INVALID_TOKEN, nothing
// written (found by an audit: the removed admin's invitee joined as admin with
// organization_admin).
func TestOrgAuthInvitationDiesWithItsInvitersRight(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@inviter.test", "BUSINESS")
	org := res.Organization.ID
	admin, _ := f.orgAuthJoin(owner, org, "admin@inviter.test", "admin")
	demoted, _ := f.orgAuthJoin(owner, org, "demoted@inviter.test", "admin")
	alt, _ := f.signUpVerified("alt@inviter.test", "MERCHANT")
	alt2, _ := f.signUpVerified("alt2@inviter.test", "MERCHANT")
	tok := f.orgAuthInvite(admin, org, "alt@inviter.test", "admin")
	tok2 := f.orgAuthInvite(demoted, org, "alt2@inviter.test", "member")
	full := f.orgAuthFull(owner, org)

	rec := owner.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": "admin@inviter.test"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = owner.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": full.member(t, "demoted@inviter.test").ID,
		"role": "member"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	refused(t, alt.call(http.MethodPost, pathAccept, map[string]any{"token": tok}), http.StatusBadRequest, "INVALID_TOKEN")
	refused(t, alt2.call(http.MethodPost, pathAccept, map[string]any{"token": tok2}), http.StatusBadRequest, "INVALID_TOKEN")
	after := f.orgAuthFull(owner, org)
	require.Len(t, after.Members, len(full.Members)-1, "only the removal changed the members")

	// The owner's own invitation stands.
	alt3, _ := f.signUpVerified("alt3@inviter.test", "MERCHANT")
	rec = alt3.call(http.MethodPost, pathAccept, map[string]any{"token": f.orgAuthInvite(owner, org, "alt3@inviter.test", "admin")})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// A suspended organization takes no new member: its pending invitation is refused (403
// ORGANIZATION_SUSPENDED, audited DENIED, nothing written, the session not rotated) and stays
// pending, so it is accepted once the organization is active again.
func TestOrgAuthInvitationIntoASuspendedOrganization(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@suspended.test", "BUSINESS")
	org := res.Organization.ID
	invitee, _ := f.signUpVerified("invitee@suspended.test", "MERCHANT")
	tok := f.orgAuthInvite(owner, org, "invitee@suspended.test", "admin")
	platform := f.platformAdmin("ops@suspended.test")
	setStatus := func(status string) {
		rec := platform.call(http.MethodPut, "/api/business/"+org+"/status", map[string]any{"status": status})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	setStatus("SUSPENDED")
	before := activeOrg(t, invitee)
	refused(t, invitee.call(http.MethodPost, pathAccept, map[string]any{"token": tok}), http.StatusForbidden, "ORGANIZATION_SUSPENDED")
	require.Equal(t, 1, f.orgAuthAudits(org, "AcceptInvitation", "DENIED"))
	require.Equal(t, before, activeOrg(t, invitee), "the session stays where it was")
	var members int
	require.NoError(t, db.InTenantTx(context.Background(), f.d.App, org, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.members`).Scan(&members)
	}))
	require.Equal(t, 1, members, "only the owner")

	setStatus("ACTIVE")
	rec := invitee.call(http.MethodPost, pathAccept, map[string]any{"token": tok})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, org, activeOrg(t, invitee))
}

func TestOrgAuthRemoveMember(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@remove.test", "BUSINESS")
	org := res.Organization.ID
	admin, _ := f.orgAuthJoin(owner, org, "admin@remove.test", "admin")
	member, memberID := f.orgAuthJoin(owner, org, "member@remove.test", "member")
	f.orgAuthJoin(owner, org, "other@remove.test", "member")
	full := f.orgAuthFull(owner, org)
	ownerM, otherM := full.member(t, "owner@remove.test"), full.member(t, "other@remove.test")

	// The member is active now; removed by e-mail, they lose access on the next request.
	require.Equal(t, http.StatusOK, member.call(http.MethodGet, pathMembersMe, nil).Code)
	rec := admin.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": "Member@Remove.test"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, memberID, decode[struct {
		Member orgAuthMember `json:"member"`
	}](t, rec).Member.UserID)
	rec = member.call(http.MethodGet, pathFullOrg, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	rec = member.call(http.MethodGet, pathMembersMe, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "NO_ACTIVE_MEMBERSHIP", errCode(rec))
	require.Equal(t, 1, f.orgAuthAudits(org, "RemoveMember", "SUCCESS"))

	// By member id.
	rec = admin.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": otherM.ID})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// An admin cannot remove an owner; nobody the last owner.
	rec = admin.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": ownerM.ID})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = owner.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": "owner@remove.test"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	require.Equal(t, 2, f.orgAuthAudits(org, "RemoveMember", "DENIED"))

	// Unknown targets are 404; malformed ones 400.
	for _, target := range []string{"nobody@remove.test", "mem_nobody", "member@remove.test"} {
		rec := owner.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": target})
		require.Equal(t, http.StatusNotFound, rec.Code, target)
	}
	for _, target := range []string{"", "a b", "x@", "\x00@x.test"} {
		rec := owner.hostile(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": target})
		require.Equal(t, http.StatusBadRequest, rec.Code, target)
	}
}

func TestOrgAuthListAndFullOrganization(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@full.test", "BUSINESS")
	org := res.Organization.ID
	member, _ := f.orgAuthJoin(owner, org, "member@full.test", "member")
	f.orgAuthInvite(owner, org, "pending@full.test", "admin")

	// The member's list: their own organization (owner) and this one (member).
	rec := member.call(http.MethodGet, pathListOrgs, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	list := decode[struct {
		Organizations []struct{ ID, Role, MemberID string } `json:"organizations"`
	}](t, rec)
	require.Len(t, list.Organizations, 2, "oldest organization first")
	require.Equal(t, org, list.Organizations[0].ID)
	require.Equal(t, "member", list.Organizations[0].Role)
	require.Equal(t, "owner", list.Organizations[1].Role)

	// The owner sees the pending invitation; the member (active organization by default) does not.
	full := f.orgAuthFull(owner, org)
	require.Equal(t, "BUSINESS", full.Organization.Kind)
	require.Len(t, full.Members, 2)
	require.NotNil(t, full.Invitations)
	require.Len(t, *full.Invitations, 1)
	require.Equal(t, "pending@full.test", (*full.Invitations)[0].Email)
	require.Len(t, full.Roles, 1)
	require.Equal(t, "organization_admin", full.Roles[0].Name)
	require.Contains(t, full.Roles[0].Permissions, "payroll")
	rec = member.call(http.MethodGet, pathFullOrg, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	mine := decode[orgAuthFull](t, rec)
	require.Equal(t, org, mine.Organization.ID)
	require.Nil(t, mine.Invitations)

	// No active organization and no organizationId: TENANT_CONTEXT_MISSING.
	p := f.platformAdmin("root@full.test")
	rec = p.call(http.MethodGet, pathFullOrg, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "TENANT_CONTEXT_MISSING", errCode(rec))
	// A platform admin reads any organization (through the audited cross-tenant path).
	rec = p.call(http.MethodGet, pathFullOrg+"?organizationId="+org, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[orgAuthFull](t, rec).Invitations)
	rec = p.call(http.MethodGet, pathFullOrg+"?organizationId=org_missing", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = p.call(http.MethodGet, pathListOrgs, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `"organizations":[]`)
	rec = owner.hostile(http.MethodGet, pathFullOrg+"?organizationId=a%20b", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

// TestOrgAuthPlatformAdmin: a platform admin passes the organization gate of every auth
// organization route, owner rules included.
func TestOrgAuthPlatformAdmin(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@plat.test", "BUSINESS")
	org := res.Organization.ID
	p := f.platformAdmin("root@plat.test")
	rec := p.call(http.MethodPost, pathInvite, map[string]any{"organizationId": org, "email": "newowner@plat.test", "role": "owner"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	nu, _ := f.signUpVerified("newowner@plat.test", "FI")
	rec = nu.call(http.MethodPost, pathAccept, map[string]any{"token": f.orgAuthInvitationToken("newowner@plat.test")})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	full := f.orgAuthFull(owner, org)
	rec = p.call(http.MethodPost, pathUpdateRole, map[string]any{"organizationId": org, "memberId": full.member(t, "owner@plat.test").ID, "role": "admin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = p.call(http.MethodPost, pathRemove, map[string]any{"organizationId": org, "memberIdOrEmail": "newowner@plat.test"})
	require.Equal(t, http.StatusConflict, rec.Code, "the last owner rule binds platform admins too")
	require.Equal(t, "LAST_OWNER", errCode(rec))
	rec = p.call(http.MethodPost, pathInvite, map[string]any{"organizationId": "org_missing", "email": "x@plat.test", "role": "member"})
	require.Equal(t, http.StatusNotFound, rec.Code)
}

// TestOrgAuthTenantIsolation: tenant A's owner never reads or changes tenant B's members through
// any organization or members route: another organization is 403, its members 404.
func TestOrgAuthTenantIsolation(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a, resA := f.signUpVerified("owner@a.test", "BUSINESS")
	b, resB := f.signUpVerified("owner@b.test", "BUSINESS")
	orgA, orgB := resA.Organization.ID, resB.Organization.ID
	bMember, bMemberID := f.orgAuthJoin(b, orgB, "member@b.test", "member")
	_ = bMember
	fullB := f.orgAuthFull(b, orgB)
	bOwner := fullB.member(t, "owner@b.test")
	bMem := fullB.member(t, "member@b.test")

	forbidden := []struct {
		path string
		body map[string]any
	}{
		{pathInvite, map[string]any{"organizationId": orgB, "email": "spy@a.test", "role": "owner"}},
		{pathUpdateRole, map[string]any{"organizationId": orgB, "memberId": bMem.ID, "role": "owner"}},
		{pathRemove, map[string]any{"organizationId": orgB, "memberIdOrEmail": bOwner.ID}},
		{pathLeave, map[string]any{"organizationId": orgB}},
	}
	for _, c := range forbidden {
		rec := a.call(http.MethodPost, c.path, c.body)
		require.Equal(t, http.StatusForbidden, rec.Code, c.path)
		require.Equal(t, "NOT_A_MEMBER", errCode(rec), c.path)
	}
	rec := a.call(http.MethodGet, pathFullOrg+"?organizationId="+orgB, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	// B's members named inside A's organization are not found.
	notFound := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, pathUpdateRole, map[string]any{"organizationId": orgA, "memberId": bMem.ID, "role": "owner"}},
		{http.MethodPost, pathRemove, map[string]any{"organizationId": orgA, "memberIdOrEmail": bOwner.ID}},
		{http.MethodPost, pathRemove, map[string]any{"organizationId": orgA, "memberIdOrEmail": "member@b.test"}},
		{http.MethodGet, pathMemberOf + bMemberID, nil},
		{http.MethodGet, pathMemberOf + bOwner.UserID, nil},
		{http.MethodPatch, pathMemberOf + bMemberID + "/roles", map[string]any{"appRoles": []string{"organization_admin"}}},
		{http.MethodDelete, pathMemberOf + bMemberID, nil},
	}
	for _, c := range notFound {
		rec := a.call(c.method, c.path, c.body)
		require.Equal(t, http.StatusNotFound, rec.Code, "%s %s: %s", c.method, c.path, rec.Body.String())
	}
	// A forged invitation to B (B's id, a random secret) is just an invalid token.
	rec = a.call(http.MethodPost, pathAccept, map[string]any{"token": orgB + "." + identity.NewToken()})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	// B is exactly as it was.
	after := f.orgAuthFull(b, orgB)
	require.Equal(t, fullB.Members, after.Members)
	require.Empty(t, *after.Invitations)
	for _, m := range after.Members {
		require.NotEqual(t, "owner@a.test", m.Email)
	}
}

// orgAuthFuzzRoutes are the routes FuzzOrgAuthRoutes drives, with a path builder for the ones
// that take a parameter.
var orgAuthFuzzRoutes = []struct {
	method string
	path   func(param string) string
}{
	{http.MethodPost, func(string) string { return pathCreateOrg }},
	{http.MethodPost, func(string) string { return pathInvite }},
	{http.MethodPost, func(string) string { return pathAccept }},
	{http.MethodPost, func(string) string { return pathLeave }},
	{http.MethodPost, func(string) string { return pathUpdateRole }},
	{http.MethodPost, func(string) string { return pathRemove }},
	{http.MethodGet, func(string) string { return pathListOrgs }},
	{http.MethodGet, func(p string) string { return pathFullOrg + "?organizationId=" + url.QueryEscape(p) }},
	{http.MethodGet, func(string) string { return pathMembersMe }},
	{http.MethodGet, func(p string) string { return pathMemberOf + url.PathEscape(p) }},
	{http.MethodPatch, func(p string) string { return pathMemberOf + url.PathEscape(p) + "/roles" }},
	{http.MethodDelete, func(p string) string { return pathMemberOf + url.PathEscape(p) }},
}

// FuzzOrgAuthRoutes: whatever the body (and path or query parameter), every organization auth and
// members route answers 2xx or 4xx with an error envelope, never 5xx. The caller is an organization
// owner; state carries over between inputs (an input may create, invite, demote or remove), so
// later inputs meet an organization in whatever shape earlier ones left it.
func FuzzOrgAuthRoutes(f *testing.F) {
	d := testkit.NewDB(f)
	inbox := &notify.Memory{}
	clock := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	srv := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: d.App, Platform: d.Platform(f),
		Registry: prometheus.NewRegistry(), Mailer: inbox, Texter: inbox, Now: func() time.Time { return clock }})
	owner := newAPIClient(f, srv)
	rec := owner.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{"email": "owner@fuzz.test", "password": testPassword,
		"name": "Owner", "organization": map[string]any{"name": "Fuzz Co", "kind": "BUSINESS"}})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	org := decode[signUpResult](f, rec).Organization.ID
	other := newAPIClient(f, srv)
	rec = other.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{"email": "member@fuzz.test", "password": testPassword,
		"name": "Member", "organization": map[string]any{"name": "Other Co", "kind": "FI"}})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	otherUser := decode[signUpResult](f, rec).User.ID
	_, err := identity.MarkEmailVerified(context.Background(), d.App, otherUser, time.Now()) // as the mailed link does
	require.NoError(f, err)
	rec = owner.call(http.MethodPost, pathInvite, map[string]any{"organizationId": org, "email": "member@fuzz.test", "role": "admin"})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	m, _ := inbox.LatestEmail("member@fuzz.test", notify.Invitation)
	link, err := url.Parse(m.Secret)
	require.NoError(f, err)
	token := link.Query().Get("token")
	rec = other.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
	rec = owner.call(http.MethodGet, pathFullOrg, nil)
	require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
	var memberID string
	for _, mm := range decode[orgAuthFull](f, rec).Members {
		if mm.UserID == otherUser {
			memberID = mm.ID
		}
	}

	seeds := []struct {
		route uint8
		body  string
		param string
	}{
		{0, `{"name":"Seed Org","kind":"MERCHANT","setActive":false}`, ""},
		{0, `{"name":"\u0000","kind":"FI"}`, ""},
		{1, `{"organizationId":"` + org + `","email":"new@fuzz.test","role":"member"}`, ""},
		{1, `{"organizationId":"` + org + `","email":"new@fuzz.test","role":"member","extra":1}`, ""},
		{1, `{"organizationId":"` + org + `","email":"` + strings.Repeat("a", 300) + `@x.test","role":"owner"}`, ""},
		{2, `{"token":"` + token + `"}`, ""},
		{2, `{"token":"` + org + `.` + strings.Repeat("A", 43) + `"}`, ""},
		{2, `{"token":"` + strings.Repeat("x", 200) + `.` + strings.Repeat("A", 43) + `"}`, ""},
		{3, `{"organizationId":"` + org + `"}`, ""},
		{3, `{"organizationId":null}`, ""},
		{4, `{"organizationId":"` + org + `","memberId":"` + memberID + `","role":"member"}`, ""},
		{4, `{"organizationId":"` + org + `","memberId":"` + memberID + `","role":"owner"}`, ""},
		{5, `{"organizationId":"` + org + `","memberIdOrEmail":"member@fuzz.test"}`, ""},
		{5, `{"organizationId":"` + org + `","memberIdOrEmail":"@"}`, ""},
		{6, ``, ""},
		{7, ``, org},
		{7, ``, "\xff"},
		{8, ``, ""},
		{9, ``, otherUser},
		{9, ``, "../../auth"},
		{10, `{"appRoles":["organization_admin"]}`, otherUser},
		{10, `{"appRoles":["nope",""]}`, otherUser},
		{10, `{"appRoles":null}`, otherUser},
		{10, `[]`, otherUser},
		{11, ``, otherUser},
		{1, `{"organizationId":"` + org + `","email":"x@fuzz.test","role":"member"}` + "\n{}", ""},
		{4, "\xff\xfe", ""},
	}
	for _, s := range seeds {
		f.Add(s.route, []byte(s.body), s.param)
	}
	var mu sync.Mutex // one caller whose cookie rotates: inputs take turns
	f.Fuzz(func(t *testing.T, route uint8, body []byte, param string) {
		mu.Lock()
		defer mu.Unlock()
		r := orgAuthFuzzRoutes[int(route)%len(orgAuthFuzzRoutes)]
		req := httptest.NewRequest(r.method, "http://127.0.0.1:8080"+r.path(param), strings.NewReader(string(body)))
		req.RemoteAddr = "192.0.2.10:40000"
		req.Header.Set("Content-Type", "application/json")
		if owner.cookie != nil {
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		srv.Engine.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "%s %s %q: %s", r.method, r.path(param), body, rec.Body.String())
		for _, ck := range rec.Result().Cookies() {
			if ck.Name == sessionCookie && ck.Value != "" {
				owner.cookie = ck
			}
		}
		if rec.Code >= 300 {
			require.GreaterOrEqual(t, rec.Code, 400, "no redirects: %s", rec.Header().Get("Location"))
			require.NotEmpty(t, errCode(rec), "%d without an error envelope: %s", rec.Code, rec.Body.String())
		}
	})
}

// TestOrgAuthAcceptNeedsTheInvitedEmailProved: anyone may sign up with any address, so an
// account that has not proved the invited e-mail cannot accept the invitation, even holding its
// link (a leaked or forwarded one): 403 EMAIL_NOT_VERIFIED, audited, no member, the invitation
// still pending. Once the address is proved, the same link works.
func TestOrgAuthAcceptNeedsTheInvitedEmailProved(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUpVerified("owner@unproved.test", "BUSINESS")
	org := res.Organization.ID
	token := f.orgAuthInvite(owner, org, "cfo@unproved.test", "admin")
	squatter, sres := f.signUp("cfo@unproved.test", "MERCHANT")
	rec := squatter.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	requireStatus(t, rec, http.StatusForbidden, "EMAIL_NOT_VERIFIED")
	require.Equal(t, 1, f.orgAuthAudits(org, "AcceptInvitation", "DENIED"))
	full := f.orgAuthFull(owner, org)
	require.Len(t, full.Members, 1, "the owner only")
	require.Len(t, *full.Invitations, 1, "still pending")

	_, err := identity.MarkEmailVerified(context.Background(), f.d.App, sres.User.ID, f.now())
	require.NoError(t, err)
	rec = squatter.call(http.MethodPost, pathAccept, map[string]any{"token": token})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
