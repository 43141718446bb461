package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/reconcile"
)

func newEscrowReconEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The race detector slows the first workflow task past the default second.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(env, Deps{})
	env.SetStartTime(time.Date(2026, 12, 2, 7, 45, 0, 0, time.UTC))
	return env
}

// TestEqubEscrowReconcileEveryone: a run without tenants finds them, checks each (a tenant whose
// check fails is reported, the others still checked), records the run with the per-partner
// drift, and fails typed EQUB_ESCROW_RECON_ERRORS with the full report as details.
func TestEqubEscrowReconcileEveryone(t *testing.T) {
	env := newEscrowReconEnv()
	env.OnActivity(activities.EqubEscrowFindTenantsActivity, mock.Anything, activities.EqubEscrowFindInput{}).
		Return(activities.EqubEscrowFindResult{Tenants: []string{"biz-1", "biz-2", "biz-3"}}, nil).Once()
	clean := reconcile.EscrowCheck{TenantID: "biz-1", Partner: "sandbox", EscrowAccount: "E1", Cycles: 2, StatementNetSantim: 900, PoolPostedSantim: 900, Status: reconcile.EscrowClean}
	drifted := reconcile.EscrowCheck{TenantID: "biz-3", Partner: "sandbox", EscrowAccount: "E3", Cycles: 1, StatementNetSantim: 100, PoolPostedSantim: 350, DriftSantim: -250, Status: reconcile.EscrowDrift}
	env.OnActivity(activities.EqubEscrowCheckTenantActivity, mock.Anything, activities.EqubEscrowCheckInput{TenantID: "biz-1", To: "2026-12-02"}).
		Return(activities.EqubEscrowCheckResult{Checks: []reconcile.EscrowCheck{clean}}, nil).Once()
	env.OnActivity(activities.EqubEscrowCheckTenantActivity, mock.Anything, activities.EqubEscrowCheckInput{TenantID: "biz-2", To: "2026-12-02"}).
		Return(activities.EqubEscrowCheckResult{}, temporal.NewNonRetryableApplicationError("broken statement", "INVALID_ARGUMENT", nil)).Once()
	env.OnActivity(activities.EqubEscrowCheckTenantActivity, mock.Anything, activities.EqubEscrowCheckInput{TenantID: "biz-3", To: "2026-12-02"}).
		Return(activities.EqubEscrowCheckResult{Checks: []reconcile.EscrowCheck{drifted}}, nil).Once()
	env.OnActivity(activities.EqubEscrowRecordRunActivity, mock.Anything, activities.EqubEscrowRecordInput{Everyone: true, Accounts: 2, Drifted: 1, Errors: 1,
		Partners: []reconcile.EscrowPartnerTotal{{Partner: "sandbox", Accounts: 2, Drifted: 1, AbsDriftSantim: 250}}}).Return(nil).Once()
	env.ExecuteWorkflow(EqubEscrowReconcileWorkflowName, EqubEscrowReconcileInput{})
	require.True(t, env.IsWorkflowCompleted())
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr), "%v", env.GetWorkflowError())
	require.Equal(t, ErrTypeEqubEscrowReconErrors, appErr.Type())
	var rep EqubEscrowReconcileResult
	require.NoError(t, appErr.Details(&rep))
	require.Equal(t, []reconcile.EscrowCheck{clean, drifted}, rep.Checks)
	require.Len(t, rep.Failures, 1)
	require.Equal(t, "biz-2", rep.Failures[0].TenantID)
	env.AssertExpectations(t)
}

// TestEqubEscrowReconcileTenantsGiven: a run given its tenants checks those alone (no search),
// and a clean run is a success recorded as not covering everyone.
func TestEqubEscrowReconcileTenantsGiven(t *testing.T) {
	env := newEscrowReconEnv()
	clean := reconcile.EscrowCheck{TenantID: "biz-1", Partner: "sandbox", EscrowAccount: "E1", Cycles: 1, Status: reconcile.EscrowClean}
	env.OnActivity(activities.EqubEscrowCheckTenantActivity, mock.Anything, activities.EqubEscrowCheckInput{TenantID: "biz-1", Partners: []string{"sandbox"}, To: "2026-11-30"}).
		Return(activities.EqubEscrowCheckResult{Checks: []reconcile.EscrowCheck{clean}}, nil).Once()
	env.OnActivity(activities.EqubEscrowRecordRunActivity, mock.Anything, activities.EqubEscrowRecordInput{Accounts: 1,
		Partners: []reconcile.EscrowPartnerTotal{{Partner: "sandbox", Accounts: 1}}}).Return(nil).Once()
	env.ExecuteWorkflow(EqubEscrowReconcileWorkflowName, EqubEscrowReconcileInput{Tenants: []string{"biz-1"}, Partners: []string{"sandbox"}, To: "2026-11-30"})
	require.NoError(t, env.GetWorkflowError())
	var rep EqubEscrowReconcileResult
	require.NoError(t, env.GetWorkflowResult(&rep))
	require.Equal(t, 1, rep.Accounts)
	require.Zero(t, rep.Drifted)
	env.AssertExpectations(t)
}

// TestEqubEscrowReconcileSwitchedOff: with EQUB_ESCROW_RECON_ENABLED off the first activity
// refuses and the run fails at once: no tenant checked, nothing recorded.
func TestEqubEscrowReconcileSwitchedOff(t *testing.T) {
	env := newEscrowReconEnv()
	env.OnActivity(activities.EqubEscrowFindTenantsActivity, mock.Anything, mock.Anything).
		Return(activities.EqubEscrowFindResult{}, temporal.NewNonRetryableApplicationError("off", equb.CodeEscrowReconOff, nil)).Once()
	env.ExecuteWorkflow(EqubEscrowReconcileWorkflowName, EqubEscrowReconcileInput{})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr))
	require.Equal(t, equb.CodeEscrowReconOff, appErr.Type())
	env.AssertExpectations(t)
	env.AssertNotCalled(t, activities.EqubEscrowCheckTenantActivity, mock.Anything, mock.Anything)
	env.AssertNotCalled(t, activities.EqubEscrowRecordRunActivity, mock.Anything, mock.Anything)
}

// TestEqubEscrowReconReplay: a recorded run of the escrow reconciliation (api's
// TestEqubEscrowReconciliation with WAGERAIL_RECORD_HISTORY=1: the operator's run on the real
// stack that found someone else's money on the escrow account, DRIFT), replayed against the
// current code: a change to its command sequence that would break a running reconciliation
// fails here.
func TestEqubEscrowReconReplay(t *testing.T) {
	require.Equal(t, EqubEscrowReconcileWorkflowName, replayHistory(t, "testdata/equb_escrow_recon_history.json"))
}
