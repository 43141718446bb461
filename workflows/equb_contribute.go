package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The equb contribution saga's contract with its callers (the API's contribute route, tests).

// Registered names.
const (
	EqubContributeWorkflowName = "EqubContribute"
	// EqubContributeAcceptedUpdate completes once the gate has passed and the transfer is
	// initiated (EqubContributeAccepted), or with the refusal (an ApplicationError whose Type is
	// the equb code). The API sends it with Update-with-Start under EqubContributeAcceptedUpdateID.
	EqubContributeAcceptedUpdate   = "equb-contribute-accepted"
	EqubContributeAcceptedUpdateID = "accepted"
	EqubContributeStatusQuery      = "status"
)

// The contribution's outcomes besides the stages: POSTED (settled, the pool posting committed),
// FAILED (the bank refused it, the posting voided), REFUSED (nothing moved).
const (
	EqubContributePosted  = equb.MoneyPosted
	EqubContributeFailed  = equb.MoneyFailed
	EqubContributeRefused = ResultRefused
)

// EqubContributeInput starts the saga: the user's contribution to the group's OPEN cycle. The
// workflow id is idempotency.WorkflowID(tenant, route, Idempotency-Key); the transfer's partner
// reference is partnerref.Leg(partnerref.EqubContribution, workflow id, 1).
type EqubContributeInput struct {
	TenantID      string
	GroupID       string
	UserID        string // the member, by their user (the session's)
	CorrelationID string
	Resume        *EqubContributeResume `json:",omitempty"`
}

// EqubContributeResume is the state a run hands the next when it continues as new while the
// partner holds the transfer.
type EqubContributeResume = PayoutResume[equb.MoneyPlan]

// EqubContributeAccepted is the update's answer.
type EqubContributeAccepted struct {
	GroupID    string
	CycleID    string
	Status     string // DISBURSING while at the bank, or POSTED / FAILED when the partner answered at once
	WorkflowID string
}

// EqubContributeProgress is the status query's answer.
type EqubContributeProgress struct {
	GroupID, CycleID, Stage, Code, LedgerTxID, TransferID, TransferStatus string
}

// EqubContributeResult is the workflow's result.
type EqubContributeResult struct {
	GroupID, CycleID, Status, Code, Reason, LedgerTxID, TransferID string
}

// equbContributeGates: the member's own account is looked up at the partner (it pays from it);
// a partner that cannot be asked refuses (fails closed).
var equbContributeGates = gateTable{
	gates: []activities.GateKind{activities.GateAccount},
	refusals: map[string]string{
		activities.GateAccountNotFound: equb.CodeAccountInvalid,
		activities.GateAccountMismatch: equb.CodeAccountInvalid,
	},
	other:       equb.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{activities.GateAccount: equb.CodePartnerUnavailable},
}

// equbRecordRefusals are the record steps' refusals that end the saga as refused.
var equbRecordRefusals = map[string]bool{equb.CodeGroupNotFound: true, equb.CodeNotMember: true, equb.CodeCycleNotOpen: true,
	equb.CodeEscrowNotActive: true, equb.CodeAlreadyContributed: true}

type equbContribute struct {
	payoutSaga[equb.MoneyPlan, EqubContributeAccepted]
	in EqubContributeInput
}

// EqubContribute moves one member's contribution into the cycle's escrow on the payout block:
// the plan (the OPEN cycle with its ACTIVE escrow binding, the member's account), the account
// gate, a PENDING ledger transaction (Dr partner-bank:<partner>:<escrow> / Cr
// equb:pool:<tenant>:<cycle>, its bank_reference the leg reference), the claim recording the
// contribution PENDING (the database's index refuses a second one of the member for the cycle: the
// posting is voided), the transfer member → escrow, then the settlement (the bank callback's
// signal for domain EQUB, or the status lookup): SETTLED commits the posting and the contribution
// is POSTED; FAILED voids it and the contribution is FAILED (failContribution), nothing posted.
func EqubContribute(ctx workflow.Context, in EqubContributeInput) (EqubContributeResult, error) {
	d := &equbContribute{in: in}
	step := func() activities.EqubStep {
		return activities.EqubStep{Run: d.run, GroupID: in.GroupID, UserID: in.UserID}
	}
	d.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[equb.MoneyPlan, EqubContributeAccepted]{
		workflowName: EqubContributeWorkflowName, name: "equb contribute saga", recordRefusals: equbRecordRefusals,
		accepted: func(status string) EqubContributeAccepted {
			return EqubContributeAccepted{GroupID: in.GroupID, CycleID: d.plan.CycleID, Status: status, WorkflowID: d.wfID}
		},
		transfer: d.transferInput,
		next: func(r *EqubContributeResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			s := step()
			s.TransferID = transferID
			_, err := callLocal(ctx, localRecordOptions(), activities.EqubContributionMarkPosted, s)
			return err
		},
		markFailed: func(ctx workflow.Context, code string) error {
			s := step()
			s.Reason = code
			_, err := callLocal(ctx, localRecordOptions(), activities.EqubContributionMarkFailed, s)
			return err
		},
		paidStage: EqubContributePosted, failedStage: EqubContributeFailed,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info("equb contribution posted", "tenant_id", in.TenantID, "group_id", in.GroupID,
				"cycle_id", d.plan.CycleID, "tx_id", d.progress.LedgerTxID, "partner_reference", d.leg.Transfer.Reference)
		},
	})
	o, err := runPayoutSaga(ctx, &d.payoutSaga, EqubContributeStatusQuery, func(p payoutProgress) EqubContributeProgress {
		return EqubContributeProgress{GroupID: in.GroupID, CycleID: d.plan.CycleID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID,
			TransferID: p.TransferID, TransferStatus: p.TransferStatus}
	}, EqubContributeAcceptedUpdate, in.Resume, func(ctx workflow.Context) (payoutOutcome, bool, error) { return d.begin(ctx, step()) })
	return EqubContributeResult{GroupID: in.GroupID, CycleID: d.plan.CycleID, Status: o.Status, Code: o.Code, Reason: o.Reason,
		LedgerTxID: o.LedgerTxID, TransferID: o.TransferID}, err
}

func (d *equbContribute) begin(ctx workflow.Context, step activities.EqubStep) (o payoutOutcome, done bool, err error) {
	// 1. The plan.
	if d.plan, err = callLocal(ctx, localRecordOptions(), activities.EqubContributionLoadPlan, step); err != nil {
		return d.recordFailed(err)
	}
	// 2. The member's account.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, activities.GateInput{Saga: activities.EqubContributionSaga, Run: d.run,
		SubjectType: activities.EqubGateSubjectType, SubjectID: d.plan.EmployeeID, TargetType: activities.EqubGateTargetType,
		TargetID: d.in.GroupID, Partner: d.plan.Member.Partner, AccountNumber: d.plan.Member.AccountNumber}, equbContributeGates); refused {
		return d.refused(code, reason), true, nil
	}
	// 3. The pending pool posting; from here on the transfer's reference is fixed.
	posted, err := d.postPending(ctx, partnerref.Leg(partnerref.EqubContribution, d.wfID, 1), d.ledgerInput)
	if err != nil {
		d.answer.refuse(err)
		return d.outcome(), true, err
	}
	// 4. The claim: the contribution PENDING with its posting; a refused claim voids it.
	claim := step
	claim.Plan, claim.LedgerTxID = d.plan, posted.TxID
	if o, done, err := d.claimPosted(ctx, posted.TxID, func() error {
		_, err := callLocal(ctx, localRecordOptions(), activities.EqubContributionClaim, claim)
		return err
	}); done {
		return o, done, err
	}
	// 5. The transfer.
	return d.initiate(ctx)
}

// transferInput is the contribution under ref: member's account → the cycle's escrow account.
func (d *equbContribute) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: d.run, Partner: d.plan.Escrow.Partner, Reference: ref, FromAccount: d.plan.Member.AccountNumber,
		ToAccount: d.plan.Escrow.AccountNumber, AmountSantim: d.plan.AmountSantim, Domain: "EQUB"}
}

// ledgerInput is the pool mirror's pending posting: Dr partner-bank:<partner>:<escrow> (the
// money now at the escrow account) / Cr equb:pool:<tenant>:<cycle> (what the pool owes its
// members), its bank_reference the leg reference.
func (d *equbContribute) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(partnerref.EqubContribution) + ":" + d.wfID, Step: "contribute",
		Legs: []activities.LedgerLeg{
			{Account: chart.PartnerBankAccount(p.Escrow.Partner, p.Escrow.AccountNumber), Direction: "DEBIT", AmountSantim: p.AmountSantim},
			{Account: p.PoolAccount, Direction: "CREDIT", AmountSantim: p.AmountSantim},
		},
		Metadata: map[string]string{"groupId": p.GroupID, "cycleId": p.CycleID, "membershipId": p.MembershipID,
			partnerref.LedgerMetadataKey: d.leg.Transfer.Reference}}
}
