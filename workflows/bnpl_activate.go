package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The BNPL activation saga's contract with its callers (POST /api/bnpl/agreements, tests).

// Registered names.
const (
	BnplActivateWorkflowName = "BnplActivate"
	// BnplActivateAcceptedUpdate completes once the gates have passed, the agreement is recorded
	// and the merchant's settlement initiated (BnplActivateAccepted), or with the refusal (an
	// ApplicationError whose Type is the BNPL code). Sent with Update-with-Start under the fixed
	// id BnplActivateAcceptedUpdateID.
	BnplActivateAcceptedUpdate   = "bnpl-activate-accepted"
	BnplActivateAcceptedUpdateID = "accepted"
	// BnplActivateStatusQuery answers the saga's current stage (BnplActivateProgress).
	BnplActivateStatusQuery = "status"
)

// The activation's outcomes besides the stages.
const (
	BnplActivateActive  = bnpl.StatusActive
	BnplActivateFailed  = bnpl.StatusFailed
	BnplActivateRefused = ResultRefused
)

// BnplActivateInput starts the saga. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key); the agreement's id is bnpl.AgreementIDOf(workflow id); the settlement's
// partner reference is partnerref.Leg(partnerref.BnplSettle, workflow id, 1).
type BnplActivateInput struct {
	TenantID      string
	Request       bnpl.ActivateRequest
	ActorID       string // the user who asked (the agreement's created_by)
	CorrelationID string
	// Resume is set on a run the saga continued as new while the partner held the settlement.
	Resume *BnplActivateResume `json:",omitempty"`
}

// BnplActivateResume is what a run hands the next one when it continues as new.
type BnplActivateResume = PayoutResume[bnpl.ActivatePlan]

// BnplActivateAccepted is the update's answer once the settlement is initiated.
type BnplActivateAccepted struct {
	AgreementID string
	Status      string // DISBURSING, or ACTIVE / FAILED when the partner answered at once
	WorkflowID  string
}

// BnplActivateProgress is BnplActivateStatusQuery's answer.
type BnplActivateProgress struct {
	AgreementID    string
	Stage          string
	Code           string
	LedgerTxID     string
	TransferID     string
	TransferStatus string
	// MerchantStatus is the agreement's merchant status as this run's last applied merchant
	// callback left it ("" before any; bnpl_merchant_callback.go).
	MerchantStatus string `json:",omitempty"`
}

// BnplActivateResult is the workflow's result.
type BnplActivateResult struct {
	AgreementID string
	Status      string // ACTIVE, FAILED or REFUSED
	Code        string
	Reason      string
	LedgerTxID  string
	TransferID  string
}

// bnplGates: the customer's KYC, their sanctions screening, then the merchant's settlement
// account (no name rule: the merchant's account was checked when it set it), each refusal with
// its BNPL code; a gate that cannot decide refuses.
var bnplGates = gateTable{
	gates: []activities.GateKind{activities.GateKYC, activities.GateSanctions, activities.GateAccount},
	refusals: map[string]string{
		activities.GateKycNotApproved:   bnpl.CodeKycNotApproved,
		activities.GateSanctionsBlocked: bnpl.CodeSanctionsBlocked,
		activities.GateAccountNotFound:  bnpl.CodeDestinationInvalid,
		activities.GateAccountMismatch:  bnpl.CodeDestinationInvalid,
	},
	other: bnpl.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{
		activities.GateKYC:       bnpl.CodeKycNotApproved,
		activities.GateSanctions: bnpl.CodeSanctionsBlocked,
		activities.GateAccount:   bnpl.CodePartnerUnavailable,
	},
}

// bnplRecordRefusals end the saga as refused (nothing moved).
var bnplRecordRefusals = map[string]bool{bnpl.CodeMerchantNotFound: true, bnpl.CodeMerchantNotAvailable: true, bnpl.CodeEmployeeNotActive: true,
	bnpl.CodeFundingAccountNotSet: true, bnpl.CodeDuplicateOrder: true, bnpl.CodeInvalidState: true,
	bnpl.CodeNotAffordable: true}

type bnplActivate struct {
	payoutSaga[bnpl.ActivatePlan, BnplActivateAccepted]
	in BnplActivateInput
}

// BnplActivate activates one BNPL agreement on the payout block: the plan (the merchant's
// settlement account, the business's funding account, the instalments), the gates (the
// customer's KYC and sanctions, the merchant's account), a PENDING posting (Dr
// receivable-from-customer P / Cr payable-to-merchant P − d / Cr fee-income d), the agreement
// recorded ACCEPTED with its instalments (a refused record voids the posting), the settlement
// transfer funding → merchant, then: SETTLED commits the posting, posts the merchant's payment
// (Dr payable-to-merchant / Cr partner-bank:<funding>, bank_reference the leg's reference) and
// makes the agreement ACTIVE (bnpl.activated.v1); FAILED voids the posting and makes it FAILED
// (bnpl.activation_failed.v1). A gate or plan refusal writes no agreement. A merchant callback
// signalled meanwhile is applied to the agreement (handleMerchantCallbacks), every one received
// before the run closes or continues as new.
func BnplActivate(ctx workflow.Context, in BnplActivateInput) (BnplActivateResult, error) {
	d := &bnplActivate{in: in}
	d.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[bnpl.ActivatePlan, BnplActivateAccepted]{
		workflowName: BnplActivateWorkflowName, name: "bnpl activate saga", recordRefusals: bnplRecordRefusals,
		accepted: func(status string) BnplActivateAccepted {
			return BnplActivateAccepted{AgreementID: d.plan.AgreementID, Status: status, WorkflowID: d.wfID}
		},
		transfer: d.transferInput,
		next: func(r *BnplActivateResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			if _, err := callLocal(ctx, localCatchUpOptions(), activities.LedgerPost, d.paidPosting()); err != nil {
				return err
			}
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.BnplActivateMarkActive,
				activities.BnplStep{Run: d.run, AgreementID: d.plan.AgreementID, TransferID: transferID, Reference: d.sentReference()})
			return err
		},
		markFailed: func(ctx workflow.Context, code string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.BnplActivateMarkFailed,
				activities.BnplStep{Run: d.run, AgreementID: d.plan.AgreementID, Reason: code})
			return err
		},
		paidStage: BnplActivateActive, failedStage: BnplActivateFailed,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info("bnpl agreement active", "tenant_id", in.TenantID, "agreement_id", d.plan.AgreementID,
				"transfer_id", d.leg.TransferID, "partner_reference", d.leg.Transfer.Reference)
		},
	})
	callbacks := handleMerchantCallbacks(ctx, &d.run, func() string { return d.plan.AgreementID })
	o, err := runPayoutSaga(ctx, &d.payoutSaga, BnplActivateStatusQuery, func(p payoutProgress) BnplActivateProgress {
		return BnplActivateProgress{AgreementID: d.plan.AgreementID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID,
			TransferID: p.TransferID, TransferStatus: p.TransferStatus, MerchantStatus: callbacks.status}
	}, BnplActivateAcceptedUpdate, in.Resume, d.begin)
	callbacks.finish(ctx)
	return BnplActivateResult{AgreementID: d.plan.AgreementID, Status: o.Status, Code: o.Code, Reason: o.Reason,
		LedgerTxID: o.LedgerTxID, TransferID: o.TransferID}, err
}

func (d *bnplActivate) begin(ctx workflow.Context) (o payoutOutcome, done bool, err error) {
	// 1. The plan.
	if d.plan, err = callLocal(ctx, localRecordOptions(), activities.BnplActivateLoadPlan,
		activities.BnplStep{Run: d.run, Request: d.in.Request}); err != nil {
		return d.recordFailed(err)
	}

	// 2. The gates.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, d.gateInput(), bnplGates); refused {
		return d.refused(code, reason), true, nil
	}

	// 3. The pending posting.
	posted, err := d.postPending(ctx, partnerref.Leg(partnerref.BnplSettle, d.wfID, 1), d.ledgerInput)
	if err != nil {
		d.answer.refuse(err)
		return d.outcome(), true, err
	}

	// 4. The agreement recorded ACCEPTED with the posting; a refusal voids it.
	if o, done, err := d.claimPosted(ctx, posted.TxID, func() error {
		_, err := callLocal(ctx, localRecordOptions(), activities.BnplActivateCreate,
			activities.BnplStep{Run: d.run, Plan: d.plan, CreatedBy: d.in.ActorID, AgreementID: d.plan.AgreementID, LedgerTxID: posted.TxID})
		return err
	}); done {
		return o, done, err
	}

	// 5. The settlement transfer.
	return d.initiate(ctx)
}

// transferInput is the settlement: what the merchant receives, from the business's funding
// account to the merchant's settlement account.
func (d *bnplActivate) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Funding.Partner, Reference: ref,
		FromAccount: d.plan.Funding.AccountNumber, ToAccount: d.plan.Settlement.AccountNumber,
		AmountSantim: d.plan.Plan.MerchantReceivesSantim, Domain: money.DomainBNPL}
}

func (d *bnplActivate) gateInput() activities.GateInput {
	return activities.GateInput{Saga: activities.BnplActivateSaga, Run: d.run,
		SubjectType: activities.BnplGateSubjectType, SubjectID: d.plan.EmployeeID,
		TargetType: activities.BnplGateTargetType, TargetID: d.plan.AgreementID,
		Partner: d.plan.Settlement.Partner, AccountNumber: d.plan.Settlement.AccountNumber, TransferPartner: d.plan.Funding.Partner}
}

// ledgerInput is the activation's pending transaction (internal/bnpl/doc.go, "Activate").
func (d *bnplActivate) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	legs := []activities.LedgerLeg{
		{Account: chart.CustomerReceivable(p.AgreementID), Direction: "DEBIT", AmountSantim: p.Plan.PurchaseSantim},
		{Account: chart.MerchantPayable(p.MerchantID, p.AgreementID), Direction: "CREDIT", AmountSantim: p.Plan.MerchantReceivesSantim},
	}
	if p.Plan.DiscountSantim > 0 {
		legs = append(legs, activities.LedgerLeg{Account: chart.FeeIncome, Direction: "CREDIT", AmountSantim: p.Plan.DiscountSantim})
	}
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(partnerref.BnplSettle) + ":" + d.wfID, Step: "bnpl-activate",
		Legs: legs, Metadata: map[string]string{"agreementId": p.AgreementID, "employeeId": p.EmployeeID, "merchantId": p.MerchantID}}
}

// paidPosting is the merchant's payment, posted once the settlement settled
// (internal/bnpl/doc.go, "Merchant paid"), its bank_reference the settlement's leg reference.
func (d *bnplActivate) paidPosting() activities.LedgerPostInput {
	p := d.plan
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(partnerref.BnplSettle) + "-paid:" + d.wfID, Step: "bnpl-merchant-paid",
		Legs: []activities.LedgerLeg{
			{Account: chart.MerchantPayable(p.MerchantID, p.AgreementID), Direction: "DEBIT", AmountSantim: p.Plan.MerchantReceivesSantim},
			{Account: chart.PartnerBankAccount(p.Funding.Partner, p.Funding.AccountNumber), Direction: "CREDIT", AmountSantim: p.Plan.MerchantReceivesSantim},
		},
		Metadata: map[string]string{"agreementId": p.AgreementID, "merchantId": p.MerchantID,
			partnerref.LedgerMetadataKey: d.leg.Transfer.Reference}}
}
