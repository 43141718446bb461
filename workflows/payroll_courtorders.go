package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The court-order remittance saga: a payroll run's court-order withholding sent to each payee
// account, one leg per payee on the payout block (legs numbered in the claim's order, each with
// its own reference <workflow id>.court-order-remit.<n>), each remitted exactly once: the saga
// claims its payees first (internal/payroll/courtorder_remit.go; a payee another saga holds is
// not its to send), a leg's initiation is retried under its one reference and an unknown outcome
// is resolved by a status lookup, never a second send. No journal: the withholding never sits in
// an account the platform holds or owes (courtorder_remit.go says why).

// Registered names.
const (
	PayrollCourtRemitWorkflowName = "PayrollCourtOrderRemit"
	// PayrollCourtRemitAcceptedUpdate completes once every leg is sent (some still REMITTING) or
	// final, with the saga's remittances, or with the refusal (an ApplicationError whose Type is
	// the API code).
	PayrollCourtRemitAcceptedUpdate   = "court-order-remit-accepted"
	PayrollCourtRemitAcceptedUpdateID = "accepted"
)

// Overall statuses of a submit (its remittances together) besides REFUSED.
const (
	CourtRemitRemitting         = payroll.CourtRemitRemitting
	CourtRemitRemitted          = payroll.CourtRemitRemitted
	CourtRemitFailed            = payroll.CourtRemitFailed
	CourtRemitPartiallyRemitted = "PARTIALLY_REMITTED"
)

// PayrollCourtRemitInput starts the saga; BusinessKey the run id.
type PayrollCourtRemitInput struct {
	TenantID      string
	RunID         string
	ActorID       string // the user who asked ("" acts as system:court-order-remit)
	CorrelationID string
	// Resume is set on a run continued as new while the partner held a transfer.
	Resume *PayrollCourtRemitResume `json:",omitempty"`
}

// PayrollCourtRemitResume is what a run hands the next: the claimed remittances and the payout
// block's state.
type PayrollCourtRemitResume = PayoutResume[[]payroll.CourtOrderRemittance]

// PayrollCourtRemitAccepted is the update's answer.
type PayrollCourtRemitAccepted struct {
	RunID       string
	Status      string
	Remittances []payroll.CourtOrderRemittance
}

// PayrollCourtRemitResult is the workflow's result.
type PayrollCourtRemitResult struct {
	RunID       string
	Status      string // REMITTED, PARTIALLY_REMITTED, FAILED, REFUSED, or REMITTING after a workflow error
	Code        string // the refusal's code
	Remittances []payroll.CourtOrderRemittance
}

type courtRemit struct {
	in     PayrollCourtRemitInput
	run    activities.Run
	rems   []payroll.CourtOrderRemittance
	answer answer[PayrollCourtRemitAccepted]
	pay    *payout
}

// PayrollCourtOrderRemit claims the run's payees, sends each claimed payee's transfer from the
// payroll account (Domain PAYROLL), waits for every leg's final status, and records each:
// REMITTED, or FAILED (the next submit claims that payee again).
func PayrollCourtOrderRemit(ctx workflow.Context, in PayrollCourtRemitInput) (PayrollCourtRemitResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	r := &courtRemit{in: in, run: activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID}}
	if err := r.answer.handle(ctx, PayrollCourtRemitAcceptedUpdate); err != nil {
		return PayrollCourtRemitResult{}, err
	}
	res, err := r.remit(ctx, workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName))
	if !r.answer.done {
		r.answer.refuse(temporal.NewApplicationError("court-order remittance saga ended without an answer", activities.ErrorType(err)))
	}
	finishHandlers(ctx)
	return res, err
}

func (r *courtRemit) step() activities.PayrollCourtRemitStep {
	return activities.PayrollCourtRemitStep{Run: r.run, RunID: r.in.RunID, ActorID: r.in.ActorID}
}

// status is the remittances' overall status.
func (r *courtRemit) status() string {
	n := map[string]int{}
	for _, m := range r.rems {
		n[m.Status]++
	}
	switch {
	case n[CourtRemitRemitting] > 0:
		return CourtRemitRemitting
	case n[CourtRemitRemitted] == len(r.rems):
		return CourtRemitRemitted
	case n[CourtRemitFailed] == len(r.rems):
		return CourtRemitFailed
	}
	return CourtRemitPartiallyRemitted
}

func (r *courtRemit) result(status, code string) PayrollCourtRemitResult {
	return PayrollCourtRemitResult{RunID: r.in.RunID, Status: status, Code: code, Remittances: r.rems}
}

func (r *courtRemit) accept() {
	r.answer.accept(PayrollCourtRemitAccepted{RunID: r.in.RunID, Status: r.status(), Remittances: r.rems})
}

func (r *courtRemit) remit(ctx workflow.Context, settlements workflow.ReceiveChannel) (PayrollCourtRemitResult, error) {
	if rs := r.in.Resume; rs != nil {
		r.rems = rs.Plan
		r.pay = resumePayout(rs, r.transferOf)
		r.pay.pending = r.accept
		r.accept()
	} else {
		rems, err := callLocal(ctx, localRecordOptions(), activities.PayrollCourtRemitClaim, r.step())
		if err != nil {
			r.answer.refuse(err)
			code := activities.ErrorType(err)
			if _, ok := payroll.CourtRemitRefusalOf(code); ok && !retryableFailure(err) {
				return r.result(RemitRefused, code), nil
			}
			return r.result("", ""), err
		}
		r.rems = rems
		r.pay = newPayout()
		r.pay.pending = r.accept
		for _, m := range r.rems {
			if m.Status == CourtRemitRemitting {
				r.pay.add(r.transferOf(m.Reference))
			}
		}
		// One leg after the other, each under its own reference: a worker lost between two
		// legs replays the first from history and sends only the second.
		for _, l := range r.pay.legs {
			r.pay.transfer(ctx, l)
		}
	}
	for _, l := range r.pay.legs {
		if l.Final == "" {
			r.accept()
			if err := r.pay.await(ctx, settlements, r.pay.legs); err != nil {
				if errors.Is(err, errContinueAsNew) {
					next := r.in
					next.Resume = resumeOf(r.pay, r.rems)
					err = workflow.NewContinueAsNewError(ctx, PayrollCourtRemitWorkflowName, next)
				}
				return r.result(CourtRemitRemitting, ""), err
			}
			break
		}
	}
	// Every leg is final: record each.
	for _, l := range r.pay.legs {
		mark := r.step()
		mark.Reference, mark.TransferID = l.Transfer.Reference, l.TransferID
		act := activities.PayrollCourtRemitMarkRemitted
		if l.Final == activities.TransferFailed {
			act, mark.Reason = activities.PayrollCourtRemitMarkFailed, l.FailCode
			if mark.Reason == "" {
				mark.Reason = "TRANSFER_FAILED"
			}
		}
		m, err := callLocal(ctx, localCatchUpRecordOptions(), act, mark)
		if err != nil {
			r.accept()
			return r.result(CourtRemitRemitting, ""), err
		}
		for i := range r.rems {
			if r.rems[i].Reference == m.Reference {
				r.rems[i] = m
			}
		}
	}
	r.accept()
	workflow.GetLogger(ctx).Info("court orders remitted", "tenant_id", r.in.TenantID, "run_id", r.in.RunID, "status", r.status(), "legs", len(r.pay.legs))
	return r.result(r.status(), ""), nil
}

// transferOf is the leg of the remittance whose reference is ref: its withheld amount from the
// payroll account to the payee's account.
func (r *courtRemit) transferOf(ref string) activities.TransferInput {
	for _, m := range r.rems {
		if m.Reference == ref {
			return activities.TransferInput{Run: r.run, Partner: m.FromPartner, Reference: m.Reference, FromAccount: m.FromAccount,
				ToAccount: m.Payee.AccountNumber, AmountSantim: m.AmountSantim, Domain: money.DomainPayroll}
		}
	}
	return activities.TransferInput{Run: r.run, Reference: ref}
}
