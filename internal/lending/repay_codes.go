package lending

import (
	"fmt"

	"github.com/wagerail/wagerail/internal/payroll"
)

// The repayment and remittance refusals, from the one table (codes.go).
var (
	// ErrInstalmentNotFound: the loan has no instalment of that index.
	ErrInstalmentNotFound   = RefusalError(CodeInstalmentNotFound)
	errRepaymentInProgress  = RefusalError(CodeRepaymentInProgress)
	errInstalmentNotRepaid  = RefusalError(CodeInstalmentNotRepaid)
	errFISettlementNotSet   = RefusalError(CodeFISettlementAccountNotSet)
	errPayrollAccountNotSet = RefusalError(CodePayrollAccountNotSet)
	errRemitPartnerMismatch = RefusalError(CodeRemitPartnerMismatch)
)

// overpayment is the refusal of a repayment of more than outstanding: the table's status, the
// outstanding amount in the message and in the details.
func overpayment(outstanding int64) *payroll.Refusal {
	r := RefusalError(CodeRepaymentExceedsOutstanding)
	r.Message = fmt.Sprintf("amountSantim is more than the instalment's outstanding %d santim", outstanding)
	r.Details = map[string]any{"outstandingSantim": outstanding}
	return r
}

// MoneyRefusalOf is the answer to a refusal code of the repayment or remittance saga (the
// table's status and public message; an overpayment's with outstanding in its message and
// details). ok is false for a code that is not in the table.
func MoneyRefusalOf(code string, outstanding int64) (r *payroll.Refusal, ok bool) {
	if _, ok := RefusalOf(code); !ok {
		return nil, false
	}
	if code == CodeRepaymentExceedsOutstanding {
		return overpayment(outstanding), true
	}
	return RefusalError(code), true
}
