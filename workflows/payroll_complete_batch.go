package workflows

import (
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/savings"
)

// PayrollCompleteBatch applies one page of a run's obligations: one repayment saga per line, as
// child workflows run side by side — EwaRepay for an EWA_RECOVERY line, LoanRepay for a loan's
// LOAN_INSTALLMENT line, both with Source PAYROLL and the line's amount — each under
// PayrollDeductionWorkflowID, the (run, entry, obligation) key. The sagas are idempotent on their
// workflow id (a second run of the id finds its repayment and answers it), so a page run again
// after a crash posts nothing twice.
//
// A product mandate's line (internal/payroll/product_mandate.go) goes to its product's own saga
// with Source PAYROLL under PayrollProductWorkflowID (the (run, entry, mandate) key, hashed so
// that the transfer's partner reference stays bounded): an EQUB_CONTRIBUTION to EqubContribute
// (the payroll account → the cycle's escrow), a BNPL_INSTALLMENT to BnplCollect (the agreement's
// earliest DUE instalment; see internal/bnpl/mandate.go for where the money is), a SAVINGS_AUTOSAVE
// to SavingsMove as a DEPOSIT with a payroll source (the payroll account → the savings escrow, into
// the mandate's goal; a goal closed or a saver no longer ACTIVE is refused by its savings code).
// The product sagas are idempotent on their workflow id too: a second run under the id finds its
// own record and answers it, moving nothing again.
//
// A loan instalment the run's repayment made REPAID is remitted to its FI: LoanRemit is started
// as an abandoned child under PayrollRemitWorkflowID (one per instalment, never started twice:
// REJECT_DUPLICATE), and the batch waits only for it to start — the FI's settlement is the
// lending domain's, not the run's, and a remittance the rules refuse (the FI's settlement account
// or the payroll account not set) stays the explicit remit-to-fi step an operator takes. The
// remit saga claims the instalment first, so one started by an operator as well sends nothing
// twice.

// PayrollCompleteBatchInput is one page of obligations.
type PayrollCompleteBatchInput struct {
	TenantID      string
	RunID         string
	CorrelationID string `json:",omitempty"`
	Obligations   []payroll.Obligation
}

// Retries of a loan repayment refused because another repayment of the instalment is in flight
// (an operator's): it will be settled in moments, then this one is checked against what is left.
const (
	loanInProgressRetries = 5
	loanInProgressWait    = 30 * time.Second
)

// PayrollDeductionWorkflowID is the repayment saga's workflow id of one obligation of one entry
// of a run.
func PayrollDeductionWorkflowID(tenantID, runID string, o payroll.Obligation) string {
	return "payroll-deduction:" + tenantID + ":" + runID + ":" + o.EntryID + ":" + o.Kind + ":" + o.Reference
}

// PayrollProductWorkflowID is the product saga's workflow id for a product mandate's line of one
// entry of a run (idempotency.WorkflowID's hashed form: the saga's partner reference
// "<workflow id>.<kind>.<leg>" must stay within the gateway's bound and alphabet).
func PayrollProductWorkflowID(tenantID, runID string, o payroll.Obligation) string {
	return idempotency.WorkflowID(tenantID, "payroll-complete/"+o.Kind, runID+":"+o.EntryID+":"+o.Reference)
}

// PayrollRemitWorkflowID is the remittance saga's workflow id for an instalment a payroll run
// repaid. It is a hash (idempotency.WorkflowID's form): the remittance's partner reference is
// "<workflow id>.loan-remit.<attempt>", which must stay within the gateway's bound and alphabet.
func PayrollRemitWorkflowID(tenantID, loanID string, index int) string {
	return idempotency.WorkflowID(tenantID, "payroll-complete/remit-to-fi", loanID+"#"+strconv.Itoa(index))
}

// PayrollCompleteBatch applies the page (see above) and returns what it applied.
func PayrollCompleteBatch(ctx workflow.Context, in PayrollCompleteBatchInput) (payroll.CompletionOutcome, error) {
	outcomes := make([]obligationOutcome, len(in.Obligations))
	wg := workflow.NewWaitGroup(ctx)
	for i, o := range in.Obligations {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			outcomes[i] = applyObligation(ctx, in, o)
		})
	}
	wg.Wait(ctx)

	var out payroll.CompletionOutcome
	for i, oc := range outcomes {
		o := in.Obligations[i]
		switch {
		case oc.err != nil:
			// A saga that failed (a dependency down past its retries): the page fails, and the
			// completion with it; started again, every saga answers what it did.
			return out, oc.err
		case oc.code != "":
			// Refused whole, or (applied > 0) its excess over what was still owed.
			out.Refused.Add(o.AmountSantim - oc.applied)
			if len(out.RefusedLines) < payroll.MaxReportedRefusals {
				out.RefusedLines = append(out.RefusedLines, payroll.RefusedDeduction{EntryID: o.EntryID, Kind: o.Kind,
					Reference: o.Reference, AmountSantim: o.AmountSantim - oc.applied, Code: oc.code})
			}
			switch {
			case oc.applied == 0:
			case o.Kind == payroll.ObligationEWA:
				out.EWA.Add(oc.applied)
			default:
				out.Loans.Add(oc.applied)
			}
		case o.Kind == payroll.ObligationEWA:
			out.EWA.Add(o.AmountSantim)
		case payroll.ProductKind(o.Kind):
			if out.Products == nil {
				out.Products = map[string]payroll.Tally{}
			}
			t := out.Products[o.Kind]
			t.Add(o.AmountSantim)
			out.Products[o.Kind] = t
		default:
			out.Loans.Add(o.AmountSantim)
		}
		if oc.remitted {
			out.Remittances++
		}
	}
	return out, nil
}

// obligationOutcome is one line's outcome: recorded (no code), refused or failed by its source
// (code; applied is the part still owed that was applied, when the line exceeded it), or an
// error; remitted when a remittance was started for it.
type obligationOutcome struct {
	code     string
	applied  int64
	remitted bool
	err      error
}

func applyObligation(ctx workflow.Context, in PayrollCompleteBatchInput, o payroll.Obligation) obligationOutcome {
	if payroll.ProductKind(o.Kind) {
		return applyProduct(ctx, in, o)
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            PayrollDeductionWorkflowID(in.TenantID, in.RunID, o),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: searchAttributes(in.TenantID, "payroll:"+in.RunID),
	})
	// Each repays what is still owed of the line (UpToOutstanding): an advance or instalment
	// repaid in part by an admin route since the run was approved takes the rest, the excess is
	// refused (reported for a refund). The saga answers again with its own repayment when the
	// page is run again, so the outcome is the same.
	if o.Kind == payroll.ObligationEWA {
		var res EwaRepayResult
		err := workflow.ExecuteChildWorkflow(cctx, EwaRepayWorkflowName, EwaRepayInput{TenantID: in.TenantID, RequestID: o.RequestID,
			AmountSantim: o.AmountSantim, Source: ewa.SourcePayroll, UpToOutstanding: true, CorrelationID: in.CorrelationID}).Get(ctx, &res)
		if err != nil {
			return obligationOutcome{err: err}
		}
		return partOf(o, repayCode(res.Status, res.Code), res.Repayment.AmountSantim, ewa.CodeRepaymentExceedsOutstanding)
	}
	var res LoanRepayResult
	for attempt := 0; ; attempt++ {
		err := workflow.ExecuteChildWorkflow(cctx, LoanRepayWorkflowName, LoanRepayInput{TenantID: in.TenantID, LoanID: o.LoanID,
			Index: o.Index, AmountSantim: o.AmountSantim, Source: lending.RepaySourcePayroll, UpToOutstanding: true,
			CorrelationID: in.CorrelationID}).Get(ctx, &res)
		if err != nil {
			return obligationOutcome{err: err}
		}
		if res.Code != lending.CodeRepaymentInProgress || attempt >= loanInProgressRetries {
			break
		}
		if err := workflow.Sleep(ctx, loanInProgressWait); err != nil {
			return obligationOutcome{err: err}
		}
	}
	out := partOf(o, repayCode(res.Status, res.Code), res.Recorded.Repayment.AmountSantim, lending.CodeRepaymentExceedsOutstanding)
	if out.applied > 0 && res.Recorded.Instalment.Status == lending.InstalmentRepaid {
		if err := startRemit(ctx, in, o); err != nil {
			return obligationOutcome{err: err}
		}
		out.remitted = true
	}
	return out
}

// partOf is a repayment saga's outcome for line o: code "" when it recorded a repayment of
// applied; a repayment of less than the line (what was still owed) is applied with the rest
// refused under excessCode.
func partOf(o payroll.Obligation, code string, applied int64, excessCode string) obligationOutcome {
	switch {
	case code != "":
		return obligationOutcome{code: code}
	case applied < o.AmountSantim:
		return obligationOutcome{code: excessCode, applied: applied}
	}
	return obligationOutcome{applied: applied}
}

// repayCode is "" for a recorded repayment, else the refusal's or failure's code.
func repayCode(status, code string) string {
	if status == RepayRecorded {
		return ""
	}
	if code == "" {
		return status
	}
	return code
}

// startRemit starts the instalment's remittance as an abandoned child (see above); one already
// started (running or closed) is not an error.
func startRemit(ctx workflow.Context, in PayrollCompleteBatchInput, o payroll.Obligation) error {
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:            PayrollRemitWorkflowID(in.TenantID, o.LoanID, o.Index),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: searchAttributes(in.TenantID, o.LoanID+":"+strconv.Itoa(o.Index)),
	}
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), LoanRemitWorkflowName,
		LoanRemitInput{TenantID: in.TenantID, LoanID: o.LoanID, Index: o.Index, CorrelationID: in.CorrelationID})
	err := f.GetChildWorkflowExecution().Get(ctx, nil)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil
	}
	return err
}

// applyProduct runs a product mandate's line through its product's saga (see above); a kind whose
// product takes no payroll collection yet is refused (reported, the line still owed at it).
func applyProduct(ctx workflow.Context, in PayrollCompleteBatchInput, o payroll.Obligation) obligationOutcome {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            PayrollProductWorkflowID(in.TenantID, in.RunID, o),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: searchAttributes(in.TenantID, "payroll:"+in.RunID),
	})
	switch o.Kind {
	case payroll.KindEqubContribution:
		var res EqubContributeResult
		if err := workflow.ExecuteChildWorkflow(cctx, EqubContributeWorkflowName, EqubContributeInput{TenantID: in.TenantID,
			CorrelationID: in.CorrelationID, Payroll: &EqubPayrollSource{MembershipID: o.ProductRef, MandateID: o.Reference,
				AmountSantim: o.AmountSantim}}).Get(ctx, &res); err != nil {
			return obligationOutcome{err: err}
		}
		return productOutcome(res.Status == EqubContributePosted, res.Status, res.Code)
	case payroll.KindBnplInstallment:
		var res BnplCollectResult
		if err := workflow.ExecuteChildWorkflow(cctx, BnplCollectWorkflowName, BnplCollectInput{TenantID: in.TenantID,
			AgreementID: o.ProductRef, Source: bnpl.SourcePayroll, CorrelationID: in.CorrelationID,
			Payroll: &BnplPayrollSource{MandateID: o.Reference, AmountSantim: o.AmountSantim}}).Get(ctx, &res); err != nil {
			return obligationOutcome{err: err}
		}
		return productOutcome(res.Status == BnplCollectRecorded, res.Status, res.Code)
	case payroll.KindSavingsAutosave:
		// Runs begun before the savings auto-save was collected refused the line (none could
		// exist then: no route created the kind); they keep that answer.
		if workflow.GetVersion(ctx, savingsAutosaveChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			return obligationOutcome{code: payroll.CodeProductNotCollected}
		}
		var res SavingsMoveResult
		if err := workflow.ExecuteChildWorkflow(cctx, SavingsMoveWorkflowName, SavingsMoveInput{TenantID: in.TenantID, GoalID: o.ProductRef,
			Kind: savings.Deposit, AmountSantim: o.AmountSantim, ActorID: tenancy.System(activities.PayrollCompleteSaga),
			CorrelationID: in.CorrelationID, Payroll: &SavingsPayrollSource{MandateID: o.Reference}}).Get(ctx, &res); err != nil {
			return obligationOutcome{err: err}
		}
		return productOutcome(res.Status == SavingsSettled, res.Status, res.Code)
	}
	return obligationOutcome{code: payroll.CodeProductNotCollected}
}

// productOutcome is a product saga's answer as the line's outcome: recorded when collected, else
// refused or failed by the saga's code (its status when it has none).
func productOutcome(collected bool, status, code string) obligationOutcome {
	switch {
	case collected:
		return obligationOutcome{}
	case code == "":
		return obligationOutcome{code: status}
	}
	return obligationOutcome{code: code}
}
