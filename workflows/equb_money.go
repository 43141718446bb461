package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The equb's two money sagas, a contribution (member → the cycle's escrow) and a payout (escrow →
// the cycle's recipient), are one saga on the payout block with two descriptions (equbMove): the
// same plan, gate, pending pool posting, claim and transfer, in opposite directions and with their
// own record steps. equb_contribute.go and equb_payout.go keep each one's contract and description.

// EqubMoneyAccepted is the update's answer of either saga.
type EqubMoneyAccepted struct {
	GroupID    string
	CycleID    string
	Status     string // DISBURSING while at the bank, or the paid / FAILED stage when the partner answered at once
	WorkflowID string
}

// EqubMoneyProgress is the status query's answer of either saga.
type EqubMoneyProgress struct {
	GroupID, CycleID, Stage, Code, LedgerTxID, TransferID, TransferStatus string
}

// EqubMoneyResult is the workflow's result of either saga.
type EqubMoneyResult struct {
	GroupID, CycleID, Status, Code, Reason, LedgerTxID, TransferID string
}

// equbMove is what tells one equb money saga from the other.
type equbMove struct {
	workflowName, name, query, update string
	kind                              partnerref.Kind
	ledgerStep                        string // the pending posting's step name
	// intoEscrow: the member's account → the escrow (a contribution); otherwise escrow → member.
	intoEscrow             bool
	recordRefusals         map[string]bool
	paidStage, failedStage string
	loadPlan               activities.Activity[activities.EqubStep, equb.MoneyPlan]
	// claim records the move PENDING with its posting; markPaid and markFailed its outcome.
	claim, markPaid, markFailed func(ctx workflow.Context, s activities.EqubStep) error
	paidLog                     string
}

// equbRecord is a record step whose answer the saga does not need.
func equbRecord[O any](o workflow.LocalActivityOptions, a activities.Activity[activities.EqubStep, O]) func(workflow.Context, activities.EqubStep) error {
	return func(ctx workflow.Context, s activities.EqubStep) error {
		_, err := callLocal(ctx, o, a, s)
		return err
	}
}

// equbContributeGates: the member's own account is looked up at the partner (it pays from it, or
// receives the pot), its holder's name matched with the member's; a partner that cannot be asked
// refuses (fails closed).
var equbContributeGates = gateTable{
	gates: []activities.GateKind{activities.GateAccount},
	refusals: map[string]string{
		activities.GateAccountNotFound: equb.CodeAccountInvalid,
		activities.GateAccountMismatch: equb.CodeAccountInvalid,
	},
	other:       equb.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{activities.GateAccount: equb.CodePartnerUnavailable},
}

type equbMoney struct {
	payoutSaga[equb.MoneyPlan, EqubMoneyAccepted]
	move    equbMove
	groupID string
	base    activities.EqubStep // the record steps' input but for the run
}

// runEqubMove runs move for the group on the payout block: the plan, the member's account gate, a
// PENDING ledger transaction between partner-bank:<partner>:<escrow> and equb:pool:<tenant>:<cycle>
// (its bank_reference the leg reference), the claim (a refused claim voids the posting), the
// transfer, then the settlement: SETTLED commits the posting and marks the move paid; FAILED voids
// it and marks it failed. next is the next run's input when the run continues as new.
func runEqubMove(ctx workflow.Context, move equbMove, tenantID, correlationID string, base activities.EqubStep,
	resume *PayoutResume[equb.MoneyPlan], next func(*PayoutResume[equb.MoneyPlan]) any) (EqubMoneyResult, error) {
	d := &equbMoney{move: move, groupID: base.GroupID, base: base}
	d.payoutSaga = newPayoutSaga(ctx, tenantID, correlationID, payoutSteps[equb.MoneyPlan, EqubMoneyAccepted]{
		workflowName: move.workflowName, name: move.name, recordRefusals: move.recordRefusals,
		accepted: func(status string) EqubMoneyAccepted {
			return EqubMoneyAccepted{GroupID: d.groupID, CycleID: d.plan.CycleID, Status: status, WorkflowID: d.wfID}
		},
		transfer: d.transferInput,
		next:     next,
		markPaid: func(ctx workflow.Context, transferID string) error {
			s := d.step()
			s.TransferID, s.Reference = transferID, d.sentReference()
			return move.markPaid(ctx, s)
		},
		markFailed: func(ctx workflow.Context, code string) error {
			s := d.step()
			s.Reason = code
			return move.markFailed(ctx, s)
		},
		paidStage: move.paidStage, failedStage: move.failedStage,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info(move.paidLog, "tenant_id", tenantID, "group_id", d.groupID,
				"cycle_id", d.plan.CycleID, "tx_id", d.progress.LedgerTxID, "partner_reference", d.leg.Transfer.Reference)
		},
	})
	o, err := runPayoutSaga(ctx, &d.payoutSaga, move.query, func(p payoutProgress) EqubMoneyProgress {
		return EqubMoneyProgress{GroupID: d.groupID, CycleID: d.plan.CycleID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID,
			TransferID: p.TransferID, TransferStatus: p.TransferStatus}
	}, move.update, resume, d.begin)
	return EqubMoneyResult{GroupID: d.groupID, CycleID: d.plan.CycleID, Status: o.Status, Code: o.Code, Reason: o.Reason,
		LedgerTxID: o.LedgerTxID, TransferID: o.TransferID}, err
}

// step is the record steps' input for this run.
func (d *equbMoney) step() activities.EqubStep {
	s := d.base
	s.Run = d.run
	return s
}

func (d *equbMoney) begin(ctx workflow.Context) (o payoutOutcome, done bool, err error) {
	// 1. The plan.
	if d.plan, err = callLocal(ctx, localRecordOptions(), d.move.loadPlan, d.step()); err != nil {
		return d.recordFailed(err)
	}
	if d.groupID == "" { // a contribution by payroll deduction names its member by membership
		d.groupID, d.base.GroupID = d.plan.GroupID, d.plan.GroupID
	}
	if d.plan.Concluded != nil { // set only by plans read after it existed: old histories replay as they ran
		return d.concluded(ctx, *d.plan.Concluded)
	}
	// 2. The member's account (the organization's payroll account for a payroll deduction), by
	// the holder's name too when it is the member's.
	d.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, d.gateInput(), equbContributeGates); refused {
		return d.refused(code, reason), true, nil
	}
	// 3. The pending pool posting; from here on the transfer's reference is fixed.
	posted, err := d.postPending(ctx, partnerref.Leg(d.move.kind, d.wfID, 1), d.ledgerInput)
	if err != nil {
		d.answer.refuse(err)
		return d.outcome(), true, err
	}
	// 4. The claim: the move PENDING with its posting; a refused claim voids it.
	claim := d.step()
	claim.Plan, claim.LedgerTxID = d.plan, posted.TxID
	if o, done, err := d.claimPosted(ctx, posted.TxID, func() error { return d.move.claim(ctx, claim) }); done {
		return o, done, err
	}
	// 5. The transfer.
	return d.initiate(ctx)
}

// concluded answers the outcome this run already recorded on its contribution or payout (the
// plan found it so): its steps, run in one workflow task, concluded the move, and that task was
// lost before it completed (it timed out on a loaded worker), so they run again from the start.
// FAILED is recorded again (the mark is a no-op for the same run: settle returns early when the
// row already has the status) and answered FAILED with the recorded code; POSTED or PAID is
// answered as the paid stage. Nothing is posted or sent again: without it the payout's plan
// skipped the run's own FAILED payout and sent the pot again while the cycle was OPEN for a new
// key, and a contribution's plan read back its own row and the transfer was sent again.
func (d *equbMoney) concluded(ctx workflow.Context, c equb.Concluded) (payoutOutcome, bool, error) {
	d.progress.LedgerTxID, d.progress.TransferID = c.LedgerTxID, c.TransferID
	if c.Status == equb.MoneyFailed {
		o, err := d.fail(ctx, c.FailureCode, false)
		return o, true, err
	}
	d.progress.Stage = d.paidStage
	d.accept(d.paidStage)
	return d.outcome(), true, nil
}

// gateInput: the member screened, the group the audit rows' target, the member's account looked
// up (by the holder's name too when it is the member's), at the escrow's partner.
func (d *equbMoney) gateInput() activities.GateInput {
	return activities.GateInput{Saga: activities.EqubContributionSaga, Run: d.run,
		SubjectType: activities.EqubGateSubjectType, SubjectID: d.plan.EmployeeID, TargetType: activities.EqubGateTargetType,
		TargetID: d.groupID, Partner: d.plan.Member.Partner, AccountNumber: d.plan.Member.AccountNumber,
		ExpectedHolderName: d.plan.Member.HolderName, RequireNameMatch: d.plan.Payroll == nil && d.plan.Member.HolderName != "",
		TransferPartner: d.plan.Escrow.Partner}
}

// transferInput is the move under ref, between the member's account and the cycle's escrow.
func (d *equbMoney) transferInput(ref string) activities.TransferInput {
	from, to := d.plan.Escrow.AccountNumber, d.plan.Member.AccountNumber
	if d.move.intoEscrow {
		from, to = to, from
	}
	return activities.TransferInput{Run: d.run, Partner: d.plan.Escrow.Partner, Reference: ref, FromAccount: from,
		ToAccount: to, AmountSantim: d.plan.AmountSantim, Domain: money.DomainEqub}
}

// ledgerInput is the pool mirror's pending posting, its bank_reference the leg reference. Into the
// escrow: Dr partner-bank:<partner>:<escrow> (the money now at the escrow account) / Cr
// equb:pool:<tenant>:<cycle> (what the pool owes its members); out of it, the reverse.
func (d *equbMoney) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	escrow := chart.PartnerBankAccount(p.Escrow.Partner, p.Escrow.AccountNumber)
	debit, credit := p.PoolAccount, escrow
	if d.move.intoEscrow {
		debit, credit = escrow, p.PoolAccount
	}
	meta := map[string]string{"groupId": p.GroupID, "cycleId": p.CycleID, "membershipId": p.MembershipID,
		partnerref.LedgerMetadataKey: d.leg.Transfer.Reference}
	if p.Payroll != nil {
		meta["source"], meta["mandateId"] = equb.SourcePayroll, p.Payroll.MandateID
	}
	return activities.LedgerPostInput{Run: d.run, IdempotencyKey: string(d.move.kind) + ":" + d.wfID, Step: d.move.ledgerStep,
		Legs: []activities.LedgerLeg{
			{Account: debit, Direction: "DEBIT", AmountSantim: p.AmountSantim},
			{Account: credit, Direction: "CREDIT", AmountSantim: p.AmountSantim},
		},
		Metadata: meta}
}
