package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/money"
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
		activities.GateAccountMismatch:  lending.CodeAccountMismatch,
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
	lending.CodeFundingAccountNotSet: true, lending.CodeEmployeeNotActive: true, lending.CodePayoutAccountChanged: true,
	lending.CodeFINotAvailable: true, lending.CodeNotOptedIn: true}

// loanDisburse is one run's state: the input and the payout saga's (payout_saga.go).
type loanDisburse struct {
	payoutSaga[lending.DisbursePlan, LoanDisburseAccepted]
	in LoanDisburseInput
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
// named by the chart) fails the run with nothing moved and the loan APPROVED. The handlers, the
// wait and the conclusion are the payout saga's (payout_saga.go).
func LoanDisburse(ctx workflow.Context, in LoanDisburseInput) (LoanDisburseResult, error) {
	d := &loanDisburse{in: in}
	d.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[lending.DisbursePlan, LoanDisburseAccepted]{
		workflowName: LoanDisburseWorkflowName, name: "loan disburse saga", recordRefusals: loanRecordRefusals,
		accepted: func(status string) LoanDisburseAccepted {
			return LoanDisburseAccepted{LoanID: in.LoanID, Status: status, WorkflowID: d.wfID}
		},
		transfer: d.transferInput,
		next: func(r *LoanDisburseResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.LoanDisburseMarkDisbursed,
				activities.LoanDisburseStep{Run: d.run, LoanID: in.LoanID, TransferID: transferID, Reference: d.sentReference()})
			return err
		},
		markFailed: func(ctx workflow.Context, code string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.LoanDisburseMarkFailed,
				activities.LoanDisburseStep{Run: d.run, LoanID: in.LoanID, Reason: code})
			return err
		},
		paidStage: LoanDisburseActive, failedStage: LoanDisburseFailed,
		paid: d.paid,
	})
	o, err := runPayoutSaga(ctx, &d.payoutSaga, LoanDisburseStatusQuery, func(p payoutProgress) LoanDisburseProgress {
		return LoanDisburseProgress{LoanID: in.LoanID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID, TransferID: p.TransferID,
			TransferStatus: p.TransferStatus}
	}, LoanDisburseAcceptedUpdate, in.Resume, d.begin)
	return LoanDisburseResult{LoanID: in.LoanID, Status: o.Status, Code: o.Code, Reason: o.Reason, LedgerTxID: o.LedgerTxID,
		TransferID: o.TransferID}, err
}

// begin runs the saga up to the transfer. done reports that the run ends here (a refusal or an
// error), with its outcome.
func (d *loanDisburse) begin(ctx workflow.Context) (o payoutOutcome, done bool, err error) {
	step := activities.LoanDisburseStep{Run: d.run, LoanID: d.in.LoanID}

	// 1. The plan.
	if d.plan, err = callLocal(ctx, localRecordOptions(), activities.LoanDisburseLoadPlan, step); err != nil {
		return d.recordFailed(err)
	}
	if d.plan.Concluded != nil {
		return d.concluded(ctx, *d.plan.Concluded)
	}

	// 2. The gates, in order; the first refusal ends the saga with nothing moved.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, d.gateInput(), loanGates); refused {
		return d.refused(code, reason), true, nil
	}

	// 3. The pending ledger transaction; from here on the transfer's reference is fixed.
	posted, err := d.postPending(ctx, partnerref.Leg(partnerref.LoanDisburse, d.wfID, 1), d.ledgerInput)
	if err != nil {
		d.answer.refuse(err)
		return d.outcome(), true, err
	}

	// 4. The claim, APPROVED → DISBURSING for this run, with the posting recorded on it; a
	// refused claim (the loan cancelled or claimed meanwhile) voids the posting.
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if o, done, err := d.claimPosted(ctx, posted.TxID, func() error {
		_, err := callLocal(ctx, localRecordOptions(), activities.LoanDisburseClaim, withTx)
		return err
	}); done {
		return o, done, err
	}

	// 5. The transfer.
	return d.initiate(ctx)
}

// concluded answers the outcome this run already recorded on its loan (LoadPlan found it so):
// its local steps, run in one workflow task, failed or paid out the loan, and that task was lost
// before it completed (it timed out on a loaded worker), so they run again from the start. FAILED
// is recorded again (MarkFailed is a no-op for the same run; the posting was voided before it)
// and answered FAILED with its code; ACTIVE is answered ACTIVE and followed as a payout is (the
// delinquency watch starts: the lost task's start never reached the server, and a watch already
// running stays). Without it the run refused the loan it paid out 409 LOAN_INVALID_STATE, and
// claimed and sent again the one it failed. Only a plan that says so branches here: recorded
// histories (no Concluded) replay as before.
func (d *loanDisburse) concluded(ctx workflow.Context, c lending.DisburseConcluded) (payoutOutcome, bool, error) {
	d.progress.LedgerTxID, d.progress.TransferID = c.LedgerTxID, c.TransferID
	if c.Status == lending.DisbursementFailed {
		o, err := d.fail(ctx, c.Reason, false)
		return o, true, err
	}
	d.progress.Stage = d.paidStage
	d.accept(d.paidStage)
	d.paid(ctx)
	return d.outcome(), true, nil
}

// transferInput is the transfer of the plan under ref: the principal from the FI's funding
// account to the borrower's payout account.
func (d *loanDisburse) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Funding.Partner, Reference: ref,
		FromAccount: d.plan.Funding.AccountNumber, ToAccount: d.plan.Destination.AccountNumber, AmountSantim: d.plan.PrincipalSantim,
		Domain: money.DomainLoan}
}

// gateInput is the gates' input for the plan: the borrower screened, the loan the audit rows'
// target, the payout account looked up with the name rule on (a loan pays the FI's money to the
// named borrower: the holder name the employer gave must be the bank's).
func (d *loanDisburse) gateInput() activities.GateInput {
	return activities.GateInput{Saga: activities.LoanDisburseSaga, Run: d.run,
		SubjectType: activities.LoanGateSubjectType, SubjectID: d.plan.BorrowerID,
		TargetType: activities.LoanGateTargetType, TargetID: d.in.LoanID,
		Partner: d.plan.Destination.Partner, AccountNumber: d.plan.Destination.AccountNumber,
		ExpectedHolderName: d.plan.Destination.HolderName, RequireNameMatch: true, TransferPartner: d.plan.Funding.Partner}
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

// paid follows the payout: the loan's delinquency watch starts, and the payout is logged.
func (d *loanDisburse) paid(ctx workflow.Context) {
	if workflow.GetVersion(ctx, loanDelinquencyWatchChange, workflow.DefaultVersion, 1) == 1 {
		// The loan is paid out: its delinquency watch starts (a watch already running stays). The
		// money is settled whatever happens here: a watch that did not start is logged, and a
		// restructure or repayment's nudge (NudgeLoanDelinquency) starts it.
		if err := StartLoanDelinquency(ctx, LoanDelinquencyInput{TenantID: d.in.TenantID, LoanID: d.in.LoanID,
			CorrelationID: d.run.CorrelationID}); err != nil {
			workflow.GetLogger(ctx).Error("loan delinquency watch not started", "loan_id", d.in.LoanID, "error", err)
		}
	}
	// A run answering the payout it already recorded (concluded) has no leg: its reference is the
	// one its transfer was sent under.
	ref, transferID := partnerref.Leg(partnerref.LoanDisburse, d.wfID, 1), d.progress.TransferID
	if d.leg != nil {
		ref, transferID = d.leg.Transfer.Reference, d.leg.TransferID
	}
	workflow.GetLogger(ctx).Info("loan disbursed", "tenant_id", d.in.TenantID, "loan_id", d.in.LoanID, "tx_id", d.progress.LedgerTxID,
		"transfer_id", transferID, "partner_reference", ref)
}
