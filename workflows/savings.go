package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/savings"
)

// The savings sagas' contract with their callers (the API's deposit and withdraw routes, tests).

// Registered names.
const (
	SavingsMoveWorkflowName = "SavingsMove"
	// SavingsAcceptedUpdate completes once the gates have passed and the partner transfer has
	// been initiated (SavingsAccepted), or with the refusal (an ApplicationError whose Type is the
	// savings code, e.g. SAVINGS_INSUFFICIENT_BALANCE). Sent with Update-with-Start under the
	// fixed id SavingsAcceptedUpdateID.
	SavingsAcceptedUpdate   = "savings-accepted"
	SavingsAcceptedUpdateID = "accepted"
	// SavingsStatusQuery answers the saga's current stage (SavingsProgress).
	SavingsStatusQuery = "status"
)

// The outcomes (SavingsAccepted.Status, SavingsMoveResult.Status) besides the stages.
const (
	SavingsSettled = string(savings.Settled)
	SavingsFailed  = string(savings.Failed)
	SavingsRefused = ResultRefused
)

// SavingsMoveInput starts a deposit or a withdrawal. The workflow id is
// idempotency.WorkflowID(tenant, route, Idempotency-Key); the transfer's partner reference is its
// leg reference (partnerref.Leg(SavingsDeposit or SavingsWithdraw, workflow id, 1)).
type SavingsMoveInput struct {
	TenantID     string
	GoalID       string
	EmployeeID   string // the saver (the caller's employee); the goal must be theirs
	Kind         savings.Kind
	AmountSantim int64
	ActorID      string // the user who asked
	// CorrelationID is the HTTP request id, carried into activity logs and audit rows.
	CorrelationID string
	// Payroll is set for an auto-save deposit by payroll deduction (the payroll-completion saga,
	// internal/payroll/product_mandate.go): Kind DEPOSIT, AmountSantim what the run withheld,
	// EmployeeID unset (the goal's saver is the plan's), ActorID the completion's system actor.
	Payroll *SavingsPayrollSource `json:",omitempty"`
	// Resume is set on a run the saga continued as new while the partner held the transfer.
	Resume *SavingsResume `json:",omitempty"`
}

// SavingsPayrollSource is an auto-save deposit's source (savings.PayrollSource: the mandate).
type SavingsPayrollSource = savings.PayrollSource

// SavingsResume is what a run hands the next one when it continues as new.
type SavingsResume = PayoutResume[savings.Plan]

// SavingsAccepted is the update's answer once the transfer is initiated.
type SavingsAccepted struct {
	GoalID     string
	Kind       savings.Kind
	Status     string // DISBURSING, or SETTLED / FAILED when the partner answered at once
	WorkflowID string
}

// SavingsProgress is SavingsStatusQuery's answer.
type SavingsProgress struct {
	GoalID         string
	Stage          string
	Code           string
	LedgerTxID     string
	TransferID     string
	TransferStatus string
}

// SavingsMoveResult is the workflow's result.
type SavingsMoveResult struct {
	GoalID     string
	Kind       savings.Kind
	Status     string // SETTLED, FAILED or REFUSED
	Code       string
	Reason     string
	LedgerTxID string
	TransferID string
}

// savingsGates: the saver's KYC, their sanctions screening, then their payout account (with the
// name rule: the money comes from or goes to the saver's own account), each refusal answered
// with its savings code; a gate that cannot decide refuses (fails closed).
var savingsGates = gateTable{
	gates: []activities.GateKind{activities.GateKYC, activities.GateSanctions, activities.GateAccount},
	refusals: map[string]string{
		activities.GateKycNotApproved:   savings.CodeKycNotApproved,
		activities.GateSanctionsBlocked: savings.CodeSanctionsBlocked,
		activities.GateAccountNotFound:  savings.CodeDestinationInvalid,
		activities.GateAccountMismatch:  savings.CodeAccountMismatch,
	},
	other: savings.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{
		activities.GateKYC:       savings.CodeKycNotApproved,
		activities.GateSanctions: savings.CodeSanctionsBlocked,
		activities.GateAccount:   savings.CodePartnerUnavailable,
	},
}

// savingsPayrollGates: an auto-save deposit by payroll deduction (SavingsMoveInput.Payroll) runs
// the saver's KYC and sanctions screening — the money is still the saver's, saved into their
// goal, and the escrow may later pay it out to them — but not the account gate: the money comes
// from the employer's own payroll account (the organization's setting, where the withheld pay
// stayed), not from an account of the saver's, so neither the saver's payout account nor the
// holder-name rule has anything to check; the payroll account is the one every disbursement of
// the run was paid from.
var savingsPayrollGates = gateTable{
	gates:       savingsGates.gates[:2],
	refusals:    savingsGates.refusals,
	other:       savingsGates.other,
	unavailable: savingsGates.unavailable,
}

// savingsRecordRefusals are the steps' refusals that end the saga as refused (nothing moved).
var savingsRecordRefusals = map[string]bool{savings.CodeGoalNotFound: true, savings.CodeEscrowNotSet: true,
	savings.CodeEmployeeNotActive: true, savings.CodePayoutAccountNotSet: true, savings.CodeInsufficientBalance: true,
	savings.CodeGoalClosed: true, savings.CodePayrollAccountNotSet: true, savings.CodeEscrowChanged: true}

// savingsMove is one run's state.
type savingsMove struct {
	payoutSaga[savings.Plan, SavingsAccepted]
	in SavingsMoveInput
}

// SavingsMove moves money into (DEPOSIT) or out of (WITHDRAWAL) a savings goal on the payout
// block: the plan, the gates (KYC, sanctions, the saver's payout account; an auto-save deposit by
// payroll deduction KYC and sanctions only, savingsPayrollGates), then
//
//   - a deposit posts PENDING Dr partner-bank:<partner>:<escrow> / Cr savings-held:<goal> and
//     records the movement (a refused record voids it), then transfers payout account → escrow
//     (an auto-save: the employer's payroll account → escrow, the movement's source PAYROLL with
//     its mandate, also on the posting's metadata; the workflow id is the payroll completion's
//     PayrollProductWorkflowID, so a second run under it finds its movement and moves nothing);
//   - a withdrawal reserves: with the goal's row locked it checks the ledger's available balance
//     and posts PENDING Dr savings-held:<goal> / Cr partner-bank:<partner>:<escrow> and records
//     the movement in one step (SAVINGS_INSUFFICIENT_BALANCE when it does not cover the amount:
//     nothing moved), then transfers escrow → payout account;
//
// then the settlement (signal, or the status lookup): SETTLED commits the posting and the
// movement (savings.deposited.v1 / savings.withdrawn.v1); FAILED voids it (the amount available
// again) and fails the movement. Each posting's bank_reference is the transfer's leg reference.
func SavingsMove(ctx workflow.Context, in SavingsMoveInput) (SavingsMoveResult, error) {
	m := &savingsMove{in: in}
	m.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[savings.Plan, SavingsAccepted]{
		workflowName: SavingsMoveWorkflowName, name: "savings saga", recordRefusals: savingsRecordRefusals,
		accepted: func(status string) SavingsAccepted {
			return SavingsAccepted{GoalID: in.GoalID, Kind: in.Kind, Status: status, WorkflowID: m.wfID}
		},
		transfer: m.transferInput,
		next: func(r *SavingsResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.SavingsMarkSettled, m.step(func(s *activities.SavingsStep) { s.TransferID, s.Reference = transferID, m.sentReference() }))
			return err
		},
		markFailed: func(ctx workflow.Context, code string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.SavingsMarkFailed, m.step(func(s *activities.SavingsStep) { s.Reason = code }))
			return err
		},
		paidStage: SavingsSettled, failedStage: SavingsFailed,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info("savings movement settled", "tenant_id", in.TenantID, "goal_id", in.GoalID, "kind", string(in.Kind),
				"tx_id", m.progress.LedgerTxID, "transfer_id", m.leg.TransferID, "partner_reference", m.leg.Transfer.Reference)
		},
	})
	o, err := runPayoutSaga(ctx, &m.payoutSaga, SavingsStatusQuery, func(p payoutProgress) SavingsProgress {
		return SavingsProgress{GoalID: in.GoalID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID, TransferID: p.TransferID,
			TransferStatus: p.TransferStatus}
	}, SavingsAcceptedUpdate, in.Resume, m.begin)
	return SavingsMoveResult{GoalID: in.GoalID, Kind: in.Kind, Status: o.Status, Code: o.Code, Reason: o.Reason, LedgerTxID: o.LedgerTxID,
		TransferID: o.TransferID}, err
}

func (m *savingsMove) step(set func(*activities.SavingsStep)) activities.SavingsStep {
	s := activities.SavingsStep{Run: m.run, GoalID: m.in.GoalID}
	if set != nil {
		set(&s)
	}
	return s
}

// begin runs the saga up to the transfer. done reports that the run ends here.
func (m *savingsMove) begin(ctx workflow.Context) (o payoutOutcome, done bool, err error) {
	// 1. The plan.
	if m.plan, err = callLocal(ctx, localRecordOptions(), activities.SavingsLoadPlan, m.step(func(s *activities.SavingsStep) {
		s.EmployeeID, s.Kind, s.AmountSantim, s.Payroll = m.in.EmployeeID, m.in.Kind, m.in.AmountSantim, m.in.Payroll
	})); err != nil {
		return m.recordFailed(err)
	}

	// 2. The gates, in order; the first refusal ends the saga with nothing moved.
	m.progress.Stage = StageGates
	gates := savingsGates
	if m.in.Payroll != nil {
		gates = savingsPayrollGates
	}
	if code, reason, refused := runGates(ctx, m.gateInput(), gates); refused {
		return m.refused(code, reason), true, nil
	}

	if m.plan.Kind == savings.Withdrawal {
		// 3w. The reservation: balance check, hold and record in one step under the goal's lock.
		m.pay = m.newPayout(newPayout())
		m.leg = m.pay.add(m.transferInput(partnerref.Leg(partnerref.SavingsWithdraw, m.wfID, 1)))
		m.progress.Stage = StageLedger
		posting := m.ledgerInput()
		posted, err := call(ctx, reserveOptions(), activities.SavingsReserveWithdrawal,
			activities.SavingsReserve{Run: m.run, Plan: m.plan, ActorID: m.in.ActorID, Posting: posting})
		if err != nil {
			return m.recordFailed(m.abandonUnanswered(ctx, posting.IdempotencyKey, err))
		}
		m.leg.LedgerTxID, m.progress.LedgerTxID = posted.TxID, posted.TxID
		m.progress.Stage = StageClaimed
		return m.initiate(ctx)
	}

	// 3d. The deposit's pending posting, then its record (a refused record voids the posting).
	posted, err := m.postPending(ctx, partnerref.Leg(partnerref.SavingsDeposit, m.wfID, 1), m.ledgerInput)
	if err != nil {
		m.answer.refuse(err)
		return m.outcome(), true, err
	}
	if o, done, err := m.claimPosted(ctx, posted.TxID, func() error {
		_, err := callLocal(ctx, localRecordOptions(), activities.SavingsRecordDeposit, m.step(func(s *activities.SavingsStep) {
			s.Plan, s.LedgerTxID, s.ActorID = m.plan, posted.TxID, m.in.ActorID
		}))
		return err
	}); done {
		return o, done, err
	}

	// 4. The transfer.
	return m.initiate(ctx)
}

// transferInput is the plan's transfer under ref.
func (m *savingsMove) transferInput(ref string) activities.TransferInput {
	from, to := m.plan.From(), m.plan.To()
	return activities.TransferInput{Run: m.run, Partner: from.Partner, Reference: ref, FromAccount: from.AccountNumber, ToAccount: to.AccountNumber,
		AmountSantim: m.plan.AmountSantim, Domain: money.DomainSavings}
}

// gateInput: the saver screened, the goal the audit rows' target, the payout account looked up
// with the name rule (none for an auto-save: savingsPayrollGates has no account gate).
func (m *savingsMove) gateInput() activities.GateInput {
	in := activities.GateInput{Saga: activities.SavingsSaga, Run: m.run,
		SubjectType: activities.SavingsGateSubjectType, SubjectID: m.plan.EmployeeID,
		TargetType: activities.SavingsGateTargetType, TargetID: m.in.GoalID}
	if m.in.Payroll == nil {
		in.Partner, in.AccountNumber = m.plan.Payout.Partner, m.plan.Payout.AccountNumber
		in.ExpectedHolderName, in.RequireNameMatch = m.plan.Payout.HolderName, true
		in.TransferPartner = m.plan.Escrow.Partner
	}
	return in
}

// ledgerInput is the movement's pending transaction: a deposit Dr the escrow's mirror / Cr
// savings-held:<goal>, a withdrawal the reverse; its bank_reference the transfer's leg reference.
func (m *savingsMove) ledgerInput() activities.LedgerPostInput {
	p := m.plan
	escrow, held := "DEBIT", "CREDIT"
	kind := partnerref.SavingsDeposit
	if p.Kind == savings.Withdrawal {
		escrow, held, kind = "CREDIT", "DEBIT", partnerref.SavingsWithdraw
	}
	meta := map[string]string{"goalId": p.GoalID, "employeeId": p.EmployeeID, partnerref.LedgerMetadataKey: m.leg.Transfer.Reference}
	if p.Payroll != nil {
		meta["source"], meta["mandateId"] = savings.SourcePayroll, p.Payroll.MandateID
	}
	return activities.LedgerPostInput{Run: m.run, IdempotencyKey: string(kind) + ":" + m.wfID, Step: string(kind),
		Legs: []activities.LedgerLeg{
			{Account: p.EscrowMirror(), Direction: escrow, AmountSantim: p.AmountSantim},
			{Account: savings.Account(p.GoalID), Direction: held, AmountSantim: p.AmountSantim},
		},
		Metadata: meta}
}
