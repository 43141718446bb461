package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// teamKit is what the team-member tests need of a server: an authFixture's parts, usable from a
// fuzz target too (testing.TB).
type teamKit struct {
	tb    testing.TB
	srv   *Server
	d     *testkit.DB
	inbox *notify.Memory
	seq   atomic.Int64
}

func teamKitOf(f *authFixture) *teamKit {
	return &teamKit{tb: f.t, srv: f.srv, d: f.d, inbox: f.inbox}
}

func newTeamKit(tb testing.TB) *teamKit {
	k := &teamKit{tb: tb, d: testkit.NewDB(tb), inbox: &notify.Memory{}}
	clock := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	k.srv = New(Deps{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:       k.d.App,
		Platform: k.d.Platform(tb),
		Registry: prometheus.NewRegistry(),
		Mailer:   k.inbox,
		Texter:   k.inbox,
		Now:      func() time.Time { return clock },
	})
	return k
}

func (k *teamKit) client() *apiClient { return newAPIClient(k.tb, k.srv) }

// unique makes a fresh e-mail address.
func (k *teamKit) email(tag string) string {
	return fmt.Sprintf("%s-%d@example.com", tag, k.seq.Add(1))
}

func (k *teamKit) signUp(email, kind string) (*apiClient, signUpResult) {
	k.tb.Helper()
	a := k.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{
		"email": email, "password": testPassword, "name": "Abebe Kebede",
		"organization": map[string]any{"name": "Org of " + email, "kind": kind},
	})
	require.Equal(k.tb, http.StatusCreated, rec.Code, rec.Body.String())
	return a, decode[signUpResult](k.tb, rec)
}

func (k *teamKit) signIn(email string) *apiClient {
	k.tb.Helper()
	a := k.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(k.tb, http.StatusOK, rec.Code, rec.Body.String())
	return a
}

// account creates a user who has a password and no organization; returns the user id.
// account is a user with a password who has proved their e-mail.
func (k *teamKit) account(email string) string {
	k.tb.Helper()
	id := k.unverifiedAccount(email)
	_, err := identity.MarkEmailVerified(context.Background(), k.d.App, id, time.Now())
	require.NoError(k.tb, err)
	return id
}

// unverifiedAccount is a user with a password whose e-mail is not proved (anyone may sign up
// with any address).
func (k *teamKit) unverifiedAccount(email string) string {
	k.tb.Helper()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(k.tb, err)
	u, err := identity.CreateUser(context.Background(), k.d.App, identity.NewUser{Email: email, Name: "Almaz Tesfaye", PasswordHash: hash})
	require.NoError(k.tb, err)
	return u.ID
}

func (k *teamKit) platformAdmin(email string) *apiClient {
	k.tb.Helper()
	id := k.account(email)
	require.NoError(k.tb, identity.MakePlatformAdmin(context.Background(), k.d.Platform(k.tb), id))
	return k.signIn(email)
}

// teamOrg is an organization with an owner, an admin and a plain member, all signed in.
type teamOrg struct {
	k                     *teamKit
	id, kind, prefix      string
	owner, admin, member  *apiClient
	ownerM, adminM, plain string // membership ids
}

var teamPrefixes = map[string]string{"BUSINESS": "/api/business", "FI": "/api/financial-institutions", "MERCHANT": "/api/merchants"}

func (k *teamKit) org(kind string) *teamOrg {
	k.tb.Helper()
	owner, res := k.signUp(k.email("owner"), kind)
	o := &teamOrg{k: k, id: res.Organization.ID, kind: kind, prefix: teamPrefixes[kind], owner: owner}
	o.ownerM = o.memberOf(res.User.ID)
	var email string
	o.adminM, email = o.addActive("admin")
	// The kit's admin holds no application role, so the tests see what the member role alone
	// allows: an invite as admin brings organization_admin, taken here before they sign in
	// (in the database, so the tests' audit counts are theirs alone).
	require.NoError(k.tb, db.InTenantTx(context.Background(), k.d.App, o.id, func(tx pgx.Tx) error {
		return orgs.SetAppRoles(context.Background(), tx, o.id, o.adminM, nil)
	}))
	o.admin = k.signIn(email)
	o.plain, email = o.addActive("member")
	o.member = k.signIn(email)
	return o
}

func (o *teamOrg) base() string             { return o.prefix + "/" + o.id + "/team-members" }
func (o *teamOrg) one(member string) string { return o.base() + "/" + member }

// memberOf finds a user's membership id through the owner's list.
func (o *teamOrg) memberOf(userID string) string {
	o.k.tb.Helper()
	rec := o.owner.call(http.MethodGet, o.base(), nil)
	require.Equal(o.k.tb, http.StatusOK, rec.Code, rec.Body.String())
	for _, m := range decode[teamListResult](o.k.tb, rec).Members {
		if m.UserID == userID {
			return m.ID
		}
	}
	o.k.tb.Fatalf("user %s is not a member of %s", userID, o.id)
	return ""
}

// addActive invites an account that already has a password: it joins ACTIVE.
func (o *teamOrg) addActive(role string) (memberID, email string) {
	o.k.tb.Helper()
	email = o.k.email(role)
	o.k.account(email)
	rec := o.owner.call(http.MethodPost, o.base(), map[string]any{"email": email, "name": "Almaz Tesfaye", "role": role})
	require.Equal(o.k.tb, http.StatusCreated, rec.Code, rec.Body.String())
	m := decode[teamMemberResult](o.k.tb, rec)
	require.Equal(o.k.tb, "ACTIVE", m.Status)
	return m.ID, email
}

// addPending invites a new e-mail: it stays INVITED.
func (o *teamOrg) addPending(role string) (memberID, email string) {
	o.k.tb.Helper()
	email = o.k.email("invitee")
	rec := o.owner.call(http.MethodPost, o.base(), map[string]any{"email": email, "name": "Kebede Alemu", "role": role})
	require.Equal(o.k.tb, http.StatusCreated, rec.Code, rec.Body.String())
	m := decode[teamMemberResult](o.k.tb, rec)
	require.Equal(o.k.tb, "INVITED", m.Status)
	return m.ID, email
}

type teamMemberResult struct {
	ID       string   `json:"id"`
	UserID   string   `json:"userId"`
	Email    string   `json:"email"`
	Name     string   `json:"name"`
	Title    string   `json:"title"`
	Role     string   `json:"role"`
	Status   string   `json:"status"`
	AppRoles []string `json:"appRoles"`
}

type teamListResult struct {
	Members []teamMemberResult `json:"members"`
	Admins  []teamMemberResult `json:"admins"`
}

// teamRaw sends a request the document does not know at all (a route that must not exist) with a's
// session; nothing is validated.
func teamRaw(a *apiClient, method, path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1:8080"+path, bytes.NewReader(body))
	req.RemoteAddr = a.ip + ":40000"
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	return rec
}

// audits counts tenant's audit rows of action with outcome.
func (k *teamKit) audits(tenant, action, outcome string) int {
	k.tb.Helper()
	var n int
	require.NoError(k.tb, db.InTenantTx(context.Background(), k.d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = $2`,
			action, outcome).Scan(&n)
	}))
	return n
}

// setupToken is the token of the newest set-up mail to email.
func (k *teamKit) setupToken(email string) string {
	k.tb.Helper()
	m, ok := k.inbox.LatestEmail(email, notify.AccountSetup)
	require.True(k.tb, ok, "no set-up mail to %s", email)
	u, err := url.Parse(m.Secret)
	require.NoError(k.tb, err)
	require.Equal(k.tb, "/setup-account", u.Path)
	require.Contains(k.tb, m.Text, m.Secret)
	return u.Query().Get("token")
}

// TestTeamGateMatrix: every team route of every mount × {anonymous, member, admin, owner,
// other-tenant owner, platform admin}.
func TestTeamGateMatrix(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	platform := k.platformAdmin("root@wagerail.test")
	anonymous := k.client()
	for _, kind := range []string{"BUSINESS", "FI", "MERCHANT"} {
		o := k.org(kind)
		other, _ := k.signUp(k.email("other"), kind)
		update := http.MethodPut
		if kind == "FI" {
			update = http.MethodPatch
		}
		type row struct {
			method string
			path   func() string // a fresh target for every allowed caller
			body   func() any
			ok     int
		}
		active := func() string { id, _ := o.addActive("member"); return o.one(id) }
		pending := func() string { id, _ := o.addPending("member"); return o.one(id) }
		rows := []row{
			{http.MethodGet, o.base, nil, http.StatusOK},
			{http.MethodPost, o.base, func() any {
				return map[string]any{"email": k.email("matrix"), "name": "New Person", "role": "member", "appRoles": []string{}, "title": "Clerk"}
			}, http.StatusCreated},
			{http.MethodGet, func() string { return o.one(o.plain) }, nil, http.StatusOK},
			{update, func() string { return o.one(o.plain) }, func() any { return map[string]any{"title": "Payroll clerk"} }, http.StatusOK},
			{http.MethodPost, func() string { return pending() + "/resend-setup" }, nil, http.StatusOK},
			{http.MethodPost, func() string { return active() + "/ban" }, nil, http.StatusOK},
			{http.MethodPost, func() string {
				p := active()
				require.Equal(t, http.StatusOK, o.owner.call(http.MethodPost, p+"/ban", nil).Code)
				return p + "/unban"
			}, nil, http.StatusOK},
		}
		if kind != "FI" {
			rows = append(rows, row{http.MethodDelete, pending, nil, http.StatusOK})
		}
		for _, r := range rows {
			body := func() any {
				if r.body == nil {
					return nil
				}
				return r.body()
			}
			refused := r.path() // the refused callers never reach the target
			for _, c := range []struct {
				who    string
				a      *apiClient
				status int
				code   string
			}{
				{"anonymous", anonymous, http.StatusUnauthorized, "UNAUTHENTICATED"},
				{"member", o.member, http.StatusForbidden, "INSUFFICIENT_ROLE"},
				{"other-tenant owner", other, http.StatusForbidden, "NOT_A_MEMBER"},
				{"admin", o.admin, r.ok, ""},
				{"owner", o.owner, r.ok, ""},
				{"platform", platform, r.ok, ""},
			} {
				p := refused
				if c.code == "" {
					p = r.path()
				}
				rec := c.a.call(r.method, p, body())
				require.Equal(t, c.status, rec.Code, "%s %s as %s: %s", r.method, p, c.who, rec.Body.String())
				require.Equal(t, c.code, errCode(rec), "%s %s as %s", r.method, p, c.who)
			}
		}
		require.Positive(t, k.audits(o.id, "AccessRoute", "DENIED"), "gate refusals are audited")
	}

	// The platform's business admin routes: platform admins only.
	o := k.org("BUSINESS")
	other, _ := k.signUp(k.email("other"), "BUSINESS")
	adminPath := func(m, verb string) string { return "/api/business/" + o.id + "/admins/" + m + "/" + verb }
	type prow struct {
		method string
		path   func() string
		body   func() any
		ok     int
	}
	rows := []prow{
		{http.MethodGet, func() string { return "/api/business/" + o.id + "/admins" }, nil, http.StatusOK},
		{http.MethodPost, func() string { return "/api/business/" + o.id + "/admins" }, func() any {
			return map[string]any{"email": k.email("newadmin"), "name": "New Admin", "role": "admin"}
		}, http.StatusCreated},
		{http.MethodPost, func() string { id, _ := o.addActive("admin"); return adminPath(id, "suspend") }, nil, http.StatusOK},
		{http.MethodPost, func() string {
			id, _ := o.addActive("admin")
			require.Equal(t, http.StatusOK, o.owner.call(http.MethodPost, o.one(id)+"/ban", nil).Code)
			return adminPath(id, "reactivate")
		}, nil, http.StatusOK},
		{http.MethodPost, func() string { return adminPath(o.adminM, "reset-password") }, nil, http.StatusOK},
	}
	for _, r := range rows {
		for _, c := range []struct {
			who    string
			a      *apiClient
			status int
			code   string
		}{
			{"anonymous", k.client(), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"member", o.member, http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED"},
			{"admin", o.admin, http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED"},
			{"owner", o.owner, http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED"},
			{"other-tenant owner", other, http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED"},
			{"platform", platform, r.ok, ""},
		} {
			var body any
			if r.body != nil {
				body = r.body()
			}
			p := r.path()
			rec := c.a.call(r.method, p, body)
			require.Equal(t, c.status, rec.Code, "%s %s as %s: %s", r.method, p, c.who, rec.Body.String())
			require.Equal(t, c.code, errCode(rec), "%s %s as %s", r.method, p, c.who)
		}
	}
}

func TestTeamInviteMailsSetupLink(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("BUSINESS")
	rec := o.owner.call(http.MethodPut, o.one(o.adminM), map[string]any{"appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// A new e-mail: a user without a password, an INVITED member, a set-up link for 72 hours.
	rec = o.admin.call(http.MethodPost, o.base(), map[string]any{"email": "New.Hire@Example.com", "name": " Sara Bekele ",
		"role": "member", "appRoles": []string{orgs.AdminRole, orgs.AdminRole}, "title": "Accountant"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	m := decode[teamMemberResult](t, rec)
	require.Equal(t, "new.hire@example.com", m.Email)
	require.Equal(t, "Sara Bekele", m.Name)
	require.Equal(t, "INVITED", m.Status)
	require.Equal(t, "member", m.Role)
	require.Equal(t, "Accountant", m.Title)
	require.Equal(t, []string{orgs.AdminRole}, m.AppRoles)
	first := k.setupToken("new.hire@example.com")
	u, err := identity.UserByEmail(context.Background(), k.d.App, "new.hire@example.com")
	require.NoError(t, err)
	require.Empty(t, u.PasswordHash, "an invited user has no password until set-up")
	require.Equal(t, 3, k.audits(o.id, "InviteTeamMember", "SUCCESS"), "the fixture's admin and member, then this one")

	// The list shows the pending invite with its status; an invited member cannot act yet.
	rec = o.admin.call(http.MethodGet, o.base(), nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var found bool
	for _, x := range decode[teamListResult](t, rec).Members {
		if x.ID == m.ID {
			found = true
			require.Equal(t, "INVITED", x.Status)
		}
	}
	require.True(t, found)

	// Inviting the same person again: 409, nothing written, audited DENIED.
	rec = o.owner.call(http.MethodPost, o.base(), map[string]any{"email": "new.hire@example.com", "name": "X", "role": "admin"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "ALREADY_MEMBER", errCode(rec))
	require.Equal(t, 1, k.audits(o.id, "InviteTeamMember", "DENIED"))

	// Resend: a new link; the first no longer works, the new one does.
	rec = o.admin.call(http.MethodPost, o.one(m.ID)+"/resend-setup", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	second := k.setupToken("new.hire@example.com")
	require.NotEqual(t, first, second)
	_, err = identity.ConsumeToken(context.Background(), k.d.App, identity.AccountSetup, first, f.now())
	require.ErrorIs(t, err, identity.ErrInvalidSecret, "the earlier link is retired")
	v, err := identity.ConsumeToken(context.Background(), k.d.App, identity.AccountSetup, second, f.now())
	require.NoError(t, err)
	require.Equal(t, u.ID, v.UserID)

	// Resend is for pending members only.
	rec = o.admin.call(http.MethodPost, o.one(o.plain)+"/resend-setup", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "MEMBER_NOT_PENDING", errCode(rec))

	// An account that has a password joins ACTIVE and gets a notice, no set-up link.
	email := k.email("existing")
	k.account(email)
	rec = o.admin.call(http.MethodPost, o.base(), map[string]any{"email": email, "name": "Ignored Name", "role": "admin"})
	require.Equal(t, http.StatusCreated, rec.Code)
	m2 := decode[teamMemberResult](t, rec)
	require.Equal(t, "ACTIVE", m2.Status)
	require.Equal(t, "Almaz Tesfaye", m2.Name, "an invite never renames an existing user")
	_, ok := k.inbox.LatestEmail(email, notify.AccountSetup)
	require.False(t, ok)
	notice, ok := k.inbox.LatestEmail(email, notify.Invitation)
	require.True(t, ok)
	require.Contains(t, notice.Text, "Org of ")
	require.Equal(t, http.StatusOK, k.signIn(email).call(http.MethodGet, o.base(), nil).Code, "the new admin acts at once")

	// An account whose e-mail is not proved (anyone may sign up with any address) does not join
	// ACTIVE: it is INVITED and the address gets the set-up link, whose password then replaces
	// the squatter's (found by an audit: the squatter held the seat at once).
	squatted := k.email("squatted")
	k.unverifiedAccount(squatted)
	squatter := k.signIn(squatted)
	rec = o.owner.call(http.MethodPost, o.base(), map[string]any{"email": squatted, "name": "Chief Finance", "role": "admin"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	m3 := decode[teamMemberResult](t, rec)
	require.Equal(t, "INVITED", m3.Status)
	rec = squatter.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": o.id})
	require.NotEqual(t, http.StatusOK, rec.Code, "an INVITED member cannot enter: %s", rec.Body.String())
	rec = k.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": k.setupToken(squatted), "newPassword": "the owner's passphrase"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusUnauthorized, squatter.call(http.MethodGet, "/api/auth/get-session", nil).Code, "the squatter is signed out")
	rec = o.owner.call(http.MethodGet, o.one(m3.ID), nil)
	require.Equal(t, "ACTIVE", decode[teamMemberResult](t, rec).Status)

	// Refusals: no write, stable codes.
	var before int
	require.NoError(t, db.InTenantTx(context.Background(), k.d.App, o.id, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.members`).Scan(&before)
	}))
	for _, tc := range []struct {
		who    *apiClient
		body   map[string]any
		status int
		code   string
	}{
		{o.admin, map[string]any{"email": k.email("x"), "name": "N", "role": "member", "appRoles": []string{"payroll_boss"}}, 400, "UNKNOWN_ROLE"},
		{o.admin, map[string]any{"email": k.email("x"), "name": "N", "role": "owner"}, 403, "INSUFFICIENT_ROLE"},
		{o.admin, map[string]any{"email": "not-an-email", "name": "N", "role": "member"}, 400, "INVALID_REQUEST"},
		{o.admin, map[string]any{"email": k.email("x"), "name": "N\x00", "role": "member"}, 400, "INVALID_REQUEST"},
		{o.admin, map[string]any{"email": k.email("x"), "name": "N", "role": "boss"}, 400, "INVALID_REQUEST"},
		{o.admin, map[string]any{"email": k.email("x"), "name": "N", "role": "member", "status": "ACTIVE"}, 400, "INVALID_REQUEST"},
		{o.admin, map[string]any{"email": k.email("x"), "name": "N", "role": "member", "title": "a\nb"}, 400, "INVALID_REQUEST"},
	} {
		rec := tc.who.hostile(http.MethodPost, o.base(), tc.body)
		require.Equal(t, tc.status, rec.Code, "%v: %s", tc.body, rec.Body.String())
		require.Equal(t, tc.code, errCode(rec), "%v", tc.body)
	}
	var after int
	require.NoError(t, db.InTenantTx(context.Background(), k.d.App, o.id, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.members`).Scan(&after)
	}))
	require.Equal(t, before, after, "no refused invite wrote a member")
	require.Equal(t, 2, k.audits(o.id, "InviteTeamMember", "DENIED"), "the owner-rule refusal is audited")

	// An owner may invite an owner.
	rec = o.owner.call(http.MethodPost, o.base(), map[string]any{"email": k.email("co-owner"), "name": "Co Owner", "role": "owner"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
}

func TestTeamLastOwnerAndBanRules(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("MERCHANT")
	platform := k.platformAdmin("root@wagerail.test")

	// The last active owner cannot be banned, even by a platform admin; the refusal is audited.
	rec := platform.call(http.MethodPost, o.one(o.ownerM)+"/ban", nil)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "LAST_OWNER", errCode(rec))
	require.Equal(t, 1, k.audits(o.id, "BanTeamMember", "DENIED"))
	// Nor demoted.
	rec = o.owner.call(http.MethodPut, o.one(o.ownerM), map[string]any{"role": "admin"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	// Nobody bans themselves.
	rec = o.owner.call(http.MethodPost, o.one(o.ownerM)+"/ban", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "CANNOT_BAN_SELF", errCode(rec))
	rec = o.admin.call(http.MethodPost, o.one(o.adminM)+"/ban", nil)
	require.Equal(t, "CANNOT_BAN_SELF", errCode(rec))
	// An admin neither bans, edits nor makes an owner.
	rec = o.admin.call(http.MethodPost, o.one(o.ownerM)+"/ban", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = o.admin.call(http.MethodPut, o.one(o.ownerM), map[string]any{"title": "Figurehead"})
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = o.admin.call(http.MethodPut, o.one(o.adminM), map[string]any{"role": "owner"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec), "no self-promotion")
	require.Equal(t, 4, k.audits(o.id, "BanTeamMember", "DENIED"))
	require.Equal(t, 3, k.audits(o.id, "UpdateTeamMember", "DENIED"))

	// With a second owner, the first can be banned (by the other owner), and unbanned.
	rec = o.owner.call(http.MethodPut, o.one(o.adminM), map[string]any{"role": "owner"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "owner", decode[teamMemberResult](t, rec).Role)
	rec = o.admin.call(http.MethodPost, o.one(o.ownerM)+"/ban", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "BANNED", decode[teamMemberResult](t, rec).Status)
	rec = o.admin.call(http.MethodPost, o.one(o.ownerM)+"/ban", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "MEMBER_NOT_ACTIVE", errCode(rec))
	// Now the promoted admin is the last active owner.
	rec = platform.call(http.MethodPost, o.one(o.adminM)+"/ban", nil)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	rec = o.admin.call(http.MethodPost, o.one(o.ownerM)+"/unban", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "ACTIVE", decode[teamMemberResult](t, rec).Status)
	rec = o.admin.call(http.MethodPost, o.one(o.ownerM)+"/unban", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "MEMBER_NOT_BANNED", errCode(rec))
	require.Equal(t, 1, k.audits(o.id, "BanTeamMember", "SUCCESS"))
	require.Equal(t, 1, k.audits(o.id, "UnbanTeamMember", "SUCCESS"))

	// A pending invite cannot be banned; it is cancelled instead.
	pending, _ := o.addPending("member")
	rec = o.admin.call(http.MethodPost, o.one(pending)+"/ban", nil)
	require.Equal(t, "MEMBER_NOT_ACTIVE", errCode(rec))
}

func TestTeamBanBitesAtOnce(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("BUSINESS")

	// The admin's access is cached by this request...
	require.Equal(t, http.StatusOK, o.admin.call(http.MethodGet, o.base(), nil).Code)
	// ...and the ban still bites on the very next one, with no clock moved.
	rec := o.owner.call(http.MethodPost, o.one(o.adminM)+"/ban", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = o.admin.call(http.MethodGet, o.base(), nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	// The session itself lives on (it may serve other organizations).
	require.Equal(t, http.StatusOK, o.admin.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	// Unbanned: back at once.
	require.Equal(t, http.StatusOK, o.owner.call(http.MethodPost, o.one(o.adminM)+"/unban", nil).Code)
	require.Equal(t, http.StatusOK, o.admin.call(http.MethodGet, o.base(), nil).Code)

	// A demotion bites at once too.
	require.Equal(t, http.StatusOK, o.owner.call(http.MethodPut, o.one(o.adminM), map[string]any{"role": "member"}).Code)
	rec = o.admin.call(http.MethodGet, o.base(), nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
}

// TestOrganizationAuthRoutesGrantOnlyWhatTheCallerHolds: the organization auth routes hand out
// organization_admin with the admin role (a promotion, an accepted invitation), so they keep the
// team routes' rule: an admin without owner rights grants only permissions they hold (found by
// an audit: an admin with no application roles promoted a member to admin, who then held every
// permission and handed organization_admin on). 403 ROLE_NOT_GRANTABLE, audited, nothing changed.
func TestOrganizationAuthRoutesGrantOnlyWhatTheCallerHolds(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("BUSINESS")

	promote := map[string]any{"organizationId": o.id, "memberId": o.plain, "role": "admin"}
	refused(t, o.admin.call(http.MethodPost, pathUpdateRole, promote), http.StatusForbidden, "ROLE_NOT_GRANTABLE")
	require.Equal(t, 1, k.audits(o.id, "UpdateMemberRole", "DENIED"))
	invite := map[string]any{"organizationId": o.id, "email": k.email("invited"), "role": "admin"}
	refused(t, o.admin.call(http.MethodPost, pathInvite, invite), http.StatusForbidden, "ROLE_NOT_GRANTABLE")
	require.Equal(t, 1, k.audits(o.id, "InviteMember", "DENIED"))
	rec := o.owner.call(http.MethodGet, o.one(o.plain), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "member", decode[teamMemberResult](t, rec).Role, "nothing changed")

	// A member invitation grants nothing: the admin may send it. The owner may promote.
	invite["role"], invite["email"] = "member", k.email("invited")
	rec = o.admin.call(http.MethodPost, pathInvite, invite)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = o.owner.call(http.MethodPost, pathUpdateRole, promote)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func TestTeamUpdateAndDelete(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("BUSINESS")

	// An admin grants only what they hold: with no application roles, not organization_admin.
	rec := o.admin.call(http.MethodPut, o.one(o.plain), map[string]any{"appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "ROLE_NOT_GRANTABLE", errCode(rec))
	require.Equal(t, 1, k.audits(o.id, "UpdateTeamMember", "DENIED"))
	rec = o.admin.call(http.MethodPost, o.base(), map[string]any{"email": k.email("x"), "name": "N", "role": "member", "appRoles": []string{orgs.AdminRole}})
	require.Equal(t, "ROLE_NOT_GRANTABLE", errCode(rec))
	rec = o.owner.call(http.MethodPut, o.one(o.adminM), map[string]any{"appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// Profile, role and application roles of an active member; the name stays the user's.
	rec = o.admin.call(http.MethodPut, o.one(o.plain), map[string]any{"title": " Payroll officer ", "role": "admin", "appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	m := decode[teamMemberResult](t, rec)
	require.Equal(t, "Payroll officer", m.Title)
	require.Equal(t, "admin", m.Role)
	require.Equal(t, []string{orgs.AdminRole}, m.AppRoles)
	rec = o.admin.call(http.MethodPut, o.one(o.plain), map[string]any{"title": "", "appRoles": []string{}, "role": "member"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	m = decode[teamMemberResult](t, rec)
	require.Empty(t, m.Title)
	require.Empty(t, m.AppRoles)
	rec = o.admin.call(http.MethodPut, o.one(o.plain), map[string]any{"name": "Renamed"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "NAME_MANAGED_BY_USER", errCode(rec))
	rec = o.admin.call(http.MethodPut, o.one(o.plain), map[string]any{"appRoles": []string{"nope"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "UNKNOWN_ROLE", errCode(rec))
	rec = o.admin.hostile(http.MethodPut, o.one(o.plain), map[string]any{})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, 3, k.audits(o.id, "UpdateTeamMember", "SUCCESS"))

	// A pending invitee's name is still the organization's to fix.
	pending, email := o.addPending("member")
	rec = o.admin.call(http.MethodPut, o.one(pending), map[string]any{"name": "Kebede A. Alemu"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "Kebede A. Alemu", decode[teamMemberResult](t, rec).Name)

	// DELETE cancels pending invites only.
	rec = o.admin.call(http.MethodDelete, o.one(o.plain), nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "MEMBER_NOT_PENDING", errCode(rec))
	require.Equal(t, 1, k.audits(o.id, "DeleteTeamMember", "DENIED"))
	rec = o.admin.call(http.MethodDelete, o.one(pending), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusNotFound, o.admin.call(http.MethodGet, o.one(pending), nil).Code)
	require.Equal(t, http.StatusNotFound, o.admin.call(http.MethodDelete, o.one(pending), nil).Code)
	require.Equal(t, 1, k.audits(o.id, "DeleteTeamMember", "SUCCESS"))
	// The person can be invited again.
	rec = o.admin.call(http.MethodPost, o.base(), map[string]any{"email": email, "name": "Kebede Alemu", "role": "member"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

	// A malformed member id is the caller's 400.
	rec = o.admin.hostile(http.MethodGet, o.base()+"/"+url.PathEscape("a b"), nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestTeamFIUsesPatchAndHasNoDelete(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("FI")
	rec := o.admin.call(http.MethodPatch, o.one(o.plain), map[string]any{"title": "Loan officer"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "Loan officer", decode[teamMemberResult](t, rec).Title)
	pending, _ := o.addPending("member")
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		rec := teamRaw(o.owner, method, o.one(pending), []byte(`{"title":"x"}`))
		require.Equal(t, http.StatusNotFound, rec.Code, method)
		require.Equal(t, "NOT_FOUND", errCode(rec), method)
	}
	// Businesses have no PATCH.
	b := k.org("BUSINESS")
	require.Equal(t, http.StatusNotFound, teamRaw(b.owner, http.MethodPatch, b.one(b.plain), []byte(`{"title":"x"}`)).Code)
}

// A role change through the team routes keeps organization_admin in step with the role, as the
// organization auth routes do (orgs.AppRolesAfterRoleChange): a demoted admin keeps no permission
// through it, and a promotion grants it only when the one promoting holds it.
func TestTeamRoleChangeKeepsOrganizationAdminInStep(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("FI")
	rec := o.owner.call(http.MethodPatch, o.one(o.adminM), map[string]any{"appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, o.admin.call(http.MethodGet, "/api/fi/accounts", nil).Code, "loans.view through organization_admin")

	// Demoted to member: organization_admin goes with the role, and so does loans.view.
	rec = o.owner.call(http.MethodPatch, o.one(o.adminM), map[string]any{"role": "member"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[teamMemberResult](t, rec).AppRoles)
	rec = o.admin.call(http.MethodGet, "/api/fi/accounts", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "PERMISSION_DENIED", errCode(rec))
	// Even when the demotion names it among the roles to keep.
	rec = o.owner.call(http.MethodPatch, o.one(o.plain), map[string]any{"role": "admin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, []string{orgs.AdminRole}, decode[teamMemberResult](t, rec).AppRoles, "a promotion to admin brings it")
	rec = o.owner.call(http.MethodPatch, o.one(o.plain), map[string]any{"role": "member", "appRoles": []string{orgs.AdminRole}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[teamMemberResult](t, rec).AppRoles)

	// An admin without organization_admin cannot hand it out by promoting someone.
	rec = o.owner.call(http.MethodPatch, o.one(o.adminM), map[string]any{"role": "admin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = o.owner.call(http.MethodPatch, o.one(o.adminM), map[string]any{"appRoles": []string{}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "admin", decode[teamMemberResult](t, rec).Role)
	require.Empty(t, decode[teamMemberResult](t, rec).AppRoles)
	rec = o.admin.call(http.MethodPatch, o.one(o.plain), map[string]any{"role": "admin"})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "ROLE_NOT_GRANTABLE", errCode(rec))
	rec = o.owner.call(http.MethodGet, o.one(o.plain), nil)
	require.Equal(t, "member", decode[teamMemberResult](t, rec).Role, "the refused promotion changed nothing")

	// An invite as admin brings it too (as the organization auth routes' invitations do), so an
	// admin without it cannot invite one; a member's invite carries only what it names.
	invited := k.email("invited-admin")
	rec = o.admin.call(http.MethodPost, o.base(), map[string]any{"email": invited, "name": "Invited Admin", "role": "admin"})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "ROLE_NOT_GRANTABLE", errCode(rec))
	rec = o.admin.call(http.MethodPost, o.base(), map[string]any{"email": invited, "name": "Invited Member", "role": "member"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Empty(t, decode[teamMemberResult](t, rec).AppRoles)
	rec = o.owner.call(http.MethodPost, o.base(), map[string]any{"email": k.email("second-admin"), "name": "Second Admin", "role": "admin"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, []string{orgs.AdminRole}, decode[teamMemberResult](t, rec).AppRoles)
}

func TestTeamKindMismatchAndCrossTenant(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	platform := k.platformAdmin("root@wagerail.test")
	biz := k.org("BUSINESS")
	other := k.org("BUSINESS")

	// A business through the FI or merchant mount is not there, for its owner and the platform.
	for _, prefix := range []string{"/api/financial-institutions", "/api/merchants"} {
		for _, a := range []*apiClient{biz.owner, platform} {
			rec := a.call(http.MethodGet, prefix+"/"+biz.id+"/team-members", nil)
			require.Equal(t, http.StatusNotFound, rec.Code, prefix)
			require.Equal(t, "NOT_FOUND", errCode(rec))
			rec = a.call(http.MethodPost, prefix+"/"+biz.id+"/team-members/"+biz.plain+"/ban", nil)
			require.Equal(t, http.StatusNotFound, rec.Code, prefix)
		}
	}
	// Nor is an organization that does not exist (platform), nor a business's admins under a
	// merchant id.
	rec := platform.call(http.MethodGet, "/api/business/org_nope/team-members", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	m := k.org("MERCHANT")
	rec = platform.call(http.MethodGet, "/api/business/"+m.id+"/admins", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)

	// Another organization's member is 404 through this organization's path, for every route.
	for _, a := range []*apiClient{biz.owner, platform} {
		for _, r := range []struct {
			method, suffix string
			body           any
		}{
			{http.MethodGet, "", nil},
			{http.MethodPut, "", map[string]any{"title": "Spy"}},
			{http.MethodDelete, "", nil},
			{http.MethodPost, "/resend-setup", nil},
			{http.MethodPost, "/ban", nil},
			{http.MethodPost, "/unban", nil},
		} {
			rec := a.call(r.method, biz.one(other.plain)+r.suffix, r.body)
			require.Equal(t, http.StatusNotFound, rec.Code, "%s %s: %s", r.method, r.suffix, rec.Body.String())
		}
		rec := platform.call(http.MethodPost, "/api/business/"+biz.id+"/admins/"+other.adminM+"/suspend", nil)
		require.Equal(t, http.StatusNotFound, rec.Code)
	}
	// Untouched.
	rec = other.owner.call(http.MethodGet, other.one(other.plain), nil)
	require.Equal(t, http.StatusOK, rec.Code)
	got := decode[teamMemberResult](t, rec)
	require.Equal(t, "ACTIVE", got.Status)
	require.Empty(t, got.Title)
}

func TestBusinessAdminRoutes(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	platform := k.platformAdmin("root@wagerail.test")
	ctx := context.Background()

	// A business the platform created has no owner yet.
	bizID := orgs.NewOrganizationID()
	require.NoError(t, db.InTenantTx(ctx, k.d.App, bizID, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: bizID, Name: "Abyssinia Traders", Kind: orgs.Business}, "")
		return err
	}))
	admins := "/api/business/" + bizID + "/admins"
	rec := platform.call(http.MethodGet, admins, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[teamListResult](t, rec).Admins)

	// Its first owner: a new e-mail, INVITED, holding organization_admin, mailed a set-up link.
	rec = platform.call(http.MethodPost, admins, map[string]any{"email": "founder@abyssinia.example", "name": "Founder", "role": "owner"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	founder := decode[teamMemberResult](t, rec)
	require.Equal(t, "owner", founder.Role)
	require.Equal(t, "INVITED", founder.Status)
	require.Equal(t, []string{orgs.AdminRole}, founder.AppRoles)
	k.setupToken("founder@abyssinia.example")
	require.Equal(t, 1, k.audits(bizID, "AddBusinessAdmin", "SUCCESS"))
	rec = platform.call(http.MethodPost, admins+"/"+founder.ID+"/suspend", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "MEMBER_NOT_ACTIVE", errCode(rec))

	// An existing account as owner joins ACTIVE; as the only active owner it cannot be suspended.
	email := k.email("boss")
	k.account(email)
	rec = platform.call(http.MethodPost, admins, map[string]any{"email": email, "name": "Boss", "role": "owner"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	boss := decode[teamMemberResult](t, rec)
	require.Equal(t, "ACTIVE", boss.Status)
	rec = platform.call(http.MethodPost, admins+"/"+boss.ID+"/suspend", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "LAST_OWNER", errCode(rec))
	require.Equal(t, 2, k.audits(bizID, "SuspendBusinessAdmin", "DENIED"), "MEMBER_NOT_ACTIVE, then LAST_OWNER")
	rec = platform.call(http.MethodPost, admins, map[string]any{"email": email, "name": "Boss", "role": "admin"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "ALREADY_MEMBER", errCode(rec))

	// The owner adds a plain member; the admin routes do not see them.
	bo := &teamOrg{k: k, id: bizID, kind: "BUSINESS", prefix: "/api/business", owner: k.signIn(email)}
	plain, _ := bo.addActive("member")
	helper, helperEmail := bo.addActive("admin")
	rec = platform.call(http.MethodGet, admins, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var ids []string
	for _, a := range decode[teamListResult](t, rec).Admins {
		ids = append(ids, a.ID)
	}
	require.ElementsMatch(t, []string{founder.ID, boss.ID, helper}, ids)
	for _, verb := range []string{"suspend", "reactivate", "reset-password"} {
		rec = platform.call(http.MethodPost, admins+"/"+plain+"/"+verb, nil)
		require.Equal(t, http.StatusNotFound, rec.Code, verb)
	}

	// Suspend and reactivate an admin; the suspension bites at once.
	helperClient := k.signIn(helperEmail)
	require.Equal(t, http.StatusOK, helperClient.call(http.MethodGet, bo.base(), nil).Code)
	rec = platform.call(http.MethodPost, admins+"/"+helper+"/suspend", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "BANNED", decode[teamMemberResult](t, rec).Status)
	require.Equal(t, http.StatusForbidden, helperClient.call(http.MethodGet, bo.base(), nil).Code)
	rec = platform.call(http.MethodPost, admins+"/"+helper+"/reactivate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, helperClient.call(http.MethodGet, bo.base(), nil).Code)
	require.Equal(t, 1, k.audits(bizID, "SuspendBusinessAdmin", "SUCCESS"))
	require.Equal(t, 1, k.audits(bizID, "ReactivateBusinessAdmin", "SUCCESS"))

	// Reset password: a one-hour reset link to the admin, nothing else said.
	rec = platform.call(http.MethodPost, admins+"/"+helper+"/reset-password", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"success":true}`, rec.Body.String())
	mail, ok := k.inbox.LatestEmail(helperEmail, notify.ResetPassword)
	require.True(t, ok)
	require.Contains(t, mail.Text, mail.Secret)
	u, err := url.Parse(mail.Secret)
	require.NoError(t, err)
	require.Equal(t, "/reset-password", u.Path)
	f.advance(identity.ResetPasswordTTL + time.Second)
	_, err = identity.ConsumeToken(ctx, k.d.App, identity.ResetPassword, u.Query().Get("token"), f.now())
	require.ErrorIs(t, err, identity.ErrInvalidSecret, "the link lasts one hour")
	require.Equal(t, 1, k.audits(bizID, "ResetBusinessAdminPassword", "SUCCESS"))

	// Malformed and unknown ids.
	rec = platform.hostile(http.MethodGet, "/api/business/"+url.PathEscape("bad id")+"/admins", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	rec = platform.call(http.MethodPost, "/api/business/org_nope/admins", map[string]any{"email": k.email("x"), "name": "X", "role": "admin"})
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = platform.hostile(http.MethodPost, admins, map[string]any{"email": k.email("x"), "name": "X", "role": "member"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

// FuzzTeamRoutes: whatever the body, member id and route, the team routes answer 4xx or success,
// never 5xx.
func FuzzTeamRoutes(f *testing.F) {
	k := newTeamKit(f)
	owner, res := k.signUp("fuzz-owner@example.com", "BUSINESS")
	platform := k.platformAdmin("fuzz-root@wagerail.test")
	o := &teamOrg{k: k, id: res.Organization.ID, kind: "BUSINESS", prefix: "/api/business", owner: owner}
	o.ownerM = o.memberOf(res.User.ID)
	plain, _ := o.addActive("member")
	pending, _ := o.addPending("admin")
	for i, s := range []struct {
		body, member string
	}{
		{`{"email":"a@b.co","name":"A","role":"member"}`, plain},
		{`{"email":"a@b.co","name":"A","role":"owner","appRoles":["organization_admin","x"],"title":"t"}`, pending},
		{`{"title":"x","role":"admin","appRoles":[]}`, plain},
		{`{"name":"\u0000"}`, pending},
		{`{"appRoles":null}`, o.ownerM},
		{`{"email":"` + strings.Repeat("a", 300) + `@b.co","name":"A","role":"member"}`, "org_x"},
		{`[]`, "a/b"},
		{`{"role":1}`, "\x00"},
		{"\xff", strings.Repeat("m", 200)},
		{`{"email":"b@c.de","name":"B","role":"admin"}{}`, ""},
	} {
		f.Add(uint8(i), s.body, s.member, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, route uint8, body, member string, asPlatform bool) {
		a := owner
		if asPlatform {
			a = platform
		}
		routes := []struct{ method, path string }{
			{http.MethodGet, o.base()},
			{http.MethodPost, o.base()},
			{http.MethodGet, o.base() + "/" + url.PathEscape(member)},
			{http.MethodPut, o.base() + "/" + url.PathEscape(member)},
			{http.MethodDelete, o.base() + "/" + url.PathEscape(member)},
			{http.MethodPost, o.base() + "/" + url.PathEscape(member) + "/resend-setup"},
			{http.MethodPost, o.base() + "/" + url.PathEscape(member) + "/ban"},
			{http.MethodPost, o.base() + "/" + url.PathEscape(member) + "/unban"},
			{http.MethodGet, "/api/business/" + url.PathEscape(o.id) + "/admins"},
			{http.MethodPost, "/api/business/" + url.PathEscape(o.id) + "/admins"},
			{http.MethodPost, "/api/business/" + url.PathEscape(o.id) + "/admins/" + url.PathEscape(member) + "/suspend"},
			{http.MethodPost, "/api/business/" + url.PathEscape(o.id) + "/admins/" + url.PathEscape(member) + "/reactivate"},
			{http.MethodPost, "/api/business/" + url.PathEscape(o.id) + "/admins/" + url.PathEscape(member) + "/reset-password"},
			{http.MethodPatch, "/api/financial-institutions/" + url.PathEscape(member) + "/team-members/" + url.PathEscape(member)},
			{http.MethodPost, "/api/merchants/" + url.PathEscape(o.id) + "/team-members"},
		}
		r := routes[int(route)%len(routes)]
		rec := teamRaw(a, r.method, r.path, []byte(body))
		require.Less(t, rec.Code, 500, "%s %s %q: %s", r.method, r.path, body, rec.Body.String())
	})
}

// TestBanHoldsOnAnotherReplica: a second API process keeps a banned admin's access cached for up
// to orgs.CacheTTL, but a write is decided on the membership as it is now: the banned admin
// cannot lift their own ban (or do anything else that writes) through it.
func TestBanHoldsOnAnotherReplica(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	k := teamKitOf(f)
	o := k.org("BUSINESS")
	deps := f.srv.deps
	deps.Registry = prometheus.NewRegistry()
	other := New(deps)
	adminThere := o.admin.clone()
	adminThere.h = other.Engine

	require.Equal(t, http.StatusOK, adminThere.call(http.MethodGet, o.base(), nil).Code, "cached there as an active admin")
	rec := o.owner.call(http.MethodPost, o.one(o.adminM)+"/ban", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	requireStatus(t, adminThere.call(http.MethodPost, o.one(o.adminM)+"/unban", nil), http.StatusForbidden, "NOT_A_MEMBER")
	requireStatus(t, adminThere.call(http.MethodPost, o.one(o.plain)+"/ban", nil), http.StatusForbidden, "NOT_A_MEMBER")
	got := decode[teamMemberJSON](t, o.owner.call(http.MethodGet, o.one(o.adminM), nil))
	require.Equal(t, "BANNED", got.Status)
}
