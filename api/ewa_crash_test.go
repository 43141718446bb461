package api

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// TestEwaDisburseSurvivesWorkerCrash kills the worker at the two places where a crash could pay
// twice or lose money: after the ledger posting is committed but before the partner call, and
// after the partner accepted the transfer but before the worker reported it. In both the step's
// work is done and its result lost (the worker dies before telling Temporal); a new worker takes
// over, the step runs again, and its idempotency (the ledger's key, the gateway's reference)
// makes the saga complete exactly once: one posting, one transfer, one event.
func TestEwaDisburseSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	for _, step := range []string{activities.LedgerPostPendingActivity, activities.InitiateTransferActivity} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			s := newEwaStack(t, ewaStackOpts{noWorker: true})
			s.approveKyc(t)
			req := s.request(t, 10_000)

			crashed := make(chan struct{})
			first := s.startWorker(t, func(w worker.Registry) {
				crashAfter(w, step, s.realActivities(), func() { close(crashed) })
			})

			type answer struct {
				code int
				body string
			}
			answered := make(chan answer, 1)
			go func() {
				rec := s.disburse(req.ID, testkit.Unique("disburse"))
				answered <- answer{rec.Code, rec.Body.String()}
			}()
			<-crashed
			first.Stop() // the crashed worker is gone; its in-flight result was never reported
			s.startWorker(t, nil)

			a := <-answered
			require.Equal(t, http.StatusAccepted, a.code, a.body)
			s.waitStatus(t, req.ID, "DISBURSED")
			ledgerTxs, transfers, events := s.sideEffects(t)
			require.Equal(t, [3]int{1, 1, 1}, [3]int{ledgerTxs, transfers, events}, "exactly once after the crash")
			require.Len(t, s.bank.Sandbox.Transfers(t), 1, "the bank holds one transfer")
		})
	}
}

// crashAfter registers, in place of the activity named step, one that runs the real step and then,
// the first time, "crashes": it tells the test, which stops the worker, and returns only when the
// worker takes its context away — so the workflow task that ran the step never completes,
// Temporal never learns the step's result, and the new worker runs the task (and the step)
// again once the task times out.
func crashAfter(w worker.Registry, step string, real workflows.Deps, crash func()) {
	var once sync.Once
	crashed := func() bool {
		first := false
		once.Do(func() { first = true; crash() })
		return first
	}
	lost := temporal.NewApplicationError("worker crashed (test): the result is lost", "TestCrash")
	opts := activity.RegisterOptions{Name: step, DisableAlreadyRegisteredCheck: true}
	switch step {
	case activities.LedgerPostPendingActivity:
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.LedgerPostInput) (activities.LedgerPostResult, error) {
			out, err := real.Money.LedgerPostPending(ctx, in)
			if err == nil && crashed() {
				<-ctx.Done() // the worker is going down with the step's result
				return activities.LedgerPostResult{}, lost
			}
			return out, err
		}, opts)
	case activities.InitiateTransferActivity:
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.TransferInput) (activities.TransferResult, error) {
			out, err := real.Money.InitiateTransfer(ctx, in)
			if err == nil && crashed() {
				<-ctx.Done()
				return activities.TransferResult{}, lost
			}
			return out, err
		}, opts)
	default:
		panic("crashAfter: no crash for " + step)
	}
}
