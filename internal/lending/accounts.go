package lending

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Account is an account at a partner bank: the partner's name in the gateway and the account
// number there.
type Account struct {
	Partner       string
	AccountNumber string
}

// Bounds of an account's parts (the database checks them again).
const (
	MaxPartner       = 64
	MaxAccountNumber = 64
)

// Check validates the account named name ("fundingAccount"); its errors name the part
// ("fundingAccount.partner").
func (a Account) Check(name string) error {
	if a.Partner == "" {
		return &field.Error{Field: name + ".partner", Problem: "is required"}
	}
	if err := field.Identifier(name+".partner", a.Partner, MaxPartner); err != nil {
		return err
	}
	for i := 0; i < len(a.Partner); i++ {
		if c := a.Partner[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return &field.Error{Field: name + ".partner", Problem: "must be a partner name: lower-case letters, digits, '_' and '-'"}
		}
	}
	if a.AccountNumber == "" {
		return &field.Error{Field: name + ".accountNumber", Problem: "is required"}
	}
	if err := field.Identifier(name+".accountNumber", a.AccountNumber, MaxAccountNumber); err != nil {
		return err
	}
	if strings.Contains(a.AccountNumber, ":") {
		return &field.Error{Field: name + ".accountNumber", Problem: "must not contain ':'"}
	}
	return nil
}

// FIAccounts is a financial institution's two accounts at its partner bank: Funding, which its
// loans are paid out from, and Settlement, which the remittances of repaid instalments are sent
// to. Both are looked up at the partner (the API's account check) before they are stored.
type FIAccounts struct {
	bun.BaseModel `bun:"table:app.lending_fi_accounts,alias:fa"`

	TenantID                string    `bun:"tenant_id,pk"`
	FundingPartner          string    `bun:"funding_partner"`
	FundingAccountNumber    string    `bun:"funding_account_number"`
	SettlementPartner       string    `bun:"settlement_partner"`
	SettlementAccountNumber string    `bun:"settlement_account_number"`
	CreatedBy               string    `bun:"created_by"`
	CreatedAt               time.Time `bun:"created_at"`
	UpdatedBy               string    `bun:"updated_by"`
	UpdatedAt               time.Time `bun:"updated_at"`
}

// Funding is the funding account.
func (a FIAccounts) Funding() Account {
	return Account{Partner: a.FundingPartner, AccountNumber: a.FundingAccountNumber}
}

// Settlement is the settlement account.
func (a FIAccounts) Settlement() Account {
	return Account{Partner: a.SettlementPartner, AccountNumber: a.SettlementAccountNumber}
}

// GetFIAccounts is the context's FI's accounts; ok false when it has not set them.
func GetFIAccounts(ctx context.Context, tx db.BunTx) (FIAccounts, bool, error) {
	var a FIAccounts
	err := tx.NewSelect().Model(&a).Where("fa.tenant_id = ?", tenancy.TenantID(ctx)).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return FIAccounts{}, false, nil
	}
	if err != nil {
		return FIAccounts{}, false, fmt.Errorf("lending.get_fi_accounts: %w", err)
	}
	return a, true, nil
}

// PutFIAccounts sets the context's FI's two accounts as a whole (audited SetFiAccounts, event
// lending.fi_accounts_set.v1 naming the partners, not the account numbers). The caller has
// looked up the accounts it changes at the partner.
func PutFIAccounts(ctx context.Context, tx db.BunTx, funding, settlement Account, now time.Time) (FIAccounts, error) {
	if err := funding.Check("fundingAccount"); err != nil {
		return FIAccounts{}, err
	}
	if err := settlement.Check("settlementAccount"); err != nil {
		return FIAccounts{}, err
	}
	who := actor(ctx)
	a := FIAccounts{TenantID: tenancy.TenantID(ctx), FundingPartner: funding.Partner, FundingAccountNumber: funding.AccountNumber,
		SettlementPartner: settlement.Partner, SettlementAccountNumber: settlement.AccountNumber,
		CreatedBy: who, CreatedAt: now, UpdatedBy: who, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(&a).
		On("CONFLICT (tenant_id) DO UPDATE").
		Set("funding_partner = EXCLUDED.funding_partner").Set("funding_account_number = EXCLUDED.funding_account_number").
		Set("settlement_partner = EXCLUDED.settlement_partner").Set("settlement_account_number = EXCLUDED.settlement_account_number").
		Set("updated_by = EXCLUDED.updated_by").Set("updated_at = EXCLUDED.updated_at").
		Returning("*").Exec(ctx); err != nil {
		return FIAccounts{}, fmt.Errorf("lending.put_fi_accounts: %w", err)
	}
	return a, record(ctx, tx, "SetFiAccounts", "FinancialInstitution", a.TenantID, "lending.fi_accounts_set.v1",
		map[string]any{"fiId": a.TenantID, "fundingPartner": a.FundingPartner, "settlementPartner": a.SettlementPartner})
}
