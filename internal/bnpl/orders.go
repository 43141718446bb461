package bnpl

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A merchant's orders: the agreements bought from it, as the merchant sees them (schema 0048's
// merchant_reads_agreements policy). The merchant learns whether and when it was paid, and what
// it has itself reported; not the customer, the instalments or how the customer repays.

// Settlement states of an order: the merchant's side of an agreement's status.
const (
	SettlementPending = "PENDING" // ACCEPTED: the merchant's settlement is in flight
	SettlementPaid    = "PAID"    // the partner settled the merchant (the agreement was activated)
	SettlementFailed  = "FAILED"  // the settlement failed: the merchant was not paid, the customer owes nothing
)

// SettlementStates are the order settlement states, in a filter's order.
var SettlementStates = []string{SettlementPending, SettlementPaid, SettlementFailed}

// MerchantStatusNone filters the orders the merchant has reported nothing about.
const MerchantStatusNone = "NONE"

// SettlementStatus is the agreement's settlement state as its merchant sees it.
func (a Agreement) SettlementStatus() string {
	switch {
	case a.Status == StatusFailed:
		return SettlementFailed
	case a.ActivatedAt != nil:
		return SettlementPaid
	default:
		return SettlementPending
	}
}

// OrderFilter narrows a merchant's orders: one settlement state, one merchant status (or
// MerchantStatusNone), one order reference; "" matches any.
type OrderFilter struct {
	Settlement        string
	MerchantStatus    string
	MerchantReference string
}

// Orders reads up to limit agreements bought from the context's merchant after cursor (an id),
// by id, without their instalments.
func Orders(ctx context.Context, q db.Querier, f OrderFilter, limit int, cursor string) ([]Agreement, error) {
	rows, err := q.Query(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements
		WHERE merchant_id = $1 AND id > $2
			AND ($3 = '' OR ($3 = 'PENDING' AND status = 'ACCEPTED') OR ($3 = 'PAID' AND activated_at IS NOT NULL)
				OR ($3 = 'FAILED' AND status = 'FAILED'))
			AND ($4 = '' OR ($4 = 'NONE' AND merchant_status IS NULL) OR merchant_status = $4)
			AND ($5 = '' OR merchant_reference = $5)
		ORDER BY id LIMIT $6`, tenancy.TenantID(ctx), cursor, f.Settlement, f.MerchantStatus, f.MerchantReference, limit)
	if err != nil {
		return nil, fmt.Errorf("bnpl: list the merchant's orders: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Agreement, error) { return scanAgreement(r) })
}

// Order reads agreement id bought from the context's merchant, without its instalments. Errors:
// BNPL_ORDER_NOT_FOUND (another merchant's agreement is not found).
func Order(ctx context.Context, q db.Querier, id string) (Agreement, error) {
	a, err := scanAgreement(q.QueryRow(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements WHERE merchant_id = $1 AND id = $2`,
		tenancy.TenantID(ctx), id))
	if CodeOf(err) == CodeAgreementNotFound {
		return Agreement{}, RefusalError(CodeOrderNotFound)
	}
	return a, err
}
