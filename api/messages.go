package api

import (
	"context"
	"net/url"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
)

// The messages we send. Each carries its secret (a link or a code) in Secret too, so the log
// sender can redact it and the developer inbox can show it; sending happens after the
// transaction that minted the secret commits, and a failed send is logged, never retried into a
// second valid secret.

// link builds a portal link carrying a one-time token.
func (s *Server) link(path, token string) string {
	return s.deps.PublicURL + path + "?token=" + url.QueryEscape(token)
}

func (s *Server) sendEmail(ctx context.Context, m notify.Email) {
	if err := s.deps.Mailer.SendEmail(ctx, m); err != nil {
		s.deps.Log.Error("e-mail not sent", "purpose", string(m.Purpose), "error", err)
	}
}

// sendVerificationEmail mints an e-mail verification token for u and mails the link.
func (s *Server) sendVerificationEmail(ctx context.Context, u identity.User) {
	token, err := identity.IssueToken(ctx, s.deps.DB, identity.VerifyEmail, u.ID, u.Email, identity.VerifyEmailTTL, s.now())
	if err != nil {
		s.deps.Log.Error("verification token not issued", "error", err)
		return
	}
	l := s.link("/verify-email", token)
	s.sendEmail(ctx, notify.Email{To: u.Email, Subject: "Confirm your e-mail for Wagerail", Purpose: notify.VerifyEmail,
		Text: "Confirm your e-mail address by opening this link within 24 hours:\n\n" + l + "\n", Secret: l})
}

// sendResetEmail mails a password reset link; intro says who started it.
func (s *Server) sendResetEmail(ctx context.Context, to, intro, token string) {
	l := s.link("/reset-password", token)
	s.sendEmail(ctx, notify.Email{To: to, Subject: "Reset your Wagerail password", Purpose: notify.ResetPassword, Secret: l,
		Text: intro + "\n\nChoose a new password by opening this link within 1 hour:\n\n" + l +
			"\n\nIf you did not ask for this, ignore this e-mail: your password stays as it is.\n"})
}

// sendAccountExistsEmail tells the owner of an address that someone tried to sign up with it: the
// sign-up answer itself says nothing (signUpTaken), so this mail is how a person who forgot they
// have an account learns it.
func (s *Server) sendAccountExistsEmail(ctx context.Context, to string) {
	signIn, reset := s.deps.PublicURL+"/sign-in", s.deps.PublicURL+"/forgot-password"
	s.sendEmail(ctx, notify.Email{To: to, Subject: "You already have a Wagerail account", Purpose: notify.AccountExists,
		Text: "Someone, perhaps you, tried to sign up for Wagerail with this e-mail address, which already has an account.\n\n" +
			"If it was you, sign in at " + signIn + " or choose a new password at " + reset + ".\n\n" +
			"If it was not you, ignore this e-mail: nothing was changed and no account was created.\n"})
}
