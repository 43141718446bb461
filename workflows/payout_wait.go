package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
)

// The payout block's settlement wait (payout.go has the legs and their initiation): the bank's
// signals routed to their leg and deduplicated, the status lookup on a backing-off timer when no
// signal comes, and continue-as-new while the partner holds a transfer long.

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

// errContinueAsNew is await's answer when the run should continue as new: the caller builds
// the next run's input from resumeOf and returns workflow.NewContinueAsNewError.
var errContinueAsNew = errors.New("payout: continue as new")

// await waits until every leg in legs has its final status: settlement signals (routed to their
// leg by Reference, deduplicated by event id; a signal for another reference is ignored), or a
// status lookup of the legs still held when the timer fires first. After SettlementPollsPerRun
// lookups (or when Temporal suggests it) with a transfer still held, it drains the signals
// already delivered and returns errContinueAsNew.
func (p *payout) await(ctx workflow.Context, settlements workflow.ReceiveChannel, legs []*payoutLeg) error {
	log := workflow.GetLogger(ctx)
	open := func() bool {
		for _, l := range legs {
			if l.Final == "" {
				return true
			}
		}
		return false
	}
	if p.since.IsZero() {
		p.since = workflow.Now(ctx)
	}
	for polls := 0; open(); {
		if polls >= SettlementPollsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			// A signal already delivered to this run must not be lost with it.
			var s bankwebhook.Settlement
			for settlements.ReceiveAsync(&s) {
				p.settle(ctx, s)
			}
			if !open() {
				break
			}
			log.Info("transfer still held by the partner; continuing as new", "legs", len(legs), "waiting_since", p.since, "runs", p.runs+1)
			return errContinueAsNew
		}
		if !signalOrTimerThen(ctx, p.nextPoll, func(sel workflow.Selector) {
			sel.AddReceive(settlements, func(c workflow.ReceiveChannel, more bool) {
				var s bankwebhook.Settlement
				c.Receive(ctx, &s)
				p.settle(ctx, s)
			})
		}, func() bool { return !p.leaveTimer || open() }) {
			continue
		}
		polls++
		for _, l := range legs {
			if l.Final != "" {
				continue
			}
			st, err := call(ctx, partnerOptions(), activities.TransferStatus,
				activities.TransferStatusInput{Run: l.Transfer.Run, Partner: l.Transfer.Partner, Reference: l.Transfer.Reference})
			if err != nil {
				log.Warn("settlement status lookup failed; waiting again", "partner_reference", l.Transfer.Reference, "error", err)
				continue
			}
			l.Status = st.Status
			if st.Status == activities.TransferSettled || st.Status == activities.TransferFailed {
				l.Final, l.FailCode = st.Status, st.FailureCode
				if st.TransferID != "" {
					l.TransferID = st.TransferID
				}
			}
			p.update(l)
		}
		p.nextPoll = min(2*p.nextPoll, SettlementPollMax)
	}
	return nil
}

// signalOrTimer is one turn of a settlement wait: it blocks until a signal the receivers added
// to the selector arrives (its handler has run) or wait passes, whichever is first, and reports
// whether the timer fired; a timer a signal beat is cancelled. The payout block and the fan-out's
// batches wait with it.
func signalOrTimer(ctx workflow.Context, wait time.Duration, receivers func(workflow.Selector)) (fired bool) {
	return signalOrTimerThen(ctx, wait, receivers, nil)
}

// signalOrTimerThen is signalOrTimer where a timer a signal beat is cancelled only when cancel
// (asked after the signal's handler ran) says so; nil cancels it always.
func signalOrTimerThen(ctx workflow.Context, wait time.Duration, receivers func(workflow.Selector), cancel func() bool) (fired bool) {
	tctx, cancelTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, wait)
	sel := workflow.NewSelector(ctx)
	receivers(sel)
	sel.AddFuture(timer, func(workflow.Future) { fired = true })
	sel.Select(ctx)
	if !fired && (cancel == nil || cancel()) {
		cancelTimer()
	}
	return fired
}

// settle applies one settlement signal to its leg: another reference, an event already seen,
// or anything after the leg's final status changes nothing.
func (p *payout) settle(ctx workflow.Context, s bankwebhook.Settlement) {
	log := workflow.GetLogger(ctx)
	l, ok := p.byRef[s.Reference]
	switch {
	case !ok:
		log.Warn("settlement for another reference ignored", "reference", s.Reference, "event_id", s.EventID)
		return
	case p.seen[s.EventID]:
		log.Info("duplicate settlement ignored", "event_id", s.EventID)
		return
	}
	p.see(s.EventID)
	if l.Final != "" {
		log.Info("settlement after the final status ignored", "event_id", s.EventID, "status", s.Status)
		return
	}
	switch s.Status {
	case activities.TransferSettled, activities.TransferFailed:
		l.Final, l.FailCode, l.Status = s.Status, s.FailureCode, s.Status
		if s.TransferID != "" {
			l.TransferID = s.TransferID
		}
		p.update(l)
	default:
		log.Warn("settlement with a status that is not final ignored", "event_id", s.EventID, "status", s.Status)
	}
}
