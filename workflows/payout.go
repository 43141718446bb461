package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The payout block every money saga is built on: the transfers, each one a leg with its own
// partner reference (partnerref.Leg(kind, workflow id, leg)), initiated with a first try while
// the caller waits, retried, an unknown outcome resolved by a status lookup (never by sending
// blindly), then settled by the bank's callback (routed to its leg by its Reference,
// deduplicated by event id) or by a status lookup on a backing-off timer, continuing as new while
// the partner holds a transfer long. The gates are payout_gates.go; the caller's answer and the
// run of a saga that pays one transfer out are payout_saga.go; the settlement wait is
// payout_wait.go. A saga keeps its own plan and record steps; ewa_disburse.go is the example.

// payoutLeg is one transfer of a saga and what is known of it.
type payoutLeg struct {
	// Transfer is what is sent; its Reference is the leg's partner reference.
	Transfer   activities.TransferInput
	LedgerTxID string // the pending posting that pays for it, when the saga has one
	TransferID string
	Status     string // the partner's last word: PENDING, SETTLED, FAILED ("" before it)
	Final      string // SETTLED or FAILED once known
	FailCode   string
}

// payout is a saga run's transfers.
type payout struct {
	legs  []*payoutLeg
	byRef map[string]*payoutLeg
	// seen are the settlement signals' event ids already applied or ignored; seenOrder the same
	// in arrival order (carried on continue-as-new).
	seen      map[string]bool
	seenOrder []string
	// pending is called when the caller should be answered that the money is on its way (a
	// transfer not sent yet, or its outcome unknown); nil does nothing.
	pending func()
	// changed is called after a leg's state changes (the saga's query answer follows); nil does
	// nothing.
	changed func(*payoutLeg)

	// leaveTimer: a lookup timer a signal beat is left pending, not cancelled, when that signal
	// ended the wait (every leg final): the run ends soon after and the timer with it, so the
	// cancel command is work for nothing. A saga sets it only for runs whose recorded input says so
	// (a command sequence of its own).
	leaveTimer bool

	// The wait's state: the next lookup's delay, when the first run began waiting, how many
	// runs waited before this one.
	nextPoll time.Duration
	since    time.Time
	runs     int
}

func newPayout() *payout {
	return &payout{byRef: map[string]*payoutLeg{}, seen: map[string]bool{}, nextPoll: SettlementPollFirst}
}

// add adds a leg to send.
func (p *payout) add(t activities.TransferInput) *payoutLeg {
	l := &payoutLeg{Transfer: t}
	p.legs = append(p.legs, l)
	p.byRef[t.Reference] = l
	return l
}

// resume is the block's state for the next run, with the saga's plan.
func resumeOf[P any](p *payout, plan P) *PayoutResume[P] {
	r := &PayoutResume[P]{Plan: plan, SeenEvents: p.seenOrder, NextPoll: p.nextPoll, Since: p.since, Runs: p.runs}
	if len(p.legs) == 1 {
		l := p.legs[0]
		r.Reference, r.LedgerTxID, r.TransferID, r.TransferStatus = l.Transfer.Reference, l.LedgerTxID, l.TransferID, l.Status
		return r
	}
	for _, l := range p.legs {
		r.Legs = append(r.Legs, LegState{Reference: l.Transfer.Reference, LedgerTxID: l.LedgerTxID, TransferID: l.TransferID, TransferStatus: l.Status})
	}
	return r
}

func (p *payout) see(eventID string) {
	p.seen[eventID] = true
	p.seenOrder = append(p.seenOrder, eventID)
}

func (p *payout) answerPending() {
	if p.pending != nil {
		p.pending()
	}
}

func (p *payout) update(l *payoutLeg) {
	if p.changed != nil {
		p.changed(l)
	}
}

// transfer initiates the leg's transfer and resolves an unknown outcome by status lookups (never
// by sending blindly). It returns with l.Final set when the outcome is already known, else with
// the transfer held by the partner (PENDING). The first attempt runs while the caller waits (a
// local activity, one try); if nothing could be sent the caller is answered pending and the
// initiation is retried under partnerOptions.
func (p *payout) transfer(ctx workflow.Context, l *payoutLeg) {
	log := workflow.GetLogger(ctx)
	tin := l.Transfer
	sin := activities.TransferStatusInput{Run: tin.Run, Partner: tin.Partner, Reference: tin.Reference}

	res, err := callLocal(ctx, localPartnerFirstTryOptions(), activities.InitiateTransfer, tin)
	if err != nil && retryableFailure(err) {
		log.Warn("transfer not sent yet; answering pending and retrying", "partner_reference", tin.Reference, "error", err)
		p.answerPending()
		res, err = call(ctx, partnerOptions(), activities.InitiateTransfer, tin)
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
			l.Final, l.FailCode = activities.TransferFailed, activities.ErrorType(err)
			return
		}
		switch res.Outcome {
		case activities.TransferAccepted:
			l.TransferID, l.Status = res.TransferID, res.Status
			switch res.Status {
			case activities.TransferSettled:
				l.Final = activities.TransferSettled
			case activities.TransferFailed:
				l.Final, l.FailCode = activities.TransferFailed, res.FailureCode
			}
			p.update(l)
			return
		case activities.TransferRejected:
			l.Final, l.FailCode = activities.TransferFailed, res.RejectCode
			return
		}
		// UNKNOWN: ask, never resend blindly. The answer is pending for the caller meanwhile.
		log.Warn("transfer outcome unknown; asking the partner", "partner_reference", tin.Reference, "reason", res.UnknownReason)
		p.answerPending()
		st, serr := call(ctx, partnerOptions(), activities.TransferStatus, sin)
		if serr != nil {
			// A day of lookups failed: still unknown, so ask again; money is never given up on.
			log.Error("transfer status still unknown; asking again", "error", serr)
			continue
		}
		if st.Status == activities.TransferNotFound {
			// Never sent: sending it now, with the same reference, is safe.
			res, err = call(ctx, partnerOptions(), activities.InitiateTransfer, tin)
			continue
		}
		if st.Status == activities.TransferSettled || st.Status == activities.TransferFailed {
			l.Final, l.FailCode = st.Status, st.FailureCode
		}
		l.TransferID, l.Status = st.TransferID, st.Status
		p.update(l)
		return
	}
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
