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
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The organization routes under /api/auth/organization/* (the spec's auth provider's organization
// plugin): create, invite, accept, leave, member roles, list, the full organization. They are
// Session routes because the organization they act on is named in the body or query, not in the
// path or the session; each handler admits the caller to it with the pipeline's own rules
// (s.admit: active member with the minimum role, audited refusals, a platform admin passes) before
// anything else, and applies the inline rules about owners itself.

func (s *Server) orgAuthRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/auth/organization/create", Auth: Session, Summary: "Create an organization with the caller as owner", Handler: s.createOrganization},
		{Method: http.MethodPost, Path: "/api/auth/organization/invite-member", Auth: Session, Summary: "Invite an e-mail to an organization", Handler: s.inviteMember},
		{Method: http.MethodPost, Path: "/api/auth/organization/accept-invitation", Auth: Session, Summary: "Accept an invitation (rotates the session into the organization)", Handler: s.acceptInvitation},
		{Method: http.MethodPost, Path: "/api/auth/organization/leave", Auth: Session, Summary: "Leave an organization", Handler: s.leaveOrganization},
		{Method: http.MethodPost, Path: "/api/auth/organization/update-member-role", Auth: Session, Summary: "Change a member's role", Handler: s.updateMemberRole},
		{Method: http.MethodPost, Path: "/api/auth/organization/remove-member", Auth: Session, Summary: "Remove a member", Handler: s.removeMember},
		{Method: http.MethodGet, Path: "/api/auth/organization/list", Auth: Session, Summary: "The caller's organizations", Handler: s.listOrganizations},
		{Method: http.MethodGet, Path: "/api/auth/organization/get-full-organization", Auth: Session, Summary: "An organization with its members, roles and pending invitations", Handler: s.fullOrganization},
	}
}

// refusal is a domain rule's refusal raised inside a transaction (which it rolls back): answer
// writes entry with outcome DENIED in a transaction of its own, then answers err.
type refusal struct {
	err   *Error
	entry audit.Entry
}

func (r *refusal) Error() string { return r.err.Error() }

func refuse(status int, code, msg, action, targetType, targetID string) *refusal {
	return refuseWith(NewError(status, code, msg), action, targetType, targetID)
}

// refuseWith is refuse of an answer already made.
func refuseWith(e *Error, action, targetType, targetID string) *refusal {
	return &refusal{err: e, entry: audit.Entry{Action: action, Outcome: audit.Denied,
		TargetType: targetType, TargetID: targetID, Details: map[string]string{"code": e.Code}}}
}

// answer writes err: a refusal audited under tenant, anything else as writeError does.
func (s *Server) answer(c *gin.Context, tenant string, err error) {
	var r *refusal
	if errors.As(err, &r) {
		if aerr := s.auditIn(c.Request.Context(), tenant, callerOf(c).User.ID, r.entry); aerr != nil {
			writeError(c, aerr)
			return
		}
		writeError(c, r.err)
		return
	}
	writeError(c, err)
}

var (
	errMemberNotFound    = NewError(http.StatusNotFound, "NOT_FOUND", "no such member in this organization")
	errOrgNotFound       = NewError(http.StatusNotFound, "NOT_FOUND", "no such organization")
	errInvalidInvitation = NewError(http.StatusBadRequest, "INVALID_TOKEN", "the invitation is unknown, expired, already used or canceled")
)

func lastOwner(action, memberID string) *refusal {
	return refuse(http.StatusConflict, "LAST_OWNER", "the last active owner cannot be removed or demoted; make another member owner first",
		action, "Member", memberID)
}

func ownerOnly(action, memberID, what string) *refusal {
	return refuse(http.StatusForbidden, "INSUFFICIENT_ROLE", "only an owner may "+what, action, "Member", memberID)
}

// actsAsOwner: the caller may touch owners in the route's organization (an owner there, or a
// platform admin).
func actsAsOwner(cl *caller) bool {
	return cl.Platform || (cl.Access.Member && cl.Access.Role == orgs.Owner)
}

// activeOrganization is the session change of joining or leaving the active organization.
func activeOrganization(id string) func(*identity.NewSession) {
	return func(n *identity.NewSession) { n.ActiveOrganizationID = id }
}

func validRole(name string, r orgs.MemberRole) error {
	if !r.Valid() {
		return &field.Error{Field: name, Problem: "must be owner, admin or member"}
	}
	return nil
}

// --- create ---

type createOrganizationRequest struct {
	Name      string    `json:"name"`
	Kind      orgs.Kind `json:"kind"`
	SetActive bool      `json:"setActive"`
}

func (s *Server) createOrganization(c *gin.Context) {
	var req createOrganizationRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	if err := field.Name("name", req.Name); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !orgs.ValidKind(req.Kind) {
		writeError(c, fieldError(&field.Error{Field: "kind", Problem: "must be BUSINESS, FI or MERCHANT"}))
		return
	}
	cl := callerOf(c)
	orgID := orgs.NewOrganizationID()
	ctx := tenancy.WithTenant(c.Request.Context(), orgID)
	var (
		org   orgs.Organization
		sess  identity.Session
		token string
	)
	// One transaction scoped to the new organization, as at sign-up: the organization, its
	// business profile and role catalog, the caller's owner membership, the audit rows and, when
	// asked, the session's move into it all exist together or not at all.
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		if org, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: orgID, Name: req.Name, Kind: req.Kind}, cl.User.ID); err != nil {
			return err
		}
		if err := audit.Write(ctx, tx, audit.Entry{Action: "CreateOrganization", Outcome: audit.Success, TargetType: "Organization",
			TargetID: orgID, Details: map[string]string{"kind": string(org.Kind)}}); err != nil {
			return err
		}
		if req.SetActive {
			sess, token, err = s.rotateIn(ctx, tx, cl, "SetActiveOrganization", activeOrganization(orgID))
		}
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := gin.H{"organization": organizationJSON{ID: org.ID, Name: org.Name, Kind: org.Kind}}
	if req.SetActive {
		s.setSessionCookie(c, token, sess)
		out["session"] = toSessionJSON(sess)
	}
	c.JSON(http.StatusCreated, out)
}

// --- invite and accept ---

type inviteMemberRequest struct {
	OrganizationID string          `json:"organizationId"`
	Email          string          `json:"email"`
	Role           orgs.MemberRole `json:"role"`
}

type invitationJSON struct {
	ID             string          `json:"id"`
	OrganizationID string          `json:"organizationId"`
	Email          string          `json:"email"`
	Role           orgs.MemberRole `json:"role"`
	Status         string          `json:"status"`
	InviterID      string          `json:"inviterId"`
	CreatedAt      time.Time       `json:"createdAt"`
	ExpiresAt      time.Time       `json:"expiresAt"`
}

func toInvitationJSON(i orgs.Invitation) invitationJSON {
	return invitationJSON{ID: i.ID, OrganizationID: i.TenantID, Email: i.Email, Role: i.Role, Status: i.Status,
		InviterID: i.InviterID, CreatedAt: i.CreatedAt.UTC(), ExpiresAt: i.ExpiresAt.UTC()}
}

func (s *Server) inviteMember(c *gin.Context) {
	var req inviteMemberRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	req.Email = identity.NormalizeEmail(req.Email)
	if err := errors.Join(field.Identifier("organizationId", req.OrganizationID, 0), field.Email("email", req.Email),
		validRole("role", req.Role)); err != nil {
		writeError(c, fieldError(firstError(err)))
		return
	}
	cl := callerOf(c)
	if !s.admit(c, cl, req.OrganizationID, orgs.Admin, orgs.Permission{}) {
		return
	}
	tenant := req.OrganizationID
	if req.Role == orgs.Owner && !actsAsOwner(cl) {
		s.answer(c, tenant, refuse(http.StatusForbidden, "INSUFFICIENT_ROLE", "only an owner may invite an owner", "InviteMember", "Organization", tenant))
		return
	}
	// An invitation sends an e-mail: bounded per client and per recipient like every route that
	// sends one, so the API cannot be used to flood a mailbox.
	if !s.allow(c, ruleMessageIP, c.ClientIP()) || !s.allow(c, ruleMessageAccount, req.Email) {
		return
	}
	var (
		org    orgs.Organization
		issued orgs.IssuedInvitation
	)
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if org, err = orgs.ByID(ctx, tx, tenant); err != nil {
			if errors.Is(err, orgs.ErrNotFound) {
				return errOrgNotFound
			}
			return err
		}
		switch u, err := identity.UserByEmail(ctx, tx, req.Email); {
		case err == nil:
			switch m, err := orgs.MemberByUser(ctx, tx, tenant, u.ID); {
			case err == nil:
				return refuse(http.StatusConflict, "ALREADY_MEMBER", "this e-mail is already a member of the organization", "InviteMember", "Member", m.ID)
			case !errors.Is(err, orgs.ErrNotFound):
				return err
			}
		case !errors.Is(err, identity.ErrNotFound):
			return err
		}
		// Accepting brings the role's default application roles (organization_admin for an
		// admin): the inviter must hold what they grant.
		if refused, err := notGrantable(ctx, tx, tenant, actsAsOwner(cl), cl.Access.Permissions, orgs.DefaultAppRoles(req.Role)); err != nil {
			return err
		} else if refused != nil {
			return refuseWith(refused, "InviteMember", "Organization", tenant)
		}
		if issued, err = orgs.CreateInvitation(ctx, tx, tenant, orgs.NewInvitation{Email: req.Email, Role: req.Role, InviterID: cl.User.ID}, s.now()); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: "InviteMember", Outcome: audit.Success, TargetType: "Invitation", TargetID: issued.ID,
			Details: map[string]any{"role": req.Role, "canceled": issued.Canceled}})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	l := s.link("/accept-invitation", issued.Token)
	s.sendEmail(c.Request.Context(), notify.Email{To: req.Email, Subject: "You are invited to an organization on Wagerail", Purpose: notify.Invitation,
		Text: cl.User.Name + " invited you to join " + org.Name + " on Wagerail as " + string(req.Role) + ".\n\n" +
			"Sign in (or sign up) with this e-mail address, then open this link within 7 days to accept:\n\n" + l + "\n",
		Secret: l})
	c.JSON(http.StatusCreated, gin.H{"invitation": toInvitationJSON(issued.Invitation)})
}

// firstError is the first of errors.Join's errors (each field is reported on its own).
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

type acceptInvitationRequest struct {
	Token string `json:"token"`
}

func (s *Server) acceptInvitation(c *gin.Context) {
	var req acceptInvitationRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	tenant, ok := orgs.InvitationTenant(req.Token)
	if !ok {
		writeError(c, errInvalidInvitation)
		return
	}
	cl := callerOf(c)
	// Scoped to the organization the token names, which the caller is not (yet) a member of: the
	// only row read before the membership exists is the invitation whose token hash they hold.
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var (
		org    orgs.Organization
		member orgs.Member
		sess   identity.Session
		token  string
	)
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		inv, m, err := orgs.AcceptInvitation(ctx, tx, tenant, req.Token, cl.User.Email, cl.User.EmailVerified, cl.User.ID, s.now())
		switch {
		case errors.Is(err, orgs.ErrInvalidInvitation):
			return errInvalidInvitation
		case errors.Is(err, orgs.ErrInvitationEmail):
			return refuse(http.StatusForbidden, "INVITATION_EMAIL_MISMATCH", "this invitation was sent to another e-mail address; sign in with that one",
				"AcceptInvitation", "Invitation", inv.ID)
		case errors.Is(err, orgs.ErrInvitationEmailUnverified):
			return refuse(http.StatusForbidden, "EMAIL_NOT_VERIFIED", "verify your e-mail address first (the link mailed at sign-up), then accept the invitation: anyone may sign up with any address",
				"AcceptInvitation", "Invitation", inv.ID)
		case errors.Is(err, orgs.ErrOrganizationSuspended):
			return refuse(http.StatusForbidden, "ORGANIZATION_SUSPENDED", "this organization is suspended; accept the invitation once it is active again",
				"AcceptInvitation", "Invitation", inv.ID)
		case errors.Is(err, orgs.ErrAlreadyMember):
			return refuse(http.StatusConflict, "ALREADY_MEMBER", "you are already a member of this organization", "AcceptInvitation", "Invitation", inv.ID)
		case err != nil:
			return err
		}
		member = m
		if org, err = orgs.ByID(ctx, tx, tenant); err != nil {
			return err
		}
		if err := audit.Write(ctx, tx, audit.Entry{Action: "AcceptInvitation", Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]string{"invitationId": inv.ID, "role": string(m.Role)}}); err != nil {
			return err
		}
		sess, token, err = s.rotateIn(ctx, tx, cl, "SetActiveOrganization", activeOrganization(tenant))
		return err
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.access.Invalidate(cl.User.ID, tenant)
	s.setSessionCookie(c, token, sess)
	c.JSON(http.StatusOK, gin.H{"organization": organizationJSON{ID: org.ID, Name: org.Name, Kind: org.Kind},
		"member": toMemberJSON(member), "session": toSessionJSON(sess)})
}

// --- leave ---

type organizationIDRequest struct {
	OrganizationID string `json:"organizationId"`
}

func (s *Server) leaveOrganization(c *gin.Context) {
	var req organizationIDRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("organizationId", req.OrganizationID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	cl := callerOf(c)
	tenant := req.OrganizationID
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	rotated := cl.Session.ActiveOrganizationID == tenant
	sess := cl.Session
	var token string
	// Leaving needs no role, only the caller's own ACTIVE membership (a banned member cannot undo
	// the ban by leaving); the transaction reads nothing else of the organization.
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		m, err := orgs.LockMemberByUser(ctx, tx, tenant, cl.User.ID)
		if errors.Is(err, orgs.ErrNotFound) || (err == nil && m.Status != orgs.Active) {
			return refuse(http.StatusForbidden, "NOT_A_MEMBER", "you are not a member of this organization", "LeaveOrganization", "Organization", tenant)
		}
		if err != nil {
			return err
		}
		if _, err := orgs.RemoveMember(ctx, tx, tenant, m.ID); errors.Is(err, orgs.ErrLastOwner) {
			return lastOwner("LeaveOrganization", m.ID)
		} else if err != nil {
			return err
		}
		if err := audit.Write(ctx, tx, audit.Entry{Action: "LeaveOrganization", Outcome: audit.Success, TargetType: "Member", TargetID: m.ID}); err != nil {
			return err
		}
		if rotated {
			sess, token, err = s.rotateIn(ctx, tx, cl, "SetActiveOrganization", activeOrganization(""))
		}
		return err
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.access.Invalidate(cl.User.ID, tenant)
	if rotated {
		s.setSessionCookie(c, token, sess)
	}
	c.JSON(http.StatusOK, gin.H{"success": true, "session": toSessionJSON(sess)})
}

// --- member role and removal ---

type updateMemberRoleRequest struct {
	OrganizationID string          `json:"organizationId"`
	MemberID       string          `json:"memberId"`
	Role           orgs.MemberRole `json:"role"`
}

func (s *Server) updateMemberRole(c *gin.Context) {
	var req updateMemberRoleRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := errors.Join(field.Identifier("organizationId", req.OrganizationID, 0), field.Identifier("memberId", req.MemberID, 0),
		validRole("role", req.Role)); err != nil {
		writeError(c, fieldError(firstError(err)))
		return
	}
	cl := callerOf(c)
	if !s.admit(c, cl, req.OrganizationID, orgs.Admin, orgs.Permission{}) {
		return
	}
	tenant := req.OrganizationID
	var m orgs.Member
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		var from orgs.MemberRole
		var err error
		m, err = orgs.UpdateMember(ctx, tx, tenant, req.MemberID, func(m *orgs.Member) error {
			from = m.Role
			if (m.Role == orgs.Owner || req.Role == orgs.Owner) && !actsAsOwner(cl) {
				return ownerOnly("UpdateMemberRole", m.ID, "grant or take the owner role")
			}
			m.Role = req.Role
			return nil
		})
		switch {
		case errors.Is(err, orgs.ErrNotFound):
			return errMemberNotFound
		case errors.Is(err, orgs.ErrLastOwner):
			return lastOwner("UpdateMemberRole", req.MemberID)
		case err != nil:
			return err
		}
		if next := orgs.AppRolesAfterRoleChange(m.AppRoles, from, m.Role); len(next) != len(m.AppRoles) {
			// A promotion brings organization_admin: the caller must hold what it grants.
			if refused, err := notGrantable(ctx, tx, tenant, actsAsOwner(cl), cl.Access.Permissions, next); err != nil {
				return err
			} else if refused != nil {
				return refuseWith(refused, "UpdateMemberRole", "Member", m.ID)
			}
			if err := orgs.SetAppRoles(ctx, tx, tenant, m.ID, next); err != nil {
				return err
			}
			if m, err = orgs.MemberByID(ctx, tx, tenant, m.ID); err != nil {
				return err
			}
		}
		return audit.Write(ctx, tx, audit.Entry{Action: "UpdateMemberRole", Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string]string{"from": string(from), "to": string(m.Role)}})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.access.Invalidate(m.UserID, tenant)
	c.JSON(http.StatusOK, gin.H{"member": toMemberJSON(m)})
}

type removeMemberRequest struct {
	OrganizationID  string `json:"organizationId"`
	MemberIDOrEmail string `json:"memberIdOrEmail"`
}

func (s *Server) removeMember(c *gin.Context) {
	var req removeMemberRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	byEmail := strings.Contains(req.MemberIDOrEmail, "@")
	var target error
	if byEmail {
		req.MemberIDOrEmail = identity.NormalizeEmail(req.MemberIDOrEmail)
		target = field.Email("memberIdOrEmail", req.MemberIDOrEmail)
	} else {
		target = field.Identifier("memberIdOrEmail", req.MemberIDOrEmail, 0)
	}
	if err := errors.Join(field.Identifier("organizationId", req.OrganizationID, 0), target); err != nil {
		writeError(c, fieldError(firstError(err)))
		return
	}
	cl := callerOf(c)
	if !s.admit(c, cl, req.OrganizationID, orgs.Admin, orgs.Permission{}) {
		return
	}
	tenant := req.OrganizationID
	m, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.Member, error) {
		var m orgs.Member
		var err error
		if byEmail {
			var u identity.User
			if u, err = identity.UserByEmail(ctx, tx, req.MemberIDOrEmail); err == nil {
				m, err = orgs.LockMemberByUser(ctx, tx, tenant, u.ID)
			}
		} else {
			m, err = orgs.LockMember(ctx, tx, tenant, req.MemberIDOrEmail)
		}
		return m, s.removeLocked(ctx, tx, cl, tenant, m, err)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.access.Invalidate(m.UserID, tenant)
	c.JSON(http.StatusOK, gin.H{"member": toMemberJSON(m)})
}

// removeLocked removes m (read under lock, or lookupErr) from tenant under the owner rules: an
// admin cannot remove an owner, nobody the last active owner. Audited RemoveMember.
func (s *Server) removeLocked(ctx context.Context, tx pgx.Tx, cl *caller, tenant string, m orgs.Member, lookupErr error) error {
	switch {
	case errors.Is(lookupErr, orgs.ErrNotFound), errors.Is(lookupErr, identity.ErrNotFound):
		return errMemberNotFound
	case lookupErr != nil:
		return lookupErr
	}
	if m.Role == orgs.Owner && !actsAsOwner(cl) {
		return ownerOnly("RemoveMember", m.ID, "remove an owner")
	}
	if _, err := orgs.RemoveMember(ctx, tx, tenant, m.ID); errors.Is(err, orgs.ErrLastOwner) {
		return lastOwner("RemoveMember", m.ID)
	} else if err != nil {
		return err
	}
	return audit.Write(ctx, tx, audit.Entry{Action: "RemoveMember", Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
		Details: map[string]string{"role": string(m.Role)}})
}

// --- reads ---

type myOrganizationJSON struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Kind     orgs.Kind       `json:"kind"`
	Status   string          `json:"status"`
	MemberID string          `json:"memberId"`
	Role     orgs.MemberRole `json:"role"`
}

func (s *Server) listOrganizations(c *gin.Context) {
	ctx := c.Request.Context()
	var ms []orgs.Membership
	err := tenancy.InUserTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		ms, err = orgs.ListForUser(ctx, tx, callerOf(c).User.ID, "")
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]myOrganizationJSON, 0, len(ms))
	for _, m := range ms {
		o := m.Organization
		out = append(out, myOrganizationJSON{ID: o.ID, Name: o.Name, Kind: o.Kind, Status: o.Status, MemberID: m.MemberID, Role: m.Role})
	}
	c.JSON(http.StatusOK, gin.H{"organizations": out})
}

type organizationDetailJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Kind      orgs.Kind `json:"kind"`
	Status    string    `json:"status"`
	KYCStatus string    `json:"kycStatus"`
	CreatedAt time.Time `json:"createdAt"`
}

type roleJSON struct {
	ID          string           `json:"id"`
	Name        string           `json:"name"`
	Permissions orgs.Permissions `json:"permissions"`
	Builtin     bool             `json:"builtin"`
}

func (s *Server) fullOrganization(c *gin.Context) {
	cl := callerOf(c)
	tenant, present := c.GetQuery("organizationId")
	if !present {
		tenant = cl.Session.ActiveOrganizationID
		if tenant == "" {
			writeError(c, NewError(http.StatusForbidden, "TENANT_CONTEXT_MISSING", "name an organizationId or choose an active organization first"))
			return
		}
	} else if err := field.Identifier("organizationId", tenant, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !s.admit(c, cl, tenant, orgs.PlainMember, orgs.Permission{}) {
		return
	}
	// Pending invitations are the admins' business (they carry e-mails of people who are not
	// members); plain members see the organization, its members and its role catalog.
	admin := cl.Platform || cl.Access.Role.AtLeast(orgs.Admin)
	var (
		org     orgs.Organization
		members []orgs.Member
		roles   []orgs.Role
		invs    []orgs.Invitation
	)
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if org, err = orgs.ByID(ctx, tx, tenant); errors.Is(err, orgs.ErrNotFound) {
			return errOrgNotFound
		} else if err != nil {
			return err
		}
		if members, err = orgs.ListMembers(ctx, tx, tenant); err != nil {
			return err
		}
		if roles, err = orgs.Roles(ctx, tx, tenant); err != nil {
			return err
		}
		if admin {
			invs, err = orgs.PendingInvitations(ctx, tx, tenant, s.now())
		}
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := gin.H{
		"organization": organizationDetailJSON{ID: org.ID, Name: org.Name, Kind: org.Kind, Status: org.Status, KYCStatus: org.KYCStatus, CreatedAt: org.CreatedAt.UTC()},
	}
	ms := make([]memberJSON, 0, len(members))
	for _, m := range members {
		ms = append(ms, toMemberJSON(m))
	}
	out["members"] = ms
	rs := make([]roleJSON, 0, len(roles))
	for _, r := range roles {
		p := r.Permissions
		if p == nil {
			p = orgs.Permissions{}
		}
		rs = append(rs, roleJSON{ID: r.ID, Name: r.Name, Permissions: p, Builtin: r.Builtin})
	}
	out["roles"] = rs
	if admin {
		is := make([]invitationJSON, 0, len(invs))
		for _, i := range invs {
			is = append(is, toInvitationJSON(i))
		}
		out["invitations"] = is
	}
	c.JSON(http.StatusOK, out)
}
