package savings

import (
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The stable codes of the savings refusals, defined once: the store returns them as
// *payroll.Refusal (the shared refusal value of the newer domains), the deposit and withdraw sagas
// answer their update with them (the ApplicationError's Type), and the API answers each with its
// status and message (RefusalOf for the saga's codes).
const (
	CodeGoalNotFound = "SAVINGS_GOAL_NOT_FOUND"
	CodeEscrowNotSet = "SAVINGS_ESCROW_NOT_SET"
	// The escrow account is not changed while it holds savings or a movement is under way.
	CodeEscrowInUse = "SAVINGS_ESCROW_IN_USE"
	// A deposit planned at the escrow account set before the account changed is not recorded.
	CodeEscrowChanged       = "SAVINGS_ESCROW_CHANGED"
	CodeInsufficientBalance = "SAVINGS_INSUFFICIENT_BALANCE"
	CodeEmployeeNotActive   = "SAVINGS_EMPLOYEE_NOT_ACTIVE"
	CodePayoutAccountNotSet = "SAVINGS_PAYOUT_ACCOUNT_NOT_SET"
	CodeMovementNotFound    = "SAVINGS_MOVEMENT_NOT_FOUND"

	// A goal that is not ACTIVE takes no auto-save opt-in and no deposit.
	CodeGoalClosed = "SAVINGS_GOAL_CLOSED"
	// A goal is closed only when it holds nothing and nothing is in flight (CloseGoal), and no
	// payroll run that has not ended may still take its auto-save.
	CodeGoalNotEmpty      = "SAVINGS_GOAL_NOT_EMPTY"
	CodeGoalAutosaveInRun = "SAVINGS_GOAL_AUTOSAVE_IN_RUN"
	// An auto-save deposit (PayrollSource) the plan refuses: the organization has no payroll
	// account, or one at another partner than the savings escrow's.
	CodePayrollAccountNotSet = "SAVINGS_PAYROLL_ACCOUNT_NOT_SET"

	// The gates of the deposit and withdraw sagas.
	CodeKycNotApproved     = "SAVINGS_KYC_NOT_APPROVED"
	CodeSanctionsBlocked   = "SAVINGS_SANCTIONS_BLOCKED"
	CodeDestinationInvalid = "SAVINGS_ACCOUNT_INVALID"
	CodeAccountMismatch    = "ACCOUNT_MISMATCH"
	CodePartnerUnavailable = "SAVINGS_PARTNER_UNAVAILABLE"
	CodeLedgerUnavailable  = "SAVINGS_LEDGER_UNAVAILABLE"
)

var refusals = refusal.Table{
	CodeGoalNotFound: {Status: http.StatusNotFound, Message: "no such savings goal of yours in this organization"},
	CodeEscrowNotSet: {Status: http.StatusConflict, Message: "the organization has not set its savings escrow account (PUT /api/savings/settings)"},
	CodeEscrowInUse: {Status: http.StatusConflict,
		Message: "the savings escrow account holds savers' money or a deposit or withdrawal is under way: it cannot be changed until the goals are emptied"},
	CodeEscrowChanged: {Status: http.StatusConflict,
		Message: "the savings escrow account changed while the deposit was being made; nothing moved, try again with a new key"},
	CodeInsufficientBalance: {Status: http.StatusConflict, Message: "the goal's available balance is less than the amount"},
	CodeEmployeeNotActive:   {Status: http.StatusConflict, Message: "only an ACTIVE employee may save"},
	CodePayoutAccountNotSet: {Status: http.StatusConflict, Message: "the employee has no payout account to save from or withdraw to"},
	CodeMovementNotFound:    {Status: http.StatusNotFound, Message: "no such savings deposit or withdrawal"},
	CodeKycNotApproved:      {Status: http.StatusUnprocessableEntity, Message: "the saver's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:    {Status: http.StatusUnprocessableEntity, Message: "the saver did not pass sanctions screening"},
	CodeDestinationInvalid:  {Status: http.StatusConflict, Message: "the partner bank did not confirm the saver's payout account"},
	CodeAccountMismatch:     {Status: http.StatusConflict, Message: "the payout account's holder name at the partner bank does not match the saver's"},
	CodePartnerUnavailable:  {Status: http.StatusServiceUnavailable, Message: "the partner bank could not be asked; nothing moved, try again later with a new key"},
	CodeLedgerUnavailable:   {Status: http.StatusServiceUnavailable, Message: "the ledger could not be read; nothing moved, try again later with a new key"},

	CodeGoalClosed: {Status: http.StatusConflict, Message: "the savings goal is closed: it takes no deposit and no auto-save"},
	CodeGoalNotEmpty: {Status: http.StatusConflict,
		Message: "the savings goal holds money or has a deposit or withdrawal in flight: withdraw everything, then close it"},
	CodeGoalAutosaveInRun: {Status: http.StatusConflict,
		Message: "a payroll run that has not completed withheld (or may withhold) an auto-save for this goal: close it once the run completes"},
	CodePayrollAccountNotSet: {Status: http.StatusConflict,
		Message: "the organization has no payroll account at the savings escrow's partner bank (POST /api/payroll/tenant-settings)"},
}

// RefusalOf is code's answer; ok is false for a code that is not savings'.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

// refuse is the store's error for code.
func refuse(code string) *refusal.Refusal { return refusals.Error(code) }
