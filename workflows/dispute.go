package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
)

// DisputeAdjustment is an adjustment exactly as approved and signed (the activity's type, named
// here so the API builds the decision without importing activities).
type DisputeAdjustment = activities.DisputeAdjustment

// DisputeDecisionKey is the idempotency key the adjustment of the dispute workflow wfID is signed
// and posted under, its reversal's too (the API builds the adjustment with it; the workflow
// refuses another).
func DisputeDecisionKey(wfID string) string { return activities.DisputeDecisionKey(wfID) }

// The dispute workflow: one per dispute, found by TenantId and BusinessKey = the dispute id
// (workflow id disputes.WorkflowIDOf). It starts the investigation, then takes evidence
// (DisputeEvidenceUpdate, answered once recorded, refused once a decision is under way) and a
// decision (DisputeDecisionUpdate, answered once the decision is recorded or refused), fires its
// SLA timers, and ends at the decision.
//
// SLA: the warning dispute.sla_breach_imminent.v1 goes out from a timer in this workflow,
// disputes.BreachWarningLead (24 h) before the deadline, rather than from the spec's daily poller:
// the workflow already holds the deadline, a timer fires at the exact instant (a daily poller
// warns up to a day late or early), and there is no cross-tenant scan to run. A second timer at
// the deadline records SLA_BREACHED in the event log (the breach metric and alert read the open
// disputes past their deadline). A dispute opened less than 24 h before its deadline is warned at
// once.

// Registered names.
const (
	DisputeWorkflowName = "Dispute"
	// DisputeEvidenceUpdate carries a DisputeEvidence and answers the dispute once the evidence
	// is recorded, or refuses it (DISPUTE_INVALID_STATE) when a decision is under way or made.
	DisputeEvidenceUpdate = "dispute-evidence-attach"
	// DisputeEvidenceSignal carries a DisputeEvidence. The API sent evidence as this signal before
	// DisputeEvidenceUpdate; the workflow still records it for runs that hold one in their history.
	// A signal cannot be refused, so evidence that reached a dispute while its decision ran was
	// answered 202 and then refused by the record step.
	DisputeEvidenceSignal = "dispute-evidence"
	// DisputeDecisionUpdate carries a DisputeDecision and answers the decided dispute.
	DisputeDecisionUpdate = "dispute-decision"
)

// DisputeInput starts the workflow.
type DisputeInput struct {
	TenantID            string
	DisputeID           string
	LedgerTransactionID string
	SLADeadline         time.Time
	CorrelationID       string
}

// DisputeResult is the dispute as the workflow left it.
type DisputeResult struct {
	DisputeID string
	Status    disputes.Status
}

// DisputeEvidence is evidence attached by an organization admin.
type DisputeEvidence struct {
	Actor      string
	UploadKeys []string
	Note       string
}

// DisputeDecision is an operator's decision. An adjustment carries the platform admin who
// approved it and the ledger request as approved and signed by the API.
type DisputeDecision struct {
	Actor                string
	Decision             disputes.Decision
	Reason               string
	PartnerChargebackRef string
	ApprovedBy           string
	Adjustment           *DisputeAdjustment
}

// Dispute is the workflow (see above).
func Dispute(ctx workflow.Context, in DisputeInput) (DisputeResult, error) {
	log := workflow.GetLogger(ctx)
	run := activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, CorrelationID: in.CorrelationID}
	res := DisputeResult{DisputeID: in.DisputeID}
	// Every move is recorded with the catch-up options: the workflow is the one way to decide the
	// dispute (its id is not reused), so a run that gave up after a record step's hour of
	// database outage would leave the dispute UNDER_INVESTIGATION for good, or a posted reversal
	// or adjustment unrecorded.
	record := func(ctx workflow.Context, m disputes.Move) (disputes.Dispute, error) {
		return callLocal(ctx, localCatchUpRecordOptions(), activities.DisputeRecord,
			activities.DisputeMoveInput{Run: run, DisputeID: in.DisputeID, Move: m, At: workflow.Now(ctx)})
	}
	var decided *disputes.Dispute
	// investigated is the dispute as the investigation step left it (set once that step ran).
	var investigated *disputes.Dispute
	// deciding is set while a decision's ledger step runs: a second decision accepted meanwhile
	// (its validator ran before the first recorded anything) is refused before it moves money, or
	// both would post (a reversal and an adjustment of one dispute), and the loser's posting would
	// stand unrecorded. A decision whose ledger step was refused frees it for the next.
	deciding := false
	// evidencing counts the evidence updates being recorded: a decision waits for them, so
	// evidence the workflow accepted is in the dispute's log before its decision.
	evidencing := 0
	if err := workflow.SetUpdateHandlerWithOptions(ctx, DisputeEvidenceUpdate, func(ctx workflow.Context, ev DisputeEvidence) (disputes.Dispute, error) {
		evidencing++
		defer func() { evidencing-- }()
		out, err := record(ctx, disputes.Move{Trigger: disputes.TriggerEvidence, Actor: ev.Actor, UploadKeys: ev.UploadKeys, Note: ev.Note,
			EvidenceID: workflow.GetCurrentUpdateInfo(ctx).ID})
		if err != nil {
			return disputes.Dispute{}, refusalOf(err, disputes.CodeInvalidState)
		}
		return out, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, ev DisputeEvidence) error {
		if decided != nil || deciding {
			return temporal.NewApplicationError("the dispute is decided", disputes.CodeInvalidState)
		}
		return nil
	}}); err != nil {
		return res, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, DisputeDecisionUpdate, func(ctx workflow.Context, d DisputeDecision) (disputes.Dispute, error) {
		if decided != nil || deciding {
			return disputes.Dispute{}, temporal.NewApplicationError("the dispute is decided", disputes.CodeInvalidState)
		}
		deciding = true
		// Evidence accepted before this decision is recorded first (no command when none is in
		// flight, so histories recorded before evidence was an update replay unchanged).
		if err := workflow.Await(ctx, func() bool { return evidencing == 0 }); err != nil {
			deciding = false
			return disputes.Dispute{}, err
		}
		m := disputes.Move{Trigger: disputes.TriggerDecide, Actor: d.Actor, Decision: d.Decision, Reason: d.Reason,
			PartnerChargebackRef: d.PartnerChargebackRef, ApprovedBy: d.ApprovedBy, DecisionID: workflow.GetCurrentUpdateInfo(ctx).ID}
		if workflow.GetVersion(ctx, disputeEarlierPostingChange, workflow.DefaultVersion, 1) == 1 {
			if err := earlierPosting(ctx, run, in.DisputeID, &investigated, &m); err != nil {
				deciding = false
				return disputes.Dispute{}, err
			}
		}
		oneKey := workflow.GetVersion(ctx, disputeOneKeyChange, workflow.DefaultVersion, 1) == 1
		if held, err := moveMoney(ctx, run, in, d, &m, oneKey); err != nil {
			deciding = held
			return disputes.Dispute{}, err
		}
		out, err := record(ctx, m)
		if err != nil {
			return disputes.Dispute{}, refusalOf(err, disputes.CodeInvalidState)
		}
		decided = &out
		return out, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, d DisputeDecision) error {
		switch {
		case decided != nil, deciding:
			return temporal.NewApplicationError("the dispute is decided", disputes.CodeInvalidState)
		}
		if err := checkAdjustment(in, workflow.GetInfo(ctx).WorkflowExecution.ID, d); err != nil {
			return err
		}
		return disputes.CheckDecision(d.Decision, d.Reason, d.Actor, d.ApprovedBy)
	}}); err != nil {
		return res, err
	}

	d, err := record(ctx, disputes.Move{Trigger: disputes.TriggerInvestigate})
	if err != nil {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == disputes.CodeNotFound {
			log.Error("dispute workflow: no such dispute", "dispute_id", in.DisputeID)
			return res, nil
		}
		return res, err
	}
	res.Status = d.Status
	investigated = &d
	if !d.Status.Open() {
		// Decided already (an update that raced the investigation start): its handler answers.
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		return res, nil
	}
	evidence := workflow.GetSignalChannel(ctx, DisputeEvidenceSignal)
	warned, breached := d.SLABreachWarnedAt != nil, false
	decision := awaitDecided(ctx, &decided)
	for decided == nil {
		now := workflow.Now(ctx)
		timerCtx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		var note disputes.EventType
		switch {
		case !warned:
			sel.AddFuture(workflow.NewTimer(timerCtx, max(in.SLADeadline.Add(-disputes.BreachWarningLead).Sub(now), time.Millisecond)),
				func(workflow.Future) { note = disputes.EventSLABreachImminent })
		case !breached:
			sel.AddFuture(workflow.NewTimer(timerCtx, max(in.SLADeadline.Sub(now), time.Millisecond)),
				func(workflow.Future) { note = disputes.EventSLABreached })
		}
		var ev DisputeEvidence
		got := false
		sel.AddReceive(evidence, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &ev); got = true })
		// A decision wakes the loop through the update handler's own goroutine.
		sel.AddFuture(decision, func(workflow.Future) {})
		sel.Select(ctx)
		cancel()
		switch {
		case got:
			if _, err := record(ctx, disputes.Move{Trigger: disputes.TriggerEvidence, Actor: ev.Actor, UploadKeys: ev.UploadKeys, Note: ev.Note}); err != nil {
				log.Warn("dispute evidence not recorded", "dispute_id", in.DisputeID, "error", err)
			}
		case note != "":
			// A note that cannot be recorded (refused, or the database down past the catch-up's
			// week) is logged and not tried again; the dispute stays decidable either way.
			if _, err := record(ctx, disputes.Move{Trigger: disputes.TriggerSLA, SLAEvent: note}); err != nil {
				log.Error("dispute SLA note not recorded", "dispute_id", in.DisputeID, "event", string(note), "error", err)
			}
			warned = true
			breached = breached || note == disputes.EventSLABreached
		}
	}
	workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	res.Status = decided.Status
	return res, nil
}

// awaitDecided is ready once *decided is set.
func awaitDecided(ctx workflow.Context, decided **disputes.Dispute) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		_ = workflow.Await(ctx, func() bool { return *decided != nil })
		set.Set(nil, nil)
	})
	return f
}
