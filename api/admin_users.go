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
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The platform's user directory, for support: find a user by e-mail (exact or its start), read who
// they are on the platform (memberships, the employees they are, live sessions, two-factor,
// platform roles), and sign them out everywhere when their account is at risk. Every read is on
// the audited cross-tenant path (a CrossTenantAccess row names the admin and the route); the
// sign-out is audited AdminRevokeSessions under the platform tenant ("*"). Nothing secret is
// read: no password hash, TOTP secret, token or backup code.

const actionAdminRevokeSessions = "AdminRevokeSessions"

func (s *Server) adminUserRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/admin/users", Auth: Platform, Summary: "The user directory (by e-mail or its start, paged)", Handler: s.listDirectory},
		{Method: http.MethodGet, Path: "/api/admin/users/:id", Auth: Platform, Summary: "One user: memberships, linked employees, live sessions, platform roles", Handler: s.getDirectoryUser},
		{Method: http.MethodPost, Path: "/api/admin/users/:id/revoke-sessions", Auth: Platform, Summary: "Sign a user out of every session", Handler: s.adminRevokeSessions, Body: BodyNone},
	}
}

type directoryEntryJSON struct {
	ID               string    `json:"id"`
	Email            string    `json:"email"`
	Name             string    `json:"name"`
	EmailVerified    bool      `json:"emailVerified"`
	TwoFactorEnabled bool      `json:"twoFactorEnabled"`
	PlatformAdmin    bool      `json:"platformAdmin"`
	Operator         bool      `json:"operator"`
	CreatedAt        time.Time `json:"createdAt"`
}

func toDirectoryEntryJSON(e identity.DirectoryEntry) directoryEntryJSON {
	return directoryEntryJSON{ID: e.ID, Email: e.Email, Name: e.Name, EmailVerified: e.EmailVerified, TwoFactorEnabled: e.TwoFactorEnabled,
		PlatformAdmin: e.PlatformAdmin, Operator: e.Operator, CreatedAt: e.CreatedAt.UTC()}
}

type directoryUserJSON struct {
	directoryEntryJSON
	Memberships  []directoryMembershipJSON `json:"memberships"`
	Employees    []directoryEmployeeJSON   `json:"employees"`
	LiveSessions int64                     `json:"liveSessions"`
}

type directoryMembershipJSON struct {
	OrganizationID   string `json:"organizationId"`
	OrganizationName string `json:"organizationName"`
	Kind             string `json:"kind"`
	Role             string `json:"role"`
	Status           string `json:"status"`
}

type directoryEmployeeJSON struct {
	OrganizationID string `json:"organizationId"`
	EmployeeID     string `json:"employeeId"`
	Status         string `json:"status"`
}

var errUserNotFound = NewError(http.StatusNotFound, "USER_NOT_FOUND", "no such user")

// directoryParams are the directory list's query parameters.
var directoryParams = map[string]bool{"email": true, "emailPrefix": true, "limit": true, "cursor": true}

// listDirectory answers GET /api/admin/users: the users by id (creation order), filtered by an
// exact e-mail or the start of one.
func (s *Server) listDirectory(c *gin.Context) {
	q := c.Request.URL.Query()
	limit, cursor, e := idListQuery(q, directoryParams)
	if e != nil {
		writeError(c, e)
		return
	}
	f := identity.DirectoryQuery{After: cursor, Limit: limit + 1}
	if q.Has("email") {
		f.Email = strings.TrimSpace(q.Get("email"))
		if err := field.Email("email", f.Email); err != nil {
			writeError(c, fieldError(err))
			return
		}
	}
	if q.Has("emailPrefix") {
		f.EmailPrefix = q.Get("emailPrefix")
		if err := emailPrefix(f.EmailPrefix); err != nil {
			writeError(c, fieldError(err))
			return
		}
	}
	answerPlatformPage(s, c, limit, func(ctx context.Context, tx pgx.Tx) ([]identity.DirectoryEntry, error) {
		return identity.Directory(ctx, tx, f)
	}, func(e identity.DirectoryEntry) string { return e.ID }, toDirectoryEntryJSON)
}

// emailPrefix checks the start of an e-mail address: 1 to 254 bytes of printable ASCII without
// spaces (what an address is made of).
func emailPrefix(v string) error {
	if v == "" || len(v) > field.MaxEmail {
		return &field.Error{Field: "emailPrefix", Problem: "must be 1 to 254 characters of an e-mail address"}
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return &field.Error{Field: "emailPrefix", Problem: "must be printable ASCII without spaces"}
		}
	}
	return nil
}

// getDirectoryUser answers GET /api/admin/users/<id>.
func (s *Server) getDirectoryUser(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var d identity.UserDetail
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		d, err = identity.DirectoryUser(c.Request.Context(), tx, id, s.now())
		return err
	})
	if errors.Is(err, identity.ErrNotFound) {
		err = errUserNotFound
	}
	if err != nil {
		writeError(c, err)
		return
	}
	out := directoryUserJSON{directoryEntryJSON: toDirectoryEntryJSON(d.DirectoryEntry), LiveSessions: d.LiveSessions,
		Memberships: make([]directoryMembershipJSON, 0, len(d.Memberships)), Employees: make([]directoryEmployeeJSON, 0, len(d.Employees))}
	for _, m := range d.Memberships {
		out.Memberships = append(out.Memberships, directoryMembershipJSON(m))
	}
	for _, e := range d.Employees {
		out.Employees = append(out.Employees, directoryEmployeeJSON(e))
	}
	c.JSON(http.StatusOK, out)
}

// adminRevokeSessions answers POST /api/admin/users/<id>/revoke-sessions: every live session of
// the user ends (their next request is unauthenticated), audited with how many; 404 for no such
// user. Revoking a user with none live is a success that revoked 0.
func (s *Server) adminRevokeSessions(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var n int64
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		ctx := platformScope(c.Request.Context())
		if _, err := identity.UserByID(ctx, tx, id); err != nil {
			return err
		}
		var err error
		if n, err = identity.RevokeUserSessions(ctx, tx, id, "", s.now()); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionAdminRevokeSessions, Outcome: audit.Success, TargetType: "User", TargetID: id,
			Details: map[string]any{"revoked": n}})
	})
	if errors.Is(err, identity.ErrNotFound) {
		err = errUserNotFound
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"userId": id, "revoked": n})
}
