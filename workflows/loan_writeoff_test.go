package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
)

const loanWriteOffWF = "idem-t1-LOANWRITEOFFTESTWORKFLOW"

// Each refusal of the claim ends the saga REFUSED, answered with the code, nothing posted — a
// repayment of the loan being recorded (LOAN_REPAYMENT_IN_PROGRESS) and a payroll run holding an
// instalment (LOAN_INSTALMENT_IN_OPEN_RUN) among them.
func TestLoanWriteOffRefused(t *testing.T) {
	in := LoanWriteOffInput{TenantID: "t1", LoanID: "loan_1", Reason: "uncollectable", ActorID: "op-1", CorrelationID: "http-req-9"}
	step := activities.LoanWriteOffStep{Run: activities.Run{TenantID: "t1", WorkflowID: loanWriteOffWF, CorrelationID: "http-req-9"},
		LoanID: "loan_1", ActorID: "op-1", Reason: "uncollectable"}
	for _, code := range []string{lending.CodeLoanNotFound, lending.CodeLoanInvalidState, lending.CodeWriteOffNotApproved,
		lending.CodeWriteOffInProgress, lending.CodeRepaymentInProgress, lending.CodeInstalmentInOpenRun} {
		t.Run(code, func(t *testing.T) {
			h := newSagaHarness[WriteOffAccepted](t, loanWriteOffWF, WriteOffAcceptedUpdate, WriteOffAcceptedUpdateID)
			h.on(activities.LoanWriteOffBeginActivity, step).Return(lending.WriteOffClaim{},
				temporal.NewNonRetryableApplicationError("refused", code, nil)).Once()
			res := runSagaHarness[WriteOffAccepted, LoanWriteOffResult](t, h, LoanWriteOffWorkflowName, in)
			require.Equal(t, LoanWriteOffResult{LoanID: "loan_1", Status: WriteOffRefused, Code: code}, res)
			var ae *temporal.ApplicationError
			require.True(t, errors.As(h.updErr, &ae), "%v", h.updErr)
			require.Equal(t, code, ae.Type())
			require.Equal(t, []string{activities.LoanWriteOffBeginActivity}, h.calls)
		})
	}
}
