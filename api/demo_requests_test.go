package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// demoFixture is an API on a fresh database and a platform pool to look at app.demo_requests,
// which the runtime role cannot read.
type demoFixture struct {
	*authFixture
	plat *pgxpool.Pool
}

func newDemoFixture(t testing.TB) *demoFixture {
	t.Helper()
	f := newAuthFixture(t)
	return &demoFixture{authFixture: f, plat: f.d.Platform(t)}
}

// demoRows is app.demo_requests as a fingerprint: how many rows, and each row's id, status, note
// and last update, so a test can tell that a refused request wrote nothing.
func (f *demoFixture) demoRows(t testing.TB) (int, string) {
	t.Helper()
	ctx := context.Background()
	var n int
	var print string
	require.NoError(t, pgx.BeginFunc(ctx, f.plat, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*), coalesce(md5(string_agg(id || status || coalesce(note, '') || coalesce(updated_at::text, ''), ',' ORDER BY seq)), '')
			FROM app.demo_requests`).Scan(&n, &print)
	}))
	return n, print
}

// newestDemoRequest is the id of the request stored last.
func (f *demoFixture) newestDemoRequest(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	var id string
	require.NoError(t, pgx.BeginFunc(ctx, f.plat, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT id FROM app.demo_requests ORDER BY seq DESC LIMIT 1`).Scan(&id)
	}))
	return id
}

// demoEvents are the request ids of the demo_request.received.v1 events in the outbox (under the
// platform tenant, where the runtime role reads them), oldest first.
func (f *demoFixture) demoEvents(t testing.TB) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	require.NoError(t, db.InTenantTx(ctx, f.d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT payload->>'requestId' FROM app.outbox WHERE type = $1 ORDER BY occurred_at, event_id`,
			demorequests.EventReceived)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return ids
}

// demoAudits counts the platform-wide audit rows of action with outcome.
func (f *demoFixture) demoAudits(t testing.TB, action, outcome, actor string) int {
	t.Helper()
	return bizAudits(t, f.d, crosstenant.PlatformTenant, action, outcome, actor)
}

// visitor is an anonymous browser from its own address (the form is limited per IP).
func (f *demoFixture) visitor(ip string) *apiClient {
	c := f.client()
	c.ip = ip
	return c
}

// demoReceived is the one answer to an accepted submission, new or repeated.
const demoReceived = `{"status":"RECEIVED"}`

// requireReceived asserts rec is that answer.
func requireReceived(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, demoReceived, rec.Body.String())
}

type demoList struct {
	Items      []demoRequestJSON `json:"items"`
	NextCursor *string           `json:"nextCursor"`
}

func demoForm(email string) map[string]any {
	return map[string]any{"name": "Almaz Bekele", "email": email, "company": "Abyssinia Textiles"}
}

// TestDemoRequestSubmitAndDedupe: a submission is stored NEW; the same address again while its
// request is open and under 24 hours old stores nothing; past 24 hours, or once the request is
// CLOSED, it is a new request. Every answer is the same 202 RECEIVED, so a repeat cannot be told
// from a first request. Each submission is audited on the platform-wide trail with the
// e-mail masked and without the message.
func TestDemoRequestSubmitAndDedupe(t *testing.T) {
	t.Parallel()
	f := newDemoFixture(t)
	admin := f.platformAdmin("demo-admin@wagerail.test")
	v := f.visitor("198.51.100.20")

	rec := v.call(http.MethodPost, "/api/demo-requests", map[string]any{"name": "  Almaz Bekele ", "email": " Almaz@Example.COM ",
		"company": "Abyssinia Textiles", "phone": " +251911234567 ", "employeeCount": 250,
		"message": "We pay 250 people monthly.\nCan we see early wage access?"})
	requireReceived(t, rec)
	n, _ := f.demoRows(t)
	require.Equal(t, 1, n)
	inbox := decode[demoList](t, admin.call(http.MethodGet, "/api/admin/demo-requests", nil))
	require.Len(t, inbox.Items, 1)
	first := inbox.Items[0]
	require.Regexp(t, `^dmr_[0-9a-f-]{36}$`, first.ID)
	require.Equal(t, "NEW", first.Status)
	require.Equal(t, f.now(), first.ReceivedAt)
	require.Equal(t, []string{first.ID}, f.demoEvents(t), "a new request tells sales: one event")

	// Someone sends the same address again (another case, other details): the open request.
	f.advance(23 * time.Hour)
	rec = f.visitor("198.51.100.21").call(http.MethodPost, "/api/demo-requests", map[string]any{"name": "Mallory", "email": "almaz@example.com",
		"company": "Other PLC", "message": "overwrite?"})
	requireReceived(t, rec)
	n, _ = f.demoRows(t)
	require.Equal(t, 1, n, "a double submit stores nothing")
	require.Len(t, f.demoEvents(t), 1, "and writes no event")

	// The stored request is the first submission, normalised; the second changed nothing.
	list := decode[demoList](t, admin.call(http.MethodGet, "/api/admin/demo-requests", nil))
	require.Len(t, list.Items, 1)
	got := list.Items[0]
	require.Equal(t, first.ID, got.ID)
	require.Equal(t, "Almaz Bekele", got.Name)
	require.Equal(t, "almaz@example.com", got.Email)
	require.Equal(t, "Abyssinia Textiles", got.Company)
	require.Equal(t, "+251911234567", *got.Phone)
	require.Equal(t, int64(250), *got.EmployeeCount)
	require.Equal(t, "We pay 250 people monthly.\nCan we see early wage access?", *got.Message)
	require.Equal(t, "NEW", got.Status)
	require.Nil(t, got.Note)
	require.Nil(t, got.UpdatedAt)

	// Past 24 hours: a new request.
	f.advance(2 * time.Hour)
	requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm("almaz@example.com")))
	inbox = decode[demoList](t, admin.call(http.MethodGet, "/api/admin/demo-requests", nil))
	require.Len(t, inbox.Items, 2)
	second := inbox.Items[0]
	require.NotEqual(t, first.ID, second.ID)

	// Once it is CLOSED, the address may ask again at once.
	rec = admin.call(http.MethodPut, "/api/admin/demo-requests/"+second.ID, map[string]any{"status": "CLOSED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm("almaz@example.com")))
	n, _ = f.demoRows(t)
	require.Equal(t, 3, n)
	require.Len(t, f.demoEvents(t), 3, "one event per new request")

	// Audited: four submissions, one of them a duplicate; the e-mail masked, never the message.
	require.Equal(t, 4, f.demoAudits(t, actionSubmitDemoRequest, "SUCCESS", anonymousActor))
	ctx := context.Background()
	var duplicates, masked, leaks int
	require.NoError(t, db.InTenantTx(ctx, f.d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE details->>'duplicate' = 'true'),
			count(*) FILTER (WHERE details->>'email' = '****.com' AND target_type = 'DemoRequest' AND target_id LIKE 'dmr\_%'),
			count(*) FILTER (WHERE details::text ILIKE '%almaz%' OR details::text LIKE '%wage access%' OR details::text LIKE '%Mallory%')
			FROM app.audit_log WHERE action = $1`, actionSubmitDemoRequest).Scan(&duplicates, &masked, &leaks)
	}))
	require.Equal(t, 1, duplicates)
	require.Equal(t, 4, masked)
	require.Zero(t, leaks, "the audit holds neither the address nor the message")
}

// TestDemoRequestDoubleSubmitRace: copies of one submission sent at once store one request, and
// each is answered RECEIVED; one audit row is the request's, the others duplicates.
func TestDemoRequestDoubleSubmitRace(t *testing.T) {
	t.Parallel()
	f := newDemoFixture(t)
	v := f.visitor("198.51.100.30")
	racers := make([]*racer, 6)
	for i := range racers {
		racers[i] = v.racer(http.MethodPost, "/api/demo-requests", demoForm("race@example.com"))
	}
	var wg sync.WaitGroup
	for _, r := range racers {
		wg.Go(func() { r.serve() })
	}
	wg.Wait()
	for _, r := range racers {
		requireReceived(t, r.answer())
	}
	n, _ := f.demoRows(t)
	require.Equal(t, 1, n)
	require.Equal(t, []string{f.newestDemoRequest(t)}, f.demoEvents(t), "one event for the one request")
	require.Equal(t, len(racers), f.demoAudits(t, actionSubmitDemoRequest, "SUCCESS", anonymousActor))
}

// TestDemoRequestRefusesHostileInput: control characters, invalid UTF-8, oversized and unknown
// fields, wrong types, duplicate keys and bodies that are not one JSON object are refused with
// the error envelope, naming the field where there is one; nothing is stored or audited, and the
// refusals do not count against the sender's rate limit.
func TestDemoRequestRefusesHostileInput(t *testing.T) {
	t.Parallel()
	f := newDemoFixture(t)
	v := f.visitor("198.51.100.40")
	with := func(k string, val any) map[string]any {
		b := map[string]any{"name": "Almaz Bekele", "email": "almaz@example.com", "company": "Acme", "phone": "+251911234567",
			"employeeCount": 10, "message": "hi"}
		if val == nil {
			delete(b, k)
		} else {
			b[k] = val
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		body  any
		field string // "" when the refusal names none
	}{
		{"no name", with("name", nil), "name"},
		{"no e-mail", with("email", nil), "email"},
		{"no company", with("company", nil), "company"},
		{"blank name", with("name", "   "), "name"},
		{"control character", with("name", "Al\u0001maz"), "name"},
		{"NUL", with("company", "Ac\u0000me"), "company"},
		{"escape sequence in the message", with("message", "hi \u001b[31mred"), "message"},
		{"bidi override", with("company", "\u202eemcA"), "company"},
		{"zero-width space", with("name", "Al\u200bmaz"), "name"},
		{"lone surrogate", `{"name":"\ud800","email":"almaz@example.com","company":"Acme"}`, "name"},
		{"invalid UTF-8", []byte("{\"name\":\"Al\xffmaz\",\"email\":\"almaz@example.com\",\"company\":\"Acme\"}"), ""},
		{"name over 256 bytes", with("name", strings.Repeat("a", 257)), "name"},
		{"company over 256 bytes", with("company", strings.Repeat("ሀ", 86)), "company"},
		{"message over 1,024 bytes", with("message", strings.Repeat("m", 1025)), "message"},
		{"not an e-mail", with("email", "almaz"), "email"},
		{"two e-mails", with("email", "a@b.et,c@d.et"), "email"},
		{"local phone", with("phone", "0911234567"), "phone"},
		{"no employees", with("employeeCount", 0), "employeeCount"},
		{"too many employees", with("employeeCount", 1_000_001), "employeeCount"},
		{"a fraction of an employee", `{"name":"A","email":"a@b.et","company":"C","employeeCount":1.5}`, "employeeCount"},
		{"employees past int64", `{"name":"A","email":"a@b.et","company":"C","employeeCount":9223372036854775808}`, "employeeCount"},
		{"employees as text", with("employeeCount", "12"), "employeeCount"},
		{"name as a number", with("name", 12), "name"},
		{"e-mail as a boolean", with("email", true), "email"},
		{"message as an object", with("message", map[string]any{}), "message"},
		{"unknown field", with("status", "QUALIFIED"), ""},
		{"a key twice", `{"name":"A","email":"a@b.et","company":"C","Email":"x@y.et"}`, "Email"},
		{"an array", `[]`, ""},
		{"two objects", `{"name":"A","email":"a@b.et","company":"C"}{}`, ""},
		{"empty", ``, ""},
	} {
		before, print := f.demoRows(t)
		rec := v.hostile(http.MethodPost, "/api/demo-requests", tc.body)
		details := refused(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
		if tc.field != "" {
			require.Equal(t, tc.field, details["field"], "%s: %s", tc.name, rec.Body.String())
		}
		after, printAfter := f.demoRows(t)
		require.Equal(t, before, after, tc.name)
		require.Equal(t, print, printAfter, tc.name)
	}
	rec := v.hostile(http.MethodPost, "/api/demo-requests", `{"name":"A","email":"a@b.et","company":"C"}`, "Content-Type", "text/plain")
	refused(t, rec, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	rec = v.hostile(http.MethodPost, "/api/demo-requests", `{"name":"`+strings.Repeat("a", int(DefaultMaxBodyBytes))+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)

	n, _ := f.demoRows(t)
	require.Zero(t, n)
	require.Empty(t, f.demoEvents(t), "a refused submission tells nobody")
	require.Zero(t, f.demoAudits(t, actionSubmitDemoRequest, "SUCCESS", ""))
	// 30-odd refusals from this address did not use up its ten an hour.
	for i := range 10 {
		requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm(fmt.Sprintf("ok-%d@example.com", i))))
	}
	// The boundaries are allowed.
	f.advance(time.Hour)
	requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", map[string]any{"name": strings.Repeat("a", 256), "email": "edge@example.com",
		"company": strings.Repeat("ሀ", 85) + "a", "employeeCount": 1_000_000, "message": strings.Repeat("m", 1024), "phone": ""}))
}

// TestDemoRequestRateLimit: ten valid submissions per client IP per hour, repeated ones included;
// the eleventh is 429 RATE_LIMITED with Retry-After and stores nothing; another address is not
// held back, and the next hour the first may send again.
func TestDemoRequestRateLimit(t *testing.T) {
	t.Parallel()
	f := newDemoFixture(t)
	v := f.visitor("203.0.113.7")
	for i := range 9 {
		requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm(fmt.Sprintf("lead-%d@example.com", i))))
	}
	requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm("lead-0@example.com"))) // a duplicate, counted
	before, print := f.demoRows(t)
	rec := v.call(http.MethodPost, "/api/demo-requests", demoForm("flood@example.com"))
	details := refused(t, rec, http.StatusTooManyRequests, "RATE_LIMITED")
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	require.Positive(t, details["retryAfterSeconds"])
	after, printAfter := f.demoRows(t)
	require.Equal(t, before, after)
	require.Equal(t, print, printAfter)
	require.Equal(t, 10, f.demoAudits(t, actionSubmitDemoRequest, "SUCCESS", ""), "a refused submission is not audited as one")

	requireReceived(t, f.visitor("203.0.113.8").call(http.MethodPost, "/api/demo-requests", demoForm("flood@example.com")))
	f.advance(time.Hour)
	requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm("later@example.com")))
	n, _ := f.demoRows(t)
	require.Equal(t, before+2, n)
}

// TestDemoRequestAdminListAndUpdate: the inbox is newest first, paged by cursor, filtered by
// status and receivedAt; an update moves the status (any open status to any status), sets, keeps
// or clears the note and is audited UpdateDemoRequest with the admin as actor; CLOSED is final
// (409, audited DENIED); an unknown or malformed id is 404.
func TestDemoRequestAdminListAndUpdate(t *testing.T) {
	t.Parallel()
	f := newDemoFixture(t)
	admin := f.platformAdmin("inbox-admin@wagerail.test")
	adminID := bizUserID(t, admin)
	v := f.visitor("198.51.100.50")
	start := f.now()
	var ids []string
	for i := range 5 {
		requireReceived(t, v.call(http.MethodPost, "/api/demo-requests", demoForm(fmt.Sprintf("lead-%d@example.com", i))))
		ids = append(ids, f.newestDemoRequest(t))
		f.advance(time.Minute)
	}
	page := func(query string) demoList {
		t.Helper()
		rec := admin.call(http.MethodGet, "/api/admin/demo-requests"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[demoList](t, rec)
	}
	idsOf := func(l demoList) []string {
		var out []string
		for _, it := range l.Items {
			out = append(out, it.ID)
		}
		return out
	}

	all := page("")
	require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, idsOf(all), "newest first")
	require.Nil(t, all.NextCursor)
	var walked []string
	for cursor := ""; ; {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		p := page(q)
		require.LessOrEqual(t, len(p.Items), 2)
		walked = append(walked, idsOf(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	require.Equal(t, idsOf(all), walked, "the pages cover the inbox once, in order")
	window := "?from=" + url.QueryEscape(start.Add(time.Minute).Format(time.RFC3339)) + "&to=" + url.QueryEscape(start.Add(3*time.Minute).Format(time.RFC3339))
	require.Equal(t, []string{ids[2], ids[1]}, idsOf(page(window)), "from <= receivedAt < to")

	// Update: status and note; the note stays when left out and "" clears it.
	rec := admin.call(http.MethodPut, "/api/admin/demo-requests/"+ids[0], map[string]any{"status": "CONTACTED", "note": "  Called; demo on Tuesday "})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[demoRequestJSON](t, rec)
	require.Equal(t, "CONTACTED", got.Status)
	require.Equal(t, "Called; demo on Tuesday", *got.Note)
	require.Equal(t, adminID, *got.UpdatedBy)
	require.Equal(t, f.now(), *got.UpdatedAt)
	require.Equal(t, []string{ids[0]}, idsOf(page("?status=CONTACTED")))
	require.Len(t, page("?status=NEW").Items, 4)
	got = decode[demoRequestJSON](t, admin.call(http.MethodPut, "/api/admin/demo-requests/"+ids[0], map[string]any{"status": "QUALIFIED"}))
	require.Equal(t, "QUALIFIED", got.Status)
	require.Equal(t, "Called; demo on Tuesday", *got.Note)
	got = decode[demoRequestJSON](t, admin.call(http.MethodPut, "/api/admin/demo-requests/"+ids[0], map[string]any{"status": "NEW", "note": ""}))
	require.Equal(t, "NEW", got.Status, "an open request may go back")
	require.Nil(t, got.Note)
	got = decode[demoRequestJSON](t, admin.call(http.MethodPut, "/api/admin/demo-requests/"+ids[0], map[string]any{"status": "CLOSED", "note": "no budget"}))
	require.Equal(t, "CLOSED", got.Status)

	// CLOSED is final.
	before, print := f.demoRows(t)
	for _, st := range []string{"NEW", "CONTACTED", "QUALIFIED", "CLOSED"} {
		rec = admin.call(http.MethodPut, "/api/admin/demo-requests/"+ids[0], map[string]any{"status": st})
		refused(t, rec, http.StatusConflict, "DEMO_REQUEST_CLOSED")
	}
	require.Equal(t, 4, f.demoAudits(t, actionUpdateDemoRequest, "SUCCESS", adminID))
	require.Equal(t, 4, f.demoAudits(t, actionUpdateDemoRequest, "DENIED", adminID))

	// Unknown and malformed ids; bad bodies and queries. Nothing changes.
	for _, id := range []string{"dmr_00000000-0000-7000-8000-000000000000", "nope", "dmr_X", ids[1] + "x"} {
		rec = admin.call(http.MethodPut, "/api/admin/demo-requests/"+id, map[string]any{"status": "CONTACTED"})
		refused(t, rec, http.StatusNotFound, "DEMO_REQUEST_NOT_FOUND")
	}
	for _, body := range []any{
		map[string]any{"status": "DONE"}, map[string]any{}, map[string]any{"status": "CONTACTED", "note": "a\u0007b"},
		map[string]any{"status": "CONTACTED", "note": strings.Repeat("n", 1025)}, map[string]any{"status": "CONTACTED", "email": "x@y.et"},
		map[string]any{"status": 1}, `{"status":"CONTACTED","note":"\ud800"}`,
	} {
		refused(t, admin.hostile(http.MethodPut, "/api/admin/demo-requests/"+ids[1], body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	for _, q := range []string{"?status=DONE", "?cursor=0", "?cursor=abc", "?limit=101", "?limit=0", "?page=2", "?status=NEW&status=CLOSED",
		"?from=yesterday", "?from=2026-11-24T00:00:00Z&to=2026-11-23T00:00:00Z"} {
		refused(t, admin.hostile(http.MethodGet, "/api/admin/demo-requests"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	after, printAfter := f.demoRows(t)
	require.Equal(t, before, after)
	require.Equal(t, print, printAfter)
}

// TestDemoRequestInboxIsThePlatforms: the inbox's routes refuse everyone but a platform admin —
// 401 without a session, 403 PLATFORM_ADMIN_REQUIRED (audited DENIED under the platform) for an
// organization's owner and for a platform operator — and change nothing.
func TestDemoRequestInboxIsThePlatforms(t *testing.T) {
	t.Parallel()
	f := newDemoFixture(t)
	requireReceived(t, f.visitor("198.51.100.60").call(http.MethodPost, "/api/demo-requests", demoForm("lead@example.com")))
	id := f.newestDemoRequest(t)
	owner, su := f.signUp("demo-owner@example.com", "BUSINESS")
	operator := f.operator("demo-operator@example.com")
	operatorID := bizUserID(t, operator)
	before, print := f.demoRows(t)

	for _, c := range []struct {
		who    *apiClient
		userID string
	}{{owner, su.User.ID}, {operator, operatorID}} {
		refused(t, c.who.call(http.MethodGet, "/api/admin/demo-requests", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		refused(t, c.who.call(http.MethodPut, "/api/admin/demo-requests/"+id, map[string]any{"status": "CLOSED"}), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		require.Equal(t, 2, f.demoAudits(t, "AccessRoute", "DENIED", c.userID), "each refusal is audited")
	}
	anon := f.client()
	refused(t, anon.call(http.MethodGet, "/api/admin/demo-requests", nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	refused(t, anon.call(http.MethodPut, "/api/admin/demo-requests/"+id, map[string]any{"status": "CLOSED"}), http.StatusUnauthorized, "UNAUTHENTICATED")
	after, printAfter := f.demoRows(t)
	require.Equal(t, before, after)
	require.Equal(t, print, printAfter)
	require.Zero(t, f.demoAudits(t, actionUpdateDemoRequest, "SUCCESS", ""))
}

// FuzzDemoRequestRoutes: whatever reaches the demo-request routes (any path parameter, query
// and body, from a platform admin, a business owner or nobody) answers 4xx or success, never
// 5xx, and a refused request stores and changes nothing.
func FuzzDemoRequestRoutes(f *testing.F) {
	fx := newDemoFixture(f)
	admin := fx.platformAdmin("fuzz-demo-admin@wagerail.test")
	owner, _ := fx.signUp("fuzz-demo-owner@example.com", "BUSINESS")
	seed := fx.visitor("198.51.100.70").call(http.MethodPost, "/api/demo-requests", demoForm("seed@example.com"))
	require.Equal(f, http.StatusAccepted, seed.Code, seed.Body.String())
	id := fx.newestDemoRequest(f)
	routes := fx.srv.demoRequestRoutes()
	f.Add(uint8(0), uint8(2), "", "", `{"name":"A","email":"a@b.et","company":"C","phone":"+251911234567","employeeCount":5,"message":"hi"}`)
	f.Add(uint8(0), uint8(2), "", "", `{"name":"A","email":"seed@example.com","company":"C"}`)
	f.Add(uint8(0), uint8(2), "", "", `{"name":"\u0000","email":"a@b.et","company":"C"}`)
	f.Add(uint8(0), uint8(2), "", "", "{\"name\":\"\xff\",\"email\":\"a@b.et\",\"company\":\"C\"}")
	f.Add(uint8(0), uint8(2), "", "", `{"name":"A","email":"a@b.et","company":"C","employeeCount":1e400}`)
	f.Add(uint8(0), uint8(2), "", "", `{"name":"A","email":"a@b.et","company":"C","isAdmin":true}`)
	f.Add(uint8(0), uint8(2), "", "", `{"name":"A","email":"a@b.et","company":"C","message":"`+strings.Repeat("m", 1025)+`"}`)
	f.Add(uint8(1), uint8(0), "", "status=NEW&limit=1", "")
	f.Add(uint8(1), uint8(0), "", "from=0000-01-01T00:00:00Z&to=9999-12-31T23:59:59Z&cursor=99999999999999999999", "")
	f.Add(uint8(1), uint8(0), "", "status=%00&cursor=-1&limit=1e2", "")
	f.Add(uint8(1), uint8(1), "", "", "")
	f.Add(uint8(2), uint8(0), id, "", `{"status":"CONTACTED","note":"called"}`)
	f.Add(uint8(2), uint8(0), id, "", `{"status":"DONE"}`)
	f.Add(uint8(2), uint8(0), id, "", `{"status":"CLOSED","note":"\u202e"}`)
	f.Add(uint8(2), uint8(0), "%ff%00", "", `{"status":"NEW"}`)
	f.Add(uint8(2), uint8(1), id, "", `{"status":"CLOSED"}`)
	var n atomic.Uint32
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := r.Path
		if i := strings.IndexByte(path, ':'); i >= 0 {
			path = path[:i] + param
		}
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		// An address of its own each time: the per-IP limit is tested elsewhere, and a spent one
		// would hide the handler behind 429.
		k := n.Add(1)
		req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:40000", k>>16&255, k>>8&255, k&255)
		switch who % 3 {
		case 0:
			req.AddCookie(admin.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		}
		before, print := fx.demoRows(t)
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		what := fmt.Sprintf("%s %q %q %q", r.Method, path, query, body)
		requireNoServerError(t, rec, what)
		if rec.Code >= 400 {
			after, printAfter := fx.demoRows(t)
			require.Equal(t, before, after, "a refused request stored a row: %s", what)
			require.Equal(t, print, printAfter, "a refused request changed a row: %s", what)
		}
	})
}
