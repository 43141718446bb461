// Package logging is the one log pipeline every Wagerail process uses: JSON slog records through a
// redaction handler that masks secrets and personal data (the spec's "Data-protection rules for
// logs") wherever they appear — as attributes, inside groups, inside maps and headers, and inside
// JSON bodies logged as strings or bytes. Correlation ids pass through untouched.
//
// Besides the spec's list it masks the secrets of authentication: session tokens, OTP codes, TOTP
// secrets and otpauth:// URIs, backup codes, and reset, magic-link and invitation tokens, also when
// they ride in a URL's query or fragment (?token=…, &code=…), in an error message or in the record's
// message itself. A value under "code" passes only when it has the shape of one of our error codes
// (UPPER_SNAKE letters, no digit, such as INVALID_CREDENTIALS), because an OTP or backup code is
// submitted under the same name; so a one-time code must never be made of capital letters alone.
package logging

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Masked is what a redacted value becomes.
const Masked = "[REDACTED]"

type rule int

const (
	keep rule = iota
	redact
	last4
	// scalars masks a string or number but looks inside an object or array, so that a logged
	// "session":{"expiresAt":…,"token":…} keeps its expiry and loses its token.
	scalars
	// errorCode keeps UPPER_SNAKE error codes and masks anything else (an OTP or backup code).
	errorCode
)

// rules is keyed by the lower-cased attribute or JSON field name. "idempotencyKey" (a request body
// field) is masked while "idempotency_key" (the correlation id in our own logs) passes, as the
// spec asks.
var rules = map[string]rule{
	"authorization":   redact,
	"cookie":          redact,
	"set-cookie":      redact,
	"x-svc-signature": redact,
	"signature":       redact,
	"password":        redact,
	"newpassword":     redact,
	"currentpassword": redact,
	"secret":          redact,
	"nationalid":      redact,
	"national_id":     redact,
	// A taxpayer identification number is personal data like the national id (the payroll tax
	// report needs it; nothing else does).
	"tin":            redact,
	"taxid":          redact,
	"tax_id":         redact,
	"taxpayerid":     redact,
	"taxpayer_id":    redact,
	"phone":          redact,
	"phonenumber":    redact,
	"phone_number":   redact,
	"idempotencykey": redact,
	"rawbody":        redact,
	"raw_body":       redact,
	"webhook_body":   redact,
	"email":          last4,
	"e-mail":         last4,
}

// authRules is keyed by the name lower-cased with '_' and '-' removed, so totpSecret, totp_secret
// and totp-secret are one entry. Besides these, every name ending in "token" or "tokens"
// (sessionToken, resetToken, magicLinkToken, invitationToken, access_token, …), in "secret" or in
// "otp" is masked.
var authRules = map[string]rule{
	"session":          scalars,
	"code":             errorCode,
	"otpcode":          redact,
	"totpcode":         redact,
	"verificationcode": redact,
	"backupcode":       redact,
	"backupcodes":      redact,
	"recoverycode":     redact,
	"recoverycodes":    redact,
	"totpuri":          redact,
	"totpurl":          redact,
	"otpauth":          redact,
	"otpauthuri":       redact,
	"otpauthurl":       redact,
	"magiclink":        redact,
	"magiclinkurl":     redact,
	"resetlink":        redact,
	"reseturl":         redact,
	"resetpasswordurl": redact,
	"verificationlink": redact,
	"verificationurl":  redact,
	"verifyurl":        redact,
	"invitationlink":   redact,
	"invitationurl":    redact,
	"invitelink":       redact,
	"inviteurl":        redact,
	"setuplink":        redact,
	"setupurl":         redact,
	"accountsetuplink": redact,
	"accountsetupurl":  redact,
}

// passthrough are correlation ids: never masked, even when a value looks like something else.
var passthrough = map[string]bool{
	"tx_id": true, "partner_reference": true, "idempotency_key": true, "tenant_id": true,
	"account_id": true, "disbursement_id": true, "request_id": true,
}

func ruleFor(key string) rule {
	k := strings.ToLower(key)
	if passthrough[k] {
		return keep
	}
	if r, ok := rules[k]; ok {
		return r
	}
	return authRule(k)
}

func authRule(lower string) rule {
	n := strings.NewReplacer("_", "", "-", "").Replace(lower)
	if r, ok := authRules[n]; ok {
		return r
	}
	for _, suffix := range []string{"token", "tokens", "secret", "otp"} {
		if strings.HasSuffix(n, suffix) {
			return redact
		}
	}
	return keep
}

// MaskLast4 keeps only the last four characters.
func MaskLast4(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// isErrorCode: UPPER_SNAKE letters only. Digits are excluded on purpose: every OTP has them.
func isErrorCode(s string) bool {
	if len(s) < 2 || s[0] == '_' || s[len(s)-1] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// maskString applies r to a string value.
func maskString(r rule, v string) string {
	switch r {
	case redact, scalars:
		return Masked
	case last4:
		return MaskLast4(v)
	case errorCode:
		if isErrorCode(v) {
			return v
		}
		return Masked
	}
	return scrub(v)
}

// Handler wraps another slog.Handler and redacts every record before it reaches it.
type Handler struct{ next slog.Handler }

// NewHandler wraps next.
func NewHandler(next slog.Handler) *Handler { return &Handler{next: next} }

// New returns the standard logger: JSON to w at level, redacted, tagged with the process name.
func New(w io.Writer, level slog.Level, process string) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(NewHandler(h)).With("process", process)
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	// The message is scrubbed too: a library's own log line may quote a URL with its token.
	out := slog.NewRecord(rec.Time, rec.Level, scrub(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = redactAttr(a)
	}
	return &Handler{next: h.next.WithAttrs(red)}
}

func (h *Handler) WithGroup(name string) slog.Handler { return &Handler{next: h.next.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	r := ruleFor(a.Key)
	if v.Kind() == slog.KindGroup {
		attrs := v.Group()
		red := make([]slog.Attr, len(attrs))
		for i, g := range attrs {
			red[i] = redactAttr(g)
		}
		if r == redact || r == last4 {
			return slog.String(a.Key, Masked)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	}
	if passthrough[strings.ToLower(a.Key)] {
		return slog.Attr{Key: a.Key, Value: v}
	}
	switch r {
	case redact:
		return slog.String(a.Key, Masked)
	case last4:
		return slog.String(a.Key, MaskLast4(v.String()))
	case scalars, errorCode:
		if v.Kind() == slog.KindAny && isContainer(v.Any()) {
			return slog.Any(a.Key, redactAny(v.Any()))
		}
		if v.Kind() == slog.KindString {
			return slog.String(a.Key, maskString(r, v.String()))
		}
		return slog.String(a.Key, Masked)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redactString(v.String()))
	case slog.KindAny:
		return slog.Any(a.Key, redactAny(v.Any()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// isContainer says whether x is an object or array whose fields are redacted one by one under a
// scalars or errorCode rule.
func isContainer(x any) bool {
	switch t := x.(type) {
	case map[string]any, []any, map[string]string:
		return true
	case json.RawMessage:
		s := strings.TrimSpace(string(t))
		return s != "" && (s[0] == '{' || s[0] == '[')
	}
	return false
}

// redactAny handles the shapes bodies and headers are logged as.
func redactAny(x any) any {
	switch t := x.(type) {
	case http.Header:
		out := make(map[string][]string, len(t))
		for k, vs := range t {
			out[k] = redactStrings(ruleFor(k), vs)
		}
		return out
	case map[string][]string:
		return redactAny(http.Header(t))
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, v := range t {
			out[k] = maskString(ruleFor(k), v)
		}
		return out
	case map[string]any:
		return redactMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redactAny(e)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			out[i] = redactString(e)
		}
		return out
	case json.RawMessage:
		return json.RawMessage(RedactJSON(t))
	case []byte:
		if s, ok := redactJSONString(string(t)); ok {
			return s
		}
		if s := string(t); scrub(s) != s {
			return scrub(s)
		}
		return t
	case string:
		return redactString(t)
	case *url.URL:
		if t == nil {
			return x
		}
		return scrub(t.String())
	case url.URL:
		return scrub(t.String())
	case error:
		// An *url.Error quotes the URL it failed on, token and all.
		if s := t.Error(); scrub(s) != s {
			return scrub(s)
		}
		return x
	}
	return x
}

func redactStrings(r rule, vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = maskString(r, v)
	}
	return out
}

func redactMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		r := ruleFor(k)
		switch {
		case r == redact:
			out[k] = Masked
		case r == last4:
			s, _ := v.(string)
			out[k] = MaskLast4(s)
		case r == scalars || r == errorCode:
			if isContainer(v) {
				out[k] = redactAny(v)
			} else if s, ok := v.(string); ok {
				out[k] = maskString(r, s)
			} else {
				out[k] = Masked
			}
		default:
			out[k] = redactAny(v)
		}
	}
	return out
}

// RedactJSON masks sensitive fields at any depth of a JSON document. Input that is not JSON is
// returned unchanged only if it cannot carry a field name; otherwise it is masked whole, because a
// log line is no place to gamble on a parser.
func RedactJSON(b []byte) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		if looksSensitive(string(b)) {
			return []byte(`"` + Masked + `"`)
		}
		if s := string(b); scrub(s) != s {
			return []byte(scrub(s))
		}
		return b
	}
	out, err := json.Marshal(redactAny(v))
	if err != nil {
		return []byte(`"` + Masked + `"`)
	}
	return out
}

func redactString(s string) string {
	if r, ok := redactJSONString(s); ok {
		return r
	}
	return scrub(s)
}

func redactJSONString(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') {
		return s, false
	}
	return string(RedactJSON([]byte(t))), true
}

// jsonKey finds the quoted names in text that is almost JSON (a truncated body).
var jsonKey = regexp.MustCompile(`"([^"\\]{1,64})"\s*:`)

func looksSensitive(s string) bool {
	l := strings.ToLower(s)
	for k := range rules {
		if strings.Contains(l, `"`+k+`"`) {
			return true
		}
	}
	for _, m := range jsonKey.FindAllStringSubmatch(s, -1) {
		if ruleFor(m[1]) != keep {
			return true
		}
	}
	return false
}

// queryParam finds name=value pairs in a URL's query or fragment, or in a form body. A value stops
// at every separator, '?' included, so one pair never swallows the next ("a=?token=x").
var queryParam = regexp.MustCompile(`(^|[?&;#\s])([^=&;#?\s"'<>]+)=([^&;#?\s"'<>]*)`)

// scrub masks what a free-text value (an error message, a URL, a form body) may carry: a whole
// otpauth:// URI (it holds the TOTP secret and the account), the value of every sensitive query or
// form parameter (?token=…, &code=…), and the value of every sensitive "name":value pair quoted
// from a JSON body. The rest of the value, a route for instance, is kept.
func scrub(s string) string {
	t := strings.TrimSpace(s)
	if len(t) >= 8 && strings.EqualFold(t[:8], "otpauth:") {
		return Masked
	}
	if strings.Contains(strings.ToLower(s), "otpauth:") {
		s = otpauthPattern.ReplaceAllString(s, Masked)
	}
	if strings.Contains(s, "=") {
		s = queryParam.ReplaceAllStringFunc(s, scrubParam)
	}
	if strings.Contains(s, `"`) && strings.Contains(s, ":") {
		s = quotedPair.ReplaceAllStringFunc(s, scrubPair)
	}
	return s
}

func scrubParam(m string) string {
	sub := queryParam.FindStringSubmatch(m)
	name, err := url.QueryUnescape(sub[2])
	if err != nil {
		name = sub[2]
	}
	switch paramRule(name) {
	case keep:
		return m
	case last4:
		v, err := url.QueryUnescape(sub[3])
		if err != nil {
			v = sub[3]
		}
		return sub[1] + sub[2] + "=" + MaskLast4(v)
	default:
		return sub[1] + sub[2] + "=" + Masked
	}
}

// quotedPair finds "name":"value", "name":number and "name":[scalars…] in text that quotes a JSON
// body, possibly cut short. An object value is not matched, so the pairs inside it are.
var quotedPair = regexp.MustCompile(`"([^"\\]+)"\s*:\s*(` + jsonScalar + `|\[\s*(?:(?:` + jsonScalar + `)\s*,?\s*)*\]?)`)

const jsonScalar = `"(?:[^"\\]|\\.)*"?|-?[0-9][0-9.eE+-]*`

func scrubPair(m string) string {
	sub := quotedPair.FindStringSubmatch(m)
	r := ruleFor(sub[1])
	if r == keep {
		return m
	}
	v, err := strconv.Unquote(sub[2])
	quoted := err == nil
	if r == errorCode && quoted && isErrorCode(v) {
		return m
	}
	if r == last4 && quoted {
		return `"` + sub[1] + `":"` + MaskLast4(v) + `"`
	}
	return `"` + sub[1] + `":"` + Masked + `"`
}

var otpauthPattern = regexp.MustCompile(`(?i)otpauth:[^\s"'<>]*`)

// paramRule: a query parameter is masked under the names a body field would be, and also under
// the short names links use for a signature or key. A "code" in a URL is masked whatever its shape
// (an OAuth code, an OTP), so errorCode and scalars become redact.
func paramRule(name string) rule {
	switch k := strings.ToLower(name); k {
	case "sig", "apikey", "api_key":
		return redact
	}
	switch r := ruleFor(name); r {
	case errorCode, scalars:
		return redact
	default:
		return r
	}
}
