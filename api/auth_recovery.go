package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Password recovery, account set-up and e-mail verification.

type emailRequest struct {
	Email string `json:"email"`
}

// requestByEmail is the shared body of forget-password and magic-link sign-in: validate the
// address, count it against the message limits (per IP and per address, whether or not an account
// has it), look the account up, and answer 200 {success:true}. Only when there is an account does
// send run, after the answer: the database lookup happens either way, and minting a token and
// handing a mail to a (possibly slow) server never delays the answer, so neither the body, the
// status nor the time tells whether the address is registered.
func (s *Server) requestByEmail(c *gin.Context, what string, send func(ctx context.Context, u identity.User, now time.Time)) {
	var req emailRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	req.Email = identity.NormalizeEmail(req.Email)
	if err := field.Email("email", req.Email); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !s.allow(c, ruleMessageIP, c.ClientIP()) || !s.allow(c, ruleMessageAccount, req.Email) {
		return
	}
	ctx := c.Request.Context()
	now := s.now()
	user, err := identity.UserByEmail(ctx, s.deps.DB, req.Email)
	switch {
	case err == nil:
		s.later(ctx, what, func(ctx context.Context) { send(ctx, user, now) })
	case !errors.Is(err, identity.ErrNotFound):
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, successBody)
}

func (s *Server) forgetPassword(c *gin.Context) {
	s.requestByEmail(c, "reset password mail", s.mailResetLink)
}

// sendVerificationLink mails a new verification link to an account whose address is not verified
// yet (the sign-up's mail lost, or its 24 hours gone); a verified address, or none, gets nothing,
// and the answer is requestByEmail's either way.
func (s *Server) sendVerificationLink(c *gin.Context) {
	s.requestByEmail(c, "verification mail", func(ctx context.Context, u identity.User, _ time.Time) {
		if !u.EmailVerified {
			s.sendVerificationEmail(ctx, u)
		}
	})
}

// mailResetLink mints a one-hour reset token for u (audited PasswordResetRequested; the requester
// is anonymous) and mails the link once the token is committed.
func (s *Server) mailResetLink(ctx context.Context, u identity.User, now time.Time) {
	var token string
	err := s.asUser(ctx, anonymousActor, func(actx context.Context, tx pgx.Tx) error {
		var err error
		if token, err = identity.IssueToken(actx, tx, identity.ResetPassword, u.ID, u.Email, identity.ResetPasswordTTL, now); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "PasswordResetRequested", Outcome: audit.Success, TargetType: "User", TargetID: u.ID})
	})
	if err != nil {
		s.deps.Log.Error("reset token not issued", "error", err)
		return
	}
	s.sendResetEmail(ctx, u.Email, "Someone asked to reset the password of your Wagerail account.", token)
}

type resetPasswordRequest struct {
	Token       string `json:"token"`
	NewPassword string `json:"newPassword"`
}

// resetPassword spends a RESET_PASSWORD token, or the ACCOUNT_SETUP token of an invited team
// member choosing their first password: the password is set, every session of the user is
// revoked (whoever knew the old password is signed out), every other unused reset, set-up and
// magic link of the user is spent (one mailed before would undo the reset), and the e-mail
// counts as verified (the
// link reached it). Then the user's INVITED memberships become ACTIVE: INVITED means "has not set
// a password yet", which no longer holds, whichever of the two links was used.
func (s *Server) resetPassword(c *gin.Context) {
	var req resetPasswordRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	// The password is checked first, so a typo does not spend the link.
	if identity.CheckPassword(req.NewPassword) != nil {
		writeError(c, fieldError(&field.Error{Field: "newPassword", Problem: "must be 10 to 128 bytes of valid UTF-8"}))
		return
	}
	token, ok := linkToken(req.Token)
	if !ok {
		s.refuseToken(c, "PasswordReset")
		return
	}
	ctx := c.Request.Context()
	now := s.now()
	var v identity.Verification
	err := s.asUser(ctx, anonymousActor, func(actx context.Context, tx pgx.Tx) error {
		action := "PasswordReset"
		var err error
		v, err = identity.ConsumeToken(actx, tx, identity.ResetPassword, token, now)
		if errors.Is(err, identity.ErrInvalidSecret) {
			action = "AccountSetupCompleted"
			v, err = identity.ConsumeToken(actx, tx, identity.AccountSetup, token, now)
		}
		if err != nil {
			return err
		}
		if v.UserID == "" {
			return identity.ErrInvalidSecret // minted for an address without an account: nothing to set
		}
		// Hashed only once the token is known good: the route is public, and a hash costs 19 MiB
		// and tens of milliseconds of a core.
		hash, err := identity.HashPassword(req.NewPassword)
		if err != nil {
			return err
		}
		if err := identity.SetPassword(actx, tx, v.UserID, hash, now); err != nil {
			return err
		}
		if _, err := identity.RevokeUserSessions(actx, tx, v.UserID, "", now); err != nil {
			return err
		}
		// And every other link that signs in or sets the password: one mailed before the reset
		// would otherwise undo it.
		for _, p := range []identity.Purpose{identity.ResetPassword, identity.AccountSetup, identity.MagicLink} {
			if _, err := identity.SpendTokens(actx, tx, p, v.UserID, now); err != nil {
				return err
			}
		}
		first, err := identity.MarkEmailVerified(actx, tx, v.UserID, now)
		if err != nil {
			return err
		}
		// Two-factor turned on before the address was first proved was turned on by whoever
		// signed up with it, maybe not the owner now resetting: it would lock the owner out.
		if first {
			if err := identity.DisableTwoFactor(actx, tx, v.UserID, now); err != nil {
				return err
			}
		}
		return audit.Write(tenancy.WithActor(actx, v.UserID), tx, audit.Entry{Action: action, Outcome: audit.Success,
			TargetType: "User", TargetID: v.UserID, Details: map[string]bool{"sessionsRevoked": true, "unprovedTwoFactorDiscarded": first}})
	})
	if errors.Is(err, identity.ErrInvalidSecret) || errors.Is(err, identity.ErrNotFound) {
		s.refuseToken(c, "PasswordReset")
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	tenants, err := orgs.ActivateInvitedMemberships(ctx, s.deps.DB, v.UserID)
	for _, t := range tenants {
		s.access.Invalidate(v.UserID, t)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, successBody)
}

type verifyEmailRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

var errPasswordRequired = NewError(http.StatusUnauthorized, "PASSWORD_REQUIRED",
	"to confirm the address, open the link where you are signed in to this account or send the account's password with the token")

// verifyEmail spends a VERIFY_EMAIL token (mailed at sign-up): the e-mail it was sent to is the
// account's, proved. The link proves the mailbox, not that its owner is who set the account's
// password: anyone may sign up with an address that is not theirs, and the owner, mailed, may
// click. So an account with a password counts as verified only when the link is opened by one of
// its sessions or with its password (401 PASSWORD_REQUIRED, INVALID_CREDENTIALS otherwise, the
// token kept); the owner of an address someone else signed up with takes the account by a
// reset or magic link instead, which discard the signer's credentials.
func (s *Server) verifyEmail(c *gin.Context) {
	var req verifyEmailRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	token, ok := linkToken(req.Token)
	if !ok {
		s.refuseToken(c, "EmailVerified")
		return
	}
	// A password costs a hash: counted as a sign-in attempt from the client.
	if req.Password != "" && !s.allow(c, ruleSignInIP, c.ClientIP()) {
		return
	}
	ctx := c.Request.Context()
	now := s.now()
	caller := ""
	if t, ok := sessionToken(c); ok {
		if sess, err := identity.SessionByToken(ctx, s.deps.DB, t, now); err == nil {
			caller = sess.UserID
		}
	}
	var denied *Error
	err := s.asUser(ctx, anonymousActor, func(actx context.Context, tx pgx.Tx) error {
		v, err := identity.ConsumeToken(actx, tx, identity.VerifyEmail, token, now)
		if err != nil {
			return err
		}
		if v.UserID == "" {
			return identity.ErrInvalidSecret
		}
		u, err := identity.UserByID(actx, tx, v.UserID)
		if err != nil {
			return err
		}
		if !u.EmailVerified && u.PasswordHash != "" && caller != u.ID {
			switch {
			case req.Password == "":
				denied = errPasswordRequired
			case identity.CheckPassword(req.Password) != nil || !identity.VerifyPassword(req.Password, u.PasswordHash):
				denied = errInvalidCredentials
			}
			if denied != nil {
				return denied // rolled back: the token stays good
			}
		}
		if _, err := identity.MarkEmailVerified(actx, tx, v.UserID, now); err != nil {
			return err
		}
		return audit.Write(tenancy.WithActor(actx, v.UserID), tx, audit.Entry{Action: "EmailVerified", Outcome: audit.Success,
			TargetType: "User", TargetID: v.UserID})
	})
	if errors.Is(err, identity.ErrInvalidSecret) || errors.Is(err, identity.ErrNotFound) {
		s.refuseToken(c, "EmailVerified")
		return
	}
	if denied != nil {
		if err := s.auditIn(ctx, crosstenant.PlatformTenant, anonymousActor, audit.Entry{Action: "EmailVerified", Outcome: audit.Denied,
			Details: map[string]string{"code": denied.Code}}); err != nil {
			writeError(c, err)
			return
		}
		writeError(c, denied)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, successBody)
}

// refuseToken audits a refused link token (outcome DENIED, by nobody, on the platform-wide trail)
// and answers 400 INVALID_TOKEN.
func (s *Server) refuseToken(c *gin.Context, action string) {
	if err := s.auditIn(c.Request.Context(), crosstenant.PlatformTenant, anonymousActor, audit.Entry{Action: action, Outcome: audit.Denied,
		Details: map[string]string{"code": errInvalidToken.Code}}); err != nil {
		writeError(c, err)
		return
	}
	writeError(c, errInvalidToken)
}
