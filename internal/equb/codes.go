package equb

import (
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The stable API codes of the equb stores' and sagas' refusals, defined once (like
// internal/lending/codes.go): the stores return them as *payroll.Refusal, the sagas answer their
// update with them (the ApplicationError's Type) and the API answers each with RefusalOf's status
// and public message.
const (
	CodeGroupNotFound        = "EQUB_GROUP_NOT_FOUND"
	CodeCycleNotFound        = "EQUB_CYCLE_NOT_FOUND"
	CodeNotMember            = "EQUB_NOT_MEMBER" // 404: the caller is no ACTIVE member of the group
	CodeAlreadyMember        = "EQUB_ALREADY_MEMBER"
	CodeGroupFull            = "EQUB_GROUP_FULL"
	CodeChangesLocked        = "EQUB_CHANGES_LOCKED"
	CodeSettlementRequired   = "EQUB_SETTLEMENT_REQUIRED"
	CodeMoneyInFlight        = "EQUB_MONEY_IN_FLIGHT"
	CodeRecipientCannotLeave = "EQUB_RECIPIENT_CANNOT_LEAVE"
	CodeMandateInOpenRun     = "EQUB_MANDATE_IN_OPEN_RUN"
	CodeNotEnoughMembers     = "EQUB_NOT_ENOUGH_MEMBERS"
	CodeCycleInProgress      = "EQUB_CYCLE_IN_PROGRESS"
	CodeGroupCompleted       = "EQUB_GROUP_COMPLETED"
	CodeEmployeeNotActive    = "EQUB_EMPLOYEE_NOT_ACTIVE"
	CodeRejoinNotAllowed     = "EQUB_REJOIN_NOT_ALLOWED"
	CodeCycleNotOpen         = "EQUB_CYCLE_NOT_OPEN"
	CodeEscrowNotActive      = "EQUB_ESCROW_NOT_ACTIVE"
	CodeAlreadyContributed   = "EQUB_ALREADY_CONTRIBUTED"
	CodeContributionNotDue   = "EQUB_CONTRIBUTION_NOT_DUE"
	CodeContributionsPending = "EQUB_CONTRIBUTIONS_OUTSTANDING"
	CodeAlreadyPaidOut       = "EQUB_ALREADY_PAID_OUT"
	CodeMoneyMovementOff     = "EQUB_MONEY_MOVEMENT_DISABLED"
	// The escrow reconciliation's switch (EQUB_ESCROW_RECON_ENABLED) is off.
	CodeEscrowReconOff = "EQUB_ESCROW_RECON_DISABLED"
	// The sagas' account gate (the member's account, the recipient's account) and a partner
	// that cannot be asked (fail closed).
	CodeAccountInvalid = "EQUB_ACCOUNT_INVALID"
	// A contribution by payroll deduction (PayrollSource) the plan refuses: the run withheld
	// another amount than the cycle's contribution; the organization has no payroll account, or
	// one at another partner than the escrow's.
	CodeAmountMismatch       = "EQUB_CONTRIBUTION_AMOUNT_MISMATCH"
	CodePayrollAccountNotSet = "EQUB_PAYROLL_ACCOUNT_NOT_SET"
	CodePartnerUnavailable   = "EQUB_PARTNER_UNAVAILABLE"
	// The saga the Idempotency-Key names recorded another group's or member's contribution, or
	// another cycle's payout (the key's idempotency record expired, and the key was sent again
	// for a new request): Contribution.Answers, Payout.Answers.
	CodeKeyReused = "IDEMPOTENCY_KEY_REUSED"
)

var refusals = refusal.Table{
	CodeGroupNotFound:        {Status: http.StatusNotFound, Message: "no such equb group in this organization"},
	CodeCycleNotFound:        {Status: http.StatusNotFound, Message: "no such cycle in this equb group"},
	CodeNotMember:            {Status: http.StatusNotFound, Message: "no such equb group among yours"},
	CodeAlreadyMember:        {Status: http.StatusConflict, Message: "you are already a member of this equb group"},
	CodeGroupFull:            {Status: http.StatusConflict, Message: "the equb group has as many members as it allows"},
	CodeChangesLocked:        {Status: http.StatusConflict, Message: "the group's first cycle has started and the group does not allow joining or leaving after it"},
	CodeSettlementRequired:   {Status: http.StatusConflict, Message: "leaving now leaves a balance to settle (details.settlementSantim: > 0 the group owes you, < 0 you owe the group); leave again with acknowledgeSettlement true"},
	CodeMoneyInFlight:        {Status: http.StatusConflict, Message: "a contribution or payout of yours is still at the bank; leave once it has settled"},
	CodeRecipientCannotLeave: {Status: http.StatusConflict, Message: "the open cycle pays you: you cannot leave before its payout"},
	CodeMandateInOpenRun:     {Status: http.StatusConflict, Message: "a payroll run that has not completed withheld or may withhold your contribution under your payroll mandate; leave, or contribute by hand, once it has completed"},
	CodeNotEnoughMembers:     {Status: http.StatusConflict, Message: "an equb group needs at least two members before its first cycle"},
	CodeCycleInProgress:      {Status: http.StatusConflict, Message: "the group's current cycle is not paid out yet"},
	CodeGroupCompleted:       {Status: http.StatusConflict, Message: "every member has received the pot: the group is COMPLETED"},
	CodeEmployeeNotActive:    {Status: http.StatusConflict, Message: "only an ACTIVE employee linked to your account can join an equb group"},
	CodeRejoinNotAllowed:     {Status: http.StatusConflict, Message: "you left this group with a settlement, a default or a payout of yours: you cannot join it again"},
	CodeCycleNotOpen:         {Status: http.StatusConflict, Message: "the cycle takes no contributions (it is not the group's OPEN cycle)"},
	CodeEscrowNotActive:      {Status: http.StatusConflict, Message: "the cycle has no ACTIVE escrow binding"},
	CodeAlreadyContributed:   {Status: http.StatusConflict, Message: "you have already contributed to this cycle (or your contribution is at the bank)"},
	CodeContributionNotDue:   {Status: http.StatusConflict, Message: "you joined after this cycle opened: your contributions start with the next cycle (details.firstCycle)"},
	CodeContributionsPending: {Status: http.StatusConflict, Message: "not every contribution of the cycle has settled"},
	CodeAlreadyPaidOut:       {Status: http.StatusConflict, Message: "the cycle's payout (or this member's payout of the round) is already made or under way"},
	CodeMoneyMovementOff:     {Status: http.StatusServiceUnavailable, Message: "equb money movement is switched off (EQUB_MONEY_MOVEMENT_ENABLED); nothing was written"},
	CodeAccountInvalid:       {Status: http.StatusConflict, Message: "the partner bank did not confirm the member's account"},
	CodeAmountMismatch:       {Status: http.StatusConflict, Message: "the amount withheld is not the cycle's contribution"},
	CodePayrollAccountNotSet: {Status: http.StatusConflict, Message: "the organization has no payroll account at the escrow's partner bank (POST /api/payroll/tenant-settings)"},
	CodePartnerUnavailable:   {Status: http.StatusServiceUnavailable, Message: "the partner bank could not be asked; nothing moved, try again later with a new key"},
	CodeEscrowReconOff:       {Status: http.StatusServiceUnavailable, Message: "equb escrow reconciliation is switched off (EQUB_ESCROW_RECON_ENABLED); nothing ran"},
	CodeKeyReused:            {Status: http.StatusUnprocessableEntity, Message: "this Idempotency-Key made another contribution or payout; use a new key for a new request"},
}

// RefusalOf is code's answer; ok is false for a code that is not in the table.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

// RefusalError is code's answer as the stores' refusal type; it panics on a code that is not in
// the table (a programming error).
func RefusalError(code string) *refusal.Refusal { return refusals.Error(code) }

// CodeOf is the code of one of the stores' refusals that is in the table, "" for any other error.
func CodeOf(err error) string { return refusals.CodeOf(err) }
