package workflows

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/testkit"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func mockedReconcileEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Under -race on a busy CI machine the first workflow task can take over the default 1 s.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	a := &activities.Reconcile{}
	env.RegisterWorkflowWithOptions(Reconcile, workflow.RegisterOptions{Name: ReconcileWorkflowName})
	env.RegisterActivityWithOptions(a.FetchStatements, activity.RegisterOptions{Name: activities.FetchStatementsActivity})
	env.RegisterActivityWithOptions(a.ReconcilePair, activity.RegisterOptions{Name: activities.ReconcilePairActivity})
	return env
}

func TestReconcileWorkflowDefaultsToYesterday(t *testing.T) {
	env := mockedReconcileEnv(t)
	// A scheduled run at 07:30 UTC on 2026-03-05 reconciles 2026-03-04.
	env.SetStartTime(time.Date(2026, 3, 5, 7, 30, 0, 0, time.UTC))
	for _, tenant := range []string{"t1", "t2"} {
		in := activities.FetchStatementsInput{TenantID: tenant, Partner: "sandbox", From: "2026-03-04", To: "2026-03-04"}
		env.OnActivity(activities.FetchStatementsActivity, mock.Anything, in).Return(activities.FetchStatementsResult{Accounts: 1, Lines: 3, New: 3}, nil).Once()
		pin := activities.ReconcilePairInput{TenantID: tenant, Partner: "sandbox", From: "2026-03-04", To: "2026-03-04"}
		sum := gateway.PairSummary{Tenant: tenant, Partner: "sandbox", PeriodFrom: "2026-03-04", PeriodTo: "2026-03-04", Scanned: 6, Matched: 6, NextAction: "none"}
		if tenant == "t2" {
			sum.Matched, sum.Flagged, sum.FlagsByKind = 4, 1, map[gateway.FlagKind]int{gateway.AmountMismatch: 1}
		}
		env.OnActivity(activities.ReconcilePairActivity, mock.Anything, pin).Return(sum, nil).Once()
	}
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{Tenants: []string{"t1", "t2"}, Partners: []string{"sandbox"}, FetchStatements: true})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "flagged lines are a successful run")
	var rep ReconcileResult
	require.NoError(t, env.GetWorkflowResult(&rep))
	require.Len(t, rep.Pairs, 2)
	require.Equal(t, 12, rep.Aggregate.Scanned)
	require.Equal(t, 10, rep.Aggregate.Matched)
	require.Equal(t, 1, rep.Aggregate.Flagged)
	require.Equal(t, 1, rep.Aggregate.FlagsByKind[gateway.AmountMismatch])
	env.AssertExpectations(t)
}

func TestReconcileWorkflowReportsRunnerErrors(t *testing.T) {
	env := mockedReconcileEnv(t)
	// The statement download fails for good (non-retryable): the pair is reported as failed,
	// never reconciled against a missing statement, and the other pair still runs.
	env.OnActivity(activities.FetchStatementsActivity, mock.Anything, activities.FetchStatementsInput{TenantID: "t1", Partner: "sandbox", From: "2026-03-01", To: "2026-03-02"}).
		Return(activities.FetchStatementsResult{}, temporal.NewNonRetryableApplicationError("statement malformed", "STATEMENT_MALFORMED", nil)).Once()
	env.OnActivity(activities.FetchStatementsActivity, mock.Anything, activities.FetchStatementsInput{TenantID: "t2", Partner: "sandbox", From: "2026-03-01", To: "2026-03-02"}).
		Return(activities.FetchStatementsResult{}, nil).Once()
	env.OnActivity(activities.ReconcilePairActivity, mock.Anything, activities.ReconcilePairInput{TenantID: "t2", Partner: "sandbox", From: "2026-03-01", To: "2026-03-02"}).
		Return(gateway.PairSummary{Tenant: "t2", Partner: "sandbox", Scanned: 2, Matched: 2}, nil).Once()
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{Tenants: []string{"t1", "t2"}, Partners: []string{"sandbox"}, From: "2026-03-01", To: "2026-03-02", FetchStatements: true})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeReconcileRunnerErrors, appErr.Type())
	var rep ReconcileResult
	require.NoError(t, appErr.Details(&rep))
	require.Len(t, rep.Pairs, 2)
	require.Equal(t, 1, rep.Pairs[0].Errors)
	require.Contains(t, rep.Pairs[0].ErrorDetails[0], "statement malformed")
	require.Equal(t, 2, rep.Pairs[1].Matched)
	require.Equal(t, 1, rep.Aggregate.Errors)
	env.AssertExpectations(t)
}

// TestReconcileWorkflowRealActivities runs the workflow on the embedded Temporal server with the
// real activities: the bank sandbox, the gateway and the ledger over gRPC, on real Postgres.
func TestReconcileWorkflowRealActivities(t *testing.T) {
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	lc := serveLedger(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// One employer account, mirrored in the ledger, one disbursement booked on both sides.
	tenant, company, emp := testkit.Unique("tenant"), testkit.Unique("co"), testkit.Unique("emp")
	stack.Account(t, company, "Employer PLC", 1_000_000)
	stack.Account(t, emp, "Abebe Kebede", 0)
	mirror := gateway.MirrorAccountName(gateway.SandboxPartner, company)
	for _, n := range []string{mirror, "opening-balance-equity", "receivable-from-employee:" + emp} {
		_, err := lc.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err)
	}
	post := func(key, bankRef, debit, credit string, amt int64) {
		_, err := lc.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: key,
			Metadata: map[string]string{"bank_reference": bankRef},
			Entries: []*ledgerv1.EntryInput{
				{AccountName: debit, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amt},
				{AccountName: credit, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amt},
			}})
		require.NoError(t, err)
	}
	post(testkit.Unique("open"), "OPENING-BALANCE", mirror, "opening-balance-equity", 1_000_000)
	ref := testkit.Unique("ewa")
	r, err := stack.Gateway.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: gateway.SandboxPartner, Reference: ref,
		FromAccount: company, ToAccount: emp, AmountSantim: 40_050, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	post(ref, ref, "receivable-from-employee:"+emp, mirror, 40_050)
	stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)

	ts := testkit.Temporal(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("reconcile")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	RegisterReconcile(w, &activities.Reconcile{
		Runner:  &gateway.Reconciler{Store: gateway.NewStore(d.App), Ledger: gateway.LedgerGRPC{Client: lc}},
		Gateway: stack.Gateway,
	})
	require.NoError(t, w.Start())
	defer w.Stop()

	day := time.Now().UTC().Format(time.DateOnly)
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("reconcile"), TaskQueue: queue},
		ReconcileWorkflowName, ReconcileInput{Tenants: []string{tenant}, Partners: []string{gateway.SandboxPartner}, From: day, To: day, FetchStatements: true})
	require.NoError(t, err)
	var rep ReconcileResult
	require.NoError(t, run.Get(ctx, &rep))
	require.Len(t, rep.Pairs, 1)
	p := rep.Pairs[0]
	require.Zero(t, p.Errors, "%v", p.ErrorDetails)
	require.Zero(t, p.Flagged, "%+v", p.FlagsByKind)
	require.Equal(t, 4, p.Scanned) // opening and hold at the bank, opening and disbursement in the ledger
	require.Equal(t, 4, p.Matched)
	require.NotZero(t, p.RunID)
	recordHistory(t, tc, run.GetID(), run.GetRunID(), reconcileHistoryFile)

	// The schedule: created once, updated (not duplicated) on the next deploy.
	in := ReconcileInput{Tenants: []string{tenant}, Partners: []string{gateway.SandboxPartner}, FetchStatements: true}
	require.NoError(t, EnsureReconcileSchedule(ctx, tc, queue, in))
	t.Cleanup(func() {
		_ = tc.ScheduleClient().GetHandle(context.Background(), ReconcileScheduleID).Delete(context.Background())
	})
	in.Tenants = append(in.Tenants, "another-tenant")
	require.NoError(t, EnsureReconcileSchedule(ctx, tc, queue, in))
	desc, err := tc.ScheduleClient().GetHandle(ctx, ReconcileScheduleID).Describe(ctx)
	require.NoError(t, err)
	require.Equal(t, "UTC", desc.Schedule.Spec.TimeZoneName)
	next := desc.Info.NextActionTimes
	require.NotEmpty(t, next)
	for _, n := range next {
		require.Equal(t, 7, n.UTC().Hour())
		require.Equal(t, 30, n.UTC().Minute())
	}
	act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	require.Equal(t, queue, act.TaskQueue)
}

func serveLedger(t *testing.T, d *testkit.DB) ledgerv1.LedgerServiceClient {
	t.Helper()
	return ledgertest.Serve(t, d.App, nil)
}

// reconcileHistoryFile is a recorded history of a real run (WAGERAIL_RECORD_HISTORY=1 rewrites it).
const reconcileHistoryFile = "testdata/reconcile_history.json"

// recordHistory writes the run's history as JSON when WAGERAIL_RECORD_HISTORY is set.
func recordHistory(t *testing.T, tc client.Client, id, runID, path string) {
	t.Helper()
	if os.Getenv("WAGERAIL_RECORD_HISTORY") == "" {
		return
	}
	iter := tc.GetWorkflowHistory(context.Background(), id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestReconcileReplay replays a recorded history against the current code: a change that would
// break running histories fails here and needs workflow.GetVersion.
func TestReconcileReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Reconcile, workflow.RegisterOptions{Name: ReconcileWorkflowName})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, reconcileHistoryFile))
}
