package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// DisputeStarter is the outbox consumer that makes a dispute's open durable (registered by the
// worker for dispute.opened.v1, which disputes.Open writes in the dispute's own transaction, a
// reopen's successor included): it starts the dispute's workflow unless it exists. The API starts
// the workflow right after the commit; a start that failed there (Temporal unreachable, the API
// stopped between the commit and the start) is made here, retried by the relay until it takes.
// The dispute is read from the database, so a dispute decided meanwhile is left alone.
type DisputeStarter struct {
	DB        *pgxpool.Pool // the runtime role's pool
	Temporal  client.Client
	TaskQueue string
}

// DisputeStarterConsumer is the consumer's name (its delivery state and dead letters).
const DisputeStarterConsumer = "dispute-workflow-start"

// Name is the consumer's name.
func (s *DisputeStarter) Name() string { return DisputeStarterConsumer }

// Subscription is the consumer's row of the worker's table of consumers.
func (s *DisputeStarter) Subscription() outbox.Subscription {
	return outbox.Subscription{EventType: disputes.EventTypeOpened, Consumer: s}
}

// Consume starts the event's dispute's workflow (the same id, input and search attributes as the
// API's start; an existing run, running or closed, is the answer).
func (s *DisputeStarter) Consume(ctx context.Context, e outbox.Event) error {
	var p struct {
		DisputeID string `json:"disputeId"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil || e.TenantID == "" || p.DisputeID == "" {
		return fmt.Errorf("workflows.dispute_start: event %s names no dispute", e.ID)
	}
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: e.TenantID, Actor: tenancy.System(DisputeStarterConsumer), RequestID: e.ID})
	var d disputes.Dispute
	err := tenancy.InTx(ctx, s.DB, func(tx pgx.Tx) (err error) {
		d, err = disputes.Get(ctx, tx, p.DisputeID)
		return err
	})
	if err != nil {
		return fmt.Errorf("workflows.dispute_start: %s: %w", p.DisputeID, err)
	}
	if !d.Status.Open() {
		return nil // decided (its workflow ran) or reopened: nothing to work
	}
	in := DisputeInput{TenantID: d.TenantID, DisputeID: d.ID, LedgerTransactionID: d.LedgerTransactionID, SLADeadline: d.SLADeadline, CorrelationID: e.ID}
	_, err = s.Temporal.ExecuteWorkflow(ctx, StartOptions(d.WorkflowID, s.TaskQueue, d.TenantID, d.ID), DisputeWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("workflows.dispute_start: %s: %w", d.ID, err)
	}
	return nil
}
