package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger"
)

// Registered names of the wallet transfer saga's steps (histories reference them).
const (
	WalletLoadPlanActivity    = "wallet.LoadPlan"
	WalletReserveActivity     = "wallet.Reserve"
	WalletMarkSettledActivity = "wallet.MarkSettled"
	WalletMarkFailedActivity  = "wallet.MarkFailed"
)

// The steps, typed (what workflows call).
var (
	WalletLoadPlan    = Activity[WalletStep, wallet.Plan]{WalletLoadPlanActivity}
	WalletReserve     = Activity[WalletReserveInput, LedgerPostResult]{WalletReserveActivity}
	WalletMarkSettled = Activity[WalletStep, wallet.Transfer]{WalletMarkSettledActivity}
	WalletMarkFailed  = Activity[WalletStep, wallet.Transfer]{WalletMarkFailedActivity}
)

// WalletSaga is the actor of the wallet transfer saga's steps and gates: tenancy.System(WalletSaga).
const WalletSaga = "wallet-transfer"

// The subject and target of the wallet gates: the holder (an employee) is screened and is the
// audit rows' target (the Wallet of that employee).
const (
	WalletGateSubjectType = "EMPLOYEE"
	WalletGateTargetType  = wallet.TargetWallet
)

// WalletBusy types a reservation that found the wallet locked by another transfer (retryable).
const WalletBusy = "WALLET_BUSY"

// Wallet holds the wallet transfer saga's steps: internal/wallet's functions in one
// tenant-scoped transaction each (recordStep), acting as system:wallet-transfer; the store's
// refusals are non-retryable errors typed by their wallet code. Reserve also reads and posts to
// the ledger while it holds the wallet's lock.
type Wallet struct {
	DB     *pgxpool.Pool // the runtime role (wagerail_app)
	Ledger *ledger.Client
	// Now is the steps' clock (settled_at); nil is time.Now.
	Now Clock
}

// WalletStep names the run's wallet holder; the other fields belong to the steps that use them.
type WalletStep struct {
	Run
	EmployeeID   string
	AmountSantim int64              // LoadPlan
	Destination  wallet.BankAccount // LoadPlan
	TransferID   string             // MarkSettled
	// Reference is the transfer's partner reference (MarkSettled; "" in runs recorded before it
	// was passed: the settled event then names none).
	Reference string `json:",omitempty"`
	Reason    string // MarkFailed: the failure's code
}

// WalletReserveInput is Reserve's input: the plan and the pending posting that pays it.
type WalletReserveInput struct {
	Run
	Plan    wallet.Plan
	ActorID string
	Posting LedgerPostInput
}

// LoadPlan reads what the transfer needs (WALLET_SETTINGS_NOT_SET, WALLET_EMPLOYEE_NOT_ACTIVE,
// WALLET_DESTINATION_PARTNER_UNSUPPORTED, WALLET_DESTINATION_IS_POOL are non-retryable).
func (a *Wallet) LoadPlan(ctx context.Context, in WalletStep) (wallet.Plan, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (wallet.Plan, error) {
		return wallet.LoadPlan(ctx, tx, in.EmployeeID, in.AmountSantim, in.Destination)
	})
}

// Reserve places the transfer's hold, one transfer of a wallet at a time: with the wallet's lock
// held it refuses WALLET_POOL_CHANGED when the pool set now is not the plan's (under the
// settings' share lock, which a pool change waits for: wallet.CheckPool), reads the ledger's
// available balance of payable-to-employee:<employee> (posted minus the open holds of other
// transfers), refuses WALLET_INSUFFICIENT_BALANCE when the amount is more, else posts the
// PENDING transaction and records the transfer, then lets the locks go. A
// retried run finds its own transfer (or its own posting, whose hold it does not count against
// itself) and records nothing twice.
func (a *Wallet) Reserve(ctx context.Context, in WalletReserveInput) (LedgerPostResult, error) {
	if a.Ledger == nil {
		return LedgerPostResult{}, misconfigured("wallet: no ledger client configured")
	}
	step := WalletStep{Run: in.Run, EmployeeID: in.Plan.EmployeeID}
	return recordValue(ctx, a.inTx, step, func(ctx context.Context, tx pgx.Tx) (LedgerPostResult, error) {
		insufficient, _ := wallet.RefusalOf(wallet.CodeInsufficientBalance)
		return (&Money{Ledger: a.Ledger}).reserveLocked(ctx, in.TenantID, in.Posting, lockedReservation{
			Lock: func() error { return wallet.LockWallet(ctx, tx, in.Plan.EmployeeID) },
			Recorded: func() (string, bool, error) {
				t, ok, err := wallet.TransferOf(ctx, tx, in.WorkflowID)
				return t.LedgerTxID, ok, err
			},
			Check:   func() error { return wallet.CheckPool(ctx, tx, in.Plan.Pool) },
			Account: in.Plan.WalletAccount(), AmountSantim: in.Plan.AmountSantim, Insufficient: insufficient,
			Record: func(txID string) error {
				_, err := wallet.RecordPending(ctx, tx, in.Plan, in.WorkflowID, txID, in.ActorID)
				return err
			},
		})
	})
}

// MarkSettled moves the transfer PENDING → SETTLED (wallet.transfer_settled.v1,
// wallet.bank_transfer_settled.v1).
func (a *Wallet) MarkSettled(ctx context.Context, in WalletStep) (wallet.Transfer, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (wallet.Transfer, error) {
		return wallet.MarkSettled(ctx, tx, in.WorkflowID, in.TransferID, in.Reference, a.Now.Now())
	})
}

// MarkFailed moves the transfer PENDING → FAILED with the failure's code (wallet.transfer_failed.v1).
func (a *Wallet) MarkFailed(ctx context.Context, in WalletStep) (wallet.Transfer, error) {
	return recordValue(ctx, a.inTx, in, func(ctx context.Context, tx pgx.Tx) (wallet.Transfer, error) {
		return wallet.MarkFailed(ctx, tx, in.WorkflowID, in.Reason, a.Now.Now())
	})
}

// Register registers the steps.
func (a *Wallet) Register(r worker.ActivityRegistry) {
	WalletLoadPlan.Register(r, a.LoadPlan)
	WalletReserve.Register(r, a.Reserve)
	WalletMarkSettled.Register(r, a.MarkSettled)
	WalletMarkFailed.Register(r, a.MarkFailed)
}

func (a *Wallet) inTx(ctx context.Context, in WalletStep, fn func(context.Context, pgx.Tx) error) error {
	return recordStep(ctx, a.DB, in.Run, WalletSaga,
		errors.Join(field.Identifier("employeeId", in.EmployeeID, field.MaxIdentifier), field.Text("reason", in.Reason, field.MaxText)),
		walletError, fn, "employee_id", in.EmployeeID, "transfer_id", in.TransferID)
}

// walletError types a wallet refusal by its code (non-retryable); a wallet locked by another
// transfer as retryable WALLET_BUSY; a holder who is not an employee of the tenant as
// non-retryable WALLET_EMPLOYEE_NOT_ACTIVE; anything else as temporalError does.
func walletError(err error) error {
	return lockedOwnerError(err, wallet.ErrWalletBusy, WalletBusy, func(err error) error {
		if errors.Is(err, employees.ErrNotFound) {
			return nonRetryable("the wallet holder is not an employee of this organization", wallet.CodeEmployeeNotActive)
		}
		return temporalError(err)
	})
}
