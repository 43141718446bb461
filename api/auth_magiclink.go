package api

import (
	"context"
	"errors"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Magic-link sign-in: a single-use link, valid for exactly identity.MagicLinkTTL (15 minutes),
// mailed to an existing account's address. It replaces the password, not the second factor.

func (s *Server) requestMagicLink(c *gin.Context) {
	s.requestByEmail(c, "magic link mail", s.mailMagicLink)
}

// mailMagicLink mints u's magic link (audited MagicLinkRequested; the requester is anonymous) and
// mails it once the token is committed.
func (s *Server) mailMagicLink(ctx context.Context, u identity.User, now time.Time) {
	var token string
	err := s.asUser(ctx, anonymousActor, func(actx context.Context, tx pgx.Tx) error {
		var err error
		if token, err = identity.IssueToken(actx, tx, identity.MagicLink, u.ID, u.Email, identity.MagicLinkTTL, now); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "MagicLinkRequested", Outcome: audit.Success, TargetType: "User", TargetID: u.ID})
	})
	if err != nil {
		s.deps.Log.Error("magic link not issued", "error", err)
		return
	}
	l := s.link("/magic-link", token)
	s.sendEmail(ctx, notify.Email{To: u.Email, Subject: "Your Wagerail sign-in link", Purpose: notify.MagicLink, Secret: l,
		Text: "Open this link within 15 minutes to sign in to Wagerail. It works once:\n\n" + l +
			"\n\nIf you did not ask for it, ignore this e-mail; nobody can sign in without the link.\n"})
}

// verifyMagicLink spends the token and signs its user in: a full session, or a two-factor
// challenge when the user has two-factor on. The link reached the address, so it counts as
// verified; when that is the address's first proof, the password and two-factor the account had
// are discarded and its sessions revoked (identity.DiscardUnprovedCredentials).
func (s *Server) verifyMagicLink(c *gin.Context) {
	var req tokenRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	token, ok := linkToken(req.Token)
	if !ok {
		s.refuseToken(c, "SignInMagicLink")
		return
	}
	ctx := c.Request.Context()
	now := s.now()
	var userID string
	err := s.asUser(ctx, anonymousActor, func(actx context.Context, tx pgx.Tx) error {
		v, err := identity.ConsumeToken(actx, tx, identity.MagicLink, token, now)
		if err != nil {
			return err
		}
		if v.UserID == "" {
			return identity.ErrInvalidSecret
		}
		userID = v.UserID
		first, err := identity.MarkEmailVerified(actx, tx, v.UserID, now)
		if err != nil {
			return err
		}
		// The address's owner signs in by the link: a password or two-factor set on the account
		// before its address was ever proved was set by whoever signed up with it, maybe not the
		// owner, and is discarded with every session it opened.
		discarded := false
		if first {
			u, err := identity.UserByID(actx, tx, v.UserID)
			if err != nil {
				return err
			}
			if discarded = u.PasswordHash != "" || u.TwoFactorEnabled; discarded {
				if err := identity.DiscardUnprovedCredentials(actx, tx, v.UserID, now); err != nil {
					return err
				}
			}
		}
		return audit.Write(tenancy.WithActor(actx, v.UserID), tx, audit.Entry{Action: "MagicLinkUsed", Outcome: audit.Success,
			TargetType: "User", TargetID: v.UserID, Details: map[string]bool{"unprovedCredentialsDiscarded": discarded}})
	})
	if errors.Is(err, identity.ErrInvalidSecret) || errors.Is(err, identity.ErrNotFound) {
		s.refuseToken(c, "SignInMagicLink")
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	user, err := identity.UserByID(ctx, s.deps.DB, userID)
	if err != nil {
		writeError(c, err)
		return
	}
	s.startSession(c, user, !user.TwoFactorEnabled, "SignInMagicLink")
}
