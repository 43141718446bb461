package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Results of svc_bank_webhook_requests_total. A stale timestamp counts as signature_rejected, as the
// spec asks ("bad or stale webhook signature"). accepted is a callback applied to its saga (stored
// outcome APPLIED); saga_finished one whose saga was already closed; undelivered one stored but not
// yet delivered because Temporal is unreachable or not configured (answered 503, so the partner
// retries).
const (
	resultAccepted          = "accepted"
	resultSagaFinished      = "saga_finished"
	resultUnmatched         = "unmatched"
	resultDuplicate         = "duplicate"
	resultUndelivered       = "undelivered"
	resultConflict          = "conflict"
	resultSignatureRejected = "signature_rejected"
	resultReplay            = "replay"
	resultInvalid           = "invalid_payload"
	resultError             = "error"
)

// webhooks is the callback route's state: its metrics and the applier that stores and delivers
// callbacks.
type webhooks struct {
	requests *prometheus.CounterVec
	applier  *bankwebhook.Applier // nil without a platform pool: callbacks answer 503

	// The merchant callbacks (api/merchant_callback.go): the same signature, nonces and storage
	// discipline, their own table and counter.
	merchantRequests *prometheus.CounterVec
	merchant         *bnpl.MerchantCallbacks // nil without a platform pool: callbacks answer 503
}

func newWebhooks(d Deps) *webhooks {
	m := &webhooks{requests: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_bank_webhook_requests_total",
		Help: "Partner-bank callbacks received, by result.",
	}, []string{"result"})}
	d.Registry.MustRegister(m.requests)
	for _, r := range []string{resultAccepted, resultSagaFinished, resultUnmatched, resultDuplicate, resultUndelivered,
		resultConflict, resultSignatureRejected, resultReplay, resultInvalid, resultError} {
		m.requests.WithLabelValues(r) // export zeroes so rate() works from the first scrape
	}
	m.merchantRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_bnpl_merchant_callback_requests_total",
		Help: "Merchant callbacks (BNPL orders) received, by result.",
	}, []string{"result"})
	d.Registry.MustRegister(m.merchantRequests)
	for _, r := range merchantCallbackResults {
		m.merchantRequests.WithLabelValues(r)
	}
	if d.Platform != nil {
		var wf bankwebhook.Workflows
		if d.Temporal != nil {
			wf = d.Temporal
		}
		m.merchant = bnpl.NewMerchantCallbacks(d.Platform, wf, d.Now)
	}
	if d.Platform != nil {
		find := d.FindTransfer
		if find == nil {
			find = findGatewayTransfer
		}
		var wf bankwebhook.Workflows
		if d.Temporal != nil {
			wf = d.Temporal
		}
		m.applier = bankwebhook.NewApplier(bankwebhook.NewStore(d.Platform, find, d.Now), wf)
		if d.DB != nil {
			// The register learns SETTLED and FAILED from callbacks too (the sagas' status
			// lookups are its other source; the gateway runs no poller of its own).
			m.applier.Register = gateway.NewStore(d.DB)
		}
	}
	return m
}

// findGatewayTransfer reads the gateway's register of outbound transfers (gateway.transfers).
func findGatewayTransfer(ctx context.Context, tx pgx.Tx, partner, reference string) (bankwebhook.Transfer, error) {
	r, err := gateway.FindTransfer(ctx, tx, partner, reference)
	if gateway.ReasonOf(err) == gateway.ReasonTransferNotFound {
		return bankwebhook.Transfer{}, bankwebhook.ErrTransferNotFound
	}
	if err != nil {
		return bankwebhook.Transfer{}, err
	}
	return bankwebhook.Transfer{TenantID: r.TenantID, Domain: r.Domain, AmountSantim: r.AmountSantim}, nil
}

// bankCallback is the partner's payload. Its fields are exactly these names; decodeBankCallback
// refuses any other.
type bankCallback struct {
	EventID      string
	TenantID     string
	Domain       string
	Reference    string
	TransferID   string
	Status       string
	AmountSantim int64
	FailureCode  string
	OccurredAt   string
}

// bankCallback checks, in this order: the body fits (413), the three headers are well-formed
// (400 INVALID_HEADER), the signature verifies (401 SIGNATURE_INVALID), the timestamp is inside the
// window (401 SIGNATURE_STALE; signature and window are package callbacksig, with which the
// sandbox bank signs), and only then reads the body (415 UNSUPPORTED_MEDIA_TYPE unless
// declared JSON, 400 INVALID_PAYLOAD). The signature covers the raw bytes, so nothing the body
// says is trusted before it verifies; a body that is
// correctly signed but malformed is still the sender's error (400), never ours (500), and it is
// neither stored nor audited. A verified callback goes to the applier (internal/bankwebhook), which
// stores it and delivers it as the settlement signal to the saga that owns the transfer; the answer
// says what came of it (200 with the outcome, or 503 when the saga could not be reached: the
// callback is stored and the partner's retry delivers it).
func (s *Server) bankCallback(c *gin.Context) {
	partner := c.Param("partner")
	secret, known := s.deps.WebhookSecrets[partner]
	logPartner := partner
	if !known {
		// The path is the caller's text: only a configured partner name reaches the log.
		logPartner = "unknown"
	}
	reject := func(result string, e *Error) {
		s.webhooks.requests.WithLabelValues(result).Inc()
		s.deps.Log.Warn("bank callback rejected", "partner", logPartner, "result", result, "code", e.Code, "request_id", requestID(c))
		writeError(c, e)
	}
	body, h, ok := s.authenticateCallback(c, secret, known, reject)
	if !ok {
		return
	}
	signedAt := time.Unix(h.unix, 0)

	if !isJSONMediaType(c.GetHeader("Content-Type")) {
		reject(resultInvalid, errNotJSON())
		return
	}
	cb, e := decodeBankCallback(body)
	if e != nil {
		reject(resultInvalid, e)
		return
	}

	if s.webhooks.applier == nil {
		s.webhooks.requests.WithLabelValues(resultError).Inc()
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "bank callbacks need the platform database role (DATABASE_PLATFORM_URL)"))
		return
	}
	ctx := tenancy.WithRequestID(c.Request.Context(), requestID(c))
	d, err := s.webhooks.applier.Receive(ctx, bankwebhook.Callback{
		Partner: partner, EventID: cb.EventID, Nonce: h.nonce, ClaimedTenant: cb.TenantID, Domain: cb.Domain,
		Reference: cb.Reference, TransferID: cb.TransferID, Status: cb.Status, FailureCode: cb.FailureCode,
		AmountSantim: cb.AmountSantim, RawBody: body, SignedAt: signedAt,
	})
	switch {
	case errors.Is(err, bankwebhook.ErrReplayedNonce):
		// Same nonce, different event: a replayed signature, not a retry.
		reject(resultReplay, NewError(http.StatusConflict, "REPLAYED_NONCE", "nonce already used"))
		return
	case errors.Is(err, bankwebhook.ErrEventConflict):
		reject(resultConflict, NewError(http.StatusConflict, "WEBHOOK_EVENT_CONFLICT", "eventId was delivered before with a different body"))
		return
	case err != nil:
		s.webhooks.requests.WithLabelValues(resultError).Inc()
		writeError(c, fmt.Errorf("bank callback: %w", err))
		return
	}
	ack := func(result, status string) {
		s.webhooks.requests.WithLabelValues(result).Inc()
		c.JSON(http.StatusOK, gin.H{"status": status, "outcome": string(d.Outcome), "eventId": cb.EventID, "id": d.ID})
	}
	switch d.Outcome {
	case bankwebhook.Gathered:
		// A bulk item's callback: stored, and signalled with its batch's others by the next flush.
		ack(resultAccepted, "accepted")
	case bankwebhook.Duplicate:
		// A retry of an event already decided: acknowledge so the partner stops, change nothing.
		ack(resultDuplicate, "duplicate")
	case bankwebhook.Unmatched:
		// Ours to review, not the partner's to retry: acknowledged, nothing signalled.
		s.deps.Log.Warn("bank callback matches no transfer or saga", "partner", partner, "partner_reference", cb.Reference,
			"tenant_id", d.TenantID, "problem", d.Problem, "webhook_event_id", d.ID, "request_id", requestID(c))
		ack(resultUnmatched, "unmatched")
	case bankwebhook.SagaFinished:
		// The saga has closed: nothing to apply, and a retry would change nothing either.
		s.deps.Log.Info("bank callback for a finished saga", "partner", partner, "tenant_id", d.TenantID,
			"partner_reference", cb.Reference, "status", cb.Status, "webhook_event_id", d.ID, "request_id", requestID(c))
		ack(resultSagaFinished, "saga_finished")
	case bankwebhook.Undelivered:
		// Stored, not delivered: the partner's retry delivers it (the saga dedupes by event id).
		s.webhooks.requests.WithLabelValues(resultUndelivered).Inc()
		s.deps.Log.Warn("bank callback stored but not delivered", "partner", partner, "tenant_id", d.TenantID,
			"partner_reference", cb.Reference, "problem", d.Problem, "webhook_event_id", d.ID, "request_id", requestID(c))
		if !s.webhooks.applier.Configured() {
			writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the callback is stored, but no Temporal client is configured to deliver it; retry later"))
			return
		}
		writeError(c, NewError(http.StatusServiceUnavailable, "TEMPORAL_UNAVAILABLE", "the callback is stored, but its saga could not be reached; retry later"))
	default:
		s.deps.Log.Info("bank callback applied", "partner", partner, "tenant_id", d.TenantID,
			"partner_reference", cb.Reference, "status", cb.Status, "webhook_event_id", d.ID, "request_id", requestID(c))
		ack(resultAccepted, "accepted")
	}
}

// authenticateCallback is the front of every signed callback route (bank and merchant): the body
// fits (413), the three headers are well-formed (400 INVALID_HEADER), the signature verifies
// under the partner's secret (401 SIGNATURE_INVALID; an unknown partner answers the same), and
// the timestamp is inside the window (401 SIGNATURE_STALE). Nothing the body says is read
// before. ok false means reject has answered.
func (s *Server) authenticateCallback(c *gin.Context, secret []byte, known bool, reject func(string, *Error)) (body []byte, h callbackHeaders, ok bool) {
	body, e := readBody(c)
	if e != nil {
		reject(resultInvalid, e)
		return nil, callbackHeaders{}, false
	}

	// Authenticate before reading anything the body says. A malformed header is a request that
	// failed to authenticate, so it is counted with the bad signatures.
	h, e = parseCallbackHeaders(c.Request.Header)
	if e != nil {
		reject(resultSignatureRejected, e)
		return nil, callbackHeaders{}, false
	}
	if !known || h.timestamp == "" || h.nonce == "" || h.signature == "" ||
		!callbacksig.Verify(secret, h.timestamp, h.nonce, body, h.signature) {
		// An unknown partner gets the same answer as a bad signature: nothing to probe.
		reject(resultSignatureRejected, NewError(http.StatusUnauthorized, "SIGNATURE_INVALID", "signature does not verify"))
		return nil, callbackHeaders{}, false
	}
	// Whole seconds on both sides, so the window is symmetric: a callback signed exactly 300 s ago
	// and one signed exactly 300 s ahead are both inside it, 301 s either way is not. The header
	// holds at most 19 digits, so the difference cannot overflow.
	if !callbacksig.Fresh(h.unix, s.now().Unix()) {
		reject(resultSignatureRejected, NewError(http.StatusUnauthorized, "SIGNATURE_STALE", "timestamp outside the 5-minute window"))
		return nil, callbackHeaders{}, false
	}
	return body, h, true
}

var callbackStatuses = map[string]bool{"SETTLED": true, "FAILED": true}

// Header bounds. The signature is 64 hex digits; the slack lets a wrong-but-plausible value reach
// the constant-time comparison and get the ordinary 401.
const (
	maxTimestampDigits = 19 // every non-negative int64
	maxNonceBytes      = 128
	maxSignatureBytes  = 128
)

type callbackHeaders struct {
	timestamp, nonce, signature string
	unix                        int64
}

// parseCallbackHeaders refuses a present header that is not well-formed. An absent one is left
// empty: that is an unauthenticated request (401), not a malformed one.
func parseCallbackHeaders(hdr http.Header) (callbackHeaders, *Error) {
	h := callbackHeaders{timestamp: hdr.Get(callbacksig.HeaderTimestamp), nonce: hdr.Get(callbacksig.HeaderNonce), signature: hdr.Get(callbacksig.HeaderSignature)}
	bad := func(name, problem string) (callbackHeaders, *Error) {
		e := NewError(http.StatusBadRequest, "INVALID_HEADER", name+" "+problem)
		e.Details = map[string]any{"header": name}
		return callbackHeaders{}, e
	}
	if h.timestamp != "" {
		if len(h.timestamp) > maxTimestampDigits || strings.Trim(h.timestamp, "0123456789") != "" {
			return bad(callbacksig.HeaderTimestamp, fmt.Sprintf("must be unix seconds (at most %d digits)", maxTimestampDigits))
		}
		unix, err := strconv.ParseInt(h.timestamp, 10, 64)
		if err != nil {
			return bad(callbacksig.HeaderTimestamp, "is out of range")
		}
		h.unix = unix
	}
	if h.nonce != "" {
		if err := field.Reference(callbacksig.HeaderNonce, h.nonce, maxNonceBytes); err != nil {
			return bad(callbacksig.HeaderNonce, problemOf(err))
		}
	}
	if h.signature != "" {
		if err := field.Reference(callbacksig.HeaderSignature, h.signature, maxSignatureBytes); err != nil {
			return bad(callbacksig.HeaderSignature, problemOf(err))
		}
	}
	return h, nil
}

func problemOf(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Problem
	}
	return "is invalid"
}

func invalidPayload(msg string, details any) *Error {
	e := NewError(http.StatusBadRequest, "INVALID_PAYLOAD", msg)
	e.Details = details
	return e
}

// callbackStrings are the string fields of the payload by their exact JSON names; amountSantim is
// the one number.
func callbackStrings(cb *bankCallback) map[string]*string {
	return map[string]*string{
		"eventId": &cb.EventID, "tenant_id": &cb.TenantID, "domain": &cb.Domain, "reference": &cb.Reference,
		"transferId": &cb.TransferID, "status": &cb.Status, "failureCode": &cb.FailureCode, "occurredAt": &cb.OccurredAt,
	}
}

const fieldAmount = "amountSantim"

// decodeBankCallback reads the body token by token rather than with json.Unmarshal, which matches
// keys case-insensitively and lets the last duplicate win: {"reference":"a","Reference":"b"} would
// store b while anyone reading the signed raw body sees a. Here each key must be one of ours,
// spelled exactly, at most once (duplicateKey, the check every JSON edge shares); each value a
// scalar of its field's type (no nesting, so no depth to exhaust); and nothing may follow the
// object. The caller has checked that the body is UTF-8, which the decoder would otherwise
// silently patch with U+FFFD.
func decodeBankCallback(body []byte) (*bankCallback, *Error) {
	if !utf8.Valid(body) {
		return nil, invalidPayload("body must be valid UTF-8", nil)
	}
	if key, dup := duplicateKey(body); dup {
		return nil, duplicateKeyError("INVALID_PAYLOAD", key)
	}
	var cb bankCallback
	strs := callbackStrings(&cb)
	seen := make(map[string]bool, len(strs)+1)
	var amount json.Number

	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, invalidPayload("body must be one JSON object", nil)
	}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, invalidPayload("body is not valid JSON", nil)
		}
		if _, ours := strs[key]; !ours && key != fieldAmount {
			// Name the field only when it is safe to echo (it is the sender's text).
			if field.Identifier("field", key, 64) == nil {
				return nil, invalidPayload("unknown field "+key+" (names are case-sensitive)", map[string]any{"field": key})
			}
			return nil, invalidPayload("unknown field (names are case-sensitive)", nil)
		}
		seen[key] = true
		tok, err = dec.Token()
		if err != nil {
			return nil, invalidPayload("body is not valid JSON", nil)
		}
		if key == fieldAmount {
			n, ok := tok.(json.Number)
			if !ok {
				return nil, invalidPayload(fieldAmount+" must be a JSON integer", map[string]any{"field": key})
			}
			amount = n
			continue
		}
		v, ok := tok.(string)
		if !ok {
			return nil, invalidPayload(key+" must be a JSON string", map[string]any{"field": key})
		}
		*strs[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, invalidPayload("body is not valid JSON", nil)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidPayload("body must hold exactly one JSON object and nothing after it", nil)
	}

	var missing []string
	for _, name := range []string{"eventId", "tenant_id", "domain", "reference", "status"} {
		if *strs[name] == "" {
			missing = append(missing, name)
		}
	}
	if amount == "" {
		missing = append(missing, fieldAmount)
	}
	if len(missing) > 0 {
		return nil, invalidPayload("missing fields", map[string]any{"missing": missing})
	}

	// The decoder has already held the number to JSON's grammar; an integer is one without a
	// fraction or an exponent, so 1e3 and 1.0 are refused rather than rounded.
	if strings.ContainsAny(amount.String(), ".eE") {
		return nil, invalidPayload(fieldAmount+" must be a JSON integer (no fraction or exponent)", map[string]any{"field": fieldAmount})
	}
	n, err := strconv.ParseInt(amount.String(), 10, 64)
	if err != nil || !money.ValidAmount(n) {
		return nil, invalidPayload(fmt.Sprintf("%s must be between 1 and %d", fieldAmount, money.MaxAmountSantim), map[string]any{"field": fieldAmount})
	}
	cb.AmountSantim = n

	checks := []error{
		field.Reference("eventId", cb.EventID, 0),
		field.Identifier("tenant_id", cb.TenantID, 0),
		field.Reference("reference", cb.Reference, 0),
	}
	if seen["transferId"] {
		checks = append(checks, field.Reference("transferId", cb.TransferID, 0))
	}
	if seen["failureCode"] {
		checks = append(checks, field.Identifier("failureCode", cb.FailureCode, maxFailureCode))
	}
	for _, err := range checks {
		var fe *field.Error
		if errors.As(err, &fe) {
			return nil, invalidPayload(fe.Error(), map[string]any{"field": fe.Field})
		}
	}
	if !money.ValidDomain(cb.Domain) {
		return nil, invalidPayload("domain must be one of "+money.DomainList(), map[string]any{"field": "domain"})
	}
	if !callbackStatuses[cb.Status] {
		return nil, invalidPayload("status must be SETTLED or FAILED", map[string]any{"field": "status"})
	}
	if seen["occurredAt"] {
		if _, err := time.Parse(time.RFC3339Nano, cb.OccurredAt); err != nil || len(cb.OccurredAt) > maxOccurredAt {
			return nil, invalidPayload("occurredAt must be an RFC 3339 time", map[string]any{"field": "occurredAt"})
		}
	}
	return &cb, nil
}

const (
	maxFailureCode = 64 // the contract's codes are short upper-case words
	maxOccurredAt  = 64
)

func (s *Server) now() time.Time {
	if s.deps.Now != nil {
		return s.deps.Now()
	}
	return time.Now()
}
