package api

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/db"
)

// Partner callbacks prove who they are with x-svc-signature = hex HMAC-SHA256 over
// "<timestamp>.<nonce>.<raw body>" under the partner's secret, within a 5-minute clock window.
const (
	headerTimestamp  = "x-svc-timestamp"
	headerNonce      = "x-svc-nonce"
	headerSignature  = "x-svc-signature"
	webhookSkew      = 5 * time.Minute
	maxWebhookBody   = 1 << 20
	webhookActorPref = "partner:"
)

// Results of svc_bank_webhook_requests_total. A stale timestamp counts as signature_rejected, as the
// spec asks ("bad or stale webhook signature").
const (
	resultAccepted          = "accepted"
	resultDuplicate         = "duplicate"
	resultSignatureRejected = "signature_rejected"
	resultReplay            = "replay"
	resultInvalid           = "invalid_payload"
	resultError             = "error"
)

type webhookMetrics struct{ requests *prometheus.CounterVec }

func newWebhookMetrics(reg prometheus.Registerer) *webhookMetrics {
	m := &webhookMetrics{requests: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "svc_bank_webhook_requests_total",
		Help: "Partner-bank callbacks received, by result.",
	}, []string{"result"})}
	reg.MustRegister(m.requests)
	for _, r := range []string{resultAccepted, resultDuplicate, resultSignatureRejected, resultReplay, resultInvalid, resultError} {
		m.requests.WithLabelValues(r) // export zeroes so rate() works from the first scrape
	}
	return m
}

// bankCallback is the partner's payload. Partners may add fields; we read what we need.
type bankCallback struct {
	EventID      string      `json:"eventId"`
	TenantID     string      `json:"tenant_id"`
	Domain       string      `json:"domain"`
	Reference    string      `json:"reference"`
	TransferID   string      `json:"transferId"`
	Status       string      `json:"status"`
	AmountSantim json.Number `json:"amountSantim"`
	FailureCode  string      `json:"failureCode"`
	OccurredAt   string      `json:"occurredAt"`
}

// VerifyWebhookSignature checks sigHex against the HMAC of "<ts>.<nonce>.<body>" in constant time.
func VerifyWebhookSignature(secret []byte, ts, nonce string, body []byte, sigHex string) bool {
	got, err := hex.DecodeString(sigHex)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write([]byte(nonce))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// SignWebhook is the partner side of VerifyWebhookSignature (used by tests and tooling).
func SignWebhook(secret []byte, ts, nonce string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	fmt.Fprintf(mac, "%s.%s.", ts, nonce)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func (s *Server) bankCallback(c *gin.Context) {
	partner := c.Param("partner")
	reject := func(result string, e *Error) {
		s.webhooks.requests.WithLabelValues(result).Inc()
		s.deps.Log.Warn("bank callback rejected", "partner", partner, "result", result, "code", e.Code, "request_id", requestID(c))
		writeError(c, e)
	}
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxWebhookBody+1))
	if err != nil {
		reject(resultInvalid, NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "could not read the body"))
		return
	}
	if len(body) > maxWebhookBody {
		reject(resultInvalid, NewError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "callback bodies are limited to 1 MiB"))
		return
	}

	// Authenticate before reading anything the body says.
	ts, nonce, sig := c.GetHeader(headerTimestamp), c.GetHeader(headerNonce), c.GetHeader(headerSignature)
	secret, known := s.deps.WebhookSecrets[partner]
	if !known || ts == "" || nonce == "" || sig == "" || !VerifyWebhookSignature(secret, ts, nonce, body, sig) {
		// An unknown partner gets the same answer as a bad signature: nothing to probe.
		reject(resultSignatureRejected, NewError(http.StatusUnauthorized, "SIGNATURE_INVALID", "signature does not verify"))
		return
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	signedAt := time.Unix(unix, 0)
	if skew := s.now().Sub(signedAt); err != nil || skew > webhookSkew || skew < -webhookSkew {
		reject(resultSignatureRejected, NewError(http.StatusUnauthorized, "SIGNATURE_STALE", "timestamp outside the 5-minute window"))
		return
	}

	cb, verr := parseBankCallback(body)
	if verr != nil {
		reject(resultInvalid, verr)
		return
	}
	amount, _ := cb.AmountSantim.Int64()

	var id int64
	var duplicate bool
	err = db.InTenantTx(c.Request.Context(), s.deps.DB, cb.TenantID, func(tx pgx.Tx) error {
		err := tx.QueryRow(c.Request.Context(), `
			INSERT INTO app.bank_webhook_events
				(partner, event_id, nonce, tenant_id, domain, reference, status, amount_santim, raw_body, signed_at, outcome)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'RECORDED')
			ON CONFLICT ON CONSTRAINT bank_webhook_events_event DO NOTHING
			RETURNING id`,
			partner, cb.EventID, nonce, cb.TenantID, cb.Domain, cb.Reference, cb.Status, amount, body, signedAt).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			duplicate = true
			return nil
		}
		if err != nil {
			return err
		}
		details, _ := json.Marshal(map[string]any{
			"eventId": cb.EventID, "partner": partner, "domain": cb.Domain, "reference": cb.Reference,
			"status": cb.Status, "amountSantim": amount, "webhookEventId": id,
		})
		_, err = tx.Exec(c.Request.Context(), `
			INSERT INTO app.audit_log (tenant_id, actor, action, subject, details, request_id)
			VALUES ($1, $2, 'BankWebhookApplied', $3, $4, $5)`,
			cb.TenantID, webhookActorPref+partner, cb.Reference, details, requestID(c))
		return err
	})
	switch {
	case db.IsCode(err, "23505"):
		// Same nonce, different event: a replayed signature, not a retry.
		reject(resultReplay, NewError(http.StatusConflict, "REPLAYED_NONCE", "nonce already used"))
		return
	case err != nil:
		s.webhooks.requests.WithLabelValues(resultError).Inc()
		writeError(c, fmt.Errorf("bank callback: %w", err))
		return
	case duplicate:
		// A retry of an event we hold: acknowledge so the partner stops, change nothing.
		s.webhooks.requests.WithLabelValues(resultDuplicate).Inc()
		c.JSON(http.StatusOK, gin.H{"status": "duplicate", "eventId": cb.EventID})
		return
	}
	s.webhooks.requests.WithLabelValues(resultAccepted).Inc()
	s.deps.Log.Info("bank callback accepted", "partner", partner, "tenant_id", cb.TenantID,
		"partner_reference", cb.Reference, "status", cb.Status, "request_id", requestID(c))
	c.JSON(http.StatusOK, gin.H{"status": "accepted", "eventId": cb.EventID, "id": id})
}

var callbackStatuses = map[string]bool{"SETTLED": true, "FAILED": true}

func parseBankCallback(body []byte) (*bankCallback, *Error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var cb bankCallback
	if err := dec.Decode(&cb); err != nil {
		return nil, NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "body is not a JSON object")
	}
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"eventId", cb.EventID}, {"tenant_id", cb.TenantID}, {"domain", cb.Domain},
		{"reference", cb.Reference}, {"status", cb.Status}, {"amountSantim", cb.AmountSantim.String()},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		e := NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "missing fields")
		e.Details = map[string]any{"missing": missing}
		return nil, e
	}
	if !callbackStatuses[cb.Status] {
		return nil, NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "status must be SETTLED or FAILED")
	}
	if n, err := cb.AmountSantim.Int64(); err != nil || n <= 0 {
		return nil, NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "amountSantim must be a positive integer")
	}
	return &cb, nil
}

func (s *Server) now() time.Time {
	if s.deps.Now != nil {
		return s.deps.Now()
	}
	return time.Now()
}
