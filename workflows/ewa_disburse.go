package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The fallback when no settlement signal arrives: the saga asks the partner after
// SettlementPollFirst, then at doubling intervals up to SettlementPollMax. Package variables so
// tests can shorten them (virtual time makes the defaults instant in the SDK's test suite).
var (
	SettlementPollFirst = 30 * time.Second
	SettlementPollMax   = 10 * time.Minute
	// SettlementPollsPerRun is how many status lookups one run makes before it continues as new
	// (sooner if Temporal suggests it): at the 10-minute cap, about 16 hours and 1,100 history
	// events per run, however long the partner holds the transfer.
	SettlementPollsPerRun = 100
)

// Stages of the disburse saga (DisburseProgress.Stage).
const (
	StageLoading    = "LOADING"
	StageGates      = "GATES"
	StageClaimed    = "CLAIMED"
	StageLedger     = "LEDGER_PENDING"
	StageInitiating = "INITIATING"
	StageDisbursing = "DISBURSING" // the partner holds the transfer (or its outcome is being resolved)
	StageSettling   = "SETTLING"   // the outcome is known; the ledger and the request are catching up
	StageDisbursed  = "DISBURSED"
	StageFailed     = "FAILED"
	StageRefused    = "REFUSED"
)

// Result statuses (EwaDisburseResult.Status) besides the request's own.
const (
	ResultDisbursed = string(ewa.Disbursed)
	ResultFailed    = string(ewa.Failed)
	ResultRefused   = "REFUSED"
)

// DisburseProgress is DisburseStatusQuery's answer.
type DisburseProgress struct {
	RequestID  string
	Stage      string
	Code       string // a refusal's or failure's code
	LedgerTxID string
	TransferID string
	// TransferStatus is the partner's last word (PENDING, SETTLED, FAILED), "" before it.
	TransferStatus string
}

// ewaSaga is the audit actor and log name of the saga's steps.
const ewaSaga = activities.EwaSaga

// legReferenceChange is the GetVersion id of the change that gave the saga's transfer a leg
// reference (partnerref.Leg: "<workflow id>.ewa-disburse.1", also put on the ledger posting as
// "bank_reference") instead of the bare workflow id, which reconciliation could not tie to the
// posting. Runs begun before it keep the workflow id for every lookup of their transfer: the
// partner holds it under that reference.
const legReferenceChange = "partner-leg-reference"

// disburse is one run's state: what the query answers and what the update waits on.
type disburse struct {
	in   EwaDisburseInput
	wfID string
	// ref is the transfer's partner reference: the leg reference, or the workflow id in runs
	// begun before legReferenceChange.
	ref      string
	progress DisburseProgress
	plan     ewa.Plan

	// The update's answer, once decided: accepted, or refusal (an ApplicationError).
	answered bool
	accepted DisburseAccepted
	refusal  error

	// Settlement: the first final status wins.
	seenEvents map[string]bool
	seenOrder  []string // seenEvents in the order they arrived (carried on continue-as-new)
	final      string   // SETTLED or FAILED
	failCode   string
	transferID string
}

// EwaDisburse pays out one EWA request: the gates (KYC, sanctions, payout account), the claim,
// a PENDING ledger transaction, the partner transfer with the saga's leg reference (the same on
// the posting, so reconciliation pairs them), then the
// settlement (signal, or the status lookup when none arrives): SETTLED commits the ledger and
// marks the request DISBURSED; FAILED (or a rejection) voids it and marks it FAILED. A gate or
// state refusal moves nothing and leaves the request REQUESTED. The update DisburseAcceptedUpdate
// answers the caller once the transfer is initiated (or refused).
func EwaDisburse(ctx workflow.Context, in EwaDisburseInput) (EwaDisburseResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	d := &disburse{in: in, wfID: wfID, ref: wfID, seenEvents: map[string]bool{},
		progress: DisburseProgress{RequestID: in.RequestID, Stage: StageLoading}}
	if err := workflow.SetQueryHandler(ctx, DisburseStatusQuery, func() (DisburseProgress, error) { return d.progress, nil }); err != nil {
		return EwaDisburseResult{}, err
	}
	if err := workflow.SetUpdateHandler(ctx, DisburseAcceptedUpdate, func(ctx workflow.Context) (DisburseAccepted, error) {
		if err := workflow.Await(ctx, func() bool { return d.answered }); err != nil {
			return DisburseAccepted{}, err
		}
		return d.accepted, d.refusal
	}); err != nil {
		return EwaDisburseResult{}, err
	}
	settlements := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)

	res, err := d.run(ctx, settlements)
	if !d.answered {
		// Every path answers before it returns; this is the net under a workflow error.
		ae := temporal.NewApplicationError("disburse saga ended without an answer", activities.ErrorType(err))
		if err == nil {
			ae = temporal.NewApplicationError("disburse saga ended: "+res.Status, res.Code)
		}
		d.refuse(ae)
	}
	// The update's handler returns once answered; let it finish before the run closes.
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return res, err
}

func (d *disburse) run(ctx workflow.Context, settlements workflow.ReceiveChannel) (EwaDisburseResult, error) {
	if r := d.in.Resume; r != nil {
		d.resume(r)
	} else if res, done, err := d.begin(ctx); done {
		return res, err
	}
	if d.final == "" {
		d.progress.Stage = StageDisbursing
		d.accept(StageDisbursing)
		if err := d.await(ctx, settlements); err != nil {
			return d.result(), err // continued as new
		}
	}
	return d.conclude(ctx)
}

// resume restores a continued run: the update is answered DISBURSING (as the first run
// answered it), and the wait goes on where the last run left it.
func (d *disburse) resume(r *DisburseResume) {
	d.plan = r.Plan
	if r.Reference != "" {
		d.ref = r.Reference // else a run continued before legReferenceChange: the workflow id
	}
	d.progress.LedgerTxID, d.progress.TransferID, d.progress.TransferStatus = r.LedgerTxID, r.TransferID, r.TransferStatus
	d.transferID = r.TransferID
	for _, id := range r.SeenEvents {
		d.seen(id)
	}
	d.accept(StageDisbursing)
}

// begin runs the saga up to the transfer: the plan, the gates, the claim, the pending ledger
// transaction and the transfer's initiation. done reports that the run ends here (a refusal, a
// failure recorded, or an error), with its result.
func (d *disburse) begin(ctx workflow.Context) (res EwaDisburseResult, done bool, err error) {
	log := workflow.GetLogger(ctx)
	step := activities.EwaStep{TenantID: d.in.TenantID, RequestID: d.in.RequestID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID}
	rec := workflow.WithLocalActivityOptions(ctx, localRecordOptions())

	// 1. The plan.
	if err := workflow.ExecuteLocalActivity(rec, activities.EwaLoadPlanActivity, step).Get(ctx, &d.plan); err != nil {
		if code := ewaRefusalCode(err); code != "" {
			return d.refused(code, err.Error()), true, nil
		}
		d.refuse(err)
		return d.result(), true, err
	}

	// 2. The gates, in order; the first refusal ends the saga with nothing moved.
	d.progress.Stage = StageGates
	gin := activities.GateInput{Saga: ewaSaga, TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID,
		SubjectType: "EMPLOYEE", SubjectID: d.plan.EmployeeID, TargetType: "EwaRequest", TargetID: d.in.RequestID,
		Partner: d.plan.Destination.Partner, AccountNumber: d.plan.Destination.AccountNumber,
		ExpectedHolderName: d.plan.Destination.HolderName, RequireNameMatch: d.plan.AccountNameMatch}
	for _, g := range []struct {
		kind        activities.GateKind
		activity    string
		unavailable string
	}{
		{activities.GateKYC, activities.KycGateActivity, ewa.CodeKycNotApproved},
		{activities.GateSanctions, activities.SanctionsGateActivity, ewa.CodeSanctionsBlocked},
		{activities.GateAccount, activities.AccountGateActivity, ewa.CodePartnerUnavailable},
	} {
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localGateOptions()), g.activity, gin).Get(ctx, nil)
		if err == nil {
			continue
		}
		if code, ok := activities.GateRefusal(err); ok {
			return d.refused(gateCode(code), err.Error()), true, nil
		}
		// The gate could not decide: it fails closed, with its one audit row.
		log.Warn("gate could not decide; refusing", "gate", string(g.kind), "error", err)
		if ferr := workflow.ExecuteLocalActivity(rec, activities.GateFailedActivity,
			activities.GateFailedInput{Gate: g.kind, Input: gin, Cause: activities.ErrorType(err)}).Get(ctx, nil); ferr != nil {
			log.Error("gate failure not recorded", "gate", string(g.kind), "error", ferr)
		}
		return d.refused(g.unavailable, "gate "+string(g.kind)+" unavailable"), true, nil
	}

	// 3. The claim: REQUESTED → DISBURSING for this run.
	if err := workflow.ExecuteLocalActivity(rec, activities.EwaClaimActivity, step).Get(ctx, nil); err != nil {
		if code := ewaRefusalCode(err); code != "" {
			return d.refused(code, err.Error()), true, nil
		}
		d.refuse(err)
		return d.result(), true, err
	}
	d.progress.Stage = StageClaimed

	// 4. The pending ledger transaction, recorded on the request. From here on the transfer's
	// reference is fixed: the posting carries it, then the transfer and every lookup.
	if workflow.GetVersion(ctx, legReferenceChange, workflow.DefaultVersion, 1) >= 1 {
		d.ref = partnerref.Leg(partnerref.EwaDisburse, d.wfID, 1)
	}
	d.progress.Stage = StageLedger
	led := workflow.WithLocalActivityOptions(ctx, localLedgerOptions())
	var posted activities.LedgerPostResult
	if err := workflow.ExecuteLocalActivity(led, activities.LedgerPostPendingActivity, d.ledgerInput()).Get(ctx, &posted); err != nil {
		// Nothing moved: the request fails with the ledger's reason.
		res, err := d.fail(ctx, activities.ErrorType(err), false)
		return res, true, err
	}
	d.progress.LedgerTxID = posted.TxID
	withTx := step
	withTx.LedgerTxID = posted.TxID
	if err := workflow.ExecuteLocalActivity(rec, activities.EwaSetLedgerTxActivity, withTx).Get(ctx, nil); err != nil {
		res, err := d.fail(ctx, activities.ErrorType(err), true)
		return res, true, err
	}

	// 5. The transfer.
	d.progress.Stage = StageInitiating
	d.transfer(ctx)
	return EwaDisburseResult{}, false, nil
}

// conclude applies the transfer's final status: SETTLED commits the pending transaction and
// marks the request DISBURSED; FAILED voids it and marks the request FAILED.
func (d *disburse) conclude(ctx workflow.Context) (EwaDisburseResult, error) {
	log := workflow.GetLogger(ctx)
	d.progress.Stage = StageSettling
	if d.final == activities.TransferFailed {
		return d.fail(ctx, d.failCode, true)
	}
	step := activities.EwaStep{TenantID: d.in.TenantID, RequestID: d.in.RequestID, WorkflowID: d.wfID,
		CorrelationID: d.in.CorrelationID, TransferID: d.transferID}
	led := workflow.WithLocalActivityOptions(ctx, localLedgerOptions())
	rec := workflow.WithLocalActivityOptions(ctx, localRecordOptions())
	txID := d.progress.LedgerTxID
	if err := workflow.ExecuteLocalActivity(led, activities.LedgerCommitActivity, activities.LedgerSettleInput{
		TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID, TxID: txID}).Get(ctx, nil); err != nil {
		// The money moved: the commit is retried for as long as ledgerOptions allows; past that
		// the run fails for an operator, the request still DISBURSING.
		d.accept(StageDisbursing)
		return d.result(), err
	}
	if err := workflow.ExecuteLocalActivity(rec, activities.EwaMarkDisbursedActivity, step).Get(ctx, nil); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	d.progress.Stage = StageDisbursed
	d.accept(StageDisbursed)
	log.Info("ewa disbursed", "tenant_id", d.in.TenantID, "ewa_request_id", d.in.RequestID, "tx_id", txID,
		"transfer_id", d.transferID, "partner_reference", d.ref)
	return d.result(), nil
}

// transfer initiates the partner transfer and resolves an unknown outcome by status lookups
// (never by sending blindly). It returns with d.final set when the outcome is already known,
// else with the transfer held by the partner (PENDING).
func (d *disburse) transfer(ctx workflow.Context) {
	log := workflow.GetLogger(ctx)
	tin := activities.TransferInput{TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID,
		Partner: d.plan.Funding.Partner, Reference: d.ref, FromAccount: d.plan.Funding.AccountNumber,
		ToAccount: d.plan.Destination.AccountNumber, AmountSantim: d.plan.PrincipalSantim, Domain: "EWA"}
	sin := activities.TransferStatusInput{TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID,
		Partner: d.plan.Funding.Partner, Reference: d.ref}
	partner := workflow.WithActivityOptions(ctx, partnerOptions())

	// The first attempt while the caller waits; if nothing could be sent, answer "pending" and
	// keep trying.
	var res activities.TransferResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localPartnerFirstTryOptions()), activities.InitiateTransferActivity, tin).Get(ctx, &res)
	if err != nil && retryableFailure(err) {
		log.Warn("transfer not sent yet; answering pending and retrying", "error", err)
		d.accept(StageDisbursing)
		err = workflow.ExecuteActivity(partner, activities.InitiateTransferActivity, tin).Get(ctx, &res)
	}
	for {
		switch {
		case err == nil:
		case retryableFailure(err), activities.ErrorType(err) == "REFERENCE_CONFLICT":
			// The retries ran out (an attempt may have been sent), or something already holds
			// our reference: whether the partner has the transfer, the status lookup says.
			res, err = activities.TransferResult{Outcome: activities.TransferUnknown, UnknownReason: activities.ErrorType(err)}, nil
		default:
			// Refused before anything was sent (bad request, unknown partner, …).
			d.final, d.failCode = activities.TransferFailed, activities.ErrorType(err)
			return
		}
		switch res.Outcome {
		case activities.TransferAccepted:
			d.transferID = res.TransferID
			d.progress.TransferID = res.TransferID
			d.progress.TransferStatus = res.Status
			switch res.Status {
			case activities.TransferSettled:
				d.final = activities.TransferSettled
			case activities.TransferFailed:
				d.final, d.failCode = activities.TransferFailed, res.FailureCode
			}
			return
		case activities.TransferRejected:
			d.final, d.failCode = activities.TransferFailed, res.RejectCode
			return
		}
		// UNKNOWN: ask, never resend blindly. The answer is pending for the caller meanwhile.
		log.Warn("transfer outcome unknown; asking the partner", "reason", res.UnknownReason)
		d.accept(StageDisbursing)
		var st activities.TransferStatusResult
		if serr := workflow.ExecuteActivity(partner, activities.TransferStatusActivity, sin).Get(ctx, &st); serr != nil {
			// A day of lookups failed: still unknown, so ask again; money is never given up on.
			log.Error("transfer status still unknown; asking again", "error", serr)
			continue
		}
		switch st.Status {
		case activities.TransferNotFound:
			// Never sent: sending it now, with the same reference, is safe.
			err = workflow.ExecuteActivity(partner, activities.InitiateTransferActivity, tin).Get(ctx, &res)
			continue
		case activities.TransferSettled, activities.TransferFailed:
			d.final, d.failCode = st.Status, st.FailureCode
		}
		d.transferID = st.TransferID
		d.progress.TransferID = st.TransferID
		d.progress.TransferStatus = st.Status
		return
	}
}

// await waits for the transfer's final status: the settlement signal (deduplicated by event
// id, for this run's reference only), or the status lookup when the timer fires first. After
// SettlementPollsPerRun lookups (or when Temporal suggests it) with the transfer still held, it
// returns the error that continues the saga as new with its state (DisburseResume).
func (d *disburse) await(ctx workflow.Context, settlements workflow.ReceiveChannel) error {
	log := workflow.GetLogger(ctx)
	sin := activities.TransferStatusInput{TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID,
		Partner: d.plan.Funding.Partner, Reference: d.ref}
	partner := workflow.WithActivityOptions(ctx, partnerOptions())
	wait, since, runs := SettlementPollFirst, workflow.Now(ctx), 0
	if r := d.in.Resume; r != nil {
		wait, since, runs = r.NextPoll, r.Since, r.Runs+1
	}
	for polls := 0; d.final == ""; {
		if polls >= SettlementPollsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			// A signal already delivered to this run must not be lost with it.
			var s bankwebhook.Settlement
			for settlements.ReceiveAsync(&s) {
				d.settle(ctx, s)
			}
			if d.final != "" {
				break
			}
			log.Info("transfer still held by the partner; continuing as new", "partner_reference", d.ref,
				"waiting_since", since, "runs", runs+1)
			next := d.in
			next.Resume = &DisburseResume{Plan: d.plan, Reference: d.ref, LedgerTxID: d.progress.LedgerTxID, TransferID: d.transferID,
				TransferStatus: d.progress.TransferStatus, SeenEvents: d.seenOrder,
				NextPoll: wait, Since: since, Runs: runs}
			return workflow.NewContinueAsNewError(ctx, EwaDisburseWorkflowName, next)
		}
		tctx, cancelTimer := workflow.WithCancel(ctx)
		timer := workflow.NewTimer(tctx, wait)
		fired := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(settlements, func(c workflow.ReceiveChannel, more bool) {
			var s bankwebhook.Settlement
			c.Receive(ctx, &s)
			d.settle(ctx, s)
		})
		sel.AddFuture(timer, func(workflow.Future) { fired = true })
		sel.Select(ctx)
		if !fired {
			cancelTimer()
			continue
		}
		polls++
		var st activities.TransferStatusResult
		if err := workflow.ExecuteActivity(partner, activities.TransferStatusActivity, sin).Get(ctx, &st); err != nil {
			log.Warn("settlement status lookup failed; waiting again", "error", err)
		} else {
			d.progress.TransferStatus = st.Status
			if st.Status == activities.TransferSettled || st.Status == activities.TransferFailed {
				d.final, d.failCode = st.Status, st.FailureCode
				if st.TransferID != "" {
					d.transferID, d.progress.TransferID = st.TransferID, st.TransferID
				}
			}
		}
		wait = min(2*wait, SettlementPollMax)
	}
	return nil
}

// settle applies one settlement signal: another reference, an event already seen, or anything
// after the final status changes nothing.
func (d *disburse) settle(ctx workflow.Context, s bankwebhook.Settlement) {
	log := workflow.GetLogger(ctx)
	switch {
	case s.Reference != d.ref:
		log.Warn("settlement for another reference ignored", "reference", s.Reference, "event_id", s.EventID)
		return
	case d.seenEvents[s.EventID]:
		log.Info("duplicate settlement ignored", "event_id", s.EventID)
		return
	}
	d.seen(s.EventID)
	if d.final != "" {
		log.Info("settlement after the final status ignored", "event_id", s.EventID, "status", s.Status)
		return
	}
	switch s.Status {
	case activities.TransferSettled, activities.TransferFailed:
		d.final, d.failCode = s.Status, s.FailureCode
		d.progress.TransferStatus = s.Status
		if s.TransferID != "" {
			d.transferID, d.progress.TransferID = s.TransferID, s.TransferID
		}
	default:
		log.Warn("settlement with a status that is not final ignored", "event_id", s.EventID, "status", s.Status)
	}
}

func (d *disburse) seen(eventID string) {
	d.seenEvents[eventID] = true
	d.seenOrder = append(d.seenOrder, eventID)
}

// fail voids the pending transaction (when there is one) and marks the request FAILED with
// code as its reason.
func (d *disburse) fail(ctx workflow.Context, code string, voidLedger bool) (EwaDisburseResult, error) {
	if code == "" {
		code = "TRANSFER_FAILED"
	}
	d.progress.Stage = StageSettling
	d.progress.Code = code
	if voidLedger && d.progress.LedgerTxID != "" {
		if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localLedgerOptions()), activities.LedgerVoidActivity,
			activities.LedgerSettleInput{TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID,
				TxID: d.progress.LedgerTxID, Reason: code}).Get(ctx, nil); err != nil {
			d.accept(StageDisbursing)
			return d.result(), err
		}
	}
	step := activities.EwaStep{TenantID: d.in.TenantID, RequestID: d.in.RequestID, WorkflowID: d.wfID,
		CorrelationID: d.in.CorrelationID, Reason: code}
	if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localRecordOptions()), activities.EwaMarkFailedActivity, step).Get(ctx, nil); err != nil {
		d.accept(StageDisbursing)
		return d.result(), err
	}
	d.progress.Stage = StageFailed
	d.accept(StageFailed)
	r := d.result()
	r.Reason = code
	return r, nil
}

// refused ends the run with a refusal: nothing moved, the request stays as it was.
func (d *disburse) refused(code, reason string) EwaDisburseResult {
	d.progress.Stage = StageRefused
	d.progress.Code = code
	d.refuse(temporal.NewApplicationError(reason, code))
	r := d.result()
	r.Reason = reason
	return r
}

// accept answers the update (once) with the request's status.
func (d *disburse) accept(status string) {
	if d.answered {
		return
	}
	d.answered = true
	d.accepted = DisburseAccepted{RequestID: d.in.RequestID, Status: status, WorkflowID: d.wfID}
}

// refuse answers the update (once) with an error.
func (d *disburse) refuse(err error) {
	if d.answered {
		return
	}
	d.answered = true
	d.refusal = err
}

func (d *disburse) result() EwaDisburseResult {
	r := EwaDisburseResult{RequestID: d.in.RequestID, Code: d.progress.Code, LedgerTxID: d.progress.LedgerTxID, TransferID: d.progress.TransferID}
	switch d.progress.Stage {
	case StageDisbursed:
		r.Status = ResultDisbursed
	case StageFailed:
		r.Status = ResultFailed
	case StageRefused:
		r.Status = ResultRefused
	default:
		r.Status = d.progress.Stage
	}
	return r
}

// ledgerInput is the disbursement's pending transaction: Dr receivable-from-employee principal
// + fee; Cr the funding account's mirror principal; Cr fee-income fee (no leg when it is 0). Its
// "bank_reference" is the transfer's leg reference: the statement line of the transfer carries
// the same, and reconciliation pairs the two by it. (Runs begun before legReferenceChange post
// without it, as they did; reconciliation reads their reference from the idempotency key.)
func (d *disburse) ledgerInput() activities.LedgerPostInput {
	p := d.plan
	total, ok := money.Add(p.PrincipalSantim, p.FeeSantim)
	if !ok {
		total = -1 // refused by the ledger as INVALID_AMOUNT; the store bounds amounts far below this
	}
	legs := []activities.LedgerLeg{
		{Account: "receivable-from-employee:" + p.EmployeeID, Direction: "DEBIT", AmountSantim: total},
		{Account: chart.PartnerBankAccount(p.Funding.Partner, p.Funding.AccountNumber), Direction: "CREDIT", AmountSantim: p.PrincipalSantim},
	}
	if p.FeeSantim > 0 {
		legs = append(legs, activities.LedgerLeg{Account: "fee-income", Direction: "CREDIT", AmountSantim: p.FeeSantim})
	}
	meta := map[string]string{"ewaRequestId": d.in.RequestID, "employeeId": p.EmployeeID}
	if d.ref != d.wfID {
		meta[partnerref.LedgerMetadataKey] = d.ref
	}
	return activities.LedgerPostInput{TenantID: d.in.TenantID, WorkflowID: d.wfID, CorrelationID: d.in.CorrelationID,
		IdempotencyKey: string(partnerref.EwaDisburse) + ":" + d.wfID, Step: "disburse", Legs: legs, Metadata: meta}
}

// gateCode is the saga's API code of a gate refusal.
func gateCode(gate string) string {
	switch gate {
	case activities.GateKycNotApproved:
		return ewa.CodeKycNotApproved
	case activities.GateSanctionsBlocked:
		return ewa.CodeSanctionsBlocked
	case activities.GateAccountNotFound:
		return ewa.CodeDestinationInvalid
	case activities.GateAccountMismatch:
		return ewa.CodeAccountMismatch
	}
	return ewa.CodePartnerUnavailable
}

// ewaRefusalCode is the code of the EWA store's refusals (a record step's non-retryable error),
// "" for anything else.
func ewaRefusalCode(err error) string {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		return ""
	}
	switch ae.Type() {
	case ewa.CodeRequestNotFound, ewa.CodeInvalidState, ewa.CodeFundingAccountNotSet:
		return ae.Type()
	}
	return ""
}

// retryableFailure: the activity failed on something that may pass on a later attempt (the
// dependency down, a timeout), as opposed to a refusal.
func retryableFailure(err error) bool {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return !ae.NonRetryable()
	}
	return true // timeouts, cancellations, panics
}
