package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/workflows"
)

// loanRemittanceJSON is an instalment's remittance to the FI.
type loanRemittanceJSON struct {
	LoanID           string     `json:"loanId"`
	Index            int        `json:"index"`
	FIPartnerID      string     `json:"fiPartnerId"`
	Attempt          int        `json:"attempt"`
	Status           string     `json:"status"`
	AmountSantim     int64      `json:"amountSantim"`
	Partner          string     `json:"partner"`
	PartnerReference string     `json:"partnerReference"`
	LedgerTxID       *string    `json:"ledgerTxId"`
	TransferID       *string    `json:"transferId"`
	FailureReason    *string    `json:"failureReason"`
	WorkflowID       string     `json:"workflowId"`
	CreatedAt        time.Time  `json:"createdAt"`
	UpdatedAt        time.Time  `json:"updatedAt"`
	RemittedAt       *time.Time `json:"remittedAt"`
}

func toLoanRemittanceJSON(r lending.Remittance) loanRemittanceJSON {
	out := loanRemittanceJSON{LoanID: r.LoanID, Index: r.Index, FIPartnerID: r.FIID, Attempt: r.Attempt, Status: r.Status,
		AmountSantim: r.AmountSantim, Partner: r.To.Partner, PartnerReference: r.Reference, WorkflowID: r.WorkflowID,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), RemittedAt: utcPtr(r.RemittedAt)}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&out.LedgerTxID, r.LedgerTxID}, {&out.TransferID, r.TransferID}, {&out.FailureReason, r.FailureReason}} {
		if f.v != "" {
			v := f.v
			*f.dst = &v
		}
	}
	return out
}

// remittanceAnswer is a remittance as the route's answer: 200 once final (REMITTED, FAILED), 202
// while the transfer is on its way.
func remittanceAnswer(r lending.Remittance) (int, any) {
	if r.Status == lending.RemitRemitting {
		return http.StatusAccepted, toLoanRemittanceJSON(r)
	}
	return http.StatusOK, toLoanRemittanceJSON(r)
}

// loanRemittancePendingJSON is the 202 answer when the saga has not answered in time.
type loanRemittancePendingJSON struct {
	LoanID     string `json:"loanId"`
	Index      int    `json:"index"`
	Status     string `json:"status"` // REMITTING
	WorkflowID string `json:"workflowId"`
}

// remitLoanInstalment remits instalment idx's collected amount to the lending FI through the
// remittance saga. One remittance per instalment whatever the key (internal/lending/remit.go):
// once it exists (and is not FAILED) every call is answered with it and starts nothing; a saga
// that loses the claim to another answers with the winner's. Refusals (nothing written but the
// audit row): LOAN_NOT_FOUND, LOAN_INSTALMENT_NOT_FOUND (404), LOAN_INSTALMENT_NOT_REPAID,
// LOAN_FI_SETTLEMENT_ACCOUNT_NOT_SET, LOAN_PAYROLL_ACCOUNT_NOT_SET, LOAN_REMIT_PARTNER_MISMATCH
// (409). A FAILED remittance is re-claimed by the next call with a new key.
func (s *Server) remitLoanInstalment(c *gin.Context) {
	id, idx, ok := loanInstalmentPath(c)
	if !ok {
		return
	}
	caller := callerOf(c)
	pending := func(wfID string) any {
		return loanRemittancePendingJSON{LoanID: id, Index: idx, Status: lending.RemitRemitting, WorkflowID: wfID}
	}
	runSaga(s, c, sagaCall[workflows.LoanRemitAccepted, workflows.LoanRemitResult]{
		Workflow: workflows.LoanRemitWorkflowName,
		Input: workflows.LoanRemitInput{TenantID: caller.Tenant, LoanID: id, Index: idx, ActorID: caller.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: id + ":" + strconv.Itoa(idx),
		Update:      workflows.LoanRemitAcceptedUpdate, UpdateID: workflows.LoanRemitAcceptedUpdateID,
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			if r, ok, err := lending.RemittanceOf(ctx, tx, id, idx); err != nil {
				return sagaPrecheck{}, err
			} else if ok && r.WorkflowID == wfID {
				return sagaPrecheck{Owner: wfID}, nil
			}
			chk, err := lending.CheckRemittance(ctx, tx, id, idx)
			if err != nil {
				return sagaPrecheck{}, loanMoneyError(lending.ActionRemit, id, idx, err)
			}
			if chk.Existing != nil {
				status, body := remittanceAnswer(*chk.Existing)
				return sagaPrecheck{Done: &sagaAnswer{status, body}}, nil
			}
			return sagaPrecheck{}, nil
		},
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return loanMoneyRefusal(app.Type(), 0) },
		Accepted: func(_ string, a workflows.LoanRemitAccepted) (int, any) {
			return remittanceAnswer(a.Remittance)
		},
		Pending: pending,
		Closed: func(_ string, res workflows.LoanRemitResult) (int, any, error) {
			if res.LoanID != id || res.Index != idx {
				return 0, nil, errIdemKeyOtherRemittance
			}
			if res.Status == workflows.RemitRefused {
				if e, ok := loanMoneyRefusal(res.Code, 0); ok {
					return 0, nil, e
				}
			}
			if res.Remittance.LoanID == "" {
				return 0, nil, errors.New("loan remit: the saga ended " + res.Status + " " + res.Code)
			}
			status, body := remittanceAnswer(res.Remittance)
			return status, body, nil
		},
		LogAttrs: []any{"loan_id", id, "index", idx},
	})
}

var errIdemKeyOtherRemittance = keyReused("remitted another instalment")
