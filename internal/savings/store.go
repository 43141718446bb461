package savings

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/settle"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The store: every function runs in the caller's tenant-scoped transaction (RLS applies), and
// every state change writes its audit row and its outbox event in that transaction.

// Events (outbox types) of the savings state changes.
const (
	EventSettingsUpdated     = "savings.settings_updated.v1"
	EventGoalCreated         = "savings.goal_created.v1"
	EventDepositInitiated    = "savings.deposit_initiated.v1"
	EventDeposited           = "savings.deposited.v1"
	EventDepositFailed       = "savings.deposit_failed.v1"
	EventWithdrawalInitiated = "savings.withdrawal_initiated.v1"
	EventWithdrawn           = "savings.withdrawn.v1"
	EventWithdrawalFailed    = "savings.withdrawal_failed.v1"
	EventGoalClosed          = "savings.goal_closed.v1"
	// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 of a movement's
	// transfer (outbox.TransferSettled, kind deposit or withdrawal), written with
	// savings.deposited.v1 or savings.withdrawn.v1.
	EventBankTransferSettled = "savings.bank_transfer_settled.v1"
)

// Audit targets.
const (
	TargetGoal     = "SavingsGoal"
	TargetSettings = "SavingsSettings"
)

// GetSettings reads the organization's escrow account; ok is false when none is set.
func GetSettings(ctx context.Context, tx pgx.Tx) (s Settings, ok bool, err error) {
	err = tx.QueryRow(ctx, `SELECT escrow_partner, escrow_account, updated_by, updated_at FROM app.savings_settings
		WHERE tenant_id = $1`, tenancy.TenantID(ctx)).Scan(&s.Escrow.Partner, &s.Escrow.AccountNumber, &s.UpdatedBy, &s.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settings{}, false, nil
	}
	return s, err == nil, err
}

// ValidAccount checks a partner bank account's fields (name is the request's field).
func ValidAccount(name string, a BankAccount) error {
	return errors.Join(field.Identifier(name+".partner", a.Partner, 64), field.Identifier(name+".accountNumber", a.AccountNumber, 64))
}

// PutSettings sets the escrow account (audit SetSavingsSettings, savings.settings_updated.v1). The
// caller has had the partner confirm the account. Another account than the one set is refused
// (SAVINGS_ESCROW_IN_USE, details.heldSantim and pendingMovements) while the escrow holds savers'
// money — the settled deposits less the settled withdrawals of every goal — or a movement is
// PENDING: every deposit and withdrawal moves money at the account set, so the goals' money would
// be left at the old account and withdrawals drawn on the new one.
func PutSettings(ctx context.Context, tx pgx.Tx, escrow BankAccount, actor string) (Settings, error) {
	if err := ValidAccount("escrowAccount", escrow); err != nil {
		return Settings{}, err
	}
	tenant := tenancy.TenantID(ctx)
	var current BankAccount
	err := tx.QueryRow(ctx, `SELECT escrow_partner, escrow_account FROM app.savings_settings WHERE tenant_id = $1 FOR UPDATE`, tenant).
		Scan(&current.Partner, &current.AccountNumber)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return Settings{}, err
	case current.Partner != escrow.Partner || current.AccountNumber != escrow.AccountNumber:
		// The sum is exact (numeric, read as text): past int64 the escrow is certainly in use, and
		// the refusal says so without the figure instead of failing the request.
		var heldText string
		var pending int
		if err := tx.QueryRow(ctx, `SELECT
				coalesce(sum(CASE WHEN kind = 'DEPOSIT' THEN amount_santim ELSE -amount_santim END) FILTER (WHERE status = 'SETTLED'), 0)::text,
				count(*) FILTER (WHERE status = 'PENDING')
			FROM app.savings_movements WHERE tenant_id = $1`, tenant).Scan(&heldText, &pending); err != nil {
			return Settings{}, err
		}
		held, err := money.ParseSum(heldText)
		switch {
		case errors.Is(err, money.ErrOverflow):
			r := refuse(CodeEscrowInUse)
			r.Details = map[string]any{"pendingMovements": pending}
			return Settings{}, r
		case err != nil:
			return Settings{}, err
		case held != 0 || pending != 0:
			r := refuse(CodeEscrowInUse)
			r.Details = map[string]any{"heldSantim": held, "pendingMovements": pending}
			return Settings{}, r
		}
	}
	var s Settings
	err = tx.QueryRow(ctx, `INSERT INTO app.savings_settings (tenant_id, escrow_partner, escrow_account, updated_by)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant_id) DO UPDATE SET escrow_partner = EXCLUDED.escrow_partner, escrow_account = EXCLUDED.escrow_account,
			updated_by = EXCLUDED.updated_by, updated_at = now()
		RETURNING escrow_partner, escrow_account, updated_by, updated_at`, tenant, escrow.Partner, escrow.AccountNumber, actor).
		Scan(&s.Escrow.Partner, &s.Escrow.AccountNumber, &s.UpdatedBy, &s.UpdatedAt)
	if err != nil {
		return Settings{}, err
	}
	payload := map[string]any{"escrowPartner": s.Escrow.Partner, "escrowAccount": s.Escrow.AccountNumber}
	return s, record(ctx, tx, "SetSavingsSettings", audit.Success, TargetSettings, tenant, EventSettingsUpdated, payload)
}

// NewGoal is what a saver asks for.
type NewGoal struct {
	EmployeeID   string
	Name         string
	TargetSantim int64
	TargetDate   *time.Time
	CreatedBy    string
}

// Validate checks the goal's fields.
func (g *NewGoal) Validate(today time.Time) error {
	g.Name = strings.TrimSpace(g.Name)
	if err := field.Text("name", g.Name, MaxNameLength); err != nil {
		return err
	}
	if g.Name == "" {
		return &field.Error{Field: "name", Problem: "is required"}
	}
	if g.TargetSantim < 1 || g.TargetSantim > MaxTargetSantim {
		return &field.Error{Field: "targetSantim", Problem: "must be 1 to 100000000000"}
	}
	if g.TargetDate != nil && g.TargetDate.Before(today.Truncate(24*time.Hour)) {
		return &field.Error{Field: "targetDate", Problem: "must not be in the past"}
	}
	return nil
}

const goalCols = `id, tenant_id, employee_id, name, target_santim, target_date, status, created_by, created_at, closed_at`

func scanGoal(row pgx.Row) (Goal, error) {
	var g Goal
	err := row.Scan(&g.ID, &g.TenantID, &g.EmployeeID, &g.Name, &g.TargetSantim, &g.TargetDate, &g.Status, &g.CreatedBy, &g.CreatedAt, &g.ClosedAt)
	return g, err
}

// CreateGoal creates an ACTIVE goal for an ACTIVE employee (audit CreateSavingsGoal,
// savings.goal_created.v1).
func CreateGoal(ctx context.Context, tx pgx.Tx, g NewGoal, now time.Time) (Goal, error) {
	if err := g.Validate(now); err != nil {
		return Goal{}, err
	}
	tenant := tenancy.TenantID(ctx)
	e, err := employees.ByID(ctx, tx, tenant, g.EmployeeID)
	if errors.Is(err, employees.ErrNotFound) {
		return Goal{}, refuse(CodeGoalNotFound)
	}
	if err != nil {
		return Goal{}, err
	}
	if e.Status != employees.Active {
		return Goal{}, refuse(CodeEmployeeNotActive)
	}
	out, err := scanGoal(tx.QueryRow(ctx, `INSERT INTO app.savings_goals (id, tenant_id, employee_id, name, target_santim, target_date, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+goalCols, NewGoalID(), tenant, g.EmployeeID, g.Name, g.TargetSantim, g.TargetDate, g.CreatedBy))
	if err != nil {
		return Goal{}, err
	}
	payload := map[string]any{"goalId": out.ID, "employeeId": out.EmployeeID, "targetSantim": out.TargetSantim}
	return out, record(ctx, tx, "CreateSavingsGoal", audit.Success, TargetGoal, out.ID, EventGoalCreated, payload)
}

// ListGoals pages an employee's goals by id (after: the previous page's last id).
func ListGoals(ctx context.Context, tx pgx.Tx, employeeID, after string, limit int) ([]Goal, error) {
	rows, err := tx.Query(ctx, `SELECT `+goalCols+` FROM app.savings_goals
		WHERE tenant_id = $1 AND employee_id = $2 AND ($3 = '' OR id > $3) ORDER BY id LIMIT $4`,
		tenancy.TenantID(ctx), employeeID, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Goal, error) { return scanGoal(r) })
}

// OpenGoals are the employee's goals that are not CLOSED (those that may hold money), by id.
func OpenGoals(ctx context.Context, tx pgx.Tx, employeeID string) ([]Goal, error) {
	rows, err := tx.Query(ctx, `SELECT `+goalCols+` FROM app.savings_goals
		WHERE tenant_id = $1 AND employee_id = $2 AND status <> $3 ORDER BY id`, tenancy.TenantID(ctx), employeeID, GoalClosed)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Goal, error) { return scanGoal(r) })
}

// GoalOf is the employee's goal id (CodeGoalNotFound for anyone else's, or none).
func GoalOf(ctx context.Context, tx db.Writer, employeeID, goalID string) (Goal, error) {
	return goalOf(ctx, tx, employeeID, goalID, "")
}

// goalOf is GoalOf with a locking clause (" FOR SHARE", or "").
func goalOf(ctx context.Context, tx db.Writer, employeeID, goalID, lock string) (Goal, error) {
	g, err := scanGoal(tx.QueryRow(ctx, `SELECT `+goalCols+` FROM app.savings_goals WHERE tenant_id = $1 AND id = $2 AND employee_id = $3`+lock,
		tenancy.TenantID(ctx), goalID, employeeID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Goal{}, refuse(CodeGoalNotFound)
	}
	return g, err
}

// ErrGoalBusy: another withdrawal of the goal holds its lock; try again shortly.
var ErrGoalBusy = errors.New("savings: the goal is locked by another withdrawal")

// LockGoal locks the goal's row until tx ends: withdrawals of one goal check the ledger's
// available balance and place their hold one at a time. It does not wait (NOWAIT): a goal locked
// by another withdrawal is ErrGoalBusy at once, so waiters never sit on database connections
// while the holder talks to the ledger; the caller retries.
func LockGoal(ctx context.Context, tx pgx.Tx, goalID string) error {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM app.savings_goals WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE NOWAIT`, tenancy.TenantID(ctx), goalID).Scan(&id)
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return refuse(CodeGoalNotFound)
	case errors.As(err, &pe) && pe.Code == pgerrcode.LockNotAvailable:
		return ErrGoalBusy
	}
	return err
}

// LoadPlan reads what moving amount into (Deposit) or out of (Withdrawal) the goal needs. A goal
// that is not the saver's (employeeID; "" skips the check), a deposit into a goal that is not
// ACTIVE, an employee no longer ACTIVE, no payout account or no escrow are refusals.
func LoadPlan(ctx context.Context, tx pgx.Tx, goalID, employeeID string, kind Kind, amount int64) (Plan, error) {
	return loadPlan(ctx, tx, goalID, employeeID, kind, amount, true)
}

// LoadPayrollPlan reads what an auto-save deposit of amount by payroll deduction into the goal
// needs (the payroll-completion saga; src names the mandate): LoadPlan's rules for a deposit
// without the saver's payout account — the money comes from the organization's payroll account,
// which must be at the escrow's partner bank (CodePayrollAccountNotSet otherwise). Refusals:
// CodeGoalNotFound, CodeGoalClosed, CodeEmployeeNotActive, CodeEscrowNotSet,
// CodePayrollAccountNotSet.
func LoadPayrollPlan(ctx context.Context, tx pgx.Tx, goalID string, amount int64, src PayrollSource) (Plan, error) {
	if err := field.Identifier("payroll.mandateId", src.MandateID, field.MaxIdentifier); err != nil {
		return Plan{}, err
	}
	p, err := loadPlan(ctx, tx, goalID, "", Deposit, amount, false)
	if err != nil {
		return Plan{}, err
	}
	s, err := payroll.EffectiveSettings(ctx, tx)
	if err != nil {
		return Plan{}, err
	}
	if s.PayrollAccount == nil || s.PayrollAccount.Partner != p.Escrow.Partner {
		return Plan{}, refuse(CodePayrollAccountNotSet)
	}
	src.Account = BankAccount{Partner: s.PayrollAccount.Partner, AccountNumber: s.PayrollAccount.AccountNumber}
	p.Payroll = &src
	return p, nil
}

// loadPlan is LoadPlan; payout false leaves the saver's payout account out (an auto-save's).
func loadPlan(ctx context.Context, tx pgx.Tx, goalID, employeeID string, kind Kind, amount int64, payout bool) (Plan, error) {
	if kind != Deposit && kind != Withdrawal {
		return Plan{}, &field.Error{Field: "kind", Problem: "must be DEPOSIT or WITHDRAWAL"}
	}
	if amount < 1 || amount > MaxAmountSantim {
		return Plan{}, &field.Error{Field: "amountSantim", Problem: "must be 1 to 100000000000"}
	}
	tenant := tenancy.TenantID(ctx)
	var g Goal
	var err error
	if employeeID != "" {
		g, err = GoalOf(ctx, tx, employeeID, goalID)
	} else {
		g, err = scanGoal(tx.QueryRow(ctx, `SELECT `+goalCols+` FROM app.savings_goals WHERE tenant_id = $1 AND id = $2`, tenant, goalID))
		if errors.Is(err, pgx.ErrNoRows) {
			err = refuse(CodeGoalNotFound)
		}
	}
	if err != nil {
		return Plan{}, err
	}
	if kind == Deposit && g.Status != GoalActive {
		return Plan{}, refuse(CodeGoalClosed)
	}
	e, err := employees.ByID(ctx, tx, tenant, g.EmployeeID)
	if err != nil {
		return Plan{}, err
	}
	if e.Status != employees.Active && kind == Deposit {
		// Only an ACTIVE employee saves more; one on leave, suspended or gone still takes their
		// savings back out (to their payout account, through the same gates).
		return Plan{}, refuse(CodeEmployeeNotActive)
	}
	if payout && (e.Payout.Partner == "" || e.Payout.AccountNumber == "") {
		return Plan{}, refuse(CodePayoutAccountNotSet)
	}
	s, ok, err := GetSettings(ctx, tx)
	if err != nil {
		return Plan{}, err
	}
	if !ok {
		return Plan{}, refuse(CodeEscrowNotSet)
	}
	p := Plan{GoalID: g.ID, EmployeeID: g.EmployeeID, Kind: kind, AmountSantim: amount, Escrow: s.Escrow}
	if payout {
		p.Payout = BankAccount{Partner: e.Payout.Partner, AccountNumber: e.Payout.AccountNumber, HolderName: e.Payout.HolderName}
	}
	return p, nil
}

const movementCols = `id, tenant_id, goal_id, kind, amount_santim, status, workflow_id, source, coalesce(mandate_id, ''), ledger_tx_id,
	coalesce(transfer_id, ''), coalesce(failure_reason, ''), requested_by, created_at, settled_at`

func scanMovement(row pgx.Row) (Movement, error) {
	var m Movement
	err := row.Scan(&m.ID, &m.TenantID, &m.GoalID, &m.Kind, &m.AmountSantim, &m.Status, &m.WorkflowID, &m.Source, &m.MandateID, &m.LedgerTxID,
		&m.TransferID, &m.FailureReason, &m.RequestedBy, &m.CreatedAt, &m.SettledAt)
	return m, err
}

// MovementOf is the movement a saga run recorded; ok is false before it recorded one.
func MovementOf(ctx context.Context, tx pgx.Tx, workflowID string) (m Movement, ok bool, err error) {
	m, err = scanMovement(tx.QueryRow(ctx, `SELECT `+movementCols+` FROM app.savings_movements WHERE tenant_id = $1 AND workflow_id = $2`,
		tenancy.TenantID(ctx), workflowID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Movement{}, false, nil
	}
	return m, err == nil, err
}

// RecordPending records the run's movement PENDING with its ledger hold (audit SavingsDeposit or
// SavingsWithdraw, savings.deposit_initiated.v1 or savings.withdrawal_initiated.v1), its source
// PAYROLL with the mandate for an auto-save; the same run recording again gets its movement back.
// A deposit into a goal that is no longer ACTIVE is CodeGoalClosed (CloseGoal's race), one planned
// at another escrow than the one set now CodeEscrowChanged (PutSettings' race).
func RecordPending(ctx context.Context, tx pgx.Tx, p Plan, workflowID, ledgerTxID, requestedBy string) (Movement, error) {
	if m, ok, err := MovementOf(ctx, tx, workflowID); err != nil || ok {
		return m, err
	}
	if p.Kind == Deposit {
		// The goal's status again, under a lock a close (FOR UPDATE) waits for and holds off:
		// a deposit is never recorded into a goal closed since its plan was read.
		var status string
		if err := tx.QueryRow(ctx, `SELECT status FROM app.savings_goals WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE`,
			tenancy.TenantID(ctx), p.GoalID).Scan(&status); err != nil {
			return Movement{}, err
		}
		if status != GoalActive {
			return Movement{}, refuse(CodeGoalClosed)
		}
		// The escrow again, under a lock PutSettings (FOR UPDATE) waits for and holds off: a deposit
		// is never recorded at an escrow changed since its plan was read, whose transfer would pay
		// the old account. (A withdrawal needs savings held, and while any are PutSettings changes
		// nothing.)
		var current BankAccount
		err := tx.QueryRow(ctx, `SELECT escrow_partner, escrow_account FROM app.savings_settings WHERE tenant_id = $1 FOR SHARE`,
			tenancy.TenantID(ctx)).Scan(&current.Partner, &current.AccountNumber)
		if errors.Is(err, pgx.ErrNoRows) {
			return Movement{}, refuse(CodeEscrowNotSet)
		}
		if err != nil {
			return Movement{}, err
		}
		if current.Partner != p.Escrow.Partner || current.AccountNumber != p.Escrow.AccountNumber {
			return Movement{}, refuse(CodeEscrowChanged)
		}
	}
	source, mandate := SourceSaver, (*string)(nil)
	if p.Payroll != nil {
		source, mandate = SourcePayroll, &p.Payroll.MandateID
	}
	m, err := scanMovement(tx.QueryRow(ctx, `INSERT INTO app.savings_movements
		(id, tenant_id, goal_id, kind, amount_santim, status, workflow_id, source, mandate_id, ledger_tx_id, requested_by)
		VALUES ($1, $2, $3, $4, $5, 'PENDING', $6, $7, $8, $9, $10) RETURNING `+movementCols,
		newMovementID(), tenancy.TenantID(ctx), p.GoalID, string(p.Kind), p.AmountSantim, workflowID, source, mandate, ledgerTxID, requestedBy))
	if err != nil {
		return Movement{}, err
	}
	action, event := "SavingsDeposit", EventDepositInitiated
	if p.Kind == Withdrawal {
		action, event = "SavingsWithdraw", EventWithdrawalInitiated
	}
	return m, record(ctx, tx, action, audit.Success, TargetGoal, p.GoalID, event, movementPayload(m))
}

// MarkSettled moves the run's movement PENDING → SETTLED (audit SavingsDeposited or
// SavingsWithdrawn, savings.deposited.v1 or savings.withdrawn.v1, and
// savings.bank_transfer_settled.v1, naming reference, the transfer's partner reference, when
// given); again is a no-op.
func MarkSettled(ctx context.Context, tx pgx.Tx, workflowID, transferID, reference string, now time.Time) (Movement, error) {
	return conclude(ctx, tx, workflowID, Settled, transferID, reference, "", now)
}

// MarkFailed moves the run's movement PENDING → FAILED with the failure's code (audit
// SavingsDepositFailed or SavingsWithdrawalFailed, savings.deposit_failed.v1 or
// savings.withdrawal_failed.v1); again is a no-op.
func MarkFailed(ctx context.Context, tx pgx.Tx, workflowID, reason string, now time.Time) (Movement, error) {
	return conclude(ctx, tx, workflowID, Failed, "", "", settle.FailureReason(reason), now)
}

func conclude(ctx context.Context, tx pgx.Tx, workflowID string, to Status, transferID, reference, reason string, now time.Time) (Movement, error) {
	m, changed, err := settle.Conclude(ctx, tx, settle.Table[Movement]{Name: "app.savings_movements", Columns: movementCols, Scan: scanMovement,
		Pending: func(m Movement) bool { return m.Status == Pending }, NotFound: refuse(CodeMovementNotFound)},
		workflowID, string(to), transferID, reason, now)
	if err != nil || !changed {
		return m, err
	}
	var action, event string
	outcome := audit.Success
	switch {
	case m.Kind == Deposit && to == Settled:
		action, event = "SavingsDeposited", EventDeposited
	case m.Kind == Deposit:
		action, event, outcome = "SavingsDepositFailed", EventDepositFailed, audit.Failed
	case to == Settled:
		action, event = "SavingsWithdrawn", EventWithdrawn
	default:
		action, event, outcome = "SavingsWithdrawalFailed", EventWithdrawalFailed, audit.Failed
	}
	if err := record(ctx, tx, action, outcome, TargetGoal, m.GoalID, event, movementPayload(m)); err != nil || to != Settled {
		return m, err
	}
	// Only here, where the movement changed: a step run again found it no longer PENDING.
	return m, outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: money.DomainSavings, Kind: strings.ToLower(string(m.Kind)),
		SubjectID: m.ID, AmountSantim: m.AmountSantim, TransferID: m.TransferID, PartnerReference: reference, Keys: map[string]any{"movementId": m.ID, "goalId": m.GoalID}})
}

func movementPayload(m Movement) map[string]any {
	p := map[string]any{"movementId": m.ID, "goalId": m.GoalID, "kind": string(m.Kind), "amountSantim": m.AmountSantim,
		"status": string(m.Status), "workflowId": m.WorkflowID, "ledgerTxId": m.LedgerTxID, "source": m.Source}
	if m.MandateID != "" {
		p["mandateId"] = m.MandateID
	}
	if m.TransferID != "" {
		p["transferId"] = m.TransferID
	}
	if m.FailureReason != "" {
		p["reason"] = m.FailureReason
	}
	return p
}

// record writes a state change's audit row and outbox event in tx.
func record(ctx context.Context, tx db.Writer, action string, outcome audit.Outcome, targetType, targetID, event string, payload map[string]any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: outcome, TargetType: targetType, TargetID: targetID, Details: payload}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}
