package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/ledger"
)

// Registered names of the savings sagas' steps (histories reference them).
const (
	SavingsLoadPlanActivity          = "savings.LoadPlan"
	SavingsRecordDepositActivity     = "savings.RecordDeposit"
	SavingsReserveWithdrawalActivity = "savings.ReserveWithdrawal"
	SavingsMarkSettledActivity       = "savings.MarkSettled"
	SavingsMarkFailedActivity        = "savings.MarkFailed"
)

// The steps, typed (what workflows call).
var (
	SavingsLoadPlan          = Activity[SavingsStep, savings.Plan]{SavingsLoadPlanActivity}
	SavingsRecordDeposit     = Activity[SavingsStep, savings.Movement]{SavingsRecordDepositActivity}
	SavingsReserveWithdrawal = Activity[SavingsReserve, LedgerPostResult]{SavingsReserveWithdrawalActivity}
	SavingsMarkSettled       = Activity[SavingsStep, savings.Movement]{SavingsMarkSettledActivity}
	SavingsMarkFailed        = Activity[SavingsStep, savings.Movement]{SavingsMarkFailedActivity}
)

// SavingsSaga is the actor of the savings sagas' steps and gates: tenancy.System(SavingsSaga).
const SavingsSaga = "savings"

// The subject and target of the savings gates: the saver (an employee) is screened, the goal is
// the audit rows' target.
const (
	SavingsGateSubjectType = "EMPLOYEE"
	SavingsGateTargetType  = savings.TargetGoal
)

// Savings holds the deposit and withdraw sagas' steps: internal/savings's functions in one
// tenant-scoped transaction each (recordStep), acting as system:savings; the store's refusals
// are non-retryable errors typed by their savings code. ReserveWithdrawal also reads and posts to
// the ledger while it holds the goal's row lock.
type Savings struct {
	DB     *pgxpool.Pool // the runtime role (wagerail_app)
	Ledger *ledger.Client
	// Now is the steps' clock (settled_at); nil is time.Now.
	Now Clock
}

// SavingsStep names the run's goal and movement; the other fields belong to the steps that use them.
type SavingsStep struct {
	Run
	GoalID       string
	EmployeeID   string       // LoadPlan: the saver ("" skips the ownership check)
	Kind         savings.Kind // LoadPlan
	AmountSantim int64        // LoadPlan
	Plan         savings.Plan // RecordDeposit
	LedgerTxID   string       // RecordDeposit
	ActorID      string       // RecordDeposit: the user who asked
	TransferID   string       // MarkSettled
	// Reference is the transfer's partner reference (MarkSettled; "" in runs recorded before it
	// was passed: the settled event then names none).
	Reference string `json:",omitempty"`
	Reason    string // MarkFailed: the failure's code

	// Payroll: an auto-save deposit by payroll deduction (LoadPlan: savings.LoadPayrollPlan).
	Payroll *savings.PayrollSource `json:",omitempty"`
}

// SavingsReserve is ReserveWithdrawal's input: the plan and the pending posting that pays it.
type SavingsReserve struct {
	Run
	Plan    savings.Plan
	ActorID string
	Posting LedgerPostInput
}

// LoadPlan reads what the movement needs (SAVINGS_GOAL_NOT_FOUND, SAVINGS_GOAL_CLOSED,
// SAVINGS_ESCROW_NOT_SET, SAVINGS_EMPLOYEE_NOT_ACTIVE, SAVINGS_PAYOUT_ACCOUNT_NOT_SET and, for an
// auto-save deposit by payroll deduction, SAVINGS_PAYROLL_ACCOUNT_NOT_SET are non-retryable).
func (a *Savings) LoadPlan(ctx context.Context, in SavingsStep) (savings.Plan, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (savings.Plan, error) {
		if in.Payroll != nil {
			if in.Kind != savings.Deposit {
				return savings.Plan{}, &field.Error{Field: "kind", Problem: "must be DEPOSIT for a payroll deduction"}
			}
			return savings.LoadPayrollPlan(ctx, tx, in.GoalID, in.AmountSantim, *in.Payroll)
		}
		return savings.LoadPlan(ctx, tx, in.GoalID, in.EmployeeID, in.Kind, in.AmountSantim)
	})
}

// RecordDeposit records the deposit PENDING with its ledger hold (audit SavingsDeposit,
// savings.deposit_initiated.v1); the same run again is a no-op.
func (a *Savings) RecordDeposit(ctx context.Context, in SavingsStep) (savings.Movement, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (savings.Movement, error) {
		return savings.RecordPending(ctx, tx, in.Plan, in.WorkflowID, in.LedgerTxID, in.ActorID)
	})
}

// ReserveWithdrawal places the withdrawal's hold, one withdrawal of a goal at a time: with the
// goal's row locked it reads the ledger's available balance of savings-held:<goal> (posted minus
// the open holds of other withdrawals), refuses SAVINGS_INSUFFICIENT_BALANCE when the amount is
// more, else posts the PENDING transaction and records the movement, then lets the lock go. A
// retried run finds its own movement (or its own posting, whose hold it does not count against
// itself) and records nothing twice.
func (a *Savings) ReserveWithdrawal(ctx context.Context, in SavingsReserve) (LedgerPostResult, error) {
	if a.Ledger == nil {
		return LedgerPostResult{}, misconfigured("savings: no ledger client configured")
	}
	step := SavingsStep{Run: in.Run, GoalID: in.Plan.GoalID, ActorID: in.ActorID}
	return recordValue(ctx, a.inTx, step, func(ctx context.Context, tx pgx.Tx) (LedgerPostResult, error) {
		insufficient, _ := savings.RefusalOf(savings.CodeInsufficientBalance)
		return (&Money{Ledger: a.Ledger}).reserveLocked(ctx, in.TenantID, in.Posting, lockedReservation{
			Lock: func() error { return savings.LockGoal(ctx, tx, in.Plan.GoalID) },
			Recorded: func() (string, bool, error) {
				m, ok, err := savings.MovementOf(ctx, tx, in.WorkflowID)
				return m.LedgerTxID, ok, err
			},
			Account: savings.Account(in.Plan.GoalID), AmountSantim: in.Plan.AmountSantim, Insufficient: insufficient,
			Record: func(txID string) error {
				_, err := savings.RecordPending(ctx, tx, in.Plan, in.WorkflowID, txID, in.ActorID)
				return err
			},
		})
	})
}

// MarkSettled moves the movement PENDING → SETTLED (savings.deposited.v1 or savings.withdrawn.v1,
// savings.bank_transfer_settled.v1).
func (a *Savings) MarkSettled(ctx context.Context, in SavingsStep) (savings.Movement, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (savings.Movement, error) {
		return savings.MarkSettled(ctx, tx, in.WorkflowID, in.TransferID, in.Reference, a.Now.Now())
	})
}

// MarkFailed moves the movement PENDING → FAILED with the failure's code.
func (a *Savings) MarkFailed(ctx context.Context, in SavingsStep) (savings.Movement, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (savings.Movement, error) {
		return savings.MarkFailed(ctx, tx, in.WorkflowID, in.Reason, a.Now.Now())
	})
}

// Register registers the steps.
func (a *Savings) Register(r worker.ActivityRegistry) {
	SavingsLoadPlan.Register(r, a.LoadPlan)
	SavingsRecordDeposit.Register(r, a.RecordDeposit)
	SavingsReserveWithdrawal.Register(r, a.ReserveWithdrawal)
	SavingsMarkSettled.Register(r, a.MarkSettled)
	SavingsMarkFailed.Register(r, a.MarkFailed)
}

func (a *Savings) inTx(ctx context.Context, in SavingsStep, fn func(context.Context, pgx.Tx) error) error {
	return recordStep(ctx, a.DB, in.Run, SavingsSaga,
		errors.Join(field.Identifier("goalId", in.GoalID, field.MaxIdentifier), field.Text("reason", in.Reason, field.MaxText)),
		savingsError, fn, "goal_id", in.GoalID, "tx_id", in.LedgerTxID, "transfer_id", in.TransferID)
}

// savingsError types a savings refusal by its code (non-retryable); a goal locked by another
// withdrawal as retryable SAVINGS_GOAL_BUSY; anything else as temporalError does.
func savingsError(err error) error {
	return lockedOwnerError(err, savings.ErrGoalBusy, SavingsGoalBusy, temporalError)
}

// SavingsGoalBusy types a reservation that found the goal locked by another (retryable).
const SavingsGoalBusy = "SAVINGS_GOAL_BUSY"
