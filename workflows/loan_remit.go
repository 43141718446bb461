package workflows

import (
	"errors"
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The loan remittance saga: a REPAID instalment's collected amount sent once to the lending FI's
// settlement account, on the payout block (one leg). One remittance per instalment whatever the
// Idempotency-Key (internal/lending/remit.go): the saga claims the instalment first; a saga that
// loses the claim answers with the winner's remittance and sends nothing.

// Registered names.
const (
	LoanRemitWorkflowName = "LoanRemit"
	// LoanRemitAcceptedUpdate completes once the transfer is initiated (REMITTING) or already
	// final, with the instalment's remittance as it is — this saga's, or the winner's when another
	// saga holds it — or with the refusal (an ApplicationError whose Type is the API code).
	LoanRemitAcceptedUpdate = "loan-remit-accepted"
	// LoanRemitAcceptedUpdateID is the update's fixed id.
	LoanRemitAcceptedUpdateID = "accepted"
)

// Result statuses of the remittance saga besides the remittance's own (REMITTED, FAILED).
const (
	RemitRefused  = "REFUSED"  // a rule refused it: nothing written but the refusal's audit row
	RemitAnswered = "ANSWERED" // another saga holds the remittance: this one answered with its state
)

// LoanRemitInput starts the saga; BusinessKey "<loan>:<idx>".
type LoanRemitInput struct {
	TenantID      string // the business
	LoanID        string
	Index         int
	ActorID       string // the user who asked ("" acts as system:loan-remit)
	CorrelationID string
	// Resume is set on a run continued as new while the partner held the transfer.
	Resume *LoanRemitResume `json:",omitempty"`
}

// LoanRemitResume is what a run hands the next when it continues as new: the claimed remittance
// (the plan) and the payout block's state.
type LoanRemitResume = PayoutResume[lending.Remittance]

// LoanRemitAccepted is the update's answer.
type LoanRemitAccepted struct {
	Remittance lending.Remittance
	// Owner: this saga holds the remittance (else it is another saga's, as it was when asked).
	Owner      bool
	WorkflowID string
}

// LoanRemitResult is the workflow's result.
type LoanRemitResult struct {
	LoanID     string
	Index      int
	Status     string // REMITTED, FAILED, REFUSED or ANSWERED
	Code       string // the refusal's or failure's code
	Remittance lending.Remittance
}

// loanRemitRefusals are the claim's refusals.
var loanRemitRefusals = map[string]bool{
	lending.CodeLoanNotFound: true, lending.CodeInstalmentNotFound: true, lending.CodeInstalmentNotRepaid: true,
	lending.CodeFISettlementAccountNotSet: true, lending.CodePayrollAccountNotSet: true, lending.CodeRemitPartnerMismatch: true,
}

type loanRemit struct {
	in     LoanRemitInput
	run    activities.Run
	wfID   string
	rem    lending.Remittance
	answer answer[LoanRemitAccepted]
	pay    *payout
	leg    *payoutLeg
}

// LoanRemit remits one REPAID instalment: claim it (lending.ClaimRemittance), post the PENDING
// journal (internal/lending/doc.go "Remit": Dr payable-to-fi-partner[<fi>]:<loan> c, Cr
// payroll-clearing:<loan> c, bank_reference = the leg reference), send the transfer from the
// business's payroll account to the FI's settlement account (Domain LOAN), then on SETTLED commit
// and mark REMITTED, on FAILED void and mark FAILED (the next call re-claims it).
func LoanRemit(ctx workflow.Context, in LoanRemitInput) (LoanRemitResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	r := &loanRemit{in: in, wfID: wfID, run: activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID}}
	if err := r.answer.handle(ctx, LoanRemitAcceptedUpdate); err != nil {
		return LoanRemitResult{}, err
	}
	settlements := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)
	res, err := r.remit(ctx, settlements)
	if !r.answer.done {
		// Every path answers before it returns; this is the net under a workflow error.
		r.answer.refuse(temporal.NewApplicationError("loan remittance saga ended without an answer", activities.ErrorType(err)))
	}
	finishHandlers(ctx)
	return res, err
}

func (r *loanRemit) step() activities.LoanRemitStep {
	return activities.LoanRemitStep{Run: r.run, LoanID: r.in.LoanID, Index: r.in.Index, ActorID: r.in.ActorID}
}

func (r *loanRemit) result(status, code string) LoanRemitResult {
	return LoanRemitResult{LoanID: r.in.LoanID, Index: r.in.Index, Status: status, Code: code, Remittance: r.rem}
}

func (r *loanRemit) accept() {
	r.answer.accept(LoanRemitAccepted{Remittance: r.rem, Owner: true, WorkflowID: r.wfID})
}

func (r *loanRemit) remit(ctx workflow.Context, settlements workflow.ReceiveChannel) (LoanRemitResult, error) {
	if rs := r.in.Resume; rs != nil {
		r.rem = rs.Plan
		r.pay = r.newPayout(resumePayout(rs, func(string) activities.TransferInput { return r.transferInput() }))
		r.leg = r.pay.legs[0]
		r.accept()
	} else {
		// 1. The claim.
		c, err := callLocal(ctx, localRecordOptions(), activities.LoanRemitClaim, r.step())
		if err != nil {
			r.answer.refuse(err)
			if code := activities.ErrorType(err); loanRemitRefusals[code] && !retryableFailure(err) {
				return r.result(RemitRefused, code), nil
			}
			return r.result("", ""), err
		}
		r.rem = c.Remittance
		if !c.Claimed {
			// Another saga holds the remittance: its state is the answer; nothing is sent.
			r.answer.accept(LoanRemitAccepted{Remittance: c.Remittance, WorkflowID: r.wfID})
			return r.result(RemitAnswered, ""), nil
		}

		// 2. The pending journal, with the transfer's leg reference.
		r.pay = r.newPayout(newPayout())
		r.leg = r.pay.add(r.transferInput())
		posted, err := callLocal(ctx, localCatchUpOptions(), activities.LedgerPostPending, r.journal())
		if err != nil {
			if retryableFailure(err) {
				r.answer.refuse(err)
				return r.result("", ""), err
			}
			// The ledger refused it: nothing moved.
			return r.fail(ctx, activities.ErrorType(err))
		}
		r.rem.LedgerTxID, r.leg.LedgerTxID = posted.TxID, posted.TxID

		// 3. The transfer.
		r.pay.transfer(ctx, r.leg)
	}
	if r.leg.Final == "" {
		r.accept()
		if err := r.pay.await(ctx, settlements, r.pay.legs); err != nil {
			if errors.Is(err, errContinueAsNew) {
				next := r.in
				next.Resume = resumeOf(r.pay, r.rem)
				err = workflow.NewContinueAsNewError(ctx, LoanRemitWorkflowName, next)
			}
			return r.result(lending.RemitRemitting, ""), err
		}
	}
	if r.leg.Final == activities.TransferFailed {
		return r.fail(ctx, r.leg.FailCode)
	}

	// 4. Settled: commit and record.
	if err := doLocal(ctx, localCatchUpOptions(), activities.LedgerCommit, activities.LedgerSettleInput{Run: r.run, TxID: r.rem.LedgerTxID}); err != nil {
		r.accept()
		return r.result(lending.RemitRemitting, ""), err
	}
	mark := r.step()
	mark.LedgerTxID, mark.TransferID = r.rem.LedgerTxID, r.leg.TransferID
	rem, err := callLocal(ctx, localCatchUpRecordOptions(), activities.LoanRemitMarkRemitted, mark)
	if err != nil {
		r.accept()
		return r.result(lending.RemitRemitting, ""), err
	}
	r.rem = rem
	r.accept()
	workflow.GetLogger(ctx).Info("loan instalment remitted", "tenant_id", r.in.TenantID, "loan_id", r.in.LoanID, "index", r.in.Index,
		"tx_id", rem.LedgerTxID, "transfer_id", rem.TransferID, "partner_reference", rem.Reference)
	return r.result(lending.RemitRemitted, ""), nil
}

// fail voids the pending journal (when there is one) and marks the remittance FAILED with code.
func (r *loanRemit) fail(ctx workflow.Context, code string) (LoanRemitResult, error) {
	if code == "" {
		code = "TRANSFER_FAILED"
	}
	if r.rem.LedgerTxID != "" {
		if err := doLocal(ctx, localCatchUpOptions(), activities.LedgerVoid,
			activities.LedgerSettleInput{Run: r.run, TxID: r.rem.LedgerTxID, Reason: code}); err != nil {
			r.accept()
			return r.result(lending.RemitRemitting, code), err
		}
	}
	mark := r.step()
	mark.LedgerTxID, mark.Reason = r.rem.LedgerTxID, code
	rem, err := callLocal(ctx, localCatchUpRecordOptions(), activities.LoanRemitMarkFailed, mark)
	if err != nil {
		r.accept()
		return r.result(lending.RemitRemitting, code), err
	}
	r.rem = rem
	r.accept()
	return r.result(lending.RemitFailed, code), nil
}

func (r *loanRemit) newPayout(p *payout) *payout {
	p.pending = r.accept
	p.changed = func(l *payoutLeg) { r.rem.TransferID = l.TransferID }
	return p
}

// transferInput is the remittance's one transfer: c from the payroll account to the FI's
// settlement account, under the claimed remittance's leg reference.
func (r *loanRemit) transferInput() activities.TransferInput {
	return activities.TransferInput{Run: r.run, Partner: r.rem.From.Partner, Reference: r.rem.Reference,
		FromAccount: r.rem.From.AccountNumber, ToAccount: r.rem.To.AccountNumber, AmountSantim: r.rem.AmountSantim, Domain: money.DomainLoan}
}

// journal is the remittance's PENDING transaction (internal/lending/doc.go "Remit").
func (r *loanRemit) journal() activities.LedgerPostInput {
	m := r.rem
	return activities.LedgerPostInput{Run: r.run, IdempotencyKey: m.LedgerKey, Step: "loan-remit",
		Legs: []activities.LedgerLeg{
			{Account: chart.FIPayable(m.FIID, m.LoanID), Direction: "DEBIT", AmountSantim: m.AmountSantim},
			{Account: chart.LoanClearing(m.LoanID), Direction: "CREDIT", AmountSantim: m.AmountSantim},
		},
		Metadata: map[string]string{partnerref.LedgerMetadataKey: m.Reference, "kind": "loan_remittance", "loan_id": m.LoanID,
			"instalment_index": strconv.Itoa(m.Index), "attempt": strconv.Itoa(m.Attempt)}}
}
