package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

// fanoutFake is a partner for the SDK test environment: bulk activities that accept every batch
// (items to "GHOST" fail on acceptance) and answer lookups from what the test settled, and a
// record activity that counts what it was given per reference.
type fanoutFake struct {
	mu       sync.Mutex
	sent     map[string][]activities.BulkItem // batch reference → items
	sends    map[string]int
	settled  map[string]string // item reference → final status the lookup reports
	recorded map[string][]string
	records  int
	initErr  error // returned by every InitiateBulk when set
	unknown  int   // the first n InitiateBulk calls answer UNKNOWN without sending
}

func newFanoutFake() *fanoutFake {
	return &fanoutFake{sent: map[string][]activities.BulkItem{}, sends: map[string]int{}, settled: map[string]string{}, recorded: map[string][]string{}}
}

func (f *fanoutFake) initiate(_ context.Context, in activities.BulkInput) (activities.BulkResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.initErr != nil {
		return activities.BulkResult{}, f.initErr
	}
	if f.unknown > 0 {
		f.unknown--
		return activities.BulkResult{Outcome: activities.TransferUnknown, UnknownReason: "timeout"}, nil
	}
	f.sends[in.BatchReference]++
	f.sent[in.BatchReference] = in.Items
	return activities.BulkResult{Outcome: activities.TransferAccepted, BatchID: "b-" + in.BatchReference, Items: f.items(in.BatchReference)}, nil
}

func (f *fanoutFake) items(batch string) []activities.BulkItemResult {
	var out []activities.BulkItemResult
	for _, it := range f.sent[batch] {
		r := activities.BulkItemResult{Reference: it.Reference, TransferID: "tr-" + it.Reference, Status: activities.TransferPending}
		switch {
		case it.ToAccount == "GHOST":
			r.Status, r.FailureCode = activities.TransferFailed, "ACCOUNT_NOT_FOUND"
		case f.settled[it.Reference] != "":
			r.Status = f.settled[it.Reference]
			if r.Status == activities.TransferFailed {
				r.FailureCode = "ACCOUNT_CLOSED"
			}
		}
		out = append(out, r)
	}
	return out
}

func (f *fanoutFake) status(_ context.Context, in activities.BulkStatusInput) (activities.BulkStatusResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sent[in.BatchReference]; !ok {
		return activities.BulkStatusResult{}, nil
	}
	return activities.BulkStatusResult{Found: true, BatchID: "b-" + in.BatchReference, Items: f.items(in.BatchReference)}, nil
}

func (f *fanoutFake) record(_ context.Context, in activities.BulkRecordInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records++
	for _, it := range in.Items {
		f.recorded[it.Reference] = append(f.recorded[it.Reference], it.Status)
	}
	return nil
}

func (f *fanoutFake) settle(refs []string, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range refs {
		f.settled[r] = status
	}
}

var fanoutRecord = activities.Action[activities.BulkRecordInput]{Name: "test.FanoutRecord"}

func startOpts(id string) client.StartWorkflowOptions { return client.StartWorkflowOptions{ID: id} }

func newFanoutEnv(f *fanoutFake) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The machine running the tests may be busy: a slow first workflow task is not a deadlock.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.RegisterWorkflowWithOptions(Fanout, workflow.RegisterOptions{Name: FanoutWorkflowName})
	env.RegisterWorkflowWithOptions(FanoutBatch, workflow.RegisterOptions{Name: FanoutBatchWorkflowName})
	activities.InitiateBulk.Register(env, f.initiate)
	activities.BulkStatus.Register(env, f.status)
	fanoutRecord.Register(env, f.record)
	return env
}

func fanoutItems(n int, ghosts ...int) []FanoutItem {
	items := make([]FanoutItem, n)
	for i := range items {
		items[i] = FanoutItem{Key: fmt.Sprintf("emp-%d", i), ToAccount: fmt.Sprintf("ACC-%d", i), AmountSantim: int64(100 + i)}
	}
	for _, g := range ghosts {
		items[g].ToAccount = "GHOST"
	}
	return items
}

var fanoutParams = FanoutParams{TenantID: "t1", CorrelationID: "corr-1", Partner: "sandbox", FromAccount: "PAYROLL-1", Domain: "PAYROLL", Record: fanoutRecord}

// One batch: an item refused on acceptance fails at once; gathered callbacks settle some items
// (a duplicate and a callback for another reference change nothing), the batch lookup settles or
// fails the rest; each item is recorded exactly once, with its first final status.
func TestFanoutBatchSettlesBySignalsAndLookup(t *testing.T) {
	f := newFanoutFake()
	env := newFanoutEnv(f)
	const wf = "fan-1-b1"
	ref := func(i int) string { return partnerref.Leg(partnerref.BulkItem, wf, i+1) }
	env.SetStartWorkflowOptions(startOpts(wf))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(bankwebhook.SettlementsSignalName, []bankwebhook.Settlement{
			{EventID: "e1", Reference: ref(0), Status: "SETTLED", TransferID: "tr-0"},
			{EventID: "e2", Reference: ref(1), Status: "FAILED", FailureCode: "ACCOUNT_CLOSED"},
			{EventID: "e1", Reference: ref(0), Status: "FAILED"}, // a later word on a final item
			{EventID: "e9", Reference: "other.bulk.1", Status: "SETTLED"},
		})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		f.settle([]string{ref(0), ref(3), ref(4)}, activities.TransferSettled)
		env.SignalWorkflow(bankwebhook.SettlementSignalName, bankwebhook.Settlement{EventID: "e3", Reference: ref(3), Status: "SETTLED"})
	}, 1500*time.Millisecond)
	env.ExecuteWorkflow(FanoutBatchWorkflowName, FanoutBatchInput{FanoutParams: fanoutParams, Batch: 1, First: 0, Items: fanoutItems(5, 2)})
	require.NoError(t, env.GetWorkflowError())
	var res FanoutBatchResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, FanoutTotals{Settled: 3, Failed: 2, SettledSantim: 100 + 103 + 104, FailedSantim: 101 + 102}, res.FanoutTotals)
	require.Len(t, res.Failures, 2)
	require.Equal(t, "ACCOUNT_CLOSED", res.Failures[0].FailureCode)
	require.Equal(t, "ACCOUNT_NOT_FOUND", res.Failures[1].FailureCode)
	require.Equal(t, 1, f.sends[wf], "sent once")
	want := map[string][]string{ref(0): {"SETTLED"}, ref(1): {"FAILED"}, ref(2): {"FAILED"}, ref(3): {"SETTLED"}, ref(4): {"SETTLED"}}
	require.Equal(t, want, f.recorded, "each item recorded once, with its first final status")
}

// An unknown outcome is resolved by the batch lookup: a batch the partner never received is sent
// again with the same reference, once.
func TestFanoutBatchUnknownIsAskedThenSent(t *testing.T) {
	f := newFanoutFake()
	f.unknown = 1
	env := newFanoutEnv(f)
	const wf = "fan-2-b1"
	env.SetStartWorkflowOptions(startOpts(wf))
	items := fanoutItems(3)
	env.RegisterDelayedCallback(func() {
		f.settle([]string{partnerref.Leg(partnerref.BulkItem, wf, 1), partnerref.Leg(partnerref.BulkItem, wf, 2), partnerref.Leg(partnerref.BulkItem, wf, 3)}, activities.TransferSettled)
	}, time.Second)
	env.ExecuteWorkflow(FanoutBatchWorkflowName, FanoutBatchInput{FanoutParams: fanoutParams, Batch: 1, Items: items})
	require.NoError(t, env.GetWorkflowError())
	var res FanoutBatchResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 3, res.Settled)
	require.Equal(t, 1, f.sends[wf])
}

// A batch refused before it was sent fails every item with the reason, and nothing is recorded
// as paid.
func TestFanoutBatchRefusedFailsEveryItem(t *testing.T) {
	f := newFanoutFake()
	f.initErr = temporal.NewNonRetryableApplicationError("bad", "INVALID_ARGUMENT", nil)
	env := newFanoutEnv(f)
	env.SetStartWorkflowOptions(startOpts("fan-3-b1"))
	env.ExecuteWorkflow(FanoutBatchWorkflowName, FanoutBatchInput{FanoutParams: fanoutParams, Batch: 1, Items: fanoutItems(2)})
	require.NoError(t, env.GetWorkflowError())
	var res FanoutBatchResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, FanoutTotals{Failed: 2, FailedSantim: 201}, res.FanoutTotals)
	for _, it := range res.Failures {
		require.Equal(t, "INVALID_ARGUMENT", it.FailureCode)
	}
	require.Len(t, f.recorded, 2)
}

// A batch still held past its lookups continues as new with its items' outcomes.
func TestFanoutBatchContinuesAsNew(t *testing.T) {
	prev := FanoutPollsPerRun
	FanoutPollsPerRun = 2
	t.Cleanup(func() { FanoutPollsPerRun = prev })
	f := newFanoutFake()
	env := newFanoutEnv(f)
	env.SetStartWorkflowOptions(startOpts("fan-4-b1"))
	env.ExecuteWorkflow(FanoutBatchWorkflowName, FanoutBatchInput{FanoutParams: fanoutParams, Batch: 1, Items: fanoutItems(3, 1)})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, err, &can)
	var next FanoutBatchInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.Resume)
	require.Equal(t, []bool{false, true, false}, next.Resume.Recorded, "the refused item was recorded before continuing")
	require.Equal(t, FanoutItemPending, next.Resume.Items[0].Status)
	require.Equal(t, FanoutItemFailed, next.Resume.Items[1].Status)
}

// The fan-out splits the items into batches (child workflows), each item's reference names its
// batch, and the result adds the batches up; the query answers the batches' progress.
func TestFanoutBatchesAndTotals(t *testing.T) {
	f := newFanoutFake()
	env := newFanoutEnv(f)
	const wf = "fan-5"
	env.SetStartWorkflowOptions(startOpts(wf))
	items := fanoutItems(7, 5)
	env.RegisterDelayedCallback(func() {
		var refs []string
		for k := 1; k <= 3; k++ {
			for i := 1; i <= 3; i++ {
				refs = append(refs, partnerref.Leg(partnerref.BulkItem, FanoutBatchID(wf, k), i))
			}
		}
		f.settle(refs, activities.TransferSettled)
	}, time.Second)
	env.ExecuteWorkflow(FanoutWorkflowName, FanoutInput{FanoutParams: fanoutParams, Items: items, BatchSize: 3, MaxUnsent: 1})
	require.NoError(t, env.GetWorkflowError())
	var res FanoutResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 7, res.Items)
	require.Equal(t, 6, res.Settled)
	require.Equal(t, 1, res.Failed)
	require.Len(t, res.Failures, 1)
	require.Equal(t, 5, res.Failures[0].Index)
	require.Equal(t, "emp-5", res.Failures[0].Key)
	require.Equal(t, partnerref.Leg(partnerref.BulkItem, FanoutBatchID(wf, 2), 3), res.Failures[0].Reference)
	require.Len(t, f.sent, 3)
	require.Len(t, f.sent[FanoutBatchID(wf, 3)], 1)
	require.Len(t, f.recorded, 7)

	v, err := env.QueryWorkflow(FanoutStatusQuery)
	require.NoError(t, err)
	var p FanoutProgress
	require.NoError(t, v.Get(&p))
	require.Len(t, p.Batches, 3)
	for _, b := range p.Batches {
		require.Equal(t, FanoutBatchDone, b.State)
	}
	v, err = env.QueryWorkflow(FanoutItemQuery, "emp-4")
	require.NoError(t, err)
	var loc FanoutItemLocation
	require.NoError(t, v.Get(&loc))
	require.Equal(t, FanoutItemLocation{Index: 4, BatchWorkflowID: FanoutBatchID(wf, 2), BatchState: FanoutBatchDone,
		Reference: partnerref.Leg(partnerref.BulkItem, FanoutBatchID(wf, 2), 2)}, loc)
}

func TestFanoutRefusesWhatItCannotCarry(t *testing.T) {
	for name, in := range map[string]FanoutInput{
		"no items":      {FanoutParams: fanoutParams},
		"too many":      {FanoutParams: fanoutParams, Items: make([]FanoutItem, MaxFanoutItems+1)},
		"batch too big": {FanoutParams: fanoutParams, Items: fanoutItems(1), BatchSize: MaxFanoutBatch + 1},
	} {
		t.Run(name, func(t *testing.T) {
			env := newFanoutEnv(newFanoutFake())
			env.ExecuteWorkflow(FanoutWorkflowName, in)
			var ae *temporal.ApplicationError
			require.ErrorAs(t, env.GetWorkflowError(), &ae)
			require.Equal(t, "FANOUT_INVALID", ae.Type())
		})
	}
}
