package activities

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The EWA store's refusals become non-retryable errors typed by their API code; anything else
// goes through temporalError (a database error is retried).
func TestEwaErrorCodes(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("load: %w", ewa.ErrNotFound):        ewa.CodeRequestNotFound,
		fmt.Errorf("claim: %w", ewa.ErrNotDisbursable): ewa.CodeInvalidState,
		fmt.Errorf("load: %w", ewa.ErrFundingNotSet):   ewa.CodeFundingAccountNotSet,
	} {
		requireErrType(t, ewaError(err), want, true)
	}
	requireErrType(t, ewaError(fmt.Errorf("connection reset")), ErrTypeDependency, false)
	require.NoError(t, ewaError(nil))
}

// Input is validated before any transaction; a worker without a pool is misconfigured.
func TestEwaStepsRefuseBadInput(t *testing.T) {
	d := testkit.NewDB(t)
	a := &Ewa{DB: d.App}
	ctx := context.Background()
	good := EwaStep{Run: Run{TenantID: "t1", WorkflowID: "idem-t1-X", CorrelationID: "http-1"}, RequestID: "req-1"}
	for name, in := range map[string]EwaStep{
		"no tenant":       {Run: Run{WorkflowID: "wf"}, RequestID: "req-1"},
		"bad request id":  {Run: Run{TenantID: "t1", WorkflowID: "wf"}, RequestID: "req 1"},
		"no workflow":     {Run: Run{TenantID: "t1"}, RequestID: "req-1"},
		"control in text": {Run: Run{TenantID: "t1", WorkflowID: "wf"}, RequestID: "req-1", Reason: "x\x00"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := a.LoadPlan(ctx, in)
			requireErrType(t, err, ErrTypeInvalidArgument, true)
			requireErrType(t, a.MarkFailed(ctx, in), ErrTypeInvalidArgument, true)
			_, err = a.Begin(ctx, in)
			requireErrType(t, err, ErrTypeInvalidArgument, true)
			requireErrType(t, a.ClaimWithLedgerTx(ctx, in), ErrTypeInvalidArgument, true)
		})
	}
	requireErrType(t, (&Ewa{}).Claim(ctx, good), ErrTypeMisconfigured, true)
	requireErrType(t, (&Ewa{}).SetLedgerTx(ctx, good), ErrTypeMisconfigured, true)
	requireErrType(t, (&Ewa{}).MarkDisbursed(ctx, good), ErrTypeMisconfigured, true)
	_, err := (&Ewa{}).Begin(ctx, good)
	requireErrType(t, err, ErrTypeMisconfigured, true)
	requireErrType(t, (&Ewa{}).ClaimWithLedgerTx(ctx, good), ErrTypeMisconfigured, true)
}
