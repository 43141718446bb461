package lending

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/wagerail/wagerail/internal/payroll"
)

// The stable API codes of the loan sagas' refusals, defined once, like internal/ewa/codes.go: the
// stores' refusals carry them (*payroll.Refusal, CodeOf), the sagas answer their update with them
// (the ApplicationError's Type), the record-step activities type their non-retryable errors with
// them, and the API answers each with its HTTP status and public message (RefusalOf). A saga that
// adds a refusal adds its row here.
const (
	// CodeLoanNotFound and CodeLoanInvalidState (loans.go) are the table's too.

	// CodeFundingAccountNotSet: the loan's FI has not set its funding and settlement accounts
	// (PUT /api/lending/fi-accounts), so there is nothing to pay the loan from.
	CodeFundingAccountNotSet = "LOAN_FUNDING_ACCOUNT_NOT_SET"

	// The disbursement saga's gates (the borrower's KYC, sanctions screening and payout account).
	CodeKycNotApproved      = "LOAN_KYC_NOT_APPROVED"
	CodeSanctionsBlocked    = "LOAN_SANCTIONS_BLOCKED"
	CodeDestinationInvalid  = "LOAN_DESTINATION_ACCOUNT_INVALID"
	CodeAccountNameMismatch = "LOAN_ACCOUNT_NAME_MISMATCH"
	CodePartnerUnavailable  = "LOAN_PARTNER_UNAVAILABLE"

	// The repayment saga (repay.go).
	CodeInstalmentNotFound = "LOAN_INSTALMENT_NOT_FOUND"
	// CodeRepaymentExceedsOutstanding: more than the instalment's outstanding (total less what is
	// repaid); the message and details.outstandingSantim say how much may still be repaid.
	CodeRepaymentExceedsOutstanding = "LOAN_REPAYMENT_EXCEEDS_OUTSTANDING"
	// CodeRepaymentInProgress: a repayment of the loan is being posted (reserved, its journal not
	// yet recorded): a second repayment of its instalment, a write-off claim and a restructure
	// wait for it; retry.
	CodeRepaymentInProgress = "LOAN_REPAYMENT_IN_PROGRESS"

	// The remittance saga (remit.go).
	CodeInstalmentNotRepaid       = "LOAN_INSTALMENT_NOT_REPAID"
	CodeFISettlementAccountNotSet = "LOAN_FI_SETTLEMENT_ACCOUNT_NOT_SET" // the FI mapping
	CodePayrollAccountNotSet      = "LOAN_PAYROLL_ACCOUNT_NOT_SET"
	// CodeRemitPartnerMismatch: the payroll account and the FI's settlement account are at
	// different partner banks; a remittance is a transfer within one partner.
	CodeRemitPartnerMismatch = "LOAN_REMIT_PARTNER_MISMATCH"

	// Servicing: the restructure (restructure.go) and the write-off (writeoff.go).
	CodeRestructureRateTooHigh = "LOAN_RESTRUCTURE_RATE_TOO_HIGH"
	CodeNothingOutstanding     = "LOAN_NOTHING_OUTSTANDING"
	CodeRestructureLimit       = "LOAN_RESTRUCTURE_LIMIT_REACHED"
	CodeWriteOffNotApproved    = "LOAN_WRITE_OFF_NOT_APPROVED"
	// CodeWriteOffInProgress: a write-off of the loan is claimed and its journal not yet
	// recorded: another write-off run, a restructure and a repayment wait for it.
	CodeWriteOffInProgress = "LOAN_WRITE_OFF_IN_PROGRESS"
)

// Refusal is how a code is answered: its HTTP status and its public message (an internal error's
// text may carry detail the caller must not see, so the caller gets this fixed one).
type Refusal struct {
	Code    string
	Status  int
	Message string
}

// refusals is the one table. The KYC and sanctions gates are rules the caller cannot fix in the
// request (422); a payout account the partner does not confirm is a conflict with the partner's
// state (409, as the spec says); a partner that cannot be asked fails closed with 503 (nothing
// moved; retry later with a new key).
var refusals = map[string]Refusal{
	CodeLoanNotFound:         {CodeLoanNotFound, http.StatusNotFound, "no such loan in this organization"},
	CodeLoanInvalidState:     {CodeLoanInvalidState, http.StatusConflict, "the loan's state does not allow this"},
	CodeFundingAccountNotSet: {CodeFundingAccountNotSet, http.StatusConflict, "the loan's financial institution has not set its funding account (PUT /api/lending/fi-accounts)"},

	CodeKycNotApproved:      {CodeKycNotApproved, http.StatusUnprocessableEntity, "the borrower's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:    {CodeSanctionsBlocked, http.StatusUnprocessableEntity, "the borrower did not pass sanctions screening"},
	CodeDestinationInvalid:  {CodeDestinationInvalid, http.StatusConflict, "the partner bank did not confirm the borrower's payout account"},
	CodeAccountNameMismatch: {CodeAccountNameMismatch, http.StatusConflict, "the payout account's holder name at the partner bank does not match the borrower's"},
	CodePartnerUnavailable:  {CodePartnerUnavailable, http.StatusServiceUnavailable, "the partner bank could not be asked about the payout account; nothing moved, try again later with a new key"},

	CodeInstalmentNotFound: {CodeInstalmentNotFound, http.StatusNotFound, "no such loan instalment in this organization"},
	CodeRepaymentExceedsOutstanding: {CodeRepaymentExceedsOutstanding, http.StatusUnprocessableEntity,
		"amountSantim is more than the instalment's outstanding (details.outstandingSantim)"},
	CodeRepaymentInProgress: {CodeRepaymentInProgress, http.StatusConflict, "a repayment of this loan is being recorded; retry once it is done"},

	CodeInstalmentNotRepaid: {CodeInstalmentNotRepaid, http.StatusConflict, "only a REPAID instalment is remitted to the financial institution"},
	CodeFISettlementAccountNotSet: {CodeFISettlementAccountNotSet, http.StatusConflict,
		"the financial institution has no settlement account (PUT /api/fi/accounts)"},
	CodePayrollAccountNotSet: {CodePayrollAccountNotSet, http.StatusConflict,
		"the organization has no payroll account in its payroll settings (POST /api/payroll/tenant-settings)"},
	CodeRemitPartnerMismatch: {CodeRemitPartnerMismatch, http.StatusConflict,
		"the payroll account and the financial institution's settlement account are at different partner banks"},

	CodeRestructureRateTooHigh: {CodeRestructureRateTooHigh, http.StatusUnprocessableEntity, "a restructure may not raise the loan's annual rate"},
	CodeNothingOutstanding:     {CodeNothingOutstanding, http.StatusConflict, "the loan has no principal outstanding"},
	CodeRestructureLimit: {CodeRestructureLimit, http.StatusConflict,
		fmt.Sprintf("the new schedule would number an instalment past %d", MaxInstalmentIndex)},
	CodeWriteOffNotApproved: {CodeWriteOffNotApproved, http.StatusConflict,
		"the loan's financial institution has not approved its write-off (POST /api/fi/loans/{id}/write-off-approval)"},
	CodeWriteOffInProgress: {CodeWriteOffInProgress, http.StatusConflict, "a write-off of this loan is under way; retry once it is done"},
}

// RefusalOf is code's answer; ok is false for a code that is not in the table.
func RefusalOf(code string) (r Refusal, ok bool) {
	r, ok = refusals[code]
	return r, ok
}

// RefusalError is code's answer as the stores' refusal type (what the API's payroll answer
// writes); it panics on a code that is not in the table (a programming error).
func RefusalError(code string) *payroll.Refusal {
	r, ok := refusals[code]
	if !ok {
		panic("lending: no refusal " + code)
	}
	return &payroll.Refusal{Code: r.Code, Status: r.Status, Message: r.Message}
}

// CodeOf is the code of one of the stores' refusals that is in the table (a *payroll.Refusal
// whose Code the table has), "" for any other error.
func CodeOf(err error) string {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		if _, ok := refusals[r.Code]; ok {
			return r.Code
		}
	}
	return ""
}
