package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The EWA repayment saga: one repayment (whole or partial) of a disbursed request. Money never
// moves outside a workflow, and the repayment journal moves money in the ledger, so the route
// that records a repayment starts this saga instead of posting itself.

// Registered names.
const (
	EwaRepayWorkflowName = "EwaRepay"
	// RepayAcceptedUpdate completes once the repayment is recorded (RepayAccepted, RECORDED),
	// when the ledger did not take the journal at the first try (PENDING: the saga goes on), or
	// with the refusal (an ApplicationError whose Type is the API code: EWA_REQUEST_NOT_FOUND,
	// EWA_NOT_DISBURSED, EWA_REPAYMENT_EXCEEDS_OUTSTANDING with the outstanding santim as its
	// detail). The API sends it with Update-with-Start.
	RepayAcceptedUpdate = "repay-accepted"
	// RepayAcceptedUpdateID is the update's fixed id: every call of one key is the same update.
	RepayAcceptedUpdateID = "accepted"
)

// Statuses of RepayAccepted and EwaRepayResult.
const (
	RepayRecorded = "RECORDED" // posted in the ledger and added to the request
	RepayPending  = "PENDING"  // reserved; the journal is not in the ledger yet (the saga retries)
	RepayRefused  = "REFUSED"  // a rule refused it: nothing reserved, nothing posted
	RepayFailed   = "FAILED"   // the ledger refused the journal; the reservation was released
)

// EwaRepayInput starts the saga. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key), so a retry with the key reaches this saga and its answer.
type EwaRepayInput struct {
	TenantID     string
	RequestID    string
	AmountSantim int64
	Source       string // PAYROLL, EMPLOYER or EMPLOYEE
	// UpToOutstanding repays what is still owed of AmountSantim (a payroll run's deduction: never
	// a replay of another repayment; the result's repayment says what was taken).
	UpToOutstanding bool   `json:",omitempty"`
	ActorID         string // the user who asked: the actor of the saga's audit rows
	// CorrelationID is the HTTP request id, carried into activity logs and audit rows.
	CorrelationID string
}

// RepayAccepted is the update's answer.
type RepayAccepted struct {
	Status     string      // RECORDED or PENDING
	Request    ewa.Request // the request as the answer shows it (after the repayment when RECORDED)
	WorkflowID string
}

// EwaRepayResult is the workflow's result.
type EwaRepayResult struct {
	RequestID string
	Status    string // RECORDED, REFUSED or FAILED
	Code      string // the refusal's or failure's code
	// OutstandingSantim is what could still be repaid, on EWA_REPAYMENT_EXCEEDS_OUTSTANDING.
	OutstandingSantim int64
	Request           ewa.Request   // the request after the repayment (RECORDED)
	Repayment         ewa.Repayment // the repayment (RECORDED, FAILED)
}

// ErrTypeRepaymentReleased types the update's error when this saga's repayment was released
// (the ledger refused its journal): an internal failure, not a refusal the caller can act on.
const ErrTypeRepaymentReleased = "EWA_REPAYMENT_RELEASED"

// repayStep is the repayment journal's lineage step in the ledger.
const repayStep = "repay"

// repay is one run's state: the input, the run's ids and the caller's answer.
type repay struct {
	in     EwaRepayInput
	run    activities.Run
	answer answer[RepayAccepted]
}

// EwaRepay records one repayment of a disbursed request: reserve it against what is still owed
// (under the request's row lock, so racing repayments cannot overpay), post its journal (Dr
// payroll-clearing, Cr receivable-from-employee:<employee>, the amount; POSTED, under the
// repayment's ledger key, so a retry never posts twice), then record it on the request, which is
// REPAID once its repayments cover principal + fee. A ledger refusal releases the reservation.
func EwaRepay(ctx workflow.Context, in EwaRepayInput) (EwaRepayResult, error) {
	r := &repay{in: in, run: activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		CorrelationID: in.CorrelationID}}
	return answeredRun(ctx, &r.answer, RepayAcceptedUpdate, "repayment saga", func() (EwaRepayResult, error) { return r.repay(ctx) })
}

func (r *repay) repay(ctx workflow.Context) (EwaRepayResult, error) {
	log := workflow.GetLogger(ctx)
	step := activities.EwaRepayStep{Run: r.run, RequestID: r.in.RequestID, ActorID: r.in.ActorID,
		AmountSantim: r.in.AmountSantim, Source: r.in.Source, UpToOutstanding: r.in.UpToOutstanding}
	res := EwaRepayResult{RequestID: r.in.RequestID}

	// 1. The reservation.
	rsv, err := callLocal(ctx, localRecordOptions(), activities.EwaRepayReserve, step)
	if err != nil {
		r.answer.refuse(err)
		if code, outstanding, ok := repayRefusal(err); ok {
			res.Status, res.Code, res.OutstandingSantim = RepayRefused, code, outstanding
			return res, nil
		}
		return res, err
	}
	p := rsv.Repayment
	switch {
	case rsv.Replay, p.Status == ewa.RepaymentPosted:
		// Already repaid by this very repayment (another saga's, or this one's earlier run).
		r.accept(RepayRecorded, rsv.Request)
		res.Status, res.Request, res.Repayment = RepayRecorded, rsv.Request, p
		return res, nil
	case p.Status == ewa.RepaymentFailed:
		// Released by an earlier run of this saga: the ledger refused its journal.
		r.answer.refuse(temporal.NewNonRetryableApplicationError("the repayment was released: "+p.FailureReason, ErrTypeRepaymentReleased, nil))
		res.Status, res.Code, res.Repayment = RepayFailed, p.FailureReason, p
		return res, nil
	}

	// 2. The journal (repaymentJournal).
	txID, refused, err := repaymentJournal{what: "repayment", refuse: r.answer.refuse,
		pending: func() { r.accept(RepayPending, rsv.Request) },
		release: func(code string) (err error) {
			release := step
			release.Reason = code
			res.Repayment, err = callLocal(ctx, localCatchUpRecordOptions(), activities.EwaRepayFail, release)
			return err
		}}.post(ctx, r.journal(rsv.Request.EmployeeID, p))
	if err != nil || refused != "" {
		if refused != "" {
			res.Status, res.Code = RepayFailed, refused
		}
		return res, err
	}

	// 3. The record: POSTED, added to the request (REPAID when covered), audit row and events.
	done := step
	done.LedgerTxID = txID
	recorded, err := callLocal(ctx, localCatchUpRecordOptions(), activities.EwaRepayComplete, done)
	if err != nil {
		// The journal is posted: the record is retried for as long as catchUpRecordOptions
		// allows; past that the run fails for an operator, the reservation PENDING.
		r.answer.refuse(err)
		return res, err
	}
	r.accept(RepayRecorded, recorded.Request)
	log.Info("ewa repayment recorded", "tenant_id", r.in.TenantID, "ewa_request_id", r.in.RequestID, "tx_id", txID,
		"amount_santim", p.AmountSantim, "status", string(recorded.Request.Status))
	res.Status, res.Request, res.Repayment = RepayRecorded, recorded.Request, recorded.Repayment
	return res, nil
}

// journal is the repayment's POSTED transaction: Dr payroll-clearing, Cr
// receivable-from-employee:<employee>, the repayment's amount, under its ledger key.
func (r *repay) journal(employeeID string, p ewa.Repayment) activities.LedgerPostInput {
	return activities.LedgerPostInput{Run: r.run,
		IdempotencyKey: p.LedgerKey, Step: repayStep,
		Legs: []activities.LedgerLeg{
			{Account: chart.PayrollClearing, Direction: "DEBIT", AmountSantim: p.AmountSantim},
			{Account: chart.EmployeeReceivable(employeeID), Direction: "CREDIT", AmountSantim: p.AmountSantim},
		},
		Metadata: map[string]string{"ewa_request_id": r.in.RequestID, "kind": "ewa_repayment", "ewa_repayment_id": p.ID}}
}

func (r *repay) accept(status string, req ewa.Request) {
	r.answer.accept(RepayAccepted{Status: status, Request: req, WorkflowID: r.run.WorkflowID})
}

// repayRefusal is the code (and, for an overpayment, the outstanding santim) of a refusal of
// the reservation; ok is false for any other error.
func repayRefusal(err error) (code string, outstanding int64, ok bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.NonRetryable() {
		return "", 0, false
	}
	switch ae.Type() {
	case ewa.CodeRepaymentExceedsOutstanding:
		if ae.HasDetails() {
			_ = ae.Details(&outstanding)
		}
		return ae.Type(), outstanding, true
	case ewa.CodeNotDisbursed, ewa.CodeRequestNotFound, ewa.CodeRecoveryInOpenRun:
		return ae.Type(), 0, true
	}
	return "", 0, false
}
