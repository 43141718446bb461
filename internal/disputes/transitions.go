package disputes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// Move is one change to a dispute: its trigger and what the trigger carries.
type Move struct {
	Trigger Trigger
	// Actor is the user who acts (the operator deciding, the admin attaching evidence); "" for the
	// workflow's own moves (investigation start, SLA notes).
	Actor string
	// Evidence: the upload keys attached and a note; EvidenceID names this attachment (the
	// workflow's update id) so a retried record step attaches it once ("": not deduplicated).
	UploadKeys []string
	Note       string
	EvidenceID string
	// Decide: the decision, why, and what it produced — the platform admin who approved an
	// adjustment and the ledger transaction it posted, the reversal's transaction, the partner's
	// chargeback reference.
	Decision             Decision
	Reason               string
	ApprovedBy           string
	AdjustmentTxID       string
	ReversalTxID         string
	PartnerChargebackRef string
	// DecisionID names the decision (the workflow's update id): stored with it, so a caller
	// asking again under the same id is answered the decision it made (DecisionIDOf).
	DecisionID string
	// SLA: which note (EventSLABreachImminent or EventSLABreached).
	SLAEvent EventType
}

// Apply makes m on dispute id in tx (the tenant's): the row, its event, its audit row and its
// outbox event in one transaction. Apply is idempotent for the workflow's retries: a decision the
// dispute already carries (same decision, same linked ids) and an SLA note already written return
// the dispute unchanged.
//
// Errors: ErrNotFound, ErrInvalidTransition, ErrInvalid, ErrApprovalMissing, ErrSelfApproved.
func Apply(ctx context.Context, tx db.Querier, id string, m Move, now time.Time) (Dispute, error) {
	d, err := getForUpdate(ctx, tx, id)
	if err != nil {
		return Dispute{}, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	switch m.Trigger {
	case TriggerDecide:
		return decide(ctx, tx, d, m, now)
	case TriggerSLA:
		return slaNote(ctx, tx, d, m, now)
	case TriggerEvidence:
		return attachEvidence(ctx, tx, d, m, now)
	case TriggerInvestigate:
		if d.Status != Opened {
			// Already started (a retried step), or the dispute moved on already (a decision that
			// raced the workflow's first step started the investigation itself).
			return d, nil
		}
		if _, err := Next(d.Status, TriggerInvestigate, ""); err != nil {
			return Dispute{}, err
		}
		d, err = setStatus(ctx, tx, d, UnderInvestigation, now)
		if err != nil {
			return Dispute{}, err
		}
		return d, appendEvent(ctx, tx, d, EventInvestigationStarted, nil, m.Actor, now)
	}
	return Dispute{}, fmt.Errorf("%w: trigger %q", ErrInvalid, m.Trigger)
}

func setStatus(ctx context.Context, tx db.Querier, d Dispute, to Status, now time.Time) (Dispute, error) {
	d, err := scanDispute(tx.QueryRow(ctx, `UPDATE app.disputes SET status = $2, updated_at = $3 WHERE id = $1 RETURNING `+columns,
		d.ID, string(to), now))
	if err != nil {
		return Dispute{}, fmt.Errorf("disputes.status: %w", err)
	}
	return d, nil
}

// MaxUploadKeys bounds the evidence attached at once.
const MaxUploadKeys = 20

func attachEvidence(ctx context.Context, tx db.Querier, d Dispute, m Move, now time.Time) (Dispute, error) {
	if len(m.UploadKeys) == 0 || len(m.UploadKeys) > MaxUploadKeys {
		return Dispute{}, fmt.Errorf("%w: uploadKeys", ErrInvalid)
	}
	if _, err := Next(d.Status, TriggerEvidence, ""); err != nil {
		return Dispute{}, err
	}
	if m.EvidenceID != "" {
		var seen bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.dispute_events WHERE tenant_id = $1 AND dispute_id = $2
			AND event_type = $3 AND payload->>'evidenceId' = $4)`, d.TenantID, d.ID, EventEvidenceAttached, m.EvidenceID).Scan(&seen); err != nil {
			return Dispute{}, fmt.Errorf("disputes: evidence %s: %w", m.EvidenceID, err)
		}
		if seen {
			return d, nil // a retried record step: attached already
		}
	}
	var err error
	if d.Status == Opened {
		if d, err = setStatus(ctx, tx, d, UnderInvestigation, now); err != nil {
			return Dispute{}, err
		}
		if err := appendEvent(ctx, tx, d, EventInvestigationStarted, nil, m.Actor, now); err != nil {
			return Dispute{}, err
		}
	}
	payload := map[string]any{"uploadKeys": m.UploadKeys}
	if m.Note != "" {
		payload["note"] = m.Note
	}
	if m.EvidenceID != "" {
		payload["evidenceId"] = m.EvidenceID
	}
	if err := appendEvent(ctx, tx, d, EventEvidenceAttached, payload, m.Actor, now); err != nil {
		return Dispute{}, err
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: "AttachDisputeEvidence", Outcome: audit.Success, TargetType: "Dispute",
		TargetID: d.ID, Details: map[string]any{"uploads": len(m.UploadKeys)}}); err != nil {
		return Dispute{}, err
	}
	if _, err := outbox.Write(ctx, tx, EventTypeEvidenceAttached, eventPayload(d, map[string]any{"uploadKeys": m.UploadKeys})); err != nil {
		return Dispute{}, err
	}
	return d, nil
}

// CheckDecision refuses a decision that cannot be made whatever the dispute's state: an unknown
// decision, no reason, an adjustment without a platform admin's approval or approved by the
// operator deciding it. The API checks it before anything starts; decide checks it again.
func CheckDecision(d Decision, reason, decidedBy, approvedBy string) error {
	switch {
	case !d.Valid():
		return fmt.Errorf("%w: decision", ErrInvalid)
	case reason == "" || decidedBy == "":
		return fmt.Errorf("%w: decision reason and operator", ErrInvalid)
	case d == Adjustment && approvedBy == "":
		return ErrApprovalMissing
	case d == Adjustment && approvedBy == decidedBy:
		return ErrSelfApproved
	case d != Adjustment && approvedBy != "":
		return fmt.Errorf("%w: only an adjustment is approved", ErrInvalid)
	}
	return nil
}

// CheckNotOwn refuses ErrOwnDispute when one of users (the operator deciding, the admin
// approving) is the user linked to the employee who raised the dispute: its reversal or
// adjustment refunds that employee, so it is decided and approved by others (found by an audit:
// an operator who is also an employee could reverse their own advance alone).
func CheckNotOwn(ctx context.Context, tx db.Querier, d Dispute, users ...string) error {
	if d.RaisedByType != RaisedByEmployee {
		return nil
	}
	own, err := employees.IsLinkedUser(ctx, tx, d.RaisedBySubjectID, users...)
	if err != nil {
		return fmt.Errorf("disputes: the raising employee: %w", err)
	}
	if own {
		return ErrOwnDispute
	}
	return nil
}

// DecisionIDOf is the DecisionID the decided dispute d was decided under ("" when it has none:
// undecided, or decided before decisions were named).
func DecisionIDOf(ctx context.Context, tx db.Querier, d Dispute) (string, error) {
	if d.Decision == nil {
		return "", nil
	}
	var id *string
	err := tx.QueryRow(ctx, `SELECT payload->>'decisionId' FROM app.dispute_events WHERE tenant_id = $1 AND dispute_id = $2 AND event_type = $3
		ORDER BY id DESC LIMIT 1`, d.TenantID, d.ID, EventDecided).Scan(&id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("disputes: the decision of %s: %w", d.ID, err)
	case id == nil:
		return "", nil
	}
	return *id, nil
}

// CheckDecidable refuses a decision the dispute's state does not allow.
func CheckDecidable(d Dispute, dec Decision) error {
	if d.Status == Opened {
		// The workflow starts the investigation as soon as it runs; a decision that races it is
		// taken as the start.
		return nil
	}
	_, err := Next(d.Status, TriggerDecide, dec)
	return err
}

func decide(ctx context.Context, tx db.Querier, d Dispute, m Move, now time.Time) (Dispute, error) {
	if err := CheckDecision(m.Decision, m.Reason, m.Actor, m.ApprovedBy); err != nil {
		return Dispute{}, err
	}
	to := m.Decision.Outcome()
	linked := map[Decision]string{Adjustment: m.AdjustmentTxID, Reversal: m.ReversalTxID, Chargeback: m.PartnerChargebackRef}[m.Decision]
	if m.Decision != NoAction && linked == "" {
		return Dispute{}, fmt.Errorf("%w: %s needs its linked id", ErrInvalid, m.Decision)
	}
	if d.Decision != nil && *d.Decision == m.Decision && d.Status == to && sameLinked(d, m) {
		return d, nil // a retried record step
	}
	if d.Status == Opened {
		var err error
		if d, err = setStatus(ctx, tx, d, UnderInvestigation, now); err != nil {
			return Dispute{}, err
		}
		if err := appendEvent(ctx, tx, d, EventInvestigationStarted, nil, "", now); err != nil {
			return Dispute{}, err
		}
	}
	if _, err := Next(d.Status, TriggerDecide, m.Decision); err != nil {
		return Dispute{}, err
	}
	d, err := scanDispute(tx.QueryRow(ctx, `UPDATE app.disputes SET status = $2, decision = $3, decision_reason = $4, decision_by = $5,
		approved_by = $6, adjustment_transaction_id = $7, reversal_transaction_id = $8, partner_chargeback_ref = $9,
		closed_at = $10, updated_at = $10 WHERE id = $1 RETURNING `+columns,
		d.ID, string(to), string(m.Decision), m.Reason, m.Actor, nullable(m.ApprovedBy), nullable(m.AdjustmentTxID),
		nullable(m.ReversalTxID), nullable(m.PartnerChargebackRef), now))
	if err != nil {
		return Dispute{}, fmt.Errorf("disputes.decide: %w", err)
	}
	payload := map[string]any{"decision": m.Decision, "reason": m.Reason}
	for k, v := range map[string]string{"approvedBy": m.ApprovedBy, "adjustmentTransactionId": m.AdjustmentTxID,
		"reversalTransactionId": m.ReversalTxID, "partnerChargebackRef": m.PartnerChargebackRef, "decisionId": m.DecisionID} {
		if v != "" {
			payload[k] = v
		}
	}
	if err := appendEvent(ctx, tx, d, EventDecided, payload, m.Actor, now); err != nil {
		return Dispute{}, err
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: "DecideDispute", Outcome: audit.Success, TargetType: "Dispute", TargetID: d.ID,
		Details: payload}); err != nil {
		return Dispute{}, err
	}
	if _, err := outbox.Write(ctx, tx, EventTypeDecided, eventPayload(d, map[string]any{"decisionReason": m.Reason})); err != nil {
		return Dispute{}, err
	}
	return d, nil
}

func sameLinked(d Dispute, m Move) bool {
	eq := func(p *string, s string) bool { return (p == nil && s == "") || (p != nil && *p == s) }
	return eq(d.AdjustmentTransactionID, m.AdjustmentTxID) && eq(d.ReversalTransactionID, m.ReversalTxID) &&
		eq(d.PartnerChargebackRef, m.PartnerChargebackRef)
}

func slaNote(ctx context.Context, tx db.Querier, d Dispute, m Move, now time.Time) (Dispute, error) {
	if !d.Status.Open() {
		return d, nil // decided before the timer fired: nothing to say
	}
	switch m.SLAEvent {
	case EventSLABreachImminent:
		if d.SLABreachWarnedAt != nil {
			return d, nil
		}
		d2, err := scanDispute(tx.QueryRow(ctx, `UPDATE app.disputes SET sla_breach_warned_at = $2, updated_at = $2 WHERE id = $1
			RETURNING `+columns, d.ID, now))
		if err != nil {
			return Dispute{}, fmt.Errorf("disputes.sla: %w", err)
		}
		if err := appendEvent(ctx, tx, d2, EventSLABreachImminent, map[string]any{"slaDeadline": d2.SLADeadline}, "", now); err != nil {
			return Dispute{}, err
		}
		_, err = outbox.Write(ctx, tx, EventTypeSLABreachImminent, eventPayload(d2, nil))
		return d2, err
	case EventSLABreached:
		evs, err := Events(ctx, tx, d.ID)
		if err != nil {
			return Dispute{}, err
		}
		for _, e := range evs {
			if e.EventType == EventSLABreached {
				return d, nil
			}
		}
		return d, appendEvent(ctx, tx, d, EventSLABreached, map[string]any{"slaDeadline": d.SLADeadline}, "", now)
	}
	return Dispute{}, fmt.Errorf("%w: sla event %q", ErrInvalid, m.SLAEvent)
}

// Reopen moves a CLOSED_NO_ACTION dispute to REOPENED and opens its successor (a new dispute of
// the same transaction with reopensDisputeId, its own SLA from now) in one transaction, with
// dispute.reopened.v1. by is the platform admin.
//
// Errors: ErrNotFound, ErrInvalidTransition, ErrAlreadyReopened, ErrAlreadyOpen, ErrInvalid.
func Reopen(ctx context.Context, tx db.Querier, cal *Calendar, id, by, reason string, now time.Time) (prev, next Dispute, err error) {
	if by == "" || reason == "" {
		return Dispute{}, Dispute{}, fmt.Errorf("%w: reopen", ErrInvalid)
	}
	d, err := getForUpdate(ctx, tx, id)
	if err != nil {
		return Dispute{}, Dispute{}, err
	}
	if d.Status == Reopened {
		return Dispute{}, Dispute{}, ErrAlreadyReopened
	}
	if _, err := Next(d.Status, TriggerReopen, ""); err != nil {
		return Dispute{}, Dispute{}, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	if d, err = setStatus(ctx, tx, d, Reopened, now); err != nil {
		return Dispute{}, Dispute{}, err
	}
	nextID := NewID()
	if err := appendEvent(ctx, tx, d, EventReopened, map[string]any{"reason": reason, "reopenedAs": nextID}, by, now); err != nil {
		return Dispute{}, Dispute{}, err
	}
	n, err := Open(ctx, tx, cal, OpenInput{ID: nextID, TenantID: d.TenantID, LedgerTransactionID: d.LedgerTransactionID,
		LedgerAccountID: d.LedgerAccountID, LedgerAccountName: d.LedgerAccountName, AmountSantim: d.AmountSantim, Currency: d.Currency,
		RaisedBy: d.RaisedByType, RaisedBySubjectID: d.RaisedBySubjectID, Reason: reason, ActorUserID: by, ReopensDisputeID: d.ID}, now)
	if err != nil {
		return Dispute{}, Dispute{}, err
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: "ReopenDispute", Outcome: audit.Success, TargetType: "Dispute", TargetID: d.ID,
		Details: map[string]any{"reopenedAs": n.ID}}); err != nil {
		return Dispute{}, Dispute{}, err
	}
	if _, err := outbox.Write(ctx, tx, EventTypeReopened, eventPayload(n, map[string]any{"reopenedDisputeId": d.ID})); err != nil {
		return Dispute{}, Dispute{}, err
	}
	return d, n, nil
}
