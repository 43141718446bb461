package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Team-member management: the same handlers mounted for businesses, financial institutions and
// merchants (the organization's kind must match the mount, or it is 404), gated to admins and
// owners of {id} (a platform admin passes); and the platform's business admin routes, which run
// on the audited cross-tenant path.
//
// Rules the route table cannot state, enforced here:
//   - only an owner (or a platform admin) makes, unmakes or otherwise changes an owner: an admin
//     cannot promote anyone, themselves included, to owner, nor ban, edit or cancel an owner;
//   - an admin grants only application roles whose permissions they hold themselves (403
//     ROLE_NOT_GRANTABLE), or any admin could hand themselves every permission;
//   - organization_admin follows the member role (orgs.AppRolesAfterRoleChange): a demotion to
//     member takes it, a promotion to admin or owner — and an invite as one — brings it (a grant
//     like any other);
//   - the last active owner is never banned or demoted (orgs.ErrLastOwner → 409 LAST_OWNER);
//   - nobody bans themselves (409 CANNOT_BAN_SELF);
//   - DELETE only cancels a pending invite; an accepted membership is banned instead, so the
//     organization's history keeps its people;
//   - a user's name belongs to the user once they have set up their account (they may belong to
//     other organizations): an organization renames only invitees who have not.
//
// Every change writes its audit row in its own transaction and drops the member's cached access
// after the commit, so a ban bites on the member's very next request to this process; another API
// replica decides every write on the membership as it is now, and may serve reads on its cached
// access for at most orgs.CacheTTL. Refusals of these rules are
// audited (outcome DENIED) in a transaction of their own.

type teamMount struct {
	prefix string
	kind   orgs.Kind
	update string // the spec's verb: PUT, PATCH for financial institutions
	remove bool   // financial institutions have no DELETE route
}

var teamMounts = []teamMount{
	{prefix: "/api/business", kind: orgs.Business, update: http.MethodPut, remove: true},
	{prefix: "/api/financial-institutions", kind: orgs.FI, update: http.MethodPatch},
	{prefix: "/api/merchants", kind: orgs.Merchant, update: http.MethodPut, remove: true},
}

// teamRoutes serves team-member management of businesses, FIs and merchants, and the platform's business admin routes.
func (s *Server) teamRoutes() []Route {
	var rs []Route
	for _, m := range teamMounts {
		base := m.prefix + "/:id/team-members"
		one := base + "/:memberId"
		kind := m.kind
		org := func(method, path, summary string, h func(*gin.Context, *teamScope)) Route {
			return Route{Method: method, Path: path, Auth: Org, Role: orgs.Admin, Tenant: "id", Summary: summary,
				Handler: func(c *gin.Context) { h(c, s.orgTeamScope(c, kind)) }}
		}
		rs = append(rs,
			org(http.MethodGet, base, "List the team members, pending invites included", s.listTeam),
			org(http.MethodPost, base, "Invite a team member (mails an account set-up link)", s.inviteTeamMember),
			org(http.MethodGet, one, "One team member", s.getTeamMember),
			org(m.update, one, "Update a team member's profile, role or application roles", s.updateTeamMember),
			bodyless(org(http.MethodPost, one+"/resend-setup", "Mail a pending member a new account set-up link", s.resendSetup)),
			bodyless(org(http.MethodPost, one+"/ban", "Ban a team member", s.banTeamMember)),
			bodyless(org(http.MethodPost, one+"/unban", "Lift a team member's ban", s.unbanTeamMember)),
		)
		if m.remove {
			rs = append(rs, org(http.MethodDelete, one, "Cancel a pending invite", s.deleteTeamMember))
		}
	}
	plat := func(method, path, summary string, h func(*gin.Context, *teamScope)) Route {
		return Route{Method: method, Path: path, Auth: Platform, Summary: summary,
			Handler: func(c *gin.Context) { h(c, s.businessAdminScope(c)) }}
	}
	const admins = "/api/business/:id/admins"
	rs = append(rs,
		plat(http.MethodGet, admins, "List a business's owners and admins", s.listTeam),
		plat(http.MethodPost, admins, "Add an owner or admin to a business (mails an account set-up link)", s.addBusinessAdmin),
		bodyless(plat(http.MethodPost, admins+"/:adminId/suspend", "Suspend a business owner or admin", s.banTeamMember)),
		bodyless(plat(http.MethodPost, admins+"/:adminId/reactivate", "Reactivate a suspended business owner or admin", s.unbanTeamMember)),
		bodyless(plat(http.MethodPost, admins+"/:adminId/reset-password", "Mail a business owner or admin a password reset link", s.resetBusinessAdminPassword)),
	)
	return rs
}

// teamScope is what differs between the organization's own team routes and the platform's
// business admin routes; the handlers are shared.
type teamScope struct {
	tenant string // "" when the path's id is malformed (bad is set)
	bad    *Error
	// run runs fn in a transaction of the organization, after checking it exists with the
	// expected kind (404 otherwise); ctx carries the tenant and actor for audit rows.
	run func(fn func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error) error
	// ownerRights: the caller may make, unmake and change owners (an owner, or a platform admin),
	// and grant any application role; anyone else grants only roles within perms, their own.
	ownerRights bool
	perms       orgs.Permissions
	self        string // the caller's user id
	memberParam string // the path parameter naming the member
	// adminsOnly: the platform's business admin routes see owners and admins only.
	adminsOnly bool
	// actions names the audit actions of this scope's mutations.
	actions teamActions
}

type teamActions struct{ invite, ban, unban string }

var errNoOrganization = NewError(http.StatusNotFound, "NOT_FOUND", "no such organization")

// checkOrganization makes an organization of another kind, or a deleted one, look like none.
func checkOrganization(ctx context.Context, tx pgx.Tx, id string, kind orgs.Kind) (orgs.Organization, error) {
	org, err := orgs.ByID(ctx, tx, id)
	if errors.Is(err, orgs.ErrNotFound) || err == nil && (org.Kind != kind || org.Status == orgs.OrgDeleted) {
		return orgs.Organization{}, errNoOrganization
	}
	return org, err
}

func (s *Server) orgTeamScope(c *gin.Context, kind orgs.Kind) *teamScope {
	cl := callerOf(c)
	return &teamScope{
		tenant: cl.Tenant,
		run: func(fn func(context.Context, pgx.Tx, orgs.Organization) error) error {
			return s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
				org, err := checkOrganization(ctx, tx, cl.Tenant, kind)
				if err != nil {
					return err
				}
				return fn(ctx, tx, org)
			})
		},
		ownerRights: cl.Platform || cl.Access.Member && cl.Access.Role == orgs.Owner,
		perms:       cl.Access.Permissions,
		self:        cl.User.ID,
		memberParam: "memberId",
		actions:     teamActions{invite: "InviteTeamMember", ban: "BanTeamMember", unban: "UnbanTeamMember"},
	}
}

func (s *Server) businessAdminScope(c *gin.Context) *teamScope {
	cl := callerOf(c)
	sc := &teamScope{ownerRights: true, self: cl.User.ID, memberParam: "adminId", adminsOnly: true,
		actions: teamActions{invite: "AddBusinessAdmin", ban: "SuspendBusinessAdmin", unban: "ReactivateBusinessAdmin"}}
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		sc.bad = fieldError(err)
		return sc
	}
	sc.tenant = id
	sc.run = func(fn func(context.Context, pgx.Tx, orgs.Organization) error) error {
		ctx := tenancy.WithTenant(c.Request.Context(), id)
		return s.asPlatform(c, func(tx pgx.Tx) error {
			org, err := checkOrganization(ctx, tx, id, orgs.Business)
			if err != nil {
				return err
			}
			return fn(ctx, tx, org)
		})
	}
	return sc
}

// member reads the path's member of org, as this scope may see it.
func (sc *teamScope) member(ctx context.Context, tx pgx.Tx, org orgs.Organization, id string) (orgs.Member, error) {
	m, err := orgs.MemberByID(ctx, tx, org.ID, id)
	if err == nil && sc.adminsOnly && m.Role != orgs.Owner && m.Role != orgs.Admin {
		return orgs.Member{}, orgs.ErrNotFound
	}
	return m, err
}

// memberID is the path's member id, or the 400 a malformed one gets.
func (sc *teamScope) memberID(c *gin.Context) (string, *Error) {
	if sc.bad != nil {
		return "", sc.bad
	}
	id := c.Param(sc.memberParam)
	if err := field.Identifier(sc.memberParam, id, 0); err != nil {
		return "", fieldError(err)
	}
	return id, nil
}

var errOwnerRights = NewError(http.StatusForbidden, "INSUFFICIENT_ROLE", "only an owner can make, change or remove an owner")

// checkGrant checks application role names against the catalog (400 UNKNOWN_ROLE) and, for a
// caller without owner rights, against what the caller holds (403 ROLE_NOT_GRANTABLE).
func (sc *teamScope) checkGrant(ctx context.Context, tx pgx.Tx, org orgs.Organization, names []string) error {
	refused, err := notGrantable(ctx, tx, org.ID, sc.ownerRights, sc.perms, names)
	if err != nil || refused == nil {
		return err
	}
	return refused
}

// notGrantable is the one rule of every route that hands out application roles (the team and
// member routes, and the organization auth routes' promotion and invitation, which bring
// organization_admin): names must be in tenant's catalog (orgs.ErrUnknownRole), and a caller
// without owner rights grants only roles whose permissions they hold (holder), or any admin could
// give anyone, themselves included, the organization's every permission. refused is the 403
// ROLE_NOT_GRANTABLE for the first role holder does not cover, nil when there is none.
func notGrantable(ctx context.Context, tx pgx.Tx, tenant string, ownerRights bool, holder orgs.Permissions, names []string) (refused *Error, err error) {
	roles, err := orgs.CheckAppRoles(ctx, tx, tenant, names)
	if err != nil || ownerRights {
		return nil, err
	}
	for _, r := range roles {
		if !orgs.Covers(holder, r.Permissions) {
			return NewError(http.StatusForbidden, "ROLE_NOT_GRANTABLE", "the role "+r.Name+" grants permissions you do not hold"), nil
		}
	}
	return nil, nil
}

// teamMemberJSON is a member as the team routes show it.
type teamMemberJSON struct {
	ID        string          `json:"id"`
	UserID    string          `json:"userId"`
	Email     string          `json:"email"`
	Name      string          `json:"name"`
	Title     string          `json:"title"`
	Role      orgs.MemberRole `json:"role"`
	Status    string          `json:"status"`
	AppRoles  []string        `json:"appRoles"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

func toTeamMemberJSON(m orgs.Member) teamMemberJSON {
	roles := m.AppRoles
	if roles == nil {
		roles = []string{}
	}
	return teamMemberJSON{ID: m.ID, UserID: m.UserID, Email: m.Email, Name: m.Name, Title: m.Title, Role: m.Role,
		Status: m.Status, AppRoles: roles, CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
}

// teamError maps the stores' errors to the routes' codes; anything else stays a 500.
func teamError(err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, orgs.ErrUnknownRole):
		return NewError(http.StatusBadRequest, "UNKNOWN_ROLE", "an application role is not in this organization's catalog")
	case errors.Is(err, orgs.ErrNotFound), errors.Is(err, identity.ErrNotFound):
		return NewError(http.StatusNotFound, "NOT_FOUND", "no such team member")
	case errors.Is(err, orgs.ErrLastOwner):
		return NewError(http.StatusConflict, "LAST_OWNER", "the organization's last active owner cannot be banned or demoted")
	case errors.Is(err, orgs.ErrAlreadyMember):
		return NewError(http.StatusConflict, "ALREADY_MEMBER", "this person is already a member of the organization")
	case errors.Is(err, orgs.ErrNotPending):
		return NewError(http.StatusConflict, "MEMBER_NOT_PENDING", "this is only for a pending invite")
	case errors.Is(err, identity.ErrEmailTaken):
		return NewError(http.StatusConflict, "CONFLICT", "the account was being created by another request; try again")
	}
	return err
}

// fail answers err; a refusal by a rule (403, 409) of a mutation is audited as DENIED first.
func (s *Server) teamFail(c *gin.Context, sc *teamScope, action, target string, err error) {
	err = teamError(err)
	var e *Error
	if action != "" && sc.tenant != "" && errors.As(err, &e) && (e.Status == http.StatusForbidden || e.Status == http.StatusConflict) {
		if aerr := s.auditIn(c.Request.Context(), sc.tenant, callerOf(c).User.ID, audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: "Member", TargetID: target, Details: map[string]string{"code": e.Code}}); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	writeError(c, err)
}

func (s *Server) listTeam(c *gin.Context, sc *teamScope) {
	if sc.bad != nil {
		writeError(c, sc.bad)
		return
	}
	var roles []orgs.MemberRole
	if sc.adminsOnly {
		roles = []orgs.MemberRole{orgs.Owner, orgs.Admin}
	}
	var ms []orgs.Member
	err := sc.run(func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error {
		var err error
		ms, err = orgs.ListMembers(ctx, tx, org.ID, roles...)
		return err
	})
	if err != nil {
		s.teamFail(c, sc, "", "", err)
		return
	}
	out := make([]teamMemberJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, toTeamMemberJSON(m))
	}
	key := "members"
	if sc.adminsOnly {
		key = "admins"
	}
	c.JSON(http.StatusOK, gin.H{key: out})
}

func (s *Server) getTeamMember(c *gin.Context, sc *teamScope) {
	id, e := sc.memberID(c)
	if e != nil {
		writeError(c, e)
		return
	}
	var m orgs.Member
	err := sc.run(func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error {
		var err error
		m, err = sc.member(ctx, tx, org, id)
		return err
	})
	if err != nil {
		s.teamFail(c, sc, "", "", err)
		return
	}
	c.JSON(http.StatusOK, toTeamMemberJSON(m))
}

// maxAppRoles bounds a member's application roles in one request.
const maxAppRoles = 32

// cleanAppRoles checks each name and drops repeats, keeping the order given.
func cleanAppRoles(names []string) ([]string, error) {
	if len(names) > maxAppRoles {
		return nil, &field.Error{Field: "appRoles", Problem: fmt.Sprintf("must name at most %d roles", maxAppRoles)}
	}
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		if err := field.Name(fmt.Sprintf("appRoles[%d]", i), n); err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// cleanTitle trims a job title and checks it; empty means none.
func cleanTitle(t string) (string, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return "", nil
	}
	return t, field.Name("title", t)
}

// invitee is who an invite (or the platform's add-admin) adds.
type invitee struct {
	Email, Name, Title string
	Role               orgs.MemberRole
	AppRoles           []string
}

func (in *invitee) clean() error {
	in.Email = identity.NormalizeEmail(in.Email)
	in.Name = strings.TrimSpace(in.Name)
	if err := field.Email("email", in.Email); err != nil {
		return err
	}
	if err := field.Name("name", in.Name); err != nil {
		return err
	}
	var err error
	if in.Title, err = cleanTitle(in.Title); err != nil {
		return err
	}
	in.AppRoles, err = cleanAppRoles(in.AppRoles)
	return err
}

type inviteRequest struct {
	Email    string          `json:"email"`
	Name     string          `json:"name"`
	Role     orgs.MemberRole `json:"role"`
	AppRoles []string        `json:"appRoles"`
	Title    string          `json:"title"`
}

func (s *Server) inviteTeamMember(c *gin.Context, sc *teamScope) {
	var req inviteRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in := invitee{Email: req.Email, Name: req.Name, Title: req.Title, Role: req.Role, AppRoles: req.AppRoles}
	if err := in.clean(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !in.Role.Valid() {
		writeError(c, fieldError(&field.Error{Field: "role", Problem: "must be owner, admin or member"}))
		return
	}
	s.invite(c, sc, in)
}

type addAdminRequest struct {
	Email string          `json:"email"`
	Name  string          `json:"name"`
	Role  orgs.MemberRole `json:"role"`
}

// addBusinessAdmin is the platform's invite: owners too (a business the platform created gets its
// first owner this way), holding the organization_admin role as sign-up's owner does.
func (s *Server) addBusinessAdmin(c *gin.Context, sc *teamScope) {
	if sc.bad != nil {
		writeError(c, sc.bad)
		return
	}
	var req addAdminRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in := invitee{Email: req.Email, Name: req.Name, Role: req.Role, AppRoles: []string{orgs.AdminRole}}
	if err := in.clean(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if in.Role != orgs.Owner && in.Role != orgs.Admin {
		writeError(c, fieldError(&field.Error{Field: "role", Problem: "must be owner or admin"}))
		return
	}
	s.invite(c, sc, in)
}

// invite adds in to the scope's organization: a new e-mail gets a user without a password and
// an INVITED membership; an existing user who has no password yet, or has not proved the
// e-mail, is INVITED too (the set-up link's password then replaces theirs); one who has a
// password and a verified e-mail joins ACTIVE (they sign in as usual). Invitees are mailed a set-up link (72 h), the
// others a notice.
func (s *Server) invite(c *gin.Context, sc *teamScope, in invitee) {
	action := sc.actions.invite
	// Bounds the mail one person gets from invites, whoever sends them.
	if !s.allow(c, ruleMessageAccount, in.Email) {
		return
	}
	var (
		org   orgs.Organization
		m     orgs.Member
		token string
	)
	run := func(ctx context.Context, tx pgx.Tx, o orgs.Organization) error {
		org = o
		if in.Role == orgs.Owner && !sc.ownerRights {
			return errOwnerRights
		}
		// organization_admin follows the role from the start, as on a promotion: an invite as
		// admin or owner carries it, a grant the inviter must hold like any other.
		in.AppRoles = orgs.AppRolesAfterRoleChange(in.AppRoles, orgs.PlainMember, in.Role)
		if err := sc.checkGrant(ctx, tx, o, in.AppRoles); err != nil {
			return err
		}
		u, err := identity.UserByEmail(ctx, tx, in.Email)
		created := errors.Is(err, identity.ErrNotFound)
		if created {
			u, err = identity.CreateUser(ctx, tx, identity.NewUser{Email: in.Email, Name: in.Name})
		}
		if err != nil {
			return err
		}
		// Only an account that has proved this address joins at once: anyone may sign up with any
		// address, so an unproved one is INVITED and the address itself gets the set-up link.
		status := orgs.Invited
		if u.PasswordHash != "" && u.EmailVerified {
			status = orgs.Active
		}
		if m, err = orgs.AddMember(ctx, tx, o.ID, orgs.NewMember{UserID: u.ID, Role: in.Role, Status: status,
			Title: in.Title, AppRoles: in.AppRoles}); err != nil {
			return err
		}
		token = ""
		if status == orgs.Invited {
			if token, err = identity.IssueToken(ctx, tx, identity.AccountSetup, u.ID, u.Email, identity.AccountSetupTTL, s.now()); err != nil {
				return err
			}
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]any{"userId": u.ID, "role": m.Role, "status": m.Status, "appRoles": m.AppRoles, "newUser": created}})
	}
	err := sc.run(run)
	if errors.Is(err, identity.ErrEmailTaken) {
		// Another request created the same user between our read and our insert: it exists now.
		err = sc.run(run)
	}
	if err != nil {
		s.teamFail(c, sc, action, "", err)
		return
	}
	s.access.Invalidate(m.UserID, org.ID)
	ctx := c.Request.Context()
	if token != "" {
		s.sendSetupEmail(ctx, m.Email, org, token)
	} else {
		s.sendEmail(ctx, notify.Email{To: m.Email, Subject: "You were added to an organization on Wagerail", Purpose: notify.Invitation,
			Text: "You have been added to " + org.Name + " on Wagerail as " + string(m.Role) + ".\n\nSign in as usual at " +
				s.deps.PublicURL + "/sign-in to work in it.\n"})
	}
	c.JSON(http.StatusCreated, toTeamMemberJSON(m))
}

// sendSetupEmail mails an account set-up link (the set-up page posts the token to
// /api/auth/reset-password with the new password).
func (s *Server) sendSetupEmail(ctx context.Context, to string, org orgs.Organization, token string) {
	l := s.link("/setup-account", token)
	s.sendEmail(ctx, notify.Email{To: to, Subject: "Set up your Wagerail account", Purpose: notify.AccountSetup,
		Text: "You have been invited to join " + org.Name + " on Wagerail.\n\nChoose your password by opening this link within 72 hours:\n\n" +
			l + "\n\nIf you did not expect this, ignore this e-mail.\n", Secret: l})
}

type updateMemberRequest struct {
	Name     *string          `json:"name"`
	Title    *string          `json:"title"`
	Role     *orgs.MemberRole `json:"role"`
	AppRoles *[]string        `json:"appRoles"`
}

func (r *updateMemberRequest) clean() error {
	if r.Name == nil && r.Title == nil && r.Role == nil && r.AppRoles == nil {
		return &field.Error{Field: "body", Problem: "must name at least one of name, title, role, appRoles"}
	}
	if r.Name != nil {
		n := strings.TrimSpace(*r.Name)
		if err := field.Name("name", n); err != nil {
			return err
		}
		r.Name = &n
	}
	if r.Title != nil {
		t, err := cleanTitle(*r.Title)
		if err != nil {
			return err
		}
		r.Title = &t
	}
	if r.Role != nil && !r.Role.Valid() {
		return &field.Error{Field: "role", Problem: "must be owner, admin or member"}
	}
	if r.AppRoles != nil {
		roles, err := cleanAppRoles(*r.AppRoles)
		if err != nil {
			return err
		}
		r.AppRoles = &roles
	}
	return nil
}

func (s *Server) updateTeamMember(c *gin.Context, sc *teamScope) {
	const action = "UpdateTeamMember"
	id, e := sc.memberID(c)
	if e != nil {
		writeError(c, e)
		return
	}
	var req updateMemberRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := req.clean(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	var m orgs.Member
	err := sc.run(func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error {
		if req.AppRoles != nil {
			if err := sc.checkGrant(ctx, tx, org, *req.AppRoles); err != nil {
				return err
			}
		}
		var err error
		var from orgs.MemberRole
		m, err = orgs.UpdateMember(ctx, tx, org.ID, id, func(m *orgs.Member) error {
			if sc.adminsOnly && m.Role != orgs.Owner && m.Role != orgs.Admin {
				return orgs.ErrNotFound
			}
			if !sc.ownerRights && (m.Role == orgs.Owner || req.Role != nil && *req.Role == orgs.Owner) {
				return errOwnerRights
			}
			from = m.Role
			if req.Title != nil {
				m.Title = *req.Title
			}
			if req.Role != nil {
				m.Role = *req.Role
			}
			return nil
		})
		if err != nil {
			return err
		}
		// organization_admin follows the role (as on the organization auth routes): a demotion
		// takes it, a promotion brings it, which the caller must hold to hand out.
		if names := m.AppRoles; req.AppRoles != nil || from != m.Role {
			if req.AppRoles != nil {
				names = *req.AppRoles
			}
			if from != m.Role {
				names = orgs.AppRolesAfterRoleChange(names, from, m.Role)
				if err := sc.checkGrant(ctx, tx, org, names); err != nil {
					return err
				}
			}
			if err := orgs.SetAppRoles(ctx, tx, org.ID, m.ID, names); err != nil {
				return err
			}
		}
		if req.Name != nil && *req.Name != m.Name {
			u, err := identity.UserByID(ctx, tx, m.UserID)
			if err != nil {
				return err
			}
			if u.PasswordHash != "" {
				return NewError(http.StatusConflict, "NAME_MANAGED_BY_USER", "this person has set up their account; their name is theirs to change")
			}
			if err := identity.UpdateName(ctx, tx, m.UserID, *req.Name, s.now()); err != nil {
				return err
			}
		}
		if m, err = orgs.MemberByID(ctx, tx, org.ID, m.ID); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]any{"role": m.Role, "appRoles": m.AppRoles, "nameChanged": req.Name != nil, "titleChanged": req.Title != nil}})
	})
	if err != nil {
		s.teamFail(c, sc, action, id, err)
		return
	}
	s.access.Invalidate(m.UserID, m.TenantID)
	c.JSON(http.StatusOK, toTeamMemberJSON(m))
}

func (s *Server) deleteTeamMember(c *gin.Context, sc *teamScope) {
	const action = "DeleteTeamMember"
	id, e := sc.memberID(c)
	if e != nil {
		writeError(c, e)
		return
	}
	var m orgs.Member
	err := sc.run(func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error {
		cur, err := sc.member(ctx, tx, org, id)
		if err != nil {
			return err
		}
		if cur.Role == orgs.Owner && !sc.ownerRights {
			return errOwnerRights
		}
		if m, err = orgs.RemovePending(ctx, tx, org.ID, id); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]any{"userId": m.UserID, "role": m.Role}})
	})
	if err != nil {
		s.teamFail(c, sc, action, id, err)
		return
	}
	s.access.Invalidate(m.UserID, m.TenantID)
	c.JSON(http.StatusOK, gin.H{"success": true})
}

// resendSetup retires the member's earlier set-up links and mails a new one.
func (s *Server) resendSetup(c *gin.Context, sc *teamScope) {
	const action = "ResendSetup"
	id, e := sc.memberID(c)
	if e != nil {
		writeError(c, e)
		return
	}
	if !s.allow(c, ruleMessageAccount, "member:"+id) {
		return
	}
	var (
		org   orgs.Organization
		m     orgs.Member
		token string
	)
	err := sc.run(func(ctx context.Context, tx pgx.Tx, o orgs.Organization) error {
		org = o
		var err error
		if m, err = sc.member(ctx, tx, o, id); err != nil {
			return err
		}
		if m.Status != orgs.Invited {
			return orgs.ErrNotPending
		}
		now := s.now()
		if _, err := identity.SpendTokens(ctx, tx, identity.AccountSetup, m.UserID, now); err != nil {
			return err
		}
		if token, err = identity.IssueToken(ctx, tx, identity.AccountSetup, m.UserID, m.Email, identity.AccountSetupTTL, now); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Member", TargetID: m.ID})
	})
	if err != nil {
		s.teamFail(c, sc, action, id, err)
		return
	}
	s.sendSetupEmail(c.Request.Context(), m.Email, org, token)
	c.JSON(http.StatusOK, gin.H{"success": true})
}

func (s *Server) banTeamMember(c *gin.Context, sc *teamScope)   { s.setMemberStatus(c, sc, true) }
func (s *Server) unbanTeamMember(c *gin.Context, sc *teamScope) { s.setMemberStatus(c, sc, false) }

// setMemberStatus bans (ACTIVE → BANNED) or lifts a ban (BANNED → ACTIVE). A ban does not revoke
// the member's sessions (they may act in other organizations); dropping the cached access makes
// the pipeline refuse them here from their next request on (another replica: their next write,
// and their reads within orgs.CacheTTL).
func (s *Server) setMemberStatus(c *gin.Context, sc *teamScope, ban bool) {
	action, from, to := sc.actions.unban, orgs.Banned, orgs.Active
	if ban {
		action, from, to = sc.actions.ban, orgs.Active, orgs.Banned
	}
	id, e := sc.memberID(c)
	if e != nil {
		writeError(c, e)
		return
	}
	var m orgs.Member
	err := sc.run(func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error {
		var err error
		m, err = orgs.UpdateMember(ctx, tx, org.ID, id, func(m *orgs.Member) error {
			switch {
			case sc.adminsOnly && m.Role != orgs.Owner && m.Role != orgs.Admin:
				return orgs.ErrNotFound
			case ban && m.UserID == sc.self:
				return NewError(http.StatusConflict, "CANNOT_BAN_SELF", "you cannot ban yourself")
			case m.Role == orgs.Owner && !sc.ownerRights:
				return errOwnerRights
			case m.Status != from && ban:
				return NewError(http.StatusConflict, "MEMBER_NOT_ACTIVE", "only an active member can be banned")
			case m.Status != from:
				return NewError(http.StatusConflict, "MEMBER_NOT_BANNED", "this member is not banned")
			}
			m.Status = to
			return nil
		})
		if err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]string{"userId": m.UserID, "from": from, "to": to}})
	})
	if err != nil {
		s.teamFail(c, sc, action, id, err)
		return
	}
	s.access.Invalidate(m.UserID, m.TenantID)
	c.JSON(http.StatusOK, toTeamMemberJSON(m))
}

// resetBusinessAdminPassword mails the admin a password reset link (1 h). The answer is the same
// whatever the account's state.
func (s *Server) resetBusinessAdminPassword(c *gin.Context, sc *teamScope) {
	const action = "ResetBusinessAdminPassword"
	id, e := sc.memberID(c)
	if e != nil {
		writeError(c, e)
		return
	}
	if !s.allow(c, ruleMessageAccount, "member:"+id) {
		return
	}
	var (
		m     orgs.Member
		token string
	)
	err := sc.run(func(ctx context.Context, tx pgx.Tx, org orgs.Organization) error {
		var err error
		if m, err = sc.member(ctx, tx, org, id); err != nil {
			return err
		}
		if token, err = identity.IssueToken(ctx, tx, identity.ResetPassword, m.UserID, m.Email, identity.ResetPasswordTTL, s.now()); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]string{"userId": m.UserID}})
	})
	if err != nil {
		s.teamFail(c, sc, action, id, err)
		return
	}
	s.sendResetEmail(c.Request.Context(), m.Email, "A Wagerail administrator started a password reset for your account.", token)
	c.JSON(http.StatusOK, gin.H{"success": true})
}
