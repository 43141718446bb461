package equb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
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

// Account is an account at a partner bank (HolderName the employer's record of it, "" when not
// known).
type Account struct {
	Partner, AccountNumber, HolderName string
}

// MoneyPlan is what a contribution or a payout saga needs: the group, cycle and member, the
// amount, the member's account (the contribution's source, the payout's destination), the
// cycle's escrow account and its ledger pool account.
type MoneyPlan struct {
	TenantID     string
	GroupID      string
	CycleID      string
	CycleNumber  int
	MembershipID string
	EmployeeID   string
	AmountSantim int64
	Member       Account
	Escrow       Account
	PoolAccount  string
	// Owner is the workflow id of the saga that already holds this contribution or payout ("" when
	// none does): the saga with that id goes on, any other is refused.
	Owner string
}

// cycleOfGroup reads the group's cycle: number 0 is the current (not PAID) one.
func cycleOfGroup(ctx context.Context, tx db.BunTx, groupID string, number int, lock bool) (Cycle, error) {
	var c Cycle
	q := tx.NewSelect().Model(&c).Where("c.tenant_id = ?", tenancy.TenantID(ctx)).Where("c.group_id = ?", groupID)
	if number == 0 {
		q = q.Where("c.status <> ?", CyclePaid)
	} else {
		q = q.Where("c.number = ?", number)
	}
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return Cycle{}, notFoundOr(err, RefusalError(CodeCycleNotOpen))
	}
	return c, nil
}

func activeBinding(ctx context.Context, tx db.BunTx, cycleID string) (Binding, error) {
	var b Binding
	if err := tx.NewSelect().Model(&b).Where("b.tenant_id = ?", tenancy.TenantID(ctx)).Where("b.cycle_id = ?", cycleID).
		Where("b.status = ?", BindingActive).Limit(1).Scan(ctx); err != nil {
		return Binding{}, notFoundOr(err, RefusalError(CodeEscrowNotActive))
	}
	return b, nil
}

func memberAccount(ctx context.Context, tx db.BunTx, employeeID string) (Account, error) {
	var a Account
	if err := tx.QueryRow(ctx, `SELECT payout_partner, payout_account_number, payout_holder_name FROM app.employees WHERE tenant_id = $1 AND id = $2`,
		tenancy.TenantID(ctx), employeeID).Scan(&a.Partner, &a.AccountNumber, &a.HolderName); err != nil {
		return Account{}, fmt.Errorf("equb.member_account: %w", err)
	}
	return a, nil
}

// LoadContributionPlan reads what the user's contribution to the group's OPEN cycle needs (the
// API's pre-check and the saga's first step). wfID is the asking saga's id. Errors:
// EQUB_GROUP_NOT_FOUND, EQUB_NOT_MEMBER, EQUB_CYCLE_NOT_OPEN, EQUB_ESCROW_NOT_ACTIVE,
// EQUB_ALREADY_CONTRIBUTED (another saga's contribution, PENDING or POSTED).
func LoadContributionPlan(ctx context.Context, tx db.BunTx, groupID, userID, wfID string) (MoneyPlan, error) {
	if _, err := GetGroup(ctx, tx, groupID); err != nil {
		return MoneyPlan{}, err
	}
	m, err := ActiveMember(ctx, tx, groupID, userID)
	if err != nil {
		return MoneyPlan{}, err
	}
	var own Contribution
	err = tx.NewSelect().Model(&own).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).Where("ct.workflow_id = ?", wfID).Scan(ctx)
	var c Cycle
	switch {
	case err == nil: // this saga's own contribution: its cycle, whatever has happened since
		if err := tx.NewSelect().Model(&c).Where("c.tenant_id = ?", own.TenantID).Where("c.id = ?", own.CycleID).Scan(ctx); err != nil {
			return MoneyPlan{}, fmt.Errorf("equb.load_contribution_plan: %w", err)
		}
	case errors.Is(err, sql.ErrNoRows):
		if c, err = cycleOfGroup(ctx, tx, groupID, 0, false); err != nil {
			return MoneyPlan{}, err
		}
		if c.Status != CycleOpen {
			return MoneyPlan{}, RefusalError(CodeCycleNotOpen)
		}
	default:
		return MoneyPlan{}, fmt.Errorf("equb.load_contribution_plan: %w", err)
	}
	b, err := activeBinding(ctx, tx, c.ID)
	if err != nil {
		return MoneyPlan{}, err
	}
	acct, err := memberAccount(ctx, tx, m.EmployeeID)
	if err != nil {
		return MoneyPlan{}, err
	}
	p := MoneyPlan{TenantID: c.TenantID, GroupID: groupID, CycleID: c.ID, CycleNumber: c.Number, MembershipID: m.ID, EmployeeID: m.EmployeeID,
		AmountSantim: c.ContributionSantim, Member: acct, Escrow: Account{Partner: b.Partner, AccountNumber: b.PartnerAccountID},
		PoolAccount: b.LedgerPoolAccountID}
	var held Contribution
	err = tx.NewSelect().Model(&held).Where("ct.tenant_id = ?", c.TenantID).Where("ct.cycle_id = ?", c.ID).
		Where("ct.membership_id = ?", m.ID).Where("ct.status <> ?", MoneyFailed).Scan(ctx)
	switch {
	case err == nil:
		p.Owner = held.WorkflowID
		if held.WorkflowID != wfID {
			return p, RefusalError(CodeAlreadyContributed)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return MoneyPlan{}, fmt.Errorf("equb.load_contribution_plan: %w", err)
	}
	return p, nil
}

// ClaimContribution records the saga's contribution PENDING with its pending pool posting
// (audited ContributeEqub, event equb.contribution_initiated.v1); the same saga again is a no-op.
// Errors: EQUB_ALREADY_CONTRIBUTED (another saga holds the member's contribution to the cycle:
// the database's index decides racing ones), EQUB_CYCLE_NOT_OPEN.
func ClaimContribution(ctx context.Context, tx db.BunTx, p MoneyPlan, wfID, ledgerTxID string, now time.Time) (Contribution, error) {
	var own Contribution
	err := tx.NewSelect().Model(&own).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).Where("ct.workflow_id = ?", wfID).Scan(ctx)
	if err == nil {
		return own, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Contribution{}, fmt.Errorf("equb.claim_contribution: %w", err)
	}
	c, err := cycleOfGroup(ctx, tx, p.GroupID, 0, true)
	if err != nil {
		return Contribution{}, err
	}
	if c.ID != p.CycleID || c.Status != CycleOpen {
		return Contribution{}, RefusalError(CodeCycleNotOpen)
	}
	ct := Contribution{ID: "eqt_" + identity.NewID(), TenantID: p.TenantID, GroupID: p.GroupID, CycleID: p.CycleID, MembershipID: p.MembershipID,
		AmountSantim: p.AmountSantim, Status: MoneyPending, WorkflowID: wfID, LedgerTxID: &ledgerTxID, CreatedAt: now, UpdatedAt: now}
	err = savepoint(ctx, tx, func() error {
		_, err := tx.NewInsert().Model(&ct).Exec(ctx)
		if uniqueViolation(err, "equb_contributions_one") {
			return RefusalError(CodeAlreadyContributed)
		}
		return err
	})
	if err != nil {
		return Contribution{}, err
	}
	return ct, record(ctx, tx, "ContributeEqub", "EqubContribution", ct.ID, "equb.contribution_initiated.v1", contributionEvent(ct))
}

// MarkContributionPosted moves the saga's contribution PENDING → POSTED once the transfer has
// settled and the pool posting is committed (audited EqubContributionPosted, events
// equb.bank_transfer_settled.v1 and equb.contribution_posted.v1); again is a no-op.
func MarkContributionPosted(ctx context.Context, tx db.BunTx, wfID, transferID string, now time.Time) (Contribution, error) {
	return settleContribution(ctx, tx, wfID, MoneyPosted, transferID, "", now)
}

// MarkContributionFailed moves the saga's contribution PENDING → FAILED with the bank's code
// (failContribution: the pool posting is voided, nothing moved; audited EqubContributionFailed,
// event equb.contribution_failed.v1); the member may contribute again with a new key.
func MarkContributionFailed(ctx context.Context, tx db.BunTx, wfID, code string, now time.Time) (Contribution, error) {
	return settleContribution(ctx, tx, wfID, MoneyFailed, "", code, now)
}

func settleContribution(ctx context.Context, tx db.BunTx, wfID, to, transferID, code string, now time.Time) (Contribution, error) {
	var ct Contribution
	if err := tx.NewSelect().Model(&ct).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).Where("ct.workflow_id = ?", wfID).For("UPDATE").Scan(ctx); err != nil {
		return Contribution{}, notFoundOr(err, RefusalError(CodeCycleNotOpen))
	}
	if ct.Status == to {
		return ct, nil
	}
	if ct.Status != MoneyPending {
		return Contribution{}, fmt.Errorf("equb.settle_contribution: %s is %s, not PENDING", ct.ID, ct.Status)
	}
	ct.Status, ct.UpdatedAt = to, now
	if transferID != "" {
		ct.TransferID = &transferID
	}
	if code != "" {
		ct.FailureCode = &code
	}
	if _, err := tx.NewUpdate().Model(&ct).Column("status", "transfer_id", "failure_code", "updated_at").WherePK().Exec(ctx); err != nil {
		return Contribution{}, fmt.Errorf("equb.settle_contribution: %w", err)
	}
	ev := contributionEvent(ct)
	if to == MoneyFailed {
		return ct, record(ctx, tx, "EqubContributionFailed", "EqubContribution", ct.ID, "equb.contribution_failed.v1", ev)
	}
	if _, err := outbox.Write(ctx, tx, "equb.bank_transfer_settled.v1", map[string]any{"domain": "EQUB", "kind": "contribution",
		"contributionId": ct.ID, "cycleId": ct.CycleID, "amountSantim": ct.AmountSantim, "transferId": transferID}); err != nil {
		return Contribution{}, err
	}
	return ct, record(ctx, tx, "EqubContributionPosted", "EqubContribution", ct.ID, "equb.contribution_posted.v1", ev)
}

func contributionEvent(ct Contribution) map[string]any {
	ev := map[string]any{"contributionId": ct.ID, "groupId": ct.GroupID, "cycleId": ct.CycleID, "membershipId": ct.MembershipID,
		"amountSantim": ct.AmountSantim, "status": ct.Status, "workflowId": ct.WorkflowID}
	if ct.FailureCode != nil {
		ev["failureCode"] = *ct.FailureCode
	}
	return ev
}

// LoadPayoutPlan reads what the payout of the group's cycle number needs (the API's pre-check and
// the payout saga's first step): every contribution the cycle waits for is POSTED (none at the
// bank), and neither the cycle nor its recipient has a payout that is not FAILED — unless it is
// this saga's (wfID). The amount is what the pool holds: the cycle's POSTED contributions.
// Errors: EQUB_GROUP_NOT_FOUND, EQUB_CYCLE_NOT_FOUND, EQUB_CYCLE_NOT_OPEN (already PAID),
// EQUB_ESCROW_NOT_ACTIVE, EQUB_CONTRIBUTIONS_OUTSTANDING (details.postedCount, membersDue),
// EQUB_ALREADY_PAID_OUT.
func LoadPayoutPlan(ctx context.Context, tx db.BunTx, groupID string, number int, wfID string) (MoneyPlan, error) {
	if _, err := GetGroup(ctx, tx, groupID); err != nil {
		return MoneyPlan{}, err
	}
	c, err := cycleOfGroup(ctx, tx, groupID, number, false)
	if err != nil {
		return MoneyPlan{}, RefusalError(CodeCycleNotFound)
	}
	var held Payout
	err = tx.NewSelect().Model(&held).Where("po.tenant_id = ?", c.TenantID).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("po.cycle_id = ?", c.ID).WhereOr("(po.group_id = ? AND po.membership_id = ?)", groupID, c.RecipientID)
		}).Where("po.status <> ?", MoneyFailed).Limit(1).Scan(ctx)
	owner := ""
	switch {
	case err == nil:
		owner = held.WorkflowID
	case !errors.Is(err, sql.ErrNoRows):
		return MoneyPlan{}, fmt.Errorf("equb.load_payout_plan: %w", err)
	}
	if owner != "" && owner != wfID || owner == "" && c.Status == CyclePaid {
		return MoneyPlan{Owner: owner}, RefusalError(CodeAlreadyPaidOut)
	}
	// The binding: ACTIVE for a new payout; this saga's own payout reads it in any state (it is
	// CLOSED once the payout has settled).
	var b Binding
	if err := tx.NewSelect().Model(&b).Where("b.tenant_id = ?", c.TenantID).Where("b.cycle_id = ?", c.ID).Limit(1).Scan(ctx); err != nil {
		return MoneyPlan{}, notFoundOr(err, RefusalError(CodeEscrowNotActive))
	}
	if owner == "" && b.Status != BindingActive {
		return MoneyPlan{}, RefusalError(CodeEscrowNotActive)
	}
	var m Membership
	if err := tx.NewSelect().Model(&m).Where("m.tenant_id = ?", c.TenantID).Where("m.id = ?", c.RecipientID).Scan(ctx); err != nil {
		return MoneyPlan{}, fmt.Errorf("equb.load_payout_plan: %w", err)
	}
	acct, err := memberAccount(ctx, tx, m.EmployeeID)
	if err != nil {
		return MoneyPlan{}, err
	}
	var posted, open int
	var pool int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'POSTED'), count(*) FILTER (WHERE status = 'PENDING'),
		COALESCE(sum(amount_santim) FILTER (WHERE status = 'POSTED'), 0)::bigint
		FROM app.equb_contributions WHERE tenant_id = $1 AND cycle_id = $2`, c.TenantID, c.ID).Scan(&posted, &open, &pool); err != nil {
		return MoneyPlan{}, fmt.Errorf("equb.load_payout_plan: %w", err)
	}
	p := MoneyPlan{TenantID: c.TenantID, GroupID: groupID, CycleID: c.ID, CycleNumber: c.Number, MembershipID: m.ID, EmployeeID: m.EmployeeID,
		AmountSantim: pool, Member: acct, Escrow: Account{Partner: b.Partner, AccountNumber: b.PartnerAccountID}, PoolAccount: b.LedgerPoolAccountID,
		Owner: owner}
	if owner != "" { // this saga's own payout
		p.AmountSantim = held.AmountSantim
		return p, nil
	}
	if open > 0 || posted < c.MembersDue || pool == 0 {
		r := RefusalError(CodeContributionsPending)
		r.Details = map[string]any{"postedCount": posted, "membersDue": c.MembersDue}
		return p, r
	}
	return p, nil
}

// ClaimPayout records the saga's payout PENDING with its pending pool posting and the cycle
// PAYING (audited PayOutEqub, event equb.payout_initiated.v1); the same saga again is a no-op.
// Errors: EQUB_ALREADY_PAID_OUT (the database's indexes: one payout per cycle, one per member of
// the group).
func ClaimPayout(ctx context.Context, tx db.BunTx, p MoneyPlan, wfID, ledgerTxID string, now time.Time) (Payout, error) {
	var own Payout
	err := tx.NewSelect().Model(&own).Where("po.tenant_id = ?", tenancy.TenantID(ctx)).Where("po.workflow_id = ?", wfID).Scan(ctx)
	if err == nil {
		return own, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Payout{}, fmt.Errorf("equb.claim_payout: %w", err)
	}
	c, err := cycleOfGroup(ctx, tx, p.GroupID, p.CycleNumber, true)
	if err != nil {
		return Payout{}, err
	}
	if c.Status == CyclePaid {
		return Payout{}, RefusalError(CodeAlreadyPaidOut)
	}
	po := Payout{ID: "eqp_" + identity.NewID(), TenantID: p.TenantID, GroupID: p.GroupID, CycleID: p.CycleID, MembershipID: p.MembershipID,
		AmountSantim: p.AmountSantim, Status: MoneyPending, WorkflowID: wfID, LedgerTxID: &ledgerTxID, CreatedAt: now, UpdatedAt: now}
	err = savepoint(ctx, tx, func() error {
		_, err := tx.NewInsert().Model(&po).Exec(ctx)
		if uniqueViolation(err, "equb_payouts_cycle") || uniqueViolation(err, "equb_payouts_member") {
			return RefusalError(CodeAlreadyPaidOut)
		}
		return err
	})
	if err != nil {
		return Payout{}, err
	}
	if _, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET status = 'PAYING' WHERE tenant_id = $1 AND id = $2`, c.TenantID, c.ID); err != nil {
		return Payout{}, fmt.Errorf("equb.claim_payout: %w", err)
	}
	return po, record(ctx, tx, "PayOutEqub", "EqubPayout", po.ID, "equb.payout_initiated.v1", payoutEvent(po))
}

// MarkPayoutPaid moves the saga's payout PENDING → PAID and its cycle PAID (the binding CLOSED;
// the group COMPLETED after its last cycle): audited EqubPayoutPaid, events
// equb.bank_transfer_settled.v1 and equb.payout_paid.v1; again is a no-op.
func MarkPayoutPaid(ctx context.Context, tx db.BunTx, wfID, transferID string, now time.Time) (Payout, error) {
	return settlePayout(ctx, tx, wfID, MoneyPaid, transferID, "", now)
}

// MarkPayoutFailed moves the saga's payout PENDING → FAILED with the bank's code and its cycle
// back to OPEN (the posting voided: nothing moved); a new key may pay it again.
func MarkPayoutFailed(ctx context.Context, tx db.BunTx, wfID, code string, now time.Time) (Payout, error) {
	return settlePayout(ctx, tx, wfID, MoneyFailed, "", code, now)
}

func settlePayout(ctx context.Context, tx db.BunTx, wfID, to, transferID, code string, now time.Time) (Payout, error) {
	var po Payout
	if err := tx.NewSelect().Model(&po).Where("po.tenant_id = ?", tenancy.TenantID(ctx)).Where("po.workflow_id = ?", wfID).For("UPDATE").Scan(ctx); err != nil {
		return Payout{}, notFoundOr(err, RefusalError(CodeCycleNotFound))
	}
	if po.Status == to {
		return po, nil
	}
	if po.Status != MoneyPending {
		return Payout{}, fmt.Errorf("equb.settle_payout: %s is %s, not PENDING", po.ID, po.Status)
	}
	po.Status, po.UpdatedAt = to, now
	if transferID != "" {
		po.TransferID = &transferID
	}
	if code != "" {
		po.FailureCode = &code
	}
	if _, err := tx.NewUpdate().Model(&po).Column("status", "transfer_id", "failure_code", "updated_at").WherePK().Exec(ctx); err != nil {
		return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
	}
	ev := payoutEvent(po)
	if to == MoneyFailed {
		if _, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET status = 'OPEN' WHERE tenant_id = $1 AND id = $2`, po.TenantID, po.CycleID); err != nil {
			return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
		}
		return po, record(ctx, tx, "EqubPayoutFailed", "EqubPayout", po.ID, "equb.payout_failed.v1", ev)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET status = 'PAID', paid_at = $3 WHERE tenant_id = $1 AND id = $2`, po.TenantID, po.CycleID, now); err != nil {
		return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.equb_escrow_bindings SET status = 'CLOSED' WHERE tenant_id = $1 AND cycle_id = $2`, po.TenantID, po.CycleID); err != nil {
		return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.equb_groups g SET status = 'COMPLETED', updated_at = $3 WHERE g.tenant_id = $1 AND g.id = $2
		AND (SELECT count(*) FROM app.equb_cycles c WHERE c.tenant_id = g.tenant_id AND c.group_id = g.id AND c.status = 'PAID') >= g.cycles_total`,
		po.TenantID, po.GroupID, now); err != nil {
		return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
	}
	if _, err := outbox.Write(ctx, tx, "equb.bank_transfer_settled.v1", map[string]any{"domain": "EQUB", "kind": "payout",
		"payoutId": po.ID, "cycleId": po.CycleID, "amountSantim": po.AmountSantim, "transferId": transferID}); err != nil {
		return Payout{}, err
	}
	return po, record(ctx, tx, "EqubPayoutPaid", "EqubPayout", po.ID, "equb.payout_paid.v1", ev)
}

func payoutEvent(po Payout) map[string]any {
	ev := map[string]any{"payoutId": po.ID, "groupId": po.GroupID, "cycleId": po.CycleID, "membershipId": po.MembershipID,
		"amountSantim": po.AmountSantim, "status": po.Status, "workflowId": po.WorkflowID}
	if po.FailureCode != nil {
		ev["failureCode"] = *po.FailureCode
	}
	return ev
}
