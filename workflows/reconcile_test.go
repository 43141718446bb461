package workflows

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	"github.com/wagerail/wagerail/reconcile"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func mockedReconcileEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Under -race on a busy CI machine the first workflow task can take over the default 1 s.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(env, Deps{})
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
		sum := reconcile.PairSummary{Tenant: tenant, Partner: "sandbox", PeriodFrom: "2026-03-04", PeriodTo: "2026-03-04", Scanned: 6, Matched: 6, NextAction: "none"}
		if tenant == "t2" {
			sum.Matched, sum.Flagged, sum.FlagsByKind = 4, 1, map[reconcile.FlagKind]int{reconcile.AmountMismatch: 1}
		}
		env.OnActivity(activities.ReconcilePairActivity, mock.Anything, pin).Return(sum, nil).Once()
	}
	// The run records itself; a run over a given list is not "everyone".
	env.OnActivity(activities.RecordReconciliationActivity, mock.Anything, activities.RecordReconciliationInput{
		Everyone: false, From: "2026-03-04", To: "2026-03-04", Pairs: 2, Flagged: 1}).Return(nil).Once()
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{Tenants: []string{"t1", "t2"}, Partners: []string{"sandbox"}, FetchStatements: true})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "flagged lines are a successful run")
	var rep ReconcileResult
	require.NoError(t, env.GetWorkflowResult(&rep))
	require.Len(t, rep.Pairs, 2)
	require.Equal(t, 12, rep.Aggregate.Scanned)
	require.Equal(t, 10, rep.Aggregate.Matched)
	require.Equal(t, 1, rep.Aggregate.Flagged)
	require.Equal(t, 1, rep.Aggregate.FlagsByKind[reconcile.AmountMismatch])
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
		Return(reconcile.PairSummary{Tenant: "t2", Partner: "sandbox", Scanned: 2, Matched: 2}, nil).Once()
	// A run with runner errors is recorded too, with its errors (it is no success).
	env.OnActivity(activities.RecordReconciliationActivity, mock.Anything, activities.RecordReconciliationInput{
		From: "2026-03-01", To: "2026-03-02", Pairs: 2, Errors: 1}).Return(nil).Once()
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

// A run without tenants (the schedule's) reconciles every pair FindPairs finds, whatever the
// partner, and records itself as covering everyone.
func TestReconcileWorkflowCoversEveryTenantFound(t *testing.T) {
	env := mockedReconcileEnv(t)
	env.SetStartTime(time.Date(2026, 3, 5, 7, 30, 0, 0, time.UTC))
	found := []reconcile.Pair{{TenantID: "t1", Partner: "sandbox"}, {TenantID: "t2", Partner: "cbe"}, {TenantID: "t2", Partner: "sandbox"}}
	env.OnActivity(activities.FindReconcilePairsActivity, mock.Anything, activities.FindPairsInput{}).
		Return(activities.FindPairsResult{Pairs: found}, nil).Once()
	for _, p := range found {
		in := activities.ReconcilePairInput{TenantID: p.TenantID, Partner: p.Partner, From: "2026-03-04", To: "2026-03-04"}
		env.OnActivity(activities.FetchStatementsActivity, mock.Anything, in).Return(activities.FetchStatementsResult{}, nil).Once()
		env.OnActivity(activities.ReconcilePairActivity, mock.Anything, in).
			Return(reconcile.PairSummary{Tenant: p.TenantID, Partner: p.Partner, Scanned: 2, Matched: 2}, nil).Once()
	}
	env.OnActivity(activities.RecordReconciliationActivity, mock.Anything, activities.RecordReconciliationInput{
		Everyone: true, From: "2026-03-04", To: "2026-03-04", Pairs: 3}).Return(nil).Once()
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{FetchStatements: true})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var rep ReconcileResult
	require.NoError(t, env.GetWorkflowResult(&rep))
	require.Len(t, rep.Pairs, 3)
	require.Equal(t, "cbe", rep.Pairs[1].Partner)
	require.Equal(t, 6, rep.Aggregate.Matched)
	env.AssertExpectations(t)
}

// Nobody to reconcile (a new installation) is a successful run over everyone: it is recorded,
// so the age of the last success restarts. Partners restrict the search.
func TestReconcileWorkflowWithNobodyFoundSucceeds(t *testing.T) {
	env := mockedReconcileEnv(t)
	env.OnActivity(activities.FindReconcilePairsActivity, mock.Anything, activities.FindPairsInput{Partners: []string{"sandbox"}}).
		Return(activities.FindPairsResult{}, nil).Once()
	env.OnActivity(activities.RecordReconciliationActivity, mock.Anything, activities.RecordReconciliationInput{
		Everyone: true, From: "2026-03-01", To: "2026-03-01"}).Return(nil).Once()
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{Partners: []string{"sandbox"}, From: "2026-03-01"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var rep ReconcileResult
	require.NoError(t, env.GetWorkflowResult(&rep))
	require.Empty(t, rep.Pairs)
	env.AssertExpectations(t)
}

// When the tenants cannot be found, the run fails and records nothing: no success is claimed.
func TestReconcileWorkflowFailsWhenTheTenantsCannotBeFound(t *testing.T) {
	env := mockedReconcileEnv(t)
	env.OnActivity(activities.FindReconcilePairsActivity, mock.Anything, mock.Anything).
		Return(activities.FindPairsResult{}, temporal.NewNonRetryableApplicationError("database gone", "TEST_FIND_FAILED", nil)).Once()
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{From: "2026-03-01"})
	require.True(t, env.IsWorkflowCompleted())
	// The failure is FindPairs' own: had the run gone on, the unmocked steps would have failed
	// as misconfigured instead.
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &appErr)
	require.Equal(t, "TEST_FIND_FAILED", appErr.Type())
	env.AssertNotCalled(t, activities.RecordReconciliationActivity, mock.Anything, mock.Anything)
	env.AssertNotCalled(t, activities.ReconcilePairActivity, mock.Anything, mock.Anything)
}

// A run begun before reconcileEveryoneChange keeps what it did: without tenants it reconciled
// nothing, and no run recorded itself.
func TestReconcileWorkflowBeforeEveryoneChange(t *testing.T) {
	env := mockedReconcileEnv(t)
	env.OnGetVersion(reconcileEveryoneChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.ExecuteWorkflow(ReconcileWorkflowName, ReconcileInput{From: "2026-03-01"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var rep ReconcileResult
	require.NoError(t, env.GetWorkflowResult(&rep))
	require.Empty(t, rep.Pairs)
	env.AssertNotCalled(t, activities.FindReconcilePairsActivity, mock.Anything, mock.Anything)
	env.AssertNotCalled(t, activities.RecordReconciliationActivity, mock.Anything, mock.Anything)
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
	tenant := testkit.Unique("tenant")
	bookDisbursement(ctx, t, stack, lc, tenant, 40_050)

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("reconcile")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{Reconcile: &activities.Reconcile{Runner: &reconcile.Runner{
		Ledger: ledger.NewClient(lc, ledger.ClientOptions{}), Statements: stack.Store, Store: reconcile.NewStore(d.App),
		Gateway: fetchVia(stack.Gateway),
	}}})
	require.NoError(t, w.Start())
	defer w.Stop()

	day := time.Now().UTC().Format(time.DateOnly)
	run, err := tc.ExecuteWorkflow(ctx, StartOptions(testkit.Unique("reconcile"), queue, tenant, "reconcile:"+day),
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
	testkit.RecordHistory(t, tc, run.GetID(), run.GetRunID(), reconcileHistoryFile)

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
	key, ok := act.TypedSearchAttributes.GetKeyword(BusinessKeyAttribute)
	require.True(t, ok, "each scheduled run is found by its business key")
	require.Equal(t, ReconcileScheduleID, key)
	_, ok = act.TypedSearchAttributes.GetKeyword(TenantIDAttribute)
	require.False(t, ok, "a run over several tenants has no single tenant")
}

// fetchVia fetches statements through a gateway connection (the generated client's methods take
// call options, so they need this adapter to be a reconcile.StatementFetcher).
func fetchVia(gw gatewayv1.GatewayServiceClient) reconcile.FetchFunc {
	return func(ctx context.Context, r *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error) {
		return gw.FetchStatement(ctx, r)
	}
}

func serveLedger(t *testing.T, d *testkit.DB) ledgerv1.LedgerServiceClient {
	t.Helper()
	return ledgertest.Serve(t, d.App, nil)
}

// reconcileHistoryFile is a recorded history of a real run (WAGERAIL_RECORD_HISTORY=1 rewrites it).
const reconcileHistoryFile = "testdata/reconcile_history.json"

// TestReconcileReplay replays a recorded history against the current code: a change that would
// break running histories fails here and needs workflow.GetVersion.
func TestReconcileReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, reconcileHistoryFile))
}

// TestReconcileWorkflowRetriesATransientLedgerOutage is the review's bug: the ledger is down
// when the pair is first reconciled, so the activity must fail retryably (it used to succeed
// with the outage folded into its summary, and nothing was retried); the ledger comes back, and
// Temporal's retry reconciles the pair clean. Real Temporal, real ledger over gRPC: during the
// first attempt nothing listens on the ledger's address.
func TestReconcileWorkflowRetriesATransientLedgerOutage(t *testing.T) {
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	setup := serveLedger(t, d) // books the test's postings; the worker's ledger is another one
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	tenant, company := testkit.Unique("tenant"), testkit.Unique("co")
	stack.Account(t, company, "Employer PLC", 500_000)
	mirror := chart.PartnerBankAccount(gateway.SandboxPartner, company)
	for _, n := range []string{mirror, "opening-balance-equity"} {
		_, err := setup.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err)
	}
	_, err := setup.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: testkit.Unique("open"),
		Metadata: map[string]string{"bank_reference": "OPENING-BALANCE"},
		Entries: []*ledgerv1.EntryInput{
			{AccountName: mirror, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 500_000},
			{AccountName: "opening-balance-equity", Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 500_000},
		}})
	require.NoError(t, err)
	day := time.Now().UTC().Format(time.DateOnly)
	_, err = stack.Gateway.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{Partner: gateway.SandboxPartner, TenantId: tenant,
		Account: company, FromDate: day, ToDate: day, OmitLines: true})
	require.NoError(t, err)

	// The worker's ledger address, claimed but not listened on yet.
	port, err := freeport.One()
	require.NoError(t, err)
	ledgerAddr := fmt.Sprintf("127.0.0.1:%d", port)
	conn, err := grpc.NewClient(ledgerAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		// Reconnect soon after the ledger is back rather than after gRPC's default backoff.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second}, MinConnectTimeout: time.Second}))
	require.NoError(t, err)
	defer conn.Close()

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("reconcile")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{Reconcile: &activities.Reconcile{Runner: &reconcile.Runner{
		Ledger:     ledger.NewClient(ledgerv1.NewLedgerServiceClient(conn), ledger.ClientOptions{}),
		Statements: stack.Store, Store: reconcile.NewStore(d.App), Gateway: fetchVia(stack.Gateway),
	}}})
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := tc.ExecuteWorkflow(ctx, StartOptions(testkit.Unique("reconcile"), queue, tenant, "reconcile:"+day),
		ReconcileWorkflowName, ReconcileInput{Tenants: []string{tenant}, Partners: []string{gateway.SandboxPartner}, From: day, To: day})
	require.NoError(t, err)

	// Wait until Temporal has recorded the failed first attempt and scheduled the retry.
	var pending *workflowpb.PendingActivityInfo
	deadline := time.Now().Add(time.Minute)
	for pending == nil && time.Now().Before(deadline) {
		desc, err := tc.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		require.NoError(t, err)
		for _, pa := range desc.GetPendingActivities() {
			if pa.GetActivityType().GetName() == activities.ReconcilePairActivity && pa.GetAttempt() >= 2 {
				pending = pa
			}
		}
		if pending == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
	require.NotNil(t, pending, "the first attempt failed and a retry is pending")
	failure := pending.GetLastFailure().GetApplicationFailureInfo()
	require.Equal(t, "UNAVAILABLE", failure.GetType(), "%v", pending.GetLastFailure())
	require.False(t, failure.GetNonRetryable())
	require.Contains(t, pending.GetLastFailure().GetMessage(), "ledger list accounts")

	// The ledger comes back on its address; the retry reconciles.
	serveLedgerAt(t, d, ledgerAddr)
	var rep ReconcileResult
	require.NoError(t, run.Get(ctx, &rep))
	require.Len(t, rep.Pairs, 1)
	p := rep.Pairs[0]
	require.Zero(t, p.Errors, "%v", p.ErrorDetails)
	require.Zero(t, p.Flagged, "%+v", p.FlagsByKind)
	require.Equal(t, 2, p.Matched) // the opening balance, at the bank and in the ledger
	require.NotZero(t, p.RunID)

	iter := tc.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	// The pair's activity, that is: the run records itself afterwards, in an activity of its own.
	attempts := int32(0)
	scheduled := map[int64]string{} // event id -> activity type
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == activities.ReconcilePairActivity {
			attempts = a.GetAttempt()
		}
	}
	require.GreaterOrEqual(t, attempts, int32(2), "the pair succeeded on a retry")
}

// serveLedgerAt serves the real ledger on addr until the test ends.
func serveLedgerAt(t *testing.T, d *testkit.DB, addr string) {
	t.Helper()
	log := testLogger()
	m := ledger.NewMetrics()
	srv := rpcserve.New("ledger", log, m.UnaryInterceptor(log))
	require.NoError(t, m.Register(srv.Registry))
	ledgerv1.RegisterLedgerServiceServer(srv.GRPC, ledger.NewServer(ledger.NewStore(d.App), nil, m))
	gl, ml, err := rpcserve.Listen(addr, "127.0.0.1:0")
	require.NoError(t, err)
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, gl, ml) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
}

// reconcileEveryoneHistoryFile is a recorded run over everyone found, after reconcileEveryoneChange.
const reconcileEveryoneHistoryFile = "testdata/reconcile_everyone_history.json"

func TestReconcileEveryoneReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, reconcileEveryoneHistoryFile))
}

// TestReconcileEveryoneRealActivities is the schedule's run on the real stack: no tenant list.
// The run finds both tenants that sent money from a partner account (on the cross-tenant path),
// reconciles each clean, leaves the ledger's drift gauge at 0 for the partner, and records
// itself, which moves svc_reconcile_last_success_timestamp_seconds.
func TestReconcileEveryoneRealActivities(t *testing.T) {
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	log := testLogger()
	lm := ledger.NewMetrics()
	lsrv := rpcserve.New("ledger", log, lm.UnaryInterceptor(log))
	require.NoError(t, lm.Register(lsrv.Registry))
	ledgerv1.RegisterLedgerServiceServer(lsrv.GRPC, ledger.NewServer(ledger.NewStore(d.App), nil, lm))
	lconn, _ := testkit.ServeGRPC(t, lsrv)
	lc := ledgerv1.NewLedgerServiceClient(lconn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	store := reconcile.NewStore(d.App)
	_, ok, err := store.LastSuccess(ctx)
	require.NoError(t, err)
	require.False(t, ok, "no reconciliation has run yet")
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(reconcile.NewMetrics(store)))
	require.Equal(t, 0.0, gaugeValue(t, reg, reconcile.LastSuccessMetric, nil), "0 until one succeeds: the alert fires when none ever ran")

	// Two tenants, each with its own employer account mirrored in its ledger and one
	// disbursement booked on both sides.
	var tenants []string
	for range 2 {
		tenant := testkit.Unique("tenant")
		tenants = append(tenants, tenant)
		bookDisbursement(ctx, t, stack, lc, tenant, 25_000)
	}
	sort.Strings(tenants)

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("reconcile")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{Reconcile: &activities.Reconcile{Platform: d.Platform(t), Runner: &reconcile.Runner{
		Ledger: ledger.NewClient(lc, ledger.ClientOptions{}), Statements: stack.Store, Store: store,
		Gateway: fetchVia(stack.Gateway),
	}}})
	require.NoError(t, w.Start())
	defer w.Stop()

	day := time.Now().UTC().Format(time.DateOnly)
	before := time.Now()
	run, err := tc.ExecuteWorkflow(ctx, StartOptions(testkit.Unique("reconcile"), queue, "", ReconcileScheduleID),
		ReconcileWorkflowName, ReconcileInput{From: day, To: day, FetchStatements: true})
	require.NoError(t, err)
	var rep ReconcileResult
	require.NoError(t, run.Get(ctx, &rep))
	require.Len(t, rep.Pairs, 2, "%+v", rep.Pairs)
	for i, p := range rep.Pairs {
		require.Equal(t, tenants[i], p.Tenant)
		require.Equal(t, gateway.SandboxPartner, p.Partner)
		require.Zero(t, p.Errors, "%v", p.ErrorDetails)
		require.Zero(t, p.Flagged, "%+v", p.FlagsByKind)
		require.Equal(t, 4, p.Matched) // opening and hold at the bank, opening and disbursement in the ledger
		require.Zero(t, p.DriftSantim)
	}
	testkit.RecordHistory(t, tc, run.GetID(), run.GetRunID(), reconcileEveryoneHistoryFile)

	// The partner's drift series exists, at 0.
	require.Equal(t, 0.0, gaugeValue(t, lsrv.Registry, "svc_ledger_reconcile_drift_santim", map[string]string{"partner": gateway.SandboxPartner}))
	// The run is recorded once, as a success over everyone, and the gauge reads its time.
	at, ok, err := store.LastSuccess(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.WithinRange(t, at, before.Add(-time.Second), time.Now().Add(time.Second))
	require.InDelta(t, float64(at.UnixNano())/1e9, gaugeValue(t, reg, reconcile.LastSuccessMetric, nil), 0.001)

	// A run over a given list is recorded but is no "success over everyone".
	run2, err := tc.ExecuteWorkflow(ctx, StartOptions(testkit.Unique("reconcile"), queue, tenants[0], "reconcile:"+day),
		ReconcileWorkflowName, ReconcileInput{Tenants: tenants[:1], Partners: []string{gateway.SandboxPartner}, From: day, To: day})
	require.NoError(t, err)
	require.NoError(t, run2.Get(ctx, &rep))
	again, _, err := store.LastSuccess(ctx)
	require.NoError(t, err)
	require.True(t, again.Equal(at))
	var runs int
	require.NoError(t, d.App.QueryRow(ctx, `SELECT count(*) FROM app.reconciliations`).Scan(&runs))
	require.Equal(t, 2, runs)
}

// gaugeValue is the value of the gauge name with exactly labels in reg.
func gaugeValue(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s%v in the registry", name, labels)
	return 0
}

// bookDisbursement gives tenant one employer account at the sandbox, mirrored in its ledger with
// an opening balance of 1,000,000 santim, and one settled disbursement of amount booked on both
// sides under the same reference: a pair that reconciles clean.
func bookDisbursement(ctx context.Context, t *testing.T, stack *gatewaytest.Stack, lc ledgerv1.LedgerServiceClient, tenant string, amount int64) {
	t.Helper()
	company, emp := testkit.Unique("co"), testkit.Unique("emp")
	stack.Account(t, company, "Employer PLC", 1_000_000)
	stack.Account(t, emp, "Abebe Kebede", 0)
	mirror, receivable := chart.PartnerBankAccount(gateway.SandboxPartner, company), chart.EmployeeReceivable(emp)
	for _, n := range []string{mirror, "opening-balance-equity", receivable} {
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
		FromAccount: company, ToAccount: emp, AmountSantim: amount, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	post(ref, ref, receivable, mirror, amount)
	stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
}
