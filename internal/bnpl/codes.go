package bnpl

import (
	"errors"
	"net/http"

	"github.com/wagerail/wagerail/internal/payroll"
)

// The stable API codes of BNPL's refusals, defined once (as internal/lending/codes.go): the stores'
// refusals carry them, the sagas answer their update with them, the record steps type their
// non-retryable errors with them, and the API answers each with its status and message.
const (
	CodeMerchantNotFound     = "BNPL_MERCHANT_NOT_FOUND"
	CodeAgreementNotFound    = "BNPL_AGREEMENT_NOT_FOUND"
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
)

// Refusal is how a code is answered.
type Refusal struct {
	Code    string
	Status  int
	Message string
}

var refusals = map[string]Refusal{
	CodeMerchantNotFound:     {CodeMerchantNotFound, http.StatusNotFound, "no merchant of this id sells on BNPL (it has not set its settlement account)"},
	CodeAgreementNotFound:    {CodeAgreementNotFound, http.StatusNotFound, "no such BNPL agreement in this organization"},
	CodeInvalidState:         {CodeInvalidState, http.StatusConflict, "the agreement's state does not allow this"},
	CodeEmployeeNotActive:    {CodeEmployeeNotActive, http.StatusUnprocessableEntity, "the employee is not an active, paid employee of this organization"},
	CodeNotAffordable:        {CodeNotAffordable, http.StatusUnprocessableEntity, "the plan's instalment is more than the employee's pay allows"},
	CodeFundingAccountNotSet: {CodeFundingAccountNotSet, http.StatusConflict, "the organization has no funding account to pay merchants from (PUT /api/ewa/settings)"},
	CodeDuplicateOrder:       {CodeDuplicateOrder, http.StatusConflict, "this merchant's order already has a BNPL agreement in this organization"},
	CodeInstalmentNotFound:   {CodeInstalmentNotFound, http.StatusNotFound, "no such instalment of this agreement"},
	CodeInstalmentNotDue:     {CodeInstalmentNotDue, http.StatusConflict, "the instalment is being collected or was collected already"},
	CodeKycNotApproved:       {CodeKycNotApproved, http.StatusUnprocessableEntity, "the customer's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:     {CodeSanctionsBlocked, http.StatusUnprocessableEntity, "the customer did not pass sanctions screening"},
	CodeDestinationInvalid:   {CodeDestinationInvalid, http.StatusConflict, "the partner bank did not confirm the merchant's settlement account"},
	CodePartnerUnavailable:   {CodePartnerUnavailable, http.StatusServiceUnavailable, "the partner bank could not be asked about the merchant's account; nothing moved, try again later with a new key"},
}

// RefusalOf is code's answer; ok is false for a code that is not in the table.
func RefusalOf(code string) (r Refusal, ok bool) {
	r, ok = refusals[code]
	return r, ok
}

// RefusalError is code's answer as the stores' refusal type; it panics on an unknown code.
func RefusalError(code string) *payroll.Refusal {
	r, ok := refusals[code]
	if !ok {
		panic("bnpl: no refusal " + code)
	}
	return &payroll.Refusal{Code: r.Code, Status: r.Status, Message: r.Message}
}

// CodeOf is the code of a store refusal in the table, "" for any other error.
func CodeOf(err error) string {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		if _, ok := refusals[r.Code]; ok {
			return r.Code
		}
	}
	return ""
}
