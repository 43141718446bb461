package disputes

import (
	"errors"
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The store's errors.
var (
	ErrNotFound             = errors.New("disputes: no such dispute")
	ErrTransactionNotFound  = errors.New("disputes: no such ledger transaction on the employee's account")
	ErrTransactionNotPosted = errors.New("disputes: only a POSTED ledger transaction can be disputed")
	ErrAlreadyOpen          = errors.New("disputes: the transaction already has an open dispute")
	ErrAlreadyDisputed      = errors.New("disputes: the transaction's dispute was decided (a closed one may be reopened)")
	ErrInvalidTransition    = errors.New("disputes: the dispute's state does not allow this")
	ErrAlreadyReopened      = errors.New("disputes: the dispute was already reopened")
	ErrApprovalMissing      = errors.New("disputes: an adjustment needs a platform admin's approval")
	ErrSelfApproved         = errors.New("disputes: the approver of an adjustment must not be the operator deciding it")
	ErrApprovalInvalid      = errors.New("disputes: the adjustment's approval signature does not verify")
	ErrOwnDispute           = errors.New("disputes: the employee the dispute would refund may neither decide nor approve it")
	ErrInvalid              = errors.New("disputes: invalid value")
)

// The stable API codes of disputes' refusals, defined once: the store's errors map to them
// (CodeOf), the dispute workflow answers its updates with them (the ApplicationError's Type), and
// the API answers each with its HTTP status and public message (RefusalOf).
const (
	CodeNotFound             = "DISPUTE_NOT_FOUND"
	CodeTransactionNotFound  = "LEDGER_TRANSACTION_NOT_FOUND"
	CodeTransactionNotPosted = "DISPUTE_TRANSACTION_NOT_POSTED"
	// CodeNotDisputable: the transaction charged the employee nothing (it only credits their
	// account: a repayment, a reversal, an adjustment), or more than one amount's bound.
	CodeNotDisputable = "DISPUTE_TRANSACTION_NOT_DISPUTABLE"
	// CodeAccountNotOnTransaction: the customer's account platform support named has no entry
	// in the transaction.
	CodeAccountNotOnTransaction = "DISPUTE_ACCOUNT_NOT_ON_TRANSACTION"
	// CodePartnerNotOnTransaction: the partner bank raising the dispute holds none of the
	// accounts the transaction moved money at (no partner-bank:<partner>: entry).
	CodePartnerNotOnTransaction = "DISPUTE_PARTNER_NOT_ON_TRANSACTION"
	CodeAlreadyOpen             = "DISPUTE_ALREADY_OPEN"
	CodeAlreadyDisputed         = "DISPUTE_ALREADY_DECIDED"
	CodeInvalidState            = "DISPUTE_INVALID_STATE"
	CodeAlreadyReopened         = "DISPUTE_ALREADY_REOPENED"
	CodeApprovalMissing         = "DISPUTE_APPROVAL_REQUIRED"
	CodeSelfApproved            = "DISPUTE_SELF_APPROVAL"
	CodeApprovalInvalid         = "DISPUTE_APPROVAL_INVALID"
	CodeOwnDispute              = "DISPUTE_OWN_DECISION"
	CodeLedgerUnavailable       = "DISPUTE_LEDGER_UNAVAILABLE"
	CodeLedgerRefused           = "DISPUTE_LEDGER_REFUSED"
	// CodeOtherDecisionPosted: the ledger holds the dispute's reversal or adjustment, posted by
	// a run of its workflow that ended before recording it, and the decision is another one: a
	// decision that moves money would move it twice, and one that moves none would close the
	// dispute with the refund unrecorded. The same decision again records that posting.
	CodeOtherDecisionPosted = "DISPUTE_OTHER_DECISION_POSTED"
	// CodePostingClosed: a run of the dispute's workflow took a decision without a posting (no
	// action, chargeback), closed the decision key at the ledger and ended before recording it; a
	// reversal or adjustment can no longer post under the key. That decision, taken again,
	// records it.
	CodePostingClosed = "DISPUTE_POSTING_CLOSED"
)

// refusals is the one table.
var refusals = refusal.Table{
	CodeNotFound:             {Status: http.StatusNotFound, Message: "no such dispute in this organization"},
	CodeTransactionNotFound:  {Status: http.StatusNotFound, Message: "no such ledger transaction (an employee disputes only those on their own account)"},
	CodeTransactionNotPosted: {Status: http.StatusConflict, Message: "only a POSTED ledger transaction can be disputed"},
	CodeNotDisputable: {Status: http.StatusConflict,
		Message: "only a charge to your account can be disputed: a repayment, a reversal or an adjustment (a dispute's own refund) cannot"},
	CodeAccountNotOnTransaction: {Status: http.StatusUnprocessableEntity, Message: "the transaction has no entry on that customer's account"},
	CodePartnerNotOnTransaction: {Status: http.StatusUnprocessableEntity,
		Message: "the transaction moved no money at that partner bank: a partner disputes only what went through it"},
	CodeAlreadyOpen: {Status: http.StatusConflict, Message: "this transaction already has an open dispute"},
	CodeAlreadyDisputed: {Status: http.StatusConflict,
		Message: "this transaction was disputed and the dispute decided; a platform admin may reopen one closed with no action"},
	CodeInvalidState:    {Status: http.StatusConflict, Message: "the dispute's state does not allow this"},
	CodeAlreadyReopened: {Status: http.StatusConflict, Message: "this dispute was already reopened"},
	CodeApprovalMissing: {Status: http.StatusUnprocessableEntity, Message: "an adjustment needs the approval of a platform admin (approvedBy)"},
	CodeSelfApproved:    {Status: http.StatusUnprocessableEntity, Message: "the approver of an adjustment must be another person than the operator deciding it"},
	CodeApprovalInvalid: {Status: http.StatusUnprocessableEntity, Message: "the adjustment's approval does not verify"},
	CodeOwnDispute: {Status: http.StatusForbidden,
		Message: "the dispute was raised by the employee linked to your account: another operator decides it (and another admin approves it)"},
	CodeLedgerUnavailable: {Status: http.StatusServiceUnavailable, Message: "the ledger could not be reached; nothing was decided, try again"},
	CodeLedgerRefused:     {Status: http.StatusConflict, Message: "the ledger refused the decision's posting; nothing was decided"},
	CodeOtherDecisionPosted: {Status: http.StatusConflict,
		Message: "the ledger already holds this dispute's reversal or adjustment, posted by an earlier attempt that was not recorded: decide it that way to record it (nothing is posted twice)"},
	CodePostingClosed: {Status: http.StatusConflict,
		Message: "an earlier attempt decided this dispute without a posting and closed its ledger key before it was recorded: decide NO_ACTION or CHARGEBACK (nothing was posted)"},
}

// RefusalOf is code's answer; ok is false for a code that is not disputes'.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

var storeCodes = []struct {
	err  error
	code string
}{
	{ErrNotFound, CodeNotFound},
	{ErrTransactionNotFound, CodeTransactionNotFound},
	{ErrTransactionNotPosted, CodeTransactionNotPosted},
	{ErrAlreadyOpen, CodeAlreadyOpen},
	{ErrAlreadyDisputed, CodeAlreadyDisputed},
	{ErrInvalidTransition, CodeInvalidState},
	{ErrAlreadyReopened, CodeAlreadyReopened},
	{ErrApprovalMissing, CodeApprovalMissing},
	{ErrSelfApproved, CodeSelfApproved},
	{ErrOwnDispute, CodeOwnDispute},
	{ErrApprovalInvalid, CodeApprovalInvalid},
}

// CodeOf is err's code, "" for an error that is no refusal of this package.
func CodeOf(err error) string {
	for _, s := range storeCodes {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return ""
}
