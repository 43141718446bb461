package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
)

// The run of a saga that pays one transfer out on the payout block (EWA and loan disbursement):
// the query and update handlers (the caller's answer is answer.go), the wait for the settlement
// (continuing as new while the partner holds the transfer), the conclusion (commit and mark paid,
// or void and mark failed), the net under an update no path answered, and the handlers finished
// before the run closes. A saga keeps only its plan in its own file: its begin (plan, gates, posting, claim,
// up to the transfer), its record steps, its ledger posting and its names (payoutSteps).

// Stages of the one-transfer payout sagas (their query answers' Stage). A saga's paid and failed
// stages are its own (payoutSteps): DISBURSED and FAILED for EWA, ACTIVE and FAILED for loans.
const (
	StageLoading    = "LOADING"
	StageGates      = "GATES"
	StageClaimed    = "CLAIMED"
	StageLedger     = "LEDGER_PENDING"
	StageInitiating = "INITIATING"
	StageDisbursing = "DISBURSING" // the partner holds the transfer (or its outcome is being resolved)
	StageSettling   = "SETTLING"   // the outcome is known; the ledger and the record are catching up
	StageDisbursed  = "DISBURSED"
	StageFailed     = "FAILED"
	StageRefused    = "REFUSED"
)

// payoutProgress is what a saga's query answers, besides its own id.
type payoutProgress struct {
	Stage      string
	Code       string // a refusal's or failure's code
	LedgerTxID string
	TransferID string
	// TransferStatus is the partner's last word (PENDING, SETTLED, FAILED), "" before it.
	TransferStatus string
}

// payoutOutcome is a saga's result, besides its own id. Status is the stage the run ended in: the
// saga's paid or failed stage, REFUSED, or the stage a workflow error left it in.
type payoutOutcome struct {
	Status, Code, Reason, LedgerTxID, TransferID string
}

// payoutSteps is what a saga brings to the run: its names and its record steps.
type payoutSteps[P, A any] struct {
	// workflowName is the saga's registered name (the next run's, on continue-as-new); name is
	// what the net's refusal calls it ("disburse saga").
	workflowName, name string
	// accepted is the update's answer for a status.
	accepted func(status string) A
	// recordRefusals are the record steps' refusals that end the saga as refused (nothing moved).
	recordRefusals map[string]bool
	// transfer is the plan's transfer under a partner reference.
	transfer func(ref string) activities.TransferInput
	// next is the next run's input when the run continues as new with r.
	next func(r *PayoutResume[P]) any
	// markPaid records the settled transfer; markFailed records the failure with its code.
	markPaid   func(ctx workflow.Context, transferID string) error
	markFailed func(ctx workflow.Context, code string) error
	// paidStage and failedStage end the run (the update's answer and the result's status).
	paidStage, failedStage string
	// paid runs once the transfer is settled and recorded, the caller answered (what follows a
	// payout: a log line, a child workflow).
	paid func(ctx workflow.Context)
	// leaveTimer is the payout block's (payout.leaveTimer): set only for runs whose recorded
	// input asks for it.
	leaveTimer bool
}

// payoutSaga is one run's state: what the query answers and what the update waits on.
type payoutSaga[P, A any] struct {
	payoutSteps[P, A]
	wfID     string
	run      activities.Run
	progress payoutProgress
	plan     P
	answer   answer[A]
	pay      *payout
	// leg is the one transfer.
	leg *payoutLeg
}

func newPayoutSaga[P, A any](ctx workflow.Context, tenantID, correlationID string, steps payoutSteps[P, A]) payoutSaga[P, A] {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	return payoutSaga[P, A]{payoutSteps: steps, wfID: wfID,
		run:      activities.Run{TenantID: tenantID, WorkflowID: wfID, CorrelationID: correlationID},
		progress: payoutProgress{Stage: StageLoading}}
}

// runPayoutSaga is the workflow: the status query (its answer view of the progress) and the
// update first, then the saga (from resume when the run continues one, else begin up to the
// transfer, where done ends the run), then the net under an update no path answered.
func runPayoutSaga[P, A, Q any](ctx workflow.Context, s *payoutSaga[P, A], query string, view func(payoutProgress) Q, update string,
	resume *PayoutResume[P], begin func(workflow.Context) (o payoutOutcome, done bool, err error)) (payoutOutcome, error) {
	if err := workflow.SetQueryHandler(ctx, query, func() (Q, error) { return view(s.progress), nil }); err != nil {
		return payoutOutcome{}, err
	}
	if err := s.answer.handle(ctx, update); err != nil {
		return payoutOutcome{}, err
	}
	settlements := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)

	o, err := s.runSaga(ctx, settlements, resume, begin)
	if !s.answer.done {
		// Every path answers before it returns; this is the net under a workflow error.
		ae := temporal.NewApplicationError(s.name+" ended without an answer", activities.ErrorType(err))
		if err == nil {
			ae = temporal.NewApplicationError(s.name+" ended: "+o.Status, o.Code)
		}
		s.answer.refuse(ae)
	}
	finishHandlers(ctx)
	return o, err
}

func (s *payoutSaga[P, A]) runSaga(ctx workflow.Context, settlements workflow.ReceiveChannel, resume *PayoutResume[P],
	begin func(workflow.Context) (payoutOutcome, bool, error)) (payoutOutcome, error) {
	if resume != nil {
		s.resume(resume)
	} else if o, done, err := begin(ctx); done {
		return o, err
	}
	if s.leg.Final == "" {
		s.progress.Stage = StageDisbursing
		s.accept(StageDisbursing)
		if err := s.pay.await(ctx, settlements, s.pay.legs); err != nil {
			if errors.Is(err, errContinueAsNew) {
				err = workflow.NewContinueAsNewError(ctx, s.workflowName, s.next(resumeOf(s.pay, s.plan)))
			}
			return s.outcome(), err
		}
	}
	return s.conclude(ctx)
}

// sentReference is the partner reference of the leg the saga sent ("" before it has one): what
// the record step that marks it paid names in its settled event.
func (s *payoutSaga[P, A]) sentReference() string {
	if s.leg == nil {
		return ""
	}
	return s.leg.Transfer.Reference
}

// resume restores a continued run: the update is answered DISBURSING (as the first run
// answered it), and the wait goes on where the last run left it.
func (s *payoutSaga[P, A]) resume(r *PayoutResume[P]) {
	s.plan = r.Plan
	s.pay = s.newPayout(resumePayout(r, s.transfer))
	s.leg = s.pay.legs[0]
	s.progress.LedgerTxID, s.progress.TransferID, s.progress.TransferStatus = s.leg.LedgerTxID, s.leg.TransferID, s.leg.Status
	s.accept(StageDisbursing)
}

// newPayout is the block with the saga's answer and query wired in.
func (s *payoutSaga[P, A]) newPayout(p *payout) *payout {
	p.leaveTimer = s.leaveTimer
	p.pending = func() { s.accept(StageDisbursing) }
	p.changed = func(l *payoutLeg) { s.progress.TransferID, s.progress.TransferStatus = l.TransferID, l.Status }
	return p
}

// postPending fixes the transfer's reference (the posting carries it, then the transfer and
// every lookup) and posts the pending ledger transaction that pays for it; posting is built once
// the leg exists.
func (s *payoutSaga[P, A]) postPending(ctx workflow.Context, ref string, posting func() activities.LedgerPostInput) (activities.LedgerPostResult, error) {
	s.pay = s.newPayout(newPayout())
	s.leg = s.pay.add(s.transfer(ref))
	s.progress.Stage = StageLedger
	in := posting()
	posted, err := callLocal(ctx, localLedgerOptions(), activities.LedgerPostPending, in)
	if err != nil {
		return posted, s.voidUnanswered(ctx, in.IdempotencyKey, err)
	}
	return posted, nil
}

// claimPosted runs the saga's claim, which records the pending transaction txID: a refused
// claim voids it (nothing moved) and ends the run as recordFailed does. done reports that the
// run ends here, with its outcome.
func (s *payoutSaga[P, A]) claimPosted(ctx workflow.Context, txID string, claim func() error) (o payoutOutcome, done bool, err error) {
	if err := claim(); err != nil {
		if verr := doLocal(ctx, localCatchUpOptions(), activities.LedgerVoid,
			activities.LedgerSettleInput{Run: s.run, TxID: txID, Reason: activities.ErrorType(err)}); verr != nil {
			s.answer.refuse(verr)
			return s.outcome(), true, verr
		}
		return s.recordFailed(s.releaseUnanswered(ctx, err))
	}
	s.leg.LedgerTxID, s.progress.LedgerTxID = txID, txID
	s.progress.Stage = StageClaimed
	return payoutOutcome{}, false, nil
}

// initiate sends the transfer (the payout block's first try, retries and unknown outcomes); the
// run goes on to the wait.
func (s *payoutSaga[P, A]) initiate(ctx workflow.Context) (payoutOutcome, bool, error) {
	s.progress.Stage = StageInitiating
	s.pay.transfer(ctx, s.leg)
	return payoutOutcome{}, false, nil
}

// recordFailed ends the run on a record step's error before anything moved: the saga's
// recordRefusals as a refusal, anything else as the run's error.
func (s *payoutSaga[P, A]) recordFailed(err error) (payoutOutcome, bool, error) {
	if code := activities.ErrorType(err); s.recordRefusals[code] {
		return s.refused(code, err.Error()), true, nil
	}
	s.answer.refuse(err)
	return s.outcome(), true, err
}

// conclude applies the transfer's final status: SETTLED commits the pending transaction and
// records the payout; FAILED voids it and records the failure.
func (s *payoutSaga[P, A]) conclude(ctx workflow.Context) (payoutOutcome, error) {
	s.progress.Stage = StageSettling
	if s.leg.Final == activities.TransferFailed {
		return s.fail(ctx, s.leg.FailCode, true)
	}
	if err := doLocal(ctx, localCatchUpOptions(), activities.LedgerCommit,
		activities.LedgerSettleInput{Run: s.run, TxID: s.progress.LedgerTxID}); err != nil {
		// The money moved: the commit is retried for as long as ledgerOptions allows; past that
		// the run fails for an operator, the record still DISBURSING.
		s.accept(StageDisbursing)
		return s.outcome(), err
	}
	if err := s.markPaid(ctx, s.leg.TransferID); err != nil {
		s.accept(StageDisbursing)
		return s.outcome(), err
	}
	s.progress.Stage = s.paidStage
	s.accept(s.paidStage)
	s.paid(ctx)
	return s.outcome(), nil
}

// fail voids the pending transaction (when there is one and voidLedger says so) and records the
// failure with code as its reason.
func (s *payoutSaga[P, A]) fail(ctx workflow.Context, code string, voidLedger bool) (payoutOutcome, error) {
	if code == "" {
		code = "TRANSFER_FAILED"
	}
	s.progress.Stage = StageSettling
	s.progress.Code = code
	if voidLedger && s.progress.LedgerTxID != "" {
		if err := doLocal(ctx, localCatchUpOptions(), activities.LedgerVoid,
			activities.LedgerSettleInput{Run: s.run, TxID: s.progress.LedgerTxID, Reason: code}); err != nil {
			s.accept(StageDisbursing)
			return s.outcome(), err
		}
	}
	if err := s.markFailed(ctx, code); err != nil {
		s.accept(StageDisbursing)
		return s.outcome(), err
	}
	s.progress.Stage = s.failedStage
	s.accept(s.failedStage)
	o := s.outcome()
	o.Reason = code
	return o, nil
}

// refused ends the run with a refusal: nothing moved, the record stays as it was.
func (s *payoutSaga[P, A]) refused(code, reason string) payoutOutcome {
	s.progress.Stage = StageRefused
	s.progress.Code = code
	s.answer.refuse(temporal.NewApplicationError(reason, code))
	o := s.outcome()
	o.Reason = reason
	return o
}

// accept answers the update (once) with status.
func (s *payoutSaga[P, A]) accept(status string) {
	s.answer.accept(s.accepted(status))
}

func (s *payoutSaga[P, A]) outcome() payoutOutcome {
	return payoutOutcome{Status: s.progress.Stage, Code: s.progress.Code, LedgerTxID: s.progress.LedgerTxID, TransferID: s.progress.TransferID}
}
