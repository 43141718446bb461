package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// A user's own account security, better-auth's session-management routes: the devices signed in
// (list-sessions), signing one out (revoke-session), every other one (revoke-other-sessions) or
// all of them (revoke-sessions), and the account's activity (account-activity: sign-ins and
// failed attempts, two-factor, passkeys, password and e-mail changes — the platform-wide trail's
// rows by the user or about them). Tokens are never shown: a session is named by its id. Each
// revocation is audited on the platform-wide trail with the user as actor.

func (s *Server) sessionRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/auth/list-sessions", Auth: Session, Summary: "Your signed-in devices (live sessions, newest first)", Handler: s.listSessions},
		{Method: http.MethodPost, Path: "/api/auth/revoke-session", Auth: Session, Summary: "Sign one of your sessions out", Handler: s.revokeSession},
		{Method: http.MethodPost, Path: "/api/auth/revoke-other-sessions", Auth: Session, Summary: "Sign every session but this one out", Handler: s.revokeOtherSessions, Body: BodyNone},
		{Method: http.MethodPost, Path: "/api/auth/revoke-sessions", Auth: Session, Summary: "Sign every session out, this one too", Handler: s.revokeAllSessions, Body: BodyNone},
		{Method: http.MethodGet, Path: "/api/auth/account-activity", Auth: Session, Summary: "Your account's security activity (newest first)", Handler: s.accountActivity},
	}
}

type deviceSessionJSON struct {
	ID               string    `json:"id"`
	Current          bool      `json:"current"`
	CreatedAt        time.Time `json:"createdAt"`
	ExpiresAt        time.Time `json:"expiresAt"`
	IPAddress        *string   `json:"ipAddress"`
	UserAgent        *string   `json:"userAgent"`
	SignedInWith     string    `json:"signedInWith"` // PASSKEY or PASSWORD_OR_LINK
	TwoFactorPending bool      `json:"twoFactorPending"`
}

func (s *Server) listSessions(c *gin.Context) {
	cl := callerOf(c)
	list, err := identity.UserSessions(c.Request.Context(), s.deps.DB, cl.User.ID, s.now())
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]deviceSessionJSON, 0, len(list))
	for _, d := range list {
		j := deviceSessionJSON{ID: d.ID, Current: d.ID == cl.Session.ID, CreatedAt: d.CreatedAt.UTC(), ExpiresAt: d.ExpiresAt.UTC(),
			IPAddress: optionalString(d.IP), UserAgent: optionalString(d.UserAgent), SignedInWith: "PASSWORD_OR_LINK",
			TwoFactorPending: d.TwoFactorPending}
		if d.PasskeyID != "" {
			j.SignedInWith = "PASSKEY"
		}
		out = append(out, j)
	}
	c.JSON(http.StatusOK, gin.H{"sessions": out})
}

type revokeSessionRequest struct {
	ID string `json:"id"`
}

func (s *Server) revokeSession(c *gin.Context) {
	var req revokeSessionRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("id", req.ID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	cl := callerOf(c)
	err := s.asUser(c.Request.Context(), cl.User.ID, func(actx context.Context, tx pgx.Tx) error {
		if err := identity.RevokeUserSession(actx, tx, cl.User.ID, req.ID, s.now()); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "RevokeSession", Outcome: audit.Success, TargetType: "Session", TargetID: req.ID,
			Details: map[string]any{"current": req.ID == cl.Session.ID}})
	})
	if errors.Is(err, identity.ErrNotFound) {
		writeError(c, NewError(http.StatusNotFound, "SESSION_NOT_FOUND", "you have no live session with that id"))
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	if req.ID == cl.Session.ID {
		clearSessionCookie(c)
	}
	c.JSON(http.StatusOK, successBody)
}

func (s *Server) revokeOtherSessions(c *gin.Context) { s.revokeSessions(c, false) }

func (s *Server) revokeAllSessions(c *gin.Context) { s.revokeSessions(c, true) }

// revokeSessions signs out every session of the caller but the current one, or that one too.
func (s *Server) revokeSessions(c *gin.Context, all bool) {
	cl := callerOf(c)
	keep, action := cl.Session.ID, "RevokeOtherSessions"
	if all {
		keep, action = "", "RevokeSessions"
	}
	err := s.asUser(c.Request.Context(), cl.User.ID, func(actx context.Context, tx pgx.Tx) error {
		n, err := identity.RevokeUserSessions(actx, tx, cl.User.ID, keep, s.now())
		if err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "User", TargetID: cl.User.ID,
			Details: map[string]any{"revoked": n}})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	if all {
		clearSessionCookie(c)
	}
	c.JSON(http.StatusOK, successBody)
}

func (s *Server) accountActivity(c *gin.Context) {
	search, e := auditSearch(c, accountActivityFilters)
	if e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	search.TenantID, search.Person = crosstenant.PlatformTenant, cl.User.ID
	var rows []audit.Row
	err := s.asUser(c.Request.Context(), cl.User.ID, func(actx context.Context, tx pgx.Tx) (err error) {
		rows, err = audit.Find(actx, tx, search)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	rows, next := pageOf(rows, search.Limit-1, func(r audit.Row) string { return strconv.FormatInt(r.ID, 10) })
	items := make([]auditRowJSON, 0, len(rows))
	for _, r := range rows {
		items = append(items, toAuditRowJSON(r))
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "nextCursor": next})
}
