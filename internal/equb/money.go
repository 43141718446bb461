package equb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Contribution is a member's contribution to a cycle (the contribution saga's record).
type Contribution struct {
	bun.BaseModel `bun:"table:app.equb_contributions,alias:ct"`

	ID           string  `bun:"id,pk"`
	TenantID     string  `bun:"tenant_id"`
	GroupID      string  `bun:"group_id"`
	CycleID      string  `bun:"cycle_id"`
	MembershipID string  `bun:"membership_id"`
	AmountSantim int64   `bun:"amount_santim"`
	Status       string  `bun:"status"`
	WorkflowID   string  `bun:"workflow_id"`
	LedgerTxID   *string `bun:"ledger_tx_id"`
	TransferID   *string `bun:"transfer_id"`
	FailureCode  *string `bun:"failure_code"`
	// Source is where the money came from: SourceMember (the member's account) or SourcePayroll
	// (a payroll deduction, with its MandateID).
	Source    string    `bun:"source"`
	MandateID *string   `bun:"mandate_id"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// Contribution sources.
const (
	SourceMember  = "MEMBER"
	SourcePayroll = "PAYROLL"
)

// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 of the equb's
// transfers (outbox.TransferSettled): a contribution into the escrow (kind contribution, with
// contributionId) and a payout to the recipient (kind payout, with payoutId), each with its
// cycleId; written with equb.contribution_posted.v1 or equb.payout_paid.v1.
const EventBankTransferSettled = "equb.bank_transfer_settled.v1"

// transferDomain is the equb's transfers' money domain (money.ValidDomain).
const transferDomain = money.DomainEqub

// PayrollSource is a contribution by payroll deduction (internal/payroll/product_mandate.go): the
// member by membership, the product mandate, and the amount the payroll run withheld.
type PayrollSource struct {
	MembershipID string
	MandateID    string
	AmountSantim int64
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

// Answers reports whether contribution ct is what a contribution call asks for: one to group
// groupID by membership membershipID (the caller's). A contribution is keyed by its saga's
// workflow id for good, but that id derives from the Idempotency-Key alone and the key's
// idempotency record is deleted after idempotency.Retention: a key sent again after that for
// another group (or by another member) names this contribution, which must not answer it
// (CodeKeyReused). The cycle is not compared: the call names none (it is the group's OPEN
// cycle), and a retry after the cycle moved on is answered by its contribution.
func (ct Contribution) Answers(groupID, membershipID string) bool {
	return ct.GroupID == groupID && ct.MembershipID == membershipID
}

// Answers reports whether payout po is what a payout call asks for: the payout of group
// groupID's cycle cycleID (the one the call's cycle number names). As Contribution.Answers: a
// key sent again once its idempotency record is gone, for another group or cycle, names this
// payout, which must not answer it.
func (po Payout) Answers(groupID, cycleID string) bool {
	return po.GroupID == groupID && po.CycleID == cycleID
}

// ownedBy keeps the rows whose membership belongs to userID (alias is the row's table alias).
func ownedBy(q *bun.SelectQuery, alias, userID string) *bun.SelectQuery {
	return q.Where("EXISTS (SELECT 1 FROM app.equb_memberships m WHERE m.tenant_id = "+alias+".tenant_id AND m.id = "+alias+".membership_id AND m.user_id = ?)", userID)
}

// UserContributions lists userID's contributions in the context's organization by id.
func UserContributions(ctx context.Context, tx db.BunTx, userID string, p db.Page) ([]Contribution, error) {
	var out []Contribution
	q := tx.NewSelect().Model(&out).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("ct.id").Limit(p.Rows())
	if p.After != "" {
		q = q.Where("ct.id > ?", p.After)
	}
	if err := ownedBy(q, "ct", userID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("equb.user_contributions: %w", err)
	}
	return out, nil
}

// UserPayouts lists userID's payouts in the context's organization by id.
func UserPayouts(ctx context.Context, tx db.BunTx, userID string, p db.Page) ([]Payout, error) {
	var out []Payout
	q := tx.NewSelect().Model(&out).Where("po.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("po.id").Limit(p.Rows())
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
	// Payroll is set for a contribution by payroll deduction: Member is then the organization's
	// payroll account (where the withheld pay is), not the member's own.
	Payroll *PayrollSource `json:",omitempty"`
	// Concluded is set when the asking saga already concluded its contribution or payout
	// (ContributionConcludedBy, PayoutConcludedBy): the plan then names only the record's tenant,
	// group, cycle, member and amount, and the saga answers the recorded outcome instead of
	// planning (and sending) the move again.
	Concluded *Concluded `json:",omitempty"`
}

// Concluded is the outcome a saga run already recorded on its contribution or payout: POSTED or
// PAID with its ledger transaction and transfer, or FAILED with the bank's code.
type Concluded struct {
	Status                              string
	LedgerTxID, TransferID, FailureCode string `json:",omitempty"`
}

func concludedPlan(tenantID, groupID, cycleID, membershipID, wfID string, amount int64, status string,
	ledgerTxID, transferID, failureCode *string) MoneyPlan {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return MoneyPlan{TenantID: tenantID, GroupID: groupID, CycleID: cycleID, MembershipID: membershipID, AmountSantim: amount, Owner: wfID,
		Concluded: &Concluded{Status: status, LedgerTxID: deref(ledgerTxID), TransferID: deref(transferID), FailureCode: deref(failureCode)}}
}

// ConcludedPlan is the plan that answers the contribution's recorded outcome
// (ContributionConcludedBy).
func (ct Contribution) ConcludedPlan() MoneyPlan {
	return concludedPlan(ct.TenantID, ct.GroupID, ct.CycleID, ct.MembershipID, ct.WorkflowID, ct.AmountSantim, ct.Status,
		ct.LedgerTxID, ct.TransferID, ct.FailureCode)
}

// ConcludedPlan is the plan that answers the payout's recorded outcome (PayoutConcludedBy).
func (po Payout) ConcludedPlan() MoneyPlan {
	return concludedPlan(po.TenantID, po.GroupID, po.CycleID, po.MembershipID, po.WorkflowID, po.AmountSantim, po.Status,
		po.LedgerTxID, po.TransferID, po.FailureCode)
}

// ContributionConcludedBy reports whether the saga wfID already concluded its contribution: POSTED
// or FAILED under that workflow, the row returned. A saga's first steps are local activities run
// in one workflow task; when that task is lost after they recorded the outcome (it timed out on a
// loaded worker), they run again from the start, and the plan read back the saga's own
// contribution and the saga sent the transfer again. The saga answers the recorded outcome
// instead. A PENDING contribution, another saga's, or none is not concluded.
func ContributionConcludedBy(ctx context.Context, tx db.BunTx, wfID string) (Contribution, bool, error) {
	var ct Contribution
	if wfID == "" {
		return Contribution{}, false, nil
	}
	err := tx.NewSelect().Model(&ct).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).Where("ct.workflow_id = ?", wfID).Scan(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Contribution{}, false, nil
	case err != nil:
		return Contribution{}, false, fmt.Errorf("equb.contribution_concluded_by: %w", err)
	}
	if ct.Status != MoneyPosted && ct.Status != MoneyFailed {
		return Contribution{}, false, nil
	}
	return ct, true, nil
}

// PayoutConcludedBy reports whether the saga wfID already concluded its payout: PAID or FAILED
// under that workflow, the row returned (see ContributionConcludedBy: without it the plan skipped
// the saga's own FAILED payout and planned the cycle again, OPEN by then for a new key, and the
// saga sent the pot again). A PENDING payout, another saga's, or none is not concluded.
func PayoutConcludedBy(ctx context.Context, tx db.BunTx, wfID string) (Payout, bool, error) {
	var po Payout
	if wfID == "" {
		return Payout{}, false, nil
	}
	err := tx.NewSelect().Model(&po).Where("po.tenant_id = ?", tenancy.TenantID(ctx)).Where("po.workflow_id = ?", wfID).Scan(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Payout{}, false, nil
	case err != nil:
		return Payout{}, false, fmt.Errorf("equb.payout_concluded_by: %w", err)
	}
	if po.Status != MoneyPaid && po.Status != MoneyFailed {
		return Payout{}, false, nil
	}
	return po, true, nil
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
		return Cycle{}, db.NotFoundOr(err, RefusalError(CodeCycleNotOpen))
	}
	return c, nil
}

func activeBinding(ctx context.Context, tx db.BunTx, cycleID string) (Binding, error) {
	var b Binding
	if err := tx.NewSelect().Model(&b).Where("b.tenant_id = ?", tenancy.TenantID(ctx)).Where("b.cycle_id = ?", cycleID).
		Where("b.status = ?", BindingActive).Limit(1).Scan(ctx); err != nil {
		return Binding{}, db.NotFoundOr(err, RefusalError(CodeEscrowNotActive))
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
// EQUB_GROUP_NOT_FOUND, EQUB_NOT_MEMBER, EQUB_CYCLE_NOT_OPEN, EQUB_CONTRIBUTION_NOT_DUE (the
// member joined after the cycle opened: they owe from the next), EQUB_ESCROW_NOT_ACTIVE,
// EQUB_ALREADY_CONTRIBUTED (another saga's contribution, PENDING or POSTED),
// EQUB_MANDATE_IN_OPEN_RUN (a payroll run that has not completed withheld, or may withhold, the
// contribution under one of the membership's mandates: its completion pays it),
// IDEMPOTENCY_KEY_REUSED (the saga wfID recorded a contribution to another group, or by another
// membership: Contribution.Answers).
func LoadContributionPlan(ctx context.Context, tx db.BunTx, groupID, userID, wfID string) (MoneyPlan, error) {
	p, err := loadContributionPlan(ctx, tx, groupID, userID, wfID)
	if err != nil || p.Owner == wfID {
		return p, err
	}
	return p, checkNoOpenRun(ctx, tx, p)
}

// checkNoOpenRun refuses a contribution by hand while a payroll run that has not completed holds
// the member's contribution withheld (payroll.RefuseInOpenRun: every mandate of the membership,
// whatever its status now).
func checkNoOpenRun(ctx context.Context, tx db.BunTx, p MoneyPlan) error {
	return payroll.RefuseInOpenRun(ctx, tx, p.EmployeeID, payroll.KindEqubContribution, p.MembershipID, RefusalError(CodeMandateInOpenRun))
}

func loadContributionPlan(ctx context.Context, tx db.BunTx, groupID, userID, wfID string) (MoneyPlan, error) {
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
		if !own.Answers(groupID, m.ID) {
			// Another group's or member's: the key's saga is not this contribution's.
			return MoneyPlan{}, RefusalError(CodeKeyReused)
		}
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
		if !m.Due(c.Number) {
			r := RefusalError(CodeContributionNotDue)
			r.Details = map[string]any{"cycleNumber": c.Number, "firstCycle": m.FirstCycle}
			return MoneyPlan{}, r
		}
	default:
		return MoneyPlan{}, fmt.Errorf("equb.load_contribution_plan: %w", err)
	}
	b, err := activeBinding(ctx, tx, c.ID)
	if err != nil {
		return MoneyPlan{}, err
	}
	acct, err := m.account(ctx, tx)
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

// LoadPayrollContributionPlan is LoadContributionPlan for a contribution by payroll deduction
// (the payroll-completion saga): the member by membership (still ACTIVE in its group), the
// group's OPEN cycle as for any contribution, the amount withheld equal to the cycle's
// contribution, and the money from the organization's payroll account at the escrow's partner
// (Member is that account). Errors: LoadContributionPlan's; EQUB_NOT_MEMBER for a membership
// that is not ACTIVE; EQUB_CONTRIBUTION_AMOUNT_MISMATCH; EQUB_PAYROLL_ACCOUNT_NOT_SET.
func LoadPayrollContributionPlan(ctx context.Context, tx db.BunTx, src PayrollSource, wfID string) (MoneyPlan, error) {
	var m Membership
	if err := tx.NewSelect().Model(&m).Where("m.tenant_id = ?", tenancy.TenantID(ctx)).Where("m.id = ?", src.MembershipID).
		Where("m.status = ?", MemberActive).Scan(ctx); err != nil {
		return MoneyPlan{}, db.NotFoundOr(err, RefusalError(CodeNotMember))
	}
	p, err := loadContributionPlan(ctx, tx, m.GroupID, m.UserID, wfID)
	if err != nil {
		return p, err
	}
	if p.AmountSantim != src.AmountSantim {
		return MoneyPlan{}, RefusalError(CodeAmountMismatch)
	}
	s, err := payroll.EffectiveSettings(ctx, tx)
	if err != nil {
		return MoneyPlan{}, err
	}
	if s.PayrollAccount == nil || s.PayrollAccount.Partner != p.Escrow.Partner {
		return MoneyPlan{}, RefusalError(CodePayrollAccountNotSet)
	}
	p.Member = Account{Partner: s.PayrollAccount.Partner, AccountNumber: s.PayrollAccount.AccountNumber}
	p.Payroll = &src
	return p, nil
}

// ClaimContribution records the saga's contribution PENDING with its pending pool posting
// (audited ContributeEqub, event equb.contribution_initiated.v1); the same saga again is a no-op.
// Errors: EQUB_ALREADY_CONTRIBUTED (another saga holds the member's contribution to the cycle:
// the database's index decides racing ones), EQUB_NOT_MEMBER (the member left since the plan),
// EQUB_CYCLE_NOT_OPEN, EQUB_MANDATE_IN_OPEN_RUN (a contribution by hand, as in the plan).
func ClaimContribution(ctx context.Context, tx db.BunTx, p MoneyPlan, wfID, ledgerTxID string, now time.Time) (Contribution, error) {
	var own Contribution
	err := tx.NewSelect().Model(&own).Where("ct.tenant_id = ?", tenancy.TenantID(ctx)).Where("ct.workflow_id = ?", wfID).Scan(ctx)
	if err == nil {
		return own, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Contribution{}, fmt.Errorf("equb.claim_contribution: %w", err)
	}
	// Still a member: the row locked for share, so a leave (which locks it for update) either
	// committed before (refused here) or waits and then sees this contribution in flight.
	var status string
	if err := tx.QueryRow(ctx, `SELECT status FROM app.equb_memberships WHERE tenant_id = $1 AND id = $2 FOR SHARE`,
		p.TenantID, p.MembershipID).Scan(&status); err != nil {
		return Contribution{}, fmt.Errorf("equb.claim_contribution: the membership: %w", err)
	}
	if status != MemberActive {
		return Contribution{}, RefusalError(CodeNotMember)
	}
	if p.Payroll == nil {
		if err := checkNoOpenRun(ctx, tx, p); err != nil {
			return Contribution{}, err
		}
	}
	c, err := cycleOfGroup(ctx, tx, p.GroupID, 0, true)
	if err != nil {
		return Contribution{}, err
	}
	if c.ID != p.CycleID || c.Status != CycleOpen {
		return Contribution{}, RefusalError(CodeCycleNotOpen)
	}
	ct := Contribution{ID: "eqt_" + identity.NewID(), TenantID: p.TenantID, GroupID: p.GroupID, CycleID: p.CycleID, MembershipID: p.MembershipID,
		AmountSantim: p.AmountSantim, Status: MoneyPending, WorkflowID: wfID, LedgerTxID: &ledgerTxID, Source: SourceMember,
		CreatedAt: now, UpdatedAt: now}
	if p.Payroll != nil {
		ct.Source, ct.MandateID = SourcePayroll, &p.Payroll.MandateID
	}
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
// equb.bank_transfer_settled.v1, naming reference, the transfer's partner reference, when given,
// and equb.contribution_posted.v1); again is a no-op.
func MarkContributionPosted(ctx context.Context, tx db.BunTx, wfID, transferID, reference string, now time.Time) (Contribution, error) {
	return settleContribution(ctx, tx, wfID, MoneyPosted, transferID, reference, "", now)
}

// MarkContributionFailed moves the saga's contribution PENDING → FAILED with the bank's code
// (failContribution: the pool posting is voided, nothing moved; audited EqubContributionFailed,
// event equb.contribution_failed.v1); the member may contribute again with a new key.
func MarkContributionFailed(ctx context.Context, tx db.BunTx, wfID, code string, now time.Time) (Contribution, error) {
	return settleContribution(ctx, tx, wfID, MoneyFailed, "", "", code, now)
}

// settle is the one settlement step of both sagas: it moves the saga's row (a contribution or a
// payout, model a pointer to it) PENDING → to with the transfer id or the failure code, and reads
// it back into model. moved is false when the row already was to (a retried step: nothing to
// record again). A row that is not PENDING or to is an error; no row is notFound.
func settle(ctx context.Context, tx db.BunTx, model any, alias, wfID, to, transferID, code string, now time.Time, notFound error) (moved bool, err error) {
	q := tx.NewSelect().Model(model).Where("?.tenant_id = ?", bun.Ident(alias), tenancy.TenantID(ctx)).Where("?.workflow_id = ?", bun.Ident(alias), wfID)
	if err := q.For("UPDATE").Scan(ctx); err != nil {
		return false, db.NotFoundOr(err, notFound)
	}
	var status, id string
	switch r := model.(type) {
	case *Contribution:
		status, id = r.Status, r.ID
	case *Payout:
		status, id = r.Status, r.ID
	default:
		return false, fmt.Errorf("equb.settle: %T is not a money row", model)
	}
	if status == to {
		return false, nil
	}
	if status != MoneyPending {
		return false, fmt.Errorf("equb.settle: %s is %s, not PENDING", id, status)
	}
	if _, err := tx.NewUpdate().Model(model).Set("status = ?", to).Set("transfer_id = COALESCE(NULLIF(?, ''), transfer_id)", transferID).
		Set("failure_code = NULLIF(?, '')", code).Set("updated_at = ?", now).WherePK().Exec(ctx); err != nil {
		return false, fmt.Errorf("equb.settle: %w", err)
	}
	if err := tx.NewSelect().Model(model).WherePK().Scan(ctx); err != nil {
		return false, fmt.Errorf("equb.settle: %w", err)
	}
	return true, nil
}

func settleContribution(ctx context.Context, tx db.BunTx, wfID, to, transferID, reference, code string, now time.Time) (Contribution, error) {
	var ct Contribution
	if moved, err := settle(ctx, tx, &ct, "ct", wfID, to, transferID, code, now, RefusalError(CodeCycleNotOpen)); err != nil || !moved {
		return ct, err
	}
	ev := contributionEvent(ct)
	if to == MoneyFailed {
		return ct, record(ctx, tx, "EqubContributionFailed", "EqubContribution", ct.ID, "equb.contribution_failed.v1", ev)
	}
	if err := outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: transferDomain, Kind: "contribution", SubjectID: ct.ID,
		AmountSantim: ct.AmountSantim, TransferID: transferID, PartnerReference: reference, Keys: map[string]any{"contributionId": ct.ID, "cycleId": ct.CycleID}}); err != nil {
		return Contribution{}, err
	}
	return ct, record(ctx, tx, "EqubContributionPosted", "EqubContribution", ct.ID, "equb.contribution_posted.v1", ev)
}

func contributionEvent(ct Contribution) map[string]any {
	ev := map[string]any{"contributionId": ct.ID, "groupId": ct.GroupID, "cycleId": ct.CycleID, "membershipId": ct.MembershipID,
		"amountSantim": ct.AmountSantim, "status": ct.Status, "workflowId": ct.WorkflowID, "source": ct.Source}
	if ct.MandateID != nil {
		ev["mandateId"] = *ct.MandateID
	}
	if ct.FailureCode != nil {
		ev["failureCode"] = *ct.FailureCode
	}
	return ev
}

// LoadPayoutPlan reads what the payout of the group's cycle number needs (the API's pre-check and
// the payout saga's first step): the group's default rule allows it at now (DecidePayout: every
// contribution the cycle waits for is POSTED, or under PAY_COLLECTED the cycle is due; none at the
// bank), and neither the cycle nor its recipient has a payout that is not FAILED — unless it is
// this saga's (wfID). The amount is what the pool holds: the cycle's POSTED contributions.
// Errors: EQUB_GROUP_NOT_FOUND, EQUB_CYCLE_NOT_FOUND, EQUB_CYCLE_NOT_OPEN (already PAID),
// EQUB_ESCROW_NOT_ACTIVE, EQUB_CONTRIBUTIONS_OUTSTANDING (details.postedCount, pendingCount,
// membersDue, missingCount, defaultRule, dueAt), EQUB_ALREADY_PAID_OUT, IDEMPOTENCY_KEY_REUSED
// (the saga wfID recorded another group's or cycle's payout: Payout.Answers).
func LoadPayoutPlan(ctx context.Context, tx db.BunTx, groupID string, number int, wfID string, now time.Time) (MoneyPlan, error) {
	g, err := GetGroup(ctx, tx, groupID)
	if err != nil {
		return MoneyPlan{}, err
	}
	c, err := cycleOfGroup(ctx, tx, groupID, number, false)
	if err != nil {
		return MoneyPlan{}, RefusalError(CodeCycleNotFound)
	}
	var own Payout
	err = tx.NewSelect().Model(&own).Where("po.tenant_id = ?", c.TenantID).Where("po.workflow_id = ?", wfID).Scan(ctx)
	switch {
	case err == nil && !own.Answers(groupID, c.ID):
		// Another group's or cycle's payout: the key's saga is not this payout's.
		return MoneyPlan{}, RefusalError(CodeKeyReused)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return MoneyPlan{}, fmt.Errorf("equb.load_payout_plan: %w", err)
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
		return MoneyPlan{}, db.NotFoundOr(err, RefusalError(CodeEscrowNotActive))
	}
	if owner == "" && b.Status != BindingActive {
		return MoneyPlan{}, RefusalError(CodeEscrowNotActive)
	}
	var m Membership
	if err := tx.NewSelect().Model(&m).Where("m.tenant_id = ?", c.TenantID).Where("m.id = ?", c.RecipientID).Scan(ctx); err != nil {
		return MoneyPlan{}, fmt.Errorf("equb.load_payout_plan: %w", err)
	}
	acct, err := m.account(ctx, tx)
	if err != nil {
		return MoneyPlan{}, err
	}
	money, err := cycleMoney(ctx, tx, c)
	if err != nil {
		return MoneyPlan{}, err
	}
	p := MoneyPlan{TenantID: c.TenantID, GroupID: groupID, CycleID: c.ID, CycleNumber: c.Number, MembershipID: m.ID, EmployeeID: m.EmployeeID,
		AmountSantim: money.PoolSantim, Member: acct, Escrow: Account{Partner: b.Partner, AccountNumber: b.PartnerAccountID}, PoolAccount: b.LedgerPoolAccountID,
		Owner: owner}
	if owner != "" { // this saga's own payout
		p.AmountSantim = held.AmountSantim
		return p, nil
	}
	if !DecidePayout(g.DefaultRule, c.DueAt, now, c.MembersDue, money).Allowed {
		return p, outstanding(g, c, money)
	}
	return p, nil
}

// ClaimPayout records the saga's payout PENDING with its pending pool posting and the cycle
// PAYING (audited PayOutEqub, event equb.payout_initiated.v1), and the members in default when the
// group's rule pays what was collected; the same saga again is a no-op. The rule is decided again
// here under the cycle's lock (the lock a contribution's claim takes too), so a contribution that
// arrived since the plan was read refuses the claim rather than being left in the escrow. Errors:
// EQUB_ALREADY_PAID_OUT (the database's indexes: one payout per cycle, one per member of the
// group), EQUB_CONTRIBUTIONS_OUTSTANDING (the pool is no longer the plan's).
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
	g, err := GetGroup(ctx, tx, p.GroupID)
	if err != nil {
		return Payout{}, err
	}
	money, err := cycleMoney(ctx, tx, c)
	if err != nil {
		return Payout{}, err
	}
	decision := DecidePayout(g.DefaultRule, c.DueAt, now, c.MembersDue, money)
	if !decision.Allowed || money.PoolSantim != p.AmountSantim {
		return Payout{}, outstanding(g, c, money)
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
	if err := recordDefaults(ctx, tx, c, po, decision.Defaulters, now); err != nil {
		return Payout{}, err
	}
	return po, record(ctx, tx, "PayOutEqub", "EqubPayout", po.ID, "equb.payout_initiated.v1", payoutEvent(po))
}

// MarkPayoutPaid moves the saga's payout PENDING → PAID and its cycle PAID (the binding CLOSED;
// the group COMPLETED after its last cycle): audited EqubPayoutPaid, events
// equb.bank_transfer_settled.v1 (naming reference, the transfer's partner reference, when given)
// and equb.payout_paid.v1; again is a no-op.
func MarkPayoutPaid(ctx context.Context, tx db.BunTx, wfID, transferID, reference string, now time.Time) (Payout, error) {
	return settlePayout(ctx, tx, wfID, MoneyPaid, transferID, reference, "", now)
}

// MarkPayoutFailed moves the saga's payout PENDING → FAILED with the bank's code and its cycle
// back to OPEN (the posting voided: nothing moved; the defaults it recorded VOIDED); a new key may
// pay it again.
func MarkPayoutFailed(ctx context.Context, tx db.BunTx, wfID, code string, now time.Time) (Payout, error) {
	return settlePayout(ctx, tx, wfID, MoneyFailed, "", "", code, now)
}

func settlePayout(ctx context.Context, tx db.BunTx, wfID, to, transferID, reference, code string, now time.Time) (Payout, error) {
	var po Payout
	if moved, err := settle(ctx, tx, &po, "po", wfID, to, transferID, code, now, RefusalError(CodeCycleNotFound)); err != nil || !moved {
		return po, err
	}
	ev := payoutEvent(po)
	if to == MoneyFailed {
		if _, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET status = 'OPEN' WHERE tenant_id = $1 AND id = $2`, po.TenantID, po.CycleID); err != nil {
			return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
		}
		voided, err := voidDefaults(ctx, tx, po, now)
		if err != nil {
			return Payout{}, err
		}
		ev["defaultsVoided"] = voided
		return po, record(ctx, tx, "EqubPayoutFailed", "EqubPayout", po.ID, "equb.payout_failed.v1", ev)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET status = 'PAID', paid_at = $3 WHERE tenant_id = $1 AND id = $2`, po.TenantID, po.CycleID, now); err != nil {
		return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.equb_escrow_bindings SET status = 'CLOSED' WHERE tenant_id = $1 AND cycle_id = $2`, po.TenantID, po.CycleID); err != nil {
		return Payout{}, fmt.Errorf("equb.settle_payout: %w", err)
	}
	if err := completeIfPaid(ctx, tx, po.TenantID, po.GroupID, now); err != nil {
		return Payout{}, err
	}
	if err := outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: transferDomain, Kind: "payout", SubjectID: po.ID,
		AmountSantim: po.AmountSantim, TransferID: transferID, PartnerReference: reference, Keys: map[string]any{"payoutId": po.ID, "cycleId": po.CycleID}}); err != nil {
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

// CreateContributionMandate is a member's opt-in to contribute by payroll deduction: a PENDING
// deduction mandate of kind EQUB_CONTRIBUTION for the caller's own ACTIVE membership of the group
// (its reference) and employee, of the group's contribution each period from startPeriod (to
// endPeriod, "" until cancelled) — internal/payroll/product_mandate.go. It takes effect once a
// payroll approver activates it. The group's row is locked first, as Leave and the last payout's
// completion lock it, so an opt-in never outlives the membership or the group it pays. Errors:
// EQUB_GROUP_NOT_FOUND (another organization's group), EQUB_NOT_MEMBER (404: a group the caller
// is not an ACTIVE member of), EQUB_GROUP_COMPLETED (409), field errors, PAYROLL_MANDATE_EXISTS
// (409), PAYROLL_EMPLOYEE_TERMINATED (422).
func CreateContributionMandate(ctx context.Context, tx db.BunTx, groupID, userID, startPeriod, endPeriod string, now time.Time) (payroll.Mandate, error) {
	g, err := getGroup(ctx, tx, groupID, true)
	if err != nil {
		return payroll.Mandate{}, err
	}
	if g.Status == GroupCompleted {
		return payroll.Mandate{}, RefusalError(CodeGroupCompleted)
	}
	m, err := ActiveMember(ctx, tx, groupID, userID)
	if err != nil {
		return payroll.Mandate{}, err
	}
	return payroll.CreateProductMandate(ctx, tx, payroll.ProductMandate{Kind: payroll.KindEqubContribution, EmployeeID: m.EmployeeID,
		Reference: m.ID, AmountSantim: g.ContributionSantim, StartPeriod: startPeriod, EndPeriod: endPeriod,
		Description: "Equb contribution by payroll deduction"}, now)
}
