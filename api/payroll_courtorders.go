package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/workflows"
)

// POST /api/payroll/<id>/report.court-orders/submit: the run's court-order withholding remitted
// to each payee account through the remittance saga (workflows/payroll_courtorders.go), one
// transfer per payee, each exactly once (internal/payroll/courtorder_remit.go: one claimed row per
// run and payee). Idem, payroll.approve, audited SubmitCourtOrderRemit (DENIED on a refusal,
// SUCCESS or FAILED per payee once its transfer is final).

func (s *Server) payrollCourtOrderRoutes() []Route {
	return []Route{payrollMoneyRoute("/api/payroll/:id/report.court-orders/submit",
		"Remit a payroll run's court-order withholding to each payee (the remittance saga)", s.submitCourtOrderRemit)}
}

// courtOrderRemitJSON is one payee's remittance.
type courtOrderRemitJSON struct {
	PayeePartner       string     `json:"payeePartner"`
	PayeeAccountNumber string     `json:"payeeAccountNumber"`
	PayeeHolderName    string     `json:"payeeHolderName"`
	Orders             int        `json:"orders"`
	AmountSantim       int64      `json:"amountSantim"`
	Status             string     `json:"status"`
	Attempt            int        `json:"attempt"`
	PartnerReference   string     `json:"partnerReference"`
	TransferID         *string    `json:"transferId"`
	FailureReason      *string    `json:"failureReason"`
	RemittedAt         *time.Time `json:"remittedAt"`
}

// courtOrderSubmitJSON answers the submit: this submit's remittances and their overall status
// (REMITTING, REMITTED, PARTIALLY_REMITTED, FAILED).
type courtOrderSubmitJSON struct {
	RunID       string                `json:"runId"`
	Status      string                `json:"status"`
	WorkflowID  string                `json:"workflowId"`
	Remittances []courtOrderRemitJSON `json:"remittances"`
}

func toCourtOrderSubmitJSON(runID, status, wfID string, rems []payroll.CourtOrderRemittance) (int, any) {
	out := courtOrderSubmitJSON{RunID: runID, Status: status, WorkflowID: wfID, Remittances: []courtOrderRemitJSON{}}
	for _, r := range rems {
		out.Remittances = append(out.Remittances, courtOrderRemitJSON{PayeePartner: r.Payee.Partner, PayeeAccountNumber: r.Payee.AccountNumber,
			PayeeHolderName: r.Payee.HolderName, Orders: r.Orders, AmountSantim: r.AmountSantim, Status: r.Status, Attempt: r.Attempt,
			PartnerReference: r.Reference, TransferID: r.TransferID, FailureReason: r.FailureReason, RemittedAt: utcPtr(r.RemittedAt)})
	}
	if status == workflows.CourtRemitRemitting {
		return http.StatusAccepted, out
	}
	return http.StatusOK, out
}

// submitCourtOrderRemit starts (or reaches) the key's remittance saga and answers 200 with each
// payee's outcome once every transfer is final, or 202 while one is on its way. The pre-check
// refuses in the database what the saga would, unless this key's saga already holds payees of
// the run: an unknown run (404), a run whose figures are not settled (409
// PAYROLL_COURT_ORDERS_RUN_NOT_SETTLED), nothing withheld (409
// PAYROLL_COURT_ORDERS_NOTHING_TO_REMIT), every payee remitted or being remitted by another
// submit (409 PAYROLL_COURT_ORDERS_ALREADY_REMITTED), no payroll account (409
// PAYROLL_ACCOUNT_NOT_SET); each but the 404 audited DENIED.
func (s *Server) submitCourtOrderRemit(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	wfID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		writeError(c, errors.New("court-order submit: no idempotency scope on an Idem route"))
		return
	}
	if _, ok := inTenantAudited(s, c, payroll.ActionSubmitCourtOrderRemit, payroll.TargetRun, id, func(ctx context.Context, tx db.BunTx) (bool, error) {
		return payroll.CheckCourtOrderRemit(ctx, tx, id, wfID)
	}); !ok {
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.PayrollCourtRemitAccepted, workflows.PayrollCourtRemitResult]{
		Workflow: workflows.PayrollCourtRemitWorkflowName,
		Input: workflows.PayrollCourtRemitInput{TenantID: caller.Tenant, RunID: id, ActorID: caller.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.PayrollCourtRemitAcceptedUpdate, UpdateID: workflows.PayrollCourtRemitAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return courtRemitRefusal(app.Type()) },
		Accepted: func(wfID string, a workflows.PayrollCourtRemitAccepted) (int, any) {
			return toCourtOrderSubmitJSON(id, a.Status, wfID, a.Remittances)
		},
		Pending: func(wfID string) any {
			return courtOrderSubmitJSON{RunID: id, Status: workflows.CourtRemitRemitting, WorkflowID: wfID, Remittances: []courtOrderRemitJSON{}}
		},
		Closed: func(wfID string, r workflows.PayrollCourtRemitResult) (int, any, error) {
			if r.RunID != id {
				return 0, nil, errIdemKeyOtherRun
			}
			if r.Status == workflows.RemitRefused {
				if e, ok := courtRemitRefusal(r.Code); ok {
					return 0, nil, e
				}
			}
			if len(r.Remittances) == 0 {
				return 0, nil, errors.New("court-order submit: the saga ended " + r.Status + " " + r.Code)
			}
			status, body := toCourtOrderSubmitJSON(id, r.Status, wfID, r.Remittances)
			return status, body, nil
		},
		LogAttrs: []any{"payroll_run_id", id},
	})
}

// courtRemitRefusal is the answer to the saga's refusal code (ok false for another code).
func courtRemitRefusal(code string) (*Error, bool) {
	return sagaRefusal(payroll.CourtRemitRefusalOf(code))
}

var errIdemKeyOtherRun = keyReused("submitted another payroll run's court orders")
