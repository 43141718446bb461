package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// hardeningFixture is a callback server on a fresh database, with a superuser pool that sees every
// tenant's rows, so "nothing stored" means nothing at all, whatever tenant the body named.
type hardeningFixture struct {
	*webhookFixture
	super *pgxpool.Pool
	seq   atomic.Int64
}

func newHardeningFixture(t testing.TB, maxBody int64) *hardeningFixture {
	d := testkit.NewDB(t)
	f := &hardeningFixture{webhookFixture: &webhookFixture{d: d, now: time.Date(2026, 11, 21, 12, 0, 0, 700_000_000, time.UTC)}}
	f.srv = New(Deps{
		Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:             d.App,
		Platform:       d.Platform(t),
		Registry:       prometheus.NewRegistry(),
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret},
		Now:            func() time.Time { return f.now },
		MaxBodyBytes:   maxBody,
	})
	super, err := pgxpool.New(context.Background(), testkit.PG(t).SuperDSN(d.Name))
	require.NoError(t, err)
	t.Cleanup(super.Close)
	f.super = super
	return f
}

// rows counts stored callbacks and their receipt audit rows across all tenants (no transfer is
// recorded here, so every stored callback is UNMATCHED and audited on the platform's trail).
func (f *hardeningFixture) rows(t testing.TB) (events, audits int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, f.super.QueryRow(ctx, `SELECT count(*) FROM app.bank_webhook_events`).Scan(&events))
	require.NoError(t, f.super.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = 'BankWebhookReceived'`).Scan(&audits))
	return events, audits
}

func (f *hardeningFixture) counted() float64 {
	var n float64
	for _, r := range []string{resultAccepted, resultUnmatched, resultDuplicate, resultConflict, resultSignatureRejected, resultReplay, resultInvalid, resultError} {
		n += f.count(r)
	}
	return n
}

// callback is one request to the callback route: headers are signed over the body unless a test
// overrides them.
type callback struct {
	partner  string
	body     []byte
	ts       string
	nonce    string
	sig      string // "" means the correct signature
	chunked  bool   // no Content-Length: the body limit is met while reading
	noHeader []string
}

func (f *hardeningFixture) nonce() string { return "nonce-" + strconv.FormatInt(f.seq.Add(1), 10) }

func (f *hardeningFixture) send(t testing.TB, cb callback) *httptest.ResponseRecorder {
	t.Helper()
	if cb.partner == "" {
		cb.partner = "sandbox"
	}
	if cb.ts == "" {
		cb.ts = strconv.FormatInt(f.now.Unix(), 10)
	}
	if cb.nonce == "" {
		cb.nonce = f.nonce()
	}
	if cb.sig == "" {
		cb.sig = callbacksig.Sign(sandboxSecret, cb.ts, cb.nonce, cb.body)
	}
	var body io.Reader = bytes.NewReader(cb.body)
	if cb.chunked {
		body = io.MultiReader(bytes.NewReader(cb.body))
	}
	req := httptest.NewRequest(http.MethodPost, "/api/integration/bank-callback/"+cb.partner, body)
	req.Header.Set("Content-Type", "application/json")
	if cb.chunked {
		req.ContentLength = -1
	}
	req.Header[http.CanonicalHeaderKey(callbacksig.HeaderTimestamp)] = []string{cb.ts}
	req.Header[http.CanonicalHeaderKey(callbacksig.HeaderNonce)] = []string{cb.nonce}
	req.Header[http.CanonicalHeaderKey(callbacksig.HeaderSignature)] = []string{cb.sig}
	for _, h := range cb.noHeader {
		req.Header.Del(h)
	}
	// A hostile probe: the request is the point, the answer must still be one the document names.
	return newAPIClient(t, f.srv).hostileRequest(req)
}

// fields is a valid callback as ordered raw JSON members; probes replace one member's raw text, so
// a probe can carry bytes json.Marshal would have escaped or repaired.
type fields [][2]string

func validFields(eventID string) fields {
	return fields{
		{"eventId", strconv.Quote(eventID)},
		{"tenant_id", `"tenant-a"`},
		{"domain", `"EWA"`},
		{"reference", strconv.Quote("ref-" + eventID)},
		{"transferId", `"3f2b8c1e-8d7a-4c1e-9a55-0f1e2d3c4b5a"`},
		{"status", `"SETTLED"`},
		{"amountSantim", `150000`},
		{"occurredAt", `"2026-11-21T12:00:00.123456789Z"`},
	}
}

func (fs fields) with(name, raw string) fields {
	out := make(fields, 0, len(fs)+1)
	found := false
	for _, kv := range fs {
		if kv[0] == name {
			kv[1], found = raw, true
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, [2]string{name, raw})
	}
	return out
}

func (fs fields) without(name string) fields {
	var out fields
	for _, kv := range fs {
		if kv[0] != name {
			out = append(out, kv)
		}
	}
	return out
}

// str puts v between quotes verbatim: no escaping, so raw control bytes and invalid UTF-8 stay.
func str(v string) string { return `"` + v + `"` }

func (fs fields) json() []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, kv := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + kv[0] + `":` + kv[1])
	}
	b.WriteByte('}')
	return []byte(b.String())
}

type probe struct {
	class  string
	name   string
	cb     callback
	status int
	code   string // "" for 2xx
}

// documentedStatuses are the statuses openapi.yaml lists for the callback route.
func documentedStatuses(t testing.TB) map[int]bool {
	doc, err := OpenAPIDocument()
	require.NoError(t, err)
	op := doc["paths"].(map[string]any)["/api/integration/bank-callback/{partner}"].(map[string]any)["post"].(map[string]any)
	out := map[int]bool{}
	for k := range op["responses"].(map[string]any) {
		n, err := strconv.Atoi(k)
		require.NoError(t, err)
		out[n] = true
	}
	return out
}

// hostileProbes are correctly signed (unless the class is about the signature's own headers), so
// each one reaches the check it aims at.
func hostileProbes(f *hardeningFixture) []probe {
	var ps []probe
	add := func(class, name string, cb callback, status int, code string) {
		ps = append(ps, probe{class, name, cb, status, code})
	}
	ev := func() string { return "ev-" + strconv.FormatInt(f.seq.Add(1), 10) }
	refuse := func(class, name string, body []byte) { add(class, name, callback{body: body}, 400, "INVALID_PAYLOAD") }
	accept := func(class, name string, body []byte) { add(class, name, callback{body: body}, 200, "") }

	// Control characters, escaped (valid JSON that decodes to the character) and raw (not JSON).
	controls := map[string]string{
		"escaped NUL": `\u0000`, "raw NUL": "\x00", "escaped SOH": `\u0001`, "raw US": "\x1f",
		"escaped newline": `\n`, "raw newline": "\n", "escaped tab": `\t`, "DEL": "\x7f",
		"C1 NEL": "\u0085", "bidi override": "\u202e", "escaped ESC": `\u001b`,
	}
	for _, fieldName := range []string{"eventId", "tenant_id", "reference", "transferId"} {
		for cname, c := range sortedKeys(controls) {
			refuse("control", fieldName+" with "+cname, validFields(ev()).with(fieldName, str("a"+c+"b")).json())
		}
	}
	refuse("control", "failureCode with escaped NUL", validFields(ev()).with("status", `"FAILED"`).with("failureCode", str(`X\u0000`)).json())
	refuse("control", "raw NUL between members", bytes.Replace(validFields(ev()).json(), []byte(`,"domain"`), []byte(",\x00\"domain\""), 1))

	// Invalid UTF-8 anywhere in the raw body, and the escaped forms that decode to U+FFFD.
	for _, bad := range []string{"\xff", "\xc3\x28", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80", "\xe2\x82", "\xc0\xaf"} {
		for _, fieldName := range []string{"eventId", "tenant_id", "reference"} {
			refuse("invalid UTF-8", fmt.Sprintf("%s with %q", fieldName, bad), validFields(ev()).with(fieldName, str("a"+bad)).json())
		}
		refuse("invalid UTF-8", fmt.Sprintf("key with %q", bad), validFields(ev()).with("ref"+bad, `"x"`).json())
		refuse("invalid UTF-8", fmt.Sprintf("between tokens %q", bad), append(validFields(ev()).json(), bad...))
	}
	refuse("invalid UTF-8", "escaped lone surrogate", validFields(ev()).with("reference", str(`a\ud800b`)).json())
	refuse("invalid UTF-8", "escaped U+FFFD", validFields(ev()).with("eventId", str(`a\ufffdb`)).json())
	refuse("invalid UTF-8", "BOM before the object", append([]byte("\xef\xbb\xbf"), validFields(ev()).json()...))

	// Oversized strings: one byte past each bound refused, the bound itself accepted.
	refuse("oversized", "eventId 256 bytes", validFields(ev()).with("eventId", str(strings.Repeat("e", 256))).json())
	refuse("oversized", "reference 256 bytes", validFields(ev()).with("reference", str(strings.Repeat("r", 256))).json())
	refuse("oversized", "tenant_id 129 bytes", validFields(ev()).with("tenant_id", str(strings.Repeat("t", 129))).json())
	refuse("oversized", "transferId 256 bytes", validFields(ev()).with("transferId", str(strings.Repeat("x", 256))).json())
	refuse("oversized", "failureCode 65 bytes", validFields(ev()).with("status", `"FAILED"`).with("failureCode", str(strings.Repeat("F", 65))).json())
	refuse("oversized", "occurredAt 100 bytes", validFields(ev()).with("occurredAt", str("2026-11-21T12:00:00."+strings.Repeat("1", 80)+"Z")).json())
	refuse("oversized", "domain 10 kB", validFields(ev()).with("domain", str(strings.Repeat("D", 10_000))).json())
	refuse("oversized", "status 10 kB", validFields(ev()).with("status", str(strings.Repeat("S", 10_000))).json())
	refuse("oversized", "unknown key 100 kB", validFields(ev()).with(strings.Repeat("k", 100_000), `"x"`).json())
	refuse("oversized", "eventId 900 kB", validFields(ev()).with("eventId", str(strings.Repeat("e", 900_000))).json())
	add("oversized", "body over the limit", callback{body: validFields(ev()).with("reference", str(strings.Repeat("r", int(DefaultMaxBodyBytes)))).json()}, 413, "PAYLOAD_TOO_LARGE")
	add("oversized", "chunked body over the limit", callback{chunked: true, body: validFields(ev()).with("reference", str(strings.Repeat("r", int(DefaultMaxBodyBytes)))).json()}, 413, "PAYLOAD_TOO_LARGE")
	id := ev()
	accept("oversized", "eventId at 255 bytes", validFields(strings.Repeat("E", 255-len(id))+id).with("reference", str("ref-"+id)).json())
	accept("oversized", "reference at 255 bytes", validFields(ev()).with("reference", str(strings.Repeat("R", 255))).json())
	accept("oversized", "tenant_id at 128 bytes", validFields(ev()).with("tenant_id", str(strings.Repeat("T", 128))).json())

	// Amounts: integers in [1, money.MaxAmountSantim], written as JSON integers.
	for _, a := range []string{
		"0", "-1", "-0", strconv.FormatInt(math.MaxInt64, 10), strconv.FormatInt(math.MinInt64, 10),
		strconv.FormatInt(money.MaxAmountSantim+1, 10), "99999999999999999999999", "1.5", "1.0", "1e3", "1E3",
		"150000e0", `"150000"`, `""`, "null", "true", "[1]", `{"v":1}`, "01", "+1", "0x10", "NaN", "Infinity", "1_000",
	} {
		refuse("amount", "amountSantim "+a, validFields(ev()).with("amountSantim", a).json())
	}
	refuse("amount", "amountSantim missing", validFields(ev()).without("amountSantim").json())
	accept("amount", "amountSantim 1", validFields(ev()).with("amountSantim", "1").json())
	accept("amount", "amountSantim at the maximum", validFields(ev()).with("amountSantim", strconv.FormatInt(money.MaxAmountSantim, 10)).json())

	// Malformed identifiers and references, in the body and in the path.
	for _, tn := range []string{"tenant a", "tenant/a", "ténant", "../x", "a;DROP TABLE x", `a\"b`, "", "tenant\\u0020a"} {
		refuse("malformed id", "tenant_id "+strconv.Quote(tn), validFields(ev()).with("tenant_id", str(tn)).json())
	}
	for _, e := range []string{"ev 1", "", `ev\t1`, "ev\u00a01"} {
		refuse("malformed id", "eventId "+strconv.Quote(e), validFields(ev()).with("eventId", str(e)).json())
	}
	refuse("malformed id", "reference with a space", validFields(ev()).with("reference", `"ref 1"`).json())
	refuse("malformed id", "empty transferId", validFields(ev()).with("transferId", `""`).json())
	refuse("malformed id", "failureCode with a space", validFields(ev()).with("status", `"FAILED"`).with("failureCode", `"BANK REJECTED"`).json())
	for _, p := range []string{"SANDBOX", "sand%20box", "sandbox%00", "sandbox%0a", url.PathEscape("sänd"), "x" + strings.Repeat("y", 5000)} {
		add("malformed id", "partner "+strconv.Quote(p[:min(len(p), 20)]), callback{partner: p, body: validFields(ev()).json()}, 401, "SIGNATURE_INVALID")
	}

	// Structure, names, domains and statuses.
	one := validFields(ev()).json()
	refuse("structure", "trailing garbage", append(bytes.Clone(one), " x"...))
	refuse("structure", "second object", append(bytes.Clone(one), one...))
	refuse("structure", "empty object after", append(bytes.Clone(one), " {}"...))
	refuse("structure", "trailing comma token", append(bytes.Clone(one), ","...))
	refuse("structure", "top-level array", []byte("["+string(one)+"]"))
	refuse("structure", "top-level string", []byte(strconv.Quote(string(one))))
	refuse("structure", "top-level number", []byte("1"))
	refuse("structure", "top-level null", []byte("null"))
	refuse("structure", "empty body", nil)
	refuse("structure", "whitespace only", []byte(" \n\t"))
	refuse("structure", "truncated", one[:len(one)-1])
	refuse("structure", "empty object", []byte("{}"))
	refuse("structure", "unknown field", validFields(ev()).with("fee", "1").json())
	refuse("structure", "case variant added", validFields(ev()).with("Reference", `"other"`).json())
	refuse("structure", "case variant replaces", renameKey(validFields(ev()), "reference", "Reference").json())
	refuse("structure", "EventID spelling", renameKey(validFields(ev()), "eventId", "EventID").json())
	refuse("structure", "tenantId spelling", renameKey(validFields(ev()), "tenant_id", "tenantId").json())
	refuse("structure", "AMOUNTSANTIM spelling", renameKey(validFields(ev()), "amountSantim", "AMOUNTSANTIM").json())
	refuse("structure", "duplicate reference", append(validFields(ev()), [2]string{"reference", `"other"`}).json())
	refuse("structure", "duplicate amountSantim", append(validFields(ev()), [2]string{"amountSantim", "1"}).json())
	refuse("structure", "duplicate tenant_id", append(validFields(ev()), [2]string{"tenant_id", `"tenant-b"`}).json())
	refuse("structure", "object as a string field", validFields(ev()).with("reference", `{"a":"b"}`).json())
	refuse("structure", "array as a string field", validFields(ev()).with("eventId", `["a"]`).json())
	refuse("structure", "number as a string field", validFields(ev()).with("tenant_id", `12`).json())
	refuse("structure", "null as a string field", validFields(ev()).with("transferId", `null`).json())
	refuse("structure", "deep nesting", validFields(ev()).with("reference", strings.Repeat("[", 100_000)).json())
	for _, d := range []string{`"ewa"`, `"CRYPTO"`, `""`, `"EWA "`} {
		refuse("structure", "domain "+d, validFields(ev()).with("domain", d).json())
	}
	for _, s := range []string{`"settled"`, `"PENDING"`, `""`, `"SETTLED\u0000"`} {
		refuse("structure", "status "+s, validFields(ev()).with("status", s).json())
	}
	for _, o := range []string{`"yesterday"`, `"2026-13-01T00:00:00Z"`, `"2026-11-21 12:00:00"`, `""`} {
		refuse("structure", "occurredAt "+o, validFields(ev()).with("occurredAt", o).json())
	}
	accept("structure", "trailing whitespace", append(validFields(ev()).json(), " \r\n\t"...))
	accept("structure", "FAILED with a failure code", validFields(ev()).with("status", `"FAILED"`).with("failureCode", `"BENEFICIARY_BANK_REJECTED"`).json())
	accept("structure", "optional fields absent", validFields(ev()).without("transferId").without("occurredAt").json())

	// The signature's own headers: malformed ones are 400, absent ones 401.
	body := func() []byte { return validFields(ev()).json() }
	header := func(name string, cb callback) {
		add("header", name, cb, 400, "INVALID_HEADER")
	}
	for _, ts := range []string{strings.Repeat("1", 20), "9999999999999999999", "abc", "-5", "+5", "1.5", " 1", "1\x00", "\xff1", "1e9"} {
		header("timestamp "+strconv.Quote(ts), callback{body: body(), ts: ts})
	}
	for _, n := range []string{strings.Repeat("n", 129), strings.Repeat("n", 100_000), "n\x00", "n\x01", "n\x7f", "n\xff", "n n", "n\u202e"} {
		header("nonce "+strconv.Quote(n[:min(len(n), 12)]), callback{body: body(), nonce: n})
	}
	for _, s := range []string{strings.Repeat("a", 129), strings.Repeat("a", 100_000), "ab\x00", "ab\xff", "ab cd", "ab\x1b"} {
		header("signature "+strconv.Quote(s[:min(len(s), 12)]), callback{body: body(), sig: s})
	}
	for _, h := range []string{callbacksig.HeaderTimestamp, callbacksig.HeaderNonce, callbacksig.HeaderSignature} {
		add("header", "missing "+h, callback{body: body(), noHeader: []string{h}}, 401, "SIGNATURE_INVALID")
	}
	add("header", "signature not hex", callback{body: body(), sig: "zz"}, 401, "SIGNATURE_INVALID")
	add("header", "signature of another body", callback{body: body(), sig: callbacksig.Sign(sandboxSecret, "1", "n", []byte("x"))}, 401, "SIGNATURE_INVALID")
	add("header", "timestamp zero", callback{body: body(), ts: "0"}, 401, "SIGNATURE_STALE")
	add("header", "timestamp 19 digits", callback{body: body(), ts: strconv.FormatInt(math.MaxInt64, 10)}, 401, "SIGNATURE_STALE")
	return ps
}

func renameKey(fs fields, from, to string) fields {
	out := make(fields, len(fs))
	for i, kv := range fs {
		if kv[0] == from {
			kv[0] = to
		}
		out[i] = kv
	}
	return out
}

// sortedKeys iterates a map in a stable order, so probe names and nonces are reproducible.
func sortedKeys(m map[string]string) func(func(string, string) bool) {
	return func(yield func(string, string) bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// TestHardening4_BankCallbackHostileProbes sends every hostile probe, correctly signed, and checks
// each gets its 4xx and stable code (never 5xx), that a refused one stores and audits nothing and
// is still counted, and that every status is one openapi.yaml documents.
func TestHardening4_BankCallbackHostileProbes(t *testing.T) {
	t.Parallel()
	f := newHardeningFixture(t, 0)
	documented := documentedStatuses(t)
	type tally struct{ probes, accepted, refused int }
	byClass := map[string]*tally{}
	byResult := map[string]int{}
	for _, p := range hostileProbes(f) {
		t.Run(p.class+"/"+p.name, func(t *testing.T) {
			events, audits := f.rows(t)
			counted := f.counted()
			rec := f.send(t, p.cb)
			require.Less(t, rec.Code, 500, rec.Body.String())
			require.True(t, documented[rec.Code], "status %d is not in openapi.yaml", rec.Code)
			require.Equal(t, p.status, rec.Code, rec.Body.String())
			if !(p.status == 413 && !p.cb.chunked) {
				// A declared length over the limit is refused at the door, before the route runs;
				// the access log has it.
				require.Equal(t, counted+1, f.counted(), "every callback is counted once")
			}
			e2, a2 := f.rows(t)
			tl := byClass[p.class]
			if tl == nil {
				tl = &tally{}
				byClass[p.class] = tl
			}
			tl.probes++
			byResult[fmt.Sprintf("%d %s", rec.Code, p.code)]++
			if p.code == "" {
				tl.accepted++
				require.Equal(t, events+1, e2)
				require.Equal(t, audits+1, a2)
				return
			}
			tl.refused++
			var b errBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b), rec.Body.String())
			require.Equal(t, p.code, b.Error.Code, b.Error.Message)
			require.NotEmpty(t, b.Error.RequestID)
			require.Equal(t, events, e2, "a refused callback was stored")
			require.Equal(t, audits, a2, "a refused callback was audited")
		})
	}
	classes := make([]string, 0, len(byClass))
	total := 0
	for c, tl := range byClass {
		classes = append(classes, c)
		total += tl.probes
	}
	sort.Strings(classes)
	for _, c := range classes {
		tl := byClass[c]
		t.Logf("class %-14s %3d probes: %3d accepted at the bound, %3d refused", c, tl.probes, tl.accepted, tl.refused)
	}
	results := make([]string, 0, len(byResult))
	for r := range byResult {
		results = append(results, r)
	}
	sort.Strings(results)
	for _, r := range results {
		t.Logf("answer %-24s %3d", r, byResult[r])
	}
	t.Logf("total %d probes", total)
}

// TestHardening7_BankCallbackParsedStrictly: the stored fields are exactly what the signed raw body
// says, because nothing but the exact names, once each, in one object, is accepted.
func TestHardening7_BankCallbackParsedStrictly(t *testing.T) {
	f := newHardeningFixture(t, 0)
	for name, body := range map[string][]byte{
		"case variant of reference after it": validFields("ev-cv").with("Reference", `"ref-other"`).json(),
		"duplicate reference":                append(validFields("ev-dup"), [2]string{"reference", `"ref-other"`}).json(),
		"second object":                      append(validFields("ev-2nd").json(), validFields("ev-2nd").with("amountSantim", "9").json()...),
		"amount as a string":                 validFields("ev-str").with("amountSantim", `"150000"`).json(),
		"amount as an exponent":              validFields("ev-exp").with("amountSantim", `1.5e5`).json(),
		"amount above the maximum":           validFields("ev-max").with("amountSantim", strconv.FormatInt(money.MaxAmountSantim+1, 10)).json(),
		"unknown domain":                     validFields("ev-dom").with("domain", `"ewa"`).json(),
		"unknown field":                      validFields("ev-unk").with("extra", `"x"`).json(),
		"top-level array":                    []byte("[" + string(validFields("ev-arr").json()) + "]"),
	} {
		t.Run(name, func(t *testing.T) {
			before := f.count(resultInvalid)
			rec := f.send(t, callback{body: body})
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			var b errBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
			require.Equal(t, "INVALID_PAYLOAD", b.Error.Code)
			require.Equal(t, before+1, f.count(resultInvalid))
		})
	}
	events, audits := f.rows(t)
	require.Zero(t, events)
	require.Zero(t, audits)

	// What is accepted is stored as the raw body says, field for field.
	body := validFields("ev-ok").with("amountSantim", strconv.FormatInt(money.MaxAmountSantim, 10)).json()
	rec := f.send(t, callback{body: body})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&raw))
	var eventID, tenant, domain, reference, status, amount string
	var stored []byte
	require.NoError(t, f.super.QueryRow(context.Background(), `SELECT event_id, claimed_tenant_id, domain, reference, status, amount_santim::text, raw_body FROM app.bank_webhook_events`).
		Scan(&eventID, &tenant, &domain, &reference, &status, &amount, &stored))
	require.Equal(t, []string{raw["eventId"].(string), raw["tenant_id"].(string), raw["domain"].(string), raw["reference"].(string), raw["status"].(string), raw["amountSantim"].(json.Number).String()},
		[]string{eventID, tenant, domain, reference, status, amount})
	require.Equal(t, body, stored)
}

// TestHardening7_TimestampWindowIsSymmetric: |now - timestamp| <= 300 s is inside, whatever the
// sub-second part of the clock; 301 s either way is outside and counted as signature-rejected.
func TestHardening7_TimestampWindowIsSymmetric(t *testing.T) {
	f := newHardeningFixture(t, 0)
	for _, frac := range []time.Duration{0, 1, 500 * time.Millisecond, time.Second - 1} {
		f.now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).Add(frac)
		for _, tc := range []struct {
			offset int64
			status int
		}{{-300, 200}, {300, 200}, {-301, 401}, {301, 401}, {0, 200}, {-299, 200}, {299, 200}} {
			t.Run(fmt.Sprintf("now+%v/ts%+d", frac, tc.offset), func(t *testing.T) {
				rejected := f.count(resultSignatureRejected)
				ts := strconv.FormatInt(f.now.Unix()+tc.offset, 10)
				rec := f.send(t, callback{body: validFields(fmt.Sprintf("ev-%d-%d", frac, tc.offset)).json(), ts: ts})
				require.Equal(t, tc.status, rec.Code, rec.Body.String())
				if tc.status == 401 {
					require.Contains(t, rec.Body.String(), "SIGNATURE_STALE")
					require.Equal(t, rejected+1, f.count(resultSignatureRejected))
				}
			})
		}
	}
}

// FuzzBankCallback: whatever the body and headers, signed correctly or not, the answer is 2xx or
// 4xx, never 5xx; a refused callback stores and audits nothing; an accepted one stores at most one
// event. The clock is fixed, so the target does not depend on when it runs.
func FuzzBankCallback(f *testing.F) {
	fx := newHardeningFixture(f, 64<<10)
	good := validFields("ev-fuzz").json()
	f.Add(good, "", int64(0), "nonce-a", "", true)
	f.Add(good, "", int64(300), "nonce-b", "", true)
	f.Add(good, "", int64(-301), "nonce-c", "", true)
	f.Add(good, "", int64(0), "nonce-d", "zz", false)
	f.Add(validFields("ev-f2").with("Reference", `"x"`).json(), "", int64(0), "nonce-e", "", true)
	f.Add(append(good, good...), "", int64(0), "nonce-f", "", true)
	f.Add(validFields("ev-f3").with("eventId", str("a\x00b")).json(), "", int64(0), "nonce-g", "", true)
	f.Add(validFields("ev-f4").with("amountSantim", "1e3").json(), "", int64(0), "nonce-h", "", true)
	f.Add(validFields("ev-f5").with("tenant_id", str("\xff")).json(), "", int64(0), "nonce-i", "", true)
	f.Add([]byte("[]"), "99999999999999999999", int64(0), "n\x00", "", true)
	f.Add([]byte(`{"amountSantim":-9223372036854775808}`), "", int64(0), strings.Repeat("n", 300), "", true)
	f.Add([]byte{}, "", int64(math.MinInt64), "", "", false)
	f.Fuzz(func(t *testing.T, body []byte, ts string, offset int64, nonce, sig string, sign bool) {
		if ts == "" {
			ts = strconv.FormatInt(fx.now.Unix()+offset, 10)
		}
		if sign {
			sig = callbacksig.Sign(sandboxSecret, ts, nonce, body)
		}
		req := httptest.NewRequest(http.MethodPost, "/api/integration/bank-callback/sandbox", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header[http.CanonicalHeaderKey(callbacksig.HeaderTimestamp)] = []string{ts}
		req.Header[http.CanonicalHeaderKey(callbacksig.HeaderNonce)] = []string{nonce}
		req.Header[http.CanonicalHeaderKey(callbacksig.HeaderSignature)] = []string{sig}
		events, audits := fx.rows(t)
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, rec.Body.String())
		e2, a2 := fx.rows(t)
		if rec.Code != http.StatusOK {
			var b errBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b), rec.Body.String())
			require.NotEmpty(t, b.Error.Code)
			require.Equal(t, events, e2, "a refused callback was stored")
			require.Equal(t, audits, a2, "a refused callback was audited")
			return
		}
		require.LessOrEqual(t, e2-events, 1)
		require.Equal(t, e2-events, a2-audits, "an event and its audit row go together")
	})
}

// TestHardening8_SlowLorisHeaderIsCutOff: a client that trickles its header one byte at a time is
// disconnected once the header timeout passes, instead of holding a connection forever.
func TestHardening8_SlowLorisHeaderIsCutOff(t *testing.T) {
	s := newTestServer()
	hs := s.HTTPServer(Timeouts{ReadHeader: 300 * time.Millisecond, Read: time.Second, Write: time.Second, Idle: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	// The same server answers a client that sends its request at once.
	resp, err := http.Get("http://" + ln.Addr().String() + "/api/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	hungUp := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(conn)
		hungUp <- b
	}()
	msg := "GET /api/healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 10_000)
	// Generous: the server must hang up long before the trickle ends (200 s); the deadline only
	// keeps a broken server from hanging the test.
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case got := <-hungUp:
			require.NotContains(t, string(got), "200 OK", "the trickled request was served")
			require.Less(t, i, len(msg), "the server waited for the whole header")
			return
		case <-deadline:
			t.Fatal("the server still holds a connection that trickles its header")
		case <-tick.C:
			_, _ = conn.Write([]byte{msg[i%len(msg)]})
		}
	}
}

// TestHardening8_OversizedHeadersRefusedByTheServer: a header block over maxHeaderBytes never
// reaches a handler; net/http answers 431 itself.
func TestHardening8_OversizedHeadersRefusedByTheServer(t *testing.T) {
	hs := newTestServer().HTTPServer(Timeouts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	req, err := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/api/integration/bank-callback/sandbox", strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(callbacksig.HeaderNonce, strings.Repeat("n", 2*maxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

func TestHTTPServerFillsEveryTimeout(t *testing.T) {
	hs := newTestServer().HTTPServer(Timeouts{Read: time.Minute})
	d := DefaultTimeouts()
	require.Equal(t, d.ReadHeader, hs.ReadHeaderTimeout)
	require.Equal(t, time.Minute, hs.ReadTimeout)
	require.Equal(t, d.Write, hs.WriteTimeout)
	require.Equal(t, d.Idle, hs.IdleTimeout)
	require.Positive(t, hs.MaxHeaderBytes)
}

// TestHardening8_OversizedBodyGets413: every route bounds its body, whether the client declares the
// length or streams it chunked; the answer is 413 PAYLOAD_TOO_LARGE in the envelope, over a real
// connection, and an oversized callback stores nothing.
func TestHardening8_OversizedBodyGets413(t *testing.T) {
	const limit = 1024
	f := newHardeningFixture(t, limit)
	hs := f.srv.HTTPServer(Timeouts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	base := "http://" + ln.Addr().String()

	big := validFields("ev-big").with("reference", str(strings.Repeat("r", limit))).json()
	require.Greater(t, len(big), limit)
	ts := strconv.FormatInt(f.now.Unix(), 10)
	for _, tc := range []struct {
		name, method, path string
		chunked            bool
	}{
		{"callback, declared length", http.MethodPost, "/api/integration/bank-callback/sandbox", false},
		{"callback, chunked", http.MethodPost, "/api/integration/bank-callback/sandbox", true},
		{"healthz, declared length", http.MethodGet, "/api/healthz", false},
		{"unknown route, declared length", http.MethodPost, "/api/nowhere", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(big)
			if tc.chunked {
				body = io.MultiReader(bytes.NewReader(big))
			}
			req, err := http.NewRequest(tc.method, base+tc.path, body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tc.chunked {
				req.ContentLength = -1
			}
			nonce := f.nonce()
			req.Header.Set(callbacksig.HeaderTimestamp, ts)
			req.Header.Set(callbacksig.HeaderNonce, nonce)
			req.Header.Set(callbacksig.HeaderSignature, callbacksig.Sign(sandboxSecret, ts, nonce, big))
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			var b errBody
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&b))
			require.Equal(t, "PAYLOAD_TOO_LARGE", b.Error.Code)
			require.NotEmpty(t, b.Error.RequestID)
		})
	}
	events, audits := f.rows(t)
	require.Zero(t, events)
	require.Zero(t, audits)

	// At the limit is fine.
	small := validFields("ev-small").json()
	require.LessOrEqual(t, len(small), limit)
	rec := f.send(t, callback{body: small})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
