// Package logging is the one log pipeline every Wagerail process uses: JSON slog records through a
// redaction handler that masks secrets and personal data (the spec's "Data-protection rules for
// logs") wherever they appear — as attributes, inside groups, inside maps and headers, and inside
// JSON bodies logged as strings or bytes. Correlation ids pass through untouched.
package logging

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// Masked is what a redacted value becomes.
const Masked = "[REDACTED]"

type rule int

const (
	keep rule = iota
	redact
	last4
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
	"phone":           redact,
	"phonenumber":     redact,
	"phone_number":    redact,
	"idempotencykey":  redact,
	"rawbody":         redact,
	"raw_body":        redact,
	"webhook_body":    redact,
	"email":           last4,
	"e-mail":          last4,
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
	return rules[k]
}

// MaskLast4 keeps only the last four characters.
func MaskLast4(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

func apply(r rule, v string) string {
	switch r {
	case redact:
		return Masked
	case last4:
		return MaskLast4(v)
	}
	return v
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
	out := slog.NewRecord(rec.Time, rec.Level, rec.Message, rec.PC)
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
		if r != keep {
			return slog.String(a.Key, Masked)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	}
	if r == redact {
		return slog.String(a.Key, Masked)
	}
	if r == last4 {
		return slog.String(a.Key, MaskLast4(v.String()))
	}
	if passthrough[strings.ToLower(a.Key)] {
		return slog.Attr{Key: a.Key, Value: v}
	}
	if v.Kind() != slog.KindAny {
		if v.Kind() == slog.KindString {
			if s, ok := redactJSONString(v.String()); ok {
				return slog.String(a.Key, s)
			}
		}
		return slog.Attr{Key: a.Key, Value: v}
	}
	return slog.Any(a.Key, redactAny(v.Any()))
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
			out[k] = apply(ruleFor(k), v)
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
	case json.RawMessage:
		return json.RawMessage(RedactJSON(t))
	case []byte:
		if s, ok := redactJSONString(string(t)); ok {
			return s
		}
		return t
	case string:
		if s, ok := redactJSONString(t); ok {
			return s
		}
		return t
	}
	return x
}

func redactStrings(r rule, vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = apply(r, v)
	}
	return out
}

func redactMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch r := ruleFor(k); r {
		case redact:
			out[k] = Masked
		case last4:
			s, _ := v.(string)
			out[k] = MaskLast4(s)
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
		return b
	}
	out, err := json.Marshal(redactAny(v))
	if err != nil {
		return []byte(`"` + Masked + `"`)
	}
	return out
}

func redactJSONString(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') {
		return s, false
	}
	return string(RedactJSON([]byte(t))), true
}

func looksSensitive(s string) bool {
	l := strings.ToLower(s)
	for k := range rules {
		if strings.Contains(l, `"`+k+`"`) {
			return true
		}
	}
	return false
}
