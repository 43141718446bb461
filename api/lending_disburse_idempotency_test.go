package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// TestLoanDisburseKeyReusedAfterItsRecordExpired: a loan keeps the workflow id of the
// disbursement saga that claimed it, which derives from the Idempotency-Key alone. Once the key's
// stored answer is gone (14 days), the same loan under it is still answered by its saga, but
// another loan under it is 422 IDEMPOTENCY_KEY_REUSED, nothing started — it was 202 (the old
// run's answer) with the new loan's id while that loan stayed APPROVED and nothing moved. A key
// whose saga failed, and whose loan another key has paid out since (the loan no longer names it),
// is read from its update's answer: another loan under it is 422 too (it was 202 as well).
func TestLoanDisburseKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	s := newDisburseStack(t, ewaStackOpts{}, false)
	s.approveKyc(t)
	l := s.approvedLoan(t)
	key := testkit.Unique("disburse")
	rec := s.disburseLoan(l.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[loanDisburseJSON](t, rec)
	s.waitLoan(t, l.ID, "ACTIVE")
	before := s.loanEffects(t)
	require.Equal(t, [3]int{1, 1, 1}, before)

	// The same loan: its saga's answer.
	forgetIdempotencyRecord(t, s.ewaStack, key)
	rec = s.disburseLoan(l.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	again := decode[loanDisburseJSON](t, rec)
	require.Equal(t, [2]string{first.ID, first.WorkflowID}, [2]string{again.ID, again.WorkflowID})

	// Another loan: refused, nothing started.
	other := s.approvedLoan(t)
	forgetIdempotencyRecord(t, s.ewaStack, key)
	requireStatus(t, s.disburseLoan(other.ID, key), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	require.Equal(t, before, s.loanEffects(t))
	require.Equal(t, "APPROVED", s.waitLoan(t, other.ID, "APPROVED").Status)
	require.Equal(t, loanPrincipal, s.balance(t, stackEmployeeAcct), "paid once")

	// A key whose saga's transfer failed; another key paid its loan out since.
	s.bank.Sandbox.Fault(t, s.fiFunding, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
	failedKey := testkit.Unique("disburse")
	rec = s.disburseLoan(other.ID, failedKey)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var res workflows.LoanDisburseResult
	require.NoError(t, s.tc.GetWorkflow(context.Background(), decode[loanDisburseJSON](t, rec).WorkflowID, "").Get(context.Background(), &res))
	require.Equal(t, "FAILED", res.Status)
	s.waitLoan(t, other.ID, "APPROVED")
	s.bank.Sandbox.ClearFault(t, s.fiFunding)
	rec = s.disburseLoan(other.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitLoan(t, other.ID, "ACTIVE")
	third := s.approvedLoan(t)
	before = s.loanEffects(t)
	forgetIdempotencyRecord(t, s.ewaStack, failedKey)
	requireStatus(t, s.disburseLoan(third.ID, failedKey), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	require.Equal(t, before, s.loanEffects(t))
	require.Equal(t, "APPROVED", s.waitLoan(t, third.ID, "APPROVED").Status)

	// A new key for it: paid out.
	rec = s.disburseLoan(third.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitLoan(t, third.ID, "ACTIVE")
}
