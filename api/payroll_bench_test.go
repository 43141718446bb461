package api

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestBenchmarkReportPayrollDisburse prints (asserts nothing about speed) how long a payroll run
// of WAGERAIL_BENCH_PAYROLL_EMPLOYEES employees (default 10,000) takes on the real stack (the
// API, Postgres, the embedded Temporal server, the ledger and the gateway over gRPC, the bank
// sandbox over HTTP settling at once and calling back): calculate, approve, pay (the disburse
// call to DISBURSED, every entry PAID) and complete (DISBURSED to COMPLETED: the run's
// deductions applied, the stack's employee's EWA advances and loan instalment repaid by their
// sagas), each phase timed, beside S — the rate of workflows of the EWA saga's shape with no
// work in them, measured in the same run on the same server (shapeRate), and GET
// /api/payroll/<id>'s latency (p50, p99) by the status it answered (20 reads while CALCULATED,
// the status polls while DISBURSING; reads between phases are not counted in any). What it
// asserts is the outcome: every entry PAID, the run COMPLETED, each payee's sandbox balance up by its net and
// the payroll account down by the run's net total (and the instalment remitted to the FI), the
// advances REPAID, the instalment REPAID. `make bench` runs it.
func TestBenchmarkReportPayrollDisburse(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	n := envInt("WAGERAIL_BENCH_PAYROLL_EMPLOYEES", 10_000)
	const advances, period = 3, "2026-12" // the loan stack's projection puts the first instalment in 2026-12
	setupStart := time.Now()
	ls := newLoanStack(t, ewaStackOpts{settleDelay: time.Millisecond})
	// A salary that leaves room for the advances and the instalment in full.
	rec := ls.owner.call(http.MethodPut, "/api/employees/"+ls.employee, map[string]any{"grossMonthlySalarySantim": 5_000_000})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w := payrollWorldOn(t, ls.ewaStack, n, int64(n)*2_000_000)
	w.setPayrollAccount(t, w.payroll, "Employer PLC")

	// The stack's employee owes: advances DISBURSED and an ACTIVE loan whose first instalment is
	// due in the run's period.
	advIDs := make([]string, advances)
	for i := range advIDs {
		adv := ls.request(t, 10_000)
		rec := ls.disburse(adv.ID, testkit.Unique("disburse"))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		advIDs[i] = ls.waitStatus(t, adv.ID, "DISBURSED").ID
	}
	loan := ls.activeLoan(t, ls.fi, ls.product, 300_000, 3)
	require.Equal(t, period, loan.Instalments[0].DuePeriod)

	accts := []string{w.payroll}
	for _, a := range w.employees {
		accts = append(accts, a)
	}
	before := w.balances(t, accts)
	setup := time.Since(setupStart)

	// S on the same server, warmed up first.
	shapeRate(t, ls.tc, 50, 16)
	shape := shapeRate(t, ls.tc, envInt("WAGERAIL_BENCH_SAGAS", 300), 16)

	at := map[string]time.Time{}
	// GET /api/payroll/<id>'s latency in each phase (the staleness check while CALCULATED, the
	// fan-out's progress query while DISBURSING).
	gets := map[string][]time.Duration{}
	get := func(id string) payrollRunDisbursementOut {
		start := time.Now()
		rec := w.checker.call(http.MethodGet, "/api/payroll/"+id, nil)
		d := time.Since(start)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		out := decode[payrollRunDisbursementOut](t, rec)
		gets[out.Status] = append(gets[out.Status], d)
		return out
	}
	start := time.Now()
	rec = w.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": period})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	run := decode[payrollRunOut](t, rec)
	at["created"] = time.Now()
	rec = w.owner.call(http.MethodPost, "/api/payroll/"+run.ID+"/calculate", nil)
	require.Equal(t, http.StatusOK, rec.Code, "the calculation ends within the API's wait: %s", rec.Body.String())
	at["calculated"] = time.Now()
	for range 20 {
		require.Equal(t, "CALCULATED", get(run.ID).Status)
	}
	at["approve asked"] = time.Now() // the reads before are not the approval's
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	at["approved"] = time.Now()
	run = decode[payrollRunOut](t, rec)
	require.Equal(t, "APPROVED", run.Status)
	require.Equal(t, n, run.EmployeeCount)
	for range 5 {
		get(run.ID)
	}
	at["pay asked"] = time.Now() // nor the pay phase's
	stopStatements := benchStatements(t, ls.d.Name, "the pay phase, per entry", float64(n))
	stopProfile := benchProfile(t, "payroll-pay")
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	at["disburse answered"] = time.Now()
	// The run's status, read over the API until COMPLETED; the first read of DISBURSED ends the pay phase.
	deadline := time.Now().Add(30 * time.Minute)
	var polls int
	for {
		polls++
		st := get(run.ID).Status
		if _, ok := at["DISBURSED"]; !ok && (st == "DISBURSED" || st == "COMPLETED") {
			at["DISBURSED"] = time.Now()
			stopProfile()
			stopStatements()
		}
		if st == "COMPLETED" {
			at["COMPLETED"] = time.Now()
			break
		}
		require.NotContains(t, []string{"FAILED", "CANCELLED"}, st)
		require.True(t, time.Now().Before(deadline), "run %s still %s", run.ID, st)
		time.Sleep(50 * time.Millisecond)
	}
	total := at["COMPLETED"].Sub(start)

	// The outcome.
	st := w.settlement(t, run.ID)
	require.Len(t, st.Items, n)
	var netTotal int64
	for _, it := range st.Items {
		require.Equal(t, "PAID", it.Status, "entry %s", it.EntryID)
		netTotal += it.NetSantim
	}
	require.Equal(t, run.NetSantim, netTotal)
	for _, id := range advIDs {
		ls.waitStatus(t, id, "REPAID")
	}
	require.Equal(t, "REPAID", ls.loan(t, loan.ID).Instalments[0].Status)
	ls.waitRemitted(t, loan.ID, 0)
	after := w.balances(t, accts)
	for _, it := range st.Items {
		acct := w.employees[it.EmployeeID]
		require.Equal(t, before[acct]+it.NetSantim, after[acct], "payee %s", acct)
	}
	remitted := loan.Instalments[0].TotalSantim
	require.Equal(t, before[w.payroll]-netTotal-remitted, after[w.payroll], "the payroll account paid the run's net total and the remittance")
	repaySagas := w.count(t, `SELECT count(*) FROM app.ewa_repayments WHERE tenant_id = $1 AND source = 'PAYROLL'`, w.tenant) +
		w.count(t, `SELECT count(*) FROM app.loan_repayments WHERE tenant_id = $1 AND source = 'PAYROLL'`, w.tenant)

	phase := func(name string, d time.Duration, baseline string) {
		t.Logf("  %-42s %8.2f s  %s", name, d.Seconds(), baseline)
	}
	atS := float64(n) / shape // n sagas of the shape at S, one after another at the measured rate
	t.Logf("payroll run, real stack (API, Postgres, ledger and gateway over gRPC, bank sandbox over HTTP settling at once and calling back), embedded Temporal on SQLite (in memory)")
	t.Logf("%d employees (setup, not measured: %.1f s); the stack's employee owes %d EWA advances and a loan instalment (%d repayment sagas in the completion)",
		n, setup.Seconds(), advances, repaySagas)
	t.Logf("S = %.1f sagas/s (the EWA saga's shape, no work, 16 callers); %d such sagas at S take n/S = %.2f s", shape, n, atS)
	phase("calculate (POST …/calculate)", at["calculated"].Sub(at["created"]), ratio(at["calculated"].Sub(at["created"]), atS))
	phase("approve (POST …/approve)", at["approved"].Sub(at["approve asked"]), ratio(at["approved"].Sub(at["approve asked"]), atS))
	phase("pay (POST …/disburse → DISBURSED)", at["DISBURSED"].Sub(at["pay asked"]), ratio(at["DISBURSED"].Sub(at["pay asked"]), atS))
	phase("  of which the disburse call", at["disburse answered"].Sub(at["pay asked"]), "")
	phase("complete (DISBURSED → COMPLETED)", at["COMPLETED"].Sub(at["DISBURSED"]), ratio(at["COMPLETED"].Sub(at["DISBURSED"]), atS))
	total -= at["approve asked"].Sub(at["calculated"]) + at["pay asked"].Sub(at["approved"]) // the timed reads between the phases
	phase("total (create → COMPLETED)", total, ratio(total, atS))
	t.Logf("every entry PAID (net total %d santim), the run COMPLETED, the advances and the instalment REPAID, the sandbox balances exact; %d status reads at 50 ms", netTotal, polls)
	for range 5 {
		get(run.ID)
	}
	t.Logf("GET /api/payroll/<id> of the %d-entry run, by the status it answered:", n)
	for _, st := range []string{"CALCULATED", "APPROVED", "DISBURSING", "DISBURSED", "COMPLETED"} {
		if ds := gets[st]; len(ds) > 0 {
			slices.Sort(ds)
			t.Logf("  %-10s %4d reads  p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms", st, len(ds), ms(ds[len(ds)/2]),
				ms(ds[min(len(ds)-1, len(ds)*99/100)]), ms(ds[len(ds)-1]))
		}
	}
}

// benchStatements resets pg_stat_statements in database db when WAGERAIL_COUNT_STATEMENTS is set
// (the server loads it then); the returned stop logs what was run since, per unit (once; later
// calls do nothing), so one phase of a benchmark can be read statement by statement.
func benchStatements(t *testing.T, db, what string, per float64) (stop func()) {
	if os.Getenv("WAGERAIL_COUNT_STATEMENTS") == "" {
		return func() {}
	}
	ctx := context.Background()
	super, err := pgx.Connect(ctx, testkit.PG(t).SuperDSN(db))
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close(ctx) })
	_, err = super.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	require.NoError(t, err)
	_, err = super.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	require.NoError(t, err)
	var once sync.Once
	return func() {
		once.Do(func() {
			t.Logf("statements of %s:", what)
			logStatements(t, super, db, per, 40)
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchProfile starts a CPU profile of this process (the whole stack but Postgres) when
// WAGERAIL_BENCH_PROFILE names a directory, written there as <name>.pprof when the returned stop
// is called (once; later calls do nothing), so one phase of a benchmark can be profiled.
func benchProfile(t *testing.T, name string) (stop func()) {
	dir := os.Getenv("WAGERAIL_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(f))
	var once sync.Once
	stop = func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			require.NoError(t, f.Close())
			t.Logf("CPU profile of %s: %s", name, f.Name())
		})
	}
	t.Cleanup(stop)
	return stop
}

// ratio is d as a multiple of base seconds (n/S).
func ratio(d time.Duration, base float64) string {
	return fmt.Sprintf("= %.2f × n/S", d.Seconds()/base)
}
