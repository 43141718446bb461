package api

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// TestBenchmarkReportEwa prints (asserts nothing about speed) what an EWA disbursement costs end
// to end on the real stack with the bank sandbox settling at once: the disburse call's latency,
// the latency from the call to the saga's end (DISBURSED), sagas per second, and — measured in
// the same run on the same embedded Temporal server — the rate T of trivial one-activity
// workflows, so the saga rate reads as a ratio to what the server itself allows, and the rate S
// of workflows of the saga's shape with no work in them (what Temporal allows that shape). It
// also splits a saga's time by step from the workflow histories (queueing in Temporal vs running
// the local activities). `make bench` runs it.
func TestBenchmarkReportEwa(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	n := envInt("WAGERAIL_BENCH_SAGAS", 300)
	many := envInt("WAGERAIL_BENCH_CONCURRENCY", 16)
	for _, conc := range []int{1, many} {
		for _, pg := range []bool{false, true} {
			store := "SQLite (in memory)"
			if pg {
				store = "Postgres"
			}
			t.Run(fmt.Sprintf("%d callers, Temporal on %s", conc, store), func(t *testing.T) {
				benchEwa(t, n, conc, pg, store, shared)
			})
		}
	}
	// On shared cores the saga's rate over S is its CPU over the shape's, Temporal's included;
	// with the CPUs split, each part's own. The Temporal server on a CPU apart (pinStack), then
	// the three tiers of a deployment each under a quota of its own (splitTiers).
	t.Run(fmt.Sprintf("%d callers, Temporal on SQLite (in memory), on a CPU apart", many), func(t *testing.T) {
		benchEwa(t, n, many, false, "SQLite (in memory)", apart)
	})
	t.Run(fmt.Sprintf("%d callers, Temporal on SQLite (in memory), in three tiers", many), func(t *testing.T) {
		benchEwa(t, n, many, false, "SQLite (in memory)", tiers)
	})
}

// cpuLayout is how benchEwa's stack shares the machine's CPUs.
type cpuLayout int

const (
	shared cpuLayout = iota // every part on every CPU
	apart                   // the Temporal server on one CPU, the rest on the others (pinStack)
	tiers                   // the Temporal server, Postgres and this process each under a quota (splitTiers)
)

func benchEwa(t *testing.T, n, conc int, temporalPostgres bool, store string, layout cpuLayout) {
	steps := &stepTimes{}
	s := newEwaStack(t, ewaStackOpts{settleDelay: time.Millisecond, temporalPostgres: temporalPostgres,
		interceptors: []interceptor.WorkerInterceptor{steps}})
	how, split, profile := "", false, fmt.Sprintf("%d-%t", conc, temporalPostgres)
	switch layout {
	case apart:
		how, split = pinStack(t, s.temporal)
		profile += "-apart"
	case tiers:
		how, split = splitTiers(t, s.temporal)
		profile += "-tiers"
	}
	s.approveKyc(t)
	// A salary large enough that n advances stay under the access cap on any day of the month.
	rec := s.owner.call(http.MethodPut, "/api/employees/"+s.employee, map[string]any{"grossMonthlySalarySantim": 100_000_000_00})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// Warm-up, not measured: the server's and the stack's first workflows, connections and
	// caches (a cold server read T = 4.7/s beside S = 74/s once).
	warm := max(n/5, conc)
	trivialRate(t, s.tc, warm, conc)
	shapeRate(t, s.tc, warm, conc)
	if _, _, _, _ = disburseAll(t, s, requests(t, s, warm), conc); t.Failed() {
		return
	}
	analyzeStack(t, s)

	trivial := trivialRate(t, s.tc, n, conc)

	// S and the saga rate in alternating rounds (shape, sagas, shape, sagas, …), each rate pooled
	// over its rounds: a drift of the machine or of the server's state over the run (S has read
	// 32/s and 64/s in two runs of one build) weighs on both alike. The per-round ratios show the
	// spread.
	rounds := min(envInt("WAGERAIL_BENCH_ROUNDS", 3), n)
	ids := requests(t, s, n)
	commits0, rows0 := dbWork(t, s)
	steps.reset()
	var shapeTime, elapsed time.Duration
	var shapeCPU, sagaCPU cpu
	var calls, ends []time.Duration
	var wfIDs, shapeIDs []string
	var perRound []string
	for r := range rounds {
		part := ids[r*n/rounds : (r+1)*n/rounds]
		stop := func() {}
		if r == 0 {
			stop = both(benchProfile(t, "shape-"+profile), temporalProfile(t, s.temporal, "shape-"+profile))
		}
		c0 := cpuNow(t, s.temporal)
		sr, sIDs := shapeRun(t, s.tc, len(part), conc)
		shapeT := time.Duration(float64(len(part)) / sr * float64(time.Second))
		shapeIDs = append(shapeIDs, sIDs...)
		c1 := cpuNow(t, s.temporal)
		stop()
		if r == 0 {
			stop = both(benchProfile(t, "ewa-"+profile), temporalProfile(t, s.temporal, "ewa-"+profile))
		}
		c, e, w, took := disburseAll(t, s, part, conc)
		c2 := cpuNow(t, s.temporal)
		stop()
		if t.Failed() {
			return
		}
		shapeTime, elapsed = shapeTime+shapeT, elapsed+took
		shapeCPU, sagaCPU = shapeCPU.plus(c1.since(c0)), sagaCPU.plus(c2.since(c1))
		calls, ends, wfIDs = append(calls, c...), append(ends, e...), append(wfIDs, w...)
		perRound = append(perRound, fmt.Sprintf("%.2f (S %.1f/s at %.1f ms CPU, sagas %.1f/s at %.1f ms)", shapeT.Seconds()/took.Seconds(),
			float64(len(part))/shapeT.Seconds(), perItemMs(c1.since(c0).total(), len(part)),
			float64(len(part))/took.Seconds(), perItemMs(c2.since(c1).total(), len(part))))
	}
	shape := float64(n) / shapeTime.Seconds()
	rate := float64(n) / elapsed.Seconds()
	waitStatsPublished()
	commits1, rows1 := dbWork(t, s)

	t.Logf("EWA disburse, real stack (API, ledger and gateway over gRPC, bank sandbox over HTTP settling at once), embedded Temporal on %s, %d sagas, %d callers (after %d not measured)", store, n, conc, warm)
	if how != "" {
		t.Logf("CPUs %s", how)
	}
	t.Logf("%-40s %10s %10s", "", "p50", "p99")
	t.Logf("%-40s %10s %10s", "disburse call (gates + transfer initiated)", pctile(calls, 50), pctile(calls, 99))
	t.Logf("%-40s %10s %10s", "call to DISBURSED (saga finished)", pctile(ends, 50), pctile(ends, 99))
	t.Logf("sagas/s %.1f; trivial one-activity workflows/s T = %.1f on the same server; ratio %.2f × T", rate, trivial, rate/trivial)
	t.Logf("the saga's shape with no work in it (update-with-start, %d no-op local activities, the settlement signal) S = %.1f/s = %.2f × T; the saga runs at %.2f × S",
		shapeLocals, shape, shape/trivial, rate/shape)
	t.Logf("  in %d alternating rounds of shape and sagas, in order, the saga's rate over S's per round:", rounds)
	for i, r := range perRound {
		t.Logf("    round %d: %s", i+1, r)
	}
	cpuPer(t, "workflow of the saga's shape", n, shapeCPU)
	cpuPer(t, "saga", n, sagaCPU)
	switch {
	case !split:
		t.Logf("  the shape's CPU over the saga's: %.2f (the saga's rate over S when the machine's cores are what runs out, as they do on 2 cores)",
			float64(shapeCPU.total())/float64(sagaCPU.total()))
		t.Logf("  at that bound, %.1f × S needs a saga's CPU at most %.1f ms (now %.1f ms)", sagaTarget,
			perItemMs(shapeCPU.total(), n)/sagaTarget, perItemMs(sagaCPU.total(), n))
	case layout == apart && sagaCPU.temporal > 0:
		// Each side has CPUs of its own: S is bound by the Temporal server's CPU per shape
		// workflow, the saga by the busier side's CPU per saga.
		stack := sagaCPU.total() - sagaCPU.temporal
		t.Logf("  pinned: the Temporal server's CPU per shape workflow over the busier side's per saga: %.2f (the saga's rate over S when each side's CPUs are what runs out)",
			float64(shapeCPU.temporal)/float64(max(stack, sagaCPU.temporal)))
		t.Logf("  at that bound, %.1f × S needs each side's CPU per saga at most %.1f ms (now the stack %.1f ms, the Temporal server %.1f ms)", sagaTarget,
			perItemMs(shapeCPU.temporal, n)/sagaTarget, perItemMs(stack, n), perItemMs(sagaCPU.temporal, n))
	case layout == tiers && sagaCPU.temporal > 0 && sagaCPU.pg >= 0:
		// Each tier has the same quota: S is bound by the busiest tier's CPU per shape
		// workflow (the Temporal server's), the saga by the busiest tier's per saga.
		busiest := func(c cpu) time.Duration { return max(c.self, c.pg, c.temporal) }
		t.Logf("  in tiers: the busiest tier's CPU per shape workflow over the busiest's per saga: %.2f (the saga's rate over S when each tier's quota is what runs out)",
			float64(busiest(shapeCPU))/float64(busiest(sagaCPU)))
		t.Logf("  at that bound, %.1f × S needs each tier's CPU per saga at most %.1f ms (now this process %.1f ms, the Temporal server %.1f ms, Postgres %.1f ms)",
			sagaTarget, perItemMs(busiest(shapeCPU), n)/sagaTarget, perItemMs(sagaCPU.self, n), perItemMs(sagaCPU.temporal, n), perItemMs(sagaCPU.pg, n))
	}
	t.Logf("Postgres work per saga on the stack's database (API, ledger, gateway, sandbox, with their background loops, also while the shape rounds ran): %.1f commits, %.1f rows written",
		float64(commits1-commits0)/float64(n), float64(rows1-rows0)/float64(n))
	stepReport(t, s.tc, "a saga's", wfIDs)
	stepReport(t, s.tc, "a workflow of the saga's shape's", shapeIDs)
	steps.report(t)
}

// both is a stop that runs a, then b.
func both(a, b func()) func() { return func() { a(); b() } }

// sagaTarget is the saga's rate over S the platform issue asks for; the report says what CPU per
// saga it takes.
const sagaTarget = 0.7

// stepTimes is a worker interceptor that times every activity the worker runs (local ones
// included) by type, for the report.
type stepTimes struct {
	interceptor.WorkerInterceptorBase
	mu   sync.Mutex
	took map[string][]time.Duration
}

func (s *stepTimes) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &stepTimer{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, times: s}
}

func (s *stepTimes) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.took = map[string][]time.Duration{}
}

// report logs each activity type's count and latency percentiles.
func (s *stepTimes) report(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Sorted(maps.Keys(s.took))
	t.Logf("  the worker's steps (local activities included), by type: count, p50, p99")
	for _, n := range names {
		t.Logf("    %-36s %5d %10s %10s", n, len(s.took[n]), pctile(s.took[n], 50), pctile(s.took[n], 99))
	}
}

type stepTimer struct {
	interceptor.ActivityInboundInterceptorBase
	times *stepTimes
}

func (s *stepTimer) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	t0 := time.Now()
	out, err := s.Next.ExecuteActivity(ctx, in)
	took := time.Since(t0)
	name := activity.GetInfo(ctx).ActivityType.Name
	s.times.mu.Lock()
	if s.times.took != nil {
		s.times.took[name] = append(s.times.took[name], took)
	}
	s.times.mu.Unlock()
	return out, err
}

// perItemMs is d per item in milliseconds (CPU of a round, with Postgres's when measured).
func perItemMs(d time.Duration, n int) float64 {
	return float64(d) / float64(n) / float64(time.Millisecond)
}

// requests creates n EWA requests for the stack's employee.
func requests(t *testing.T, s *ewaStack, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = s.request(t, 10_000).ID
	}
	return ids
}

// disburseAll disburses the requests conc at a time and waits for each saga to end DISBURSED:
// each call's latency, each call-to-end latency, the workflow ids, and the time from the first
// call to the last saga's end.
func disburseAll(t *testing.T, s *ewaStack, ids []string, conc int) (calls, ends []time.Duration, wfIDs []string, elapsed time.Duration) {
	n := len(ids)
	calls = make([]time.Duration, n)
	ends = make([]time.Duration, n)
	wfIDs = make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t0 := time.Now()
				rec := s.disburse(ids[i], testkit.Unique("bench"))
				calls[i] = time.Since(t0)
				if rec.Code != http.StatusAccepted {
					t.Errorf("disburse %d: %d %s", i, rec.Code, rec.Body.String())
					return
				}
				wfIDs[i] = decode[disburseJSON](t, rec).WorkflowID
				var res workflows.EwaDisburseResult
				if err := s.tc.GetWorkflow(context.Background(), wfIDs[i], "").Get(context.Background(), &res); err != nil || res.Status != "DISBURSED" {
					t.Errorf("saga %d: %v %+v", i, err, res)
					return
				}
				ends[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	return calls, ends, wfIDs, time.Since(start)
}

// analyzeStack gives the stack's database, after the warm-up, the planner statistics a
// running one keeps (autovacuum analyzes a table once a tenth of it has changed). A fresh
// database has none until autovacuum's first round, which would land somewhere in the
// measurement (it looks once a minute) and change the plans mid-run: with none, the planner
// guesses at the tables' contents and picks a different index from one round to the next.
func analyzeStack(t *testing.T, s *ewaStack) {
	t.Helper()
	super, err := pgx.Connect(context.Background(), testkit.PG(t).SuperDSN(s.d.Name))
	require.NoError(t, err)
	defer super.Close(context.Background())
	_, err = super.Exec(context.Background(), `ANALYZE`)
	require.NoError(t, err)
}

// waitStatsPublished waits until every backend has published its counters (commits, rows, WAL)
// to the statistics views: a backend that goes idle less than a second after its last report
// holds them for up to 10 s (PGSTAT_IDLE_INTERVAL in Postgres 15), so reading them at once
// undercounts the last moments' work.
func waitStatsPublished() { time.Sleep(11 * time.Second) }

// dbWork is the stack database's committed transactions and rows written so far.
func dbWork(t *testing.T, s *ewaStack) (commits, rows int64) {
	t.Helper()
	require.NoError(t, s.d.App.QueryRow(context.Background(), `SELECT xact_commit, tup_inserted + tup_updated + tup_deleted
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&commits, &rows))
	return commits, rows
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func pctile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(100 * time.Microsecond)
}

// trivialRate runs n one-activity workflows, conc at a time, on a queue of their own and returns
// how many finished per second.
func trivialRate(t *testing.T, tc client.Client, n, conc int) float64 {
	t.Helper()
	queue := testkit.Unique("trivial")
	w := worker.New(tc, queue, workflows.WorkerOptions()) // as the saga's worker
	w.RegisterActivityWithOptions(func(context.Context) (string, error) { return "ok", nil }, activity.RegisterOptions{Name: "bench.Noop"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) (string, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		var out string
		err := workflow.ExecuteActivity(ctx, "bench.Noop").Get(ctx, &out)
		return out, err
	}, workflow.RegisterOptions{Name: "bench.Trivial"})
	require.NoError(t, w.Start())
	defer w.Stop()
	return rateOf(t, n, conc, func(ctx context.Context) error {
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("trivial"), TaskQueue: queue}, "bench.Trivial")
		if err == nil {
			err = run.Get(ctx, nil)
		}
		return err
	})
}

// rateOf runs one n times, conc at a time, and returns how many finished per second; the first
// error fails the test and stops that caller.
func rateOf(t *testing.T, n, conc int, one func(context.Context) error) float64 {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for int(next.Add(1)) <= n {
				if err := one(context.Background()); err != nil {
					t.Errorf("run: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// shapeLocals is how many local activities the shape runs: the disbursement's steps as they were
// when S was defined (load, three gates, claim, ledger post, record the transaction, transfer;
// then commit and mark disbursed after the signal). S stays this reference so that figures
// before and after a change of the saga compare; the saga itself now runs 7 (Begin, the account
// gate, ledger post, claim with the transaction, transfer; commit, mark disbursed).
const shapeLocals = 10

// shapeRate runs n workflows of the disburse saga's shape with none of its work, conc at a time,
// on a queue of their own, and returns how many finished per second: each is started by
// Update-with-Start, runs 8 no-op local activities, answers the update, waits for a signal (sent
// by the caller once the update is answered, as the bank's callback would be), runs 2 more and
// ends. It is the rate Temporal allows this shape on the server, whatever the steps do.
func shapeRate(t *testing.T, tc client.Client, n, conc int) float64 {
	t.Helper()
	rate, _ := shapeRun(t, tc, n, conc)
	return rate
}

// shapeRun is shapeRate that also returns the workflows' ids (their histories show where the
// shape's time goes, beside the saga's).
func shapeRun(t *testing.T, tc client.Client, n, conc int) (float64, []string) {
	t.Helper()
	var mu sync.Mutex
	ids := make([]string, 0, n)
	queue := testkit.Unique("shape")
	w := worker.New(tc, queue, workflows.WorkerOptions()) // as the saga's worker
	w.RegisterActivityWithOptions(func(context.Context) error { return nil }, activity.RegisterOptions{Name: "bench.NoopLocal"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		answered := false
		if err := workflow.SetUpdateHandler(ctx, "accepted", func(ctx workflow.Context) (string, error) {
			err := workflow.Await(ctx, func() bool { return answered })
			return "DISBURSING", err
		}); err != nil {
			return err
		}
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
		local := func(k int) error {
			for range k {
				if err := workflow.ExecuteLocalActivity(ctx, "bench.NoopLocal").Get(ctx, nil); err != nil {
					return err
				}
			}
			return nil
		}
		if err := local(shapeLocals - 2); err != nil {
			return err
		}
		answered = true
		workflow.GetSignalChannel(ctx, "settled").Receive(ctx, nil)
		if err := local(2); err != nil {
			return err
		}
		return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	}, workflow.RegisterOptions{Name: "bench.SagaShape"})
	require.NoError(t, w.Start())
	defer w.Stop()
	rate := rateOf(t, n, conc, func(ctx context.Context) error {
		id := testkit.Unique("shape")
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
		op := tc.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: queue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, "bench.SagaShape")
		h, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: "accepted", WaitForStage: client.WorkflowUpdateStageCompleted}})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		if err == nil {
			err = tc.SignalWorkflow(ctx, id, "", "settled", nil)
		}
		if err == nil {
			err = tc.GetWorkflow(ctx, id, "").Get(ctx, nil)
		}
		return err
	})
	return rate, ids
}

// stepReport reads the histories of ids (whose: the sagas', or the shape's workflows') and prints
// where their time goes: the workflow tasks (how many; how long they waited in Temporal's queue
// for a poller, the first and the later ones, and how long the worker ran them — the local
// activities, i.e. the gates, the record steps, the ledger and the first partner call, run
// inside them), the regular activities, the wait from the transfer's initiation (the update's
// answer, in the shape) to the settlement signal, and the whole run.
func stepReport(t *testing.T, tc client.Client, whose string, ids []string) {
	t.Helper()
	var wfts, locals, acts []int
	var queued, ran, actRan, settle, total []time.Duration
	var firstQueued, laterQueued []time.Duration // each workflow task's wait: the run's first, the later ones
	for _, id := range ids {
		it := tc.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var nWFT, nLocal, nAct int
		var q, r, ar time.Duration
		var start, wftScheduled, wftStarted, lastWFTDone, actStarted, signal time.Time
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Logf("history %s: %v", id, err)
				return
			}
			at := e.GetEventTime().AsTime()
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				start = at
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				wftScheduled = at
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				wftStarted = at
				q += at.Sub(wftScheduled)
				if nWFT == 0 {
					firstQueued = append(firstQueued, at.Sub(wftScheduled))
				} else {
					laterQueued = append(laterQueued, at.Sub(wftScheduled))
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				nWFT++
				r += at.Sub(wftStarted)
				if signal.IsZero() {
					lastWFTDone = at
				}
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				nLocal++
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				actStarted = at
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				nAct++
				ar += at.Sub(actStarted)
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				if signal.IsZero() {
					signal = at
				}
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
				total = append(total, at.Sub(start))
			}
		}
		wfts, locals, acts = append(wfts, nWFT), append(locals, nLocal), append(acts, nAct)
		queued, ran, actRan = append(queued, q), append(ran, r), append(actRan, ar)
		if !signal.IsZero() {
			settle = append(settle, signal.Sub(lastWFTDone))
		}
	}
	med := func(v []int) int { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	t.Logf("where %s time goes (medians over %d histories)", whose, len(ids))
	t.Logf("  workflow tasks %d (local activities run inside them: %d), regular activities %d (run %s)", med(wfts), med(locals), med(acts), pctile(actRan, 50))
	t.Logf("  workflow tasks queued in Temporal %s, run by the worker %s (the local activities' time)", pctile(queued, 50), pctile(ran, 50))
	t.Logf("  each task's wait for a poller: the first %s (p90 %s), a later one %s (p90 %s)", pctile(firstQueued, 50), pctile(firstQueued, 90),
		pctile(laterQueued, 50), pctile(laterQueued, 90))
	if len(settle) > 0 {
		t.Logf("  transfer initiated → the bank's settlement signal %s (%d of %d sagas settled by the callback)", pctile(settle, 50), len(settle), len(ids))
	}
	if len(total) > 0 {
		t.Logf("  the whole run (start → completed) %s", pctile(total, 50))
	}
}
