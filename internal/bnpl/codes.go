package bnpl

import (
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The stable API codes of BNPL's refusals, defined once (as internal/lending/codes.go): the stores'
// refusals carry them, the sagas answer their update with them, the record steps type their
// non-retryable errors with them, and the API answers each with its status and message.
const (
	CodeMerchantNotFound = "BNPL_MERCHANT_NOT_FOUND"
	// CodeMerchantNotAvailable: the merchant is not in good standing (its KYB not verified by
	// the platform, or it is suspended): no new agreement is quoted or made with it; agreements
	// already made are still collected and settled.
	CodeMerchantNotAvailable = "BNPL_MERCHANT_NOT_AVAILABLE"
	CodeAgreementNotFound    = "BNPL_AGREEMENT_NOT_FOUND"
	// CodeOrderNotFound: the merchant's view has no agreement of this id bought from it (another
	// merchant's order reads the same).
	CodeOrderNotFound        = "BNPL_ORDER_NOT_FOUND"
	CodeInvalidState         = "BNPL_INVALID_STATE"
	CodeEmployeeNotActive    = "BNPL_EMPLOYEE_NOT_ACTIVE"
	CodeNotAffordable        = "BNPL_NOT_AFFORDABLE"
	CodeFundingAccountNotSet = "BNPL_FUNDING_ACCOUNT_NOT_SET"
	CodeDuplicateOrder       = "BNPL_DUPLICATE_MERCHANT_REFERENCE"
	CodeInstalmentNotFound   = "BNPL_INSTALMENT_NOT_FOUND"
	CodeInstalmentNotDue     = "BNPL_INSTALMENT_NOT_DUE"
	CodeKycNotApproved       = "BNPL_KYC_NOT_APPROVED"
	CodeSanctionsBlocked     = "BNPL_SANCTIONS_BLOCKED"
	CodeDestinationInvalid   = "BNPL_DESTINATION_ACCOUNT_INVALID"
	CodePartnerUnavailable   = "BNPL_PARTNER_UNAVAILABLE"
	CodeCollectionRefused    = "BNPL_COLLECTION_REFUSED"
	CodeSettlementSent       = "BNPL_SETTLEMENT_SENT"
	CodeCollectionInProgress = "BNPL_COLLECTION_IN_PROGRESS"
	CodeNothingOutstanding   = "BNPL_NOTHING_OUTSTANDING"
	CodeRestructureLimit     = "BNPL_RESTRUCTURE_LIMIT_REACHED"
	CodeOrderReversed        = "BNPL_MERCHANT_ORDER_REVERSED"
	CodeMandateAmount        = "BNPL_MANDATE_AMOUNT_MISMATCH"
	CodeOrderNotReversed     = "BNPL_MERCHANT_ORDER_NOT_REVERSED"
	CodeWriteOffInProgress   = "BNPL_WRITE_OFF_IN_PROGRESS"
	CodeMandateInOpenRun     = "BNPL_MANDATE_IN_OPEN_RUN"
	// CodeOwnServicing: the operator asking for a restructure or a write-off is the customer (the
	// user linked to the agreement's employee): nobody services their own plan alone.
	CodeOwnServicing = "BNPL_OWN_SERVICING"
)

var refusals = refusal.Table{
	CodeMerchantNotFound:     {Status: http.StatusNotFound, Message: "no merchant of this id sells on BNPL (it has not set its settlement account)"},
	CodeMerchantNotAvailable: {Status: http.StatusConflict, Message: "the merchant takes no new BNPL agreements: its verification is not complete or it is suspended"},
	CodeAgreementNotFound:    {Status: http.StatusNotFound, Message: "no such BNPL agreement in this organization"},
	CodeOrderNotFound:        {Status: http.StatusNotFound, Message: "no such BNPL order bought from this merchant"},
	CodeInvalidState:         {Status: http.StatusConflict, Message: "the agreement's state does not allow this"},
	CodeEmployeeNotActive:    {Status: http.StatusUnprocessableEntity, Message: "the employee is not an active, paid employee of this organization"},
	CodeNotAffordable:        {Status: http.StatusUnprocessableEntity, Message: "the plan's instalment is more than the employee's pay allows"},
	CodeFundingAccountNotSet: {Status: http.StatusConflict, Message: "the organization has no funding account to pay merchants from (PUT /api/ewa/settings)"},
	CodeDuplicateOrder:       {Status: http.StatusConflict, Message: "this merchant's order already has a BNPL agreement in this organization"},
	CodeInstalmentNotFound:   {Status: http.StatusNotFound, Message: "no such instalment of this agreement"},
	CodeInstalmentNotDue:     {Status: http.StatusConflict, Message: "the instalment is not due: it is being collected, was collected, or was superseded or written off"},
	CodeKycNotApproved:       {Status: http.StatusUnprocessableEntity, Message: "the customer's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:     {Status: http.StatusUnprocessableEntity, Message: "the customer did not pass sanctions screening"},
	CodeDestinationInvalid:   {Status: http.StatusConflict, Message: "the partner bank did not confirm the merchant's settlement account"},
	CodePartnerUnavailable:   {Status: http.StatusServiceUnavailable, Message: "the partner bank could not be asked about the merchant's account; nothing moved, try again later with a new key"},
	CodeCollectionRefused:    {Status: http.StatusConflict, Message: "the ledger refused the instalment's journal; nothing was collected and the instalment is due again"},
	CodeSettlementSent:       {Status: http.StatusConflict, Message: "the merchant's settlement was sent when the agreement was made; an agreement cannot be cancelled once its merchant is paid or being paid"},
	CodeCollectionInProgress: {Status: http.StatusConflict, Message: "an instalment of the agreement is being collected; try again once it is recorded"},
	CodeNothingOutstanding:   {Status: http.StatusConflict, Message: "the agreement has no instalment due"},
	CodeRestructureLimit:     {Status: http.StatusConflict, Message: "the agreement has been restructured as often as it may be, or the new schedule would pass the last instalment index"},
	CodeOrderReversed:        {Status: http.StatusConflict, Message: "the merchant reported the order REFUNDED or CANCELLED: its instalments are not collected until an operator settles the agreement"},
	CodeMandateAmount:        {Status: http.StatusConflict, Message: "the payroll deduction's amount is not the instalment's: nothing was collected and the instalment is still owed"},
	CodeOrderNotReversed:     {Status: http.StatusConflict, Message: "the merchant has not reported the order REFUNDED or CANCELLED: what the customer owes is not written off"},
	CodeWriteOffInProgress:   {Status: http.StatusConflict, Message: "the agreement's write-off is under way; try again once it is recorded"},
	CodeMandateInOpenRun:     {Status: http.StatusConflict, Message: "a payroll run that has not completed withheld or may withhold the instalment under the customer's mandate; collect, write off or restructure once it has completed"},
	CodeOwnServicing:         {Status: http.StatusForbidden, Message: "the agreement is your own: another operator must restructure or write it off"},
}

// RefusalOf is code's answer; ok is false for a code that is not in the table.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

// RefusalError is code's answer as the stores' refusal type; it panics on an unknown code.
func RefusalError(code string) *refusal.Refusal { return refusals.Error(code) }

// CodeOf is the code of a store refusal in the table, "" for any other error.
func CodeOf(err error) string { return refusals.CodeOf(err) }
