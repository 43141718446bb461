package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// The spec's dead-letter admin controller ("Events": events that exhaust their retries land in a
// dead-letter table; an admin controller lists them and requeues them). A dead letter is one
// consumer's delivery of one event (internal/platform/outbox). Both routes are the platform's
// and go through the audited cross-tenant path (CrossTenantAccess); a requeue is also audited
// OutboxEventRequeued per dead letter, under the event's tenant, with the admin as actor.

// deadLetterRoutes serves the platform's view of the outbox's dead letters.
func (s *Server) deadLetterRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/admin/outbox/dead-letters", Auth: Platform, Summary: "Outbox dead letters (filtered, paged)", Handler: s.listDeadLetters},
		{Method: http.MethodPost, Path: "/api/admin/outbox/dead-letters/requeue", Auth: Platform, Summary: "Requeue outbox dead letters to their consumers", Handler: s.requeueDeadLetters},
	}
}

// maxRequeue bounds one requeue: as many dead letters as one page lists.
const maxRequeue = maxPage

// deadLetterJSON is one dead letter.
type deadLetterJSON struct {
	ID         int64           `json:"id"`
	EventID    string          `json:"eventId"`
	Consumer   string          `json:"consumer"`
	Type       string          `json:"type"`
	TenantID   string          `json:"tenantId"`
	OccurredAt time.Time       `json:"occurredAt"`
	Payload    json.RawMessage `json:"payload"`
	Attempts   int             `json:"attempts"`
	LastError  string          `json:"lastError"`
	CreatedAt  time.Time       `json:"createdAt"`
	DeadAt     time.Time       `json:"deadAt"`
}

func toDeadLetterJSON(d outbox.DeadLetter) deadLetterJSON {
	return deadLetterJSON{ID: d.Seq, EventID: d.ID, Consumer: d.Consumer, Type: d.Type, TenantID: d.TenantID,
		OccurredAt: d.OccurredAt.UTC(), Payload: d.Payload, Attempts: d.Attempts, LastError: d.LastError,
		CreatedAt: d.CreatedAt.UTC(), DeadAt: d.DeadAt.UTC()}
}

// deadLetterFilters are the list's query parameters.
var deadLetterFilters = map[string]bool{"limit": true, "cursor": true, "consumer": true, "type": true, "tenantId": true, "from": true, "to": true}

// deadLetterQuery reads the list's query: each parameter at most once, none unknown.
func deadLetterQuery(c *gin.Context) (outbox.DeadLetterQuery, *Error) {
	q := c.Request.URL.Query()
	var f outbox.DeadLetterQuery
	limit, after, e := seqListQuery(q, deadLetterFilters)
	if e != nil {
		return f, e
	}
	f.Limit, f.After = limit+1, after
	if q.Has("consumer") {
		f.Consumer = q.Get("consumer")
		if f.Consumer != outbox.LegacyConsumer && !outbox.ValidConsumerName(f.Consumer) {
			return f, fieldError(&field.Error{Field: "consumer", Problem: "must be a consumer's name (1 to 64 of a-z, 0-9, '_' and '-', starting with a letter) or *"})
		}
	}
	if q.Has("type") {
		f.Type = q.Get("type")
		if outbox.ValidType(f.Type) != nil {
			return f, fieldError(&field.Error{Field: "type", Problem: "must be an event type such as ewa.disbursed.v1"})
		}
	}
	if q.Has("tenantId") {
		f.TenantID = q.Get("tenantId")
		if err := field.Identifier("tenantId", f.TenantID, 0); err != nil {
			return f, fieldError(err)
		}
	}
	f.DeadFrom, f.DeadTo, e = timeWindow(q)
	if e != nil {
		return f, e
	}
	return f, nil
}

func (s *Server) listDeadLetters(c *gin.Context) {
	q, e := deadLetterQuery(c)
	if e != nil {
		writeError(c, e)
		return
	}
	answerPlatformPage(s, c, q.Limit-1, func(ctx context.Context, tx pgx.Tx) ([]outbox.DeadLetter, error) {
		return outbox.ListDeadLetters(ctx, tx, q)
	}, func(d outbox.DeadLetter) string { return strconv.FormatInt(d.Seq, 10) }, toDeadLetterJSON)
}

// requeueBody names the dead letters to requeue.
type requeueBody struct {
	IDs []int64 `json:"ids"`
}

func (s *Server) requeueDeadLetters(c *gin.Context) {
	var in requeueBody
	if e := bindJSON(c, &in); e != nil {
		writeError(c, e)
		return
	}
	if len(in.IDs) == 0 || len(in.IDs) > maxRequeue {
		writeError(c, fieldError(&field.Error{Field: "ids", Problem: "must name 1 to 100 dead letters"}))
		return
	}
	seen := make(map[int64]bool, len(in.IDs))
	for _, id := range in.IDs {
		switch {
		case id < 1:
			writeError(c, fieldError(&field.Error{Field: "ids", Problem: "must be dead letters' ids (positive whole numbers)"}))
			return
		case seen[id]:
			writeError(c, fieldError(&field.Error{Field: "ids", Problem: "must name each dead letter once"}))
			return
		}
		seen[id] = true
	}
	var back []outbox.DeadLetter
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		back, err = outbox.RequeueDeadLetters(c.Request.Context(), tx, in.IDs)
		return err
	})
	var missing *outbox.MissingDeadLetters
	if errors.As(err, &missing) {
		e := NewError(http.StatusNotFound, "NOT_FOUND", "no such dead letter; nothing was requeued")
		e.Details = map[string]any{"missing": missing.Seqs}
		writeError(c, e)
		return
	}
	if errors.Is(err, outbox.ErrInFlight) {
		writeError(c, NewError(http.StatusConflict, "OUTBOX_EVENT_IN_FLIGHT", "an event of these dead letters is being delivered; nothing was requeued, try again shortly"))
		return
	}
	if errors.Is(err, outbox.ErrGroupRetired) {
		writeError(c, NewError(http.StatusConflict, "OUTBOX_GROUP_RETIRED", "a dead letter's relay group is retired, so no relay would deliver it; nothing was requeued"))
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	items := make([]deadLetterJSON, 0, len(back))
	for _, d := range back {
		items = append(items, toDeadLetterJSON(d))
	}
	c.JSON(http.StatusOK, gin.H{"requeued": items})
}
