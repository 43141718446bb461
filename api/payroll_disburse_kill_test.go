package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// A payroll run's disbursement survives its worker being stopped twice: once right after the
// claim answered (the fan-out not yet sent, or being sent), once while its batch waits for the
// bank (the transfers with the bank, the callbacks arriving while no worker runs). A third worker
// finishes it: every entry PAID once, each payee credited exactly its net, one transfer per
// entry at the gateway and at the bank, one entry_paid event per entry, and the run COMPLETED.
func TestPayrollDisburseSurvivesWorkerKill(t *testing.T) {
	t.Parallel()
	const n = 25
	w := payrollWorldOn(t, newEwaStack(t, ewaStackOpts{settleDelay: 1500 * time.Millisecond}), n, payrollDisburseFunds)
	w.setPayrollAccount(t, w.payroll, "Employer PLC")
	run := w.approvedRun(t)
	base := "/api/payroll/" + run.ID
	accts := []string{w.payroll}
	for _, a := range w.employees {
		accts = append(accts, a)
	}
	before := w.balances(t, accts)
	sent := func() int {
		return w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND from_account = $2`, w.tenant, w.payroll)
	}

	key := testkit.Unique("k")
	rec := w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, n, decode[payrollDisburseOut](t, rec).Sent)
	// Kill 1: the claim is done, the fan-out has at most started.
	w.worker.Stop()
	// The run's progress is read from the entries: no worker needed to answer it.
	type progressOut struct {
		Status       string `json:"status"`
		Disbursement struct {
			Progress *struct {
				Items, Batches, BatchesDone, Settled, Failed int
				SettledSantim, FailedSantim                  int64
			} `json:"progress"`
		} `json:"disbursement"`
	}
	got := decode[progressOut](t, w.checker.call(http.MethodGet, base, nil))
	require.Equal(t, "DISBURSING", got.Status)
	require.NotNil(t, got.Disbursement.Progress)
	require.Equal(t, n, got.Disbursement.Progress.Items)
	require.Equal(t, 1, got.Disbursement.Progress.Batches)
	require.Zero(t, got.Disbursement.Progress.BatchesDone+got.Disbursement.Progress.Settled+got.Disbursement.Progress.Failed)

	// Kill 2: as soon as the batch is with the bank, before it settles (1.5 s).
	second := w.startWorker(t, nil)
	require.Eventually(t, func() bool { return sent() > 0 }, 60*time.Second, 20*time.Millisecond, "the batch never reached the gateway")
	second.Stop()
	require.Equal(t, "DISBURSING", decode[payrollRunOut](t, w.checker.call(http.MethodGet, base, nil)).Status,
		"the second kill came after the run was disbursed: it proves nothing")
	// The bank settles and calls back while no worker runs.
	time.Sleep(2 * time.Second)

	// The client retries its key meanwhile: the saga's answer, nothing sent again.
	rec = w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", key)
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	require.Equal(t, workflows.PayrollDisburseWorkflowID(run.ID), decode[payrollDisburseOut](t, rec).WorkflowID)

	w.startWorker(t, nil)
	w.waitRun(t, run.ID, "COMPLETED")

	st := w.settlement(t, run.ID)
	require.Len(t, st.Items, n)
	after := w.balances(t, accts)
	var paid int64
	for _, it := range st.Items {
		require.Equal(t, "PAID", it.Status, "entry %s", it.EntryID)
		require.Equal(t, 1, it.Attempts, "entry %s", it.EntryID)
		acct := w.employees[it.EmployeeID]
		require.Equal(t, before[acct]+it.NetSantim, after[acct], "payee %s paid exactly once", acct)
		paid += it.NetSantim
	}
	require.Equal(t, before[w.payroll]-paid, after[w.payroll])
	require.Equal(t, n, sent(), "one transfer per entry at the gateway")
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM sandbox.transfers WHERE from_account = $1`, w.payroll), "one transfer per entry at the bank")
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.entry_paid.v1'`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_disbursed.v1'`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'`, w.tenant))
}
