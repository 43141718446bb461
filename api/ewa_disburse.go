package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/workflows"
)

// disburseJSON is a disburse saga's answer (the EWA request's, the loan's): the row, its status
// and the saga's workflow id.
type disburseJSON struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	WorkflowID string `json:"workflowId"`
}

// disburseEwa starts the disburse saga through runSaga (api/saga.go): it answers once the KYC,
// sanctions and account-lookup gates have passed and the partner transfer is initiated, or with
// the gate's refusal. The route is Idem, so a retry with the same key gets the stored answer, and
// when none was stored (a crash before the answer) the answer of the saga the key names; a second
// key for the same request is refused (EWA_INVALID_STATE) because the first one's saga claimed it.
// A key whose saga claimed, or answered, another request (its idempotency record expired, and the
// key is sent again for a new request), is 422 IDEMPOTENCY_KEY_REUSED: that
// saga's answer is no answer to this request, and nothing starts.
func (s *Server) disburseEwa(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.DisburseAccepted, workflows.EwaDisburseResult]{
		Workflow: workflows.EwaDisburseWorkflowName,
		Input: workflows.EwaDisburseInput{TenantID: caller.Tenant, RequestID: id, ActorID: caller.User.ID, CorrelationID: requestID(c),
			Shape: workflows.EwaShapeLeaveTimer},
		BusinessKey: id,
		Update:      workflows.DisburseAcceptedUpdate, UpdateID: workflows.DisburseAcceptedUpdateID,
		Refused:   func(app *temporal.ApplicationError) (*Error, bool) { return ewaRefusal(app.Type()) },
		KeyReused: errIdemKeyOtherEwaRequest,
		// An unknown id or a request another saga owns costs a database read, not a workflow. The
		// refusals are the EWA routes' own (ewaError): 404 EWA_REQUEST_NOT_FOUND, and 409
		// EWA_INVALID_STATE audited DENIED. A request claimed by this key's saga (DISBURSING,
		// DISBURSED or FAILED under its workflow id) is answered by that saga; a key whose saga
		// claimed another request is refused.
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			if own, ok, err := ewa.ByWorkflow(ctx, tx, wfID); err != nil || ok {
				if ok && !own.Answers(id) {
					// The key's saga disbursed another request (its idempotency record has
					// expired since): that request is no answer to this one.
					return sagaPrecheck{}, errIdemKeyOtherEwaRequest
				}
				return sagaPrecheck{Owner: own.WorkflowID}, err
			}
			req, err := ewa.Get(ctx, tx, caller.Tenant, id)
			if err == nil && req.Status != ewa.Requested {
				err = ewa.ErrNotDisbursable
			}
			return sagaPrecheck{Owner: req.WorkflowID}, ewaError(ewa.ActionDisburse, id, err)
		},
		Accepted: func(wfID string, a workflows.DisburseAccepted) (int, any) {
			if a.RequestID != id {
				return keyReusedAnswer(c, errIdemKeyOtherEwaRequest) // the key's saga's answer to another request
			}
			return http.StatusAccepted, disburseJSON{ID: id, Status: a.Status, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return disburseJSON{ID: id, Status: string(ewa.Disbursing), WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.EwaDisburseResult) (int, any, error) {
			if r.RequestID != id {
				return 0, nil, errIdemKeyOtherEwaRequest // the key's saga ended with another request
			}
			if r.Status != workflows.ResultRefused {
				return http.StatusAccepted, disburseJSON{ID: id, Status: r.Status, WorkflowID: wfID}, nil
			}
			if e, ok := ewaRefusal(r.Code); ok {
				return 0, nil, e
			}
			return 0, nil, errors.New("ewa disburse: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"ewa_request_id", id},
	})
}

var errIdemKeyOtherEwaRequest = keyReused("disbursed another request")

// ewaRefusal is the answer to an EWA saga's refusal code, from internal/ewa's table; ok is false
// for a code that is not EWA's.
func ewaRefusal(code string) (*Error, bool) {
	return sagaRefusal(ewa.RefusalOf(code))
}
