package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/testkit"
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

// TestEwaDisburseSurvivesWorkerKill runs the worker as its own process, the real binary wired as
// in production (`wagerail worker`), and kills it with SIGKILL while it waits on the bank's
// transfer call: once when the ledger posting is committed and the bank has not booked the
// transfer yet (the bank is slow to answer), once when the bank has booked it and holds its answer
// back. A second worker process takes the saga over when the dead one's workflow task times out,
// and completes it exactly once: one posting, one transfer at the bank, one event, the employee
// paid once.
func TestEwaDisburseSurvivesWorkerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the wagerail binary")
	}
	t.Parallel()
	bin := testkit.Binary(t)
	for _, tc := range []struct {
		name  string
		fault map[string]any
		// ready says the worker is where it must die.
		ready func(s *ewaStack, t *testing.T) bool
	}{
		{"posted, the bank not yet booked", map[string]any{"latencyMs": 5000}, func(s *ewaStack, t *testing.T) bool {
			ledgerTxs, _, _ := s.sideEffects(t)
			return ledgerTxs == 1 && len(s.bank.Sandbox.Transfers(t)) == 0
		}},
		{"the bank booked, its answer held back", map[string]any{"executeThenTimeoutMs": 5000}, func(s *ewaStack, t *testing.T) bool {
			return len(s.bank.Sandbox.Transfers(t)) == 1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newEwaStack(t, ewaStackOpts{noWorker: true})
			s.approveKyc(t)
			req := s.request(t, 10_000)
			s.bank.Sandbox.Fault(t, s.funding, tc.fault) // the transfer's source account: the lookups stay fast

			first := s.workerProcess(t, bin)
			answered := make(chan *httptest.ResponseRecorder, 1)
			go func() { answered <- s.disburse(req.ID, testkit.Unique("disburse")) }()
			require.Eventually(t, func() bool {
				select {
				case rec := <-answered:
					require.FailNow(t, "answered before the kill", "%d %s; the worker's log:\n%s", rec.Code, rec.Body.String(), first.log.String())
				default:
				}
				return tc.ready(s, t)
			}, 60*time.Second, 10*time.Millisecond, "the worker never got there; its log:\n%s", first.log.String())
			first.kill(t)
			s.bank.Sandbox.ClearFault(t, s.funding)
			s.workerProcess(t, bin)

			rec := <-answered
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			s.waitStatus(t, req.ID, "DISBURSED")
			ledgerTxs, transfers, events := s.sideEffects(t)
			require.Equal(t, [3]int{1, 1, 1}, [3]int{ledgerTxs, transfers, events}, "exactly once after the kill")
			require.Len(t, s.bank.Sandbox.Transfers(t), 1, "the bank holds one transfer")
			var acct struct {
				BalanceSantim int64 `json:"balanceSantim"`
			}
			s.bank.Sandbox.Call(t, http.MethodGet, "/api/v1/sandbox/accounts/"+stackEmployeeAcct, nil, http.StatusOK, &acct)
			require.Equal(t, int64(10_000), acct.BalanceSantim, "the employee is paid once")
		})
	}
}

// workerProc is a `wagerail worker` process on the stack.
type workerProc struct {
	cmd *exec.Cmd
	log *testkit.SyncBuffer
}

// workerProcess starts the real binary's worker on the stack's database, Temporal server, task
// queue, ledger and gateway; it is killed when the test ends if still running.
func (s *ewaStack) workerProcess(t *testing.T, bin string) *workerProc {
	t.Helper()
	port, err := freeport.One()
	require.NoError(t, err)
	metrics := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "worker",
		"--database-url", s.d.AppDSN, "--database-platform-url", s.d.PlatformDSN,
		"--temporal-address", s.temporal.HostPort(), "--temporal-namespace", s.temporal.Namespace(),
		"--task-queue", s.queue, "--ledger-addr", s.ledgerAddr, "--gateway-addr", s.bank.GatewayAddr,
		"--metrics-addr", metrics, "--schedules=false")
	p := &workerProc{cmd: cmd, log: &testkit.SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Ready: its /healthz answers 200 once it serves the task queue.
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + metrics + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond, "the worker never became ready; its log:\n%s", p.log.String())
	return p
}

// kill ends the process with SIGKILL: nothing in it runs again, nothing is reported.
func (p *workerProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	_ = p.cmd.Wait()
}

// crashMidStep runs call under a worker that dies right after step did its work (crashAfter),
// then under a new worker until finished has seen the saga through; it answers the call's final
// answer (asked again with its key while the answer is DECISION_PENDING) and leaves no worker
// running.
func (s *ewaStack) crashMidStep(t *testing.T, step string, call func() *httptest.ResponseRecorder,
	finished func(*httptest.ResponseRecorder)) *httptest.ResponseRecorder {
	t.Helper()
	crashed := make(chan struct{})
	first := s.startWorker(t, func(r worker.Registry) {
		crashAfter(r, step, s.realActivities(), func() { close(crashed) })
	})
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() { answered <- untilDecided(call) }()
	<-crashed
	first.Stop() // the crashed worker is gone; its step's result was never reported
	second := s.startWorker(t, nil)
	defer second.Stop()
	rec := <-answered
	finished(rec)
	return rec
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
	case activities.LedgerPostActivity:
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.LedgerPostInput) (activities.LedgerPostResult, error) {
			out, err := real.Money.LedgerPost(ctx, in)
			if err == nil && crashed() {
				<-ctx.Done()
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
	case activities.WalletReserveActivity:
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.WalletReserveInput) (activities.LedgerPostResult, error) {
			out, err := real.Wallet.Reserve(ctx, in)
			if err == nil && crashed() {
				<-ctx.Done()
				return activities.LedgerPostResult{}, lost
			}
			return out, err
		}, opts)
	case activities.SavingsReserveWithdrawalActivity:
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.SavingsReserve) (activities.LedgerPostResult, error) {
			out, err := real.Savings.ReserveWithdrawal(ctx, in)
			if err == nil && crashed() {
				<-ctx.Done()
				return activities.LedgerPostResult{}, lost
			}
			return out, err
		}, opts)
	default:
		panic("crashAfter: no crash for " + step)
	}
}
