package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Results of svc_bnpl_merchant_callback_requests_total.
const (
	merchantResultRecorded = "recorded"
	merchantResultDup      = "duplicate"
	merchantResultUnmatch  = "unmatched"
)

var merchantCallbackResults = []string{merchantResultRecorded, merchantResultDup, merchantResultUnmatch, resultUndelivered,
	resultConflict, resultSignatureRejected, resultReplay, resultInvalid, resultError}

// merchantCallbackFields are the payload's fields by their exact JSON names (all strings).
var merchantCallbackFields = []string{"eventId", "merchantId", "agreementId", "merchantReference", "kind", "occurredAt"}

// merchantReferencePattern is the agreement's merchant_reference (schema 0048).
var merchantReferencePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

const maxCallbackEventID = 128 // app.bnpl_merchant_callbacks.event_id

// merchantCallback is POST /api/integration/merchant-callback/<partner>: a merchant's word on a
// BNPL order, relayed and signed by the partner the merchant settles at (the partner's callback
// secret, the one the bank callbacks use). It authenticates exactly as bankCallback does
// (authenticateCallback: 413, 400 INVALID_HEADER, 401 SIGNATURE_INVALID / SIGNATURE_STALE) before
// reading the body (415, 400 INVALID_PAYLOAD), then bnpl.MerchantCallbacks stores it once and
// records it for the agreement it matches: 200 recorded, duplicate (a retry of a stored event,
// no second effect) or unmatched (no agreement of that merchant at that partner: stored, nothing
// changed); 409 REPLAYED_NONCE / WEBHOOK_EVENT_CONFLICT write nothing; 503 when the agreement's
// running saga could not be signalled (the record stands; the retry signals).
func (s *Server) merchantCallback(c *gin.Context) {
	partner := c.Param("partner")
	secret, known := s.deps.WebhookSecrets[partner]
	logPartner := partner
	if !known {
		logPartner = "unknown"
	}
	count := func(result string) { s.webhooks.merchantRequests.WithLabelValues(result).Inc() }
	reject := func(result string, e *Error) {
		count(result)
		s.deps.Log.Warn("merchant callback rejected", "partner", logPartner, "result", result, "code", e.Code, "request_id", requestID(c))
		writeError(c, e)
	}
	body, h, ok := s.authenticateCallback(c, secret, known, reject)
	if !ok {
		return
	}
	if !isJSONMediaType(c.GetHeader("Content-Type")) {
		reject(resultInvalid, errNotJSON())
		return
	}
	cb, e := decodeMerchantCallback(body)
	if e != nil {
		reject(resultInvalid, e)
		return
	}
	if s.webhooks.merchant == nil {
		count(resultError)
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "merchant callbacks need the platform database role (DATABASE_PLATFORM_URL)"))
		return
	}
	cb.Partner, cb.Nonce, cb.RawBody, cb.SignedAt = partner, h.nonce, body, time.Unix(h.unix, 0)
	if cb.OccurredAt != nil && cb.OccurredAt.After(cb.SignedAt.Add(callbacksig.MaxSkewSeconds*time.Second)) {
		// It orders the merchant's word (bnpl.ApplyMerchantCallback): an event after its own
		// signature would outrank every later one.
		reject(resultInvalid, invalidPayload("occurredAt must not be after the callback was signed", map[string]any{"field": "occurredAt"}))
		return
	}
	ctx := tenancy.WithRequestID(c.Request.Context(), requestID(c))
	r, err := s.webhooks.merchant.Receive(ctx, cb)
	switch {
	case errors.Is(err, bnpl.ErrCallbackReplayed):
		reject(resultReplay, NewError(http.StatusConflict, "REPLAYED_NONCE", "nonce already used"))
		return
	case errors.Is(err, bnpl.ErrCallbackConflict):
		reject(resultConflict, NewError(http.StatusConflict, "WEBHOOK_EVENT_CONFLICT", "eventId was delivered before with a different body"))
		return
	case errors.Is(err, bnpl.ErrSignal):
		count(resultUndelivered)
		s.deps.Log.Warn("merchant callback recorded but its saga not signalled", "partner", partner, "tenant_id", r.TenantID,
			"merchant_callback_id", r.ID, "error", err, "request_id", requestID(c))
		writeError(c, NewError(http.StatusServiceUnavailable, "TEMPORAL_UNAVAILABLE", "the callback is recorded, but the agreement's saga could not be reached; retry later"))
		return
	case err != nil:
		count(resultError)
		writeError(c, fmt.Errorf("merchant callback: %w", err))
		return
	}
	status := map[string]string{bnpl.CallbackRecorded: merchantResultRecorded, bnpl.CallbackDuplicate: merchantResultDup,
		bnpl.CallbackUnmatched: merchantResultUnmatch}[r.Outcome]
	if r.Outcome == bnpl.CallbackDuplicate && r.TenantID == "" {
		// A retry of an unmatched event: still nobody's.
		status = merchantResultUnmatch
	}
	if status == merchantResultUnmatch {
		s.deps.Log.Warn("merchant callback matches no agreement of the merchant", "partner", partner, "merchant_callback_id", r.ID,
			"problem", r.Problem, "request_id", requestID(c))
	}
	count(status)
	// The answer never says why a callback is unmatched: whether another merchant's agreement
	// exists is not the sender's to learn.
	c.JSON(http.StatusOK, gin.H{"status": status, "eventId": cb.EventID, "id": r.ID, "signalled": r.Signalled})
}

// decodeMerchantCallback reads the body token by token, as decodeBankCallback does: one flat
// JSON object, each key one of merchantCallbackFields spelled exactly and at most once, each
// value a string, nothing after the object; then every field's rule (openapi
// MerchantCallbackRequest).
func decodeMerchantCallback(body []byte) (bnpl.MerchantCallback, *Error) {
	var cb bnpl.MerchantCallback
	if !utf8.Valid(body) {
		return cb, invalidPayload("body must be valid UTF-8", nil)
	}
	if key, dup := duplicateKey(body); dup {
		return cb, duplicateKeyError("INVALID_PAYLOAD", key)
	}
	vals := make(map[string]string, len(merchantCallbackFields))
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return cb, invalidPayload("body must be one JSON object", nil)
	}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return cb, invalidPayload("body is not valid JSON", nil)
		}
		if !slices.Contains(merchantCallbackFields, key) {
			if field.Identifier("field", key, 64) == nil {
				return cb, invalidPayload("unknown field "+key+" (names are case-sensitive)", map[string]any{"field": key})
			}
			return cb, invalidPayload("unknown field (names are case-sensitive)", nil)
		}
		tok, err = dec.Token()
		if err != nil {
			return cb, invalidPayload("body is not valid JSON", nil)
		}
		v, ok := tok.(string)
		if !ok {
			return cb, invalidPayload(key+" must be a JSON string", map[string]any{"field": key})
		}
		vals[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return cb, invalidPayload("body is not valid JSON", nil)
	}
	if _, err := dec.Token(); err != io.EOF {
		return cb, invalidPayload("body must hold exactly one JSON object and nothing after it", nil)
	}
	var missing []string
	for _, name := range merchantCallbackFields[:5] {
		if vals[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return cb, invalidPayload("missing fields", map[string]any{"missing": missing})
	}
	for _, err := range []error{
		field.Reference("eventId", vals["eventId"], maxCallbackEventID),
		field.Identifier("merchantId", vals["merchantId"], 0),
		field.Identifier("agreementId", vals["agreementId"], 0),
	} {
		var fe *field.Error
		if errors.As(err, &fe) {
			return cb, invalidPayload(fe.Error(), map[string]any{"field": fe.Field})
		}
	}
	if !merchantReferencePattern.MatchString(vals["merchantReference"]) {
		return cb, invalidPayload("merchantReference must be 1 to 64 of A-Z a-z 0-9 . _ -", map[string]any{"field": "merchantReference"})
	}
	if !slices.Contains(bnpl.CallbackKinds, vals["kind"]) {
		return cb, invalidPayload("kind must be one of "+strings.Join(bnpl.CallbackKinds, ", "), map[string]any{"field": "kind"})
	}
	if at, ok := vals["occurredAt"]; ok {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || len(at) > maxOccurredAt {
			return cb, invalidPayload("occurredAt must be an RFC 3339 time", map[string]any{"field": "occurredAt"})
		}
		t = t.UTC().Truncate(time.Microsecond) // as stored
		cb.OccurredAt = &t
	}
	cb.EventID, cb.MerchantID, cb.AgreementID = vals["eventId"], vals["merchantId"], vals["agreementId"]
	cb.MerchantReference, cb.Kind = vals["merchantReference"], vals["kind"]
	return cb, nil
}
