package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// Stages of the disburse saga (DisburseProgress.Stage).
const (
	StageLoading    = "LOADING"
	StageGates      = "GATES"
	StageClaimed    = "CLAIMED"
	StageLedger     = "LEDGER_PENDING"
	StageInitiating = "INITIATING"
	StageDisbursing = "DISBURSING" // the partner holds the transfer (or its outcome is being resolved)
	StageSettling   = "SETTLING"   // the outcome is known; the ledger and the request are catching up
	StageDisbursed  = "DISBURSED"
	StageFailed     = "FAILED"
	StageRefused    = "REFUSED"
)

// Result statuses (EwaDisburseResult.Status) besides the request's own.
const (
	ResultDisbursed = string(ewa.Disbursed)
	ResultFailed    = string(ewa.Failed)
	ResultRefused   = "REFUSED"
)

// DisburseProgress is DisburseStatusQuery's answer.
type DisburseProgress struct {
	RequestID  string
	Stage      string
	Code       string // a refusal's or failure's code
	LedgerTxID string
	TransferID string
	// TransferStatus is the partner's last word (PENDING, SETTLED, FAILED), "" before it.
	TransferStatus string
}

// ewaSaga is the audit actor and log name of the saga's steps.
const ewaSaga = activities.EwaSaga

// ewaGates is the disburse saga's reading of the gates: KYC, sanctions, then the payout account;
// each refusal answered with its EWA code.
var ewaGates = gateTable{
	gates: []activities.GateKind{activities.GateKYC, activities.GateSanctions, activities.GateAccount},
	refusals: map[string]string{
		activities.GateKycNotApproved:   ewa.CodeKycNotApproved,
		activities.GateSanctionsBlocked: ewa.CodeSanctionsBlocked,
		activities.GateAccountNotFound:  ewa.CodeDestinationInvalid,
		activities.GateAccountMismatch:  ewa.CodeAccountMismatch,
	},
	other: ewa.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{
		activities.GateKYC:       ewa.CodeKycNotApproved,
		activities.GateSanctions: ewa.CodeSanctionsBlocked,
		activities.GateAccount:   ewa.CodePartnerUnavailable,
	},
}

// ewaRecordRefusals are the record steps' refusals that end the saga as refused (nothing moved).
var ewaRecordRefusals = map[string]bool{ewa.CodeRequestNotFound: true, ewa.CodeInvalidState: true, ewa.CodeFundingAccountNotSet: true}

// disburse is one run's state: what the query answers and what the update waits on.
type disburse struct {
	in       EwaDisburseInput
	wfID     string
	run      activities.Run
	progress DisburseProgress
	plan     ewa.Plan
	answer   answer[DisburseAccepted]
	pay      *payout
	// leg is the one transfer; its reference is the leg reference, or the workflow id in runs
	// begun before legReferenceChange.
	leg *payoutLeg
}

// EwaDisburse pays out one EWA request: the gates (KYC, sanctions, payout account), the claim,
// a PENDING ledger transaction, the partner transfer with the saga's leg reference (the same on
// the posting, so reconciliation pairs them), then the settlement (signal, or the status lookup
// when none arrives): SETTLED commits the ledger and marks the request DISBURSED; FAILED (or a
// rejection) voids it and marks it FAILED. A gate or state refusal moves nothing and leaves the
// request REQUESTED. The update DisburseAcceptedUpdate answers the caller once the transfer is
// initiated (or refused). The transfer, the wait and the answer are the payout block's
// (payout.go).
func EwaDisburse(ctx workflow.Context, in EwaDisburseInput) (EwaDisburseResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	d := &disburse{in: in, wfID: wfID, run: activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID},
		progress: DisburseProgress{RequestID: in.RequestID, Stage: StageLoading}}
	if err := workflow.SetQueryHandler(ctx, DisburseStatusQuery, func() (DisburseProgress, error) { return d.progress, nil }); err != nil {
		return EwaDisburseResult{}, err
	}
	if err := d.answer.handle(ctx, DisburseAcceptedUpdate); err != nil {
		return EwaDisburseResult{}, err
	}
	settlements := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)

	res, err := d.runSaga(ctx, settlements)
	if !d.answer.done {
		// Every path answers before it returns; this is the net under a workflow error.
		ae := temporal.NewApplicationError("disburse saga ended without an answer", activities.ErrorType(err))
		if err == nil {
			ae = temporal.NewApplicationError("disburse saga ended: "+res.Status, res.Code)
		}
		d.answer.refuse(ae)
	}
	finishHandlers(ctx)
	return res, err
}

func (d *disburse) runSaga(ctx workflow.Context, settlements workflow.ReceiveChannel) (EwaDisburseResult, error) {
	if r := d.in.Resume; r != nil {
		d.resume(ctx, r)
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
				err = workflow.NewContinueAsNewError(ctx, EwaDisburseWorkflowName, next)
			}
			return d.result(), err
		}
	}
	return d.conclude(ctx)
}

// newPayout is the block with the saga's answer and query wired in.
func (d *disburse) newPayout(p *payout) *payout {
	p.pending = func() { d.accept(StageDisbursing) }
	p.changed = func(l *payoutLeg) { d.progress.TransferID, d.progress.TransferStatus = l.TransferID, l.Status }
	return p
}

// transferInput is the transfer of the plan under ref: the principal from the funding account
// to the employee's payout account.
func (d *disburse) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Funding.Partner, Reference: ref,
		FromAccount: d.plan.Funding.AccountNumber, ToAccount: d.plan.Destination.AccountNumber, AmountSantim: d.plan.PrincipalSantim, Domain: "EWA"}
}

// resume restores a continued run: the update is answered DISBURSING (as the first run
// answered it), and the wait goes on where the last run left it.
func (d *disburse) resume(ctx workflow.Context, r *DisburseResume) {
	d.plan = r.Plan
	d.pay = d.newPayout(resumePayout(r, func(ref string) activities.TransferInput {
		if ref == "" {
			ref = d.wfID // a run continued before legReferenceChange
		}
		return d.transferInput(ref)
	}))
	d.leg = d.pay.legs[0]
	d.progress.LedgerTxID, d.progress.TransferID, d.progress.TransferStatus = d.leg.LedgerTxID, d.leg.TransferID, d.leg.Status
	d.accept(StageDisbursing)
}

// begin runs the saga up to the transfer: the plan, the gates, the claim, the pending ledger
// transaction and the transfer's initiation. done reports that the run ends here (a refusal, a
// failure recorded, or an error), with its result.
func (d *disburse) begin(ctx workflow.Context) (res EwaDisburseResult, done bool, err error) {
	if workflow.GetVersion(ctx, ewaFewerStepsChange, workflow.DefaultVersion, 1) >= 1 {
		return d.beginFewer(ctx)
	}
	step := activities.EwaStep{Run: d.run, RequestID: d.in.RequestID}

	// 1. The plan.
	if d.plan, err = callLocal(ctx, localRecordOptions(), activities.EwaLoadPlan, step); err != nil {
		return d.recordFailed(err)
	}

	// 2. The gates, in order; the first refusal ends the saga with nothing moved.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, d.gateInput(), ewaGates); refused {
		return d.refused(code, reason), true, nil
	}

	// 3. The claim: REQUESTED → DISBURSING for this run.
	if _, err := callLocal(ctx, localRecordOptions(), activities.EwaClaim, step); err != nil {
		return d.recordFailed(err)
	}
	d.progress.Stage = StageClaimed

	// 4. The pending ledger transaction, recorded on the request. From here on the transfer's
	// reference is fixed: the posting carries it, then the transfer and every lookup.
	d.addLeg(ctx)
	d.progress.Stage = StageLedger
	posted, err := callLocal(ctx, localLedgerOptions(), activities.LedgerPostPending, d.ledgerInput())
	if err != nil {
		// Nothing moved: the request fails with the ledger's reason.
		res, err := d.fail(ctx, activities.ErrorType(err), false)
		return res, true, err
	}
	d.leg.LedgerTxID, d.progress.LedgerTxID = posted.TxID, posted.TxID
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if err := doLocal(ctx, localRecordOptions(), activities.EwaSetLedgerTx, withTx); err != nil {
		res, err := d.fail(ctx, activities.ErrorType(err), true)
		return res, true, err
	}

	// 5. The transfer.
	d.progress.Stage = StageInitiating
	d.pay.transfer(ctx, d.leg)
	return EwaDisburseResult{}, false, nil
}

// beginFewer is begin in runs begun after ewaFewerStepsChange: the plan with the KYC and
// sanctions gates in one step (ewa.Begin), the account gate, the pending ledger transaction, then
// the claim recording it in one transaction (ewa.ClaimWithLedgerTx), and the transfer. The
// posting comes before the claim, so a refused claim voids it (nothing moved); a posting the
// ledger refuses claims the request and fails it with the ledger's reason, as before.
func (d *disburse) beginFewer(ctx workflow.Context) (res EwaDisburseResult, done bool, err error) {
	step := activities.EwaStep{Run: d.run, RequestID: d.in.RequestID}

	// 1. The plan, the KYC and the sanctions gates: one transaction.
	b, err := callLocal(ctx, localRecordOptions(), activities.EwaBegin, step)
	if err != nil {
		return d.recordFailed(err)
	}
	d.plan = b.Plan
	d.progress.Stage = StageGates
	if b.Refused != "" {
		return d.refused(ewaGates.code(b.Refused), b.Reason), true, nil
	}

	// 2. The account gate (the partner's lookup).
	accountGate := ewaGates
	accountGate.gates = []activities.GateKind{activities.GateAccount}
	if code, reason, refused := runGates(ctx, d.gateInput(), accountGate); refused {
		return d.refused(code, reason), true, nil
	}

	// 3. The pending ledger transaction.
	d.addLeg(ctx)
	d.progress.Stage = StageLedger
	posted, err := callLocal(ctx, localLedgerOptions(), activities.LedgerPostPending, d.ledgerInput())
	if err != nil {
		// Nothing moved: the request fails with the ledger's reason, once this run has it.
		if _, cerr := callLocal(ctx, localRecordOptions(), activities.EwaClaim, step); cerr != nil {
			return d.recordFailed(cerr)
		}
		d.progress.Stage = StageClaimed
		res, err := d.fail(ctx, activities.ErrorType(err), false)
		return res, true, err
	}

	// 4. The claim, REQUESTED → DISBURSING for this run, with the posting recorded on it.
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if _, err := callLocal(ctx, localRecordOptions(), activities.EwaClaimWithLedgerTx, withTx); err != nil {
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
	return EwaDisburseResult{}, false, nil
}

// gateInput is the gates' input for the plan: the employee screened, the request the audit
// rows' target, the payout account looked up with the tenant's name rule.
func (d *disburse) gateInput() activities.GateInput {
	return activities.GateInput{Saga: ewaSaga, Run: d.run,
		SubjectType: activities.EwaGateSubjectType, SubjectID: d.plan.EmployeeID, TargetType: activities.EwaGateTargetType, TargetID: d.in.RequestID,
		Partner: d.plan.Destination.Partner, AccountNumber: d.plan.Destination.AccountNumber,
		ExpectedHolderName: d.plan.Destination.HolderName, RequireNameMatch: d.plan.AccountNameMatch}
}

// addLeg fixes the transfer's reference (the leg reference, or the workflow id in runs begun
// before legReferenceChange) and adds the leg: the posting carries the reference, then the
// transfer and every lookup.
func (d *disburse) addLeg(ctx workflow.Context) {
	ref := d.wfID
	if workflow.GetVersion(ctx, legReferenceChange, workflow.DefaultVersion, 1) >= 1 {
		ref = partnerref.Leg(partnerref.EwaDisburse, d.wfID, 1)
	}
	d.pay = d.newPayout(newPayout())
	d.leg = d.pay.add(d.transferInput(ref))
}

// recordFailed ends the run on a record step's error before anything moved: the store's
// refusals (ewaRecordRefusals) as a refusal, anything else as the run's error.
func (d *disburse) recordFailed(err error) (EwaDisburseResult, bool, error) {
	if code := activities.ErrorType(err); ewaRecordRefusals[code] {
		return d.refused(code, err.Error()), true, nil
	}
	d.answer.refuse(err)
	return d.result(), true, err
}

// conclude applies the transfer's final status: SETTLED commits the pending transaction and
// marks the request DISBURSED; FAILED voids it and marks the request FAILED.
func (d *disburse) conclude(ctx workflow.Context) (EwaDisburseResult, error) {
	d.progress.Stage = StageSettling
	if d.leg.Final == activities.TransferFailed {
		return d.fail(ctx, d.leg.FailCode, true)
	}
	txID := d.progress.LedgerTxID
	if err := doLocal(ctx, localLedgerOptions(), activities.LedgerCommit, activities.LedgerSettleInput{Run: d.run, TxID: txID}); err != nil {
		// The money moved: the commit is retried for as long as ledgerOptions allows; past that
		// the run fails for an operator, the request still DISBURSING.
		d.accept(StageDisbursing)
		return d.result(), err
	}
	step := activities.EwaStep{Run: d.run, RequestID: d.in.RequestID, TransferID: d.leg.TransferID}
	if _, err := callLocal(ctx, localRecordOptions(), activities.EwaMarkDisbursed, step); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	d.progress.Stage = StageDisbursed
	d.accept(StageDisbursed)
	workflow.GetLogger(ctx).Info("ewa disbursed", "tenant_id", d.in.TenantID, "ewa_request_id", d.in.RequestID, "tx_id", txID,
		"transfer_id", d.leg.TransferID, "partner_reference", d.leg.Transfer.Reference)
	return d.result(), nil
}

// fail voids the pending transaction (when there is one) and marks the request FAILED with
// code as its reason.
func (d *disburse) fail(ctx workflow.Context, code string, voidLedger bool) (EwaDisburseResult, error) {
	if code == "" {
		code = "TRANSFER_FAILED"
	}
	d.progress.Stage = StageSettling
	d.progress.Code = code
	if voidLedger && d.progress.LedgerTxID != "" {
		if err := doLocal(ctx, localLedgerOptions(), activities.LedgerVoid,
			activities.LedgerSettleInput{Run: d.run, TxID: d.progress.LedgerTxID, Reason: code}); err != nil {
			d.accept(StageDisbursing)
			return d.result(), err
		}
	}
	if _, err := callLocal(ctx, localRecordOptions(), activities.EwaMarkFailed,
		activities.EwaStep{Run: d.run, RequestID: d.in.RequestID, Reason: code}); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	d.progress.Stage = StageFailed
	d.accept(StageFailed)
	r := d.result()
	r.Reason = code
	return r, nil
}

// refused ends the run with a refusal: nothing moved, the request stays as it was.
func (d *disburse) refused(code, reason string) EwaDisburseResult {
	d.progress.Stage = StageRefused
	d.progress.Code = code
	d.answer.refuse(temporal.NewApplicationError(reason, code))
	r := d.result()
	r.Reason = reason
	return r
}

// accept answers the update (once) with the request's status.
func (d *disburse) accept(status string) {
	d.answer.accept(DisburseAccepted{RequestID: d.in.RequestID, Status: status, WorkflowID: d.wfID})
}

func (d *disburse) result() EwaDisburseResult {
	r := EwaDisburseResult{RequestID: d.in.RequestID, Code: d.progress.Code, LedgerTxID: d.progress.LedgerTxID, TransferID: d.progress.TransferID}
	switch d.progress.Stage {
	case StageDisbursed:
		r.Status = ResultDisbursed
	case StageFailed:
		r.Status = ResultFailed
	case StageRefused:
		r.Status = ResultRefused
	default:
		r.Status = d.progress.Stage
	}
	return r
}

// ledgerInput is the disbursement's pending transaction: Dr receivable-from-employee principal
// + fee; Cr the funding account's mirror principal; Cr fee-income fee (no leg when it is 0). Its
// "bank_reference" is the transfer's leg reference: the statement line of the transfer carries
// the same, and reconciliation pairs the two by it. (Runs begun before legReferenceChange post
// without it, as they did; reconciliation reads their reference from the idempotency key.)
func (d *disburse) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	total, ok := money.Add(p.PrincipalSantim, p.FeeSantim)
	if !ok {
		total = -1 // refused by the ledger as INVALID_AMOUNT; the store bounds amounts far below this
	}
	legs := []activities.LedgerLeg{
		{Account: chart.EmployeeReceivable(p.EmployeeID), Direction: "DEBIT", AmountSantim: total},
		{Account: chart.PartnerBankAccount(p.Funding.Partner, p.Funding.AccountNumber), Direction: "CREDIT", AmountSantim: p.PrincipalSantim},
	}
	if p.FeeSantim > 0 {
		legs = append(legs, activities.LedgerLeg{Account: chart.FeeIncome, Direction: "CREDIT", AmountSantim: p.FeeSantim})
	}
	meta := map[string]string{"ewaRequestId": d.in.RequestID, "employeeId": p.EmployeeID}
	if ref := d.leg.Transfer.Reference; ref != d.wfID {
		meta[partnerref.LedgerMetadataKey] = ref
	}
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(partnerref.EwaDisburse) + ":" + d.wfID, Step: "disburse", Legs: legs, Metadata: meta}
}
