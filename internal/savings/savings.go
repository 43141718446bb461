// Package savings is savings goals (issue 29): a saver (an employee linked to a login) sets goals
// and moves money into and out of them. The money is held in the organization's savings escrow
// account at its partner bank; the ledger records what the escrow owes each goal as the liability
// savings-held:<goal>, mirrored by partner-bank:<partner>:<escrow account>. A goal's saved amount
// is that account's ledger balance, read on every call — never a stored column.
//
//   - Deposit (saga): the saver's payout account → the escrow account. PENDING ledger transaction
//     Dr partner-bank:<partner>:<escrow> / Cr savings-held:<goal>, committed when the transfer
//     settles (savings.deposited.v1), voided when it fails (savings.deposit_failed.v1).
//   - Withdraw (saga): the escrow account → the saver's payout account. Dr savings-held:<goal> /
//     Cr partner-bank:<partner>:<escrow>, placed as a hold only after the goal's row is locked and
//     the ledger's available balance (posted minus open withdrawal holds) covers it, so racing
//     withdrawals never take a goal below zero; committed on settlement (savings.withdrawn.v1),
//     voided on failure (savings.withdrawal_failed.v1), which makes the amount available again.
//   - Auto-save (issue 29): the saver opts in to save a fixed amount each pay period by payroll
//     deduction (POST /api/savings/goals/<id>/autosave-mandate: CreateAutosaveMandate, a PENDING
//     SAVINGS_AUTOSAVE mandate of internal/payroll/product_mandate.go, taken within the protection
//     policy by the calculator). A payroll run's completion deposits what it withheld: the deposit
//     saga with a PayrollSource (LoadPayrollPlan), the money from the employer's payroll account at
//     the partner bank (where the withheld pay stayed) to the escrow, the journal a deposit's, the
//     movement's source PAYROLL with its mandate.
//   - Close (CloseGoal): a goal that holds nothing and has nothing in flight becomes CLOSED, its
//     live auto-save mandate cancelled in the same transaction; a CLOSED goal takes no deposit and
//     no opt-in, and what it could still hold (nothing) may be withdrawn.
package savings

import (
	"time"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/ledger/chart"
)

// Account is the ledger account of what the escrow holds for goal: savings-held:<goal>.
func Account(goalID string) string { return chart.SavingsHeld + ":" + goalID }

// Bounds of a goal.
const (
	MaxTargetSantim = int64(100_000_000_000) // 1 billion ETB
	MaxAmountSantim = MaxTargetSantim
	MaxNameLength   = 100
)

// Goal states: an ACTIVE goal takes deposits and auto-save; a CLOSED one only gives back what it
// holds (SAVINGS_GOAL_CLOSED).
const (
	GoalActive = "ACTIVE"
	GoalClosed = "CLOSED"
)

// Where a movement's money came from (a withdrawal's is always SourceSaver): the saver's payout
// account, or the employer's payroll account for an auto-save deposit by payroll deduction.
const (
	SourceSaver   = "SAVER"
	SourcePayroll = "PAYROLL"
)

// Bounds of an auto-save mandate's amount per pay period (the deposit's).
const (
	MinAutosaveSantim = int64(1)
	MaxAutosaveSantim = MaxAmountSantim
)

// PayrollSource is an auto-save deposit by payroll deduction: the SAVINGS_AUTOSAVE mandate the
// run collected, and (set by LoadPayrollPlan) the employer's payroll account the deposit is paid
// from.
type PayrollSource struct {
	MandateID string
	Account   BankAccount `json:",omitempty"`
}

// Kind is a movement's direction.
type Kind string

const (
	Deposit    Kind = "DEPOSIT"
	Withdrawal Kind = "WITHDRAWAL"
)

// Status is a movement's state: PENDING while its transfer is in flight, then SETTLED or FAILED.
type Status string

const (
	Pending Status = "PENDING"
	Settled Status = "SETTLED"
	Failed  Status = "FAILED"
)

// BankAccount is an account at a partner bank.
type BankAccount struct {
	Partner, AccountNumber, HolderName string
}

// Settings is the organization's savings escrow account.
type Settings struct {
	Escrow    BankAccount
	UpdatedBy string
	UpdatedAt time.Time
}

// Goal is one savings goal. Its saved amount is the ledger's (Account).
type Goal struct {
	ID, TenantID, EmployeeID string
	Name                     string
	TargetSantim             int64
	TargetDate               *time.Time
	Status                   string
	CreatedBy                string
	CreatedAt                time.Time
	ClosedAt                 *time.Time // set when CLOSED (CloseGoal)
}

// Movement is one deposit or withdrawal: one saga run.
type Movement struct {
	ID, TenantID, GoalID string
	Kind                 Kind
	AmountSantim         int64
	Status               Status
	WorkflowID           string
	Source               string // SourceSaver or SourcePayroll
	MandateID            string // a payroll deposit's mandate ("" otherwise)
	LedgerTxID           string
	TransferID           string
	FailureReason        string
	RequestedBy          string
	CreatedAt            time.Time
	SettledAt            *time.Time
}

// Answers reports whether movement m is what a saver's request asks for: the same goal, kind and
// amount. A movement is keyed by its saga's workflow id forever, but that id derives from the
// Idempotency-Key alone and the key's idempotency record is deleted after
// idempotency.Retention: a key sent again after that with another request names this movement,
// which must not answer it (the API refuses IDEMPOTENCY_KEY_REUSED).
func (m Movement) Answers(goalID string, kind Kind, amountSantim int64) bool {
	return m.GoalID == goalID && m.Kind == kind && m.AmountSantim == amountSantim
}

// Plan is what a deposit or withdrawal saga needs: the goal, the saver, the escrow and the
// saver's payout account, the amount; Payroll for an auto-save deposit by payroll deduction (then
// Payout is unset: the money comes from Payroll.Account).
type Plan struct {
	GoalID       string
	EmployeeID   string
	Kind         Kind
	AmountSantim int64
	Escrow       BankAccount
	Payout       BankAccount
	Payroll      *PayrollSource `json:",omitempty"`
}

// From and To are the plan's transfer: a deposit pays the escrow from the payout account (an
// auto-save's from the payroll account), a withdrawal the other way.
func (p Plan) From() BankAccount {
	if p.Kind == Deposit {
		if p.Payroll != nil {
			return p.Payroll.Account
		}
		return p.Payout
	}
	return p.Escrow
}

func (p Plan) To() BankAccount {
	if p.Kind == Deposit {
		return p.Escrow
	}
	return p.Payout
}

// EscrowMirror is the ledger account mirroring the escrow: partner-bank:<partner>:<account>.
func (p Plan) EscrowMirror() string {
	return chart.PartnerBankAccount(p.Escrow.Partner, p.Escrow.AccountNumber)
}

// Progress is a goal's saved amount against its target, in basis points (0 to 10000, capped).
func Progress(savedSantim, targetSantim int64) int64 {
	if savedSantim <= 0 || targetSantim <= 0 {
		return 0
	}
	if savedSantim >= targetSantim {
		return 10_000
	}
	// savedSantim < targetSantim ≤ MaxTargetSantim: the product fits in int64.
	return savedSantim * 10_000 / targetSantim
}

// NewGoalID and newMovementID are the ids: a prefix and a UUIDv7 (id order is creation order).
func NewGoalID() string     { return "sgl_" + identity.NewID() }
func newMovementID() string { return "smv_" + identity.NewID() }
