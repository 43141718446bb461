package bnpl

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Audit action and event of a merchant's settings.
const (
	ActionSetMerchant    = "SetBnplMerchant"
	EventMerchantUpdated = "bnpl.merchant_updated.v1"
	// MaxDiscountBasisPoints bounds a merchant's discount (20%).
	MaxDiscountBasisPoints = 2000
)

// The shapes the database keeps (schema/migrations/app/0048_bnpl.up.sql): a partner, an account
// number, a merchant's order reference.
var (
	partnerPattern   = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	accountPattern   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	referencePattern = accountPattern
)

// Account is an account at a partner bank.
type Account struct {
	Partner       string
	AccountNumber string
}

// Merchant is a merchant's BNPL settings: where its purchases are paid to and the discount it
// gives up on each.
type Merchant struct {
	ID                  string // the merchant organization
	Settlement          Account
	DiscountBasisPoints int64
	UpdatedAt           time.Time
}

// Check validates the settings' fields.
func (m Merchant) Check() error {
	if !partnerPattern.MatchString(m.Settlement.Partner) {
		return &field.Error{Field: "settlementAccount.partner", Problem: "must be 1 to 64 of a-z 0-9 _ -"}
	}
	if !accountPattern.MatchString(m.Settlement.AccountNumber) {
		return &field.Error{Field: "settlementAccount.accountNumber", Problem: "must be 1 to 64 of A-Z a-z 0-9 . _ -"}
	}
	if m.DiscountBasisPoints < 0 || m.DiscountBasisPoints > MaxDiscountBasisPoints {
		return &field.Error{Field: "discountBasisPoints", Problem: fmt.Sprintf("must be from 0 to %d", MaxDiscountBasisPoints)}
	}
	return nil
}

// GetMerchant reads merchant id's settings (any organization may: a quote names the merchant).
// Errors: BNPL_MERCHANT_NOT_FOUND when the organization has set none.
func GetMerchant(ctx context.Context, q db.Writer, id string) (Merchant, error) {
	var m Merchant
	err := q.QueryRow(ctx, `SELECT tenant_id, settlement_partner, settlement_account_number, discount_basis_points, updated_at
		FROM app.bnpl_merchants WHERE tenant_id = $1`, id).
		Scan(&m.ID, &m.Settlement.Partner, &m.Settlement.AccountNumber, &m.DiscountBasisPoints, &m.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Merchant{}, RefusalError(CodeMerchantNotFound)
	}
	if err != nil {
		return Merchant{}, fmt.Errorf("bnpl: read the merchant: %w", err)
	}
	return m, nil
}

// merchantAvailable refuses (BNPL_MERCHANT_NOT_AVAILABLE) a new agreement with merchant id unless
// the merchant is in good standing (orgs standing.go).
func merchantAvailable(ctx context.Context, q db.Writer, id string) error {
	ok, err := orgs.PartnerInGoodStanding(ctx, q, id)
	if err != nil && !errors.Is(err, orgs.ErrNotAPartner) {
		return fmt.Errorf("bnpl: the merchant's standing: %w", err)
	}
	if !ok {
		return RefusalError(CodeMerchantNotAvailable)
	}
	return nil
}

// ListedMerchant is a merchant as a business choosing one sees it: who it is, the bank it is paid
// at and the discount it gives up on each purchase. Never its account number.
type ListedMerchant struct {
	ID                  string
	Name                string
	SettlementPartner   string
	DiscountBasisPoints int64
}

// MerchantQuery narrows ListMerchants.
type MerchantQuery struct {
	// Name, when set, is a part of the merchant's name, compared case-insensitively.
	Name  string
	After string // the merchants after this id ("" from the start)
	Limit int
}

// ListMerchants lists, by id, the merchants a business may sell through now: those that have set
// their settlement account (GetMerchant finds them) and are in good standing (merchantAvailable
// lets an agreement be made with them). One statement; any organization may read it.
func ListMerchants(ctx context.Context, q db.Querier, f MerchantQuery) ([]ListedMerchant, error) {
	rows, err := q.Query(ctx, `SELECT m.tenant_id, ps.name, m.settlement_partner, m.discount_basis_points
		FROM app.bnpl_merchants m JOIN app.partner_standing ps ON ps.id = m.tenant_id AND ps.kind = 'MERCHANT'
		WHERE `+orgs.InGoodStanding("m.tenant_id")+` AND ($1 = '' OR strpos(lower(ps.name), lower($1)) > 0)
			AND m.tenant_id > $2
		ORDER BY m.tenant_id LIMIT $3`, f.Name, f.After, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("bnpl: list merchants: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ListedMerchant, error) {
		var m ListedMerchant
		err := r.Scan(&m.ID, &m.Name, &m.SettlementPartner, &m.DiscountBasisPoints)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("bnpl: list merchants: %w", err)
	}
	return out, nil
}

// PutMerchant sets the context's merchant's settings (the caller checked the account at the
// partner), with its audit row and event.
func PutMerchant(ctx context.Context, tx db.Writer, m Merchant, now time.Time) (Merchant, error) {
	if err := m.Check(); err != nil {
		return Merchant{}, err
	}
	m.ID = tenancy.TenantID(ctx)
	err := tx.QueryRow(ctx, `INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number,
			discount_basis_points, updated_by, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (tenant_id) DO UPDATE SET settlement_partner = EXCLUDED.settlement_partner,
			settlement_account_number = EXCLUDED.settlement_account_number, discount_basis_points = EXCLUDED.discount_basis_points,
			updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at
		RETURNING updated_at`, m.ID, m.Settlement.Partner, m.Settlement.AccountNumber, m.DiscountBasisPoints,
		tenancy.Actor(ctx), now).Scan(&m.UpdatedAt)
	if err != nil {
		return Merchant{}, fmt.Errorf("bnpl: store the merchant: %w", err)
	}
	payload := map[string]any{"merchantId": m.ID, "settlementPartner": m.Settlement.Partner,
		"discountBasisPoints": m.DiscountBasisPoints}
	if err := audit.Write(ctx, tx, audit.Entry{Action: ActionSetMerchant, Outcome: audit.Success, TargetType: "BnplMerchant",
		TargetID: m.ID, Details: payload}); err != nil {
		return Merchant{}, err
	}
	_, err = outbox.Write(ctx, tx, EventMerchantUpdated, payload)
	return m, err
}
