package api

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// payrollCalculation is a payroll fixture's calculation: the embedded Temporal server, the API's
// client on a queue of its own and a worker serving the run's calculation workflow
// (workflows.PayrollCalculate over the real store), as cmd/wagerail's worker does.
type payrollCalculation struct {
	tc    client.Client
	queue string
	f     *authFixture
	stop  func() // stops the worker
}

// withPayrollCalculation gives f's API Temporal and starts a worker for the calculation; it stops
// when the test ends.
func withPayrollCalculation(t testing.TB, f *authFixture) *payrollCalculation {
	t.Helper()
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(stackLogHandler()))})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	pc := &payrollCalculation{tc: tc, queue: testkit.Unique("payroll-calc"), f: f}
	f.srv.deps.Temporal, f.srv.deps.TaskQueue = tc, pc.queue
	pc.start(t)
	return pc
}

// start runs a worker on the queue (a stopped one is replaced).
func (pc *payrollCalculation) start(t testing.TB) {
	t.Helper()
	w := worker.New(pc.tc, pc.queue, workflows.WorkerOptions())
	workflows.Register(w, workflows.Deps{PayrollCalculate: &activities.PayrollCalculate{DB: db.NewBun(pc.f.d.App)}})
	require.NoError(t, w.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			w.Stop()
		}
	})
	pc.stop = func() {
		if !stopped {
			stopped = true
			w.Stop()
		}
	}
}

// The calculation off the request: with no worker serving it the request answers 202 with the
// run as it is (calculating, its previous status and figures), approve is refused while it is
// under way, a second request attaches to the same workflow, and once a worker serves it the run
// is CALCULATED by the user who asked and may be approved; a calculation refused after the
// request answered (the run cancelled meanwhile) clears the mark and is audited DENIED.
func TestPayrollRunCalculateAsync(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-calc-async")
	pc := k.calc
	const base = "/api/payroll"
	run := decode[payrollRunOut](t, k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-11"}))
	type calcOut struct {
		payrollRunOut
		Calculating   bool       `json:"calculating"`
		CalculatingBy *string    `json:"calculatingBy"`
		CalculatingAt *time.Time `json:"calculatingAt"`
	}
	rec := k.clerk.call(http.MethodPost, base+"/"+run.ID+"/calculate", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	first := decode[calcOut](t, rec)
	require.Equal(t, "CALCULATED", first.Status)
	require.False(t, first.Calculating, "the calculation ended within the wait")
	require.Nil(t, first.CalculatingAt)

	// No worker: the recalculation is under way when the wait runs out.
	pc.stop()
	k.f.srv.deps.DisburseWait = 500 * time.Millisecond // the wait before 202
	rec = k.owner.call(http.MethodPost, base+"/"+run.ID+"/calculate", nil)
	catalogStatus(t, rec, http.StatusAccepted, "")
	pending := decode[calcOut](t, rec)
	require.Equal(t, "CALCULATED", pending.Status, "the run keeps its state while it is recalculated")
	require.True(t, pending.Calculating)
	require.NotNil(t, pending.CalculatingBy)
	require.Equal(t, k.ownerID, *pending.CalculatingBy)
	require.Equal(t, first.GrossSantim, pending.GrossSantim, "the previous figures until they are replaced")
	detail := decode[struct {
		calcOut
		Staleness *struct{} `json:"staleness"`
	}](t, k.viewer.call(http.MethodGet, base+"/"+run.ID, nil))
	require.True(t, detail.Calculating)
	require.Nil(t, detail.Staleness, "no staleness for entries about to be replaced")
	// The clerk calculated first, but the owner's calculation is under way: approving now would
	// approve figures about to change.
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+run.ID+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_CALCULATING")
	require.Equal(t, 1, k.audits("ApprovePayrollRun", "DENIED"))
	// A second request (another user) attaches to the calculation under way: one workflow.
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+run.ID+"/calculate", nil), http.StatusAccepted, "")

	pc.start(t)
	var done calcOut
	require.Eventually(t, func() bool {
		done = decode[calcOut](t, k.viewer.call(http.MethodGet, base+"/"+run.ID, nil))
		return !done.Calculating
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "CALCULATED", done.Status)
	require.Equal(t, k.ownerID, *done.CalculatedBy, "the user whose request started the calculation is its maker")
	require.Equal(t, 2, k.audits("CalculatePayrollRun", "SUCCESS"), "the first calculation and the one the two requests shared")
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+run.ID+"/approve", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	rec = k.checker.call(http.MethodPost, base+"/"+run.ID+"/approve", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "APPROVED", decode[payrollRunOut](t, rec).Status)

	// October: asked for, then cancelled before a worker serves it; the calculation is refused
	// when it runs, clears the mark and is audited DENIED.
	oct := decode[payrollRunOut](t, k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-10"}))
	pc.stop()
	rec = k.clerk.call(http.MethodPost, base+"/"+oct.ID+"/calculate", nil)
	catalogStatus(t, rec, http.StatusAccepted, "")
	require.Equal(t, "DRAFT", decode[calcOut](t, rec).Status)
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+oct.ID+"/cancel", nil), http.StatusOK, "")
	denied := k.audits("CalculatePayrollRun", "DENIED")
	pc.start(t)
	require.Eventually(t, func() bool {
		return !decode[calcOut](t, k.viewer.call(http.MethodGet, base+"/"+oct.ID, nil)).Calculating
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "CANCELLED", decode[calcOut](t, k.viewer.call(http.MethodGet, base+"/"+oct.ID, nil)).Status)
	require.Equal(t, denied+1, k.audits("CalculatePayrollRun", "DENIED"))
	require.Equal(t, 2, k.events("payroll.run_calculated.v1"), "only the two calculations of November wrote their event")
}

// A calculating mark whose workflow ended without clearing it (terminated here) heals itself
// once it is older than payroll.CalculationCheckAfter (internal/payroll/run.go): before, approve
// is refused as for any calculation under way; a mark whose workflow is still running stays,
// whatever its age; after, approve, calculate and GET each find the workflow closed, clear the
// mark (audited CalculatePayrollRun FAILED) and go on: the run is approved with the figures of
// its last calculation, calculated anew as the asker's own, or read as it is.
func TestPayrollRunCalculationAbandoned(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-calc-abandoned")
	pc := k.calc
	const base = "/api/payroll"
	// age makes the tenant's calculating marks older than the bound.
	age := func() {
		require.NoError(t, db.InTenantTx(context.Background(), k.f.d.App, k.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(context.Background(), `UPDATE app.payroll_runs SET calculating_at = calculating_at - $1::interval
				WHERE calculating_at IS NOT NULL`, (2 * payroll.CalculationCheckAfter).String())
			return err
		}))
	}
	type calcOut struct {
		payrollRunOut
		Calculating   bool    `json:"calculating"`
		CalculatingBy *string `json:"calculatingBy"`
		Staleness     *struct {
			Stale bool `json:"stale"`
		} `json:"staleness"`
	}
	get := func(id string) calcOut { return decode[calcOut](t, k.viewer.call(http.MethodGet, base+"/"+id, nil)) }
	terminate := func(id string) {
		require.NoError(t, pc.tc.TerminateWorkflow(context.Background(), workflows.PayrollCalculateWorkflowID(k.tenant, id), "", "test: abandoned"))
	}
	// mark asks who for a calculation of id with no worker serving it: 202, marked.
	mark := func(who *apiClient, id string) {
		pc.stop()
		k.f.srv.deps.DisburseWait = 500 * time.Millisecond
		rec := who.call(http.MethodPost, base+"/"+id+"/calculate", nil)
		catalogStatus(t, rec, http.StatusAccepted, "")
		require.True(t, decode[calcOut](t, rec).Calculating)
	}

	// November: calculated by the clerk; the owner's recalculation is terminated.
	rec := k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-11"})
	catalogStatus(t, rec, http.StatusCreated, "")
	nov := decode[payrollRunOut](t, rec)
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+nov.ID+"/calculate", nil), http.StatusOK, "")
	mark(k.owner, nov.ID)
	terminate(nov.ID)
	// The mark is younger than the bound: not checked yet, approve is refused.
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+nov.ID+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_CALCULATING")
	require.Zero(t, k.audits("CalculatePayrollRun", "FAILED"))
	age()
	rec = k.checker.call(http.MethodPost, base+"/"+nov.ID+"/approve", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	approved := decode[calcOut](t, rec)
	require.Equal(t, "APPROVED", approved.Status, "the clerk's figures, the last calculated")
	require.False(t, approved.Calculating)
	require.Equal(t, 1, k.audits("CalculatePayrollRun", "FAILED"))

	// October: the clerk's calculation, old but running, keeps its mark (a second request
	// attaches to it); once terminated, the owner's calculate clears the mark and calculates the
	// run as the owner's.
	oct := decode[payrollRunOut](t, k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-10"}))
	mark(k.clerk, oct.ID)
	age()
	require.True(t, get(oct.ID).Calculating, "an old mark whose workflow runs stays")
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+oct.ID+"/calculate", nil), http.StatusAccepted, "")
	require.Equal(t, 1, k.audits("CalculatePayrollRun", "FAILED"))
	terminate(oct.ID)
	pc.start(t)
	k.f.srv.deps.DisburseWait = 0
	rec = k.owner.call(http.MethodPost, base+"/"+oct.ID+"/calculate", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	calculated := decode[calcOut](t, rec)
	require.Equal(t, "CALCULATED", calculated.Status)
	require.Equal(t, k.ownerID, *calculated.CalculatedBy)
	require.False(t, calculated.Calculating)
	require.Equal(t, 2, k.audits("CalculatePayrollRun", "FAILED"))

	// Again, and a read clears it: the run as its last calculation left it, with its staleness.
	mark(k.clerk, oct.ID)
	terminate(oct.ID)
	require.True(t, get(oct.ID).Calculating)
	age()
	read := get(oct.ID)
	require.False(t, read.Calculating)
	require.Nil(t, read.CalculatingBy)
	require.Equal(t, "CALCULATED", read.Status)
	require.NotNil(t, read.Staleness)
	require.False(t, read.Staleness.Stale)
	require.Equal(t, 3, k.audits("CalculatePayrollRun", "FAILED"))
	require.False(t, get(oct.ID).Calculating)
	require.Equal(t, 3, k.audits("CalculatePayrollRun", "FAILED"), "a second read finds no mark")
}
