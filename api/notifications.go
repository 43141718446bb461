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
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
)

// Notifications (issue 27 part 2): the caller's own choices and in-app inbox, in the organization
// they are an employee of (the session's active one, else the one they are linked in), as the
// /api/me routes choose it. The consumer that writes the inbox is internal/notifications.

var errNotificationNotFound = NewError(http.StatusNotFound, "NOTIFICATION_NOT_FOUND", "no such notification")

func (s *Server) notificationRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/notifications/preferences", Auth: Session, Summary: "The caller's notification preferences", Handler: s.getNotificationPreferences},
		{Method: http.MethodPut, Path: "/api/notifications/preferences", Auth: Session, Summary: "Change the caller's notification preferences", Handler: s.putNotificationPreferences},
		{Method: http.MethodGet, Path: "/api/me/notifications", Auth: Session, Summary: "The caller's in-app notifications (newest first, paged)", Handler: s.myNotifications},
		{Method: http.MethodPost, Path: "/api/me/notifications/:id/read", Auth: Session, Summary: "Mark one of the caller's notifications read", Handler: s.readNotification, Body: BodyNone},
		{Method: http.MethodPost, Path: "/api/notifications/test", Auth: Platform, Summary: "Send a test message through the e-mail or SMS sender", Handler: s.sendTestNotification},
	}
}

// --- JSON ---

type notificationPreferenceJSON struct {
	Category string `json:"category"`
	Channel  string `json:"channel"`
	Enabled  *bool  `json:"enabled"`
}

type notificationPreferencesJSON struct {
	Language    string                       `json:"language"`
	Preferences []notificationPreferenceJSON `json:"preferences"`
}

type notificationPreferencesInput struct {
	Language    *string                      `json:"language"`
	Preferences []notificationPreferenceJSON `json:"preferences"`
}

type notificationJSON struct {
	ID        string     `json:"id"`
	EventType string     `json:"eventType"`
	Category  string     `json:"category"`
	Title     string     `json:"title"`
	Body      string     `json:"body"`
	Language  string     `json:"language"`
	CreatedAt time.Time  `json:"createdAt"`
	ReadAt    *time.Time `json:"readAt"`
}

type notificationListJSON struct {
	Items      []notificationJSON `json:"items"`
	NextCursor *string            `json:"nextCursor"`
}

func toPreferencesJSON(p notifications.Preferences) notificationPreferencesJSON {
	out := notificationPreferencesJSON{Language: string(p.Language), Preferences: []notificationPreferenceJSON{}}
	for _, it := range p.Items {
		on := it.Enabled
		out.Preferences = append(out.Preferences, notificationPreferenceJSON{Category: string(it.Category), Channel: string(it.Channel), Enabled: &on})
	}
	return out
}

func toNotificationJSON(n notifications.Notification) notificationJSON {
	return notificationJSON{ID: n.ID, EventType: n.EventType, Category: string(n.Category), Title: n.Title, Body: n.Body,
		Language: string(n.Language), CreatedAt: n.CreatedAt.UTC(), ReadAt: n.ReadAt}
}

// maxPreferenceItems is every (category, channel) once.
var maxPreferenceItems = len(notifications.Categories) * len(notifications.Channels)

// parsePreferences checks a PUT body: a known language, known categories and channels, enabled
// given, each (category, channel) at most once, and something to change.
func parsePreferences(in notificationPreferencesInput) (notifications.Language, []notifications.Preference, *Error) {
	var lang notifications.Language
	if in.Language != nil {
		lang = notifications.Language(*in.Language)
		if !lang.Valid() {
			return "", nil, fieldError(&field.Error{Field: "language", Problem: "must be en or am"})
		}
	}
	if in.Language == nil && len(in.Preferences) == 0 {
		return "", nil, fieldError(&field.Error{Field: "preferences", Problem: "give a language or at least one preference"})
	}
	if len(in.Preferences) > maxPreferenceItems {
		return "", nil, fieldError(&field.Error{Field: "preferences", Problem: fmt.Sprintf("must hold at most %d items", maxPreferenceItems)})
	}
	seen := map[notifications.Preference]bool{}
	items := make([]notifications.Preference, 0, len(in.Preferences))
	for _, p := range in.Preferences {
		cat, ch := notifications.Category(p.Category), notifications.Channel(p.Channel)
		switch {
		case !cat.Valid():
			return "", nil, fieldError(&field.Error{Field: "preferences.category", Problem: "must be EWA, LOAN, PAYROLL or KYC"})
		case !ch.Valid():
			return "", nil, fieldError(&field.Error{Field: "preferences.channel", Problem: "must be IN_APP, EMAIL or SMS"})
		case p.Enabled == nil:
			return "", nil, fieldError(&field.Error{Field: "preferences.enabled", Problem: "is required"})
		}
		key := notifications.Preference{Category: cat, Channel: ch}
		if seen[key] {
			return "", nil, fieldError(&field.Error{Field: "preferences", Problem: "must name each category and channel at most once"})
		}
		seen[key] = true
		items = append(items, notifications.Preference{Category: cat, Channel: ch, Enabled: *p.Enabled})
	}
	return lang, items, nil
}

// --- handlers ---

func (s *Server) getNotificationPreferences(c *gin.Context) {
	tenant, _, ok := s.myEmployee(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	p, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) (notifications.Preferences, error) {
		return notifications.Load(ctx, tx, tenant, user)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toPreferencesJSON(p))
}

func (s *Server) putNotificationPreferences(c *gin.Context) {
	var in notificationPreferencesInput
	if e := bindJSON(c, &in); e != nil {
		writeError(c, e)
		return
	}
	lang, items, e := parsePreferences(in)
	if e != nil {
		writeError(c, e)
		return
	}
	tenant, _, ok := s.myEmployee(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	p, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) (notifications.Preferences, error) {
		if err := notifications.Save(ctx, tx, tenant, user, lang, items, time.Now()); err != nil {
			return notifications.Preferences{}, err
		}
		if err := audit.Write(ctx, tx, audit.Entry{Action: "SetNotificationPreferences", Outcome: audit.Success,
			TargetType: "User", TargetID: user, Details: map[string]any{"language": string(lang), "changed": len(items)}}); err != nil {
			return notifications.Preferences{}, err
		}
		return notifications.Load(ctx, tx, tenant, user)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toPreferencesJSON(p))
}

func (s *Server) myNotifications(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	unread := false
	switch q := c.Request.URL.Query()["unread"]; {
	case len(q) > 1:
		writeError(c, fieldError(&field.Error{Field: "unread", Problem: "must be given at most once"}))
		return
	case len(q) == 1 && q[0] == "true":
		unread = true
	case len(q) == 1 && q[0] != "false":
		writeError(c, fieldError(&field.Error{Field: "unread", Problem: "must be true or false"}))
		return
	}
	tenant, _, ok := s.myEmployee(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	rows, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) ([]notifications.Notification, error) {
		return notifications.Inbox(ctx, tx, tenant, user, cursor, unread, limit+1)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := notificationListJSON{Items: []notificationJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(n notifications.Notification) string { return n.ID })
	for _, n := range rows {
		out.Items = append(out.Items, toNotificationJSON(n))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) readNotification(c *gin.Context) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	tenant, _, ok := s.myEmployee(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	n, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) (notifications.Notification, error) {
		return notifications.MarkRead(ctx, tx, tenant, user, id, time.Now())
	})
	if errors.Is(err, notifications.ErrNotFound) {
		err = errNotificationNotFound
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toNotificationJSON(n))
}

// --- the platform's test message ---

type notificationTestInput struct {
	Channel  string  `json:"channel"`
	To       string  `json:"to"`
	Language *string `json:"language"`
}

type notificationTestJSON struct {
	Channel   string  `json:"channel"`
	To        string  `json:"to"` // masked: the last four characters
	Language  string  `json:"language"`
	Reference string  `json:"reference"`
	Status    string  `json:"status"` // SENT or FAILED
	Failure   *string `json:"failure"`
}

// sendTestNotification sends the test message by e-mail or SMS to the address or number given,
// through the sender that channel uses (the consumer's): a platform admin's check that messages
// leave. The answer says whether the sender accepted it (a sender's failure is the answer's
// FAILED, not an error of this call: the call did what it was asked). Nothing is stored; one log
// line with the masked recipient.
func (s *Server) sendTestNotification(c *gin.Context) {
	var in notificationTestInput
	if e := bindJSON(c, &in); e != nil {
		writeError(c, e)
		return
	}
	ch, to := notifications.Channel(in.Channel), strings.TrimSpace(in.To)
	var err error
	switch ch {
	case notifications.Email:
		err = field.Email("to", to)
	case notifications.SMS:
		err = field.Phone("to", to)
	default:
		err = &field.Error{Field: "channel", Problem: "must be EMAIL or SMS"}
	}
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	lang := notifications.English
	if in.Language != nil {
		if lang = notifications.Language(*in.Language); !lang.Valid() {
			writeError(c, fieldError(&field.Error{Field: "language", Problem: "must be en or am"}))
			return
		}
	}
	out := notificationTestJSON{Channel: string(ch), To: logging.MaskLast4(to), Language: string(lang),
		Reference: "ntftest_" + identity.NewID(), Status: "SENT"}
	if err := notifications.SendTest(c.Request.Context(), s.deps.Mailer, s.deps.Texter, ch, to, lang, out.Reference); err != nil {
		failure := "the sender failed"
		if errors.Is(err, notify.ErrInvalidMessage) || errors.Is(err, notify.ErrHeaderInjection) {
			failure = "the sender refused the message"
		}
		out.Status, out.Failure = "FAILED", &failure
	}
	s.deps.Log.InfoContext(c.Request.Context(), "notifications: test message", "channel", out.Channel, "to", out.To,
		"reference", out.Reference, "status", out.Status)
	// Our sender, at an address the admin chose: on the trail (the address masked).
	outcome := audit.Success
	if out.Failure != nil {
		outcome = audit.Failed
	}
	if err := s.auditIn(c.Request.Context(), crosstenant.PlatformTenant, callerOf(c).User.ID, audit.Entry{Action: "SendTestNotification",
		Outcome: outcome, Details: map[string]any{"channel": out.Channel, "to": out.To, "reference": out.Reference, "status": out.Status}}); err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
