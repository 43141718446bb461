package workflows

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// A saga with many transfers, on the payout block: a test-only workflow that pays each payee
// from the funding account, one leg each, and waits for every leg's settlement.

const (
	legsKind         partnerref.Kind = "test-legs"
	legsWorkflowName string          = "test.PayoutLegs"
)

type legsInput struct {
	TenantID string
	Funding  string
	Payees   []string
	Amounts  []int64
}

type legsResult struct {
	Final       []string
	TransferIDs []string
	// Seen is how many distinct settlement events the run applied or ignored (duplicates and
	// foreign references are not among them).
	Seen int
}

func payoutLegs(ctx workflow.Context, in legsInput) (legsResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	run := activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: "test-legs"}
	settlements := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)
	p := newPayout()
	for i, to := range in.Payees {
		p.add(activities.TransferInput{Run: run, Partner: "sandbox", Reference: partnerref.Leg(legsKind, wfID, i+1),
			FromAccount: in.Funding, ToAccount: to, AmountSantim: in.Amounts[i], Domain: "EWA"})
	}
	for _, l := range p.legs {
		p.transfer(ctx, l)
	}
	if err := p.await(ctx, settlements, p.legs); err != nil {
		return legsResult{}, err
	}
	var res legsResult
	for _, l := range p.legs {
		res.Final = append(res.Final, l.Final)
		res.TransferIDs = append(res.TransferIDs, l.TransferID)
	}
	res.Seen = len(p.seenOrder)
	return res, nil
}

// Three legs on the embedded Temporal server with the real gateway and bank sandbox: the worker
// is killed after leg 1 was sent (its result lost with the workflow task) and a new worker
// carries on; leg 2's first initiation fails (nothing sent) and is retried; the bank's callbacks
// are held until all three legs settled, then delivered out of order, duplicated, with one for a
// reference the saga does not own. Each leg is paid exactly once: one transfer per reference,
// each payee credited its amount once, the funding account debited the sum once.
func TestPayoutThreeLegsEachPaidOnce(t *testing.T) {
	first := SettlementPollFirst
	SettlementPollFirst = time.Hour // the callbacks settle the legs, not the lookups
	t.Cleanup(func() { SettlementPollFirst = first })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	d := testkit.NewDB(t)
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("payout-legs")
	wfID := "idem-" + testkit.Unique("legs")
	refs := []string{partnerref.Leg(legsKind, wfID, 1), partnerref.Leg(legsKind, wfID, 2), partnerref.Leg(legsKind, wfID, 3)}

	// The bank's callbacks are held until every leg's has arrived, then signalled in reverse
	// order, after one for a reference of another saga, each but the last twice.
	var mu sync.Mutex
	held := map[string]sandbox.CallbackBody{}
	released := make(chan struct{})
	signal := func(b sandbox.CallbackBody) {
		require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", bankwebhook.SettlementSignalName,
			bankwebhook.Settlement{Partner: "sandbox", EventID: b.EventID, Reference: b.Reference, TransferID: b.TransferID,
				Status: b.Status, FailureCode: b.FailureCode, AmountSantim: b.AmountSantim}))
	}
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body sandbox.CallbackBody
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
		mu.Lock()
		defer mu.Unlock()
		if _, dup := held[body.Reference]; dup || len(held) == len(refs) {
			return
		}
		held[body.Reference] = body
		if len(held) < len(refs) {
			return
		}
		go func() {
			defer close(released)
			signal(sandbox.CallbackBody{EventID: "ev-foreign", Reference: partnerref.Leg(legsKind, "idem-other", 1), Status: "FAILED", FailureCode: "X"})
			// Legs 3 and 2 twice each; leg 1 last, once: it completes the saga.
			for _, ref := range slices.Backward(refs[1:]) {
				signal(held[ref])
				signal(held[ref])
			}
			signal(held[refs[0]])
		}()
	}))
	t.Cleanup(cb.Close)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{CallbackURL: cb.URL, SettleDelay: 20 * time.Millisecond})
	funding := testkit.Unique("FUND")
	payees := []string{testkit.Unique("P1"), testkit.Unique("P2"), testkit.Unique("P3")}
	amounts := []int64{100_00, 250_00, 75_00}
	stack.Account(t, funding, "Employer PLC", 10_000_00)
	for _, p := range payees {
		stack.Account(t, p, "Payee", 0)
	}

	// The worker's InitiateTransfer: leg 1's first call sends, then "crashes" (the worker is
	// stopped under it and its result is lost); leg 2's first call fails before sending.
	money := &activities.Money{Ledger: nil, Gateway: stack.GW.Client}
	var once1, once2 sync.Once
	crashed := make(chan struct{})
	initiate := func(ctx context.Context, in activities.TransferInput) (activities.TransferResult, error) {
		if in.Reference == refs[1] {
			failed := false
			once2.Do(func() { failed = true })
			if failed {
				return activities.TransferResult{}, temporal.NewApplicationError("gateway down (test): nothing sent", "UNAVAILABLE")
			}
		}
		res, err := money.InitiateTransfer(ctx, in)
		if res.Status == activities.TransferSettled {
			// The partner answers PENDING (a replayed initiation may find the transfer settled
			// already): the callbacks settle every leg.
			res.Status = activities.TransferPending
		}
		if in.Reference == refs[0] && err == nil {
			crash := false
			once1.Do(func() { crash = true })
			if crash {
				close(crashed)
				<-ctx.Done() // the worker goes down with the leg's result
				return activities.TransferResult{}, temporal.NewApplicationError("worker crashed (test)", "TestCrash")
			}
		}
		return res, err
	}
	newWorker := func() worker.Worker {
		w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
		w.RegisterWorkflowWithOptions(payoutLegs, workflow.RegisterOptions{Name: legsWorkflowName})
		activities.InitiateTransfer.Register(w, initiate)
		activities.TransferStatus.Register(w, money.TransferStatus)
		require.NoError(t, w.Start())
		return w
	}
	w1 := newWorker()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: queue, WorkflowTaskTimeout: 2 * time.Second},
		legsWorkflowName, legsInput{TenantID: testkit.Unique("tenant"), Funding: funding, Payees: payees, Amounts: amounts})
	require.NoError(t, err)
	select {
	case <-crashed:
	case <-ctx.Done():
		t.Fatal("leg 1 was never sent")
	}
	w1.Stop()
	w2 := newWorker()
	t.Cleanup(w2.Stop)

	var res legsResult
	require.NoError(t, run.Get(ctx, &res))
	<-released
	require.Equal(t, []string{"SETTLED", "SETTLED", "SETTLED"}, res.Final)
	require.Equal(t, 3, res.Seen, "one event per leg applied; the duplicates and the foreign reference changed nothing")
	for i, ref := range refs {
		tr := stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
		require.Equal(t, res.TransferIDs[i], tr.GetId(), "leg %d", i+1)
		require.Equal(t, amounts[i], tr.GetAmountSantim(), "leg %d", i+1)
		var acct sandbox.OperatorAccount
		stack.Bank(t, http.MethodGet, "/api/v1/sandbox/accounts/"+payees[i], nil, http.StatusOK, &acct)
		require.Equal(t, amounts[i], acct.BalanceSantim, "payee %d credited once", i+1)
	}
	var fund sandbox.OperatorAccount
	stack.Bank(t, http.MethodGet, "/api/v1/sandbox/accounts/"+funding, nil, http.StatusOK, &fund)
	require.Equal(t, int64(10_000_00-100_00-250_00-75_00), fund.BalanceSantim, "the funding account debited each leg once")
}

// The resume state a run continued as new hands on, through its JSON: a saga with many legs
// keeps every leg's state in Legs; one with one leg keeps it in the top-level fields, the form
// runs continued before legs existed have.
func TestPayoutResumeRoundTrip(t *testing.T) {
	since := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	build := func(n int) *payout {
		p := newPayout()
		for i := 1; i <= n; i++ {
			l := p.add(activities.TransferInput{Reference: partnerref.Leg(legsKind, "idem-x", i)})
			l.LedgerTxID, l.TransferID, l.Status = "ltx-"+string(rune('0'+i)), "tr-"+string(rune('0'+i)), "PENDING"
		}
		p.see("ev-1")
		p.see("ev-2")
		p.nextPoll, p.since, p.runs = 2*time.Minute, since, 1
		return p
	}
	through := func(r *PayoutResume[string]) *payout {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var back PayoutResume[string]
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, "plan", back.Plan)
		return resumePayout(&back, func(ref string) activities.TransferInput { return activities.TransferInput{Reference: ref} })
	}
	for _, n := range []int{1, 3} {
		p := build(n)
		r := resumeOf(p, "plan")
		if n == 1 {
			require.Empty(t, r.Legs)
			require.Equal(t, PayoutResume[string]{Plan: "plan", Reference: partnerref.Leg(legsKind, "idem-x", 1), LedgerTxID: "ltx-1", TransferID: "tr-1",
				TransferStatus: "PENDING", SeenEvents: []string{"ev-1", "ev-2"}, NextPoll: 2 * time.Minute, Since: since, Runs: 1}, *r)
		} else {
			require.Len(t, r.Legs, n)
			require.Empty(t, r.Reference)
		}
		q := through(r)
		require.Len(t, q.legs, n)
		for i, l := range q.legs {
			require.Equal(t, *p.legs[i], *l, "leg %d", i+1)
			require.Same(t, l, q.byRef[l.Transfer.Reference], "a signal finds its leg by reference")
		}
		require.Equal(t, []string{"ev-1", "ev-2"}, q.seenOrder)
		require.True(t, q.seen["ev-2"])
		require.Equal(t, 2*time.Minute, q.nextPoll)
		require.Equal(t, since, q.since)
		require.Equal(t, 2, q.runs, "one more run waited")
	}
}
