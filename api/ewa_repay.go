package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/workflows"
)

// Recording an EWA repayment: the route starts the repayment saga (workflows.EwaRepay) and
// answers with its outcome; the handler itself moves no money.

// repayRefusals are the saga's refusal codes (the pre-check answers the same refusals through
// ewaError before a saga starts); each is answered as internal/ewa's table says.
var repayRefusals = map[string]bool{
	ewa.CodeRequestNotFound: true, ewa.CodeNotDisbursed: true, ewa.CodeRepaymentExceedsOutstanding: true,
	ewa.CodeRecoveryInOpenRun: true,
}

type ewaRepaymentRequest struct {
	EwaRequestID       string `json:"ewaRequestId"`
	RepaidAmountSantim *int64 `json:"repaidAmountSantim"`
	Source             string `json:"source"`
}

// ewaRepaymentPendingJSON is the 202 answer: the repayment is reserved and its journal not yet
// in the ledger; the saga goes on, and the request shows the repayment once it is recorded.
type ewaRepaymentPendingJSON struct {
	ID         string `json:"id"`
	Status     string `json:"status"` // PENDING
	WorkflowID string `json:"workflowId"`
}

// recordEwaRepayment records one repayment (whole or partial) of a disbursed request through the
// repayment saga, started by runSaga (api/saga.go) under the workflow id the Idempotency-Key names:
// 200 with the request once the repayment is posted and counted (REPAID when it covers principal
// + fee), 202 when the ledger has not taken the journal yet. A request already REPAID by one
// repayment of this amount and source answers the stored request (200) and starts nothing.
func (s *Server) recordEwaRepayment(c *gin.Context) {
	id, ok := pathID(c)
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
	caller := callerOf(c)
	amount := *req.RepaidAmountSantim
	runSaga(s, c, sagaCall[workflows.RepayAccepted, workflows.EwaRepayResult]{
		Workflow: workflows.EwaRepayWorkflowName,
		Input: workflows.EwaRepayInput{TenantID: caller.Tenant, RequestID: id, AmountSantim: amount, Source: req.Source,
			ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.RepayAcceptedUpdate, UpdateID: workflows.RepayAcceptedUpdateID,
		// Refuse what the saga would refuse before starting one — unless this key's saga already
		// reserved its repayment: then the answer is that saga's, whatever the request's state now.
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			p, err := ewa.RepaymentByWorkflow(ctx, tx, wfID)
			if err == nil {
				if p.RequestID != id || p.AmountSantim != amount || p.Source != req.Source {
					return sagaPrecheck{}, errIdemKeyOtherRepayment
				}
				return sagaPrecheck{Owner: wfID}, nil
			}
			if !errors.Is(err, ewa.ErrNotFound) {
				return sagaPrecheck{}, err
			}
			cur, replay, err := ewa.CheckRepayment(ctx, tx, caller.Tenant, id, amount, req.Source)
			if err == nil && replay {
				return sagaPrecheck{Done: &sagaAnswer{http.StatusOK, toEwaRequestJSON(cur)}}, nil
			}
			return sagaPrecheck{}, ewaError(ewa.ActionRecordRepayment, id, err)
		},
		Refused: func(app *temporal.ApplicationError) (*Error, bool) {
			if !repayRefusals[app.Type()] {
				return nil, false
			}
			var outstanding int64
			if app.HasDetails() {
				_ = app.Details(&outstanding)
			}
			return repaymentRefusal(app.Type(), outstanding), true
		},
		Accepted: func(wfID string, a workflows.RepayAccepted) (int, any) {
			if a.Status == workflows.RepayRecorded {
				return http.StatusOK, toEwaRequestJSON(a.Request)
			}
			return http.StatusAccepted, ewaRepaymentPendingJSON{ID: id, Status: workflows.RepayPending, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return ewaRepaymentPendingJSON{ID: id, Status: workflows.RepayPending, WorkflowID: wfID}
		},
		Closed: func(_ string, res workflows.EwaRepayResult) (int, any, error) {
			if res.RequestID != id {
				return 0, nil, errIdemKeyOtherRepayment
			}
			switch {
			case res.Status == workflows.RepayRecorded:
				return http.StatusOK, toEwaRequestJSON(res.Request), nil
			case res.Status == workflows.RepayRefused && repayRefusals[res.Code]:
				return 0, nil, repaymentRefusal(res.Code, res.OutstandingSantim)
			}
			return 0, nil, errors.New("ewa repay: the saga ended " + res.Status + " " + res.Code)
		},
		LogAttrs: []any{"ewa_request_id", id},
	})
}

var errIdemKeyOtherRepayment = keyReused("recorded another repayment")

// repaymentRefusal is the answer to a refusal of the repayment saga (an overpayment with what is
// still outstanding).
func repaymentRefusal(code string, outstanding int64) *Error {
	r, _ := ewa.RefusalOf(code)
	e := NewError(r.Status, code, r.Message)
	if code == ewa.CodeRepaymentExceedsOutstanding {
		e.Details = map[string]int64{"outstandingSantim": outstanding}
	}
	return e
}
