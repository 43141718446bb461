package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// notificationUser makes an employee of tenant linked to a new login user and signs them in.
func (f *authFixture) notificationUser(tenant, email string) (client *apiClient, employeeID string) {
	f.t.Helper()
	employeeID = f.catalogEmployee(tenant)
	hash, err := identity.HashPassword(testPassword)
	require.NoError(f.t, err)
	u, err := identity.CreateUser(context.Background(), f.d.App, identity.NewUser{Email: email, Name: "Abebe Kebede", PasswordHash: hash})
	require.NoError(f.t, err)
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(f.t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, employeeID)
		return err
	}))
	return f.signIn(email), employeeID
}

// notificationEvent runs the notification consumer over one event about employee.
func (f *authFixture) notificationEvent(tenant, typ string, payload map[string]any) {
	f.t.Helper()
	b, err := json.Marshal(payload)
	require.NoError(f.t, err)
	c := &notifications.Consumer{DB: f.d.App, Mailer: f.inbox, Texter: f.inbox}
	require.NoError(f.t, c.Consume(context.Background(), outbox.Event{ID: uuid.NewString(), Type: typ, OccurredAt: time.Now(),
		TenantID: tenant, Payload: b}))
}

func TestNotificationPreferencesAPI(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, su := f.signUp("owner@ntf.test", "BUSINESS")
	tenant := su.Organization.ID
	requireStatus(t, owner.call(http.MethodGet, "/api/notifications/preferences", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	me, _ := f.notificationUser(tenant, "abebe@ntf.test")

	rec := me.call(http.MethodGet, "/api/notifications/preferences", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[notificationPreferencesJSON](t, rec)
	require.Equal(t, "en", got.Language)
	require.Len(t, got.Preferences, 15, "5 categories × 3 channels")
	for _, p := range got.Preferences {
		require.Equal(t, p.Channel != "SMS", *p.Enabled, "defaults: in-app and e-mail on, SMS off (%s %s)", p.Category, p.Channel)
	}

	rec = me.call(http.MethodPut, "/api/notifications/preferences", map[string]any{"language": "am", "preferences": []map[string]any{
		{"category": "PAYROLL", "channel": "SMS", "enabled": true}, {"category": "EWA", "channel": "EMAIL", "enabled": false}}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[notificationPreferencesJSON](t, rec)
	require.Equal(t, "am", got.Language)
	on := map[string]bool{}
	for _, p := range got.Preferences {
		on[p.Category+"/"+p.Channel] = *p.Enabled
	}
	require.True(t, on["PAYROLL/SMS"])
	require.False(t, on["EWA/EMAIL"])
	require.True(t, on["LOAN/EMAIL"], "the others keep their value")
	require.Equal(t, 1, f.tenantCount(tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'SetNotificationPreferences'`))

	// Bad bodies: 400, nothing changes.
	for _, body := range []string{
		`{}`, `{"language":"fr"}`, `{"language":null}`, `{"preferences":[]}`, `{"language":"en","extra":1}`,
		`{"preferences":[{"category":"BNPL","channel":"SMS","enabled":true}]}`,
		`{"preferences":[{"category":"EWA","channel":"PUSH","enabled":true}]}`,
		`{"preferences":[{"category":"EWA","channel":"SMS"}]}`,
		`{"preferences":[{"category":"EWA","channel":"SMS","enabled":"yes"}]}`,
		`{"preferences":[{"category":"EWA","channel":"SMS","enabled":true},{"category":"EWA","channel":"SMS","enabled":false}]}`,
		`[]`, `{"language":"en"} {}`,
	} {
		req := httptest.NewRequest(http.MethodPut, "/api/notifications/preferences", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		requireStatus(t, me.hostileRequest(req), http.StatusBadRequest, "INVALID_REQUEST")
	}
	require.Equal(t, got, decode[notificationPreferencesJSON](t, me.call(http.MethodGet, "/api/notifications/preferences", nil)))
	require.Equal(t, 1, f.tenantCount(tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'SetNotificationPreferences'`))
}

func TestNotificationInboxAPI(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	_, su := f.signUp("owner@inbox.test", "BUSINESS")
	tenant := su.Organization.ID
	me, emp := f.notificationUser(tenant, "abebe@inbox.test")
	colleague, _ := f.notificationUser(tenant, "colleague@inbox.test")
	_, su2 := f.signUp("owner@inbox-other.test", "BUSINESS")
	stranger, emp2 := f.notificationUser(su2.Organization.ID, "stranger@inbox.test")

	empty := decode[notificationListJSON](t, me.call(http.MethodGet, "/api/me/notifications", nil))
	require.Empty(t, empty.Items)
	require.Nil(t, empty.NextCursor)

	require.Equal(t, http.StatusOK, me.call(http.MethodPut, "/api/notifications/preferences", map[string]any{"language": "am"}).Code)
	f.notificationEvent(tenant, "ewa.disbursed.v1", map[string]any{"requestId": "ewa_1", "employeeId": emp, "principalSantim": 150000, "feeSantim": 0})
	f.notificationEvent(tenant, "loan.disbursed.v1", map[string]any{"loanId": "loan_1", "borrowerId": emp, "principalSantim": 500000})
	f.notificationEvent(tenant, "kyc.approved.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": emp, "status": "APPROVED"})
	f.notificationEvent(su2.Organization.ID, "kyc.approved.v1", map[string]any{"submissionId": "kyc_2", "subjectType": "EMPLOYEE", "subjectId": emp2, "status": "APPROVED"})
	sent := 0
	for _, m := range f.inbox.Emails() {
		if m.Purpose == notify.Notification {
			sent++
		}
	}
	require.Equal(t, 4, sent, "e-mail is on by default")

	p1 := decode[notificationListJSON](t, me.call(http.MethodGet, "/api/me/notifications?limit=2", nil))
	require.Len(t, p1.Items, 2)
	require.Equal(t, "ማንነትዎ ተረጋግጧል", p1.Items[0].Title, "newest first, in the user's language")
	require.Equal(t, "am", p1.Items[0].Language)
	require.Equal(t, "loan.disbursed.v1", p1.Items[1].EventType)
	require.Contains(t, p1.Items[1].Body, "5,000.00 ብር")
	require.NotNil(t, p1.NextCursor)
	p2 := decode[notificationListJSON](t, me.call(http.MethodGet, "/api/me/notifications?limit=2&cursor="+url.QueryEscape(*p1.NextCursor), nil))
	require.Len(t, p2.Items, 1)
	require.Equal(t, "ewa.disbursed.v1", p2.Items[0].EventType)
	require.Nil(t, p2.NextCursor)

	id := p1.Items[0].ID
	rec := me.call(http.MethodPost, "/api/me/notifications/"+id+"/read", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	read := decode[notificationJSON](t, rec)
	require.NotNil(t, read.ReadAt)
	again := decode[notificationJSON](t, me.call(http.MethodPost, "/api/me/notifications/"+id+"/read", nil))
	require.True(t, read.ReadAt.Equal(*again.ReadAt), "the first time stays")
	unread := decode[notificationListJSON](t, me.call(http.MethodGet, "/api/me/notifications?unread=true", nil))
	require.Len(t, unread.Items, 2)
	for _, n := range unread.Items {
		require.NotEqual(t, id, n.ID)
	}

	// Another user's, in the same organization or another: 404, and not in their inbox.
	requireStatus(t, colleague.call(http.MethodPost, "/api/me/notifications/"+p1.Items[1].ID+"/read", nil), http.StatusNotFound, "NOTIFICATION_NOT_FOUND")
	requireStatus(t, stranger.call(http.MethodPost, "/api/me/notifications/"+p1.Items[1].ID+"/read", nil), http.StatusNotFound, "NOTIFICATION_NOT_FOUND")
	require.Empty(t, decode[notificationListJSON](t, colleague.call(http.MethodGet, "/api/me/notifications", nil)).Items)
	theirs := decode[notificationListJSON](t, stranger.call(http.MethodGet, "/api/me/notifications", nil))
	require.Len(t, theirs.Items, 1)
	requireStatus(t, me.call(http.MethodPost, "/api/me/notifications/"+theirs.Items[0].ID+"/read", nil), http.StatusNotFound, "NOTIFICATION_NOT_FOUND")
	requireStatus(t, me.call(http.MethodPost, "/api/me/notifications/ntf_nope/read", nil), http.StatusNotFound, "NOTIFICATION_NOT_FOUND")
	require.Nil(t, decode[notificationListJSON](t, me.call(http.MethodGet, "/api/me/notifications?unread=true", nil)).Items[1].ReadAt)

	for _, q := range []string{"?unread=yes", "?unread=true&unread=false", "?limit=0", "?limit=101", "?cursor=a%20b", "?limit=1&limit=2"} {
		requireStatus(t, me.hostile(http.MethodGet, "/api/me/notifications"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, me.hostile(http.MethodPost, "/api/me/notifications/a%20b/read", nil), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, f.client().hostile(http.MethodGet, "/api/me/notifications", nil), http.StatusUnauthorized, "UNAUTHENTICATED")
}

// FuzzNotificationRoutes: whatever reaches the notification routes (any path parameter, query and
// body, from a linked employee, a business owner or nobody) answers 4xx or success, never 5xx.
func FuzzNotificationRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	owner, su := fx.signUp("fuzz-ntf-owner@example.com", "BUSINESS")
	me, emp := fx.notificationUser(su.Organization.ID, "fuzz-ntf-me@example.com")
	admin := fx.platformAdmin("fuzz-ntf-admin@example.com")
	fx.notificationEvent(su.Organization.ID, "kyc.approved.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": emp, "status": "APPROVED"})
	routes := fx.srv.notificationRoutes()
	f.Add(uint8(1), uint8(0), "", "", `{"language":"am","preferences":[{"category":"EWA","channel":"SMS","enabled":true}]}`)
	f.Add(uint8(1), uint8(0), "", "", `{"preferences":[{"category":"EWA","channel":"SMS","enabled":true},{"category":"EWA","channel":"SMS","enabled":true}]}`)
	f.Add(uint8(1), uint8(0), "", "", `{"preferences":[{"category":"\u0000","channel":1e400,"enabled":null}]}`)
	f.Add(uint8(1), uint8(1), "", "", `{"language":"en"}`)
	f.Add(uint8(1), uint8(0), "", "", `{"preferences":`+strings.Repeat(`[`, 200)+`}`)
	f.Add(uint8(0), uint8(0), "", "", "")
	f.Add(uint8(2), uint8(0), "", "limit=1&cursor=ntf_zzz&unread=true", "")
	f.Add(uint8(2), uint8(0), "", "cursor=%ff%00&unread=%00", "")
	f.Add(uint8(3), uint8(0), "ntf_x", "", "")
	f.Add(uint8(3), uint8(0), "%ff%00", "", "")
	f.Add(uint8(4), uint8(2), "", "", `{"channel":"SMS","to":"+251911234567","language":"am"}`)
	f.Add(uint8(4), uint8(2), "", "", `{"channel":"EMAIL","to":"a@b.co\r\nBcc: x@evil.test"}`)
	f.Add(uint8(4), uint8(2), "", "", `{"channel":"SMS","to":"+2519\u200b11234567"}`)
	f.Add(uint8(4), uint8(2), "", "", `{"channel":"IN_APP","to":"me","language":"fr"}`)
	f.Add(uint8(4), uint8(1), "", "", `{"channel":"EMAIL","to":"a@b.co"}`)
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := r.Path
		if i := strings.IndexByte(path, ':'); i >= 0 {
			path = path[:i] + param + "/read"
		}
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.82:40000"
		switch who % 4 {
		case 0:
			req.AddCookie(me.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		case 2:
			req.AddCookie(admin.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}

// TestNotificationTestAPI: a platform admin sends the test message by e-mail and by SMS through
// the senders (here the fixture's inbox) in either language, the recipient answered masked and the
// reference in the text; bad channels, recipients and languages are 400 and send nothing; anyone
// but a platform admin is refused.
func TestNotificationTestAPI(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, _ := f.signUp("owner@ntf-test.test", "BUSINESS")
	admin := f.platformAdmin("admin@ntf-test.test")
	const path = "/api/notifications/test"

	rec := admin.call(http.MethodPost, path, map[string]any{"channel": "EMAIL", "to": "ops@ntf-test.test"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[notificationTestJSON](t, rec)
	require.Equal(t, notificationTestJSON{Channel: "EMAIL", To: "****test", Language: "en", Reference: got.Reference, Status: "SENT"}, got)
	require.Regexp(t, `^ntftest_`, got.Reference)
	mails := f.inbox.Emails()
	require.Equal(t, "ops@ntf-test.test", mails[len(mails)-1].To)
	require.Equal(t, "Wagerail test message", mails[len(mails)-1].Subject)
	require.Contains(t, mails[len(mails)-1].Text, got.Reference)

	rec = admin.call(http.MethodPost, path, map[string]any{"channel": "SMS", "to": "+251911234567", "language": "am"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[notificationTestJSON](t, rec)
	require.Equal(t, "SENT", got.Status)
	require.Equal(t, "am", got.Language)
	texts := f.inbox.Texts()
	sms := texts[len(texts)-1]
	require.Equal(t, "+251911234567", sms.To)
	require.Equal(t, got.Reference, sms.Reference)
	require.Contains(t, sms.Text, "የሙከራ መልእክት")

	sent := len(f.inbox.Emails()) + len(f.inbox.Texts())
	for name, body := range map[string]map[string]any{
		"in-app is not a sender": {"channel": "IN_APP", "to": "ops@ntf-test.test"},
		"a number by e-mail":     {"channel": "EMAIL", "to": "+251911234567"},
		"header injection":       {"channel": "EMAIL", "to": "ops@ntf-test.test\r\nBcc: x@evil.test"},
		"an address by SMS":      {"channel": "SMS", "to": "ops@ntf-test.test"},
		"invisible character":    {"channel": "SMS", "to": "+2519\u200b11234567"},
		"unknown language":       {"channel": "SMS", "to": "+251911234567", "language": "fr"},
		"no recipient":           {"channel": "EMAIL"},
		"an unknown field":       {"channel": "EMAIL", "to": "ops@ntf-test.test", "cc": "x@evil.test"},
	} {
		rec := admin.hostile(http.MethodPost, path, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, name+": "+rec.Body.String())
	}
	require.Equal(t, sent, len(f.inbox.Emails())+len(f.inbox.Texts()), "nothing was sent for bad input")
	require.Equal(t, http.StatusForbidden, owner.call(http.MethodPost, path, map[string]any{"channel": "EMAIL", "to": "ops@ntf-test.test"}).Code)
	require.Equal(t, http.StatusUnauthorized, f.client().call(http.MethodPost, path, map[string]any{"channel": "EMAIL", "to": "ops@ntf-test.test"}).Code)
}
