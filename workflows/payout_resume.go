package workflows

import (
	"time"

	"github.com/wagerail/wagerail/activities"
)

// The payout block's state across continue-as-new: what a run hands the next one while a partner
// holds its transfers, and the two moves between it and the running block (payout.go).

// LegState is one leg as a run continued as new hands it on.
type LegState struct {
	Reference      string
	LedgerTxID     string `json:",omitempty"`
	TransferID     string `json:",omitempty"`
	TransferStatus string `json:",omitempty"`
}

// PayoutResume is what a run of a money saga hands the next one when it continues as new while
// a partner holds its transfers (its history would otherwise grow with every status lookup):
// the saga's own plan P and the payout block's state. A saga with one transfer keeps it in the
// top-level fields (the form runs continued before legs existed have); one with many in Legs.
type PayoutResume[P any] struct {
	Plan P
	// Reference is the one transfer's partner reference; empty in runs continued before leg
	// references, whose transfer has the workflow id as its reference.
	Reference      string `json:",omitempty"`
	LedgerTxID     string
	TransferID     string
	TransferStatus string
	// Legs are the transfers of a saga with many (then the fields above are empty).
	Legs []LegState `json:",omitempty"`
	// SeenEvents are the settlement signals' event ids already applied or ignored, in arrival order.
	SeenEvents []string
	// NextPoll is the wait before the next status lookup.
	NextPoll time.Duration
	// Since is when the first run began to wait; Runs counts the runs that waited before this one.
	Since time.Time
	Runs  int
}

// resumePayout restores the block's state from a continued run; transfer rebuilds a leg's
// TransferInput from its reference (the saga's plan knows the rest).
func resumePayout[P any](r *PayoutResume[P], transfer func(ref string) activities.TransferInput) *payout {
	p := newPayout()
	p.nextPoll, p.since, p.runs = r.NextPoll, r.Since, r.Runs+1
	legs := r.Legs
	if len(legs) == 0 {
		legs = []LegState{{Reference: r.Reference, LedgerTxID: r.LedgerTxID, TransferID: r.TransferID, TransferStatus: r.TransferStatus}}
	}
	for _, s := range legs {
		l := p.add(transfer(s.Reference))
		l.LedgerTxID, l.TransferID, l.Status = s.LedgerTxID, s.TransferID, s.TransferStatus
	}
	for _, id := range r.SeenEvents {
		p.see(id)
	}
	return p
}
