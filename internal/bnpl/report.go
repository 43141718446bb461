package bnpl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Member reports: the merchant's word on one of its orders from one of its own members (POST
// /api/bnpl/merchant/orders/<id>/reports), beside the one its partner relays signed (callback.go).
// See the package doc, "Merchant callbacks".
const (
	// SourcePartner and SourceMember are where a stored merchant callback came from
	// (app.bnpl_merchant_callbacks.source).
	SourcePartner = "PARTNER"
	SourceMember  = "MEMBER"
	// ActionOrderReported is the audit action of a member's report in the merchant's own trail
	// (the agreement's business records ActionMerchantCallbackReceived, as for a callback).
	ActionOrderReported = "BnplOrderReported"
)

// MemberReport is a merchant member's word on an order bought from the merchant.
type MemberReport struct {
	MerchantID  string // the member's organization
	AgreementID string
	Kind        string // one of CallbackKinds
	OccurredAt  *time.Time
	// EventID names the report: derived from the request's Idempotency-Key, so a retry of the
	// same request names the stored report.
	EventID    string
	ReportedBy string // the member's user id
}

// MaxReportSkew is how far after now a report's occurredAt may be (clocks differ; the partner
// callbacks' signature skew).
const MaxReportSkew = 300 * time.Second

// Check checks what the member says: a known kind, and an event that has happened (occurredAt
// orders the merchant's word: one in the future would outrank every later report).
func (r MemberReport) Check(now time.Time) error {
	if !slices.Contains(CallbackKinds, r.Kind) {
		return &field.Error{Field: "kind", Problem: "must be one of " + strings.Join(CallbackKinds, ", ")}
	}
	if r.OccurredAt != nil && r.OccurredAt.After(now.Add(MaxReportSkew)) {
		return &field.Error{Field: "occurredAt", Problem: "must not be in the future"}
	}
	return nil
}

// body is what the report stores as raw_body: a retry under its event id must say the same.
func (r MemberReport) body() []byte {
	b, _ := json.Marshal(map[string]any{"agreementId": r.AgreementID, "kind": r.Kind, "occurredAt": r.OccurredAt})
	return b
}

// Report stores r once per (merchant, event id), in a cross-tenant transaction as a callback is
// (the agreement is the business's row), and delivers it as a recorded callback (deliver: the
// running activation saga applies it, else Report does). The business's trail records it as
// ActionMerchantCallbackReceived with bnpl.merchant_callback_received.v1 (source MEMBER), the
// merchant's as ActionOrderReported. A retry with the same event id and body is a
// CallbackDuplicate receipt and records nothing again; another body under the event id is
// ErrCallbackConflict. An agreement that is not the merchant's is BNPL_ORDER_NOT_FOUND and nothing
// is stored. ErrSignal: recorded, the running saga not reached; a retry signals again.
func (m *MerchantCallbacks) Report(ctx context.Context, r MemberReport) (CallbackReceipt, error) {
	ctx = tenancy.WithActor(ctx, r.ReportedBy)
	var out CallbackReceipt
	var a Agreement
	err := crosstenant.Tx(ctx, m.platform, "merchant member report", func(tx pgx.Tx) error {
		var err error
		out, a, err = m.storeReport(ctx, tx, r)
		return err
	})
	if err != nil {
		return out, err
	}
	return m.deliver(ctx, out, MerchantCallbackSignal{EventID: r.EventID, AgreementID: r.AgreementID,
		MerchantReference: a.MerchantReference, Kind: r.Kind, CallbackID: out.ID})
}

func (m *MerchantCallbacks) storeReport(ctx context.Context, tx pgx.Tx, r MemberReport) (CallbackReceipt, Agreement, error) {
	a, err := scanAgreement(tx.QueryRow(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements WHERE id = $1 AND merchant_id = $2`,
		r.AgreementID, r.MerchantID))
	if CodeOf(err) == CodeAgreementNotFound {
		return CallbackReceipt{}, a, RefusalError(CodeOrderNotFound)
	}
	if err != nil {
		return CallbackReceipt{}, a, err
	}
	body := r.body()
	out := CallbackReceipt{Outcome: CallbackRecorded, TenantID: a.TenantID, WorkflowID: a.WorkflowID}
	err = tx.QueryRow(ctx, `INSERT INTO app.bnpl_merchant_callbacks
			(source, reported_by, event_id, merchant_id, agreement_id, merchant_reference, kind, tenant_id, outcome, raw_body,
			 received_at, occurred_at)
		VALUES ('MEMBER', $1, $2, $3, $4, $5, $6, $7, 'RECORDED', $8, $9, $10)
		ON CONFLICT (merchant_id, event_id) WHERE source = 'MEMBER' DO NOTHING
		RETURNING id`,
		r.ReportedBy, r.EventID, r.MerchantID, r.AgreementID, a.MerchantReference, r.Kind, a.TenantID, body, m.now(), r.OccurredAt).Scan(&out.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		// Stored before: by this request's earlier attempt, or racing it.
		var stored []byte
		var agreementID string
		if err := tx.QueryRow(ctx, `SELECT id, agreement_id, raw_body FROM app.bnpl_merchant_callbacks
			WHERE source = 'MEMBER' AND merchant_id = $1 AND event_id = $2`, r.MerchantID, r.EventID).Scan(&out.ID, &agreementID, &stored); err != nil {
			return CallbackReceipt{}, a, fmt.Errorf("bnpl: read the stored member report: %w", err)
		}
		if agreementID != r.AgreementID || !bytes.Equal(stored, body) {
			return CallbackReceipt{}, a, ErrCallbackConflict
		}
		out.Outcome = CallbackDuplicate
		return out, a, nil
	}
	if err != nil {
		return CallbackReceipt{}, a, fmt.Errorf("bnpl: store the member report: %w", err)
	}
	details := map[string]any{"source": SourceMember, "eventId": r.EventID, "kind": r.Kind, "merchantCallbackId": out.ID,
		"merchantId": r.MerchantID, "merchantReference": a.MerchantReference, "outcome": out.Outcome, "reportedBy": r.ReportedBy}
	if err := record(tenancy.WithTenant(ctx, a.TenantID), tx, a, ActionMerchantCallbackReceived, audit.Success,
		EventMerchantCallbackReceived, map[string]any{"callback": details}); err != nil {
		return CallbackReceipt{}, a, err
	}
	return out, a, audit.Write(tenancy.WithTenant(ctx, r.MerchantID), tx, audit.Entry{Action: ActionOrderReported, Outcome: audit.Success,
		TargetType: "BnplAgreement", TargetID: a.ID, Details: details})
}
