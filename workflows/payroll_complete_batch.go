package workflows

import (
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
)

// PayrollCompleteBatch applies one page of a run's obligations: one repayment saga per line, as
// child workflows run side by side — EwaRepay for an EWA_RECOVERY line, LoanRepay for a loan's
// LOAN_INSTALLMENT line, both with Source PAYROLL and the line's amount — each under
// PayrollDeductionWorkflowID, the (run, entry, obligation) key. The sagas are idempotent on their
// workflow id (a second run of the id finds its repayment and answers it), so a page run again
// after a crash posts nothing twice.
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
			out.Refused.Add(o.AmountSantim)
			if len(out.RefusedLines) < payroll.MaxReportedRefusals {
				out.RefusedLines = append(out.RefusedLines, payroll.RefusedDeduction{EntryID: o.EntryID, Kind: o.Kind,
					Reference: o.Reference, AmountSantim: o.AmountSantim, Code: oc.code})
			}
		case o.Kind == payroll.ObligationEWA:
			out.EWA.Add(o.AmountSantim)
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
// (code), or an error; remitted when a remittance was started for it.
type obligationOutcome struct {
	code     string
	remitted bool
	err      error
}

func applyObligation(ctx workflow.Context, in PayrollCompleteBatchInput, o payroll.Obligation) obligationOutcome {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            PayrollDeductionWorkflowID(in.TenantID, in.RunID, o),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: searchAttributes(in.TenantID, "payroll:"+in.RunID),
	})
	if o.Kind == payroll.ObligationEWA {
		var res EwaRepayResult
		err := workflow.ExecuteChildWorkflow(cctx, EwaRepayWorkflowName, EwaRepayInput{TenantID: in.TenantID, RequestID: o.RequestID,
			AmountSantim: o.AmountSantim, Source: ewa.SourcePayroll, CorrelationID: in.CorrelationID}).Get(ctx, &res)
		if err != nil {
			return obligationOutcome{err: err}
		}
		return obligationOutcome{code: repayCode(res.Status, res.Code)}
	}
	var res LoanRepayResult
	for attempt := 0; ; attempt++ {
		err := workflow.ExecuteChildWorkflow(cctx, LoanRepayWorkflowName, LoanRepayInput{TenantID: in.TenantID, LoanID: o.LoanID,
			Index: o.Index, AmountSantim: o.AmountSantim, Source: lending.RepaySourcePayroll, CorrelationID: in.CorrelationID}).Get(ctx, &res)
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
	out := obligationOutcome{code: repayCode(res.Status, res.Code)}
	if out.code == "" && res.Recorded.Instalment.Status == lending.InstalmentRepaid {
		if err := startRemit(ctx, in, o); err != nil {
			return obligationOutcome{err: err}
		}
		out.remitted = true
	}
	return out
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
