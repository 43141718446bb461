package payroll_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// disbursedRun makes a DISBURSED run of o for November 2026: one employee, paid.
func disbursedRun(t *testing.T, o *payrolltest.Org) payroll.Run {
	t.Helper()
	o.Employee(t, payrolltest.Employee{})
	const maker, checker, wf = "u-maker", "u-checker", "payroll-disburse-x"
	run, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-11", runNow)
		if err != nil {
			return r, err
		}
		return payroll.CalculateRun(ctx, tx, r.ID, runNow)
	})
	require.NoError(t, err)
	run, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		if _, err := payroll.ApproveRun(ctx, tx, run.ID, runNow); err != nil {
			return payroll.Run{}, err
		}
		c, err := payroll.ClaimDisbursement(ctx, tx, run.ID, wf, "cbe", runNow)
		if err != nil {
			return payroll.Run{}, err
		}
		var outs []payroll.EntryOutcome
		for _, it := range c.Items {
			outs = append(outs, payroll.EntryOutcome{EntryID: it.EntryID, Reference: "ref-" + it.EntryID, TransferID: "tr-" + it.EntryID,
				Status: "SETTLED"})
		}
		if _, err := payroll.RecordOutcomes(ctx, tx, wf, outs, runNow); err != nil {
			return payroll.Run{}, err
		}
		return payroll.FinishDisbursement(ctx, tx, run.ID, runNow)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.RunDisbursed, run.Status)
	return run
}

// The completion's record step run again by the saga that completed the run — its workflow task
// lost after the step committed (a crashed worker: the local activity runs again), or a new
// execution under the run's completion id after one that committed the record and then failed
// — is answered as that saga's completion: completed, with the outcome it recorded, nothing
// written again. It was answered "not completed" (and the saga answered ALREADY_COMPLETED for
// the run it completed itself, its outcome lost). Another workflow is answered completed false;
// the begin step reads the recorded completion on the run.
func TestCompleteRunAnswersTheSagaThatCompletedIt(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	run := disbursedRun(t, o)
	const wf, other = "payroll-complete:t:prun_1", "payroll-complete-other"
	out := payroll.CompletionOutcome{EWA: payroll.Tally{Count: 1, Santim: 93_000}, Loans: payroll.Tally{Count: 2, Santim: 57_000},
		Products: map[string]payroll.Tally{payroll.KindEqubContribution: {Count: 1, Santim: 5_000}},
		Refused:  payroll.Tally{Count: 1, Santim: 10_000}, RefusedLines: []payroll.RefusedDeduction{{EntryID: "pent_a",
			Kind: payroll.ObligationEWA, Reference: "ewa_1", AmountSantim: 10_000, Code: "EWA_REPAYMENT_EXCEEDS_OUTSTANDING"}},
		Remittances: 1}
	complete := func(wfID string, o2 payroll.CompletionOutcome) (payroll.Run, bool) {
		t.Helper()
		var r payroll.Run
		var done bool
		require.NoError(t, as(o, "system:payroll-complete", func(ctx context.Context, tx db.BunTx) (err error) {
			r, done, err = payroll.CompleteRun(ctx, tx, run.ID, wfID, o2, runNow)
			return err
		}))
		return r, done
	}
	written := func() []int {
		return []int{o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, payroll.EventRunCompleted),
			o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1`, payroll.ActionCompleteRun)}
	}

	r, done := complete(wf, out)
	require.True(t, done)
	require.Equal(t, payroll.RunCompleted, r.Status)
	require.Equal(t, wf, r.CompletionWorkflowID)
	require.Equal(t, &out, r.CompletionOutcome)
	require.Equal(t, []int{1, 1}, written())

	// The same saga again, with what its step was given this time (nothing: the recorded outcome
	// is the answer, whatever the re-run computed).
	again, done := complete(wf, payroll.CompletionOutcome{})
	require.True(t, done, "the saga that completed the run is answered completed")
	require.Equal(t, payroll.RunCompleted, again.Status)
	require.Equal(t, wf, again.CompletionWorkflowID)
	require.Equal(t, &out, again.CompletionOutcome, "the recorded outcome")
	require.Equal(t, []int{1, 1}, written(), "nothing written again")

	// Another workflow: completed by someone else.
	theirs, done := complete(other, out)
	require.False(t, done)
	require.Equal(t, payroll.RunCompleted, theirs.Status)
	require.Equal(t, wf, theirs.CompletionWorkflowID)
	require.Equal(t, &out, theirs.CompletionOutcome)
	require.Equal(t, []int{1, 1}, written())

	// The begin step (a new execution's first step) reads the run with its recorded completion.
	began, err := runAs(t, o, "system:payroll-complete", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.BeginCompletion(ctx, tx, run.ID)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.RunCompleted, began.Status)
	require.Equal(t, wf, began.CompletionWorkflowID)
	require.Equal(t, &out, began.CompletionOutcome)
}

// A completion names the workflow that completes the run: without one there would be nothing to
// answer its re-run by.
func TestCompleteRunNeedsAWorkflow(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	run := disbursedRun(t, o)
	require.Error(t, as(o, "system:payroll-complete", func(ctx context.Context, tx db.BunTx) error {
		_, _, err := payroll.CompleteRun(ctx, tx, run.ID, "", payroll.CompletionOutcome{}, runNow)
		return err
	}))
	r, err := runAs(t, o, "system:payroll-complete", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.BeginCompletion(ctx, tx, run.ID)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.RunDisbursed, r.Status)
	require.Nil(t, r.CompletionOutcome)
}
