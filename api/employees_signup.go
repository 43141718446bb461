package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// An employee who has no Wagerail account gets one from their e-mailed link: the link proves the
// address (so it is marked verified), the account is created with their password and linked to
// the employee in one transaction, and they are signed in. A texted link needs an account with
// that phone verified first (sign up, verify the phone, then accept), because a phone number is
// not a sign-in identity here.

type employeeSignUpRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
	Name     string `json:"name"`
}

func (s *Server) signUpWithEmployeeLink(c *gin.Context) {
	var req employeeSignUpRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	if err := identity.CheckPassword(req.Password); err != nil {
		writeError(c, fieldError(&field.Error{Field: "password", Problem: "must be 10 to 128 bytes of valid UTF-8"}))
		return
	}
	if req.Name != "" {
		if err := field.Name("name", req.Name); err != nil {
			writeError(c, fieldError(err))
			return
		}
	}
	tenant, ok := employees.LinkTenant(req.Token)
	if !ok {
		writeError(c, errInvalidToken)
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
	now := s.now()
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var user identity.User
	err = tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		switch org, err := orgs.ByID(ctx, tx, tenant); {
		case errors.Is(err, orgs.ErrNotFound), err == nil && org.Status != orgs.OrgActive:
			return errInvalidToken
		case err != nil:
			return err
		}
		email, fullName, err := employees.LinkInvitee(ctx, tx, tenant, req.Token, now)
		switch {
		case errors.Is(err, employees.ErrInvalidLink):
			return errInvalidToken
		case err != nil:
			return err
		case email == "":
			return NewError(http.StatusConflict, "LINK_NEEDS_ACCOUNT",
				"a texted link is accepted from an account whose phone is verified: sign up, verify the phone, then accept")
		}
		name := req.Name
		if name == "" {
			name = fullName
		}
		// Saying that the address has an account is no enumeration here, unlike the open sign-up
		// (signUpTaken): the address is the invitation's, not the caller's choice, and only the
		// holder of the link mailed to it gets this far.
		if user, err = identity.CreateUser(ctx, tx, identity.NewUser{Email: email, Name: name, PasswordHash: hash}); errors.Is(err, identity.ErrEmailTaken) {
			return NewError(http.StatusConflict, "ACCOUNT_EXISTS", "an account with this e-mail exists: sign in and accept the link")
		} else if err != nil {
			return err
		}
		if _, err := identity.MarkEmailVerified(ctx, tx, user.ID, now); err != nil {
			return err
		}
		actx := tenancy.WithActor(ctx, user.ID)
		linked, ch, err := employees.AcceptLink(actx, tx, tenant, req.Token, user, now)
		if err != nil {
			return employeeError(actionLinkEmployeeUser, linked.ID, err)
		}
		return recordEmployee(actx, tx, actionLinkEmployeeUser, eventEmployeeUpdated, linked.ID,
			map[string]any{"fields": []string{"userId"}, "userId": user.ID, "channel": ch, "newAccount": true})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.startSession(c, user, true, "SignUpEmployee")
}
