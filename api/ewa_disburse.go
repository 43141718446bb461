package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/workflows"
)

// DefaultDisburseWait bounds how long the disburse call waits for the saga to pass its gates and
// initiate the transfer. The gates answer in milliseconds; a partner that does not answer in time
// leaves the saga retrying, and the call answers 202 DISBURSING with the saga still at work (the
// spec's "fails fast into a pending state that resolves later").
const DefaultDisburseWait = 15 * time.Second

type disburseJSON struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	WorkflowID string `json:"workflowId"`
}

// disburseEwa starts the disburse saga with Update-with-Start: one round trip starts the workflow
// (or attaches to the one this Idempotency-Key started) and waits for its "accepted" update, which
// completes once the KYC, sanctions and account-lookup gates have passed and the partner transfer
// is initiated — or with the gate's refusal, which is answered here with its code. The route is
// Idem, so a retry with the same key gets the stored answer; a second key for the same request
// reaches a saga that refuses it (EWA_INVALID_STATE) because the first one claimed it.
func (s *Server) disburseEwa(c *gin.Context) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "disbursing needs Temporal"))
		return
	}
	caller := callerOf(c)
	wfID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		writeError(c, errors.New("ewa disburse: no idempotency scope on an Idem route"))
		return
	}

	// Refuse what the saga would refuse before starting one: an unknown id or a request another
	// saga owns costs a database read, not a workflow.
	// The refusals are the EWA routes' own (ewaError): 404 EWA_REQUEST_NOT_FOUND, and 409
	// EWA_INVALID_STATE audited DENIED.
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		req, err := ewa.Get(ctx, tx, caller.Tenant, id)
		if err == nil && req.Status != ewa.Requested && (req.Status != ewa.Disbursing || req.WorkflowID != wfID) {
			err = ewa.ErrNotDisbursable
		}
		return ewaError(ewa.ActionDisburse, id, err)
	})
	if err != nil {
		s.answer(c, caller.Tenant, err)
		return
	}

	tc := s.deps.Temporal
	opts := workflows.StartOptions(wfID, s.taskQueue(), caller.Tenant, id)
	start := tc.NewWithStartWorkflowOperation(opts, workflows.EwaDisburseWorkflowName, workflows.EwaDisburseInput{
		TenantID: caller.Tenant, RequestID: id, ActorID: caller.User.ID, CorrelationID: requestID(c),
	})
	wait := s.deps.DisburseWait
	if wait <= 0 {
		wait = DefaultDisburseWait
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
	defer cancel()
	var acc workflows.DisburseAccepted
	h, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateID:     workflows.DisburseAcceptedUpdateID,
			UpdateName:   workflows.DisburseAcceptedUpdate,
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		err = h.Get(ctx, &acc)
	}
	if err != nil {
		s.disburseFailed(c, ctx, wfID, id, err)
		return
	}
	c.JSON(http.StatusAccepted, disburseJSON{ID: id, Status: acc.Status, WorkflowID: wfID})
}

// disburseFailed answers a disburse whose update did not complete with an acceptance.
func (s *Server) disburseFailed(c *gin.Context, ctx context.Context, wfID, id string, err error) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		// The saga's refusals are answered from internal/ewa's table of codes: the saga's own
		// message carries internal detail (activity error text), so the caller gets the fixed one.
		if r, ok := ewa.RefusalOf(app.Type()); ok {
			s.deps.Log.Info("ewa disburse refused", "code", app.Type(), "workflow_id", wfID, "request_id", requestID(c), "ewa_request_id", id)
			writeError(c, NewError(r.Status, r.Code, r.Message))
			return
		}
	}
	switch {
	case ctx.Err() != nil && c.Request.Context().Err() == nil:
		// The saga is started and still working (a slow or unreachable partner): it resolves
		// later; the caller follows it on GET /api/ewa/requests/<id>.
		s.deps.Log.Warn("ewa disburse: accepted before the transfer was confirmed initiated",
			"workflow_id", wfID, "request_id", requestID(c), "ewa_request_id", id)
		c.JSON(http.StatusAccepted, disburseJSON{ID: id, Status: string(ewa.Disbursing), WorkflowID: wfID})
		return
	case isWorkflowClosed(err):
		// The saga this key started has finished (the idempotency record expired, or it ended
		// before the update landed): its result is the answer.
		s.closedDisburse(c, wfID, id)
		return
	}
	writeError(c, err)
}

// isWorkflowClosed reports an update that found its workflow closed: the start was refused
// because the id was used by a run that has ended (REJECT_DUPLICATE), or the update reached a run
// that had already completed.
func isWorkflowClosed(err error) bool {
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	var nf *serviceerror.NotFound
	return errors.As(err, &started) || errors.As(err, &nf)
}

// closedDisburse answers from the finished saga's result.
func (s *Server) closedDisburse(c *gin.Context, wfID, id string) {
	var res workflows.EwaDisburseResult
	if err := s.deps.Temporal.GetWorkflow(c.Request.Context(), wfID, "").Get(c.Request.Context(), &res); err != nil {
		writeError(c, err)
		return
	}
	if r, ok := ewa.RefusalOf(res.Code); ok && res.Status == workflows.ResultRefused {
		writeError(c, NewError(r.Status, r.Code, r.Message))
		return
	}
	c.JSON(http.StatusAccepted, disburseJSON{ID: id, Status: res.Status, WorkflowID: wfID})
}

func (s *Server) taskQueue() string {
	if s.deps.TaskQueue != "" {
		return s.deps.TaskQueue
	}
	return workflows.DefaultTaskQueue
}
