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
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/workflows"
)

// Loan repayments and remittances (issue 24): the business's admins record a repayment of an
// instalment (the repayment saga, workflows.LoanRepay) and remit a repaid instalment to the
// lending FI (the remittance saga, workflows.LoanRemit, api/lending_remit.go). The handlers move
// no money: each starts or answers its saga through runSaga (api/saga.go). Rules:
// internal/lending/repay.go and remit.go.

// loanMoneyRoutes serves the loan repayment and remittance routes.
func (s *Server) loanMoneyRoutes() []Route {
	biz := func(r Route) Route { r.Handler = s.forKind(orgs.Business, r.Handler); return r }
	return []Route{
		biz(Route{Method: http.MethodPost, Path: "/api/loans/:id/installments/:idx/record-repayment", Auth: Org, Role: orgs.Admin, Idem: true,
			Summary: "Record a repayment (whole or partial) of a loan instalment", Handler: s.recordLoanRepayment}),
		biz(Route{Method: http.MethodPost, Path: "/api/loans/:id/installments/:idx/remit-to-fi", Auth: Org, Role: orgs.Admin, Idem: true,
			Summary: "Remit a repaid loan instalment to the financial institution", Handler: s.remitLoanInstalment, Body: BodyNone}),
	}
}

// loanInstalmentPath reads the path's loan id and instalment index (a decimal from 0 to lending.MaxInstalmentIndex
// without leading zeros); it has answered 400 when not ok.
func loanInstalmentPath(c *gin.Context) (string, int, bool) {
	id, ok := pathID(c)
	if !ok {
		return "", 0, false
	}
	raw := c.Param("idx")
	idx, err := strconv.Atoi(raw)
	if err != nil || strconv.Itoa(idx) != raw || lending.CheckInstalmentIndex(idx) != nil {
		writeError(c, fieldError(lending.CheckInstalmentIndex(-1)))
		return "", 0, false
	}
	return id, idx, true
}

type loanRepaymentRequest struct {
	AmountSantim *int64 `json:"amountSantim"`
	Source       string `json:"source"`
	Reference    string `json:"reference"`
}

type loanRepaymentJSON struct {
	ID              string             `json:"id"`
	LoanID          string             `json:"loanId"`
	Index           int                `json:"index"`
	Seq             int                `json:"seq"`
	AmountSantim    int64              `json:"amountSantim"`
	InterestSantim  int64              `json:"interestSantim"`
	FeeSantim       int64              `json:"feeSantim"`
	PrincipalSantim int64              `json:"principalSantim"`
	Source          string             `json:"source"`
	Reference       *string            `json:"reference"`
	Status          string             `json:"status"`
	LedgerTxID      *string            `json:"ledgerTxId"`
	WorkflowID      string             `json:"workflowId"`
	PostedAt        *time.Time         `json:"postedAt"`
	Instalment      loanInstalmentJSON `json:"instalment"`
	LoanStatus      string             `json:"loanStatus"`
}

func toLoanRepaymentJSON(r lending.RepaymentRecorded) loanRepaymentJSON {
	p, in := r.Repayment, r.Instalment
	out := loanRepaymentJSON{ID: p.ID, LoanID: p.LoanID, Index: p.Index, Seq: p.Seq, AmountSantim: p.AmountSantim,
		InterestSantim: p.InterestSantim, FeeSantim: p.FeeSantim, PrincipalSantim: p.PrincipalSantim, Source: p.Source, Status: p.Status,
		WorkflowID: p.WorkflowID, PostedAt: utcPtr(p.PostedAt), LoanStatus: r.LoanStatus,
		Instalment: loanInstalmentJSON{Index: in.Index, DuePeriod: in.DuePeriod, PrincipalSantim: in.PrincipalSantim,
			InterestSantim: in.InterestSantim, FeeSantim: in.FeeSantim, TotalSantim: in.TotalSantim, BalanceSantim: in.BalanceSantim,
			RepaidSantim: in.RepaidSantim, Status: in.Status}}
	if p.Reference != "" {
		out.Reference = &p.Reference
	}
	if p.LedgerTxID != "" {
		out.LedgerTxID = &p.LedgerTxID
	}
	return out
}

// loanRepaymentPendingJSON is the 202 answer: reserved, its journal not yet in the ledger.
type loanRepaymentPendingJSON struct {
	LoanID     string `json:"loanId"`
	Index      int    `json:"index"`
	Status     string `json:"status"` // PENDING
	WorkflowID string `json:"workflowId"`
}

var errIdemKeyOtherLoanRepayment = keyReused("recorded another repayment")

// recordLoanRepayment records one repayment of instalment idx through the repayment saga, started
// by runSaga under the workflow id the Idempotency-Key names: 200 with the repayment, its parts,
// the instalment and the loan's status once posted; 202 when the ledger has not taken the journal
// yet. Refusals (nothing written but the audit row): LOAN_NOT_FOUND, LOAN_INSTALMENT_NOT_FOUND
// (404), LOAN_INVALID_STATE, LOAN_WRITE_OFF_IN_PROGRESS, LOAN_REPAYMENT_IN_PROGRESS (409),
// LOAN_REPAYMENT_EXCEEDS_OUTSTANDING (422, details.outstandingSantim).
func (s *Server) recordLoanRepayment(c *gin.Context) {
	id, idx, ok := loanInstalmentPath(c)
	if !ok {
		return
	}
	var req loanRepaymentRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := validAmount("amountSantim", req.AmountSantim, money.MaxTransactionSantim); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := lending.CheckRepaymentFields(*req.AmountSantim, req.Source, req.Reference); err != nil {
		writeError(c, fieldError(err))
		return
	}
	caller := callerOf(c)
	amount := *req.AmountSantim
	runSaga(s, c, sagaCall[workflows.LoanRepayAccepted, workflows.LoanRepayResult]{
		Workflow: workflows.LoanRepayWorkflowName,
		Input: workflows.LoanRepayInput{TenantID: caller.Tenant, LoanID: id, Index: idx, AmountSantim: amount, Source: req.Source,
			Reference: req.Reference, ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id + ":" + strconv.Itoa(idx),
		Update:      workflows.LoanRepayAcceptedUpdate, UpdateID: workflows.LoanRepayAcceptedUpdateID,
		// Refuse what the saga would refuse before starting one — unless this key's saga already
		// reserved its repayment: then the answer is that saga's.
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			p, ok, err := lending.RepaymentByWorkflow(ctx, tx, wfID)
			if err != nil {
				return sagaPrecheck{}, err
			}
			if ok {
				if p.LoanID != id || p.Index != idx || p.AmountSantim != amount || p.Source != req.Source || p.Reference != req.Reference {
					return sagaPrecheck{}, errIdemKeyOtherLoanRepayment
				}
				return sagaPrecheck{Owner: wfID}, nil
			}
			return sagaPrecheck{}, loanMoneyError(lending.ActionRecordRepayment, id, idx, lending.CheckRepayment(ctx, tx, id, idx, amount))
		},
		Refused: func(app *temporal.ApplicationError) (*Error, bool) {
			var outstanding int64
			if app.HasDetails() {
				_ = app.Details(&outstanding)
			}
			return loanMoneyRefusal(app.Type(), outstanding)
		},
		Accepted: func(wfID string, a workflows.LoanRepayAccepted) (int, any) {
			if a.Status == workflows.RepayRecorded {
				return http.StatusOK, toLoanRepaymentJSON(a.Recorded)
			}
			return http.StatusAccepted, loanRepaymentPendingJSON{LoanID: id, Index: idx, Status: workflows.RepayPending, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return loanRepaymentPendingJSON{LoanID: id, Index: idx, Status: workflows.RepayPending, WorkflowID: wfID}
		},
		Closed: func(_ string, res workflows.LoanRepayResult) (int, any, error) {
			if res.LoanID != id || res.Index != idx {
				return 0, nil, errIdemKeyOtherLoanRepayment
			}
			if res.Status == workflows.RepayRecorded {
				return http.StatusOK, toLoanRepaymentJSON(res.Recorded), nil
			}
			if e, ok := loanMoneyRefusal(res.Code, res.OutstandingSantim); ok && res.Status == workflows.RepayRefused {
				return 0, nil, e
			}
			return 0, nil, errors.New("loan repay: the saga ended " + res.Status + " " + res.Code)
		},
		LogAttrs: []any{"loan_id", id, "index", idx},
	})
}

// loanMoneyRefusal is the answer to a refusal code of the repayment or remittance saga
// (internal/lending's codes), an overpayment with what is still outstanding; ok is false for any
// other code.
func loanMoneyRefusal(code string, outstanding int64) (*Error, bool) {
	r, ok := lending.MoneyRefusalOf(code, outstanding)
	if !ok {
		return nil, false
	}
	e := NewError(r.Status, r.Code, r.Message)
	if r.Details != nil {
		e.Details = r.Details
	}
	return e, true
}

// loanMoneyError is a pre-check's error as the answer: a rule's refusal audited DENIED as action
// on the instalment (the answer carries its details), a not-found and a field error as they are.
func loanMoneyError(action, id string, idx int, err error) error {
	var r *payroll.Refusal
	if err == nil || !errors.As(err, &r) || r.Status == http.StatusNotFound {
		return payrollError(err)
	}
	ref := refuse(r.Status, r.Code, r.Message, action, lending.TargetInstalment, id+":"+strconv.Itoa(idx))
	if r.Details != nil {
		ref.err.Details = r.Details
	}
	return ref
}
