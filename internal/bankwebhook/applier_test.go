package bankwebhook_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const recorderName = "bankwebhook-test-recorder"

type seenState struct {
	Seen    []string
	Signals int
}

// recorder is a saga reduced to its callback handling: it receives settlements and dedupes them
// by event id.
func recorder(ctx workflow.Context) error {
	var st seenState
	if err := workflow.SetQueryHandler(ctx, "seen", func() (seenState, error) { return st, nil }); err != nil {
		return err
	}
	seen := map[string]bool{}
	ch := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)
	for {
		var s bankwebhook.Settlement
		ch.Receive(ctx, &s)
		st.Signals++
		if !seen[s.EventID] {
			seen[s.EventID] = true
			st.Seen = append(st.Seen, s.EventID)
		}
	}
}

type fixture struct {
	t     *testing.T
	d     *testkit.DB
	tc    client.Client
	queue string
	store *bankwebhook.Store
	now   time.Time
	seq   int
}

func newFixture(t *testing.T) *fixture {
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	f := &fixture{t: t, d: testkit.NewDB(t), tc: tc, queue: testkit.Unique("bw"), now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	w := worker.New(tc, f.queue, worker.Options{})
	w.RegisterWorkflowWithOptions(recorder, workflow.RegisterOptions{Name: recorderName})
	w.RegisterWorkflowWithOptions(batchRecorder, workflow.RegisterOptions{Name: batchRecorderName})
	require.NoError(t, w.Start())
	t.Cleanup(func() {
		w.Stop()
		tc.Close()
	})
	f.store = bankwebhook.NewStore(f.d.Platform(t), func(ctx context.Context, tx pgx.Tx, partner, reference string) (bankwebhook.Transfer, error) {
		r, err := gateway.FindTransfer(ctx, tx, partner, reference)
		if gateway.ReasonOf(err) == gateway.ReasonTransferNotFound {
			return bankwebhook.Transfer{}, bankwebhook.ErrTransferNotFound
		}
		return bankwebhook.Transfer{TenantID: r.TenantID, Domain: r.Domain, AmountSantim: r.AmountSantim}, err
	}, func() time.Time { return f.now })
	return f
}

// transfer records a transfer of tenant-a and starts its saga; it returns the reference.
func (f *fixture) transfer(saga bool) string {
	ref := testkit.Unique("ref")
	require.NoError(f.t, gateway.NewStore(f.d.App).RecordTransfers(context.Background(), "tenant-a", []gateway.TransferRecord{{
		Partner: "sandbox", Reference: ref, TenantID: "tenant-a", Domain: "EWA", AmountSantim: 100,
		Currency: "ETB", FromAccount: "a", ToAccount: "b",
	}}))
	if saga {
		_, err := f.tc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: bankwebhook.WorkflowIDOf(ref), TaskQueue: f.queue}, recorderName)
		require.NoError(f.t, err)
	}
	return ref
}

func (f *fixture) callback(ref, eventID string) bankwebhook.Callback {
	f.seq++
	return bankwebhook.Callback{Partner: "sandbox", EventID: eventID, Nonce: "n-" + strconv.Itoa(f.seq), ClaimedTenant: "tenant-a",
		Domain: "EWA", Reference: ref, TransferID: "tr-1", Status: "SETTLED", AmountSantim: 100,
		RawBody: []byte(`{"eventId":"` + eventID + `"}`), SignedAt: f.now}
}

func (f *fixture) seen(ref string) seenState {
	v, err := f.tc.QueryWorkflow(context.Background(), bankwebhook.WorkflowIDOf(ref), "", "seen")
	require.NoError(f.t, err)
	var st seenState
	require.NoError(f.t, v.Get(&st))
	return st
}

// inPlatform runs fn in a cross-tenant transaction as a platform admin.
func (f *fixture) inPlatform(fn func(ctx context.Context, tx pgx.Tx) error) {
	ctx := tenancy.WithActor(context.Background(), "admin-1")
	require.NoError(f.t, crosstenant.Tx(ctx, f.d.Platform(f.t), "test", func(tx pgx.Tx) error { return fn(ctx, tx) }))
}

func (f *fixture) event(id int64) bankwebhook.Event {
	var ev bankwebhook.Event
	f.inPlatform(func(ctx context.Context, tx pgx.Tx) error {
		var err error
		ev, err = bankwebhook.Get(ctx, tx, id)
		return err
	})
	return ev
}

func attempts(ev bankwebhook.Event) []string {
	var out []string
	for _, a := range ev.Deliveries {
		out = append(out, string(a.Trigger)+" "+string(a.Outcome))
	}
	return out
}

// A receipt signals the saga once; a partner redelivery is recorded DUPLICATE and not signalled;
// a replay signals again (the saga dedupes); after the saga closes a replay is SAGA_FINISHED and
// the event stays APPLIED.
func TestApplierDeliversAndRecordsEveryAttempt(t *testing.T) {
	f := newFixture(t)
	a := bankwebhook.NewApplier(f.store, f.tc)
	ref := f.transfer(true)
	cb := f.callback(ref, "ev-1")
	d, err := a.Receive(context.Background(), cb)
	require.NoError(t, err)
	require.Equal(t, bankwebhook.Applied, d.Outcome)
	require.Equal(t, bankwebhook.Applied, d.EventOutcome)
	require.Equal(t, "tenant-a", d.TenantID)
	require.Equal(t, ref, d.WorkflowID)

	cb.Nonce = "n-retry"
	d2, err := a.Receive(context.Background(), cb)
	require.NoError(t, err)
	require.Equal(t, bankwebhook.Duplicate, d2.Outcome)
	require.Equal(t, d.ID, d2.ID)
	require.Equal(t, seenState{Seen: []string{"ev-1"}, Signals: 1}, f.seen(ref))

	f.inPlatform(func(ctx context.Context, tx pgx.Tx) error {
		r, err := a.Replay(ctx, tx, d.ID)
		require.Equal(t, bankwebhook.Applied, r.Outcome)
		return err
	})
	require.Equal(t, seenState{Seen: []string{"ev-1"}, Signals: 2}, f.seen(ref))

	require.NoError(t, f.tc.TerminateWorkflow(context.Background(), ref, "", "done"))
	f.inPlatform(func(ctx context.Context, tx pgx.Tx) error {
		r, err := a.Replay(ctx, tx, d.ID)
		require.Equal(t, bankwebhook.SagaFinished, r.Outcome)
		require.Equal(t, bankwebhook.Applied, r.EventOutcome)
		return err
	})
	ev := f.event(d.ID)
	require.Equal(t, bankwebhook.Applied, ev.Outcome)
	require.Equal(t, []string{"RECEIPT APPLIED", "PARTNER_RETRY DUPLICATE", "REPLAY APPLIED", "REPLAY SAGA_FINISHED"}, attempts(ev))
	require.Equal(t, "admin-1", ev.Deliveries[2].Actor)
	require.Equal(t, "partner:sandbox", ev.Deliveries[0].Actor)

	f.inPlatform(func(ctx context.Context, tx pgx.Tx) error {
		_, err := a.Replay(ctx, tx, 987654)
		require.ErrorIs(t, err, bankwebhook.ErrNotFound)
		return nil
	})
}

// Temporal unreachable (a client of a port nobody listens on): the event is stored PENDING with
// an UNDELIVERED attempt; the partner's retry through a working client delivers it once. No
// client at all behaves the same.
func TestApplierUnreachableTemporalLeavesThePendingEventForTheRetry(t *testing.T) {
	f := newFixture(t)
	dead := testkit.TemporalDown(t)

	for _, wf := range []bankwebhook.Workflows{dead, nil} {
		down := bankwebhook.NewApplier(f.store, wf)
		down.Timeout = time.Second
		ref := f.transfer(true)
		cb := f.callback(ref, "ev-"+ref)
		d, err := down.Receive(context.Background(), cb)
		require.NoError(t, err)
		require.Equal(t, bankwebhook.Undelivered, d.Outcome)
		require.Equal(t, bankwebhook.Pending, d.EventOutcome)
		require.Equal(t, wf != nil, down.Configured())

		cb.Nonce += "-retry"
		d, err = bankwebhook.NewApplier(f.store, f.tc).Receive(context.Background(), cb)
		require.NoError(t, err)
		require.Equal(t, bankwebhook.PartnerRetry, d.Trigger)
		require.Equal(t, bankwebhook.Applied, d.Outcome)
		require.Equal(t, []string{"RECEIPT UNDELIVERED", "PARTNER_RETRY APPLIED"}, attempts(f.event(d.ID)))
		require.Equal(t, 1, f.seen(ref).Signals)
	}
}

// switchable is a Temporal client that can be taken down and brought back.
type switchable struct {
	down atomic.Bool
	dead bankwebhook.Workflows
	live bankwebhook.Workflows
}

func (s *switchable) now() bankwebhook.Workflows {
	if s.down.Load() {
		return s.dead
	}
	return s.live
}

func (s *switchable) SignalWorkflow(ctx context.Context, id, run, name string, arg any) error {
	return s.now().SignalWorkflow(ctx, id, run, name, arg)
}

func (s *switchable) DescribeWorkflowExecution(ctx context.Context, id, run string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return s.now().DescribeWorkflowExecution(ctx, id, run)
}

// While Temporal is down, BreakerFailures attempts wait for it; the next ones fail at once
// (UNDELIVERED, the event PENDING, no Temporal call) until the breaker lets a probe through once
// Temporal is back; then the partner's retries deliver every event exactly once.
func TestApplierBreakerFailsFastWhileTemporalIsDown(t *testing.T) {
	f := newFixture(t)
	dead := testkit.TemporalDown(t)
	wf := &switchable{dead: dead, live: f.tc}
	wf.down.Store(true)
	a := bankwebhook.NewApplier(f.store, wf)
	a.Timeout, a.BreakerOpenFor = 300*time.Millisecond, 3*time.Second

	var cbs []bankwebhook.Callback
	for i := range bankwebhook.BreakerFailures + 2 {
		ref := f.transfer(true)
		cb := f.callback(ref, "ev-"+ref)
		cbs = append(cbs, cb)
		d, err := a.Receive(context.Background(), cb)
		require.NoError(t, err)
		require.Equal(t, bankwebhook.Undelivered, d.Outcome)
		require.Equal(t, bankwebhook.Pending, d.EventOutcome)
		if i < bankwebhook.BreakerFailures {
			require.Contains(t, d.Problem, "temporal: signal:", "attempt %d reached for Temporal", i)
		} else {
			require.Contains(t, d.Problem, "circuit open", "attempt %d failed at once", i)
		}
	}

	wf.down.Store(false)
	for i, cb := range cbs {
		cb.Nonce += "-retry"
		require.Eventually(t, func() bool {
			d, err := a.Receive(context.Background(), cb)
			require.NoError(t, err)
			cb.Nonce += "x"
			return d.Outcome == bankwebhook.Applied
		}, 10*time.Second, 100*time.Millisecond, "event %d delivered once the breaker closes", i)
		require.Equal(t, 1, f.seen(cb.Reference).Signals)
	}
}

// Concurrent deliveries of one event (each with its own nonce) signal the saga once: the one
// that stores it delivers it, the others wait for it and are duplicates.
func TestApplierConcurrentDeliveriesSignalOnce(t *testing.T) {
	f := newFixture(t)
	a := bankwebhook.NewApplier(f.store, f.tc)
	ref := f.transfer(true)
	const n = 8
	cbs := make([]bankwebhook.Callback, n)
	for i := range cbs {
		cbs[i] = f.callback(ref, "ev-c")
	}
	outcomes := make([]bankwebhook.Outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			d, err := a.Receive(context.Background(), cbs[i])
			require.NoError(t, err)
			outcomes[i] = d.Outcome
		})
	}
	wg.Wait()
	count := map[bankwebhook.Outcome]int{}
	for _, o := range outcomes {
		count[o]++
	}
	require.Equal(t, map[bankwebhook.Outcome]int{bankwebhook.Applied: 1, bankwebhook.Duplicate: n - 1}, count)
	require.Equal(t, seenState{Seen: []string{"ev-c"}, Signals: 1}, f.seen(ref))
}

// List filters and pages newest first; DUPLICATE selects the events a partner redelivered.
func TestListFilters(t *testing.T) {
	f := newFixture(t)
	a := bankwebhook.NewApplier(f.store, f.tc)
	ref := f.transfer(true)
	var ids []int64
	for i, name := range []string{"ev-l1", "ev-l2", "ev-l3"} {
		f.now = f.now.Add(time.Minute)
		cb := f.callback(ref, name)
		if i == 2 {
			cb.Reference = "nobody's"
		}
		d, err := a.Receive(context.Background(), cb)
		require.NoError(t, err)
		ids = append(ids, d.ID)
		if i == 0 {
			cb.Nonce += "-again"
			_, err = a.Receive(context.Background(), cb)
			require.NoError(t, err)
		}
	}
	list := func(fl bankwebhook.Filter) []string {
		var out []string
		if fl.Limit == 0 {
			fl.Limit = 10
		}
		f.inPlatform(func(ctx context.Context, tx pgx.Tx) error {
			evs, err := bankwebhook.List(ctx, tx, fl)
			for _, e := range evs {
				require.Nil(t, e.RawBody)
				out = append(out, e.EventID)
			}
			return err
		})
		return out
	}
	require.Equal(t, []string{"ev-l3", "ev-l2", "ev-l1"}, list(bankwebhook.Filter{}))
	require.Equal(t, []string{"ev-l2", "ev-l1"}, list(bankwebhook.Filter{Outcome: bankwebhook.Applied}))
	require.Equal(t, []string{"ev-l3"}, list(bankwebhook.Filter{Outcome: bankwebhook.Unmatched}))
	require.Equal(t, []string{"ev-l1"}, list(bankwebhook.Filter{Outcome: bankwebhook.Duplicate}))
	require.Equal(t, []string{"ev-l2"}, list(bankwebhook.Filter{From: f.now.Add(-time.Minute), To: f.now}))
	require.Equal(t, []string{"ev-l2"}, list(bankwebhook.Filter{Before: ids[2], Limit: 1}))
	require.Empty(t, list(bankwebhook.Filter{Partner: "otherbank"}))
}
