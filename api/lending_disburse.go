package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/workflows"
)

// The loan disbursement route (POST /api/loans/<id>/disburse, Idem, business admins): the loan
// disbursement saga (workflows/loan_disburse.go) through runSaga, as the EWA disburse route is.

// loanDisburseJSON is the loan disbursement saga's answer: the loan, its status and the saga's
// workflow id, as the EWA disburse route answers.
type loanDisburseJSON = disburseJSON

// disburseLoan starts the saga and answers once the KYC, sanctions and account-lookup gates have
// passed and the transfer FI funding → borrower is initiated (202 DISBURSING), or with the
// refusal from internal/lending's table of codes. The pre-check answers an unknown loan (404
// LOAN_NOT_FOUND) and a loan that is not APPROVED (409 LOAN_INVALID_STATE, audited DENIED
// DisburseLoan) from the database — unless the loan is held or was paid out by the saga this
// key names, whose answer is then the answer (a retry after a crash that lost the stored one). A
// key whose saga claimed, or answered, another loan (its idempotency record expired, and the key
// is sent again for a new loan), is 422 IDEMPOTENCY_KEY_REUSED: that saga's
// answer is no answer to this loan, and nothing starts.
func (s *Server) disburseLoan(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.LoanDisburseAccepted, workflows.LoanDisburseResult]{
		Workflow:    workflows.LoanDisburseWorkflowName,
		Input:       workflows.LoanDisburseInput{TenantID: caller.Tenant, LoanID: id, ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.LoanDisburseAcceptedUpdate, UpdateID: workflows.LoanDisburseAcceptedUpdateID,
		Refused:   func(app *temporal.ApplicationError) (*Error, bool) { return lendingRefusal(app.Type()) },
		KeyReused: errIdemKeyOtherLoanDisbursement,
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			d, err := lending.GetDisbursement(ctx, tx, id)
			if d.WorkflowID != wfID {
				own, ok, oerr := lending.DisbursementByWorkflow(ctx, tx, wfID)
				if oerr != nil {
					return sagaPrecheck{}, oerr
				}
				if ok && !own.Answers(id) {
					// The key's saga disbursed another loan (its idempotency record has expired
					// since): that loan is no answer to this one.
					return sagaPrecheck{}, errIdemKeyOtherLoanDisbursement
				}
			}
			if err == nil && d.Status != lending.LoanApproved {
				_, err = lending.LoanMachine.Next("disbursing", d.Status)
			}
			if err != nil {
				return sagaPrecheck{Owner: d.WorkflowID}, s.loanDisburseRefusal(id, err)
			}
			return sagaPrecheck{Owner: d.WorkflowID}, nil
		},
		Accepted: func(wfID string, a workflows.LoanDisburseAccepted) (int, any) {
			if a.LoanID != id {
				return keyReusedAnswer(c, errIdemKeyOtherLoanDisbursement) // the key's saga's answer to another loan
			}
			return http.StatusAccepted, loanDisburseJSON{ID: id, Status: a.Status, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return loanDisburseJSON{ID: id, Status: lending.LoanDisbursing, WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.LoanDisburseResult) (int, any, error) {
			if r.LoanID != id {
				return 0, nil, errIdemKeyOtherLoanDisbursement // the key's saga ended with another loan
			}
			if r.Status != workflows.LoanDisburseRefused {
				return http.StatusAccepted, loanDisburseJSON{ID: id, Status: r.Status, WorkflowID: wfID}, nil
			}
			if e, ok := lendingRefusal(r.Code); ok {
				return 0, nil, e
			}
			return 0, nil, errors.New("loan disburse: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"loan_id", id},
	})
}

var errIdemKeyOtherLoanDisbursement = keyReused("disbursed another loan")

// loanDisburseRefusal is the pre-check's refusal: a state refusal audited DENIED DisburseLoan on
// the loan (a not-found is not audited: it names nothing of the tenant's), answered from the
// table of codes with the store's details.
func (s *Server) loanDisburseRefusal(id string, err error) error {
	r, ok := lending.RefusalOf(lending.CodeOf(err))
	if !ok {
		return err
	}
	e := NewError(r.Status, r.Code, r.Message)
	if pr := (*payroll.Refusal)(nil); errors.As(err, &pr) && pr.Details != nil {
		e.Details = pr.Details
	}
	if r.Status == http.StatusNotFound {
		return e
	}
	return &refusal{err: e, entry: audit.Entry{Action: lending.ActionDisburseLoan, Outcome: audit.Denied, TargetType: "Loan",
		TargetID: id, Details: map[string]string{"code": r.Code}}}
}

// lendingRefusal is the answer to a lending saga's refusal code, from internal/lending's table;
// ok is false for a code that is not lending's.
func lendingRefusal(code string) (*Error, bool) {
	return sagaRefusal(lending.RefusalOf(code))
}
