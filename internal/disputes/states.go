package disputes

import "fmt"

// Status is a dispute's state.
type Status string

const (
	Opened             Status = "OPENED"
	UnderInvestigation Status = "UNDER_INVESTIGATION"
	ClosedNoAction     Status = "CLOSED_NO_ACTION"
	ResolvedAdjustment Status = "RESOLVED_ADJUSTMENT"
	ResolvedReversal   Status = "RESOLVED_REVERSAL"
	EscalatedToPartner Status = "ESCALATED_TO_PARTNER"
	Reopened           Status = "REOPENED"
)

// Statuses lists every state (the filter values of GET /api/disputes).
var Statuses = []Status{Opened, UnderInvestigation, ClosedNoAction, ResolvedAdjustment, ResolvedReversal, EscalatedToPartner, Reopened}

// Valid reports whether s is a known state.
func (s Status) Valid() bool {
	for _, x := range Statuses {
		if s == x {
			return true
		}
	}
	return false
}

// Open reports whether the dispute is still being worked (its SLA runs).
func (s Status) Open() bool { return s == Opened || s == UnderInvestigation }

// Decision is an operator's terminal decision.
type Decision string

const (
	NoAction   Decision = "NO_ACTION"
	Adjustment Decision = "ADJUSTMENT"
	Reversal   Decision = "REVERSAL"
	Chargeback Decision = "CHARGEBACK"
)

// Decisions lists every decision.
var Decisions = []Decision{NoAction, Adjustment, Reversal, Chargeback}

// Valid reports whether d is a known decision.
func (d Decision) Valid() bool {
	for _, x := range Decisions {
		if d == x {
			return true
		}
	}
	return false
}

// Outcome is the state a decision ends in.
func (d Decision) Outcome() Status {
	switch d {
	case NoAction:
		return ClosedNoAction
	case Adjustment:
		return ResolvedAdjustment
	case Reversal:
		return ResolvedReversal
	case Chargeback:
		return EscalatedToPartner
	}
	return ""
}

// RaisedBy is who raised a dispute.
type RaisedBy string

const (
	RaisedByEmployee    RaisedBy = "EMPLOYEE"
	RaisedByPartnerBank RaisedBy = "PARTNER_BANK"
	RaisedByInternal    RaisedBy = "INTERNAL"
)

// RaisedByKinds lists every raiser.
var RaisedByKinds = []RaisedBy{RaisedByEmployee, RaisedByPartnerBank, RaisedByInternal}

// Valid reports whether r is a known raiser.
func (r RaisedBy) Valid() bool {
	for _, x := range RaisedByKinds {
		if r == x {
			return true
		}
	}
	return false
}

// EventType is the kind of a dispute event (app.dispute_events.event_type).
type EventType string

const (
	EventOpened               EventType = "OPENED"
	EventEvidenceAttached     EventType = "EVIDENCE_ATTACHED"
	EventInvestigationStarted EventType = "INVESTIGATION_STARTED"
	EventDecided              EventType = "DECIDED"
	EventNotified             EventType = "NOTIFIED"
	EventSLABreachImminent    EventType = "SLA_BREACH_IMMINENT"
	EventSLABreached          EventType = "SLA_BREACHED"
	EventReopened             EventType = "REOPENED"
)

// Trigger is what moves a dispute.
type Trigger string

const (
	TriggerInvestigate Trigger = "investigate"
	TriggerEvidence    Trigger = "evidence"
	TriggerDecide      Trigger = "decide"
	TriggerReopen      Trigger = "reopen"
	// TriggerSLA records an SLA warning or breach; it never changes the state.
	TriggerSLA Trigger = "sla"
)

// Next is the state after trigger from `from` (decision names the terminal state of
// TriggerDecide). It is the lifecycle's one table: forward only, except that a CLOSED_NO_ACTION
// dispute is REOPENED (the reopen creates a new dispute). Evidence may be attached while the
// dispute is open (the first piece starts the investigation); an SLA note leaves the state.
//
// Errors: ErrInvalidTransition.
func Next(from Status, t Trigger, d Decision) (Status, error) {
	switch {
	case t == TriggerInvestigate && from == Opened:
		return UnderInvestigation, nil
	case t == TriggerEvidence && from.Open():
		return UnderInvestigation, nil
	case t == TriggerDecide && from == UnderInvestigation && d.Valid():
		return d.Outcome(), nil
	case t == TriggerReopen && from == ClosedNoAction:
		return Reopened, nil
	case t == TriggerSLA && from.Open():
		return from, nil
	}
	return "", fmt.Errorf("%w: %s from %s", ErrInvalidTransition, t, from)
}
