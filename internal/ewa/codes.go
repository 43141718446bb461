package ewa

import (
	"errors"
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The stable API codes of early wage access's refusals, defined once: the store's errors map to
// them (CodeOf), the disburse saga answers its update with them (the ApplicationError's Type),
// the record-step activities type their non-retryable errors with them, and the API answers each
// with its HTTP status and public message (RefusalOf).
const (
	CodeRequestNotFound   = "EWA_REQUEST_NOT_FOUND"
	CodeEmployeeNotFound  = "EMPLOYEE_NOT_FOUND"
	CodeEmployeeNotActive = "EWA_EMPLOYEE_NOT_ACTIVE"
	CodeInvalidState      = "EWA_INVALID_STATE"
	CodeNotDisbursed      = "EWA_NOT_DISBURSED"
	// CodeRepaymentExceedsOutstanding: a repayment of more than is still owed (principal + fee
	// less the repayments posted and reserved); the answer's details.outstandingSantim says how much.
	CodeRepaymentExceedsOutstanding = "EWA_REPAYMENT_EXCEEDS_OUTSTANDING"
	// CodeRecoveryInOpenRun: a repayment by hand (a source other than a run's completion) while a
	// payroll run that has not completed withheld, or may still withhold, the advance's recovery:
	// its completion applies that recovery, and a repayment now would leave it nothing to apply to
	// (the employee charged twice).
	CodeRecoveryInOpenRun    = "EWA_RECOVERY_IN_OPEN_RUN"
	CodeLimitExceeded        = "EWA_LIMIT_EXCEEDED"
	CodeFundingAccountNotSet = "EWA_FUNDING_ACCOUNT_NOT_SET"

	// The disburse saga's gates.
	CodeKycNotApproved     = "EWA_KYC_NOT_APPROVED"
	CodeSanctionsBlocked   = "EWA_SANCTIONS_BLOCKED"
	CodeDestinationInvalid = "EWA_DESTINATION_ACCOUNT_INVALID"
	CodeAccountMismatch    = "ACCOUNT_MISMATCH"
	CodePartnerUnavailable = "EWA_PARTNER_UNAVAILABLE"
)

// refusals is the one table. The KYC and sanctions gates are business rules the caller cannot
// fix in the request (422); a destination the partner does not confirm is a conflict with the
// partner's state (409, as the spec says); a partner that cannot be asked fails closed with 503
// (nothing moved; retry later with a new key).
var refusals = refusal.Table{
	CodeRequestNotFound:             {Status: http.StatusNotFound, Message: "no such EWA request in this organization"},
	CodeEmployeeNotFound:            {Status: http.StatusNotFound, Message: "no such employee in this organization"},
	CodeEmployeeNotActive:           {Status: http.StatusConflict, Message: "only an ACTIVE employee may draw an advance"},
	CodeInvalidState:                {Status: http.StatusConflict, Message: "the request's state does not allow this"},
	CodeNotDisbursed:                {Status: http.StatusConflict, Message: "only a DISBURSED request can be repaid"},
	CodeRepaymentExceedsOutstanding: {Status: http.StatusUnprocessableEntity, Message: "repaidAmountSantim is more than what is still owed on the request (details.outstandingSantim)"},
	CodeRecoveryInOpenRun:           {Status: http.StatusConflict, Message: "a payroll run that has not completed withheld or may withhold this advance's recovery; retry once it has completed"},
	CodeLimitExceeded:               {Status: http.StatusUnprocessableEntity, Message: "the amount plus its fee is more than the employee may draw now"},
	CodeFundingAccountNotSet:        {Status: http.StatusConflict, Message: "set the organization's EWA funding account first (PUT /api/ewa/settings)"},

	CodeKycNotApproved:     {Status: http.StatusUnprocessableEntity, Message: "the employee's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:   {Status: http.StatusUnprocessableEntity, Message: "the employee did not pass sanctions screening"},
	CodeDestinationInvalid: {Status: http.StatusConflict, Message: "the partner bank did not confirm the employee's payout account"},
	CodeAccountMismatch:    {Status: http.StatusConflict, Message: "the payout account's holder name at the partner bank does not match the employee's"},
	CodePartnerUnavailable: {Status: http.StatusServiceUnavailable, Message: "the partner bank could not be asked about the payout account; nothing moved, try again later with a new key"},
}

// RefusalOf is code's answer; ok is false for a code that is not EWA's.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

// storeCodes maps the store's errors to their codes, in the order CodeOf tries them.
var storeCodes = []struct {
	err  error
	code string
}{
	{ErrNotFound, CodeRequestNotFound},
	{ErrEmployeeNotFound, CodeEmployeeNotFound},
	{ErrEmployeeNotActive, CodeEmployeeNotActive},
	{ErrNotDisbursable, CodeInvalidState},
	{ErrInvalidState, CodeInvalidState},
	{ErrNotDisbursed, CodeNotDisbursed},
	{ErrExceedsOutstanding, CodeRepaymentExceedsOutstanding},
	{ErrRecoveryInOpenRun, CodeRecoveryInOpenRun},
	{ErrLimitExceeded, CodeLimitExceeded},
	{ErrFundingNotSet, CodeFundingAccountNotSet},
}

// CodeOf is the code of one of the store's refusals (errors.Is), "" for any other error.
func CodeOf(err error) string {
	if err == nil {
		return ""
	}
	for _, s := range storeCodes {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return ""
}
