package workflows

import (
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The payroll disbursement saga's contract with its callers (the API's disburse route, tests).

// Registered names.
const (
	PayrollDisburseWorkflowName = "PayrollDisburse"
	// PayrollDisburseAcceptedUpdate completes once the run is DISBURSING and its entries are
	// on their way (PayrollDisburseAccepted), or with the refusal (an ApplicationError whose Type
	// is the payroll code, e.g. PAYROLL_ACCOUNT_NOT_SET). The API sends it with
	// Update-with-Start, its id the Idempotency-Key's workflow id (not a fixed one: the server
	// answers an update id a closed run has seen with that run's outcome, and a refused saga's
	// run id is used again by the next).
	PayrollDisburseAcceptedUpdate = "payroll-disburse-accepted"
	// PayrollDisburseStatusQuery answers the saga's stage and counts (PayrollDisburseProgress);
	// the fan-out's own FanoutStatusQuery (PayrollFanoutID) answers its batches.
	PayrollDisburseStatusQuery = "status"
)

// Stages of the payroll sagas (PayrollDisburseProgress.Stage) besides the shared ones.
const (
	StagePaying    = "PAYING"    // the fan-out is sending and settling the entries
	StageFinishing = "FINISHING" // every entry is final; the run is being closed
	StageDone      = "DONE"
)

// PayrollDisburseWorkflowID is the saga's workflow id: one per run, so a retried request, a
// second request with another Idempotency-Key or a racing one all reach the same saga (and a
// run is never paid twice). A run whose saga was refused (a payroll account not set or not
// confirmed) may be disbursed again: the refused saga ends failed, and the id admits a new run
// after a failed one only (the API's start options).
func PayrollDisburseWorkflowID(runID string) string { return "payroll-disburse-" + runID }

// PayrollFanoutID is the id of the fan-out a payroll saga (the run's, or an entry's retry) pays
// through; its batches are FanoutBatchID of it.
func PayrollFanoutID(sagaID string) string { return sagaID + activities.PayrollFanoutSuffix }

// PayrollFanoutPartID is the id of part (1-based) of a run's items: a run pays MaxFanoutItems
// entries per fan-out, one after the other; part 1 is PayrollFanoutID.
func PayrollFanoutPartID(sagaID string, part int) string {
	if part <= 1 {
		return PayrollFanoutID(sagaID)
	}
	return PayrollFanoutID(sagaID) + strconv.Itoa(part)
}

// PayrollDisburseInput starts the saga.
type PayrollDisburseInput struct {
	TenantID string
	RunID    string
	ActorID  string // the user who asked: the claim's audit actor; the other steps act as system:payroll-disburse
	// CorrelationID is the HTTP request id, carried into activity logs and audit rows.
	CorrelationID string
}

// PayrollDisburseAccepted is the update's answer once the run is claimed.
type PayrollDisburseAccepted struct {
	RunID      string
	Status     string // DISBURSING (or later, when the saga had claimed it before)
	WorkflowID string
	// Sent is how many entries the fan-out pays; PaidWithoutTransfer (net 0) and FailedUnsent
	// (payout account at another partner) were settled at the claim.
	Sent, PaidWithoutTransfer, FailedUnsent int
}

// PayrollDisburseProgress is PayrollDisburseStatusQuery's answer.
type PayrollDisburseProgress struct {
	RunID    string
	Stage    string
	Code     string // a refusal's code
	FanoutID string // set while and after it pays
	Sent     int
}

// PayrollDisburseResult is the saga's result (a refusal fails the saga instead, with its code).
type PayrollDisburseResult struct {
	RunID string
	// Status is the run's once the fan-out is done: DISBURSED, or DISBURSING while an
	// operator's retry of an entry is still paying it (its saga closes the run).
	Status                                  string
	Sent, PaidWithoutTransfer, FailedUnsent int
	Totals                                  FanoutTotals // of the entries sent
	FailedEntries                           []string     // the entries sent whose transfer failed, by entry id
	WorkflowID                              string
}

// payrollGates is the disbursement's reading of the account-lookup gate on the employer's payroll
// account (the only gate: the payer is the organization, whose KYC is its onboarding).
var payrollGates = gateTable{
	gates: []activities.GateKind{activities.GateAccount},
	refusals: map[string]string{
		activities.GateAccountNotFound: payroll.CodePayrollAccountInvalid,
		activities.GateAccountMismatch: payroll.CodePayrollAccountInvalid,
	},
	other:       payroll.CodePayrollAccountInvalid,
	unavailable: map[activities.GateKind]string{activities.GateAccount: payroll.CodePayrollAccountUnavailable},
}

// payrollDisburse is one run's state.
type payrollDisburse struct {
	in       PayrollDisburseInput
	wfID     string
	run      activities.Run
	progress PayrollDisburseProgress
	answer   answer[PayrollDisburseAccepted]
}

// PayrollDisburse pays an APPROVED run's entries, each its net from the employer's payroll
// account to the employee's payout account: the plan (the run, the payroll account: set, else
// PAYROLL_ACCOUNT_NOT_SET), the account-lookup gate on the payroll account
// (PAYROLL_ACCOUNT_INVALID; PAYROLL_ACCOUNT_LOOKUP_UNAVAILABLE), the claim (APPROVED →
// DISBURSING, net-0 entries PAID without a transfer), then the fan-out block as a child
// (Fanout: batches of 500 as child workflows, each one bulk disbursement, its items' outcomes
// recorded on the entries by PayrollDisburseRecord as they settle — so no history holds more
// than a batch's events), and Finish: DISBURSED once every entry is PAID or FAILED. A refusal
// before the claim changes nothing (the gate's audit row aside) and fails the saga with the
// code, which the update answers. A worker that dies anywhere resumes from the histories: the
// claim and the record steps are idempotent, the fan-out sends each batch once.
func PayrollDisburse(ctx workflow.Context, in PayrollDisburseInput) (PayrollDisburseResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	d := &payrollDisburse{in: in, wfID: wfID, run: activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID},
		progress: PayrollDisburseProgress{RunID: in.RunID, Stage: StageLoading}}
	if err := workflow.SetQueryHandler(ctx, PayrollDisburseStatusQuery, func() (PayrollDisburseProgress, error) { return d.progress, nil }); err != nil {
		return PayrollDisburseResult{}, err
	}
	if err := d.answer.handle(ctx, PayrollDisburseAcceptedUpdate); err != nil {
		return PayrollDisburseResult{}, err
	}
	res, err := d.pay(ctx)
	if !d.answer.done {
		// Every refusal answers before it returns; this is the net under a failure.
		d.answer.refuse(temporal.NewApplicationError("payroll disburse saga ended without an answer", activities.ErrorType(err)))
	}
	finishHandlers(ctx)
	return res, err
}

func (d *payrollDisburse) pay(ctx workflow.Context) (PayrollDisburseResult, error) {
	step := activities.PayrollDisburseStep{Run: d.run, RunID: d.in.RunID}
	plan, err := callLocal(ctx, localRecordOptions(), activities.PayrollDisburseLoadPlan, step)
	if err != nil {
		return d.refused(err)
	}
	if plan.Status == payroll.RunApproved {
		d.progress.Stage = StageGates
		gate := activities.GateInput{Saga: activities.PayrollDisburseSaga, Run: d.run, SubjectType: "ORGANIZATION", SubjectID: d.in.TenantID,
			TargetType: payroll.TargetRun, TargetID: d.in.RunID, Partner: plan.Account.Partner, AccountNumber: plan.Account.AccountNumber,
			ExpectedHolderName: plan.Account.HolderName, RequireNameMatch: true}
		if code, reason, refused := runGates(ctx, gate, payrollGates); refused {
			return d.refused(temporal.NewNonRetryableApplicationError(reason, code, nil))
		}
	}
	step.ActorID, step.Partner = d.in.ActorID, plan.Account.Partner
	claim, err := call(ctx, recordOptions(), activities.PayrollDisburseClaim, step)
	if err != nil {
		return d.refused(err)
	}
	d.progress.Stage, d.progress.Sent = StageClaimed, len(claim.Items)
	res := PayrollDisburseResult{RunID: d.in.RunID, WorkflowID: d.wfID, Sent: len(claim.Items), PaidWithoutTransfer: claim.PaidWithout,
		FailedUnsent: claim.FailedUnsent}
	d.answer.accept(PayrollDisburseAccepted{RunID: d.in.RunID, Status: claim.Status, WorkflowID: d.wfID, Sent: len(claim.Items),
		PaidWithoutTransfer: claim.PaidWithout, FailedUnsent: claim.FailedUnsent})

	// A fan-out carries at most MaxFanoutItems: a larger run is paid in parts, one after the
	// other, each its own fan-out (the same parts on every saga of the run: the claim's list is
	// fixed).
	for part, first := 1, 0; first < len(claim.Items); part, first = part+1, first+MaxFanoutItems {
		d.progress.Stage, d.progress.FanoutID = StagePaying, PayrollFanoutPartID(d.wfID, part)
		fres, err := payEntries(ctx, d.run, plan.Account, d.progress.FanoutID, claim.Items[first:min(first+MaxFanoutItems, len(claim.Items))])
		if err != nil {
			// A batch failed (its record step could not catch up): the run stays DISBURSING for an
			// operator, who sees the batch's history (its items may have been paid).
			return res, err
		}
		res.Totals.plus(fres.FanoutTotals)
		for _, f := range fres.Failures {
			res.FailedEntries = append(res.FailedEntries, f.Key)
		}
	}
	d.progress.Stage = StageFinishing
	state, err := call(ctx, catchUpRecordOptions(), activities.PayrollDisburseFinish, activities.PayrollDisburseStep{Run: d.run, RunID: d.in.RunID})
	if err != nil {
		return res, err
	}
	res.Status = state.Status
	d.progress.Stage = StageDone
	return res, runDisbursed(ctx, d.run, d.in.RunID, state)
}

// refused answers the caller with err's code and fails the saga with it (so that the run's id
// admits a new saga once the cause is fixed); err is a record step's or a gate's refusal, or
// any error of a step before the claim (nothing has changed).
func (d *payrollDisburse) refused(err error) (PayrollDisburseResult, error) {
	code := activities.ErrorType(err)
	d.progress.Stage, d.progress.Code = StageRefused, code
	d.answer.refuse(err)
	return PayrollDisburseResult{RunID: d.in.RunID, WorkflowID: d.wfID, Status: ResultRefused}, err
}

// payEntries pays items from the payroll account through the fan-out block (a child workflow
// with the given id), the outcomes recorded on the entries by PayrollDisburseRecord.
func payEntries(ctx workflow.Context, run activities.Run, from payroll.Account, fanoutID string, items []payroll.DisburseItem) (FanoutResult, error) {
	fin := FanoutInput{FanoutParams: FanoutParams{TenantID: run.TenantID, CorrelationID: run.CorrelationID, Partner: from.Partner,
		FromAccount: from.AccountNumber, Domain: money.DomainPayroll, Record: activities.PayrollDisburseRecord}, Items: make([]FanoutItem, len(items))}
	for i, it := range items {
		fin.Items[i] = FanoutItem{Key: it.EntryID, ToAccount: it.ToAccount, AmountSantim: it.AmountSantim}
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fanoutID})
	var res FanoutResult
	err := workflow.ExecuteChildWorkflow(cctx, FanoutWorkflowName, fin).Get(ctx, &res)
	return res, err
}

// runDisbursed is the hook of the run's completion, called by a saga (the run's, or an entry's
// retry) once its Finish has answered. When the run is DISBURSED with every entry PAID it starts
// the completion (DISBURSED → COMPLETED: the deductions applied, workflows/payroll_complete.go)
// as an abandoned child whose id is derived from the run, so two sagas reaching this point start
// it once. A run with FAILED entries waits: an operator retries them (the retry that pays the last
// one starts the completion here), because a completed run's entries are not paid any more and a
// FAILED entry's deductions stay owed at their source; a run whose failures are final is
// completed by an operator (StartPayrollComplete).
func runDisbursed(ctx workflow.Context, run activities.Run, runID string, state activities.PayrollRunState) error {
	if state.Status != payroll.RunDisbursed || state.Failed > 0 || state.Disbursing > 0 {
		return nil
	}
	workflow.GetLogger(ctx).Info("payroll run disbursed, every entry paid: starting its completion", "run_id", runID, "workflow_id", run.WorkflowID)
	return StartPayrollCompleteChild(ctx, run.TenantID, runID, run.CorrelationID)
}
