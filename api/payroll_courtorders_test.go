package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// courtStack is the whole stack (API over HTTP, gateway and bank sandbox calling back, embedded
// Temporal, real Postgres) with a DISBURSED run of two PAID entries whose court orders are
// remitted to two payee accounts at the sandbox: A (two orders, 50,000 + 20,000 santim) and B
// (one order, 30,000 santim). The payroll account is the stack's funding account.
type courtStack struct {
	*loanStack
	checker, clerk *apiClient
	courtA, courtB string
	runID          string
}

const (
	courtAmountA = int64(70_000)
	courtAmountB = int64(30_000)
)

func newCourtStack(t testing.TB) *courtStack { return newCourtStackWith(t, 0) }

// newCourtStackWith is newCourtStack whose API waits sagaWait for a saga's answer (0: the API's
// default).
func newCourtStackWith(t testing.TB, sagaWait time.Duration) *courtStack {
	t.Helper()
	s := &courtStack{loanStack: &loanStack{ewaStack: newEwaStack(t, ewaStackOpts{noWorker: true, settleDelay: 50 * time.Millisecond,
		sagaWait: sagaWait})}}
	s.catalogAppRole(s.tenant, "payroll-checker", `{"payroll":["view","edit","approve"]}`)
	s.catalogAppRole(s.tenant, "payroll-clerk", `{"payroll":["view","edit"]}`)
	s.addMember(s.tenant, "checker@court-orders.test", orgs.Admin, "payroll-checker")
	s.addMember(s.tenant, "clerk@court-orders.test", orgs.Admin, "payroll-clerk")
	s.checker, s.clerk = s.signIn("checker@court-orders.test"), s.signIn("clerk@court-orders.test")
	rec := s.owner.call(http.MethodPost, "/api/payroll/tenant-settings", map[string]any{
		"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": s.funding, "holderName": "Org Treasury"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	s.courtA, s.courtB = strings.ReplaceAll(testkit.Unique("courtA"), "_", "-"), strings.ReplaceAll(testkit.Unique("courtB"), "_", "-")
	s.bank.Account(t, s.courtA, "Federal Court Trust", 0)
	s.bank.Account(t, s.courtB, "Family Court Trust", 0)
	second := s.secondEmployee(t)
	a1 := s.courtMandate(t, s.employee, s.courtA, "Federal Court Trust", "FHC-2026-1", 50_000)
	b1 := s.courtMandate(t, s.employee, s.courtB, "Family Court Trust", "FAM-2026-7", courtAmountB)
	a2 := s.courtMandate(t, second, s.courtA, "Federal Court Trust", "FHC-2026-2", 20_000)
	statutory := func(paye, pension int64) []completeLine {
		return []completeLine{{Kind: "PAYE", Reference: "ETH-2024", AmountSantim: paye}, {Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: pension}}
	}
	s.runID = fixtureDisbursedRun(t, s.loanStack, []completeEntry{
		{id: "pent_" + testkit.Unique("t"), employee: s.employee, status: payroll.EntryPaid, gross: 1_500_000,
			lines: append(statutory(302_500, 105_000), completeLine{Kind: "COURT_ORDER", Reference: a1, AmountSantim: 50_000},
				completeLine{Kind: "COURT_ORDER", Reference: b1, AmountSantim: courtAmountB})},
		{id: "pent_" + testkit.Unique("t"), employee: second, status: payroll.EntryPaid, gross: 800_000,
			lines: append(statutory(115_000, 56_000), completeLine{Kind: "COURT_ORDER", Reference: a2, AmountSantim: 20_000})},
	})
	return s
}

// courtMandate is an ACTIVE court order of employee, remitted to account.
func (s *courtStack) courtMandate(t testing.TB, employee, account, holder, reference string, amount int64) string {
	t.Helper()
	id := "mdt_" + testkit.Unique("c")
	ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
	require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test fixture: a court order", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.payroll_deduction_mandates (id, tenant_id, employee_id, kind, amount_santim, start_period,
				priority, status, reference, payee_partner, payee_account_number, payee_holder_name, created_by, created_at, activated_by,
				activated_at, updated_at)
			VALUES ($1, $2, $3, 'COURT_ORDER', $4, '2026-01', 0, 'ACTIVE', $5, 'sandbox', $6, $7, 'user_maker', now(), 'user_checker', now(), now())`,
			id, s.tenant, employee, amount, reference, account, holder)
		return err
	}))
	return id
}

// courtWorker runs a worker with the stack's real activities and the court-order steps.
func (s *courtStack) courtWorker(t *testing.T, extra func(worker.Registry)) worker.Worker {
	t.Helper()
	w := worker.New(s.tc, s.queue, workflows.WorkerOptions())
	workflows.Register(w, s.courtDeps(t))
	if extra != nil {
		extra(w)
	}
	require.NoError(t, w.Start())
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stoppable{Worker: w, stop: stop}
}

func (s *courtStack) courtDeps(t *testing.T) workflows.Deps {
	d := s.realActivities()
	d.PayrollCourtOrders = &activities.PayrollCourtOrders{DB: db.NewBun(s.d.App), Platform: db.NewBun(s.d.Platform(t))}
	return d
}

func (s *courtStack) submit(by *apiClient, runID, key string) *httptest.ResponseRecorder {
	return by.call(http.MethodPost, "/api/payroll/"+runID+"/report.court-orders/submit", nil, "Idempotency-Key", key)
}

// remittance is one payee's row, as the tenant sees it.
type courtRow struct {
	status, reference string
	attempt           int
	amount            int64
}

func (s *courtStack) rows(t *testing.T) map[string]courtRow {
	t.Helper()
	ctx := context.Background()
	out := map[string]courtRow{}
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT payee_account_number, status, partner_reference, attempt, amount_santim::bigint
			FROM app.payroll_court_order_remittances WHERE run_id = $1`, s.runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var acct string
			var r courtRow
			if err := rows.Scan(&acct, &r.status, &r.reference, &r.attempt, &r.amount); err != nil {
				return err
			}
			out[acct] = r
		}
		return rows.Err()
	}))
	return out
}

// waitFinal waits until both payees have a remittance and none is REMITTING.
func (s *courtStack) waitFinal(t *testing.T) map[string]courtRow {
	t.Helper()
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FILTER (WHERE status <> 'REMITTING') - count(*) FILTER (WHERE status = 'REMITTING')
			FROM app.payroll_court_order_remittances WHERE run_id = $1`, s.runID) == 2
	}, 60*time.Second, 50*time.Millisecond, "the remittances never became final")
	return s.rows(t)
}

// bankTransfersTo counts the sandbox's transfers to account that settled.
func (s *courtStack) bankTransfersTo(t *testing.T, account string) (settled int, amount int64) {
	t.Helper()
	for _, tr := range s.bank.Sandbox.Transfers(t) {
		if tr.ToAccount == account && tr.Status == "SETTLED" {
			settled++
			amount += tr.AmountSantim
		}
	}
	return settled, amount
}

func (s *courtStack) audits(t *testing.T, outcome string) int {
	return s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'SubmitCourtOrderRemit' AND outcome = $1`, outcome)
}

// TestCourtOrderSubmitEndToEnd: two payees; B's bank refuses the first transfer (the leg FAILS,
// nothing moves), the same key answers the same, a submit under a new key remits B alone (attempt
// 2) once the bank takes it, and every later submit is 409 PAYROLL_COURT_ORDERS_ALREADY_REMITTED.
// Each payee is paid exactly once (the sandbox's balances and transfers), the rows and the audit
// say so, and nothing is journaled in the ledger (the withholding is the employer's own money).
// Refusals: another organization's run 404, a malformed id 400, no payroll.approve 403, a run
// whose figures are not settled 409 (audited DENIED), no key 400.
func TestCourtOrderSubmitEndToEnd(t *testing.T) {
	t.Parallel()
	s := newCourtStack(t)
	s.courtWorker(t, nil)
	path := "/api/payroll/" + s.runID + "/report.court-orders/submit"
	fundingBefore := s.sandboxBalance(t, s.funding)

	// Refusals first: nothing is claimed or sent.
	catalogStatus(t, s.owner.hostile(http.MethodPost, "/api/payroll/bad%20id/report.court-orders/submit", nil, "Idempotency-Key", testkit.Unique("k")),
		http.StatusBadRequest, "INVALID_REQUEST")
	catalogStatus(t, s.owner.hostile(http.MethodPost, path, nil), http.StatusBadRequest, "IDEMPOTENCY_KEY_REQUIRED")
	catalogStatus(t, s.other.call(http.MethodPost, path, nil, "Idempotency-Key", testkit.Unique("k")), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, s.clerk.call(http.MethodPost, path, nil, "Idempotency-Key", testkit.Unique("k")), http.StatusForbidden, "PERMISSION_DENIED")
	setStatus := func(status string) {
		ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
		require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test fixture: run status", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE app.payroll_runs SET status = $1 WHERE id = $2`, status, s.runID)
			return err
		}))
	}
	setStatus("DISBURSING")
	catalogStatus(t, s.checker.call(http.MethodPost, path, nil, "Idempotency-Key", testkit.Unique("k")), http.StatusConflict, "PAYROLL_COURT_ORDERS_RUN_NOT_SETTLED")
	require.Equal(t, 1, s.audits(t, "DENIED"))
	setStatus("DISBURSED")
	require.Empty(t, s.rows(t))
	require.Empty(t, s.bank.Sandbox.Transfers(t))

	// B's bank refuses: A is remitted, B FAILED, nothing moved to B.
	s.bank.Fault(t, s.courtB, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
	key1 := testkit.Unique("court")
	first := s.submit(s.checker, s.runID, key1)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, first.Code, first.Body.String())
	got := decode[courtOrderSubmitJSON](t, first)
	require.Len(t, got.Remittances, 2)
	rows := s.waitFinal(t)
	require.Equal(t, courtRow{status: "REMITTED", reference: rows[s.courtA].reference, attempt: 1, amount: courtAmountA}, rows[s.courtA])
	require.Equal(t, courtRow{status: "FAILED", reference: rows[s.courtB].reference, attempt: 1, amount: courtAmountB}, rows[s.courtB])
	require.True(t, strings.HasSuffix(rows[s.courtA].reference, ".court-order-remit.1"), rows[s.courtA].reference)
	require.True(t, strings.HasSuffix(rows[s.courtB].reference, ".court-order-remit.2"), rows[s.courtB].reference)
	// A's leg settled: one payroll.bank_transfer_settled.v1 of its amount; B's FAILED leg none.
	settledA := settledTransfer{Kind: "court_order_remittance", SubjectID: rows[s.courtA].reference, AmountSantim: courtAmountA}
	require.Equal(t, []settledTransfer{settledA}, settledTransfers(t, s.d, s.tenant, payroll.EventBankTransferSettled))
	// The same key: the same answer, nothing new.
	again := s.submit(s.checker, s.runID, key1)
	require.Equal(t, first.Code, again.Code)
	require.JSONEq(t, first.Body.String(), again.Body.String())

	// The bank takes B now: a new key remits B alone, under a new reference.
	s.bank.Sandbox.ClearFault(t, s.courtB)
	key2 := testkit.Unique("court")
	second := s.submit(s.checker, s.runID, key2)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, second.Code, second.Body.String())
	got = decode[courtOrderSubmitJSON](t, second)
	require.Len(t, got.Remittances, 1)
	require.Equal(t, s.courtB, got.Remittances[0].PayeeAccountNumber)
	require.Equal(t, 2, got.Remittances[0].Attempt)
	retried := s.waitFinal(t)
	require.Equal(t, rows[s.courtA], retried[s.courtA], "A untouched")
	require.Equal(t, "REMITTED", retried[s.courtB].status)
	require.Equal(t, 2, retried[s.courtB].attempt)
	require.NotEqual(t, rows[s.courtB].reference, retried[s.courtB].reference)

	// Every payee remitted: any other key is refused, audited; the second key still answers its own.
	catalogStatus(t, s.submit(s.checker, s.runID, testkit.Unique("court")), http.StatusConflict, "PAYROLL_COURT_ORDERS_ALREADY_REMITTED")
	require.Equal(t, 2, s.audits(t, "DENIED"))
	replay := s.submit(s.checker, s.runID, key2)
	require.Equal(t, second.Code, replay.Code)
	require.JSONEq(t, second.Body.String(), replay.Body.String())

	// Paid exactly once each, from the payroll account, and nothing journaled.
	require.Eventually(t, func() bool { return s.sandboxBalance(t, s.courtB) == courtAmountB }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, courtAmountA, s.sandboxBalance(t, s.courtA))
	require.Equal(t, courtAmountB, s.sandboxBalance(t, s.courtB))
	require.Equal(t, fundingBefore-courtAmountA-courtAmountB, s.sandboxBalance(t, s.funding))
	// Each settled leg once: A's first attempt, B's second (under its new reference).
	require.Equal(t, []settledTransfer{settledA,
		{Kind: "court_order_remittance", SubjectID: retried[s.courtB].reference, AmountSantim: courtAmountB}},
		settledTransfers(t, s.d, s.tenant, payroll.EventBankTransferSettled))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'partnerReference' = $2
		AND payload->>'runId' = $3 AND payload->>'attempt' = '2'`, payroll.EventBankTransferSettled, retried[s.courtB].reference, s.runID))
	n, amount := s.bankTransfersTo(t, s.courtA)
	require.Equal(t, [2]int64{1, courtAmountA}, [2]int64{int64(n), amount})
	n, amount = s.bankTransfersTo(t, s.courtB)
	require.Equal(t, [2]int64{1, courtAmountB}, [2]int64{int64(n), amount})
	require.Zero(t, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, 2, s.audits(t, "SUCCESS"))
	require.Equal(t, 1, s.audits(t, "FAILED"))
}

// TestCourtOrderSubmitSurvivesWorkerCrash: the worker dies right after the bank accepted the
// first leg (its result lost with it); a new worker replays the saga, resolves that leg under
// its own reference and sends the second: each payee is paid once.
func TestCourtOrderSubmitSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	s := newCourtStack(t)
	crashed := make(chan struct{})
	first := s.courtWorker(t, func(w worker.Registry) {
		crashAfter(w, activities.InitiateTransferActivity, s.courtDeps(t), func() { close(crashed) })
	})
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() { answered <- s.submit(s.checker, s.runID, testkit.Unique("court")) }()
	<-crashed
	first.Stop()
	s.courtWorker(t, nil)
	a := <-answered
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, a.Code, a.Body.String())
	rows := s.waitFinal(t)
	require.Equal(t, "REMITTED", rows[s.courtA].status)
	require.Equal(t, "REMITTED", rows[s.courtB].status)
	require.Eventually(t, func() bool {
		return s.sandboxBalance(t, s.courtA) == courtAmountA && s.sandboxBalance(t, s.courtB) == courtAmountB
	}, 30*time.Second, 50*time.Millisecond)
	for _, acct := range []string{s.courtA, s.courtB} {
		n, _ := s.bankTransfersTo(t, acct)
		require.Equal(t, 1, n, "one transfer to %s", acct)
	}
	require.Len(t, s.bank.Sandbox.Transfers(t), 2)
}

// TestCourtOrderAutoSubmit: the schedule's firing submits nothing while the tenant's policy is
// off (the default), submits the due run once it is on (each payee paid once), and finds nothing
// due at its next firing.
func TestCourtOrderAutoSubmit(t *testing.T) {
	t.Parallel()
	s := newCourtStack(t)
	s.courtWorker(t, nil)
	fire := func() workflows.PayrollCourtOrderAutoSubmitResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("court-auto"), TaskQueue: s.queue},
			workflows.PayrollCourtOrderAutoSubmitWorkflowName, workflows.PayrollCourtOrderAutoSubmitInput{})
		require.NoError(t, err)
		var out workflows.PayrollCourtOrderAutoSubmitResult
		require.NoError(t, run.Get(ctx, &out))
		return out
	}
	require.Equal(t, workflows.PayrollCourtOrderAutoSubmitResult{}, fire(), "policy off by default: nothing due")
	rec := s.owner.call(http.MethodPost, "/api/payroll/tenant-settings", map[string]any{"courtOrderAutoSubmit": true})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, workflows.PayrollCourtOrderAutoSubmitResult{Due: 1, Started: 1}, fire())
	rows := s.waitFinal(t)
	require.Equal(t, "REMITTED", rows[s.courtA].status)
	require.Equal(t, "REMITTED", rows[s.courtB].status)
	require.True(t, strings.HasPrefix(rows[s.courtA].reference, workflows.CourtOrderAutoSubmitPrefix+s.runID+"."), rows[s.courtA].reference)
	require.Equal(t, workflows.PayrollCourtOrderAutoSubmitResult{}, fire(), "remitted: nothing due")
	require.Eventually(t, func() bool {
		return s.sandboxBalance(t, s.courtA) == courtAmountA && s.sandboxBalance(t, s.courtB) == courtAmountB
	}, 30*time.Second, 50*time.Millisecond)
	catalogStatus(t, s.submit(s.checker, s.runID, testkit.Unique("court")), http.StatusConflict, "PAYROLL_COURT_ORDERS_ALREADY_REMITTED")
}

// FuzzCourtOrderSubmitRoutes: whatever the run id, the key, the body and the caller (a checker,
// a clerk without payroll.approve, nobody), the submit answers 4xx or success, never 5xx — on
// the real stack, seeded with the run that has court orders to remit.
func FuzzCourtOrderSubmitRoutes(f *testing.F) {
	// No worker runs here: a submit that starts its saga waits the API's wait out and answers 202
	// pending. A wait of 2 s instead of 15 takes that path with that answer, 13 s sooner.
	s := newCourtStackWith(f, 2*time.Second)
	for i, seed := range []struct{ id, key, body string }{
		{s.runID, "k-1", ``}, {s.runID, "k-1", `{}`}, {"prun_nope", "k-2", ``},
		{"../../x", strings.Repeat("k", 300), `[]`}, {strings.Repeat("i", 200), "\u00e9", `{"a":1}`}, {"x y", "", "\x00"},
	} {
		f.Add(uint8(i), seed.id, seed.key, []byte(seed.body))
	}
	route := s.srv.payrollCourtOrderRoutes()[0]
	f.Fuzz(func(t *testing.T, who uint8, id, key string, body []byte) {
		req := httptest.NewRequest(route.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath = strings.Replace(route.Path, ":id", id, 1), ""
		req.RemoteAddr = "192.0.2.85:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		switch who % 3 {
		case 0:
			req.AddCookie(s.checker.cookie)
		case 1:
			req.AddCookie(s.clerk.cookie)
		}
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%q key %q body %q", id, key, body))
	})
}
