package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

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
var ewaRecordRefusals = map[string]bool{ewa.CodeRequestNotFound: true, ewa.CodeInvalidState: true, ewa.CodeFundingAccountNotSet: true,
	ewa.CodeEmployeeNotFound: true, ewa.CodeEmployeeNotActive: true}

// disburse is one run's state: the input and the payout saga's (payout_saga.go).
type disburse struct {
	payoutSaga[ewa.Plan, DisburseAccepted]
	in EwaDisburseInput
}

// EwaDisburse pays out one EWA request: the gates (KYC, sanctions, payout account), the claim,
// a PENDING ledger transaction, the partner transfer with the saga's leg reference (the same on
// the posting, so reconciliation pairs them), then the settlement (signal, or the status lookup
// when none arrives): SETTLED commits the ledger and marks the request DISBURSED; FAILED (or a
// rejection) voids it and marks it FAILED. A gate or state refusal moves nothing and leaves the
// request REQUESTED. The update DisburseAcceptedUpdate answers the caller once the transfer is
// initiated (or refused). The handlers, the wait and the conclusion are the payout saga's
// (payout_saga.go); the transfer is the payout block's (payout.go).
func EwaDisburse(ctx workflow.Context, in EwaDisburseInput) (EwaDisburseResult, error) {
	d := &disburse{in: in}
	d.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[ewa.Plan, DisburseAccepted]{
		workflowName: EwaDisburseWorkflowName, name: "disburse saga", recordRefusals: ewaRecordRefusals,
		accepted: func(status string) DisburseAccepted {
			return DisburseAccepted{RequestID: in.RequestID, Status: status, WorkflowID: d.wfID}
		},
		transfer: func(ref string) activities.TransferInput {
			if ref == "" {
				ref = d.wfID // a run continued before legReferenceChange
			}
			return d.transferInput(ref)
		},
		next: func(r *DisburseResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			return doLocal(ctx, localCatchUpRecordOptions(), activities.EwaMarkDisbursed,
				activities.EwaStep{Run: d.run, RequestID: in.RequestID, TransferID: transferID, Reference: d.sentReference()})
		},
		markFailed: func(ctx workflow.Context, code string) error {
			return doLocal(ctx, localCatchUpRecordOptions(), activities.EwaMarkFailed, activities.EwaStep{Run: d.run, RequestID: in.RequestID, Reason: code})
		},
		paidStage: StageDisbursed, failedStage: StageFailed, leaveTimer: in.Shape == ewaLeaveTimerChange,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info("ewa disbursed", "tenant_id", in.TenantID, "ewa_request_id", in.RequestID, "tx_id", d.progress.LedgerTxID,
				"transfer_id", d.leg.TransferID, "partner_reference", d.leg.Transfer.Reference)
		},
	})
	o, err := runPayoutSaga(ctx, &d.payoutSaga, DisburseStatusQuery, func(p payoutProgress) DisburseProgress {
		return DisburseProgress{RequestID: in.RequestID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID, TransferID: p.TransferID,
			TransferStatus: p.TransferStatus}
	}, DisburseAcceptedUpdate, in.Resume, d.begin)
	return EwaDisburseResult{RequestID: in.RequestID, Status: o.Status, Code: o.Code, Reason: o.Reason, LedgerTxID: o.LedgerTxID,
		TransferID: o.TransferID}, err
}

// transferInput is the transfer of the plan under ref: the principal from the funding account
// to the employee's payout account.
func (d *disburse) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Funding.Partner, Reference: ref,
		FromAccount: d.plan.Funding.AccountNumber, ToAccount: d.plan.Destination.AccountNumber, AmountSantim: d.plan.PrincipalSantim, Domain: money.DomainEWA}
}

// begin runs the saga up to the transfer: the plan, the gates, the claim, the pending ledger
// transaction and the transfer's initiation. done reports that the run ends here (a refusal, a
// failure recorded, or an error), with its outcome.
func (d *disburse) begin(ctx workflow.Context) (o payoutOutcome, done bool, err error) {
	if d.in.Shape == ewaInputShapeChange || d.in.Shape == ewaLeaveTimerChange {
		// ewaInputShapeChange: the recorded input says which steps; no version is asked.
		return d.beginFewer(ctx, true)
	}
	if workflow.GetVersion(ctx, ewaOneVersionChange, workflow.DefaultVersion, 1) >= 1 {
		return d.beginFewer(ctx, true)
	}
	if workflow.GetVersion(ctx, ewaFewerStepsChange, workflow.DefaultVersion, 1) >= 1 {
		return d.beginFewer(ctx, false)
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
	if err := doLocal(ctx, localRecordOptions(), activities.EwaClaim, step); err != nil {
		return d.recordFailed(err)
	}
	d.progress.Stage = StageClaimed

	// 4. The pending ledger transaction, recorded on the request. From here on the transfer's
	// reference is fixed: the posting carries it, then the transfer and every lookup.
	posted, err := d.postPending(ctx, d.reference(ctx), d.ledgerInput)
	if err != nil {
		// Nothing moved: the request fails with the ledger's reason.
		o, err := d.fail(ctx, activities.ErrorType(err), false)
		return o, true, err
	}
	d.leg.LedgerTxID, d.progress.LedgerTxID = posted.TxID, posted.TxID
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if err := doLocal(ctx, localRecordOptions(), activities.EwaSetLedgerTx, withTx); err != nil {
		o, err := d.fail(ctx, activities.ErrorType(err), true)
		return o, true, err
	}

	// 5. The transfer.
	return d.initiate(ctx)
}

// beginFewer is begin in runs begun after ewaFewerStepsChange: the plan with the KYC and
// sanctions gates in one step (ewa.Begin), the account gate, the pending ledger transaction, then
// the claim recording it in one transaction (ewa.ClaimWithLedgerTx), and the transfer. The
// posting comes before the claim, so a refused claim voids it (nothing moved); a posting the
// ledger refuses claims the request and fails it with the ledger's reason, as before. oneVersion
// (runs begun after ewaOneVersionChange) takes the leg reference without asking
// legReferenceChange: those runs ask no version but ewaOneVersionChange.
func (d *disburse) beginFewer(ctx workflow.Context, oneVersion bool) (o payoutOutcome, done bool, err error) {
	step := activities.EwaStep{Run: d.run, RequestID: d.in.RequestID}

	// 1. The plan, the KYC and the sanctions gates: one transaction.
	b, err := callLocal(ctx, localRecordOptions(), activities.EwaBegin, step)
	if err != nil {
		return d.recordFailed(err)
	}
	if b.Concluded != nil {
		return d.concluded(ctx, *b.Concluded)
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
	ref := d.legReference()
	if !oneVersion {
		ref = d.reference(ctx)
	}
	posted, err := d.postPending(ctx, ref, d.ledgerInput)
	if err != nil {
		// Nothing moved: the request fails with the ledger's reason, once this run has it.
		if cerr := doLocal(ctx, localRecordOptions(), activities.EwaClaim, step); cerr != nil {
			return d.recordFailed(cerr)
		}
		d.progress.Stage = StageClaimed
		o, err := d.fail(ctx, activities.ErrorType(err), false)
		return o, true, err
	}

	// 4. The claim, REQUESTED → DISBURSING for this run, with the posting recorded on it.
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if o, done, err := d.claimPosted(ctx, posted.TxID, func() error {
		return doLocal(ctx, localRecordOptions(), activities.EwaClaimWithLedgerTx, withTx)
	}); done {
		return o, done, err
	}

	// 5. The transfer.
	return d.initiate(ctx)
}

// concluded answers the outcome this run already recorded on its request (Begin found it so):
// its steps, run in one workflow task, failed or paid the request, and that task was lost before
// it completed (it timed out on a loaded worker), so they run again from the start. FAILED is
// recorded again (MarkFailed is a no-op for the same run) and answered FAILED with its reason;
// DISBURSED is answered DISBURSED. Without it the run refused its own request 409
// EWA_INVALID_STATE, the answer the caller then kept under its key.
func (d *disburse) concluded(ctx workflow.Context, c activities.EwaConcluded) (payoutOutcome, bool, error) {
	d.progress.LedgerTxID, d.progress.TransferID = c.LedgerTxID, c.TransferID
	if c.Status == ewa.Failed {
		o, err := d.fail(ctx, c.FailureReason, false)
		return o, true, err
	}
	d.progress.Stage = d.paidStage
	d.accept(d.paidStage)
	return d.outcome(), true, nil
}

// gateInput is the gates' input for the plan: the employee screened, the request the audit
// rows' target, the payout account looked up with the tenant's name rule.
func (d *disburse) gateInput() activities.GateInput {
	return activities.GateInput{Saga: ewaSaga, Run: d.run,
		SubjectType: activities.EwaGateSubjectType, SubjectID: d.plan.EmployeeID, TargetType: activities.EwaGateTargetType, TargetID: d.in.RequestID,
		Partner: d.plan.Destination.Partner, AccountNumber: d.plan.Destination.AccountNumber,
		ExpectedHolderName: d.plan.Destination.HolderName, RequireNameMatch: d.plan.AccountNameMatch,
		TransferPartner: d.plan.Funding.Partner}
}

// reference is the transfer's partner reference: the leg reference, or the workflow id in runs
// begun before legReferenceChange.
func (d *disburse) reference(ctx workflow.Context) string {
	if workflow.GetVersion(ctx, legReferenceChange, workflow.DefaultVersion, 1) >= 1 {
		return d.legReference()
	}
	return d.wfID
}

// legReference is the saga's one transfer's leg reference (partnerref.Leg).
func (d *disburse) legReference() string { return partnerref.Leg(partnerref.EwaDisburse, d.wfID, 1) }

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
