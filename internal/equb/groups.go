package equb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/ledger/chart"
)

// A group is FORMING while members join; its first cycle fixes the payout order (positions 1..n:
// join order, or the lottery drawn from a seed recorded then) and makes it RUNNING; the payout of
// its last cycle makes it COMPLETED. Cycle n pays the pot to the member at position n; one cycle
// is not PAID at a time. Joining and leaving once the first cycle has started need the group's
// allowChangesAfterStart; a member who leaves then with money contributed or received has the
// balance recorded on the membership (settlementSantim) and must acknowledge it.

// Group states, payout orders, membership, cycle, binding, contribution and payout states.
const (
	GroupForming   = "FORMING"
	GroupRunning   = "RUNNING"
	GroupCompleted = "COMPLETED"

	OrderFixed   = "FIXED"
	OrderLottery = "LOTTERY"

	// The default rules (what a cycle's payout does about a member's missing contribution):
	// WAIT for every contribution; PAY_COLLECTED, once the cycle is due, pays what was collected
	// and records the members without a POSTED contribution in default (internal/equb/defaults.go).
	RuleWait         = "WAIT"
	RulePayCollected = "PAY_COLLECTED"

	DefaultOwed   = "OWED"
	DefaultVoided = "VOIDED"

	MemberActive = "ACTIVE"
	MemberLeft   = "LEFT"

	CycleOpen   = "OPEN"
	CyclePaying = "PAYING"
	CyclePaid   = "PAID"

	BindingActive = "ACTIVE"

	MoneyPending = "PENDING"
	MoneyPosted  = "POSTED" // a contribution settled
	MoneyPaid    = "PAID"   // a payout settled
	MoneyFailed  = "FAILED"
)

// Bounds (the database checks them again).
const (
	MaxName                     = 128
	MinContributionSantim int64 = 100         // 1 ETB
	MaxContributionSantim int64 = 100_000_000 // 1 million ETB
	MinMembers                  = 2
	MaxMembers                  = 50
	// A cycle is due this many hours after it opens (default a week, at most 90 days).
	MinDueHours     = 1
	MaxDueHours     = 2160
	DefaultDueHours = 168
)

// Group is one stored group.
type Group struct {
	bun.BaseModel `bun:"table:app.equb_groups,alias:g"`

	ID                     string    `bun:"id,pk"`
	TenantID               string    `bun:"tenant_id"`
	Name                   string    `bun:"name"`
	ContributionSantim     int64     `bun:"contribution_santim"`
	MaxMembers             int       `bun:"max_members"`
	PayoutOrder            string    `bun:"payout_order"`
	AllowChangesAfterStart bool      `bun:"allow_changes_after_start"`
	EscrowPartner          string    `bun:"escrow_partner"`
	EscrowAccountNumber    string    `bun:"escrow_account_number"`
	Status                 string    `bun:"status"`
	LotterySeed            *string   `bun:"lottery_seed"`
	CyclesTotal            int       `bun:"cycles_total"`
	DefaultRule            string    `bun:"default_rule"`
	ContributionDueHours   int       `bun:"contribution_due_hours"`
	CreatedBy              string    `bun:"created_by"`
	CreatedAt              time.Time `bun:"created_at"`
	UpdatedAt              time.Time `bun:"updated_at"`
}

// Membership is one member of a group.
type Membership struct {
	bun.BaseModel `bun:"table:app.equb_memberships,alias:m"`

	ID               string     `bun:"id,pk"`
	TenantID         string     `bun:"tenant_id"`
	GroupID          string     `bun:"group_id"`
	EmployeeID       string     `bun:"employee_id"`
	UserID           string     `bun:"user_id"`
	Status           string     `bun:"status"`
	Position         *int       `bun:"position"`
	JoinedAt         time.Time  `bun:"joined_at"`
	LeftAt           *time.Time `bun:"left_at"`
	SettlementSantim *int64     `bun:"settlement_santim"`
	// FirstCycle is the first cycle the member owes a contribution to (Due): 1 in a group that
	// was FORMING when they joined, else the cycle after the group's last when they joined.
	FirstCycle int `bun:"first_cycle"`
	// The member's account: their payout account when they joined, or the one they took for the
	// group since (TakeAccount). Contributions come from it and the pot goes to it; empty only on
	// memberships that ended before memberships kept it.
	PayoutPartner       string `bun:"payout_partner,nullzero"`
	PayoutAccountNumber string `bun:"payout_account_number,nullzero"`
	PayoutHolderName    string `bun:"payout_holder_name,nullzero"`
}

// account is the member's account (the employee's payout account on a membership that does not
// keep one).
func (m Membership) account(ctx context.Context, tx db.BunTx) (Account, error) {
	if m.PayoutAccountNumber != "" {
		return Account{Partner: m.PayoutPartner, AccountNumber: m.PayoutAccountNumber, HolderName: m.PayoutHolderName}, nil
	}
	return memberAccount(ctx, tx, m.EmployeeID)
}

// Due reports whether the member owes a contribution to cycle number n.
func (m Membership) Due(n int) bool { return m.FirstCycle <= n }

// Cycle is one cycle of a group.
type Cycle struct {
	bun.BaseModel `bun:"table:app.equb_cycles,alias:c"`

	ID                 string     `bun:"id,pk"`
	TenantID           string     `bun:"tenant_id"`
	GroupID            string     `bun:"group_id"`
	Number             int        `bun:"number"`
	RecipientID        string     `bun:"recipient_id"`
	ContributionSantim int64      `bun:"contribution_santim"`
	MembersDue         int        `bun:"members_due"`
	Status             string     `bun:"status"`
	OpenedBy           string     `bun:"opened_by"`
	OpenedAt           time.Time  `bun:"opened_at"`
	DueAt              time.Time  `bun:"due_at"` // contributions are due by then (the default rule's time)
	PaidAt             *time.Time `bun:"paid_at"`
}

// Binding is the spec's PartnerBankEscrowBinding of one cycle.
type Binding struct {
	bun.BaseModel `bun:"table:app.equb_escrow_bindings,alias:b"`

	ID                  string    `bun:"id,pk"`
	TenantID            string    `bun:"tenant_id"`
	CycleID             string    `bun:"cycle_id"`
	Partner             string    `bun:"partner"`
	PartnerAccountID    string    `bun:"partner_account_id"`
	LedgerPoolAccountID string    `bun:"ledger_pool_account_id"`
	Status              string    `bun:"status"`
	VerifiedAt          time.Time `bun:"verified_at"`
}

// GroupInput is what an organizer states of a new group.
type GroupInput struct {
	Name                   string
	ContributionSantim     int64
	MaxMembers             int
	PayoutOrder            string
	AllowChangesAfterStart bool
	EscrowPartner          string
	EscrowAccountNumber    string
	DefaultRule            string // "" is WAIT
	ContributionDueHours   int    // 0 is DefaultDueHours
}

// withDefaults fills the optional fields.
func (in GroupInput) withDefaults() GroupInput {
	if in.DefaultRule == "" {
		in.DefaultRule = RuleWait
	}
	if in.ContributionDueHours == 0 {
		in.ContributionDueHours = DefaultDueHours
	}
	return in
}

// Check validates the input as a whole (field errors: the caller's 400).
func (in GroupInput) Check() error {
	in = in.withDefaults()
	if err := field.Name("name", in.Name); err != nil {
		return err
	}
	switch {
	case len(in.Name) > MaxName:
		return &field.Error{Field: "name", Problem: fmt.Sprintf("must be at most %d bytes", MaxName)}
	case strings.TrimSpace(in.Name) != in.Name:
		return &field.Error{Field: "name", Problem: "must not start or end with spaces"}
	case in.ContributionSantim < MinContributionSantim || in.ContributionSantim > MaxContributionSantim:
		return &field.Error{Field: "contributionSantim", Problem: fmt.Sprintf("must be from %d to %d", MinContributionSantim, MaxContributionSantim)}
	case in.MaxMembers < MinMembers || in.MaxMembers > MaxMembers:
		return &field.Error{Field: "maxMembers", Problem: fmt.Sprintf("must be from %d to %d", MinMembers, MaxMembers)}
	case in.PayoutOrder != OrderFixed && in.PayoutOrder != OrderLottery:
		return &field.Error{Field: "payoutOrder", Problem: "must be FIXED or LOTTERY"}
	case in.DefaultRule != RuleWait && in.DefaultRule != RulePayCollected:
		return &field.Error{Field: "defaultRule", Problem: "must be WAIT or PAY_COLLECTED"}
	case in.ContributionDueHours < MinDueHours || in.ContributionDueHours > MaxDueHours:
		return &field.Error{Field: "contributionDueHours", Problem: fmt.Sprintf("must be from %d to %d", MinDueHours, MaxDueHours)}
	}
	return nil
}

// CreateGroup adds a FORMING group of the context's organization (audited CreateEqubGroup, event
// equb.group_created.v1). The escrow account is the caller's to have verified at the partner
// (the API's account lookup) before this is called.
func CreateGroup(ctx context.Context, tx db.BunTx, in GroupInput, now time.Time) (Group, error) {
	if err := in.Check(); err != nil {
		return Group{}, err
	}
	in = in.withDefaults()
	g := Group{ID: "equb_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), Name: in.Name, ContributionSantim: in.ContributionSantim,
		MaxMembers: in.MaxMembers, PayoutOrder: in.PayoutOrder, AllowChangesAfterStart: in.AllowChangesAfterStart,
		EscrowPartner: in.EscrowPartner, EscrowAccountNumber: in.EscrowAccountNumber, Status: GroupForming,
		DefaultRule: in.DefaultRule, ContributionDueHours: in.ContributionDueHours,
		CreatedBy: actor(ctx), CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(&g).Exec(ctx); err != nil {
		return Group{}, fmt.Errorf("equb.create_group: %w", err)
	}
	return g, record(ctx, tx, "CreateEqubGroup", "EqubGroup", g.ID, "equb.group_created.v1", groupEvent(g))
}

// GetGroup reads one group of the context's organization. Errors: EQUB_GROUP_NOT_FOUND.
func GetGroup(ctx context.Context, tx db.BunTx, id string) (Group, error) {
	return getGroup(ctx, tx, id, false)
}

func getGroup(ctx context.Context, tx db.BunTx, id string, lock bool) (Group, error) {
	var g Group
	q := tx.NewSelect().Model(&g).Where("g.tenant_id = ?", tenancy.TenantID(ctx)).Where("g.id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return Group{}, db.NotFoundOr(err, RefusalError(CodeGroupNotFound))
	}
	return g, nil
}

// ListGroups lists the context's organization's groups by id; userID, when set, keeps the groups
// that user is an ACTIVE member of.
func ListGroups(ctx context.Context, tx db.BunTx, userID string, p db.Page) ([]Group, error) {
	var out []Group
	q := tx.NewSelect().Model(&out).Where("g.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("g.id").Limit(p.Rows())
	if userID != "" {
		q = q.Where("EXISTS (SELECT 1 FROM app.equb_memberships m WHERE m.tenant_id = g.tenant_id AND m.group_id = g.id AND m.user_id = ? AND m.status = ?)", userID, MemberActive)
	}
	if p.After != "" {
		q = q.Where("g.id > ?", p.After)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("equb.list_groups: %w", err)
	}
	return out, nil
}

// Members lists a group's members (those who left too) in join order.
func Members(ctx context.Context, tx db.BunTx, groupID string) ([]Membership, error) {
	var out []Membership
	if err := tx.NewSelect().Model(&out).Where("m.tenant_id = ?", tenancy.TenantID(ctx)).Where("m.group_id = ?", groupID).
		OrderExpr("m.joined_at, m.id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("equb.members: %w", err)
	}
	return out, nil
}

// ActiveMember is the user's ACTIVE membership of the group. Errors: EQUB_NOT_MEMBER.
func ActiveMember(ctx context.Context, tx db.BunTx, groupID, userID string) (Membership, error) {
	var m Membership
	if err := tx.NewSelect().Model(&m).Where("m.tenant_id = ?", tenancy.TenantID(ctx)).Where("m.group_id = ?", groupID).
		Where("m.user_id = ?", userID).Where("m.status = ?", MemberActive).Scan(ctx); err != nil {
		return Membership{}, db.NotFoundOr(err, RefusalError(CodeNotMember))
	}
	return m, nil
}

// Join makes the employee (linked to userID) an ACTIVE member (audited JoinEqubGroup, event
// equb.member_joined.v1). A RUNNING group takes them only when it allows changes after start:
// they are paid last (the next position, so never once the group has MaxMembers turns) and owe
// contributions from the next cycle on (FirstCycle). Errors: EQUB_GROUP_NOT_FOUND,
// EQUB_EMPLOYEE_NOT_ACTIVE, EQUB_ALREADY_MEMBER, EQUB_GROUP_FULL, EQUB_CHANGES_LOCKED,
// EQUB_GROUP_COMPLETED, EQUB_REJOIN_NOT_ALLOWED (checkRejoin).
func Join(ctx context.Context, tx db.BunTx, groupID, employeeID, userID string, now time.Time) (Membership, error) {
	g, err := getGroup(ctx, tx, groupID, true)
	if err != nil {
		return Membership{}, err
	}
	// Locked for share until tx ends: an employee transfer (internal/employeetransfer) locks the
	// row FOR UPDATE, so a join either commits before it (and the transfer handles the
	// membership) or reads the employment it ended.
	var status string
	var acct Account
	err = tx.QueryRow(ctx, `SELECT status, payout_partner, payout_account_number, payout_holder_name FROM app.employees
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR SHARE`,
		g.TenantID, employeeID).Scan(&status, &acct.Partner, &acct.AccountNumber, &acct.HolderName)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && status != "ACTIVE" {
		return Membership{}, RefusalError(CodeEmployeeNotActive)
	}
	if err != nil {
		return Membership{}, fmt.Errorf("equb.join: %w", err)
	}
	switch {
	case g.Status == GroupCompleted:
		return Membership{}, RefusalError(CodeGroupCompleted)
	case g.Status == GroupRunning && !g.AllowChangesAfterStart:
		return Membership{}, RefusalError(CodeChangesLocked)
	}
	if _, err := ActiveMember(ctx, tx, groupID, userID); err == nil {
		return Membership{}, RefusalError(CodeAlreadyMember)
	}
	if err := checkRejoin(ctx, tx, g, employeeID); err != nil {
		return Membership{}, err
	}
	n, err := activeCount(ctx, tx, groupID)
	if err != nil {
		return Membership{}, err
	}
	if n >= g.MaxMembers {
		return Membership{}, RefusalError(CodeGroupFull)
	}
	m := Membership{ID: "eqm_" + identity.NewID(), TenantID: g.TenantID, GroupID: g.ID, EmployeeID: employeeID, UserID: userID,
		Status: MemberActive, JoinedAt: now, FirstCycle: 1, PayoutPartner: acct.Partner, PayoutAccountNumber: acct.AccountNumber,
		PayoutHolderName: acct.HolderName}
	if g.Status == GroupRunning {
		// A turn after the last: the group's turns are bounded as its members are (members who
		// were paid and left keep theirs).
		if g.CyclesTotal >= MaxMembers {
			return Membership{}, RefusalError(CodeGroupFull)
		}
		// The group row's lock (held) orders this against opening a cycle: the cycle open now, if
		// any, did not count them; they owe from the next one.
		last, err := lastCycle(ctx, tx, g)
		if err != nil {
			return Membership{}, err
		}
		m.FirstCycle = last + 1
		pos := g.CyclesTotal + 1
		m.Position = &pos
		g.CyclesTotal, g.UpdatedAt = pos, now
		if _, err := tx.NewUpdate().Model(&g).Column("cycles_total", "updated_at").WherePK().Exec(ctx); err != nil {
			return Membership{}, fmt.Errorf("equb.join: %w", err)
		}
	}
	err = savepoint(ctx, tx, func() error {
		_, err := tx.NewInsert().Model(&m).Exec(ctx)
		if uniqueViolation(err, "equb_memberships_active") {
			return RefusalError(CodeAlreadyMember)
		}
		return err
	})
	if err != nil {
		return Membership{}, err
	}
	return m, record(ctx, tx, "JoinEqubGroup", "EqubGroup", g.ID, "equb.member_joined.v1", memberEvent(m))
}

func activeCount(ctx context.Context, tx db.BunTx, groupID string) (int, error) {
	n, err := tx.NewSelect().Model((*Membership)(nil)).Where("m.tenant_id = ?", tenancy.TenantID(ctx)).
		Where("m.group_id = ?", groupID).Where("m.status = ?", MemberActive).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("equb.active_count: %w", err)
	}
	return int(n), nil
}

// Balance is what a member has contributed (POSTED), received (PAID) and owes for cycles they
// defaulted on (OWED defaults) in a group, and what is still at the bank.
type Balance struct {
	ContributedSantim, ReceivedSantim, OwedSantim int64
	InFlight                                      int
}

// Settlement is what the group owes the member (> 0) or the member owes the group (< 0).
func (b Balance) Settlement() int64 { return b.ContributedSantim - b.ReceivedSantim - b.OwedSantim }

// MemberBalance reads the membership's balance.
func MemberBalance(ctx context.Context, tx db.BunTx, membershipID string) (Balance, error) {
	var b Balance
	err := tx.QueryRow(ctx, `
		SELECT COALESCE((SELECT sum(amount_santim) FROM app.equb_contributions WHERE tenant_id = $1 AND membership_id = $2 AND status = 'POSTED'), 0)::bigint,
		       COALESCE((SELECT sum(amount_santim) FROM app.equb_payouts WHERE tenant_id = $1 AND membership_id = $2 AND status = 'PAID'), 0)::bigint,
		       COALESCE((SELECT sum(amount_santim) FROM app.equb_defaults WHERE tenant_id = $1 AND membership_id = $2 AND status = 'OWED'), 0)::bigint,
		       (SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1 AND membership_id = $2 AND status = 'PENDING')
		     + (SELECT count(*) FROM app.equb_payouts WHERE tenant_id = $1 AND membership_id = $2 AND status = 'PENDING')`,
		tenancy.TenantID(ctx), membershipID).Scan(&b.ContributedSantim, &b.ReceivedSantim, &b.OwedSantim, &b.InFlight)
	if err != nil {
		return Balance{}, fmt.Errorf("equb.member_balance: %w", err)
	}
	return b, nil
}

// checkRejoin refuses EQUB_REJOIN_NOT_ALLOWED to an employee who left the group owing or owed
// (a settlement other than 0, OWED defaults) or after a payout to them was made or started: that
// membership's money is not settled by a new one, and a new turn would pay them a second pot.
// A member who left with nothing either way may join again.
func checkRejoin(ctx context.Context, tx db.BunTx, g Group, employeeID string) error {
	var refused bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.equb_memberships m WHERE m.tenant_id = $1 AND m.group_id = $2
		AND m.employee_id = $3 AND m.status = $4 AND (COALESCE(m.settlement_santim, 0) <> 0
			OR EXISTS (SELECT 1 FROM app.equb_payouts po WHERE po.tenant_id = m.tenant_id AND po.membership_id = m.id AND po.status <> $5)
			OR EXISTS (SELECT 1 FROM app.equb_defaults d WHERE d.tenant_id = m.tenant_id AND d.membership_id = m.id AND d.status = $6)))`,
		g.TenantID, g.ID, employeeID, MemberLeft, MoneyFailed, DefaultOwed).Scan(&refused)
	if err != nil {
		return fmt.Errorf("equb.join: earlier memberships: %w", err)
	}
	if refused {
		return RefusalError(CodeRejoinNotAllowed)
	}
	return nil
}

// Leave ends the user's membership (audited LeaveEqubGroup, event equb.member_left.v1). A
// FORMING group lets anyone go. Once the first cycle has started the group must allow changes;
// a member with money at the bank waits for it; the member the open cycle pays stays until its
// payout; a member whose contributions differ from their receipts and the contributions they
// owe for cycles they defaulted on (Balance.Settlement) has the balance recorded as their
// settlement (> 0: the group owes them, < 0: they owe the group) and must acknowledge it. A
// member not yet paid gives up their turn: the later turns move up one. The member's payroll
// contribution mandate ends with the membership (cancelled), once no payroll run that has not
// completed has withheld under it (that run records the contribution). Errors:
// EQUB_GROUP_NOT_FOUND, EQUB_NOT_MEMBER, EQUB_CHANGES_LOCKED, EQUB_MONEY_IN_FLIGHT,
// EQUB_RECIPIENT_CANNOT_LEAVE, EQUB_MANDATE_IN_OPEN_RUN, EQUB_SETTLEMENT_REQUIRED
// (details.settlementSantim).
func Leave(ctx context.Context, tx db.BunTx, groupID, userID string, acknowledge bool, now time.Time) (Membership, error) {
	g, err := getGroup(ctx, tx, groupID, true)
	if err != nil {
		return Membership{}, err
	}
	m, err := ActiveMember(ctx, tx, groupID, userID)
	if err != nil {
		return Membership{}, err
	}
	// The membership's row lock orders the leave with a contribution's claim (which locks it for
	// share): a claim committed first is money in flight below, and a claim after the leave
	// finds the member gone.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM app.equb_memberships WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, m.TenantID, m.ID); err != nil {
		return Membership{}, fmt.Errorf("equb.leave: lock the membership: %w", err)
	}
	var settlement int64
	var b Balance
	var cur Cycle
	var ok bool
	if g.Status != GroupForming {
		if !g.AllowChangesAfterStart {
			return Membership{}, RefusalError(CodeChangesLocked)
		}
		if b, err = MemberBalance(ctx, tx, m.ID); err != nil {
			return Membership{}, err
		}
		if b.InFlight > 0 {
			return Membership{}, RefusalError(CodeMoneyInFlight)
		}
		if cur, ok, err = currentCycle(ctx, tx, groupID); err != nil {
			return Membership{}, err
		}
		if ok && cur.RecipientID == m.ID {
			return Membership{}, RefusalError(CodeRecipientCannotLeave)
		}
	}
	mandate, err := endContributionMandate(ctx, tx, m, "left the equb group", now)
	if err != nil {
		return Membership{}, err
	}
	if g.Status != GroupForming {
		settlement = b.Settlement()
		if settlement != 0 && !acknowledge {
			r := RefusalError(CodeSettlementRequired)
			r.Details = map[string]any{"settlementSantim": settlement}
			return Membership{}, r
		}
		if ok && cur.Status == CycleOpen {
			// The open cycle no longer waits for their contribution unless they made it (a
			// member who joined after it opened was never counted in it).
			var paid bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.equb_contributions WHERE tenant_id = $1 AND cycle_id = $2 AND membership_id = $3 AND status = 'POSTED')`,
				g.TenantID, cur.ID, m.ID).Scan(&paid); err != nil {
				return Membership{}, fmt.Errorf("equb.leave: %w", err)
			}
			if !paid && m.Due(cur.Number) && cur.MembersDue > 1 {
				if _, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET members_due = members_due - 1 WHERE tenant_id = $1 AND id = $2`, g.TenantID, cur.ID); err != nil {
					return Membership{}, fmt.Errorf("equb.leave: %w", err)
				}
			}
		}
	}
	oldPos := m.Position
	m.Status, m.LeftAt, m.Position = MemberLeft, &now, nil
	if g.Status != GroupForming {
		m.SettlementSantim = &settlement
	}
	if _, err := tx.NewUpdate().Model(&m).Column("status", "left_at", "position", "settlement_santim").WherePK().Exec(ctx); err != nil {
		return Membership{}, fmt.Errorf("equb.leave: %w", err)
	}
	if oldPos != nil {
		var received bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.equb_payouts WHERE tenant_id = $1 AND membership_id = $2 AND status = 'PAID')`,
			g.TenantID, m.ID).Scan(&received); err != nil {
			return Membership{}, fmt.Errorf("equb.leave: %w", err)
		}
		if !received {
			// Their turn is given up: the later turns move up one, lowest first (so the unique
			// index on positions holds at every row), and the group has one cycle fewer.
			for pos := *oldPos + 1; pos <= g.CyclesTotal; pos++ {
				if _, err := tx.Exec(ctx, `UPDATE app.equb_memberships SET position = $4 WHERE tenant_id = $1 AND group_id = $2 AND status = 'ACTIVE' AND position = $3`,
					g.TenantID, g.ID, pos, pos-1); err != nil {
					return Membership{}, fmt.Errorf("equb.leave: %w", err)
				}
			}
			g.CyclesTotal--
			g.UpdatedAt = now
			if _, err := tx.NewUpdate().Model(&g).Column("cycles_total", "updated_at").WherePK().Exec(ctx); err != nil {
				return Membership{}, fmt.Errorf("equb.leave: %w", err)
			}
			// The last unpaid member gone: every turn left has been paid.
			if err := completeIfPaid(ctx, tx, g.TenantID, g.ID, now); err != nil {
				return Membership{}, err
			}
		}
	}
	ev := memberEvent(m)
	if mandate != "" {
		ev["cancelledMandateId"] = mandate
	}
	return m, record(ctx, tx, "LeaveEqubGroup", "EqubGroup", g.ID, "equb.member_left.v1", ev)
}

// endContributionMandate cancels membership m's live payroll contribution mandate (PENDING,
// ACTIVE or SUSPENDED) and returns its id ("" when it has none): EQUB_MANDATE_IN_OPEN_RUN while
// a payroll run that has not completed withheld or may withhold under any of its mandates.
func endContributionMandate(ctx context.Context, tx db.BunTx, m Membership, reason string, now time.Time) (string, error) {
	// Every mandate of the membership, a cancelled one too: a run that withheld under it still
	// records the contribution at its completion.
	if err := payroll.RefuseInOpenRun(ctx, tx, m.EmployeeID, payroll.KindEqubContribution, m.ID, RefusalError(CodeMandateInOpenRun)); err != nil {
		return "", err
	}
	live, err := payroll.LiveProductMandates(ctx, tx, payroll.KindEqubContribution, []string{m.ID})
	if err != nil {
		return "", err
	}
	md, ok := live[m.ID]
	if !ok {
		return "", nil
	}
	if _, err := payroll.CancelMandate(ctx, tx, md.ID, reason, now); err != nil {
		return "", err
	}
	return md.ID, nil
}

// lastCycle is the number of the group's latest cycle, 0 before the first.
func lastCycle(ctx context.Context, tx db.BunTx, g Group) (int, error) {
	var last int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(max(number), 0) FROM app.equb_cycles WHERE tenant_id = $1 AND group_id = $2`, g.TenantID, g.ID).Scan(&last); err != nil {
		return 0, fmt.Errorf("equb.last_cycle: %w", err)
	}
	return last, nil
}

// completeIfPaid makes a RUNNING group COMPLETED once as many of its cycles are PAID as it has
// turns: at its last payout's settlement, or when the members whose turns were left all leave.
// Its members' live payroll contribution mandates end with it (a run still open that withheld
// under one has its line refused at completion and reported for a refund).
func completeIfPaid(ctx context.Context, tx db.BunTx, tenant, groupID string, now time.Time) error {
	tag, err := tx.Exec(ctx, `UPDATE app.equb_groups g SET status = 'COMPLETED', updated_at = $3
		WHERE g.tenant_id = $1 AND g.id = $2 AND g.status = 'RUNNING'
		AND (SELECT count(*) FROM app.equb_cycles c WHERE c.tenant_id = g.tenant_id AND c.group_id = g.id AND c.status = 'PAID') >= g.cycles_total`,
		tenant, groupID, now)
	if err != nil {
		return fmt.Errorf("equb.complete: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	var members []string
	if err := tx.NewSelect().Model((*Membership)(nil)).Column("id").Where("tenant_id = ?", tenant).Where("group_id = ?", groupID).
		Scan(ctx, &members); err != nil {
		return fmt.Errorf("equb.complete: the members: %w", err)
	}
	live, err := payroll.LiveProductMandates(ctx, tx, payroll.KindEqubContribution, members)
	if err != nil {
		return err
	}
	for _, md := range live {
		if _, err := payroll.CancelMandate(ctx, tx, md.ID, "equb group completed", now); err != nil {
			return err
		}
	}
	return nil
}

// currentCycle is the group's cycle that is not PAID, if any.
func currentCycle(ctx context.Context, tx db.BunTx, groupID string) (Cycle, bool, error) {
	var c Cycle
	err := tx.NewSelect().Model(&c).Where("c.tenant_id = ?", tenancy.TenantID(ctx)).Where("c.group_id = ?", groupID).
		Where("c.status <> ?", CyclePaid).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Cycle{}, false, nil
	}
	if err != nil {
		return Cycle{}, false, fmt.Errorf("equb.current_cycle: %w", err)
	}
	return c, true, nil
}

// NewSeed is a fresh lottery seed: 32 random bytes, hex.
func NewSeed() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("equb.new_seed: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// OpenCycle opens the group's next cycle with its escrow binding ACTIVE (the caller has verified
// the group's escrow account at the partner through the account lookup, at verifiedAt): audited
// OpenEqubCycle, event equb.cycle_opened.v1. The first cycle fixes the payout order (join order,
// or LotteryOrder(seed, members in join order) with seed recorded) and makes the group RUNNING.
// Errors: EQUB_GROUP_NOT_FOUND, EQUB_GROUP_COMPLETED, EQUB_CYCLE_IN_PROGRESS,
// EQUB_NOT_ENOUGH_MEMBERS.
func OpenCycle(ctx context.Context, tx db.BunTx, groupID, seed string, verifiedAt, now time.Time) (Cycle, Binding, error) {
	g, err := getGroup(ctx, tx, groupID, true)
	if err != nil {
		return Cycle{}, Binding{}, err
	}
	if g.Status == GroupCompleted {
		return Cycle{}, Binding{}, RefusalError(CodeGroupCompleted)
	}
	if _, open, err := currentCycle(ctx, tx, groupID); err != nil {
		return Cycle{}, Binding{}, err
	} else if open {
		return Cycle{}, Binding{}, RefusalError(CodeCycleInProgress)
	}
	members, err := Members(ctx, tx, groupID)
	if err != nil {
		return Cycle{}, Binding{}, err
	}
	var active []Membership
	for _, m := range members {
		if m.Status == MemberActive {
			active = append(active, m)
		}
	}
	if g.Status == GroupForming {
		if len(active) < MinMembers {
			return Cycle{}, Binding{}, RefusalError(CodeNotEnoughMembers)
		}
		ids := make([]string, len(active))
		for i, m := range active {
			ids[i] = m.ID
		}
		if g.PayoutOrder == OrderLottery {
			ids = LotteryOrder(seed, ids)
			g.LotterySeed = &seed
		}
		for i, id := range ids {
			if _, err := tx.Exec(ctx, `UPDATE app.equb_memberships SET position = $3 WHERE tenant_id = $1 AND id = $2`, g.TenantID, id, i+1); err != nil {
				return Cycle{}, Binding{}, fmt.Errorf("equb.open_cycle: %w", err)
			}
		}
		g.Status, g.CyclesTotal = GroupRunning, len(ids)
	}
	last, err := lastCycle(ctx, tx, g)
	if err != nil {
		return Cycle{}, Binding{}, err
	}
	number := last + 1
	if number > g.CyclesTotal {
		return Cycle{}, Binding{}, RefusalError(CodeGroupCompleted)
	}
	var recipient string
	if err := tx.QueryRow(ctx, `SELECT id FROM app.equb_memberships WHERE tenant_id = $1 AND group_id = $2 AND status = 'ACTIVE' AND position = $3`,
		g.TenantID, g.ID, number).Scan(&recipient); err != nil {
		return Cycle{}, Binding{}, fmt.Errorf("equb.open_cycle: recipient of cycle %d: %w", number, err)
	}
	g.UpdatedAt = now
	if _, err := tx.NewUpdate().Model(&g).Column("status", "cycles_total", "lottery_seed", "updated_at").WherePK().Exec(ctx); err != nil {
		return Cycle{}, Binding{}, fmt.Errorf("equb.open_cycle: %w", err)
	}
	c := Cycle{ID: "eqc_" + identity.NewID(), TenantID: g.TenantID, GroupID: g.ID, Number: number, RecipientID: recipient,
		ContributionSantim: g.ContributionSantim, MembersDue: len(active), Status: CycleOpen, OpenedBy: actor(ctx), OpenedAt: now,
		DueAt: now.Add(time.Duration(g.ContributionDueHours) * time.Hour)}
	if _, err := tx.NewInsert().Model(&c).Exec(ctx); err != nil {
		return Cycle{}, Binding{}, fmt.Errorf("equb.open_cycle: %w", err)
	}
	b := Binding{ID: "eqb_" + identity.NewID(), TenantID: g.TenantID, CycleID: c.ID, Partner: g.EscrowPartner,
		PartnerAccountID: g.EscrowAccountNumber, LedgerPoolAccountID: chart.EqubPoolAccount(g.TenantID, c.ID),
		Status: BindingActive, VerifiedAt: verifiedAt}
	if _, err := tx.NewInsert().Model(&b).Exec(ctx); err != nil {
		return Cycle{}, Binding{}, fmt.Errorf("equb.open_cycle: %w", err)
	}
	ev := map[string]any{"groupId": g.ID, "cycleId": c.ID, "number": c.Number, "recipientId": c.RecipientID,
		"contributionSantim": c.ContributionSantim, "membersDue": c.MembersDue, "payoutOrder": g.PayoutOrder,
		"dueAt": c.DueAt.UTC(), "defaultRule": g.DefaultRule,
		"escrowPartner": b.Partner, "escrowAccount": b.PartnerAccountID, "ledgerPoolAccountId": b.LedgerPoolAccountID}
	if g.LotterySeed != nil {
		ev["lotterySeed"] = *g.LotterySeed
	}
	return c, b, record(ctx, tx, "OpenEqubCycle", "EqubCycle", c.ID, "equb.cycle_opened.v1", ev)
}

// CycleView is a cycle with its binding and how far its money has got.
type CycleView struct {
	Cycle
	Binding             *Binding
	ContributionsPosted int
	ContributionsOpen   int // PENDING at the bank
	PostedSantim        int64
	PayoutStatus        string // "" none yet
	Defaulted           int    // members recorded in default (OWED) for the cycle
}

// ListCycles lists a group's cycles by number.
func ListCycles(ctx context.Context, tx db.BunTx, groupID string) ([]CycleView, error) {
	var cs []Cycle
	if err := tx.NewSelect().Model(&cs).Where("c.tenant_id = ?", tenancy.TenantID(ctx)).Where("c.group_id = ?", groupID).
		OrderExpr("c.number").Scan(ctx); err != nil {
		return nil, fmt.Errorf("equb.list_cycles: %w", err)
	}
	out := make([]CycleView, 0, len(cs))
	for _, c := range cs {
		v := CycleView{Cycle: c}
		var b Binding
		err := tx.NewSelect().Model(&b).Where("b.tenant_id = ?", c.TenantID).Where("b.cycle_id = ?", c.ID).Limit(1).Scan(ctx)
		if err == nil {
			v.Binding = &b
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("equb.list_cycles: %w", err)
		}
		if err := tx.QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE status = 'POSTED'), count(*) FILTER (WHERE status = 'PENDING'),
			       COALESCE(sum(amount_santim) FILTER (WHERE status = 'POSTED'), 0)::bigint,
			       COALESCE((SELECT status FROM app.equb_payouts p WHERE p.tenant_id = $1 AND p.cycle_id = $2 AND p.status <> 'FAILED'), ''),
			       (SELECT count(*) FROM app.equb_defaults d WHERE d.tenant_id = $1 AND d.cycle_id = $2 AND d.status = 'OWED')
			FROM app.equb_contributions WHERE tenant_id = $1 AND cycle_id = $2`, c.TenantID, c.ID).
			Scan(&v.ContributionsPosted, &v.ContributionsOpen, &v.PostedSantim, &v.PayoutStatus, &v.Defaulted); err != nil {
			return nil, fmt.Errorf("equb.list_cycles: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

func groupEvent(g Group) map[string]any {
	return map[string]any{"groupId": g.ID, "name": g.Name, "contributionSantim": g.ContributionSantim, "maxMembers": g.MaxMembers,
		"payoutOrder": g.PayoutOrder, "allowChangesAfterStart": g.AllowChangesAfterStart, "status": g.Status,
		"defaultRule": g.DefaultRule, "contributionDueHours": g.ContributionDueHours}
}

// TakeAccount makes the caller's payout account now the account of their ACTIVE membership of
// the group (audited TakeEqubAccount, event equb.member_account_changed.v1): their later
// contributions come from it and their pot goes to it. Only the member does this — an account
// the employer sets for the employee reaches the group when the member takes it. A contribution
// or payout already on its way keeps the account it planned with. Errors: EQUB_GROUP_NOT_FOUND,
// EQUB_NOT_MEMBER.
func TakeAccount(ctx context.Context, tx db.BunTx, groupID, userID string, now time.Time) (Membership, error) {
	if _, err := GetGroup(ctx, tx, groupID); err != nil {
		return Membership{}, err
	}
	m, err := ActiveMember(ctx, tx, groupID, userID)
	if err != nil {
		return Membership{}, err
	}
	acct, err := memberAccount(ctx, tx, m.EmployeeID)
	if err != nil {
		return Membership{}, err
	}
	m.PayoutPartner, m.PayoutAccountNumber, m.PayoutHolderName = acct.Partner, acct.AccountNumber, acct.HolderName
	if _, err := tx.NewUpdate().Model(&m).Column("payout_partner", "payout_account_number", "payout_holder_name").
		Where("m.tenant_id = ?", m.TenantID).WherePK().Where("m.status = ?", MemberActive).Exec(ctx); err != nil {
		return Membership{}, fmt.Errorf("equb.take_account: %w", err)
	}
	ev := memberEvent(m)
	ev["at"] = now.UTC()
	return m, record(ctx, tx, "TakeEqubAccount", "EqubMembership", m.ID, "equb.member_account_changed.v1", ev)
}

func memberEvent(m Membership) map[string]any {
	ev := map[string]any{"groupId": m.GroupID, "membershipId": m.ID, "employeeId": m.EmployeeID, "status": m.Status}
	if m.SettlementSantim != nil {
		ev["settlementSantim"] = *m.SettlementSantim
	}
	return ev
}

func actor(ctx context.Context) string { return tenancy.From(ctx).Actor }

// record writes a change's audit row and its outbox event in tx.
func record(ctx context.Context, tx db.Writer, action, targetType, targetID, event string, payload any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: targetType,
		TargetID: targetID, Details: payload}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

func uniqueViolation(err error, index string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == index
}

// savepoint runs fn inside a savepoint of tx, rolled back to when fn fails.
func savepoint(ctx context.Context, tx db.BunTx, fn func() error) error {
	if _, err := tx.Exec(ctx, `SAVEPOINT equb`); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT equb`); rerr != nil {
			return rerr
		}
		return err
	}
	_, err := tx.Exec(ctx, `RELEASE SAVEPOINT equb`)
	return err
}

// LinkedEmployee is the id of the context's organization's employee linked to userID (not
// deleted). Errors: EQUB_EMPLOYEE_NOT_ACTIVE when there is none.
func LinkedEmployee(ctx context.Context, tx db.BunTx, userID string) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM app.employees WHERE tenant_id = $1 AND user_id = $2 AND deleted_at IS NULL`,
		tenancy.TenantID(ctx), userID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", RefusalError(CodeEmployeeNotActive)
	}
	if err != nil {
		return "", fmt.Errorf("equb.linked_employee: %w", err)
	}
	return id, nil
}
