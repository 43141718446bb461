package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/wallet"
)

// The wallet transfer saga's contract with its callers (the API's POST /api/wallet/transfer, tests).

// Registered names.
const (
	WalletTransferWorkflowName = "WalletTransfer"
	// WalletAcceptedUpdate completes once the gates have passed, the wallet's hold is placed and
	// the partner transfer initiated (WalletAccepted), or with the refusal (an ApplicationError
	// whose Type is the wallet code, e.g. WALLET_INSUFFICIENT_BALANCE). Sent with
	// Update-with-Start under the fixed id WalletAcceptedUpdateID.
	WalletAcceptedUpdate   = "wallet-accepted"
	WalletAcceptedUpdateID = "accepted"
	// WalletStatusQuery answers the saga's current stage (WalletProgress).
	WalletStatusQuery = "status"
)

// The outcomes (WalletAccepted.Status, WalletTransferResult.Status) besides the stages.
const (
	WalletSettled = string(wallet.Settled)
	WalletFailed  = string(wallet.Failed)
	WalletRefused = ResultRefused
)

// WalletTransferInput starts a transfer. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key); the transfer's partner reference is its leg reference
// (partnerref.Leg(partnerref.WalletTransfer, workflow id, 1)).
type WalletTransferInput struct {
	TenantID     string
	EmployeeID   string // the wallet holder (the caller's employee)
	AmountSantim int64
	Destination  wallet.BankAccount
	ActorID      string // the user who asked
	// CorrelationID is the HTTP request id, carried into activity logs and audit rows.
	CorrelationID string
	// Resume is set on a run the saga continued as new while the partner held the transfer.
	Resume *WalletResume `json:",omitempty"`
}

// WalletResume is what a run hands the next one when it continues as new.
type WalletResume = PayoutResume[wallet.Plan]

// WalletAccepted is the update's answer once the transfer is initiated.
type WalletAccepted struct {
	EmployeeID string
	Status     string // DISBURSING, or SETTLED / FAILED when the partner answered at once
	WorkflowID string
}

// WalletProgress is WalletStatusQuery's answer.
type WalletProgress struct {
	EmployeeID     string
	Stage          string
	Code           string
	LedgerTxID     string
	TransferID     string
	TransferStatus string
}

// WalletTransferResult is the workflow's result.
type WalletTransferResult struct {
	EmployeeID string
	Status     string // SETTLED, FAILED or REFUSED
	Code       string
	Reason     string
	LedgerTxID string
	TransferID string
}

// walletGates: the holder's KYC, the holder's sanctions screening, the counterparty's name
// screened against the lists, then the destination account at the partner with the name rule
// (the holder name given must be the partner's), each refusal answered with its wallet code; a
// gate that cannot decide refuses (fails closed).
var walletGates = gateTable{
	gates: []activities.GateKind{activities.GateKYC, activities.GateSanctions, activities.GateCounterparty, activities.GateAccount},
	refusals: map[string]string{
		activities.GateKycNotApproved:      wallet.CodeKycNotApproved,
		activities.GateSanctionsBlocked:    wallet.CodeSanctionsBlocked,
		activities.GateCounterpartyBlocked: wallet.CodeCounterpartySanctioned,
		activities.GateAccountNotFound:     wallet.CodeDestinationInvalid,
		activities.GateAccountMismatch:     wallet.CodeAccountMismatch,
	},
	other: wallet.CodePartnerUnavailable,
	unavailable: map[activities.GateKind]string{
		activities.GateKYC:          wallet.CodeKycNotApproved,
		activities.GateSanctions:    wallet.CodeSanctionsBlocked,
		activities.GateCounterparty: wallet.CodeSanctionsUnavailable,
		activities.GateAccount:      wallet.CodePartnerUnavailable,
	},
}

// walletRecordRefusals are the steps' refusals that end the saga as refused (nothing moved).
var walletRecordRefusals = map[string]bool{wallet.CodeSettingsNotSet: true, wallet.CodeEmployeeNotActive: true,
	wallet.CodeDestinationIsPool: true, wallet.CodePartnerNotSupported: true, wallet.CodeInsufficientBalance: true,
	wallet.CodePoolChanged: true}

// walletTransfer is one run's state.
type walletTransfer struct {
	payoutSaga[wallet.Plan, WalletAccepted]
	in WalletTransferInput
}

// WalletTransfer pays money out of an employee's wallet on the payout block: the plan (the
// organization's wallet pool, the destination), the gates (KYC, sanctions of the holder, the
// counterparty's name, the destination account with the name rule), then the reservation: with
// the wallet's lock held it checks the ledger's available balance and posts PENDING
// Dr payable-to-employee:<employee> / Cr partner-bank:<partner>:<pool> and records the transfer
// in one step (WALLET_INSUFFICIENT_BALANCE when it does not cover the amount: nothing moved),
// then transfers pool → destination. The settlement (signal, or the status lookup): SETTLED
// commits the posting and the transfer (wallet.transfer_settled.v1); FAILED voids it (the amount
// available again) and fails the transfer (wallet.transfer_failed.v1). The posting's
// bank_reference is the transfer's leg reference.
func WalletTransfer(ctx workflow.Context, in WalletTransferInput) (WalletTransferResult, error) {
	m := &walletTransfer{in: in}
	m.payoutSaga = newPayoutSaga(ctx, in.TenantID, in.CorrelationID, payoutSteps[wallet.Plan, WalletAccepted]{
		workflowName: WalletTransferWorkflowName, name: "wallet transfer saga", recordRefusals: walletRecordRefusals,
		accepted: func(status string) WalletAccepted {
			return WalletAccepted{EmployeeID: in.EmployeeID, Status: status, WorkflowID: m.wfID}
		},
		transfer: m.transferInput,
		next: func(r *WalletResume) any {
			next := in
			next.Resume = r
			return next
		},
		markPaid: func(ctx workflow.Context, transferID string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.WalletMarkSettled, m.step(func(s *activities.WalletStep) { s.TransferID, s.Reference = transferID, m.sentReference() }))
			return err
		},
		markFailed: func(ctx workflow.Context, code string) error {
			_, err := callLocal(ctx, localCatchUpRecordOptions(), activities.WalletMarkFailed, m.step(func(s *activities.WalletStep) { s.Reason = code }))
			return err
		},
		paidStage: WalletSettled, failedStage: WalletFailed,
		paid: func(ctx workflow.Context) {
			workflow.GetLogger(ctx).Info("wallet transfer settled", "tenant_id", in.TenantID, "employee_id", in.EmployeeID,
				"tx_id", m.progress.LedgerTxID, "transfer_id", m.leg.TransferID, "partner_reference", m.leg.Transfer.Reference)
		},
	})
	o, err := runPayoutSaga(ctx, &m.payoutSaga, WalletStatusQuery, func(p payoutProgress) WalletProgress {
		return WalletProgress{EmployeeID: in.EmployeeID, Stage: p.Stage, Code: p.Code, LedgerTxID: p.LedgerTxID, TransferID: p.TransferID,
			TransferStatus: p.TransferStatus}
	}, WalletAcceptedUpdate, in.Resume, m.begin)
	return WalletTransferResult{EmployeeID: in.EmployeeID, Status: o.Status, Code: o.Code, Reason: o.Reason, LedgerTxID: o.LedgerTxID,
		TransferID: o.TransferID}, err
}

func (m *walletTransfer) step(set func(*activities.WalletStep)) activities.WalletStep {
	s := activities.WalletStep{Run: m.run, EmployeeID: m.in.EmployeeID}
	if set != nil {
		set(&s)
	}
	return s
}

// begin runs the saga up to the transfer. done reports that the run ends here.
func (m *walletTransfer) begin(ctx workflow.Context) (o payoutOutcome, done bool, err error) {
	// 1. The plan.
	if m.plan, err = callLocal(ctx, localRecordOptions(), activities.WalletLoadPlan, m.step(func(s *activities.WalletStep) {
		s.AmountSantim, s.Destination = m.in.AmountSantim, m.in.Destination
	})); err != nil {
		return m.recordFailed(err)
	}

	// 2. The gates, in order; the first refusal ends the saga with nothing moved.
	m.progress.Stage = StageGates
	if code, reason, refused := runGates(ctx, m.gateInput(), walletGates); refused {
		return m.refused(code, reason), true, nil
	}

	// 3. The reservation: balance check, hold and record in one step under the wallet's lock.
	m.pay = m.newPayout(newPayout())
	m.leg = m.pay.add(m.transferInput(partnerref.Leg(partnerref.WalletTransfer, m.wfID, 1)))
	m.progress.Stage = StageLedger
	posting := m.ledgerInput()
	posted, err := call(ctx, reserveOptions(), activities.WalletReserve,
		activities.WalletReserveInput{Run: m.run, Plan: m.plan, ActorID: m.in.ActorID, Posting: posting})
	if err != nil {
		return m.recordFailed(m.abandonUnanswered(ctx, posting.IdempotencyKey, err))
	}
	m.leg.LedgerTxID, m.progress.LedgerTxID = posted.TxID, posted.TxID
	m.progress.Stage = StageClaimed

	// 4. The transfer.
	return m.initiate(ctx)
}

// transferInput is the plan's transfer (pool → destination) under ref.
func (m *walletTransfer) transferInput(ref string) activities.TransferInput {
	return activities.TransferInput{Run: m.run, Partner: m.plan.Pool.Partner, Reference: ref, FromAccount: m.plan.Pool.AccountNumber,
		ToAccount: m.plan.Destination.AccountNumber, AmountSantim: m.plan.AmountSantim, Domain: money.DomainWallet}
}

// gateInput: the holder screened and the audit rows' target, the counterparty's name screened,
// the destination looked up with the name rule.
func (m *walletTransfer) gateInput() activities.GateInput {
	return activities.GateInput{Saga: activities.WalletSaga, Run: m.run,
		SubjectType: activities.WalletGateSubjectType, SubjectID: m.plan.EmployeeID,
		TargetType: activities.WalletGateTargetType, TargetID: m.plan.EmployeeID,
		Partner: m.plan.Destination.Partner, AccountNumber: m.plan.Destination.AccountNumber,
		ExpectedHolderName: m.plan.Destination.HolderName, RequireNameMatch: true,
		CounterpartyName: m.plan.Destination.HolderName, TransferPartner: m.plan.Pool.Partner}
}

// ledgerInput is the transfer's pending transaction: Dr payable-to-employee:<employee> / Cr
// partner-bank:<partner>:<pool>, its bank_reference the transfer's leg reference.
func (m *walletTransfer) ledgerInput() activities.LedgerPostInput {
	p := m.plan
	return activities.LedgerPostInput{Run: m.run, IdempotencyKey: string(partnerref.WalletTransfer) + ":" + m.wfID, Step: string(partnerref.WalletTransfer),
		Legs: []activities.LedgerLeg{
			{Account: p.WalletAccount(), Direction: "DEBIT", AmountSantim: p.AmountSantim},
			{Account: p.Pool.Mirror(), Direction: "CREDIT", AmountSantim: p.AmountSantim},
		},
		Metadata: map[string]string{"employeeId": p.EmployeeID, partnerref.LedgerMetadataKey: m.leg.Transfer.Reference}}
}
