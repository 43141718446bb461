package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The loan disbursement saga's contract with its callers (the API's disburse route, tests).

// Registered names.
const (
	LoanDisburseWorkflowName = "LoanDisburse"
	// LoanDisburseAcceptedUpdate completes once the gates have passed and the partner transfer
	// has been initiated (LoanDisburseAccepted), or with the refusal (an ApplicationError whose
	// Type is the lending code, e.g. LOAN_KYC_NOT_APPROVED). The API sends it with
	// Update-with-Start, under the fixed id LoanDisburseAcceptedUpdateID.
	LoanDisburseAcceptedUpdate   = "loan-disburse-accepted"
	LoanDisburseAcceptedUpdateID = "accepted"
	// LoanDisburseStatusQuery answers the saga's current stage (LoanDisburseProgress).
	LoanDisburseStatusQuery = "status"
)

// The disbursement's outcomes (LoanDisburseAccepted.Status, LoanDisburseResult.Status) besides
// the stages: the loan ACTIVE (paid out), the transfer FAILED (the loan APPROVED again), or the
// saga REFUSED (a gate or state refusal: nothing moved).
const (
	LoanDisburseActive  = lending.LoanActive
	LoanDisburseFailed  = "FAILED"
	LoanDisburseRefused = ResultRefused
)

// LoanDisburseInput starts the saga. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key); the transfer's partner reference is its leg reference
// (partnerref.Leg(partnerref.LoanDisburse, workflow id, 1)), from which callbacks find the saga.
type LoanDisburseInput struct {
	TenantID string // the loan's business
	LoanID   string
	ActorID  string // the user who asked (the API's audit rows); the saga's steps act as system:loan-disburse
	// CorrelationID is the HTTP request id, carried into activity logs and audit rows.
	CorrelationID string
	// Resume is set on a run the saga continued as new while the partner held the transfer.
	Resume *LoanDisburseResume `json:",omitempty"`
}

// LoanDisburseResume is what a run hands the next one when it continues as new while it waits
// for the settlement: its plan and the payout block's state.
type LoanDisburseResume = PayoutResume[lending.DisbursePlan]

// LoanDisburseAccepted is the update's answer once the transfer is initiated.
type LoanDisburseAccepted struct {
	LoanID     string
	Status     string // DISBURSING, or ACTIVE / FAILED when the partner answered at once
	WorkflowID string
}

// LoanDisburseProgress is LoanDisburseStatusQuery's answer.
type LoanDisburseProgress struct {
	LoanID         string
	Stage          string // the Stage… constants of the disburse sagas, ACTIVE or FAILED at the end
	Code           string // a refusal's or failure's code
	LedgerTxID     string
	TransferID     string
	TransferStatus string // the partner's last word (PENDING, SETTLED, FAILED), "" before it
}

// LoanDisburseResult is the workflow's result.
type LoanDisburseResult struct {
	LoanID     string
	Status     string // ACTIVE, FAILED or REFUSED
	Code       string // the refusal's or failure's code
	Reason     string
	LedgerTxID string
	TransferID string
}

// loanGates is the disbursement's reading of the payout block's gates: the borrower's KYC, their
// sanctions screening, then their payout account (with the name rule), each refusal answered
// with its lending code; a gate that cannot decide refuses (fails closed).
var loanGates = gateTable{
	gates: []activities.GateKind{activities.GateKYC, activities.GateSanctions, activities.GateAccount},
	refusals: map[string]string{
		activities.GateKycNotApproved:   lending.CodeKycNotApproved,
		activities.GateSanctionsBlocked: lending.CodeSanctionsBlocked,
		activities.GateAccountNotFound:  lending.CodeDestinationInvalid,
		activities.GateAccountMismatch:  lending.CodeAccountNameMismatch,
	},
	other: lending.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{
		activities.GateKYC:       lending.CodeKycNotApproved,
		activities.GateSanctions: lending.CodeSanctionsBlocked,
		activities.GateAccount:   lending.CodePartnerUnavailable,
	},
}

// loanRecordRefusals are the record steps' refusals that end the saga as refused (nothing moved).
var loanRecordRefusals = map[string]bool{lending.CodeLoanNotFound: true, lending.CodeLoanInvalidState: true,
	lending.CodeFundingAccountNotSet: true}

// loanDisburse is one run's state.
type loanDisburse struct {
	in       LoanDisburseInput
	wfID     string
	run      activities.Run
	progress LoanDisburseProgress
	plan     lending.DisbursePlan
	answer   answer[LoanDisburseAccepted]
	pay      *payout
	leg      *payoutLeg
}

// LoanDisburse pays out one APPROVED loan, on the payout block: the plan (the FI's funding
// account, the borrower's payout account), the gates (KYC, sanctions, account lookup with the
// name rule), a PENDING ledger transaction (Dr receivable-from-borrower:<loan> P / Cr
// payable-to-fi-partner[<fi>]:<loan> P, its bank_reference the transfer's leg reference), the
// claim recording it (APPROVED → DISBURSING, audit DisburseLoan; a refused claim voids the
// posting), the transfer FI funding → borrower, then the settlement (signal, or the status lookup
// when none arrives): SETTLED commits the posting and makes the loan ACTIVE
// (loan.disbursed.v1); FAILED voids it and returns the loan to APPROVED with the code
// (loan.disbursement_failed.v1). A gate or state refusal moves nothing and leaves the loan
// APPROVED. The update LoanDisburseAcceptedUpdate answers the caller once the transfer is
// initiated (or refused). A ledger that refuses the posting (a bug: the legs are balanced and
// named by the chart) fails the run with nothing moved and the loan APPROVED.
func LoanDisburse(ctx workflow.Context, in LoanDisburseInput) (LoanDisburseResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	d := &loanDisburse{in: in, wfID: wfID, run: activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID},
		progress: LoanDisburseProgress{LoanID: in.LoanID, Stage: StageLoading}}
	if err := workflow.SetQueryHandler(ctx, LoanDisburseStatusQuery, func() (LoanDisburseProgress, error) { return d.progress, nil }); err != nil {
		return LoanDisburseResult{}, err
	}
	if err := d.answer.handle(ctx, LoanDisburseAcceptedUpdate); err != nil {
		return LoanDisburseResult{}, err
	}
	settlements := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)

	res, err := d.runSaga(ctx, settlements)
	if !d.answer.done {
		// Every path answers before it returns; this is the net under a workflow error.
		ae := temporal.NewApplicationError("loan disburse saga ended without an answer", activities.ErrorType(err))
		if err == nil {
			ae = temporal.NewApplicationError("loan disburse saga ended: "+res.Status, res.Code)
		}
		d.answer.refuse(ae)
	}
	finishHandlers(ctx)
	return res, err
}

func (d *loanDisburse) runSaga(ctx workflow.Context, settlements workflow.ReceiveChannel) (LoanDisburseResult, error) {
	if r := d.in.Resume; r != nil {
		d.resume(r)
	} else if res, done, err := d.begin(ctx); done {
		return res, err
	}
	if d.leg.Final == "" {
		d.progress.Stage = StageDisbursing
		d.accept(StageDisbursing)
		if err := d.pay.await(ctx, settlements, d.pay.legs); err != nil {
			if errors.Is(err, errContinueAsNew) {
				next := d.in
				next.Resume = resumeOf(d.pay, d.plan)
				err = workflow.NewContinueAsNewError(ctx, LoanDisburseWorkflowName, next)
			}
			return d.result(), err
		}
	}
	return d.conclude(ctx)
}

// begin runs the saga up to the transfer. done reports that the run ends here (a refusal or an
// error), with its result.
func (d *loanDisburse) begin(ctx workflow.Context) (res LoanDisburseResult, done bool, err error) {
	step := activities.LoanDisburseStep{Run: d.run, LoanID: d.in.LoanID}

	// 1. The plan.
	if d.plan, err = callLocal(ctx, localRecordOptions(), activities.LoanDisburseLoadPlan, step); err != nil {
		return d.recordFailed(err)
	}

	// 2. The gates, in order; the first refusal ends the saga with nothing moved.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, d.gateInput(), loanGates); refused {
		return d.refused(code, reason), true, nil
	}

	// 3. The pending ledger transaction; from here on the transfer's reference is fixed.
	d.pay = d.newPayout(newPayout())
	d.leg = d.pay.add(d.transferInput(partnerref.Leg(partnerref.LoanDisburse, d.wfID, 1)))
	d.progress.Stage = StageLedger
	posted, err := callLocal(ctx, localLedgerOptions(), activities.LedgerPostPending, d.ledgerInput())
	if err != nil {
		d.answer.refuse(err)
		return d.result(), true, err
	}

	// 4. The claim, APPROVED → DISBURSING for this run, with the posting recorded on it; a
	// refused claim (the loan cancelled or claimed meanwhile) voids the posting.
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if _, err := callLocal(ctx, localRecordOptions(), activities.LoanDisburseClaim, withTx); err != nil {
		if verr := doLocal(ctx, localLedgerOptions(), activities.LedgerVoid,
			activities.LedgerSettleInput{Run: d.run, TxID: posted.TxID, Reason: activities.ErrorType(err)}); verr != nil {
			d.answer.refuse(verr)
			return d.result(), true, verr
		}
		return d.recordFailed(err)
	}
	d.leg.LedgerTxID, d.progress.LedgerTxID = posted.TxID, posted.TxID
	d.progress.Stage = StageClaimed

	// 5. The transfer.
	d.progress.Stage = StageInitiating
	d.pay.transfer(ctx, d.leg)
	return LoanDisburseResult{}, false, nil
}

// resume restores a continued run: the update is answered DISBURSING (as the first run
// answered it), and the wait goes on where the last run left it.
func (d *loanDisburse) resume(r *LoanDisburseResume) {
	d.plan = r.Plan
	d.pay = d.newPayout(resumePayout(r, d.transferInput))
	d.leg = d.pay.legs[0]
	d.progress.LedgerTxID, d.progress.TransferID, d.progress.TransferStatus = d.leg.LedgerTxID, d.leg.TransferID, d.leg.Status
	d.accept(StageDisbursing)
}

// newPayout is the block with the saga's answer and query wired in.
func (d *loanDisburse) newPayout(p *payout) *payout {
	p.pending = func() { d.accept(StageDisbursing) }
	p.changed = func(l *payoutLeg) { d.progress.TransferID, d.progress.TransferStatus = l.TransferID, l.Status }
	return p
}

// transferInput is the transfer of the plan under ref: the principal from the FI's funding
// account to the borrower's payout account.
func (d *loanDisburse) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Funding.Partner, Reference: ref,
		FromAccount: d.plan.Funding.AccountNumber, ToAccount: d.plan.Destination.AccountNumber, AmountSantim: d.plan.PrincipalSantim,
		Domain: "LOAN"}
}

// gateInput is the gates' input for the plan: the borrower screened, the loan the audit rows'
// target, the payout account looked up with the name rule on (a loan pays the FI's money to the
// named borrower: the holder name the employer gave must be the bank's).
func (d *loanDisburse) gateInput() activities.GateInput {
	return activities.GateInput{Saga: activities.LoanDisburseSaga, Run: d.run,
		SubjectType: activities.LoanGateSubjectType, SubjectID: d.plan.BorrowerID,
		TargetType: activities.LoanGateTargetType, TargetID: d.in.LoanID,
		Partner: d.plan.Destination.Partner, AccountNumber: d.plan.Destination.AccountNumber,
		ExpectedHolderName: d.plan.Destination.HolderName, RequireNameMatch: true}
}

// ledgerInput is the disbursement's pending transaction (internal/lending/doc.go, "Disburse"):
// Dr receivable-from-borrower:<loan> P, Cr payable-to-fi-partner[<fi>]:<loan> P, its
// bank_reference the transfer's leg reference.
func (d *loanDisburse) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(partnerref.LoanDisburse) + ":" + d.wfID, Step: "disburse",
		Legs: []activities.LedgerLeg{
			{Account: chart.BorrowerReceivable(p.LoanID), Direction: "DEBIT", AmountSantim: p.PrincipalSantim},
			{Account: chart.FIPayable(p.FIID, p.LoanID), Direction: "CREDIT", AmountSantim: p.PrincipalSantim},
		},
		Metadata: map[string]string{"loanId": p.LoanID, "borrowerId": p.BorrowerID, "fiPartnerId": p.FIID,
			partnerref.LedgerMetadataKey: d.leg.Transfer.Reference}}
}

// recordFailed ends the run on a record step's error before anything moved: the store's
// refusals as a refusal, anything else as the run's error.
func (d *loanDisburse) recordFailed(err error) (LoanDisburseResult, bool, error) {
	if code := activities.ErrorType(err); loanRecordRefusals[code] {
		return d.refused(code, err.Error()), true, nil
	}
	d.answer.refuse(err)
	return d.result(), true, err
}

// conclude applies the transfer's final status: SETTLED commits the pending transaction and
// makes the loan ACTIVE; FAILED voids it and returns the loan to APPROVED.
func (d *loanDisburse) conclude(ctx workflow.Context) (LoanDisburseResult, error) {
	d.progress.Stage = StageSettling
	if d.leg.Final == activities.TransferFailed {
		return d.fail(ctx, d.leg.FailCode)
	}
	if err := doLocal(ctx, localLedgerOptions(), activities.LedgerCommit,
		activities.LedgerSettleInput{Run: d.run, TxID: d.progress.LedgerTxID}); err != nil {
		// The money moved: the commit is retried for as long as ledgerOptions allows; past that
		// the run fails for an operator, the loan still DISBURSING.
		d.accept(StageDisbursing)
		return d.result(), err
	}
	step := activities.LoanDisburseStep{Run: d.run, LoanID: d.in.LoanID, TransferID: d.leg.TransferID}
	if _, err := callLocal(ctx, localRecordOptions(), activities.LoanDisburseMarkDisbursed, step); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	d.progress.Stage = LoanDisburseActive
	d.accept(LoanDisburseActive)
	if workflow.GetVersion(ctx, loanDelinquencyWatchChange, workflow.DefaultVersion, 1) == 1 {
		// The loan is paid out: its delinquency watch starts (a watch already running stays). The
		// money is settled whatever happens here: a watch that did not start is logged, and a
		// restructure or repayment's nudge (NudgeLoanDelinquency) starts it.
		if err := StartLoanDelinquency(ctx, LoanDelinquencyInput{TenantID: d.in.TenantID, LoanID: d.in.LoanID,
			CorrelationID: d.run.CorrelationID}); err != nil {
			workflow.GetLogger(ctx).Error("loan delinquency watch not started", "loan_id", d.in.LoanID, "error", err)
		}
	}
	workflow.GetLogger(ctx).Info("loan disbursed", "tenant_id", d.in.TenantID, "loan_id", d.in.LoanID, "tx_id", d.progress.LedgerTxID,
		"transfer_id", d.leg.TransferID, "partner_reference", d.leg.Transfer.Reference)
	return d.result(), nil
}

// fail voids the pending transaction and returns the loan to APPROVED with code.
func (d *loanDisburse) fail(ctx workflow.Context, code string) (LoanDisburseResult, error) {
	if code == "" {
		code = "TRANSFER_FAILED"
	}
	d.progress.Code = code
	if err := doLocal(ctx, localLedgerOptions(), activities.LedgerVoid,
		activities.LedgerSettleInput{Run: d.run, TxID: d.progress.LedgerTxID, Reason: code}); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	if _, err := callLocal(ctx, localRecordOptions(), activities.LoanDisburseMarkFailed,
		activities.LoanDisburseStep{Run: d.run, LoanID: d.in.LoanID, Reason: code}); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	d.progress.Stage = LoanDisburseFailed
	d.accept(LoanDisburseFailed)
	r := d.result()
	r.Reason = code
	return r, nil
}

// refused ends the run with a refusal: nothing moved, the loan stays as it was.
func (d *loanDisburse) refused(code, reason string) LoanDisburseResult {
	d.progress.Stage = StageRefused
	d.progress.Code = code
	d.answer.refuse(temporal.NewApplicationError(reason, code))
	r := d.result()
	r.Reason = reason
	return r
}

// accept answers the update (once) with the disbursement's status.
func (d *loanDisburse) accept(status string) {
	d.answer.accept(LoanDisburseAccepted{LoanID: d.in.LoanID, Status: status, WorkflowID: d.wfID})
}

func (d *loanDisburse) result() LoanDisburseResult {
	r := LoanDisburseResult{LoanID: d.in.LoanID, Status: d.progress.Stage, Code: d.progress.Code, LedgerTxID: d.progress.LedgerTxID,
		TransferID: d.progress.TransferID}
	if r.Status == StageRefused {
		r.Status = LoanDisburseRefused
	}
	return r
}
