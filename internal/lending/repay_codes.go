package lending

import (
	"fmt"
	"net/http"

	"github.com/wagerail/wagerail/internal/payroll"
)

// The stable codes of the repayment and remittance refusals (the loan's own, LOAN_NOT_FOUND and
// LOAN_INVALID_STATE, are loans.go's). The store returns them as *payroll.Refusal; the sagas'
// activities type their non-retryable errors with the code, and the API answers a code from a
// saga with MoneyRefusalOf.
const (
	CodeInstalmentNotFound = "LOAN_INSTALMENT_NOT_FOUND" // 404
	// CodeRepaymentExceedsOutstanding: more than the instalment's outstanding (total less what is
	// repaid); the message and details.outstandingSantim say how much may still be repaid.
	CodeRepaymentExceedsOutstanding = "LOAN_REPAYMENT_EXCEEDS_OUTSTANDING" // 422
	// CodeRepaymentInProgress: another repayment of the instalment is being posted; retry.
	CodeRepaymentInProgress = "LOAN_REPAYMENT_IN_PROGRESS" // 409
	// CodeInstalmentNotRepaid: only a REPAID instalment is remitted.
	CodeInstalmentNotRepaid = "LOAN_INSTALMENT_NOT_REPAID" // 409
	// CodeFISettlementAccountNotSet: the FI has no settlement account (the FI mapping).
	CodeFISettlementAccountNotSet = "LOAN_FI_SETTLEMENT_ACCOUNT_NOT_SET" // 409
	// CodePayrollAccountNotSet: the business has no payroll account in its payroll settings.
	CodePayrollAccountNotSet = "LOAN_PAYROLL_ACCOUNT_NOT_SET" // 409
	// CodeRemitPartnerMismatch: the payroll account and the FI's settlement account are at
	// different partner banks; a remittance is a transfer within one partner.
	CodeRemitPartnerMismatch = "LOAN_REMIT_PARTNER_MISMATCH" // 409
)

// ErrInstalmentNotFound: the loan has no instalment of that index.
var ErrInstalmentNotFound = payroll.NotFound(CodeInstalmentNotFound, "loan instalment")

var (
	errRepaymentInProgress = &payroll.Refusal{Code: CodeRepaymentInProgress, Status: http.StatusConflict,
		Message: "another repayment of this instalment is being recorded; retry once it is done"}
	errInstalmentNotRepaid = &payroll.Refusal{Code: CodeInstalmentNotRepaid, Status: http.StatusConflict,
		Message: "only a REPAID instalment is remitted to the financial institution"}
	errFISettlementNotSet = &payroll.Refusal{Code: CodeFISettlementAccountNotSet, Status: http.StatusConflict,
		Message: "the financial institution has no settlement account (PUT /api/fi/accounts)"}
	errPayrollAccountNotSet = &payroll.Refusal{Code: CodePayrollAccountNotSet, Status: http.StatusConflict,
		Message: "the organization has no payroll account in its payroll settings (POST /api/payroll/tenant-settings)"}
	errRemitPartnerMismatch = &payroll.Refusal{Code: CodeRemitPartnerMismatch, Status: http.StatusConflict,
		Message: "the payroll account and the financial institution's settlement account are at different partner banks"}
)

// overpayment is the refusal of a repayment of more than outstanding.
func overpayment(outstanding int64) *payroll.Refusal {
	return &payroll.Refusal{Code: CodeRepaymentExceedsOutstanding, Status: http.StatusUnprocessableEntity,
		Message: fmt.Sprintf("amountSantim is more than the instalment's outstanding %d santim", outstanding),
		Details: map[string]any{"outstandingSantim": outstanding}}
}

// MoneyRefusalOf is the answer to a refusal code of the repayment or remittance saga (its HTTP
// status and public message); outstanding is the overpayment's detail. ok is false for a code
// that is not one of them.
func MoneyRefusalOf(code string, outstanding int64) (r *payroll.Refusal, ok bool) {
	switch code {
	case CodeLoanNotFound:
		return ErrLoanNotFound, true
	case CodeInstalmentNotFound:
		return ErrInstalmentNotFound, true
	case CodeLoanInvalidState:
		return &payroll.Refusal{Code: code, Status: http.StatusConflict, Message: "the loan's state does not allow this"}, true
	case CodeRepaymentExceedsOutstanding:
		return overpayment(outstanding), true
	}
	for _, r := range []*payroll.Refusal{errRepaymentInProgress, errInstalmentNotRepaid, errFISettlementNotSet, errPayrollAccountNotSet,
		errRemitPartnerMismatch} {
		if r.Code == code {
			return r, true
		}
	}
	return nil, false
}
