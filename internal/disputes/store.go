package disputes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// The outbox events of disputes (the spec's Events).
const (
	EventTypeOpened            = "dispute.opened.v1"
	EventTypeEvidenceAttached  = "dispute.evidence_attached.v1"
	EventTypeDecided           = "dispute.decided.v1"
	EventTypeSLABreachImminent = "dispute.sla_breach_imminent.v1"
	EventTypeReopened          = "dispute.reopened.v1"
)

// Dispute is one row of app.disputes.
type Dispute struct {
	ID                      string
	TenantID                string
	LedgerTransactionID     string
	LedgerAccountID         string
	LedgerAccountName       string
	AmountSantim            int64
	Currency                string
	RaisedByType            RaisedBy
	RaisedBySubjectID       string
	Reason                  string
	Status                  Status
	Decision                *Decision
	DecisionReason          *string
	DecisionBy              *string
	ApprovedBy              *string
	ReversalTransactionID   *string
	AdjustmentTransactionID *string
	PartnerChargebackRef    *string
	ReopensDisputeID        *string
	WorkflowID              string
	CustomerNotifiedAt      *time.Time
	PartnerNotifiedAt       *time.Time
	SLADeadline             time.Time
	SLABreachWarnedAt       *time.Time
	OpenedAt                time.Time
	ClosedAt                *time.Time
	UpdatedAt               time.Time
}

// Breached reports whether the dispute is open past its deadline at now.
func (d Dispute) Breached(now time.Time) bool { return d.Status.Open() && now.After(d.SLADeadline) }

// Event is one row of app.dispute_events: what happened and the state after it.
type Event struct {
	ID          int64
	DisputeID   string
	EventType   EventType
	Status      Status
	Payload     json.RawMessage
	ActorUserID *string
	OccurredAt  time.Time
}

const columns = `id, tenant_id, ledger_transaction_id, ledger_account_id, ledger_account_name, amount_santim::bigint, currency,
	raised_by_type, raised_by_subject_id, reason, status, decision, decision_reason, decision_by, approved_by,
	reversal_transaction_id, adjustment_transaction_id, partner_chargeback_ref, reopens_dispute_id, workflow_id,
	customer_notified_at, partner_notified_at, sla_deadline, sla_breach_warned_at, opened_at, closed_at, updated_at`

func scanDispute(r pgx.Row) (Dispute, error) {
	var d Dispute
	err := r.Scan(&d.ID, &d.TenantID, &d.LedgerTransactionID, &d.LedgerAccountID, &d.LedgerAccountName, &d.AmountSantim, &d.Currency,
		&d.RaisedByType, &d.RaisedBySubjectID, &d.Reason, &d.Status, &d.Decision, &d.DecisionReason, &d.DecisionBy, &d.ApprovedBy,
		&d.ReversalTransactionID, &d.AdjustmentTransactionID, &d.PartnerChargebackRef, &d.ReopensDisputeID, &d.WorkflowID,
		&d.CustomerNotifiedAt, &d.PartnerNotifiedAt, &d.SLADeadline, &d.SLABreachWarnedAt, &d.OpenedAt, &d.ClosedAt, &d.UpdatedAt)
	return d, err
}

// NewID is a new dispute id: dsp_ and a UUIDv7, so id order is creation order.
func NewID() string { return "dsp_" + identity.NewID() }

// PolicyFor is tenant's SLA for disputes raised by r: its override, else the spec's default.
func PolicyFor(ctx context.Context, q db.Querier, tenant string, r RaisedBy) (Policy, error) {
	var p Policy
	err := q.QueryRow(ctx, `SELECT day_kind, days FROM app.dispute_sla_policies WHERE tenant_id = $1 AND raised_by_type = $2`,
		tenant, string(r)).Scan(&p.DayKind, &p.Days)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return DefaultPolicy(r), nil
	case err != nil:
		return Policy{}, fmt.Errorf("disputes.policy: %w", err)
	}
	return p, nil
}

// SetPolicy stores tenant's SLA override for disputes raised by r (for disputes opened after it).
func SetPolicy(ctx context.Context, q db.Querier, tenant string, r RaisedBy, p Policy, by string, now time.Time) error {
	if !r.Valid() {
		return fmt.Errorf("%w: raisedByType", ErrInvalid)
	}
	if err := p.Check(); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `INSERT INTO app.dispute_sla_policies (tenant_id, raised_by_type, day_kind, days, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, raised_by_type)
		DO UPDATE SET day_kind = EXCLUDED.day_kind, days = EXCLUDED.days, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`,
		tenant, string(r), string(p.DayKind), p.Days, by, now)
	if err != nil {
		return fmt.Errorf("disputes.set_policy: %w", err)
	}
	return nil
}

// OpenInput is a new dispute: the disputed transaction as the ledger showed it (the caller
// checked that it is POSTED and on the raiser's account), who raises it and why.
type OpenInput struct {
	ID                  string // NewID() when ""
	TenantID            string
	LedgerTransactionID string
	LedgerAccountID     string
	LedgerAccountName   string
	AmountSantim        int64
	Currency            string // ETB when ""
	RaisedBy            RaisedBy
	RaisedBySubjectID   string
	Reason              string
	ActorUserID         string
	ReopensDisputeID    string
	// WorkflowID is the dispute's workflow (its id by default, see WorkflowIDOf).
	WorkflowID string
}

// WorkflowIDOf is the id of the workflow that works a dispute (one per dispute).
func WorkflowIDOf(tenant, disputeID string) string { return "dispute:" + tenant + ":" + disputeID }

// Open records a new dispute in tx (the tenant's): the row with its SLA deadline (the tenant's
// policy for the raiser on cal, counted from now), the OPENED event, the OpenDispute audit row
// and dispute.opened.v1 (with a reopen: the REOPENED predecessor is the caller's, see Reopen).
//
// Errors: ErrInvalid, ErrAlreadyOpen, ErrAlreadyDisputed (a decided dispute of the transaction:
// only a reopen disputes it again).
func Open(ctx context.Context, tx db.Querier, cal *Calendar, in OpenInput, now time.Time) (Dispute, error) {
	if !in.RaisedBy.Valid() || in.AmountSantim <= 0 || in.TenantID == "" || in.LedgerTransactionID == "" || in.RaisedBySubjectID == "" || in.Reason == "" {
		return Dispute{}, fmt.Errorf("%w: open", ErrInvalid)
	}
	if in.ID == "" {
		in.ID = NewID()
	}
	if in.Currency == "" {
		in.Currency = "ETB"
	}
	if in.WorkflowID == "" {
		in.WorkflowID = WorkflowIDOf(in.TenantID, in.ID)
	}
	if in.ReopensDisputeID == "" {
		// A transaction is disputed once: a decided dispute's money has moved (a reversal or an
		// adjustment), so a second dispute could move it again; one closed with no action is
		// reopened by a platform admin (Reopen), not disputed anew. The unique index on open
		// disputes decides two racing first disputes.
		var status Status
		err := tx.QueryRow(ctx, `SELECT status FROM app.disputes WHERE tenant_id = $1 AND ledger_transaction_id = $2
			ORDER BY opened_at DESC LIMIT 1`, in.TenantID, in.LedgerTransactionID).Scan(&status)
		switch {
		case err == nil && status.Open():
			return Dispute{}, ErrAlreadyOpen
		case err == nil:
			return Dispute{}, ErrAlreadyDisputed
		case !errors.Is(err, pgx.ErrNoRows):
			return Dispute{}, fmt.Errorf("disputes.open: earlier disputes: %w", err)
		}
	}
	p, err := PolicyFor(ctx, tx, in.TenantID, in.RaisedBy)
	if err != nil {
		return Dispute{}, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	deadline := cal.Deadline(now, p)
	d, err := scanDispute(tx.QueryRow(ctx, `INSERT INTO app.disputes (id, tenant_id, ledger_transaction_id, ledger_account_id,
		ledger_account_name, amount_santim, currency, raised_by_type, raised_by_subject_id, reason, reopens_dispute_id, workflow_id,
		sla_deadline, opened_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)
		RETURNING `+columns,
		in.ID, in.TenantID, in.LedgerTransactionID, in.LedgerAccountID, in.LedgerAccountName, in.AmountSantim, in.Currency,
		string(in.RaisedBy), in.RaisedBySubjectID, in.Reason, nullable(in.ReopensDisputeID), in.WorkflowID, deadline, now))
	if db.IsCode(err, "23505") {
		return Dispute{}, ErrAlreadyOpen
	}
	if err != nil {
		return Dispute{}, fmt.Errorf("disputes.open: %w", err)
	}
	payload := map[string]any{"reason": in.Reason, "raisedByType": in.RaisedBy, "slaDeadline": deadline, "slaPolicy": p}
	if in.ReopensDisputeID != "" {
		payload["reopensDisputeId"] = in.ReopensDisputeID
	}
	if err := appendEvent(ctx, tx, d, EventOpened, payload, in.ActorUserID, now); err != nil {
		return Dispute{}, err
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: "OpenDispute", Outcome: audit.Success, TargetType: "Dispute", TargetID: d.ID,
		Details: map[string]any{"ledgerTransactionId": d.LedgerTransactionID, "raisedByType": d.RaisedByType}}); err != nil {
		return Dispute{}, err
	}
	if _, err := outbox.Write(ctx, tx, EventTypeOpened, eventPayload(d, nil)); err != nil {
		return Dispute{}, err
	}
	return d, nil
}

// eventPayload is the outbox payload of a dispute event: the dispute's ids and state, the
// decision and the linked transaction ids when there are, and extra.
func eventPayload(d Dispute, extra map[string]any) map[string]any {
	p := map[string]any{
		"disputeId": d.ID, "ledgerTransactionId": d.LedgerTransactionID, "ledgerAccountId": d.LedgerAccountID,
		"amountSantim": d.AmountSantim, "currency": d.Currency, "raisedByType": d.RaisedByType, "raisedBySubjectId": d.RaisedBySubjectID,
		"status": d.Status, "slaDeadline": d.SLADeadline,
	}
	for k, v := range map[string]any{"decision": d.Decision, "decisionBy": d.DecisionBy, "approvedBy": d.ApprovedBy,
		"reversalTransactionId": d.ReversalTransactionID, "adjustmentTransactionId": d.AdjustmentTransactionID,
		"partnerChargebackRef": d.PartnerChargebackRef, "reopensDisputeId": d.ReopensDisputeID} {
		switch x := v.(type) {
		case *Decision:
			if x != nil {
				p[k] = *x
			}
		case *string:
			if x != nil {
				p[k] = *x
			}
		}
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func appendEvent(ctx context.Context, tx db.Querier, d Dispute, t EventType, payload map[string]any, actor string, now time.Time) error {
	if payload == nil {
		payload = map[string]any{}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("disputes.event: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO app.dispute_events (tenant_id, dispute_id, event_type, status, payload, actor_user_id, occurred_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, d.TenantID, d.ID, string(t), string(d.Status), b, nullable(actor), now); err != nil {
		return fmt.Errorf("disputes.event: %w", err)
	}
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Get reads one dispute of the transaction's tenant (ErrNotFound).
func Get(ctx context.Context, q db.Querier, id string) (Dispute, error) {
	d, err := scanDispute(q.QueryRow(ctx, `SELECT `+columns+` FROM app.disputes WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Dispute{}, ErrNotFound
	}
	if err != nil {
		return Dispute{}, fmt.Errorf("disputes.get: %w", err)
	}
	return d, nil
}

// getForUpdate reads and locks one dispute (ErrNotFound).
func getForUpdate(ctx context.Context, q db.Querier, id string) (Dispute, error) {
	d, err := scanDispute(q.QueryRow(ctx, `SELECT `+columns+` FROM app.disputes WHERE id = $1 FOR UPDATE`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Dispute{}, ErrNotFound
	}
	if err != nil {
		return Dispute{}, fmt.Errorf("disputes.get: %w", err)
	}
	return d, nil
}

// Filter narrows List; zero fields do not filter.
type Filter struct {
	Status              Status
	RaisedBy            RaisedBy
	RaisedBySubjectID   string
	LedgerTransactionID string
	// Breached keeps the open disputes past their deadline at Now.
	Breached bool
	Now      time.Time
	// After is the previous page's last id; pages go newest first.
	After string
	Limit int
}

// List reads the tenant's disputes, newest first.
func List(ctx context.Context, q db.Querier, f Filter) ([]Dispute, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM app.disputes
		WHERE ($1 = '' OR status = $1) AND ($2 = '' OR raised_by_type = $2) AND ($3 = '' OR raised_by_subject_id = $3)
		  AND ($4 = '' OR ledger_transaction_id = $4) AND ($5 = '' OR id < $5)
		  AND (NOT $6 OR (status IN ('OPENED', 'UNDER_INVESTIGATION') AND sla_deadline < $7))
		ORDER BY id DESC LIMIT $8`,
		string(f.Status), string(f.RaisedBy), f.RaisedBySubjectID, f.LedgerTransactionID, f.After, f.Breached, f.Now, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("disputes.list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Dispute, error) { return scanDispute(r) })
	if err != nil {
		return nil, fmt.Errorf("disputes.list: %w", err)
	}
	return out, nil
}

// Events reads a dispute's events in the order they were written (the identity, not occurredAt:
// the API and the workflow stamp events with their own clocks, which need not agree).
func Events(ctx context.Context, q db.Querier, id string) ([]Event, error) {
	rows, err := q.Query(ctx, `SELECT id, dispute_id, event_type, status, payload, actor_user_id, occurred_at
		FROM app.dispute_events WHERE dispute_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("disputes.events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		return e, r.Scan(&e.ID, &e.DisputeID, &e.EventType, &e.Status, &e.Payload, &e.ActorUserID, &e.OccurredAt)
	})
	if err != nil {
		return nil, fmt.Errorf("disputes.events: %w", err)
	}
	return out, nil
}
