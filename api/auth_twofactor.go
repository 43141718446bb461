package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
)

// Two-factor authentication (TOTP, RFC 6238, and backup codes). Enabling is two steps: enable
// (password) hands out a secret and backup codes, and verify with a code from the app switches it
// on. A user with it on signs in to a challenge session that can only verify a code (or a backup
// code) or sign out; verifying turns it into a full session. Every change rotates the session.

type passwordRequest struct {
	Password string `json:"password"`
}

type twoFactorVerifyRequest struct {
	Code       string `json:"code"`
	BackupCode string `json:"backupCode"`
}

type enableTwoFactorResponse struct {
	TOTPURI     string   `json:"totpURI"`
	BackupCodes []string `json:"backupCodes"`
}

var (
	errTwoFactorEnabled    = NewError(http.StatusConflict, "TWO_FACTOR_ALREADY_ENABLED", "two-factor is already on; disable it first to set up a new authenticator")
	errTwoFactorNotEnabled = NewError(http.StatusConflict, "TWO_FACTOR_NOT_ENABLED", "two-factor is not on")
	errNothingToVerify     = NewError(http.StatusConflict, "TWO_FACTOR_NOT_PENDING", "there is no two-factor challenge or set-up to complete")
)

// reauthenticate binds {password} and checks it against the caller's (counted against
// ruleTwoFactorUser, refusals audited DENIED under action). It answers and returns false when the
// request does not pass.
func (s *Server) reauthenticate(c *gin.Context, action string) bool {
	var req passwordRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return false
	}
	cl := callerOf(c)
	if !s.allow(c, ruleTwoFactorUser, cl.User.ID) {
		return false
	}
	pw := req.Password
	if identity.CheckPassword(pw) != nil {
		pw = "" // cannot be anyone's; never hash an outsized input
	}
	if pw == "" || !identity.VerifyPassword(pw, cl.User.PasswordHash) {
		if err := s.auditIn(c.Request.Context(), crosstenant.PlatformTenant, cl.User.ID, audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: "User", TargetID: cl.User.ID, Details: map[string]string{"code": errInvalidCredentials.Code}}); err != nil {
			writeError(c, err)
			return false
		}
		writeError(c, errInvalidCredentials)
		return false
	}
	return true
}

// enableTwoFactor stores a new secret (not on yet) and ten backup codes, and shows both once.
func (s *Server) enableTwoFactor(c *gin.Context) {
	cl := callerOf(c)
	if cl.User.TwoFactorEnabled {
		writeError(c, errTwoFactorEnabled)
		return
	}
	if !s.reauthenticate(c, "TwoFactorEnableStarted") {
		return
	}
	secret, uri, err := identity.NewTOTPKey(cl.User.Email)
	if err != nil {
		writeError(c, err)
		return
	}
	codes := identity.NewBackupCodes()
	err = s.asUser(c.Request.Context(), cl.User.ID, func(actx context.Context, tx pgx.Tx) error {
		if err := identity.BeginTwoFactor(actx, tx, cl.User.ID, secret, codes, s.now()); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "TwoFactorEnableStarted", Outcome: audit.Success, TargetType: "User", TargetID: cl.User.ID})
	})
	if errors.Is(err, identity.ErrTwoFactorEnabled) {
		writeError(c, errTwoFactorEnabled)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, enableTwoFactorResponse{TOTPURI: uri, BackupCodes: codes})
}

// verifyTwoFactor proves a second factor. For a challenge session (a two-factor user's sign-in) a
// TOTP code or an unused backup code turns it into a full session in the user's default
// organization; for a user completing enable, a TOTP code (not a backup code: the point is to
// prove the authenticator took the secret) switches two-factor on. The code is spent and the
// session rotated in one transaction.
func (s *Server) verifyTwoFactor(c *gin.Context) {
	var req twoFactorVerifyRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if (req.Code == "") == (req.BackupCode == "") {
		writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", "send either code or backupCode"))
		return
	}
	cl := callerOf(c)
	user := cl.User
	challenge := cl.Session.TwoFactorPending
	enabling := !challenge && !user.TwoFactorEnabled && user.TOTPSecret != ""
	switch {
	case !challenge && !enabling:
		writeError(c, errNothingToVerify)
		return
	case enabling && req.BackupCode != "":
		writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", "confirm two-factor with a code from the authenticator app"))
		return
	}
	if !s.allow(c, ruleTwoFactorUser, user.ID) {
		return
	}
	ctx := c.Request.Context()
	now := s.now()
	action, change := "TwoFactorEnabled", func(*identity.NewSession) {}
	if challenge {
		org, err := s.defaultOrganization(ctx, user.ID)
		if err != nil {
			writeError(c, err)
			return
		}
		action = "TwoFactorVerified"
		change = func(n *identity.NewSession) { n.TwoFactorPending, n.ActiveOrganizationID = false, org }
	}
	var sess identity.Session
	var token string
	wrong := false
	err := s.inRotation(c, "", func(actx context.Context, tx pgx.Tx) error {
		var err error
		if req.Code != "" {
			err = identity.ProveTOTP(actx, tx, user.ID, req.Code, now)
		} else {
			err = identity.ConsumeBackupCode(actx, tx, user.ID, req.BackupCode, now)
		}
		if errors.Is(err, identity.ErrInvalidSecret) {
			wrong = true
		}
		if err != nil {
			return err
		}
		if enabling {
			if err := identity.EnableTwoFactor(actx, tx, user.ID, now); err != nil {
				return err
			}
			user.TwoFactorEnabled = true
		}
		if sess, token, err = s.rotateIn(actx, tx, cl, action, change); err != nil || !enabling {
			return err
		}
		// Turning the second factor on signs the user's other sessions out: one signed in with the
		// password alone (a stolen cookie, say) must not outlive it (found by an audit).
		_, err = identity.RevokeUserSessions(actx, tx, user.ID, sess.ID, now)
		return err
	})
	if wrong {
		if err := s.auditIn(ctx, crosstenant.PlatformTenant, user.ID, audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: "User", TargetID: user.ID, Details: map[string]string{"code": errInvalidCode.Code}}); err != nil {
			writeError(c, err)
			return
		}
		writeError(c, errInvalidCode)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	s.resetLimit(ctx, ruleTwoFactorUser, user.ID)
	s.answerRotated(c, user, sess, token)
}

// disableTwoFactor turns two-factor off (also a set-up never completed): the secret and backup
// codes are forgotten, the session rotated and the user's other sessions signed out.
func (s *Server) disableTwoFactor(c *gin.Context) {
	cl := callerOf(c)
	if !cl.User.TwoFactorEnabled && cl.User.TOTPSecret == "" {
		writeError(c, errTwoFactorNotEnabled)
		return
	}
	if !s.reauthenticate(c, "TwoFactorDisabled") {
		return
	}
	var sess identity.Session
	var token string
	err := s.inRotation(c, "", func(actx context.Context, tx pgx.Tx) error {
		if err := identity.DisableTwoFactor(actx, tx, cl.User.ID, s.now()); err != nil {
			return err
		}
		var err error
		if sess, token, err = s.rotateIn(actx, tx, cl, "TwoFactorDisabled", nil); err != nil {
			return err
		}
		// The user's other sessions are signed out, as a password reset signs them out: turning the
		// second factor off is as much a change of the account's keys.
		_, err = identity.RevokeUserSessions(actx, tx, cl.User.ID, sess.ID, s.now())
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	user := cl.User
	user.TwoFactorEnabled = false
	s.answerRotated(c, user, sess, token)
}

type backupCodesResponse struct {
	BackupCodes []string `json:"backupCodes"`
}

// generateBackupCodes replaces the backup codes by ten new ones (the old stop working).
func (s *Server) generateBackupCodes(c *gin.Context) {
	cl := callerOf(c)
	if !cl.User.TwoFactorEnabled {
		writeError(c, errTwoFactorNotEnabled)
		return
	}
	if !s.reauthenticate(c, "BackupCodesRegenerated") {
		return
	}
	codes := identity.NewBackupCodes()
	err := s.asUser(c.Request.Context(), cl.User.ID, func(actx context.Context, tx pgx.Tx) error {
		if err := identity.ReplaceBackupCodes(actx, tx, cl.User.ID, codes, s.now()); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "BackupCodesRegenerated", Outcome: audit.Success, TargetType: "User", TargetID: cl.User.ID})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, backupCodesResponse{BackupCodes: codes})
}
