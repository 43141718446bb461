package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Authentication: e-mail and password, sessions, the active organization. The routes live under
// /api/auth/* like the spec's provider's, but they are rows of the one route table.

func (s *Server) authRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/auth/sign-up/email", Auth: Public, Summary: "Sign up with e-mail and password; creates the first organization", Handler: s.signUp},
		{Method: http.MethodPost, Path: "/api/auth/sign-in/email", Auth: Public, Summary: "Sign in with e-mail and password", Handler: s.signIn},
		{Method: http.MethodPost, Path: "/api/auth/sign-out", Auth: Session, TwoFactorChallenge: true, Summary: "Sign out (revokes the session)", Handler: s.signOut, Body: BodyNone},
		{Method: http.MethodGet, Path: "/api/auth/get-session", Auth: Session, Summary: "The signed-in user and session", Handler: s.getSession},
		{Method: http.MethodPost, Path: "/api/auth/organization/set-active", Auth: Session, Summary: "Choose the active organization (rotates the session)", Handler: s.setActiveOrganization},
	}
}

// Audit actor of attempts made before anyone is signed in.
const anonymousActor = "anonymous"

type userJSON struct {
	ID            string `json:"id"`
	Email         string `json:"email"`
	Name          string `json:"name"`
	EmailVerified bool   `json:"emailVerified"`
	TwoFactor     bool   `json:"twoFactorEnabled"`
}

func toUserJSON(u identity.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Name: u.Name, EmailVerified: u.EmailVerified, TwoFactor: u.TwoFactorEnabled}
}

type sessionJSON struct {
	ExpiresAt            time.Time `json:"expiresAt"`
	ActiveOrganizationID *string   `json:"activeOrganizationId"`
}

func toSessionJSON(s identity.Session) sessionJSON {
	out := sessionJSON{ExpiresAt: s.ExpiresAt.UTC()}
	if s.ActiveOrganizationID != "" {
		id := s.ActiveOrganizationID
		out.ActiveOrganizationID = &id
	}
	return out
}

type organizationJSON struct {
	ID   string    `json:"id"`
	Name string    `json:"name"`
	Kind orgs.Kind `json:"kind"`
}

// setSessionCookie hands the client its session token: HttpOnly (scripts never see it),
// SameSite=Lax (no cross-site POSTs carry it), Secure whenever the request came over TLS.
func (s *Server) setSessionCookie(c *gin.Context, token string, sess identity.Session) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/", Expires: sess.ExpiresAt, MaxAge: int(sess.ExpiresAt.Sub(s.now()).Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: overTLS(c),
	})
}

func clearSessionCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: overTLS(c)})
}

// overTLS: served over TLS directly or behind a proxy that terminated it. Trusting the header can
// only make the cookie stricter.
func overTLS(c *gin.Context) bool {
	return c.Request.TLS != nil || strings.EqualFold(c.GetHeader("X-Forwarded-Proto"), "https")
}

func (s *Server) newSession(c *gin.Context, userID, activeOrg string, pending bool) identity.NewSession {
	return identity.NewSession{UserID: userID, ActiveOrganizationID: activeOrg, TwoFactorPending: pending,
		IP: c.ClientIP(), UserAgent: c.Request.UserAgent()}
}

// auditIn writes one audit row in its own transaction under tenant (crosstenant.PlatformTenant
// for acts about a user rather than an organization).
func (s *Server) auditIn(ctx context.Context, tenant, actor string, e audit.Entry) error {
	ctx = tenancy.WithActor(tenancy.WithTenant(ctx, tenant), actor)
	return tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error { return audit.Write(ctx, tx, e) })
}

type signUpRequest struct {
	Email        string `json:"email"`
	Password     string `json:"password"`
	Name         string `json:"name"`
	Organization struct {
		Name string    `json:"name"`
		Kind orgs.Kind `json:"kind"`
	} `json:"organization"`
}

func (r *signUpRequest) validate() error {
	r.Email = identity.NormalizeEmail(r.Email)
	r.Name = strings.TrimSpace(r.Name)
	r.Organization.Name = strings.TrimSpace(r.Organization.Name)
	if err := field.Email("email", r.Email); err != nil {
		return err
	}
	if err := identity.CheckPassword(r.Password); err != nil {
		return &field.Error{Field: "password", Problem: "must be 10 to 128 bytes of valid UTF-8"}
	}
	if err := field.Name("name", r.Name); err != nil {
		return err
	}
	if err := field.Name("organization.name", r.Organization.Name); err != nil {
		return err
	}
	if !orgs.ValidKind(r.Organization.Kind) {
		return &field.Error{Field: "organization.kind", Problem: "must be BUSINESS, FI or MERCHANT"}
	}
	return nil
}

func (s *Server) signUp(c *gin.Context) {
	var req signUpRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := req.validate(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !s.allow(c, ruleSignUpIP, c.ClientIP()) {
		return
	}
	hash, err := identity.HashPassword(req.Password)
	if err != nil {
		writeError(c, err)
		return
	}
	ctx := c.Request.Context()
	orgID := orgs.NewOrganizationID()
	now := s.now()
	var (
		user  identity.User
		org   orgs.Organization
		sess  identity.Session
		token string
	)
	err = db.InTenantTx(ctx, s.deps.DB, orgID, func(tx pgx.Tx) error {
		var err error
		if user, err = identity.CreateUser(ctx, tx, identity.NewUser{Email: req.Email, Name: req.Name, PasswordHash: hash}); err != nil {
			return err
		}
		if org, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: orgID, Name: req.Organization.Name, Kind: req.Organization.Kind}, user.ID); err != nil {
			return err
		}
		if sess, token, err = identity.CreateSession(ctx, tx, s.newSession(c, user.ID, orgID, false), now); err != nil {
			return err
		}
		actx := tenancy.WithActor(tenancy.WithTenant(ctx, orgID), user.ID)
		if err := audit.Write(actx, tx, audit.Entry{Action: "SignUp", Outcome: audit.Success, TargetType: "User", TargetID: user.ID}); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "CreateOrganization", Outcome: audit.Success, TargetType: "Organization", TargetID: orgID,
			Details: map[string]string{"kind": string(org.Kind)}})
	})
	if errors.Is(err, identity.ErrEmailTaken) {
		s.signUpTaken(c, req, orgID, now)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	s.sendVerificationEmail(ctx, user)
	s.setSessionCookie(c, token, sess)
	c.JSON(http.StatusCreated, gin.H{"user": toUserJSON(user), "organization": organizationJSON{ID: org.ID, Name: org.Name, Kind: org.Kind}})
}

// signUpTaken answers a sign-up whose e-mail already has an account exactly as a new sign-up is
// answered (201, the same body with fresh ids, a session cookie of the same form), after the
// same password hashing, so the answer does not tell who has an account. Nothing is created: the
// cookie names no session, and the address's owner gets a mail saying an account exists (the
// new sign-up's owner gets the verification mail at the same point). The attempt is audited
// DENIED under the platform.
func (s *Server) signUpTaken(c *gin.Context, req signUpRequest, orgID string, now time.Time) {
	ctx := c.Request.Context()
	if err := s.auditIn(ctx, crosstenant.PlatformTenant, anonymousActor, audit.Entry{Action: "SignUp", Outcome: audit.Denied,
		Details: map[string]string{"code": "ACCOUNT_EXISTS"}}); err != nil {
		writeError(c, err)
		return
	}
	s.sendAccountExistsEmail(ctx, req.Email)
	user := identity.User{ID: identity.NewID(), Email: req.Email, Name: req.Name}
	s.setSessionCookie(c, identity.NewToken(), identity.Session{ExpiresAt: now.Add(identity.SessionLifetime)})
	c.JSON(http.StatusCreated, gin.H{"user": toUserJSON(user),
		"organization": organizationJSON{ID: orgID, Name: req.Organization.Name, Kind: req.Organization.Kind}})
}

type signInRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

var errInvalidCredentials = NewError(http.StatusUnauthorized, "INVALID_CREDENTIALS", "wrong e-mail or password")

func (s *Server) signIn(c *gin.Context) {
	var req signInRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	req.Email = identity.NormalizeEmail(req.Email)
	// A malformed e-mail or an impossible password cannot be anyone's: the same answer as a wrong
	// one, after the same work, so the shape of the input reveals nothing either.
	shapeOK := field.Email("email", req.Email) == nil && identity.CheckPassword(req.Password) == nil
	if !s.allow(c, ruleSignInIP, c.ClientIP()) || !s.allow(c, ruleSignInAccount, req.Email) {
		return
	}
	ctx := c.Request.Context()
	var user identity.User
	if shapeOK {
		var err error
		if user, err = identity.UserByEmail(ctx, s.deps.DB, req.Email); err != nil && !errors.Is(err, identity.ErrNotFound) {
			writeError(c, err)
			return
		}
	} else {
		req.Password = "" // verified against the dummy hash below: same cost, never a match
	}
	if !identity.VerifyPassword(req.Password, user.PasswordHash) {
		if err := s.auditIn(ctx, crosstenant.PlatformTenant, anonymousActor, audit.Entry{Action: "SignIn", Outcome: audit.Denied,
			TargetType: "User", TargetID: user.ID}); err != nil {
			writeError(c, err)
			return
		}
		writeError(c, errInvalidCredentials)
		return
	}
	s.resetLimit(ctx, ruleSignInAccount, req.Email)
	s.startSession(c, user, !user.TwoFactorEnabled, "SignIn")
}

// startSession finishes a successful first factor (password or magic link): it revokes the
// session the client held (if any), creates a fresh one (a full one when complete, else a
// two-factor challenge), audits action and answers.
func (s *Server) startSession(c *gin.Context, user identity.User, complete bool, action string) {
	s.startSessionBy(c, user, complete, action, "")
}

// startSessionBy is startSession for a sign-in by passkeyID ("" for none): the session records
// it (identity.Session.PasskeyID).
func (s *Server) startSessionBy(c *gin.Context, user identity.User, complete bool, action, passkeyID string) {
	ctx := tenancy.WithActor(c.Request.Context(), user.ID)
	now := s.now()
	activeOrg := ""
	if complete {
		var err error
		if activeOrg, err = s.defaultOrganization(ctx, user.ID); err != nil {
			writeError(c, err)
			return
		}
	}
	var sess identity.Session
	var token string
	err := pgx.BeginFunc(ctx, s.deps.DB, func(tx pgx.Tx) error {
		if old, ok := sessionToken(c); ok {
			if prev, err := identity.SessionByToken(ctx, tx, old, now); err == nil {
				if err := identity.RevokeSession(ctx, tx, prev.ID, now); err != nil {
					return err
				}
			}
		}
		var err error
		n := s.newSession(c, user.ID, activeOrg, !complete)
		n.PasskeyID = passkeyID
		sess, token, err = identity.CreateSession(ctx, tx, n, now)
		return err
	})
	if err == nil {
		err = s.auditIn(ctx, crosstenant.PlatformTenant, user.ID, audit.Entry{Action: action, Outcome: audit.Success,
			TargetType: "Session", TargetID: sess.ID, Details: map[string]bool{"twoFactorPending": !complete}})
	}
	if err != nil {
		writeError(c, err)
		return
	}
	s.setSessionCookie(c, token, sess)
	if !complete {
		c.JSON(http.StatusOK, gin.H{"twoFactorRedirect": true, "session": toSessionJSON(sess)})
		return
	}
	c.JSON(http.StatusOK, gin.H{"user": toUserJSON(user), "session": toSessionJSON(sess)})
}

// defaultOrganization is the organization a fresh session starts in: the user's oldest active
// membership, or none.
func (s *Server) defaultOrganization(ctx context.Context, userID string) (string, error) {
	var id string
	err := tenancy.InUserTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		ms, err := orgs.ListForUser(ctx, tx, userID, "")
		if err == nil && len(ms) > 0 {
			id = ms[0].Organization.ID
		}
		return err
	})
	return id, err
}

func (s *Server) signOut(c *gin.Context) {
	cl := callerOf(c)
	ctx := c.Request.Context()
	if err := identity.RevokeSession(ctx, s.deps.DB, cl.Session.ID, s.now()); err != nil {
		writeError(c, err)
		return
	}
	if err := s.auditIn(ctx, crosstenant.PlatformTenant, cl.User.ID, audit.Entry{Action: "SignOut", Outcome: audit.Success,
		TargetType: "Session", TargetID: cl.Session.ID}); err != nil {
		writeError(c, err)
		return
	}
	clearSessionCookie(c)
	c.JSON(http.StatusOK, gin.H{"success": true})
}

func (s *Server) getSession(c *gin.Context) {
	cl := callerOf(c)
	c.JSON(http.StatusOK, gin.H{"user": toUserJSON(cl.User), "session": toSessionJSON(cl.Session)})
}

type setActiveRequest struct {
	OrganizationID string `json:"organizationId"`
}

func (s *Server) setActiveOrganization(c *gin.Context) {
	var req setActiveRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("organizationId", req.OrganizationID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	cl := callerOf(c)
	ctx := tenancy.WithTenant(c.Request.Context(), req.OrganizationID)
	var acc orgs.Access
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		acc, err = orgs.LoadAccess(ctx, tx, req.OrganizationID, cl.User.ID)
		return err
	})
	if err != nil && !errors.Is(err, orgs.ErrNotFound) {
		writeError(c, err)
		return
	}
	if !acc.Member || acc.OrgStatus == orgs.OrgDeleted {
		s.deny(c, req.OrganizationID, "NOT_A_MEMBER", "you are not a member of this organization")
		return
	}
	s.rotate(c, "SetActiveOrganization", req.OrganizationID, func(n *identity.NewSession) { n.ActiveOrganizationID = req.OrganizationID })
}

// rotate replaces the caller's session by a new one with change applied (a privilege change),
// audits action under tenant ("" means the user-level tenant) and answers with the session.
func (s *Server) rotate(c *gin.Context, action, tenant string, change func(*identity.NewSession)) {
	cl := callerOf(c)
	var sess identity.Session
	var token string
	err := s.inRotation(c, tenant, func(actx context.Context, tx pgx.Tx) error {
		var err error
		sess, token, err = s.rotateIn(actx, tx, cl, action, change)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	s.answerRotated(c, cl.User, sess, token)
}

// inRotation runs fn in a transaction under tenant ("" means the user-level tenant) with the
// caller as actor: the privilege change and the rotation it earns (rotateIn) commit together.
func (s *Server) inRotation(c *gin.Context, tenant string, fn func(actx context.Context, tx pgx.Tx) error) error {
	if tenant == "" {
		tenant = crosstenant.PlatformTenant
	}
	actx := tenancy.WithActor(tenancy.WithTenant(c.Request.Context(), tenant), callerOf(c).User.ID)
	return tenancy.InTx(actx, s.deps.DB, func(tx pgx.Tx) error { return fn(actx, tx) })
}

// rotateIn replaces the caller's session inside tx, so the rotation commits or rolls back with the
// privilege change it follows, and audits action (actx carries the tenant and actor). A session
// revoked meanwhile is 401; the caller sets the cookie after the commit.
func (s *Server) rotateIn(actx context.Context, tx pgx.Tx, cl *caller, action string, change func(*identity.NewSession)) (identity.Session, string, error) {
	sess, token, err := identity.RotateSession(actx, tx, cl.Session, change, s.now())
	if errors.Is(err, identity.ErrNotFound) {
		return identity.Session{}, "", NewError(http.StatusUnauthorized, "UNAUTHENTICATED", "the session ended; sign in again")
	}
	if err != nil {
		return identity.Session{}, "", err
	}
	return sess, token, audit.Write(actx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Session", TargetID: sess.ID})
}

// answerRotated hands the client its new session and answers with it.
func (s *Server) answerRotated(c *gin.Context, user identity.User, sess identity.Session, token string) {
	s.setSessionCookie(c, token, sess)
	c.JSON(http.StatusOK, gin.H{"user": toUserJSON(user), "session": toSessionJSON(sess)})
}
