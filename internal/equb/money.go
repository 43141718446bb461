package equb

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Contribution is a member's contribution to a cycle (the contribution saga's record).
type Contribution struct {
	bun.BaseModel `bun:"table:app.equb_contributions,alias:ct"`

	ID           string    `bun:"id,pk"`
	TenantID     string    `bun:"tenant_id"`
	GroupID      string    `bun:"group_id"`
	CycleID      string    `bun:"cycle_id"`
	MembershipID string    `bun:"membership_id"`
	AmountSantim int64     `bun:"amount_santim"`
	Status       string    `bun:"status"`
	WorkflowID   string    `bun:"workflow_id"`
	LedgerTxID   *string   `bun:"ledger_tx_id"`
	TransferID   *string   `bun:"transfer_id"`
	FailureCode  *string   `bun:"failure_code"`
	CreatedAt    time.Time `bun:"created_at"`
	UpdatedAt    time.Time `bun:"updated_at"`
}

// Payout is a cycle's payout to its recipient (the payout saga's record).
type Payout struct {
	bun.BaseModel `bun:"table:app.equb_payouts,alias:po"`

	ID           string    `bun:"id,pk"`
	TenantID     string    `bun:"tenant_id"`
	GroupID      string    `bun:"group_id"`
	CycleID      string    `bun:"cycle_id"`
	MembershipID string    `bun:"membership_id"`
	AmountSantim int64     `bun:"amount_santim"`
	Status       string    `bun:"status"`
	WorkflowID   string    `bun:"workflow_id"`
	LedgerTxID   *string   `bun:"ledger_tx_id"`
	TransferID   *string   `bun:"transfer_id"`
	FailureCode  *string   `bun:"failure_code"`
	CreatedAt    time.Time `bun:"created_at"`
	UpdatedAt    time.Time `bun:"updated_at"`
}

// ownedBy keeps the rows whose membership belongs to userID (alias is the row's table alias).
func ownedBy(q *bun.SelectQuery, alias, userID string) *bun.SelectQuery {
	return q.Where("EXISTS (SELECT 1 FROM app.equb_memberships m WHERE m.tenant_id = "+alias+".tenant_id AND m.id = "+alias+".membership_id AND m.user_id = ?)", userID)
}

// UserContributions lists userID's contributions in the context's organization by id.
func UserContributions(ctx context.Context, tx db.BunTx, userID string, p Page) ([]Contribution, error) {
	var out []Contribution
	q := tx.NewSelect().Model(&out).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("ct.id").Limit(p.limit())
	if p.After != "" {
		q = q.Where("ct.id > ?", p.After)
	}
	if err := ownedBy(q, "ct", userID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("equb.user_contributions: %w", err)
	}
	return out, nil
}

// UserPayouts lists userID's payouts in the context's organization by id.
func UserPayouts(ctx context.Context, tx db.BunTx, userID string, p Page) ([]Payout, error) {
	var out []Payout
	q := tx.NewSelect().Model(&out).Where("po.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("po.id").Limit(p.limit())
	if p.After != "" {
		q = q.Where("po.id > ?", p.After)
	}
	if err := ownedBy(q, "po", userID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("equb.user_payouts: %w", err)
	}
	return out, nil
}
