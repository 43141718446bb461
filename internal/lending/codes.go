package lending

import (
	"fmt"
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/refusal"
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

	// CodeFINotAvailable: the loan's financial institution is not in good standing (its KYB not
	// verified by the platform, or it is suspended): it takes no new loans. Quotes, opt-ins,
	// originations, the FI's approvals and disbursements not yet claimed are refused (its
	// rejections and cancellations are not); loans already paid out are still collected and
	// remitted.
	CodeFINotAvailable = "LOAN_FI_NOT_AVAILABLE"

	// The disbursement saga's gates (the borrower's KYC, sanctions screening and payout account).
	CodeKycNotApproved     = "LOAN_KYC_NOT_APPROVED"
	CodeSanctionsBlocked   = "LOAN_SANCTIONS_BLOCKED"
	CodeDestinationInvalid = "LOAN_DESTINATION_ACCOUNT_INVALID"
	CodeAccountMismatch    = "ACCOUNT_MISMATCH" // the spec's name rule, one code for every domain (EWA, wallet, savings too)
	CodePartnerUnavailable = "LOAN_PARTNER_UNAVAILABLE"
	// CodePayoutAccountChanged: the borrower's payout account is not the one the loan was
	// requested (and approved) with; cancel the loan and request it again.
	CodePayoutAccountChanged = "LOAN_PAYOUT_ACCOUNT_CHANGED"

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
	// CodeInstalmentInOpenRun: a payroll run that has not completed withheld (or, calculating,
	// may withhold) an instalment of the loan: a restructure and a write-off wait for it.
	CodeInstalmentInOpenRun = "LOAN_INSTALMENT_IN_OPEN_RUN"
	// CodeOwnServicing: the operator asking for a restructure or a write-off is the borrower (the
	// user linked to the borrowing employee): nobody services their own loan alone.
	CodeOwnServicing = "LOAN_OWN_SERVICING"
)

// refusals is the one table. The KYC and sanctions gates are rules the caller cannot fix in the
// request (422); a payout account the partner does not confirm is a conflict with the partner's
// state (409, as the spec says); a partner that cannot be asked fails closed with 503 (nothing
// moved; retry later with a new key).
var refusals = refusal.Table{
	CodeLoanNotFound:         {Status: http.StatusNotFound, Message: "no such loan in this organization"},
	CodeLoanInvalidState:     {Status: http.StatusConflict, Message: "the loan's state does not allow this"},
	CodeFundingAccountNotSet: {Status: http.StatusConflict, Message: "the loan's financial institution has not set its funding account (PUT /api/lending/fi-accounts)"},
	CodeFINotAvailable:       {Status: http.StatusConflict, Message: "the financial institution takes no new loans: its verification is not complete or it is suspended"},
	// The FI's approval and the disbursement: the business withdrew its opt-in to the loan's
	// product since the loan was requested (optins.go, loanProductOffered); the quote's and the
	// origination's refusal of the same code is errNotOptedIn.
	CodeNotOptedIn: {Status: http.StatusUnprocessableEntity, Message: "the business no longer offers the loan's product: it has withdrawn its opt-in (it may opt in again: POST /api/lending/product-opt-ins)"},
	// The disbursement's plan: the borrower's employment ended since the approval.
	CodeEmployeeNotActive: {Status: http.StatusConflict, Message: "only an ACTIVE employee is paid a loan"},

	CodeKycNotApproved:       {Status: http.StatusUnprocessableEntity, Message: "the borrower's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:     {Status: http.StatusUnprocessableEntity, Message: "the borrower did not pass sanctions screening"},
	CodeDestinationInvalid:   {Status: http.StatusConflict, Message: "the partner bank did not confirm the borrower's payout account"},
	CodeAccountMismatch:      {Status: http.StatusConflict, Message: "the payout account's holder name at the partner bank does not match the borrower's"},
	CodePartnerUnavailable:   {Status: http.StatusServiceUnavailable, Message: "the partner bank could not be asked about the payout account; nothing moved, try again later with a new key"},
	CodePayoutAccountChanged: {Status: http.StatusConflict, Message: "the borrower's payout account changed since the loan was requested, and the financial institution approved the other one: cancel the loan and request it again"},

	CodeInstalmentNotFound:          {Status: http.StatusNotFound, Message: "no such loan instalment in this organization"},
	CodeRepaymentExceedsOutstanding: {Status: http.StatusUnprocessableEntity, Message: "amountSantim is more than the instalment's outstanding (details.outstandingSantim)"},
	CodeRepaymentInProgress:         {Status: http.StatusConflict, Message: "a repayment of this loan is being recorded; retry once it is done"},

	CodeInstalmentNotRepaid:       {Status: http.StatusConflict, Message: "only a REPAID instalment is remitted to the financial institution"},
	CodeFISettlementAccountNotSet: {Status: http.StatusConflict, Message: "the financial institution has no settlement account (PUT /api/fi/accounts)"},
	CodePayrollAccountNotSet:      {Status: http.StatusConflict, Message: "the organization has no payroll account in its payroll settings (POST /api/payroll/tenant-settings)"},
	CodeRemitPartnerMismatch:      {Status: http.StatusConflict, Message: "the payroll account and the financial institution's settlement account are at different partner banks"},

	CodeRestructureRateTooHigh: {Status: http.StatusUnprocessableEntity, Message: "a restructure may not raise the loan's annual rate"},
	CodeNothingOutstanding:     {Status: http.StatusConflict, Message: "the loan has no principal outstanding"},
	CodeRestructureLimit:       {Status: http.StatusConflict, Message: fmt.Sprintf("the new schedule would number an instalment past %d", MaxInstalmentIndex)},
	CodeWriteOffNotApproved:    {Status: http.StatusConflict, Message: "the loan's financial institution has not approved its write-off (POST /api/fi/loans/{id}/write-off-approval)"},
	CodeWriteOffInProgress:     {Status: http.StatusConflict, Message: "a write-off of this loan is under way; retry once it is done"},
	CodeInstalmentInOpenRun:    {Status: http.StatusConflict, Message: "a payroll run that has not completed withheld or may withhold an instalment of this loan; retry once it has completed"},
	CodeOwnServicing:           {Status: http.StatusForbidden, Message: "the loan is your own: another operator must restructure or write it off"},
}

// RefusalOf is code's answer; ok is false for a code that is not in the table.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

// RefusalError is code's answer as the stores' refusal type (what the API's payroll answer
// writes); it panics on a code that is not in the table (a programming error).
func RefusalError(code string) *refusal.Refusal { return refusals.Error(code) }

// CodeOf is the code of one of the stores' refusals that is in the table (a *payroll.Refusal
// whose Code the table has), "" for any other error.
func CodeOf(err error) string { return refusals.CodeOf(err) }
