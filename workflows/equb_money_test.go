package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
)

// A run whose steps already concluded its payout (its workflow task lost on a loaded worker after
// the local steps ran, so they run again from the start): the plan finds the payout FAILED or
// PAID under this run, and the run answers that outcome. Nothing is posted, claimed or sent
// again: the plan skipped the run's own FAILED payout and the pot was sent again while the cycle
// was OPEN for a new key.
func TestEqubPayoutAnswersWhatItAlreadyConcluded(t *testing.T) {
	concluded := func(c equb.Concluded) equb.MoneyPlan {
		return equb.MoneyPlan{TenantID: "biz-1", GroupID: "equb_1", CycleID: "eqc_2", MembershipID: "eqm_2", AmountSantim: 150_000,
			Owner: equbPayoutWF, Concluded: &c}
	}
	t.Run("FAILED", func(t *testing.T) {
		h := newSagaHarness[EqubPayoutAccepted](t, equbPayoutWF, EqubPayoutAcceptedUpdate, EqubPayoutAcceptedUpdateID).localOnly(t)
		h.on(activities.EqubPayoutLoadPlanActivity, equbPayoutStep).Return(concluded(equb.Concluded{Status: equb.MoneyFailed,
			LedgerTxID: "ptx-1", TransferID: "tr-9", FailureCode: "ACCOUNT_CLOSED"}), nil).Once()
		failed := equbPayoutStep
		failed.Reason = "ACCOUNT_CLOSED"
		h.on(activities.EqubPayoutMarkFailedActivity, failed).Return(equb.Payout{ID: "eqp_1", Status: equb.MoneyFailed}, nil).Once()
		res := runSagaHarness[EqubPayoutAccepted, EqubPayoutResult](t, h, EqubPayoutWorkflowName, equbPayoutIn)
		require.Equal(t, EqubPayoutResult{GroupID: "equb_1", CycleID: "eqc_2", Status: EqubPayoutFailed, Code: "ACCOUNT_CLOSED",
			Reason: "ACCOUNT_CLOSED", LedgerTxID: "ptx-1", TransferID: "tr-9"}, res)
		require.Equal(t, EqubPayoutAccepted{GroupID: "equb_1", CycleID: "eqc_2", Status: EqubPayoutFailed, WorkflowID: equbPayoutWF}, h.accepted)
		require.Equal(t, []string{activities.EqubPayoutLoadPlanActivity, activities.EqubPayoutMarkFailedActivity}, h.activityCalls())
	})
	t.Run("PAID", func(t *testing.T) {
		h := newSagaHarness[EqubPayoutAccepted](t, equbPayoutWF, EqubPayoutAcceptedUpdate, EqubPayoutAcceptedUpdateID).localOnly(t)
		h.on(activities.EqubPayoutLoadPlanActivity, equbPayoutStep).Return(concluded(equb.Concluded{Status: equb.MoneyPaid,
			LedgerTxID: "ptx-1", TransferID: "tr-9"}), nil).Once()
		res := runSagaHarness[EqubPayoutAccepted, EqubPayoutResult](t, h, EqubPayoutWorkflowName, equbPayoutIn)
		require.Equal(t, EqubPayoutResult{GroupID: "equb_1", CycleID: "eqc_2", Status: EqubPayoutPaid, LedgerTxID: "ptx-1", TransferID: "tr-9"}, res)
		require.Equal(t, EqubPayoutAccepted{GroupID: "equb_1", CycleID: "eqc_2", Status: EqubPayoutPaid, WorkflowID: equbPayoutWF}, h.accepted)
		require.Equal(t, []string{activities.EqubPayoutLoadPlanActivity}, h.activityCalls())
	})
}

// The same for a contribution: the plan finds it FAILED or POSTED under this run (it read the
// run's own contribution back and the saga sent the transfer again), and the run answers that
// outcome; a contribution by payroll deduction learns its group from the concluded plan.
func TestEqubContributeAnswersWhatItAlreadyConcluded(t *testing.T) {
	concluded := func(c equb.Concluded) equb.MoneyPlan {
		return equb.MoneyPlan{TenantID: "biz-1", GroupID: "equb_1", CycleID: "eqc_1", MembershipID: "eqm_1", AmountSantim: 50_000,
			Owner: equbWF, Concluded: &c}
	}
	failedPlan := concluded(equb.Concluded{Status: equb.MoneyFailed, LedgerTxID: "etx-1", TransferID: "tr-1", FailureCode: "ACCOUNT_FROZEN"})
	t.Run("FAILED", func(t *testing.T) {
		h := newSagaHarness[EqubContributeAccepted](t, equbWF, EqubContributeAcceptedUpdate, EqubContributeAcceptedUpdateID).localOnly(t)
		h.on(activities.EqubContributionLoadPlanActivity, equbStep).Return(failedPlan, nil).Once()
		failed := equbStep
		failed.Reason = "ACCOUNT_FROZEN"
		h.on(activities.EqubContributionMarkFailedActivity, failed).Return(equb.Contribution{ID: "eqt_1", Status: equb.MoneyFailed}, nil).Once()
		res := runSagaHarness[EqubContributeAccepted, EqubContributeResult](t, h, EqubContributeWorkflowName, equbIn)
		require.Equal(t, EqubContributeResult{GroupID: "equb_1", CycleID: "eqc_1", Status: EqubContributeFailed, Code: "ACCOUNT_FROZEN",
			Reason: "ACCOUNT_FROZEN", LedgerTxID: "etx-1", TransferID: "tr-1"}, res)
		require.Equal(t, EqubContributeAccepted{GroupID: "equb_1", CycleID: "eqc_1", Status: EqubContributeFailed, WorkflowID: equbWF}, h.accepted)
		require.Equal(t, []string{activities.EqubContributionLoadPlanActivity, activities.EqubContributionMarkFailedActivity}, h.activityCalls())
	})
	t.Run("POSTED", func(t *testing.T) {
		h := newSagaHarness[EqubContributeAccepted](t, equbWF, EqubContributeAcceptedUpdate, EqubContributeAcceptedUpdateID).localOnly(t)
		h.on(activities.EqubContributionLoadPlanActivity, equbStep).Return(concluded(equb.Concluded{Status: equb.MoneyPosted,
			LedgerTxID: "etx-1", TransferID: "tr-1"}), nil).Once()
		res := runSagaHarness[EqubContributeAccepted, EqubContributeResult](t, h, EqubContributeWorkflowName, equbIn)
		require.Equal(t, EqubContributeResult{GroupID: "equb_1", CycleID: "eqc_1", Status: EqubContributePosted, LedgerTxID: "etx-1", TransferID: "tr-1"}, res)
		require.Equal(t, EqubContributeAccepted{GroupID: "equb_1", CycleID: "eqc_1", Status: EqubContributePosted, WorkflowID: equbWF}, h.accepted)
		require.Equal(t, []string{activities.EqubContributionLoadPlanActivity}, h.activityCalls())
	})
	t.Run("FAILED by payroll deduction", func(t *testing.T) {
		src := &equb.PayrollSource{MembershipID: "eqm_1", MandateID: "mdt_1", AmountSantim: 50_000}
		in := EqubContributeInput{TenantID: "biz-1", CorrelationID: "http-req-8", Payroll: src}
		step := activities.EqubStep{Run: equbRun, Payroll: src}
		h := newSagaHarness[EqubContributeAccepted](t, equbWF, EqubContributeAcceptedUpdate, EqubContributeAcceptedUpdateID).localOnly(t)
		h.on(activities.EqubContributionLoadPlanActivity, step).Return(failedPlan, nil).Once()
		failed := step
		failed.GroupID, failed.Reason = "equb_1", "ACCOUNT_FROZEN"
		h.on(activities.EqubContributionMarkFailedActivity, failed).Return(equb.Contribution{ID: "eqt_1", Status: equb.MoneyFailed}, nil).Once()
		res := runSagaHarness[EqubContributeAccepted, EqubContributeResult](t, h, EqubContributeWorkflowName, in)
		require.Equal(t, EqubContributeResult{GroupID: "equb_1", CycleID: "eqc_1", Status: EqubContributeFailed, Code: "ACCOUNT_FROZEN",
			Reason: "ACCOUNT_FROZEN", LedgerTxID: "etx-1", TransferID: "tr-1"}, res)
		require.Equal(t, EqubContributeAccepted{GroupID: "equb_1", CycleID: "eqc_1", Status: EqubContributeFailed, WorkflowID: equbWF}, h.accepted)
	})
}
