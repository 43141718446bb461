package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Auth extras: password recovery and e-mail verification (auth_recovery.go), phone numbers
// (auth_phone.go), two-factor with TOTP and backup codes (auth_twofactor.go) and magic-link
// sign-in (auth_magiclink.go).
//
// Every one-time secret travels only to its owner (an e-mail, a text, the enable answer) and is
// never logged, audited or echoed. The routes that start from an e-mail address (forget-password,
// send-verification-email, magic link) answer the same whether or not an account has it, after the same work: the minting
// and mailing for a real account run after the answer.

// authExtraRoutes serves e-mail verification, password reset, phone OTP, two-factor (TOTP, backup codes) and magic links.
func (s *Server) authExtraRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/auth/forget-password", Auth: Public, Summary: "Ask for a password reset link (the same answer for every e-mail)", Handler: s.forgetPassword},
		{Method: http.MethodPost, Path: "/api/auth/reset-password", Auth: Public, Summary: "Set a new password with a reset or account set-up token", Handler: s.resetPassword},
		{Method: http.MethodPost, Path: "/api/auth/verify-email", Auth: Public, Summary: "Confirm the e-mail address with the mailed token", Handler: s.verifyEmail},
		{Method: http.MethodPost, Path: "/api/auth/send-verification-email", Auth: Public, Summary: "Mail a new e-mail verification link (the same answer for every e-mail)", Handler: s.sendVerificationLink},
		{Method: http.MethodPost, Path: "/api/auth/phone-number/send-otp", Auth: Session, Summary: "Text a one-time code to a phone number", Handler: s.sendPhoneOTP},
		{Method: http.MethodPost, Path: "/api/auth/phone-number/verify", Auth: Session, Summary: "Prove a phone number with the texted code", Handler: s.verifyPhone},
		{Method: http.MethodPost, Path: "/api/auth/two-factor/enable", Auth: Session, Summary: "Start enabling two-factor: a TOTP secret and backup codes", Handler: s.enableTwoFactor},
		{Method: http.MethodPost, Path: "/api/auth/two-factor/verify", Auth: Session, TwoFactorChallenge: true, Summary: "Prove a TOTP or backup code (completes sign-in or enabling)", Handler: s.verifyTwoFactor},
		{Method: http.MethodPost, Path: "/api/auth/two-factor/disable", Auth: Session, Summary: "Turn two-factor off", Handler: s.disableTwoFactor},
		{Method: http.MethodPost, Path: "/api/auth/two-factor/generate-backup-codes", Auth: Session, Summary: "Replace the backup codes", Handler: s.generateBackupCodes},
		{Method: http.MethodPost, Path: "/api/auth/sign-in/magic-link", Auth: Public, Summary: "Mail a sign-in link (the same answer for every e-mail)", Handler: s.requestMagicLink},
		{Method: http.MethodPost, Path: "/api/auth/magic-link/verify", Auth: Public, Summary: "Sign in with a mailed magic link", Handler: s.verifyMagicLink},
	}
}

var (
	// errInvalidToken is every refused link token alike (unknown, used, expired, another
	// purpose's, bound to an e-mail the account no longer has): the caller learns nothing more.
	errInvalidToken = NewError(http.StatusBadRequest, "INVALID_TOKEN", "this link is invalid, used or expired; ask for a new one")
	// errInvalidCode is every refused OTP, TOTP or backup code alike.
	errInvalidCode = NewError(http.StatusBadRequest, "INVALID_CODE", "the code is wrong, used or expired")
)

type tokenRequest struct {
	Token string `json:"token"`
}

// linkToken accepts exactly the shape identity.NewToken mints (the session cookie's), so a
// malformed token is refused before it reaches the database.
func linkToken(v string) (string, bool) { return parseSessionToken(v) }

var successBody = gin.H{"success": true}

// asUser runs fn in a transaction at the user level: audit rows go to the platform-wide trail
// (crosstenant.PlatformTenant, where acts about a person rather than an organization belong) with
// actor as their actor.
func (s *Server) asUser(ctx context.Context, actor string, fn func(actx context.Context, tx pgx.Tx) error) error {
	actx := tenancy.WithActor(tenancy.WithTenant(ctx, crosstenant.PlatformTenant), actor)
	return tenancy.InTx(actx, s.deps.DB, func(tx pgx.Tx) error { return fn(actx, tx) })
}

// later runs fn after the answer, outside the request (its context keeps the request's values but
// not its end). Failures are logged, never answered: the answer has gone.
func (s *Server) later(ctx context.Context, what string, fn func(ctx context.Context)) {
	ctx = context.WithoutCancel(ctx)
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		defer func() {
			if r := recover(); r != nil {
				s.deps.Log.Error("background work panicked", "work", what, "panic", fmt.Sprint(r))
			}
		}()
		fn(ctx)
	}()
}
