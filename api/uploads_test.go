package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/uploads"
)

// Samples of each allowed type: the magic bytes http.DetectContentType knows, then filler.
var (
	uploadsPDF  = append([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), bytes.Repeat([]byte("0 0 m\n"), 300)...)
	uploadsPNG  = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0x07}, 1500)...)
	uploadsJPEG = append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{0x00}, 1500)...)
	uploadsCSV  = []byte("firstName,lastName,city\nAbebe,Kebede,አዲስ አበባ\nTsehay,\"Bekele, Jr\",Adama\n")
)

// uploadsFixture is the API of authFixture with an upload directory (root) and, beside it, a
// directory the uploads must never reach (outside, holding a secret file).
type uploadsFixture struct {
	*authFixture
	root, outside string
	store         *uploads.FS
}

const uploadsSecret = "the file no upload may reach"

func newUploadsFixture(t testing.TB, maxUpload int64) *uploadsFixture {
	t.Helper()
	return newUploadsFixtureOn(t, testkit.NewDB(t), func(d *Deps) { d.MaxUploadBytes = maxUpload })
}

// newUploadsFixtureOn is newUploadsFixture on database db, with more dependencies set by extra
// (the EWA stack adds Temporal, the ledger and the gateway).
func newUploadsFixtureOn(t testing.TB, db *testkit.DB, extra func(*Deps)) *uploadsFixture {
	t.Helper()
	base := t.TempDir()
	u := &uploadsFixture{root: filepath.Join(base, "uploads"), outside: filepath.Join(base, "outside")}
	var err error
	u.store, err = uploads.NewFS(u.root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = u.store.Close() })
	require.NoError(t, os.Mkdir(u.outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(u.outside, "secret"), []byte(uploadsSecret), 0o600))

	f := &authFixture{t: t, d: db, inbox: &notify.Memory{}, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	deps := Deps{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:       f.d.App,
		Platform: f.d.Platform(t),
		Registry: prometheus.NewRegistry(),
		Mailer:   f.inbox,
		Texter:   f.inbox,
		Now:      f.now,
		Uploads:  u.store,
	}
	extra(&deps)
	f.srv = New(deps)
	u.authFixture = f
	return u
}

type uploadsPart struct {
	name, fileName, contentType string
	data                        []byte
}

func uploadsFile(fileName, contentType string, data []byte) uploadsPart {
	return uploadsPart{name: "file", fileName: fileName, contentType: contentType, data: data}
}

// uploadsMultipart encodes parts as multipart/form-data and returns the body and its Content-Type.
func uploadsMultipart(parts ...uploadsPart) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + quote(p.name) + `"`
		if p.fileName != "" {
			disp += `; filename="` + quote(p.fileName) + `"`
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, _ := w.CreatePart(h)
		_, _ = pw.Write(p.data)
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

// upload sends one well-formed upload through the contract client.
func uploadsSend(a *apiClient, query string, p uploadsPart) *httptest.ResponseRecorder {
	a.t.Helper()
	body, ct := uploadsMultipart(p)
	return a.call(http.MethodPost, "/api/uploads"+query, body, "Content-Type", ct)
}

// uploadsRaw sends a request the contract router cannot even match (a traversal path, a chunked
// body); the answer must still be the error envelope.
func uploadsRaw(t testing.TB, a *apiClient, method, target string, body io.Reader, chunked bool, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1:8080"+target, body)
	require.NoError(t, err)
	if chunked {
		req.ContentLength = -1
	}
	req.RemoteAddr = a.ip + ":40000"
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	if rec.Code >= 400 {
		require.NotEmpty(t, errCode(rec), "%s %q: %d %s", method, target, rec.Code, rec.Body.String())
	}
	return rec
}

func uploadsSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// uploadsRows counts tenant's app.uploads rows.
func (u *uploadsFixture) uploadsRows(tenant string) int {
	u.t.Helper()
	var n int
	require.NoError(u.t, db.InTenantTx(context.Background(), u.d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.uploads`).Scan(&n)
	}))
	return n
}

// uploadsContained checks the directory layout: beside the upload root only the untouched
// secret, and under the root only <tenant>/<key> files of the given tenants (no temporary file).
func (u *uploadsFixture) uploadsContained(t testing.TB, tenants ...string) int {
	t.Helper()
	base := filepath.Dir(u.root)
	top, err := os.ReadDir(base)
	require.NoError(t, err)
	var names []string
	for _, e := range top {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"uploads", "outside"}, names, "nothing was written beside the upload root")
	out, err := os.ReadDir(u.outside)
	require.NoError(t, err)
	require.Len(t, out, 1)
	b, err := os.ReadFile(filepath.Join(u.outside, "secret"))
	require.NoError(t, err)
	require.Equal(t, uploadsSecret, string(b))

	files := 0
	require.NoError(t, filepath.WalkDir(u.root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(u.root, p)
		parts := strings.Split(rel, string(filepath.Separator))
		switch {
		case rel == ".":
		case d.IsDir():
			require.Len(t, parts, 1, rel)
			require.Contains(t, tenants, parts[0], "a directory for an unknown tenant: %q", rel)
		default:
			require.Len(t, parts, 2, rel)
			require.Contains(t, tenants, parts[0], rel)
			require.True(t, uploads.ValidKey(parts[1]), "not an object: %q", rel)
			require.True(t, d.Type().IsRegular(), rel)
			files++
		}
		return nil
	}))
	return files
}

// TestUploadsRoundTrip: a member uploads each allowed type; the answer names the stored bytes
// (their SHA-256 and size), the file sits at root/<tenant>/<key> and any member reads it back as
// an attachment of its type, with nosniff.
func TestUploadsRoundTrip(t *testing.T) {
	t.Parallel()
	u := newUploadsFixture(t, 0)
	owner, a := u.signUp("up-rt-owner@example.com", "BUSINESS")
	tenant := a.Organization.ID
	u.addMember(tenant, "up-rt-member@example.com", orgs.PlainMember)
	member := u.signIn("up-rt-member@example.com")

	for _, tc := range []struct {
		fileName, declared, served, disposition string
		data                                    []byte
	}{
		{"payslip.pdf", "application/pdf", "application/pdf", `attachment; filename=payslip.pdf`, uploadsPDF},
		{"photo.png", "image/png", "image/png", `attachment; filename=photo.png`, uploadsPNG},
		{"id card.jpg", "image/jpeg", "image/jpeg", `attachment; filename="id card.jpg"`, uploadsJPEG},
		{"ሰራተኞች.csv", "text/csv; charset=utf-8", "text/csv; charset=utf-8", `attachment; filename*=utf-8''%E1%88%B0%E1%88%AB%E1%89%B0%E1%8A%9E%E1%89%BD.csv`, uploadsCSV},
		{`..\..\"evil".pdf`, "application/pdf", "application/pdf", `attachment; filename=_evil_.pdf`, uploadsPDF},
	} {
		rec := uploadsSend(member, "", uploadsFile(tc.fileName, tc.declared, tc.data))
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		res := decode[uploadJSON](t, rec)
		require.Equal(t, tenant, res.TenantID)
		require.True(t, uploads.ValidKey(res.Key), res.Key)
		require.Equal(t, uploadsSum(tc.data), res.SHA256, "the recorded hash is the SHA-256 of the bytes")
		require.Equal(t, int64(len(tc.data)), res.SizeBytes)
		stored, err := os.ReadFile(filepath.Join(u.root, tenant, res.Key))
		require.NoError(t, err)
		require.Equal(t, tc.data, stored)

		for _, reader := range []*apiClient{owner, member} {
			rec = reader.call(http.MethodGet, "/api/uploads/"+tenant+"/"+res.Key, nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Equal(t, tc.data, rec.Body.Bytes())
			require.Equal(t, tc.served, rec.Header().Get("Content-Type"))
			require.Equal(t, tc.disposition, rec.Header().Get("Content-Disposition"))
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			require.Equal(t, "private, no-store", rec.Header().Get("Cache-Control"))
		}
	}
	require.Equal(t, 5, u.uploadsRows(tenant))
	require.Equal(t, 5, u.orgAuthAudits(tenant, uploadAction, "SUCCESS"))
	require.Equal(t, 5, u.uploadsContained(t, tenant))
}

// TestUploadsAccess: the route × caller matrix of both routes, the platform path with
// ?tenantId=, and another tenant's key (404 even for a platform admin asking under the wrong
// organization).
func TestUploadsAccess(t *testing.T) {
	t.Parallel()
	u := newUploadsFixture(t, 0)
	owner, a := u.signUp("up-ac-owner-a@example.com", "BUSINESS")
	otherOwner, b := u.signUp("up-ac-owner-b@example.com", "BUSINESS")
	tenantA, tenantB := a.Organization.ID, b.Organization.ID
	u.addMember(tenantA, "up-ac-admin@example.com", orgs.Admin)
	u.addMember(tenantA, "up-ac-member@example.com", orgs.PlainMember)
	u.addMember(tenantA, "up-ac-banned@example.com", orgs.PlainMember)
	admin, member := u.signIn("up-ac-admin@example.com"), u.signIn("up-ac-member@example.com")
	banned := u.signIn("up-ac-banned@example.com") // signed in while active, then banned
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, u.d.App, tenantA, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.members SET status = 'BANNED' WHERE user_id = (SELECT id FROM app.users WHERE email = 'up-ac-banned@example.com')`)
		return err
	}))
	u.srv.access.InvalidateOrganization(tenantA)
	platform := u.platformAdmin("up-ac-platform@wagerail.test")
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	_, err = identity.CreateUser(ctx, u.d.App, identity.NewUser{Email: "up-ac-loner@example.com", Name: "No Organization", PasswordHash: hash})
	require.NoError(t, err)
	loner := u.signIn("up-ac-loner@example.com")
	anonymous := u.client()

	file := uploadsFile("a.pdf", "application/pdf", uploadsPDF)
	keyOf := func(rec *httptest.ResponseRecorder) string {
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[uploadJSON](t, rec).Key
	}
	keyA, keyB := keyOf(uploadsSend(owner, "", file)), keyOf(uploadsSend(otherOwner, "", file))
	keyP := keyOf(uploadsSend(platform, "?tenantId="+tenantA, file))

	type want struct {
		status int
		code   string // error code, or the tenant of a 201
	}
	posts := []struct {
		who   string
		a     *apiClient
		query string
		want  want
	}{
		{"anonymous", anonymous, "", want{401, "UNAUTHENTICATED"}},
		{"anonymous", anonymous, "?tenantId=" + tenantA, want{401, "UNAUTHENTICATED"}},
		{"member", member, "", want{201, tenantA}},
		{"admin", admin, "", want{201, tenantA}},
		{"owner", owner, "", want{201, tenantA}},
		{"other-tenant owner", otherOwner, "", want{201, tenantB}},
		{"member", member, "?tenantId=" + tenantA, want{403, "PLATFORM_ADMIN_REQUIRED"}},
		{"owner", owner, "?tenantId=" + tenantA, want{403, "PLATFORM_ADMIN_REQUIRED"}},
		{"other-tenant owner", otherOwner, "?tenantId=" + tenantA, want{403, "PLATFORM_ADMIN_REQUIRED"}},
		{"banned member", banned, "", want{403, "NOT_A_MEMBER"}},
		{"user without organization", loner, "", want{403, "TENANT_CONTEXT_MISSING"}},
		{"user without organization", loner, "?tenantId=" + tenantA, want{403, "PLATFORM_ADMIN_REQUIRED"}},
		{"platform", platform, "", want{403, "TENANT_CONTEXT_MISSING"}},
		{"platform", platform, "?tenantId=" + tenantA, want{201, tenantA}},
		{"platform", platform, "?tenantId=" + tenantB, want{201, tenantB}},
		{"platform", platform, "?tenantId=org_does-not-exist", want{404, "TENANT_NOT_FOUND"}},
	}
	for _, tc := range posts {
		rec := uploadsSend(tc.a, tc.query, file)
		require.Equal(t, tc.want.status, rec.Code, "POST %s as %s: %s", tc.query, tc.who, rec.Body.String())
		if rec.Code == http.StatusCreated {
			require.Equal(t, tc.want.code, decode[uploadJSON](t, rec).TenantID, "as %s", tc.who)
		} else {
			require.Equal(t, tc.want.code, errCode(rec), "POST %s as %s", tc.query, tc.who)
		}
	}

	gets := []struct {
		who         string
		a           *apiClient
		tenant, key string
		status      int
		code        string
	}{
		{"anonymous", anonymous, tenantA, keyA, 401, "UNAUTHENTICATED"},
		{"member", member, tenantA, keyA, 200, ""},
		{"member", member, tenantA, keyP, 200, ""},
		{"admin", admin, tenantA, keyA, 200, ""},
		{"owner", owner, tenantA, keyA, 200, ""},
		{"owner", owner, tenantA, keyB, 404, "UPLOAD_NOT_FOUND"},
		{"owner", owner, tenantB, keyB, 403, "NOT_A_MEMBER"},
		{"other-tenant owner", otherOwner, tenantA, keyA, 403, "NOT_A_MEMBER"},
		{"other-tenant owner", otherOwner, tenantB, keyA, 404, "UPLOAD_NOT_FOUND"},
		{"other-tenant owner", otherOwner, tenantB, keyB, 200, ""},
		{"banned member", banned, tenantA, keyA, 403, "NOT_A_MEMBER"},
		{"user without organization", loner, tenantA, keyA, 403, "NOT_A_MEMBER"},
		{"platform", platform, tenantA, keyA, 200, ""},
		{"platform", platform, tenantB, keyB, 200, ""},
		{"platform", platform, tenantB, keyA, 404, "UPLOAD_NOT_FOUND"},
		{"platform", platform, "org_does-not-exist", keyA, 404, "UPLOAD_NOT_FOUND"},
		{"owner", owner, tenantA, uploads.NewKey(), 404, "UPLOAD_NOT_FOUND"},
	}
	for _, tc := range gets {
		rec := tc.a.call(http.MethodGet, "/api/uploads/"+tc.tenant+"/"+tc.key, nil)
		require.Equal(t, tc.status, rec.Code, "GET as %s: %s", tc.who, rec.Body.String())
		if tc.status == http.StatusOK {
			require.Equal(t, uploadsPDF, rec.Body.Bytes())
		} else {
			require.Equal(t, tc.code, errCode(rec), "GET as %s", tc.who)
			require.NotContains(t, rec.Body.String(), "%PDF")
		}
	}

	// Every refusal on the platform path is audited: PLATFORM_ADMIN_REQUIRED by the pipeline's
	// denial (under the platform tenant "*"), the unknown tenant as a DENIED UploadFile.
	require.Equal(t, 4, u.orgAuthAudits("*", "AccessRoute", "DENIED"))
	require.Equal(t, 1, u.orgAuthAudits("*", uploadAction, "DENIED"))
	require.Equal(t, 4, u.orgAuthAudits(tenantA, "AccessRoute", "DENIED"), "NOT_A_MEMBER: the banned member's upload and three reads")
	require.Equal(t, 1, u.orgAuthAudits(tenantB, "AccessRoute", "DENIED"))
	// A: keyA, keyP, member, admin, owner, platform; B: keyB, other owner, platform.
	require.Equal(t, 6, u.uploadsRows(tenantA))
	require.Equal(t, 3, u.uploadsRows(tenantB))
	require.Equal(t, 9, u.uploadsContained(t, tenantA, tenantB))
}

// TestUploadsRefusals: every error code of the upload route, each refusal leaving no file and no
// row; the size and type refusals are audited DENIED.
func TestUploadsRefusals(t *testing.T) {
	t.Parallel()
	const limit = 4096
	u := newUploadsFixture(t, limit)
	owner, a := u.signUp("up-rf-owner@example.com", "BUSINESS")
	tenant := a.Organization.ID
	platform := u.platformAdmin("up-rf-platform@wagerail.test")

	pdfOf := func(n int) []byte { return append(uploadsPDF[:16:16], bytes.Repeat([]byte("x"), n-16)...) }
	rec := uploadsSend(owner, "", uploadsFile("limit.pdf", "application/pdf", pdfOf(limit)))
	require.Equal(t, http.StatusCreated, rec.Code, "exactly at the limit: %s", rec.Body.String())

	csvPast512 := func(tail string) []byte { return append(bytes.Repeat([]byte("a,b,c\n"), 100), tail...) }
	multi := func(parts ...uploadsPart) ([]byte, string) { return uploadsMultipart(parts...) }
	ok := uploadsFile("a.pdf", "application/pdf", uploadsPDF)
	type tc struct {
		name    string
		a       *apiClient
		query   string
		body    []byte
		ct      string
		valid   bool // the document allows the request (the contract client checks it)
		status  int
		code    string
		audited bool
	}
	var cases []tc
	add := func(name string, valid bool, status int, code string, audited bool, p ...uploadsPart) {
		body, ct := multi(p...)
		cases = append(cases, tc{name: name, a: owner, body: body, ct: ct, valid: valid, status: status, code: code, audited: audited})
	}
	add("a PNG declared as a PDF", true, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.pdf", "application/pdf", uploadsPNG))
	add("a PDF declared as a PNG", true, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.png", "image/png", uploadsPDF))
	add("a PDF declared as a JPEG", true, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.jpg", "image/jpeg", uploadsPDF))
	add("HTML declared as CSV", true, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.csv", "text/csv", []byte("<html><script>alert(1)</script></html>\n")))
	add("a PDF declared as CSV", false, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.csv", "text/csv", uploadsPDF))
	add("a CSV with NUL past the sniffed bytes", false, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.csv", "text/csv", csvPast512("x\x00y\n")))
	add("a CSV with invalid UTF-8 past the sniffed bytes", false, 415, "CONTENT_TYPE_MISMATCH", true, uploadsFile("x.csv", "text/csv", csvPast512("caf\xe9\n")))
	add("a Latin-1 CSV", false, 415, "UNSUPPORTED_MEDIA_TYPE", true, uploadsFile("x.csv", "text/csv; charset=iso-8859-1", uploadsCSV))
	add("HTML", false, 415, "UNSUPPORTED_MEDIA_TYPE", true, uploadsFile("x.html", "text/html", []byte("<html></html>")))
	add("SVG", false, 415, "UNSUPPORTED_MEDIA_TYPE", true, uploadsFile("x.svg", "image/svg+xml", []byte("<svg/>")))
	add("octet-stream", false, 415, "UNSUPPORTED_MEDIA_TYPE", true, uploadsFile("x.bin", "application/octet-stream", uploadsPDF))
	add("no Content-Type on the part", false, 415, "UNSUPPORTED_MEDIA_TYPE", true, uploadsFile("x.pdf", "", uploadsPDF))
	add("one byte over the limit", true, 413, "UPLOAD_TOO_LARGE", true, uploadsFile("big.pdf", "application/pdf", pdfOf(limit+1)))
	add("far over the limit", true, 413, "UPLOAD_TOO_LARGE", true, uploadsFile("big.pdf", "application/pdf", pdfOf(60<<10)))
	add("an empty file", true, 400, "INVALID_REQUEST", false, uploadsFile("empty.pdf", "application/pdf", nil))
	add("no part", false, 400, "INVALID_REQUEST", false)
	add("a part not named file", false, 400, "INVALID_REQUEST", false, uploadsPart{name: "document", fileName: "a.pdf", contentType: "application/pdf", data: uploadsPDF})
	add("a second part after the file", false, 400, "INVALID_REQUEST", false, ok, uploadsPart{name: "note", data: []byte("hi")})
	add("a second file", false, 400, "INVALID_REQUEST", false, ok, ok)
	add("a form value before the file", false, 400, "INVALID_REQUEST", false, uploadsPart{name: "tenantId", data: []byte(tenant)}, ok)

	body, ct := multi(ok)
	cut := body[:len(body)-10] // no closing boundary
	cases = append(cases,
		tc{name: "a body cut before its closing boundary", a: owner, body: cut, ct: ct, status: 400, code: "INVALID_REQUEST"},
		tc{name: "no boundary", a: owner, body: body, ct: "multipart/form-data", status: 400, code: "INVALID_REQUEST"},
		tc{name: "the wrong boundary", a: owner, body: body, ct: "multipart/form-data; boundary=nope", status: 400, code: "INVALID_REQUEST"},
		tc{name: "JSON", a: owner, body: []byte(`{"file":"JVBERi0="}`), ct: "application/json", status: 415, code: "UNSUPPORTED_MEDIA_TYPE", audited: true},
		tc{name: "no body", a: owner, ct: ct, status: 400, code: "INVALID_REQUEST"},
		tc{name: "an empty tenantId", a: platform, query: "?tenantId=", body: body, ct: ct, status: 400, code: "INVALID_REQUEST"},
		// The document says tenantId is an identifier, so this one is bad on purpose.
		tc{name: "a tenantId that is no identifier", a: platform, query: "?tenantId=" + url.QueryEscape("org a"), body: body, ct: ct, status: 400, code: "INVALID_REQUEST"},
		tc{name: "two tenantIds", a: platform, query: "?tenantId=" + tenant + "&tenantId=" + tenant, body: body, ct: ct, status: 400, code: "INVALID_REQUEST"},
	)
	denied := 0
	for _, c := range cases {
		var rec *httptest.ResponseRecorder
		if c.valid {
			rec = c.a.call(http.MethodPost, "/api/uploads"+c.query, c.body, "Content-Type", c.ct)
		} else {
			rec = c.a.hostile(http.MethodPost, "/api/uploads"+c.query, c.body, "Content-Type", c.ct)
		}
		require.Equal(t, c.status, rec.Code, "%s: %s", c.name, rec.Body.String())
		require.Equal(t, c.code, errCode(rec), c.name)
		if c.audited {
			denied++
		}
	}

	// Bodies over the route's own limit (the file limit plus 64 KiB of framing): a declared length
	// is refused before anything is read; a chunked body when the reader passes the limit.
	huge := append([]byte(strings.Repeat("a preamble line\r\n", 6<<10)), body...)
	rec = uploadsRaw(t, owner, http.MethodPost, "/api/uploads", bytes.NewReader(huge), false, "Content-Type", ct)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	require.Equal(t, "PAYLOAD_TOO_LARGE", errCode(rec))
	rec = uploadsRaw(t, owner, http.MethodPost, "/api/uploads", io.MultiReader(bytes.NewReader(huge)), true, "Content-Type", ct)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	require.Equal(t, "UPLOAD_TOO_LARGE", errCode(rec))
	denied++

	require.Equal(t, denied, u.orgAuthAudits(tenant, uploadAction, "DENIED"))
	require.Equal(t, 1, u.orgAuthAudits(tenant, uploadAction, "SUCCESS"))
	require.Equal(t, 1, u.uploadsRows(tenant), "no refusal left a row")
	require.Equal(t, 1, u.uploadsContained(t, tenant), "no refusal left a file")

	// Without an upload directory both routes answer 503.
	f := newAuthFixture(t)
	bare, _ := f.signUp("up-rf-bare@example.com", "BUSINESS")
	rec = uploadsSend(bare, "", ok)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "NOT_CONFIGURED", errCode(rec))
}

// TestUploadsPathTraversal: no tenant id or key from a path, a query or a file name ever names a
// file outside the upload root, or one in it that is not an upload of the caller's organization.
func TestUploadsPathTraversal(t *testing.T) {
	t.Parallel()
	u := newUploadsFixture(t, 0)
	owner, a := u.signUp("up-pt-owner@example.com", "BUSINESS")
	tenant := a.Organization.ID
	platform := u.platformAdmin("up-pt-platform@wagerail.test")

	rec := uploadsSend(owner, "", uploadsFile("../../outside/evil.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	res := decode[uploadJSON](t, rec)
	require.Equal(t, "evil.pdf", res.FileName, "the file name is a name, never a path")
	key := res.Key

	targets := []string{
		"/api/uploads/../outside/secret",
		"/api/uploads/" + tenant + "/..",
		"/api/uploads/" + tenant + "/%2e%2e",
		"/api/uploads/" + tenant + "/.%2e",
		"/api/uploads/%2e%2e/outside",
		"/api/uploads/%2e%2e/secret",
		"/api/uploads/%2e%2e/%2e%2e",
		"/api/uploads/" + tenant + "/%2e%2e%2f%2e%2e%2foutside%2fsecret",
		"/api/uploads/" + tenant + "/..%5c..%5coutside%5csecret",
		"/api/uploads/%2e%2e%2foutside/secret",
		"/api/uploads/" + tenant + "/%2Fetc%2Fpasswd",
		"/api/uploads/%2Fetc/passwd",
		"/api/uploads//etc/passwd",
		"/api/uploads/" + tenant + "/" + key + "%00",
		"/api/uploads/" + tenant + "%00/" + key,
		"/api/uploads/" + tenant + "/%00",
		"/api/uploads/" + tenant + "/" + key + "/..",
		"/api/uploads/" + tenant + "/" + key + "%2f..",
		"/api/uploads/" + tenant + "/" + key + ".tmp",
		"/api/uploads/" + tenant + "/." + key,
		"/api/uploads/" + tenant + "/" + strings.ToUpper(key),
		"/api/uploads/.." + "/" + key,
		"/api/uploads/." + "/" + key,
		"/api/uploads/outside/secret",
		"/api/uploads/" + tenant + "/" + url.PathEscape(filepath.Join(u.outside, "secret")),
	}
	for _, target := range targets {
		for _, who := range []*apiClient{owner, platform} {
			rec := uploadsRaw(t, who, http.MethodGet, target, nil, false)
			require.GreaterOrEqual(t, rec.Code, 400, "%s: %s", target, rec.Body.String())
			require.Less(t, rec.Code, 500, "%s: %s", target, rec.Body.String())
			require.NotContains(t, rec.Body.String(), uploadsSecret)
			require.NotContains(t, rec.Body.String(), "%PDF")
		}
	}

	body, ct := uploadsMultipart(uploadsFile("a.pdf", "application/pdf", uploadsPDF))
	for _, id := range []string{"..", "%2e%2e", ".", "/etc", "../outside", "..%2foutside", "%2Fetc", "%00", tenant + "%00", tenant + "%2f..",
		"outside", "uploads", url.QueryEscape(filepath.Join(u.outside, "x"))} {
		rec := uploadsRaw(t, platform, http.MethodPost, "/api/uploads?tenantId="+id, bytes.NewReader(body), false, "Content-Type", ct)
		require.GreaterOrEqual(t, rec.Code, 400, "tenantId %s: %s", id, rec.Body.String())
		require.Less(t, rec.Code, 500, "tenantId %s: %s", id, rec.Body.String())
	}
	require.Equal(t, 1, u.uploadsContained(t, tenant))
}

// TestUploadsTamperedFileIsNeverServed: the recorded hash is what KYC binds to; a stored file
// whose bytes changed fails uploads.VerifyContent, and the download route refuses to serve it.
func TestUploadsTamperedFileIsNeverServed(t *testing.T) {
	t.Parallel()
	u := newUploadsFixture(t, 0)
	owner, a := u.signUp("up-tf-owner@example.com", "BUSINESS")
	tenant := a.Organization.ID
	rec := uploadsSend(owner, "", uploadsFile("id.jpg", "image/jpeg", uploadsJPEG))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	res := decode[uploadJSON](t, rec)

	ctx := tenancy.WithTenant(context.Background(), tenant)
	var obj uploads.Object
	require.NoError(t, tenancy.InTx(ctx, u.d.App, func(tx pgx.Tx) error {
		var err error
		obj, err = uploads.Lookup(ctx, tx, tenant, res.Key)
		return err
	}))
	require.Equal(t, uploadsSum(uploadsJPEG), obj.SHA256)
	require.Equal(t, "image/jpeg", obj.SniffedType)
	require.NoError(t, uploads.VerifyContent(ctx, u.store, obj))

	path := filepath.Join(u.root, tenant, res.Key)
	tampered := bytes.Clone(uploadsJPEG)
	tampered[100] ^= 0xff
	require.NoError(t, os.WriteFile(path, tampered, 0o600))
	require.ErrorIs(t, uploads.VerifyContent(ctx, u.store, obj), uploads.ErrHashMismatch)
	rec = owner.call(http.MethodGet, "/api/uploads/"+tenant+"/"+res.Key, nil)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.NotContains(t, rec.Body.String(), "JFIF")

	require.NoError(t, os.Remove(path))
	require.ErrorIs(t, uploads.VerifyContent(ctx, u.store, obj), uploads.ErrNotFound)
	rec = owner.call(http.MethodGet, "/api/uploads/"+tenant+"/"+res.Key, nil)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
}

// FuzzUploads: whatever the file, its declared type and name, the tenantId, the employeeId and
// the path, the upload routes answer 4xx or success, never 5xx.
func FuzzUploads(f *testing.F) {
	u := newUploadsFixture(f, 4096)
	owner, a := u.signUp("up-fz-owner@example.com", "BUSINESS")
	tenant := a.Organization.ID
	platform := u.platformAdmin("up-fz-platform@wagerail.test")
	key := decode[uploadJSON](f, uploadsSend(owner, "", uploadsFile("a.pdf", "application/pdf", uploadsPDF))).Key

	f.Add(uint8(0), "application/pdf", "a.pdf", uploadsPDF, "", "")
	f.Add(uint8(0), "application/pdf", "../../x.pdf", uploadsPNG, "", "")
	f.Add(uint8(0), "text/csv", "a.csv", []byte("a,b\n\xff"), "", "")
	f.Add(uint8(0), "image/png; charset=x", "a\x00.png", uploadsPNG, "", "")
	f.Add(uint8(1), "application/pdf", "a.pdf", uploadsPDF, tenant, "")
	f.Add(uint8(1), "application/pdf", "a.pdf", uploadsPDF, "..", "")
	f.Add(uint8(1), "application/pdf", "a.pdf", uploadsPDF, "%00", "")
	f.Add(uint8(17), "image/png", "p.png", uploadsPNG, "emp_nobody", "")
	f.Add(uint8(17), "image/png", "p.png", uploadsPNG, "\x00\u200b", "")
	f.Add(uint8(49), "image/png", "p.png", uploadsPNG, tenant, "")
	f.Add(uint8(2), "", "", []byte("--x\r\nContent-Disposition: form-data; name=file\r\n\r\n%PDF-\r\n--x--"), "", "")
	f.Add(uint8(2), "", "", []byte("--x\r\n\r\n"), "", "")
	f.Add(uint8(3), "", "", []byte(nil), tenant, key)
	f.Add(uint8(3), "", "", []byte(nil), "..", "..")
	f.Add(uint8(3), "", "", []byte(nil), tenant, "%2e%2e")
	f.Add(uint8(3), "", "", []byte(nil), tenant+"\x00", key)
	f.Add(uint8(7), "", "", []byte(nil), tenant, key)
	f.Fuzz(func(t *testing.T, route uint8, declared, fileName string, data []byte, tenantID, k string) {
		who := owner
		if route&4 != 0 {
			who = platform
		}
		var rec *httptest.ResponseRecorder
		switch route % 4 {
		case 0, 1: // an upload, for the active organization, (1) ?tenantId= or (1 and 16) ?employeeId=
			query := ""
			switch {
			case route%4 == 1 && route&16 != 0:
				query = "?employeeId=" + url.QueryEscape(tenantID)
				if route&32 != 0 {
					query += "&tenantId=" + url.QueryEscape(tenantID)
				}
			case route%4 == 1:
				who, query = platform, "?tenantId="+url.QueryEscape(tenantID)
			}
			body, ct := uploadsMultipart(uploadsFile(fileName, declared, data))
			rec = uploadsRaw(t, who, http.MethodPost, "/api/uploads"+query, bytes.NewReader(body), route&8 != 0, "Content-Type", ct)
		case 2: // a raw multipart body
			rec = uploadsRaw(t, who, http.MethodPost, "/api/uploads", bytes.NewReader(data), route&8 != 0,
				"Content-Type", "multipart/form-data; boundary=x")
		case 3: // a download, by raw or escaped segments
			target := "/api/uploads/" + tenantID + "/" + k
			if route&8 != 0 {
				target = "/api/uploads/" + url.PathEscape(tenantID) + "/" + url.PathEscape(k)
			}
			if _, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+target, nil); err != nil {
				return // not a URL a client could send
			}
			rec = uploadsRaw(t, who, http.MethodGet, target, nil, false)
		}
		require.Less(t, rec.Code, 500, "%s", rec.Body.String())
		if rec.Code == http.StatusOK {
			require.NotContains(t, rec.Body.String(), uploadsSecret)
		}
	})
}
