package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The equb payout saga's contract with its callers (the API's payout route, tests).

// Registered names.
const (
	EqubPayoutWorkflowName = "EqubPayout"
	// EqubPayoutAcceptedUpdate completes once the transfer escrow → recipient is initiated
	// (EqubPayoutAccepted), or with the refusal (an ApplicationError typed by the equb code).
	EqubPayoutAcceptedUpdate   = "equb-payout-accepted"
	EqubPayoutAcceptedUpdateID = "accepted"
	EqubPayoutStatusQuery      = "status"
)

// The payout's outcomes besides the stages.
const (
	EqubPayoutPaid    = equb.MoneyPaid
	EqubPayoutFailed  = equb.MoneyFailed
	EqubPayoutRefused = ResultRefused
)

// EqubPayoutInput starts the saga: the payout of the group's cycle number. The workflow id is
// idempotency.WorkflowID(tenant, route, Idempotency-Key); the transfer's partner reference is
// partnerref.Leg(partnerref.EqubPayout, workflow id, 1).
type EqubPayoutInput struct {
	TenantID      string
	GroupID       string
	Cycle         int
	ActorID       string
	CorrelationID string
	Resume        *EqubPayoutResume `json:",omitempty"`
}

// EqubPayoutResume is the state a run hands the next when it continues as new.
type EqubPayoutResume = PayoutResume[equb.MoneyPlan]

// EqubPayoutAccepted is the update's answer.
type EqubPayoutAccepted struct {
	GroupID, CycleID, Status, WorkflowID string
}

// EqubPayoutProgress is the status query's answer.
type EqubPayoutProgress struct {
	GroupID, CycleID, Stage, Code, LedgerTxID, TransferID, TransferStatus string
}

// EqubPayoutResult is the workflow's result.
type EqubPayoutResult struct {
	GroupID, CycleID, Status, Code, Reason, LedgerTxID, TransferID string
}

// equbPayoutRecordRefusals are the record steps' refusals that end the payout as refused.
var equbPayoutRecordRefusals = map[string]bool{equb.CodeGroupNotFound: true, equb.CodeCycleNotFound: true, equb.CodeCycleNotOpen: true,
	equb.CodeEscrowNotActive: true, equb.CodeContributionsPending: true, equb.CodeAlreadyPaidOut: true}

type equbPayout struct {
	payoutSaga[equb.MoneyPlan, EqubPayoutAccepted]
	in EqubPayoutInput
}

// EqubPayout pays a cycle's pot to its recipient on the payout block, only once every
// contribution the cycle waits for is POSTED: the plan (the pool = the POSTED contributions, the
// recipient's account), the account gate on it, a PENDING ledger transaction (Dr
// equb:pool:<tenant>:<cycle> / Cr partner-bank:<partner>:<escrow>, bank_reference the leg
// reference), the claim (the payout PENDING, the cycle PAYING; the database's indexes allow one
// payout per cycle and one per member of the group: a refused claim voids the posting), the
// transfer escrow → recipient, then the settlement: SETTLED commits the posting (the pool mirror
// back to zero), the payout PAID and the cycle PAID (the group COMPLETED after its last);
// FAILED voids it, the payout FAILED and the cycle OPEN again for a new key.
func EqubPayout(ctx workflow.Context, in EqubPayoutInput) (EqubPayoutResult, error) {
	d := &equbPayout{in: in}
	step := func() activities.EqubStep {
		return activities.EqubStep{Run: d.run, GroupID: in.GroupID, Cycle: in.Cycle}
	}
	d.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[equb.MoneyPlan, EqubPayoutAccepted]{
		workflowName: EqubPayoutWorkflowName, name: "equb payout saga", recordRefusals: equbPayoutRecordRefusals,
		accepted: func(status string) EqubPayoutAccepted {
			return EqubPayoutAccepted{GroupID: in.GroupID, CycleID: d.plan.CycleID, Status: status, WorkflowID: d.wfID}
		},
		transfer: d.transferInput,
		next: func(r *EqubPayoutResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			s := step()
			s.TransferID = transferID
			_, err := callLocal(ctx, localRecordOptions(), activities.EqubPayoutMarkPaid, s)
			return err
		},
		markFailed: func(ctx workflow.Context, code string) error {
			s := step()
			s.Reason = code
			_, err := callLocal(ctx, localRecordOptions(), activities.EqubPayoutMarkFailed, s)
			return err
		},
		paidStage: EqubPayoutPaid, failedStage: EqubPayoutFailed,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info("equb payout paid", "tenant_id", in.TenantID, "group_id", in.GroupID,
				"cycle_id", d.plan.CycleID, "tx_id", d.progress.LedgerTxID, "partner_reference", d.leg.Transfer.Reference)
		},
	})
	o, err := runPayoutSaga(ctx, &d.payoutSaga, EqubPayoutStatusQuery, func(p payoutProgress) EqubPayoutProgress {
		return EqubPayoutProgress{GroupID: in.GroupID, CycleID: d.plan.CycleID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID,
			TransferID: p.TransferID, TransferStatus: p.TransferStatus}
	}, EqubPayoutAcceptedUpdate, in.Resume, func(ctx workflow.Context) (payoutOutcome, bool, error) { return d.begin(ctx, step()) })
	return EqubPayoutResult{GroupID: in.GroupID, CycleID: d.plan.CycleID, Status: o.Status, Code: o.Code, Reason: o.Reason,
		LedgerTxID: o.LedgerTxID, TransferID: o.TransferID}, err
}

func (d *equbPayout) begin(ctx workflow.Context, step activities.EqubStep) (o payoutOutcome, done bool, err error) {
	// 1. The plan: every contribution settled, no payout of the cycle or its recipient yet.
	if d.plan, err = callLocal(ctx, localRecordOptions(), activities.EqubPayoutLoadPlan, step); err != nil {
		return d.recordFailed(err)
	}
	// 2. The recipient's account.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, activities.GateInput{Saga: activities.EqubContributionSaga, Run: d.run,
		SubjectType: activities.EqubGateSubjectType, SubjectID: d.plan.EmployeeID, TargetType: activities.EqubGateTargetType,
		TargetID: d.in.GroupID, Partner: d.plan.Member.Partner, AccountNumber: d.plan.Member.AccountNumber}, equbContributeGates); refused {
		return d.refused(code, reason), true, nil
	}
	// 3. The pending pool posting.
	posted, err := d.postPending(ctx, partnerref.Leg(partnerref.EqubPayout, d.wfID, 1), d.ledgerInput)
	if err != nil {
		d.answer.refuse(err)
		return d.outcome(), true, err
	}
	// 4. The claim; a refused claim voids the posting.
	claim := step
	claim.Plan, claim.LedgerTxID = d.plan, posted.TxID
	if o, done, err := d.claimPosted(ctx, posted.TxID, func() error {
		_, err := callLocal(ctx, localRecordOptions(), activities.EqubPayoutClaim, claim)
		return err
	}); done {
		return o, done, err
	}
	// 5. The transfer.
	return d.initiate(ctx)
}

// transferInput is the pot under ref: the cycle's escrow account → the recipient's account.
func (d *equbPayout) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Escrow.Partner, Reference: ref, FromAccount: d.plan.Escrow.AccountNumber,
		ToAccount: d.plan.Member.AccountNumber, AmountSantim: d.plan.AmountSantim, Domain: "EQUB"}
}

// ledgerInput is the payout's pending posting: Dr equb:pool:<tenant>:<cycle> / Cr
// partner-bank:<partner>:<escrow>, its bank_reference the leg reference.
func (d *equbPayout) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(partnerref.EqubPayout) + ":" + d.wfID, Step: "payout",
		Legs: []activities.LedgerLeg{
			{Account: p.PoolAccount, Direction: "DEBIT", AmountSantim: p.AmountSantim},
			{Account: chart.PartnerBankAccount(p.Escrow.Partner, p.Escrow.AccountNumber), Direction: "CREDIT", AmountSantim: p.AmountSantim},
		},
		Metadata: map[string]string{"groupId": p.GroupID, "cycleId": p.CycleID, "membershipId": p.MembershipID,
			partnerref.LedgerMetadataKey: d.leg.Transfer.Reference}}
}
