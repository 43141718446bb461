package equb

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// The default rule (issue 28: a payout "only when every contribution of the cycle is settled, or
// the group's default rule applies, recorded"). A group's rule is WAIT (the payout waits for every
// contribution the cycle is due) or PAY_COLLECTED: once the cycle's due time (opened +
// contributionDueHours) has passed, its payout pays what the pool holds — the POSTED
// contributions, so a missing one makes the pot smaller — and every member without a POSTED
// contribution is recorded in default for the cycle's contribution (app.equb_defaults, OWED), in
// the payout's claim transaction, audited EqubMemberDefaulted with event
// equb.member_defaulted.v1. If that payout then fails at the bank the cycle is OPEN again and its
// defaults are VOIDED: the member may still contribute. Under either rule a contribution still at
// the bank holds the payout back, and a cycle nobody has contributed to pays nothing.

// Default is a member's default on a cycle.
type Default struct {
	bun.BaseModel `bun:"table:app.equb_defaults,alias:d"`

	ID           string    `bun:"id,pk"`
	TenantID     string    `bun:"tenant_id"`
	GroupID      string    `bun:"group_id"`
	CycleID      string    `bun:"cycle_id"`
	MembershipID string    `bun:"membership_id"`
	PayoutID     string    `bun:"payout_id"`
	AmountSantim int64     `bun:"amount_santim"`
	Status       string    `bun:"status"`
	CreatedAt    time.Time `bun:"created_at"`
	UpdatedAt    time.Time `bun:"updated_at"`
}

// CycleMoney is where a cycle's contributions stand: how many are POSTED and PENDING, the pool
// (the POSTED sum), and the members due at the cycle (ACTIVE, Due: joined before it opened) who
// have no POSTED contribution to it.
type CycleMoney struct {
	Posted, Pending int
	PoolSantim      int64
	Missing         []string // membership ids, in join order
}

func cycleMoney(ctx context.Context, tx db.BunTx, c Cycle) (CycleMoney, error) {
	var m CycleMoney
	if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'POSTED'), count(*) FILTER (WHERE status = 'PENDING'),
		COALESCE(sum(amount_santim) FILTER (WHERE status = 'POSTED'), 0)::bigint
		FROM app.equb_contributions WHERE tenant_id = $1 AND cycle_id = $2`, c.TenantID, c.ID).Scan(&m.Posted, &m.Pending, &m.PoolSantim); err != nil {
		return CycleMoney{}, fmt.Errorf("equb.cycle_money: %w", err)
	}
	if err := tx.NewSelect().Table("app.equb_memberships").Column("id").
		Where("tenant_id = ?", c.TenantID).Where("group_id = ?", c.GroupID).Where("status = ?", MemberActive).Where("first_cycle <= ?", c.Number).
		Where("NOT EXISTS (SELECT 1 FROM app.equb_contributions ct WHERE ct.tenant_id = equb_memberships.tenant_id AND ct.cycle_id = ? AND ct.membership_id = equb_memberships.id AND ct.status = 'POSTED')", c.ID).
		OrderExpr("joined_at, id").Scan(ctx, &m.Missing); err != nil {
		return CycleMoney{}, fmt.Errorf("equb.cycle_money: %w", err)
	}
	return m, nil
}

// PayoutDecision is what the group's rule makes of a cycle's money at an instant: Allowed (the
// payout may go, paying the pool), and Defaulters, the members it records in default (only under
// PAY_COLLECTED once the cycle is due).
type PayoutDecision struct {
	Allowed    bool
	Defaulters []string
}

// DecidePayout applies rule to the cycle's money at now (no I/O). Every contribution due is in
// when the POSTED ones reach membersDue, or when nobody due is missing one (a member who left
// with their settlement is no longer due).
func DecidePayout(rule string, dueAt, now time.Time, membersDue int, m CycleMoney) PayoutDecision {
	switch {
	case m.Pending > 0 || m.PoolSantim <= 0:
		return PayoutDecision{}
	case m.Posted >= membersDue || len(m.Missing) == 0:
		return PayoutDecision{Allowed: true}
	case rule == RulePayCollected && !now.Before(dueAt):
		return PayoutDecision{Allowed: true, Defaulters: m.Missing}
	}
	return PayoutDecision{}
}

// outstanding is the refusal of a payout the rule does not allow yet.
func outstanding(g Group, c Cycle, m CycleMoney) error {
	r := RefusalError(CodeContributionsPending)
	r.Details = map[string]any{"postedCount": m.Posted, "pendingCount": m.Pending, "membersDue": c.MembersDue,
		"missingCount": len(m.Missing), "defaultRule": g.DefaultRule, "dueAt": c.DueAt.UTC().Format(time.RFC3339)}
	return r
}

// recordDefaults records each defaulter in default for the cycle's contribution under the payout.
func recordDefaults(ctx context.Context, tx db.BunTx, c Cycle, po Payout, defaulters []string, now time.Time) error {
	for _, mid := range defaulters {
		d := Default{ID: "eqd_" + identity.NewID(), TenantID: c.TenantID, GroupID: c.GroupID, CycleID: c.ID, MembershipID: mid,
			PayoutID: po.ID, AmountSantim: c.ContributionSantim, Status: DefaultOwed, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.NewInsert().Model(&d).Exec(ctx); err != nil {
			return fmt.Errorf("equb.record_defaults: %w", err)
		}
		if err := record(ctx, tx, "EqubMemberDefaulted", "EqubMembership", mid, "equb.member_defaulted.v1", map[string]any{
			"defaultId": d.ID, "groupId": d.GroupID, "cycleId": d.CycleID, "cycleNumber": c.Number, "membershipId": mid,
			"payoutId": po.ID, "owedSantim": d.AmountSantim, "dueAt": c.DueAt.UTC(), "rule": RulePayCollected}); err != nil {
			return err
		}
	}
	return nil
}

// voidDefaults voids the defaults recorded under a payout that failed (the cycle is OPEN again).
func voidDefaults(ctx context.Context, tx db.BunTx, po Payout, now time.Time) (int64, error) {
	res, err := tx.NewUpdate().Table("app.equb_defaults").Set("status = ?", DefaultVoided).Set("updated_at = ?", now).
		Where("tenant_id = ?", po.TenantID).Where("payout_id = ?", po.ID).Where("status = ?", DefaultOwed).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("equb.void_defaults: %w", err)
	}
	return res.RowsAffected()
}
