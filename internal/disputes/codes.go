package disputes

import (
	"errors"
	"net/http"
)

// The store's errors.
var (
	ErrNotFound             = errors.New("disputes: no such dispute")
	ErrTransactionNotFound  = errors.New("disputes: no such ledger transaction on the employee's account")
	ErrTransactionNotPosted = errors.New("disputes: only a POSTED ledger transaction can be disputed")
	ErrAlreadyOpen          = errors.New("disputes: the transaction already has an open dispute")
	ErrInvalidTransition    = errors.New("disputes: the dispute's state does not allow this")
	ErrAlreadyReopened      = errors.New("disputes: the dispute was already reopened")
	ErrApprovalMissing      = errors.New("disputes: an adjustment needs a platform admin's approval")
	ErrSelfApproved         = errors.New("disputes: the approver of an adjustment must not be the operator deciding it")
	ErrApprovalInvalid      = errors.New("disputes: the adjustment's approval signature does not verify")
	ErrInvalid              = errors.New("disputes: invalid value")
)

// The stable API codes of disputes' refusals, defined once: the store's errors map to them
// (CodeOf), the dispute workflow answers its updates with them (the ApplicationError's Type), and
// the API answers each with its HTTP status and public message (RefusalOf).
const (
	CodeNotFound             = "DISPUTE_NOT_FOUND"
	CodeTransactionNotFound  = "LEDGER_TRANSACTION_NOT_FOUND"
	CodeTransactionNotPosted = "DISPUTE_TRANSACTION_NOT_POSTED"
	CodeAlreadyOpen          = "DISPUTE_ALREADY_OPEN"
	CodeInvalidState         = "DISPUTE_INVALID_STATE"
	CodeAlreadyReopened      = "DISPUTE_ALREADY_REOPENED"
	CodeApprovalMissing      = "DISPUTE_APPROVAL_REQUIRED"
	CodeSelfApproved         = "DISPUTE_SELF_APPROVAL"
	CodeApprovalInvalid      = "DISPUTE_APPROVAL_INVALID"
	CodeLedgerUnavailable    = "DISPUTE_LEDGER_UNAVAILABLE"
	CodeLedgerRefused        = "DISPUTE_LEDGER_REFUSED"
)

// Refusal is how a code is answered: its HTTP status and its public message.
type Refusal struct {
	Code    string
	Status  int
	Message string
}

// refusals is the one table.
var refusals = map[string]Refusal{
	CodeNotFound:             {CodeNotFound, http.StatusNotFound, "no such dispute in this organization"},
	CodeTransactionNotFound:  {CodeTransactionNotFound, http.StatusNotFound, "no such ledger transaction on your account"},
	CodeTransactionNotPosted: {CodeTransactionNotPosted, http.StatusConflict, "only a POSTED ledger transaction can be disputed"},
	CodeAlreadyOpen:          {CodeAlreadyOpen, http.StatusConflict, "this transaction already has an open dispute"},
	CodeInvalidState:         {CodeInvalidState, http.StatusConflict, "the dispute's state does not allow this"},
	CodeAlreadyReopened:      {CodeAlreadyReopened, http.StatusConflict, "this dispute was already reopened"},
	CodeApprovalMissing:      {CodeApprovalMissing, http.StatusUnprocessableEntity, "an adjustment needs the approval of a platform admin (approvedBy)"},
	CodeSelfApproved:         {CodeSelfApproved, http.StatusUnprocessableEntity, "the approver of an adjustment must be another person than the operator deciding it"},
	CodeApprovalInvalid:      {CodeApprovalInvalid, http.StatusUnprocessableEntity, "the adjustment's approval does not verify"},
	CodeLedgerUnavailable:    {CodeLedgerUnavailable, http.StatusServiceUnavailable, "the ledger could not be reached; nothing was decided, try again"},
	CodeLedgerRefused:        {CodeLedgerRefused, http.StatusConflict, "the ledger refused the decision's posting; nothing was decided"},
}

// RefusalOf is code's answer; ok is false for a code that is not disputes'.
func RefusalOf(code string) (r Refusal, ok bool) {
	r, ok = refusals[code]
	return r, ok
}

var storeCodes = []struct {
	err  error
	code string
}{
	{ErrNotFound, CodeNotFound},
	{ErrTransactionNotFound, CodeTransactionNotFound},
	{ErrTransactionNotPosted, CodeTransactionNotPosted},
	{ErrAlreadyOpen, CodeAlreadyOpen},
	{ErrInvalidTransition, CodeInvalidState},
	{ErrAlreadyReopened, CodeAlreadyReopened},
	{ErrApprovalMissing, CodeApprovalMissing},
	{ErrSelfApproved, CodeSelfApproved},
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
