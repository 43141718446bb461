package api

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/workflows"
)

// fanoutRecorder is a payroll saga's record step reduced to its ledger posting: each settled item
// is posted (payable-to-employee paid from the funding account's mirror, keyed by the item's
// reference, so a repeated record posts nothing twice); it counts what it was given.
type fanoutRecorder struct {
	money   *activities.Money
	funding string

	mu       sync.Mutex
	calls    map[string]int
	statuses map[string]string
}

var fanoutTestRecord = activities.Action[activities.BulkRecordInput]{Name: "test.FanoutLedgerRecord"}

func (r *fanoutRecorder) Record(ctx context.Context, in activities.BulkRecordInput) error {
	for _, it := range in.Items {
		r.mu.Lock()
		r.calls[it.Reference]++
		r.statuses[it.Reference] = it.Status
		r.mu.Unlock()
		if it.Status != workflows.FanoutItemSettled {
			continue
		}
		if _, err := r.money.LedgerPost(ctx, activities.LedgerPostInput{Run: in.Run, IdempotencyKey: "fanout-test:" + it.Reference, Step: "pay",
			Legs: []activities.LedgerLeg{
				{Account: chart.PayableToEmployee, Direction: "DEBIT", AmountSantim: it.AmountSantim},
				{Account: chart.PartnerBankAccount("sandbox", r.funding), Direction: "CREDIT", AmountSantim: it.AmountSantim},
			}, Metadata: map[string]string{partnerref.LedgerMetadataKey: it.Reference}}); err != nil {
			return err
		}
	}
	return nil
}

// fanoutWorld is the stack with payees for a fan-out: accounts that take their items, and the
// accounts whose items the sandbox refuses or fails, by the reason each item should fail with.
type fanoutWorld struct {
	*ewaStack
	rec      *fanoutRecorder
	items    []workflows.FanoutItem
	wantFail map[int]string // item index → failure code
}

const (
	fanoutGhost  = "FAN-GHOST-ACCOUNT"
	fanoutPayees = 40
)

// newFanoutWorld opens fanoutPayees payee accounts and four with trouble: a closed one (refused
// on acceptance), one the bank refuses by rule (an injected reject code), one whose transfers fail
// at settlement (and are refunded), and one whose callbacks are duplicated; a fifth payee does
// not exist. Items go round-robin over all of them.
func newFanoutWorld(t testing.TB, s *ewaStack, n int) *fanoutWorld {
	t.Helper()
	w := &fanoutWorld{ewaStack: s, wantFail: map[int]string{}}
	w.rec = &fanoutRecorder{money: &activities.Money{Ledger: s.ledger, Gateway: s.gateway}, funding: s.funding,
		calls: map[string]int{}, statuses: map[string]string{}}
	payees := make([]string, fanoutPayees)
	prefix := testkit.Unique("FAN")
	for i := range payees {
		payees[i] = fmt.Sprintf("%s-%02d", prefix, i)
		s.bank.Account(t, payees[i], "Payee "+payees[i], 0)
	}
	closed, blocked, failing, dup := payees[0]+"-C", payees[0]+"-B", payees[0]+"-F", payees[0]+"-D"
	for _, a := range []string{closed, blocked, failing, dup} {
		s.bank.Account(t, a, "Payee "+a, 0)
	}
	s.bank.Sandbox.CloseAccount(t, closed)
	s.bank.Fault(t, blocked, map[string]any{"rejectCode": "BENEFICIARY_BLOCKED"})
	s.bank.Fault(t, failing, map[string]any{"settleFailureCode": "BENEFICIARY_BANK_DOWN"})
	s.bank.Fault(t, dup, map[string]any{"duplicateCallback": true})
	special := []struct{ account, code string }{{fanoutGhost, "ACCOUNT_NOT_FOUND"}, {closed, "ACCOUNT_CLOSED"},
		{blocked, "BENEFICIARY_BLOCKED"}, {failing, "BENEFICIARY_BANK_DOWN"}, {dup, ""}}
	for i := range n {
		it := workflows.FanoutItem{Key: fmt.Sprintf("emp-%05d", i), AmountSantim: int64(1_000 + i)}
		if k := i % (fanoutPayees + len(special)); k < fanoutPayees {
			it.ToAccount = payees[k]
		} else {
			sp := special[k-fanoutPayees]
			it.ToAccount = sp.account
			if sp.code != "" {
				w.wantFail[i] = sp.code
			}
		}
		w.items = append(w.items, it)
	}
	return w
}

// worker runs a worker with the real activities and the recorder.
func (w *fanoutWorld) worker(t testing.TB) worker.Worker {
	t.Helper()
	return w.startWorker(t, func(r worker.Registry) { fanoutTestRecord.Register(r, w.rec.Record) })
}

func (w *fanoutWorld) input(batchSize, unsent int) workflows.FanoutInput {
	return workflows.FanoutInput{FanoutParams: workflows.FanoutParams{TenantID: w.tenant, CorrelationID: "fanout-test",
		Partner: "sandbox", FromAccount: w.funding, Domain: "PAYROLL", Record: fanoutTestRecord},
		Items: w.items, BatchSize: batchSize, MaxUnsent: unsent}
}

// books checks the sandbox's books and the ledger after the fan-out: every item was sent once
// (one transfer per reference), every payee holds exactly what settled to it, the funding
// account lost exactly the settled total, each settled item is posted once in the ledger, and the
// record step saw each item with the status the result gives it.
func (w *fanoutWorld) books(t *testing.T, fanoutID string, res workflows.FanoutResult, batchSize int) {
	t.Helper()
	ctx := context.Background()
	require.Equal(t, len(w.items), res.Items)
	require.Equal(t, len(w.wantFail), len(res.Failures), "failed items")
	for _, f := range res.Failures {
		require.Equal(t, w.wantFail[f.Index], f.FailureCode, "item %d", f.Index)
		require.Equal(t, w.items[f.Index].Key, f.Key)
	}
	var settledTotal int64
	want := map[string]int64{}
	refs := make([]string, len(w.items))
	for i, it := range w.items {
		refs[i] = partnerref.Leg(partnerref.BulkItem, workflows.FanoutBatchID(fanoutID, i/batchSize+1), i%batchSize+1)
		if _, failed := w.wantFail[i]; !failed {
			settledTotal += it.AmountSantim
			want[it.ToAccount] += it.AmountSantim
		}
	}
	require.Equal(t, len(w.items)-len(w.wantFail), res.Settled)
	require.Equal(t, settledTotal, res.SettledSantim)

	// The sandbox: one transfer per item reference, no other.
	var transfers, distinct int
	require.NoError(t, w.d.App.QueryRow(ctx, `SELECT count(*), count(DISTINCT reference) FROM sandbox.transfers WHERE reference = ANY($1)`, refs).Scan(&transfers, &distinct))
	require.Equal(t, len(w.items), transfers, "every item sent, once")
	require.Equal(t, len(w.items), distinct)
	rows, err := w.d.App.Query(ctx, `SELECT account_number, balance_santim FROM sandbox.accounts WHERE account_number = ANY($1)`, keys(want))
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		acct string
		bal  int64
	}, error) {
		var v struct {
			acct string
			bal  int64
		}
		return v, r.Scan(&v.acct, &v.bal)
	})
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for _, g := range got {
		require.Equal(t, want[g.acct], g.bal, "payee %s paid exactly its settled items", g.acct)
	}
	var funding int64
	require.NoError(t, w.d.App.QueryRow(ctx, `SELECT balance_santim FROM sandbox.accounts WHERE account_number = $1`, w.funding).Scan(&funding))
	require.Equal(t, int64(stackFundingBalance)-settledTotal, funding, "the funding account lost the settled total once")

	// The ledger: one posting per settled item.
	require.Equal(t, res.Settled, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'fanout-test:%'`, w.tenant))
	// The record step: every item, with its final status.
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	require.Len(t, w.rec.calls, len(w.items))
	for i, ref := range refs {
		status := workflows.FanoutItemSettled
		if _, failed := w.wantFail[i]; failed {
			status = workflows.FanoutItemFailed
		}
		require.Equal(t, status, w.rec.statuses[ref], "item %d", i)
	}
}

func keys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// gatheredApplied waits until every callback about the fan-out's items is delivered (APPLIED to
// its batch, or SAGA_FINISHED when the batch's lookup had already settled it) and returns how
// many reached a running batch.
func (w *fanoutWorld) gatheredApplied(t *testing.T, fanoutID string) int {
	t.Helper()
	var pending, applied int
	require.Eventually(t, func() bool {
		require.NoError(t, db.InTenantTx(context.Background(), w.d.App, w.tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE outcome = 'PENDING'), count(*) FILTER (WHERE outcome = 'APPLIED')
				FROM app.bank_webhook_events WHERE reference LIKE $1`, fanoutID+"-b%").Scan(&pending, &applied)
		}))
		return pending == 0
	}, 60*time.Second, 100*time.Millisecond, "callbacks left pending")
	return applied
}

// fanoutSize is the fan-out the stack tests run: in `make test` 90 items in 3 batches of 30,
// every kind of trouble twice (items go round-robin over 45 accounts, the five troubled ones
// last); under `make soak` (WAGERAIL_SOAK=1) the payroll-sized 300 in 3 batches of 100.
func fanoutSize() (items, batch int) {
	if soak() {
		return 300, 100
	}
	return 90, 30
}

// A payroll-sized fan-out in small (fanoutSize: 3 batches) through the real stack (the gateway
// over gRPC, the bank sandbox over HTTP calling back the API's callback route, the embedded
// Temporal server, the ledger), with items refused on acceptance (unknown, closed and blocked
// payees), failing at settlement, and called back twice. Every item ends SETTLED or FAILED with
// the bank's reason, the callbacks reach the batches gathered, and the books balance.
func TestFanoutPaysThroughTheSandbox(t *testing.T) {
	t.Parallel()
	n, batch := fanoutSize()
	s := newEwaStack(t, ewaStackOpts{settleDelay: 200 * time.Millisecond, noWorker: true})
	w := newFanoutWorld(t, s, n)
	w.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := testkit.Unique("fanout")
	run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.queue}, workflows.FanoutWorkflowName, w.input(batch, 2))
	require.NoError(t, err)
	var res workflows.FanoutResult
	require.NoError(t, run.Get(ctx, &res))
	w.books(t, id, res, batch)
	require.Positive(t, w.gatheredApplied(t, id), "callbacks reached the running batches")

	// Per item, after the fact: the fan-out says where it is, its batch what became of it.
	for i, want := range map[int]string{0: workflows.FanoutItemSettled, fanoutPayees: workflows.FanoutItemFailed} {
		got, err := workflows.FanoutItemStatus(ctx, s.tc, id, w.items[i].Key)
		require.NoError(t, err)
		require.Equal(t, want, got.Status, "item %d", i)
	}
}

// The worker is killed while a batch is with the partner (and the next is being sent), and a new
// one takes over: no item is paid twice, none is lost, each is recorded with its outcome; while
// it runs, an item's status is answered by the queries.
func TestFanoutSurvivesAWorkerKilledMidBatch(t *testing.T) {
	n, batch := 300, 100
	s := newEwaStack(t, ewaStackOpts{settleDelay: 1500 * time.Millisecond, noWorker: true})
	w := newFanoutWorld(t, s, n)
	first := w.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := testkit.Unique("fanout")
	run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.queue}, workflows.FanoutWorkflowName, w.input(batch, 1))
	require.NoError(t, err)

	// Kill the worker once the first batch is with the partner, its items not yet settled.
	var progress workflows.FanoutProgress
	require.Eventually(t, func() bool {
		v, err := s.tc.QueryWorkflow(ctx, id, "", workflows.FanoutStatusQuery)
		if err != nil || v.Get(&progress) != nil {
			return false
		}
		return progress.Batches[0].State == workflows.FanoutBatchSent
	}, time.Minute, 20*time.Millisecond)
	first.Stop()
	time.Sleep(2 * time.Second) // the partner settles batch 1 and calls back while nobody works
	w.worker(t)
	item, err := workflows.FanoutItemStatus(ctx, s.tc, id, w.items[1].Key)
	require.NoError(t, err)
	require.Contains(t, []string{workflows.FanoutItemPending, workflows.FanoutItemSettled}, item.Status)
	require.Equal(t, w.items[1].Key, item.Key)

	var res workflows.FanoutResult
	gctx, gcancel := context.WithTimeout(ctx, 90*time.Second)
	defer gcancel()
	if err := run.Get(gctx, &res); err != nil {
		// Say where it stands: the batches' states and what their workflows wait on.
		if v, qerr := s.tc.QueryWorkflow(ctx, id, "", workflows.FanoutStatusQuery); qerr == nil {
			var p workflows.FanoutProgress
			_ = v.Get(&p)
			t.Logf("fan-out progress: %+v", p)
		}
		for k := 1; k <= 3; k++ {
			if desc, derr := s.tc.DescribeWorkflowExecution(ctx, workflows.FanoutBatchID(id, k), ""); derr == nil {
				t.Logf("batch %d: %v, pending activities %v", k, desc.GetWorkflowExecutionInfo().GetStatus(), desc.GetPendingActivities())
			}
		}
		t.Fatalf("the fan-out did not finish after the worker was replaced: %v", err)
	}
	w.books(t, id, res, batch)
	w.gatheredApplied(t, id)
}
