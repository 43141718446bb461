package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/workflows"
)

// Recording an EWA repayment: the route starts the repayment saga (workflows.EwaRepay) and
// answers with its outcome; the handler itself moves no money.

// repayRefusals are the saga's refusal codes (the pre-check answers the same refusals through
// ewaError before a saga starts); each is answered as internal/ewa's table says.
var repayRefusals = map[string]bool{
	ewa.CodeRequestNotFound: true, ewa.CodeNotDisbursed: true, ewa.CodeRepaymentExceedsOutstanding: true,
}

type ewaRepaymentRequest struct {
	EwaRequestID       string `json:"ewaRequestId"`
	RepaidAmountSantim *int64 `json:"repaidAmountSantim"`
	Source             string `json:"source"`
}

// ewaRepaymentPendingJSON is the 202 answer: the repayment is reserved and its journal not yet
// in the ledger; the saga goes on, and a retry with the same key answers its outcome.
type ewaRepaymentPendingJSON struct {
	ID         string `json:"id"`
	Status     string `json:"status"` // PENDING
	WorkflowID string `json:"workflowId"`
}

// recordEwaRepayment records one repayment (whole or partial) of a disbursed request through the
// repayment saga, started with Update-with-Start under the workflow id the Idempotency-Key names:
// 200 with the request once the repayment is posted and counted (REPAID when it covers principal
// + fee), 202 when the ledger has not taken the journal yet. A request already REPAID by one
// repayment of this amount and source answers the stored request (200) and starts nothing.
func (s *Server) recordEwaRepayment(c *gin.Context) {
	id, ok := ewaRequestID(c)
	if !ok {
		return
	}
	var req ewaRepaymentRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req.EwaRequestID != id {
		writeError(c, fieldError(&field.Error{Field: "ewaRequestId", Problem: "must be the request id of the path"}))
		return
	}
	if err := validAmount("repaidAmountSantim", req.RepaidAmountSantim, money.MaxTransactionSantim); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !ewa.ValidSource(req.Source) {
		writeError(c, fieldError(&field.Error{Field: "source", Problem: "must be PAYROLL, EMPLOYER or EMPLOYEE"}))
		return
	}
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "recording a repayment needs Temporal"))
		return
	}
	caller := callerOf(c)
	amount := *req.RepaidAmountSantim
	wfID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		writeError(c, errors.New("ewa repay: no idempotency scope on an Idem route"))
		return
	}

	// Refuse what the saga would refuse before starting one — unless this key's saga already
	// reserved its repayment: then the answer is that saga's, whatever the request's state now.
	var cur ewa.Request
	var replay bool
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		p, err := ewa.RepaymentByWorkflow(ctx, tx, wfID)
		if err == nil {
			if p.RequestID != id || p.AmountSantim != amount || p.Source != req.Source {
				return errIdemKeyOtherRepayment
			}
			return nil
		}
		if !errors.Is(err, ewa.ErrNotFound) {
			return err
		}
		cur, replay, err = ewa.CheckRepayment(ctx, tx, caller.Tenant, id, amount, req.Source)
		return ewaError(ewa.ActionRecordRepayment, id, err)
	})
	if err != nil {
		s.answer(c, caller.Tenant, err)
		return
	}
	if replay {
		c.JSON(http.StatusOK, toEwaRequestJSON(cur))
		return
	}

	tc := s.deps.Temporal
	start := tc.NewWithStartWorkflowOperation(workflows.StartOptions(wfID, s.taskQueue(), caller.Tenant, id), workflows.EwaRepayWorkflowName,
		workflows.EwaRepayInput{TenantID: caller.Tenant, RequestID: id, AmountSantim: amount, Source: req.Source,
			ActorID: caller.User.ID, CorrelationID: requestID(c)})
	wait := s.deps.DisburseWait
	if wait <= 0 {
		wait = DefaultSagaWait
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
	defer cancel()
	var acc workflows.RepayAccepted
	h, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateID: workflows.RepayAcceptedUpdateID, UpdateName: workflows.RepayAcceptedUpdate,
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		err = h.Get(ctx, &acc)
	}
	switch {
	case err == nil:
		s.repaymentAnswer(c, id, acc.Status, acc.Request, wfID)
	case ctx.Err() != nil && c.Request.Context().Err() == nil:
		s.deps.Log.Warn("ewa repayment: answered before the saga recorded it", "workflow_id", wfID, "request_id", requestID(c), "ewa_request_id", id)
		c.JSON(http.StatusAccepted, ewaRepaymentPendingJSON{ID: id, Status: workflows.RepayPending, WorkflowID: wfID})
	case isWorkflowClosed(err):
		s.closedRepayment(c, wfID, id)
	default:
		s.repaymentRefused(c, wfID, id, err)
	}
}

var errIdemKeyOtherRepayment = NewError(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED",
	"this Idempotency-Key recorded another repayment; use a new key")

// repaymentAnswer answers a saga's accepted repayment: 200 with the request once recorded, 202
// while its journal is pending.
func (s *Server) repaymentAnswer(c *gin.Context, id, status string, r ewa.Request, wfID string) {
	if status == workflows.RepayRecorded {
		c.JSON(http.StatusOK, toEwaRequestJSON(r))
		return
	}
	c.JSON(http.StatusAccepted, ewaRepaymentPendingJSON{ID: id, Status: workflows.RepayPending, WorkflowID: wfID})
}

// repaymentRefused answers the saga's refusal with its code (an overpayment with what is still
// outstanding); any other error is the saga's failure.
func (s *Server) repaymentRefused(c *gin.Context, wfID, id string, err error) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if repayRefusals[app.Type()] {
			var outstanding int64
			if app.HasDetails() {
				_ = app.Details(&outstanding)
			}
			s.repaymentRefusal(c, wfID, id, app.Type(), outstanding)
			return
		}
	}
	writeError(c, err)
}

func (s *Server) repaymentRefusal(c *gin.Context, wfID, id, code string, outstanding int64) {
	s.deps.Log.Info("ewa repayment refused", "code", code, "workflow_id", wfID, "request_id", requestID(c), "ewa_request_id", id)
	r, _ := ewa.RefusalOf(code)
	e := NewError(r.Status, code, r.Message)
	if code == ewa.CodeRepaymentExceedsOutstanding {
		e.Details = map[string]int64{"outstandingSantim": outstanding}
	}
	writeError(c, e)
}

// closedRepayment answers from the finished saga's result (the idempotency record expired, or
// was never stored: a crash between the saga's start and the stored answer).
func (s *Server) closedRepayment(c *gin.Context, wfID, id string) {
	var res workflows.EwaRepayResult
	if err := s.deps.Temporal.GetWorkflow(c.Request.Context(), wfID, "").Get(c.Request.Context(), &res); err != nil {
		writeError(c, err)
		return
	}
	if res.RequestID != id {
		writeError(c, errIdemKeyOtherRepayment)
		return
	}
	switch res.Status {
	case workflows.RepayRecorded:
		c.JSON(http.StatusOK, toEwaRequestJSON(res.Request))
		return
	case workflows.RepayRefused:
		if repayRefusals[res.Code] {
			s.repaymentRefusal(c, wfID, id, res.Code, res.OutstandingSantim)
			return
		}
	}
	writeError(c, errors.New("ewa repay: the saga ended "+res.Status+" "+res.Code))
}
