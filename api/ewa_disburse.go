package api

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/workflows"
)

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
func (s *Server) disburseEwa(c *gin.Context) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.DisburseAccepted, workflows.EwaDisburseResult]{
		Workflow:    workflows.EwaDisburseWorkflowName,
		Input:       workflows.EwaDisburseInput{TenantID: caller.Tenant, RequestID: id, ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.DisburseAcceptedUpdate, UpdateID: workflows.DisburseAcceptedUpdateID,
		Refusal: ewaRefusal,
		// An unknown id or a request another saga owns costs a database read, not a workflow. The
		// refusals are the EWA routes' own (ewaError): 404 EWA_REQUEST_NOT_FOUND, and 409
		// EWA_INVALID_STATE audited DENIED. A request claimed by this key's saga (DISBURSING,
		// DISBURSED or FAILED under its workflow id) is answered by that saga.
		Precheck: func(ctx context.Context, tx pgx.Tx) (string, error) {
			req, err := ewa.Get(ctx, tx, caller.Tenant, id)
			if err == nil && req.Status != ewa.Requested {
				err = ewa.ErrNotDisbursable
			}
			return req.WorkflowID, ewaError(ewa.ActionDisburse, id, err)
		},
		Accepted: func(wfID string, a workflows.DisburseAccepted) any {
			return disburseJSON{ID: id, Status: a.Status, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return disburseJSON{ID: id, Status: string(ewa.Disbursing), WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.EwaDisburseResult) (any, string) {
			if r.Status == workflows.ResultRefused {
				return nil, r.Code
			}
			return disburseJSON{ID: id, Status: r.Status, WorkflowID: wfID}, ""
		},
		LogAttrs: []any{"ewa_request_id", id},
	})
}

// ewaRefusal answers an EWA saga's refusal codes from internal/ewa's table.
func ewaRefusal(code string) (int, string, bool) {
	r, ok := ewa.RefusalOf(code)
	return r.Status, r.Message, ok
}
