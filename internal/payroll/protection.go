package payroll

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A protection policy says how much of a wage the deductions after the statutory ones (PAYE and
// pension) may take: a share of gross − statutory deductions, written as an exact fraction so one
// third is exactly 1/3 (paycalc's Policy.ShareNumerator / ShareDenominator), and a minimum net pay
// no such deduction may take the net below. A tenant has at most one ACTIVE policy (the database's
// unique index); activating another supersedes it. With none, DefaultProtection applies.
//
// Lifecycle: DRAFT → ACTIVE (activate, payroll.approve, another user than the creator) →
// SUPERSEDED (when another policy is activated). A policy is never edited: a new one is drafted.

// Protection policy states.
const (
	ProtectionDraft      = "DRAFT"
	ProtectionActive     = "ACTIVE"
	ProtectionSuperseded = "SUPERSEDED"
)

// Bounds of a policy's terms. The share's denominator is at most MaxShareDenominator (paycalc
// accepts up to 1,000,000, so every stored policy is one it computes with).
const (
	MaxShareDenominator int64 = 10_000
	// MaxMinimumNetSantim is money.MaxAmountSantim (10 billion ETB).
	MaxMinimumNetSantim = money.MaxAmountSantim
	MaxDescription      = 512
)

// ProtectionTerms is what a run applies: the share and the minimum net, and the policy they come
// from ("" for the default).
type ProtectionTerms struct {
	PolicyID         string
	ShareNumerator   int64
	ShareDenominator int64
	MinimumNetSantim int64
}

// DefaultProtection applies while a tenant has no policy in force for a period: deductions
// beyond the statutory ones take at most one third of the wage (Labour Proclamation 1156/2019,
// art. 59; paycalc.DefaultShareNumerator / DefaultShareDenominator), and no minimum net beyond
// that (Ethiopia sets no general minimum wage for the private sector; a tenant states its own).
var DefaultProtection = ProtectionTerms{ShareNumerator: paycalc.DefaultShareNumerator,
	ShareDenominator: paycalc.DefaultShareDenominator, MinimumNetSantim: 0}

// Policy is p with the protection the calculator reads (the share, the minimum net) replaced by
// t's; the rest (pension rates, monthly hours) is the tenant settings' (Settings.Policy).
func (t ProtectionTerms) Policy(p paycalc.Policy) paycalc.Policy {
	p.ShareNumerator, p.ShareDenominator, p.MinNetSantim = t.ShareNumerator, t.ShareDenominator, t.MinimumNetSantim
	return p
}

// ProtectionMachine is the policy lifecycle's moves (superseding is done by Activate itself).
var ProtectionMachine = &Machine{Noun: "protection policy", Code: "PAYROLL_PROTECTION_POLICY_INVALID_STATE", Moves: map[string]Move{
	"activated": {From: []string{ProtectionDraft}, To: ProtectionActive},
}}

// ErrProtectionPolicyNotFound: no such policy in the tenant (another tenant's included).
var ErrProtectionPolicyNotFound = NotFound("PAYROLL_PROTECTION_POLICY_NOT_FOUND", "protection policy")

// ProtectionPolicy is one stored policy.
type ProtectionPolicy struct {
	bun.BaseModel `bun:"table:app.payroll_protection_policies,alias:pp"`

	ID               string     `bun:"id,pk"`
	TenantID         string     `bun:"tenant_id"`
	Description      string     `bun:"description"`
	ShareNumerator   int64      `bun:"share_numerator"`
	ShareDenominator int64      `bun:"share_denominator"`
	MinimumNetSantim int64      `bun:"minimum_net_santim"`
	EffectiveFrom    string     `bun:"effective_from"`
	Status           string     `bun:"status"`
	CreatedBy        string     `bun:"created_by"`
	CreatedAt        time.Time  `bun:"created_at"`
	ActivatedBy      *string    `bun:"activated_by"`
	ActivatedAt      *time.Time `bun:"activated_at"`
	// ActivationSeq orders the tenant's activations (1, 2, …), so "activated last" never ties.
	ActivationSeq *int64     `bun:"activation_seq"`
	SupersededBy  *string    `bun:"superseded_by"`
	SupersededAt  *time.Time `bun:"superseded_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
}

// NewProtectionPolicy is what a caller drafts.
type NewProtectionPolicy struct {
	Description      string
	ShareNumerator   int64
	ShareDenominator int64
	MinimumNetSantim int64
	EffectiveFrom    string // period
}

// Check validates the terms (field errors: the caller's 400).
func (p NewProtectionPolicy) Check() error {
	switch {
	case p.ShareDenominator < 1 || p.ShareDenominator > MaxShareDenominator:
		return &field.Error{Field: "voluntaryShareDenominator", Problem: "must be from 1 to 10000"}
	case p.ShareNumerator < 0 || p.ShareNumerator > p.ShareDenominator:
		return &field.Error{Field: "voluntaryShareNumerator", Problem: "must be from 0 to voluntaryShareDenominator"}
	case p.MinimumNetSantim < 0 || p.MinimumNetSantim > MaxMinimumNetSantim:
		return &field.Error{Field: "minimumNetSantim", Problem: "must be from 0 to 1000000000000"}
	}
	if err := CheckPeriod("effectiveFrom", p.EffectiveFrom); err != nil {
		return err
	}
	return field.Text("description", p.Description, MaxDescription)
}

// CreateProtectionPolicy drafts a policy (audited CreateProtectionPolicy, event
// payroll.protection_policy_created.v1).
func CreateProtectionPolicy(ctx context.Context, tx db.BunTx, in NewProtectionPolicy, now time.Time) (ProtectionPolicy, error) {
	if err := in.Check(); err != nil {
		return ProtectionPolicy{}, err
	}
	p := ProtectionPolicy{ID: "ppol_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), Description: in.Description,
		ShareNumerator: in.ShareNumerator, ShareDenominator: in.ShareDenominator, MinimumNetSantim: in.MinimumNetSantim,
		EffectiveFrom: in.EffectiveFrom, Status: ProtectionDraft, CreatedBy: actor(ctx), CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(&p).Exec(ctx); err != nil {
		return ProtectionPolicy{}, fmt.Errorf("payroll.create_protection_policy: %w", err)
	}
	return p, record(ctx, tx, "CreateProtectionPolicy", "ProtectionPolicy", p.ID, "payroll.protection_policy_created.v1", protectionEvent(p))
}

// GetProtectionPolicy reads one policy of the tenant.
func GetProtectionPolicy(ctx context.Context, tx db.BunTx, id string) (ProtectionPolicy, error) {
	return getProtectionPolicy(ctx, tx, id, false)
}

func getProtectionPolicy(ctx context.Context, tx db.BunTx, id string, lock bool) (ProtectionPolicy, error) {
	return getByID[ProtectionPolicy](ctx, tx, "pp", id, lock, ErrProtectionPolicyNotFound)
}

// ProtectionFilter narrows ListProtectionPolicies.
type ProtectionFilter struct {
	Status string // "" any
	db.Page
}

// ListProtectionPolicies lists the tenant's policies by id (oldest first).
func ListProtectionPolicies(ctx context.Context, tx db.BunTx, f ProtectionFilter) ([]ProtectionPolicy, error) {
	var out []ProtectionPolicy
	q := tx.NewSelect().Model(&out).Where("pp.tenant_id = ?", tenancy.TenantID(ctx))
	if err := listPage(ctx, q, "pp", map[string]string{"status": f.Status}, f.After, f.Rows()); err != nil {
		return nil, fmt.Errorf("payroll.list_protection_policies: %w", err)
	}
	return out, nil
}

// ActivateProtectionPolicy makes a DRAFT policy the tenant's ACTIVE one and the one ACTIVE before
// it SUPERSEDED, under a per-tenant lock so two activations run one after the other (audited
// ActivateProtectionPolicy, event payroll.protection_policy_activated.v1 naming the superseded
// policy). Errors: ErrProtectionPolicyNotFound, the machine's 409, CheckMakerChecker's 403.
func ActivateProtectionPolicy(ctx context.Context, tx db.BunTx, id string, now time.Time) (ProtectionPolicy, error) {
	if err := lockTenantKey(ctx, tx, "payroll-protection-policy"); err != nil {
		return ProtectionPolicy{}, err
	}
	p, err := getProtectionPolicy(ctx, tx, id, true)
	if err != nil {
		return ProtectionPolicy{}, err
	}
	to, err := ProtectionMachine.Next("activated", p.Status)
	if err != nil {
		return ProtectionPolicy{}, err
	}
	who := actor(ctx)
	if err := CheckMakerChecker(ctx, "protection policy", p.CreatedBy); err != nil {
		return ProtectionPolicy{}, err
	}
	var superseded []string
	if err := tx.NewUpdate().Model((*ProtectionPolicy)(nil)).
		Set("status = ?", ProtectionSuperseded).Set("superseded_by = ?", p.ID).Set("superseded_at = ?", now).Set("updated_at = ?", now).
		Where("tenant_id = ?", p.TenantID).Where("status = ?", ProtectionActive).
		Returning("id").Scan(ctx, &superseded); err != nil {
		return ProtectionPolicy{}, fmt.Errorf("payroll.activate_protection_policy: supersede: %w", err)
	}
	var seq int64
	if err := tx.NewSelect().Model((*ProtectionPolicy)(nil)).ColumnExpr("coalesce(max(pp.activation_seq), 0) + 1").
		Where("pp.tenant_id = ?", p.TenantID).Scan(ctx, &seq); err != nil {
		return ProtectionPolicy{}, fmt.Errorf("payroll.activate_protection_policy: sequence: %w", err)
	}
	p.Status, p.ActivatedBy, p.ActivatedAt, p.ActivationSeq, p.UpdatedAt = to, &who, &now, &seq, now
	if err := updateRow(ctx, tx, &p, "pp", p.TenantID, "status", "activated_by", "activated_at", "activation_seq", "updated_at"); err != nil {
		return ProtectionPolicy{}, fmt.Errorf("payroll.activate_protection_policy: %w", err)
	}
	ev := protectionEvent(p)
	if len(superseded) > 0 {
		ev["supersededPolicyId"] = superseded[0]
	}
	return p, record(ctx, tx, "ActivateProtectionPolicy", "ProtectionPolicy", p.ID, "payroll.protection_policy_activated.v1", ev)
}

// EffectiveProtection is the protection a run of period applies: of the policies ever activated
// (ACTIVE or SUPERSEDED) whose effectiveFrom is not after period, the one activated last; with
// none, DefaultProtection. So a policy activated with a later effectiveFrom leaves the earlier
// periods to the one it superseded, and a policy activated later for an earlier effectiveFrom
// decides every period from then on. One query for the whole tenant, in a bun or a pgx transaction.
func EffectiveProtection(ctx context.Context, tx db.Writer, period string) (ProtectionTerms, error) {
	if err := CheckPeriod("period", period); err != nil {
		return ProtectionTerms{}, err
	}
	rows, err := db.Select[protectionTermsRow](ctx, tx, `SELECT id, share_numerator, share_denominator,
			minimum_net_santim::bigint AS minimum_net_santim
		FROM app.payroll_protection_policies
		WHERE tenant_id = ? AND status IN ('ACTIVE', 'SUPERSEDED') AND effective_from <= ?
		ORDER BY activation_seq DESC LIMIT 1`, tenancy.TenantID(ctx), period)
	if err != nil {
		return ProtectionTerms{}, fmt.Errorf("payroll.effective_protection: %w", err)
	}
	if len(rows) == 0 {
		return DefaultProtection, nil
	}
	p := rows[0]
	return ProtectionTerms{PolicyID: p.ID, ShareNumerator: p.ShareNumerator, ShareDenominator: p.ShareDenominator,
		MinimumNetSantim: p.MinimumNetSantim}, nil
}

type protectionTermsRow struct {
	ID               string `bun:"id" db:"id"`
	ShareNumerator   int64  `bun:"share_numerator" db:"share_numerator"`
	ShareDenominator int64  `bun:"share_denominator" db:"share_denominator"`
	MinimumNetSantim int64  `bun:"minimum_net_santim" db:"minimum_net_santim"`
}

func protectionEvent(p ProtectionPolicy) map[string]any {
	return map[string]any{"policyId": p.ID, "status": p.Status, "voluntaryShareNumerator": p.ShareNumerator,
		"voluntaryShareDenominator": p.ShareDenominator, "minimumNetSantim": p.MinimumNetSantim, "effectiveFrom": p.EffectiveFrom}
}
