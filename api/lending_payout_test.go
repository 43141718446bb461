package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// A loan is paid to the account the FI approved it for: the borrower's payout account when the
// business requested it, which the FI sees on the loan. The business repointing the employee's
// account after the approval (with a holder name of its choosing, so the name rule passes) gets
// LOAN_PAYOUT_ACCOUNT_CHANGED and nothing moves; with the account as approved, it is paid.
func TestLoanPaysTheAccountTheFIApproved(t *testing.T) {
	t.Parallel()
	s := newDisburseStack(t, ewaStackOpts{}, false)
	s.approveKyc(t)
	l := s.approvedLoan(t)
	require.NotNil(t, l.PayoutAccount)
	require.Equal(t, payoutAccountJSON{Partner: "sandbox", AccountNumber: stackEmployeeAcct, HolderName: "Abebe Kebede"}, *l.PayoutAccount)
	rec := s.fi.call(http.MethodGet, "/api/fi/loans/"+l.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, l.PayoutAccount, decode[loanJSON](t, rec).PayoutAccount, "the FI approves where the loan goes")

	other := testkit.Unique("MALLORY")
	s.bank.Account(t, other, "Mallory Admin", 0)
	repoint := func(account, holder string) {
		rec := s.owner.call(http.MethodPut, "/api/employees/"+s.employee, map[string]any{
			"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": account, "holderName": holder}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	repoint(other, "Mallory Admin")
	before := s.loanEffects(t)
	catalogStatus(t, s.disburseLoan(l.ID, testkit.Unique("k")), http.StatusConflict, "LOAN_PAYOUT_ACCOUNT_CHANGED")
	require.Equal(t, before, s.loanEffects(t), "nothing moved")
	require.Equal(t, "APPROVED", s.waitLoan(t, l.ID, "APPROVED").Status)
	require.Zero(t, s.balance(t, other))

	repoint(stackEmployeeAcct, "Abebe Kebede")
	rec = s.disburseLoan(l.ID, testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	s.waitLoan(t, l.ID, "ACTIVE")
	require.Equal(t, loanPrincipal, s.balance(t, stackEmployeeAcct))
	require.Zero(t, s.balance(t, other))
}
