package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The platform's view of stored bank callbacks (spec: "Bank webhooks and replay"). Every read
// and the replay go through the cross-tenant pool (audited CrossTenantAccess); the replay is
// audited ReplayBankWebhook with the admin as actor and re-delivers the stored event through the
// same applier the callback route uses (internal/bankwebhook), so it is idempotent where it
// matters: the saga dedupes by the partner's event id.

// webhookAdminRoutes serves the platform's view of stored bank callbacks.
func (s *Server) webhookAdminRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/integration/webhooks", Auth: Platform, Summary: "Stored bank callbacks (filtered, paged)", Handler: s.listWebhookEvents},
		{Method: http.MethodGet, Path: "/api/integration/webhooks/:id", Auth: Platform, Summary: "One stored bank callback with its raw body", Handler: s.getWebhookEvent},
		{Method: http.MethodPost, Path: "/api/integration/webhooks/:id/replay", Auth: Platform, Summary: "Re-deliver a stored bank callback to its saga", Handler: s.replayWebhookEvent, Body: BodyNone},
	}
}

// webhookEventJSON is a stored callback in the list (no raw body).
type webhookEventJSON struct {
	ID              int64     `json:"id"`
	Partner         string    `json:"partner"`
	EventID         string    `json:"eventId"`
	Reference       string    `json:"reference"`
	WorkflowID      string    `json:"workflowId"`
	TransferID      *string   `json:"transferId"`
	TenantID        *string   `json:"tenantId"`
	ClaimedTenantID string    `json:"claimedTenantId"`
	Domain          string    `json:"domain"`
	Status          string    `json:"status"`
	FailureCode     *string   `json:"failureCode"`
	AmountSantim    int64     `json:"amountSantim"`
	Outcome         string    `json:"outcome"`
	Problem         *string   `json:"problem"`
	DeliveryCount   int       `json:"deliveryCount"`
	SignedAt        time.Time `json:"signedAt"`
	ReceivedAt      time.Time `json:"receivedAt"`
}

// webhookDeliveryJSON is one recorded delivery attempt.
type webhookDeliveryJSON struct {
	ID          int64     `json:"id"`
	Trigger     string    `json:"trigger"`
	Outcome     string    `json:"outcome"`
	WorkflowID  string    `json:"workflowId"`
	Problem     *string   `json:"problem"`
	Actor       string    `json:"actor"`
	RequestID   *string   `json:"requestId"`
	AttemptedAt time.Time `json:"attemptedAt"`
}

// webhookEventDetailJSON is one stored callback with its raw body and deliveries.
type webhookEventDetailJSON struct {
	webhookEventJSON
	RawBody    string                `json:"rawBody"`
	Deliveries []webhookDeliveryJSON `json:"deliveries"`
}

func webhookOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toWebhookEventJSON(e bankwebhook.Event) webhookEventJSON {
	return webhookEventJSON{ID: e.ID, Partner: e.Partner, EventID: e.EventID, Reference: e.Reference, WorkflowID: e.WorkflowID,
		TransferID: webhookOptional(e.TransferID), TenantID: webhookOptional(e.TenantID), ClaimedTenantID: e.ClaimedTenant, Domain: e.Domain,
		Status: e.Status, FailureCode: webhookOptional(e.FailureCode), AmountSantim: e.AmountSantim, Outcome: string(e.Outcome),
		Problem: webhookOptional(e.Problem), DeliveryCount: e.Attempts, SignedAt: e.SignedAt.UTC(), ReceivedAt: e.ReceivedAt.UTC()}
}

// webhookFilters are the list's query parameters.
var webhookFilters = map[string]bool{"limit": true, "cursor": true, "partner": true, "outcome": true, "from": true, "to": true}

// webhookListFilter reads the list's query: each parameter at most once, none unknown.
func webhookListFilter(c *gin.Context) (bankwebhook.Filter, *Error) {
	q := c.Request.URL.Query()
	limit, before, e := seqListQuery(q, webhookFilters)
	if e != nil {
		return bankwebhook.Filter{}, e
	}
	f := bankwebhook.Filter{Limit: limit + 1, Before: before}
	if q.Has("partner") {
		f.Partner = q.Get("partner")
		if err := field.Identifier("partner", f.Partner, 0); err != nil {
			return f, fieldError(err)
		}
	}
	if q.Has("outcome") {
		switch o := bankwebhook.Outcome(q.Get("outcome")); o {
		case bankwebhook.Pending, bankwebhook.Applied, bankwebhook.SagaFinished, bankwebhook.Unmatched, bankwebhook.Duplicate:
			f.Outcome = o
		default:
			return f, fieldError(&field.Error{Field: "outcome", Problem: "must be PENDING, APPLIED, SAGA_FINISHED, UNMATCHED or DUPLICATE"})
		}
	}
	if f.From, f.To, e = timeWindow(q); e != nil {
		return f, e
	}
	return f, nil
}

// webhookEventID is the path's event id, or the 400 a malformed one gets. The path names an event
// by number (openapi.yaml: an int64 of at least 1), so any decimal spelling of one ("007", "+7")
// is that event, as every client that validates against the document may send it; the cursor,
// which only ever echoes our own nextCursor, stays plainly written.
func webhookEventID(c *gin.Context) (int64, bool) {
	n, err := strconv.ParseInt(c.Param("id"), 10, 64)
	ok := err == nil && n >= 1
	if !ok {
		writeError(c, fieldError(&field.Error{Field: "id", Problem: "must be a stored callback's id (a positive whole number)"}))
	}
	return n, ok
}

func webhookError(err error) error {
	if errors.Is(err, bankwebhook.ErrNotFound) {
		return NewError(http.StatusNotFound, "NOT_FOUND", "no such stored callback")
	}
	return err
}

func (s *Server) listWebhookEvents(c *gin.Context) {
	f, e := webhookListFilter(c)
	if e != nil {
		writeError(c, e)
		return
	}
	answerPlatformPage(s, c, f.Limit-1, func(ctx context.Context, tx pgx.Tx) ([]bankwebhook.Event, error) {
		return bankwebhook.List(ctx, tx, f)
	}, func(e bankwebhook.Event) string { return strconv.FormatInt(e.ID, 10) }, toWebhookEventJSON)
}

func (s *Server) getWebhookEvent(c *gin.Context) {
	id, ok := webhookEventID(c)
	if !ok {
		return
	}
	var ev bankwebhook.Event
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		ev, err = bankwebhook.Get(c.Request.Context(), tx, id)
		return err
	})
	if err != nil {
		writeError(c, webhookError(err))
		return
	}
	out := webhookEventDetailJSON{webhookEventJSON: toWebhookEventJSON(ev), RawBody: string(ev.RawBody), Deliveries: []webhookDeliveryJSON{}}
	for _, at := range ev.Deliveries {
		out.Deliveries = append(out.Deliveries, webhookDeliveryJSON{ID: at.ID, Trigger: string(at.Trigger), Outcome: string(at.Outcome),
			WorkflowID: at.WorkflowID, Problem: webhookOptional(at.Problem), Actor: at.Actor, RequestID: webhookOptional(at.RequestID),
			AttemptedAt: at.AttemptedAt.UTC()})
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) replayWebhookEvent(c *gin.Context) {
	id, ok := webhookEventID(c)
	if !ok {
		return
	}
	if s.webhooks.applier == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "platform administration is not configured"))
		return
	}
	var d bankwebhook.Delivery
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		d, err = s.webhooks.applier.Replay(c.Request.Context(), tx, id)
		return err
	})
	if err != nil {
		writeError(c, webhookError(err))
		return
	}
	if d.Outcome == bankwebhook.Undelivered {
		// The attempt is recorded (and audited FAILED); the event stays as it was.
		code, msg := "TEMPORAL_UNAVAILABLE", "the saga could not be reached; the event is unchanged, replay again later"
		if !s.webhooks.applier.Configured() {
			code, msg = "NOT_CONFIGURED", "no Temporal client is configured to deliver the event"
		}
		e := NewError(http.StatusServiceUnavailable, code, msg)
		e.Details = map[string]any{"attemptId": d.AttemptID}
		writeError(c, e)
		return
	}
	c.JSON(http.StatusOK, gin.H{"id": d.ID, "eventId": d.EventID, "attemptId": d.AttemptID, "outcome": string(d.Outcome),
		"eventOutcome": string(d.EventOutcome), "workflowId": d.WorkflowID, "problem": webhookOptional(d.Problem)})
}
