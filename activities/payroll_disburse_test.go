package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The record step reads the saga that owns a fan-out (or a part of a run paid in parts) from its
// id, and refuses any id that is not one a payroll saga makes.
func TestPayrollFanoutOwner(t *testing.T) {
	for id, owner := range map[string]string{
		"payroll-disburse-prun_1-pay":   "payroll-disburse-prun_1",
		"payroll-disburse-prun_1-pay2":  "payroll-disburse-prun_1",
		"payroll-disburse-prun_1-pay12": "payroll-disburse-prun_1",
		"retry-key-pay-pay":             "retry-key-pay",
	} {
		got, ok := PayrollFanoutOwner(id)
		require.True(t, ok, id)
		require.Equal(t, owner, got, id)
	}
	for _, id := range []string{"", "-pay", "saga-pay1", "saga-pay0", "saga-pay02", "saga-pay+2", "saga-pay2x", "saga", "saga-payroll"} {
		_, ok := PayrollFanoutOwner(id)
		require.False(t, ok, id)
	}
}

// The retry's release as the saga calls it, on the real database: an entry a retry's saga
// claimed and never sent is given back FAILED with the reason, so that another retry claims it
// (attempt 3); a reason that is not an identifier is refused, non-retryable, before anything.
func TestPayrollRetryReleaseAgainstTheDatabase(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	as := func(actor string, fn func(ctx context.Context, tx db.BunTx) error) {
		t.Helper()
		ctx := tenancy.WithActor(o.Ctx, actor)
		require.NoError(t, tenancy.InBunTx(ctx, o.Bun, func(tx db.BunTx) error { return fn(ctx, tx) }))
	}
	var runID string
	as("u-maker", func(ctx context.Context, tx db.BunTx) error {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-11", now)
		if err != nil {
			return err
		}
		_, err = payroll.CalculateRun(ctx, tx, r.ID, now)
		runID = r.ID
		return err
	})
	as("u-checker", func(ctx context.Context, tx db.BunTx) error {
		if _, err := payroll.ApproveRun(ctx, tx, runID, now); err != nil {
			return err
		}
		_, err := payroll.ChangeSettings(ctx, tx, payroll.LayerTenant, payroll.SettingsChange{PayrollAccount: payroll.Field[payroll.Account]{
			Set: true, Value: &payroll.Account{Partner: "cbe", AccountNumber: "2000000000001", HolderName: "Org Treasury"}}})
		return err
	})
	a := &PayrollDisburse{DB: o.Bun, Now: func() time.Time { return now }}
	ctx := context.Background()
	const wf = "payroll-disburse-release"
	claim, err := a.Claim(ctx, PayrollDisburseStep{Run: Run{TenantID: o.ID, WorkflowID: wf}, RunID: runID, ActorID: "u-checker", Partner: "cbe"})
	require.NoError(t, err)
	require.Len(t, claim.Items, 1)
	entryID := claim.Items[0].EntryID
	require.NoError(t, a.Record(ctx, BulkRecordInput{Run: Run{TenantID: o.ID, WorkflowID: wf + "-pay-b1"}, FanoutID: wf + PayrollFanoutSuffix,
		Items: []BulkItemOutcome{{Key: entryID, Reference: "ref-1", Status: "FAILED", FailureCode: "ACCOUNT_CLOSED"}}}))
	state, err := a.Finish(ctx, PayrollDisburseStep{Run: Run{TenantID: o.ID, WorkflowID: wf}, RunID: runID})
	require.NoError(t, err)
	require.Equal(t, PayrollRunState{RunID: runID, Status: payroll.RunDisbursed, Failed: 1}, state)

	retry := func(saga string) PayrollDisburseStep {
		return PayrollDisburseStep{Run: Run{TenantID: o.ID, WorkflowID: saga}, RunID: runID, EntryID: entryID, ActorID: "u-checker"}
	}
	entry := func() payroll.Entry {
		var e payroll.Entry
		as("u-checker", func(ctx context.Context, tx db.BunTx) (err error) {
			e, err = payroll.GetEntry(ctx, tx, runID, entryID)
			return err
		})
		return e
	}
	c, err := a.ClaimRetry(ctx, retry("idem-retry-1"))
	require.NoError(t, err)
	require.Equal(t, 2, c.Attempt)
	require.Equal(t, payroll.EntryDisbursing, entry().Status)

	bad := PayrollDisburseStep{Run: Run{TenantID: o.ID, WorkflowID: "idem-retry-1"}, RunID: runID, EntryID: entryID, Reason: "not sent"}
	err = a.ReleaseRetry(ctx, bad)
	require.Equal(t, "INVALID_ARGUMENT", ErrorType(err))
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app) && app.NonRetryable(), "%v", err)
	require.Equal(t, payroll.EntryDisbursing, entry().Status, "a refused release changes nothing")

	release := PayrollDisburseStep{Run: Run{TenantID: o.ID, WorkflowID: "idem-retry-1"}, RunID: runID, EntryID: entryID, Reason: "UNANSWERED"}
	require.NoError(t, a.ReleaseRetry(ctx, release))
	require.NoError(t, a.ReleaseRetry(ctx, release), "at least once: a second call changes nothing")
	e := entry()
	require.Equal(t, payroll.EntryFailed, e.Status)
	require.Equal(t, "UNANSWERED", e.FailureReason)

	c, err = a.ClaimRetry(ctx, retry("idem-retry-2"))
	require.NoError(t, err, "the released entry is free for another retry")
	require.Equal(t, 3, c.Attempt)
	require.Equal(t, emp, entry().EmployeeID)
}
