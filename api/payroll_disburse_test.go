package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// payrollDisburseWorld is the EWA stack (every real component: the API over HTTP, the gateway
// over gRPC with the bank sandbox over HTTP calling back, the embedded Temporal server and a
// worker with the real activities) with a payroll: employees whose payout accounts are open at
// the sandbox, a maker (the owner calculates) and a checker (approves and disburses), and the
// organization's payroll account.
type payrollDisburseWorld struct {
	*ewaStack
	checker   *apiClient
	payroll   string            // the payroll account at the sandbox
	employees map[string]string // employee id → payout account
}

const payrollDisburseFunds = 50_000_000_00 // 50 M ETB

func newPayrollDisburseWorld(t *testing.T, n int) *payrollDisburseWorld {
	t.Helper()
	return payrollWorldOn(t, newEwaStack(t, ewaStackOpts{settleDelay: 100 * time.Millisecond}), n, payrollDisburseFunds)
}

// payrollWorldOn makes s a payroll of n employees (the stack's own and n-1 more, created over
// the API a few at a time) whose payroll account at the sandbox holds funds; the payroll account
// is not set in the organization's settings (setPayrollAccount).
func payrollWorldOn(t *testing.T, s *ewaStack, n int, funds int64) *payrollDisburseWorld {
	t.Helper()
	w := &payrollDisburseWorld{ewaStack: s, employees: map[string]string{s.employee: stackEmployeeAcct}}
	s.catalogAppRole(s.tenant, "payroll-checker", `{"payroll":["view","edit","approve"]}`)
	s.addMember(s.tenant, "checker@payroll-disburse.test", orgs.Admin, "payroll-checker")
	w.checker = s.signIn("checker@payroll-disburse.test")
	w.payroll = testkit.Unique("PAYROLL")
	s.bank.Account(t, w.payroll, "Employer PLC", funds)
	prefix := testkit.Unique("EMP")
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1)); i < n && !t.Failed(); i = int(next.Add(1)) {
				acct := fmt.Sprintf("%s-%02d", prefix, i)
				s.bank.Account(t, acct, "Payee "+acct, 0)
				rec := s.owner.call(http.MethodPost, "/api/employees", map[string]any{
					"firstName": "Payee", "lastName": fmt.Sprintf("Number%02d", i), "email": fmt.Sprintf("payee%02d@payroll-disburse.test", i),
					"phone": fmt.Sprintf("+25191%07d", 1000000+i), "nationalId": fmt.Sprintf("ET%08d", 20000000+i), "department": "Ops",
					"position": "Clerk", "employmentType": "Full time", "paymentFrequency": "Monthly", "hireDate": "2024-01-01",
					"grossMonthlySalarySantim": 800_000 + int64(i%100)*10_000,
					"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": acct, "holderName": "Payee " + acct},
				})
				if rec.Code != http.StatusCreated {
					t.Errorf("employee %d: %d %s", i, rec.Code, rec.Body.String())
					return
				}
				id := decode[struct {
					ID string `json:"id"`
				}](t, rec).ID
				mu.Lock()
				w.employees[id] = acct
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed(), "the payroll's employees")
	return w
}

// approvedRun creates, calculates (the owner) and approves (the checker) the run of 2026-11.
func (w *payrollDisburseWorld) approvedRun(t *testing.T) payrollRunOut {
	t.Helper()
	return w.approvedRunOf(t, "2026-11", func(string) {})
}

// approvedRunOf creates, calculates and approves the run of period; phase is called as each of
// "created", "calculated" and "approved" is answered (the benchmark's clock).
func (w *payrollDisburseWorld) approvedRunOf(t *testing.T, period string, phase func(string)) payrollRunOut {
	t.Helper()
	rec := w.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": period})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	run := decode[payrollRunOut](t, rec)
	phase("created")
	rec = w.owner.call(http.MethodPost, "/api/payroll/"+run.ID+"/calculate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	phase("calculated")
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	phase("approved")
	run = decode[payrollRunOut](t, rec)
	require.Equal(t, "APPROVED", run.Status)
	require.Equal(t, len(w.employees), run.EmployeeCount)
	return run
}

func (w *payrollDisburseWorld) setPayrollAccount(t *testing.T, number, holder string) {
	t.Helper()
	rec := w.owner.call(http.MethodPost, "/api/payroll/tenant-settings", map[string]any{
		"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": number, "holderName": holder}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

type payrollDisburseOut struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	WorkflowID          string `json:"workflowId"`
	Sent                int    `json:"sent"`
	PaidWithoutTransfer int    `json:"paidWithoutTransfer"`
	FailedUnsent        int    `json:"failedUnsent"`
}

type payrollSettlementOut struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
	Totals []struct {
		Status    string `json:"status"`
		Entries   int    `json:"entries"`
		NetSantim int64  `json:"netSantim"`
	} `json:"totals"`
	Items []struct {
		EntryID           string  `json:"entryId"`
		EmployeeID        string  `json:"employeeId"`
		Status            string  `json:"status"`
		NetSantim         int64   `json:"netSantim"`
		Attempts          int     `json:"attempts"`
		TransferReference *string `json:"transferReference"`
		FailureReason     *string `json:"failureReason"`
	} `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

type payrollRunDisbursementOut struct {
	payrollRunDetailOut
	Disbursement *struct {
		WorkflowID  string     `json:"workflowId"`
		DisbursedAt *time.Time `json:"disbursedAt"`
	} `json:"disbursement"`
}

// settlement reads every page of the run's settlement (pages of 20).
func (w *payrollDisburseWorld) settlement(t *testing.T, runID string) payrollSettlementOut {
	t.Helper()
	var all payrollSettlementOut
	cursor := ""
	for {
		path := "/api/payroll/" + runID + "/settlement?limit=20"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		rec := w.checker.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		page := decode[payrollSettlementOut](t, rec)
		require.LessOrEqual(t, len(page.Items), 20)
		all.RunID, all.Status, all.Totals = page.RunID, page.Status, page.Totals
		all.Items = append(all.Items, page.Items...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
}

func (w *payrollDisburseWorld) waitRun(t *testing.T, runID, status string) payrollRunDisbursementOut {
	t.Helper()
	var last payrollRunDisbursementOut
	require.Eventually(t, func() bool {
		rec := w.checker.call(http.MethodGet, "/api/payroll/"+runID, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		last = decode[payrollRunDisbursementOut](t, rec)
		return last.Status == status
	}, 90*time.Second, 100*time.Millisecond, "run %s never reached %s", runID, status)
	return last
}

// balances reads the sandbox balances of accounts.
func (w *payrollDisburseWorld) balances(t *testing.T, accounts []string) map[string]int64 {
	t.Helper()
	rows, err := w.d.App.Query(context.Background(), `SELECT account_number, balance_santim FROM sandbox.accounts WHERE account_number = ANY($1)`, accounts)
	require.NoError(t, err)
	out := map[string]int64{}
	for rows.Next() {
		var a string
		var b int64
		require.NoError(t, rows.Scan(&a, &b))
		out[a] = b
	}
	require.NoError(t, rows.Err())
	return out
}

// The disbursement end to end: 50 employees, three of whose accounts the bank refuses (a
// blocked beneficiary, one whose transfers fail at settlement, a dormant one); the payroll
// account not set, then not confirmed by the bank (nothing changes), then good → DISBURSED with
// those three FAILED with the bank's codes and 47 PAID; every other call of disburse (racing, or
// later with other keys) answers the same saga and pays nobody twice; two accounts fixed and the
// three retried → two PAID, the dormant one FAILED again (the run stays DISBURSED); it fixed and
// retried → PAID, and the run's completion starts → COMPLETED; the sandbox's books exact. Every request
// and answer is validated against api/openapi.yaml (the test client does it).
func TestPayrollDisburseEndToEnd(t *testing.T) {
	w := newPayrollDisburseWorld(t, 50)
	run := w.approvedRun(t)
	base := "/api/payroll/" + run.ID

	// No payroll account: refused, nothing changes (audited DENIED).
	catalogStatus(t, w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusConflict, "PAYROLL_ACCOUNT_NOT_SET")
	require.Equal(t, 1, w.auditRows(t, "DisbursePayrollRun"))
	// A payroll account the bank no longer confirms (closed after it was set): the saga's gate
	// refuses, nothing changes.
	closedPayroll := testkit.Unique("PAYROLL-OLD")
	w.bank.Account(t, closedPayroll, "Employer PLC", payrollDisburseFunds)
	w.setPayrollAccount(t, closedPayroll, "Employer PLC")
	w.bank.Sandbox.CloseAccount(t, closedPayroll)
	catalogStatus(t, w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusConflict, "PAYROLL_ACCOUNT_INVALID")
	require.Equal(t, 1, w.auditRows(t, "AccountLookupGateBlocked"))
	require.Equal(t, "APPROVED", decode[payrollRunOut](t, w.checker.call(http.MethodGet, base, nil)).Status)
	require.Zero(t, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant))
	// Only payroll.approve disburses; another organization's run is not found; a malformed id is 400.
	catalogStatus(t, w.owner.hostile(http.MethodPost, "/api/payroll/bad%20id/disburse", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusBadRequest, "INVALID_REQUEST")
	catalogStatus(t, w.other.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, w.other.call(http.MethodGet, base+"/settlement", nil), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")

	// The bank's trouble: three employees' accounts.
	var blocked, failing, dormant string
	for id, acct := range w.employees {
		switch {
		case id == w.employee:
		case blocked == "":
			blocked = acct
		case failing == "":
			failing = acct
		case dormant == "":
			dormant = acct
		}
	}
	w.bank.Fault(t, blocked, map[string]any{"rejectCode": "BENEFICIARY_BLOCKED"})
	w.bank.Fault(t, failing, map[string]any{"settleFailureCode": "BENEFICIARY_BANK_DOWN"})
	w.bank.Fault(t, dormant, map[string]any{"rejectCode": "ACCOUNT_DORMANT"})
	wantFail := map[string]string{blocked: "BENEFICIARY_BLOCKED", failing: "BENEFICIARY_BANK_DOWN", dormant: "ACCOUNT_DORMANT"}

	// The good account; two callers with their own keys at once reach the one saga.
	w.setPayrollAccount(t, w.payroll, "Employer PLC")
	var wg sync.WaitGroup
	answers := make([]payrollDisburseOut, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
			require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
			answers[i] = decode[payrollDisburseOut](t, rec)
		}()
	}
	wg.Wait()
	for _, a := range answers {
		require.Equal(t, workflows.PayrollDisburseWorkflowID(run.ID), a.WorkflowID)
		require.Equal(t, 50, a.Sent)
		require.Zero(t, a.PaidWithoutTransfer)
	}

	detail := w.waitRun(t, run.ID, "DISBURSED")
	require.Equal(t, 47, detail.EntryCounts["PAID"])
	require.Equal(t, 3, detail.EntryCounts["FAILED"])
	require.Zero(t, detail.EntryCounts["DISBURSING"])
	require.NotNil(t, detail.Disbursement)
	require.NotNil(t, detail.Disbursement.DisbursedAt)

	// The settlement: every entry with its transfer, the failed ones with the bank's code.
	st := w.settlement(t, run.ID)
	require.Len(t, st.Items, 50)
	entryOf := map[string]string{} // account → entry id
	net := map[string]int64{}
	var paidTotal int64
	for _, it := range st.Items {
		acct := w.employees[it.EmployeeID]
		entryOf[acct], net[acct] = it.EntryID, it.NetSantim
		require.Equal(t, 1, it.Attempts)
		require.NotNil(t, it.TransferReference)
		if code, ok := wantFail[acct]; ok {
			require.Equal(t, "FAILED", it.Status)
			require.Equal(t, code, *it.FailureReason)
			continue
		}
		require.Equal(t, "PAID", it.Status, "entry of %s", acct)
		paidTotal += it.NetSantim
	}
	for _, tot := range st.Totals {
		switch tot.Status {
		case "PAID":
			require.Equal(t, 47, tot.Entries)
			require.Equal(t, paidTotal, tot.NetSantim)
		case "FAILED":
			require.Equal(t, 3, tot.Entries)
		default:
			require.Zero(t, tot.Entries, tot.Status)
		}
	}
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_disbursed.v1'`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_disbursing.v1'`, w.tenant))
	require.Equal(t, 47, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.entry_paid.v1'`, w.tenant))
	require.Equal(t, 3, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.entry_failed.v1'`, w.tenant))
	// One payroll.bank_transfer_settled.v1 per PAID entry, its net exactly; none for the FAILED.
	settledEntries := func() []settledTransfer {
		var want []settledTransfer
		for _, it := range st.Items {
			if it.Status == "PAID" {
				want = append(want, settledTransfer{Kind: "entry", SubjectID: it.EntryID, AmountSantim: it.NetSantim})
			}
		}
		return want
	}
	require.Len(t, settledEntries(), 47)
	require.ElementsMatch(t, settledEntries(), settledTransfers(t, w.d, w.tenant, payroll.EventBankTransferSettled))

	// Disburse again, another key: the finished saga's answer; nothing sent again.
	rec := w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "DISBURSED", decode[payrollDisburseOut](t, rec).Status)
	runRef := workflows.PayrollDisburseWorkflowID(run.ID) + "%"
	require.Equal(t, 50, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND reference LIKE $2`, w.tenant, runRef))

	// Retries: a PAID entry is refused; another organization's is not found; the two fixable
	// accounts fixed, all three sent again under new references.
	paidEntry := entryOf[stackEmployeeAcct]
	catalogStatus(t, w.checker.call(http.MethodPost, base+"/entries/"+paidEntry+"/retry", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusConflict, "PAYROLL_ENTRY_INVALID_STATE")
	catalogStatus(t, w.other.call(http.MethodPost, base+"/entries/"+entryOf[blocked]+"/retry", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, w.checker.call(http.MethodPost, base+"/entries/pent_nope/retry", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusNotFound, "PAYROLL_ENTRY_NOT_FOUND")
	catalogStatus(t, w.checker.hostile(http.MethodPost, base+"/entries/bad%20id/retry", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusBadRequest, "INVALID_REQUEST")
	w.bank.Sandbox.ClearFault(t, blocked)
	w.bank.Sandbox.ClearFault(t, failing)
	keys := map[string]string{}
	for acct := range wantFail {
		keys[acct] = testkit.Unique("retry")
		rec := w.checker.call(http.MethodPost, base+"/entries/"+entryOf[acct]+"/retry", nil, "Idempotency-Key", keys[acct])
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		out := decode[payrollRetryJSON](t, rec)
		require.Equal(t, 2, out.Attempt)
	}
	require.Eventually(t, func() bool {
		st = w.settlement(t, run.ID)
		for _, it := range st.Items {
			if it.Status == "DISBURSING" {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond)
	for _, it := range st.Items {
		acct := w.employees[it.EmployeeID]
		if _, ok := wantFail[acct]; !ok {
			continue
		}
		require.Equal(t, 2, it.Attempts)
		if acct == dormant {
			require.Equal(t, "FAILED", it.Status)
			require.Equal(t, "ACCOUNT_DORMANT", *it.FailureReason)
			continue
		}
		require.Equal(t, "PAID", it.Status, "retried entry of %s", acct)
		paidTotal += it.NetSantim
	}
	// The same key again: the stored answer; the run stays DISBURSED (an entry is still FAILED:
	// its completion waits for the operator).
	rec = w.checker.call(http.MethodPost, base+"/entries/"+entryOf[blocked]+"/retry", nil, "Idempotency-Key", keys[blocked])
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, "DISBURSED", decode[payrollRunOut](t, w.checker.call(http.MethodGet, base, nil)).Status)
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'`, w.tenant))

	// The last account fixed and its entry sent a third time: every entry PAID, so the retry's
	// saga starts the run's completion → COMPLETED.
	w.bank.Sandbox.ClearFault(t, dormant)
	rec = w.checker.call(http.MethodPost, base+"/entries/"+entryOf[dormant]+"/retry", nil, "Idempotency-Key", testkit.Unique("retry"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, 3, decode[payrollRetryJSON](t, rec).Attempt)
	w.waitRun(t, run.ID, "COMPLETED")
	paidTotal += net[dormant]
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_completed.v1'`, w.tenant))
	// A completed run's entries are not sent again.
	catalogStatus(t, w.checker.call(http.MethodPost, base+"/entries/"+entryOf[dormant]+"/retry", nil, "Idempotency-Key", testkit.Unique("k")), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")

	// The books: each payee holds exactly its net once (nobody paid twice), and the payroll
	// account lost exactly what was paid: every net.
	accts := []string{w.payroll}
	for _, a := range w.employees {
		accts = append(accts, a)
	}
	bal := w.balances(t, accts)
	for acct, n := range net {
		require.Equal(t, n, bal[acct], "payee %s", acct)
	}
	require.Equal(t, int64(payrollDisburseFunds)-paidTotal, bal[w.payroll])
	require.Equal(t, 54, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND from_account = $2`, w.tenant, w.payroll))
	require.Equal(t, 50, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.entry_paid.v1'`, w.tenant))
	require.Equal(t, 4, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.entry_failed.v1'`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'payroll.run_disbursed.v1'`, w.tenant))
	// Every entry's net settled once, whichever attempt paid it (the four failed attempts none).
	st = w.settlement(t, run.ID)
	require.Len(t, settledEntries(), 50)
	require.ElementsMatch(t, settledEntries(), settledTransfers(t, w.d, w.tenant, payroll.EventBankTransferSettled))

	// The sagas' histories, for the replay tests of package workflows (WAGERAIL_RECORD_HISTORY=1).
	testkit.RecordHistory(t, w.tc, workflows.PayrollDisburseWorkflowID(run.ID), "", "../workflows/testdata/payroll_disburse_history.json")
	var retryID string
	require.NoError(t, db.InTenantTx(context.Background(), w.d.App, w.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT retry_workflow_id FROM app.payroll_entries WHERE id = $1`, entryOf[dormant]).Scan(&retryID)
	}))
	testkit.RecordHistory(t, w.tc, retryID, "", "../workflows/testdata/payroll_entry_retry_history.json")
}

// The disbursement routes with hostile ids, queries, bodies and keys, as the owner, the clerk
// (no payroll.approve) or nobody: 4xx or success, never 5xx.
func FuzzPayrollDisburseRoutes(f *testing.F) {
	k := newPayrollKit(f, "pay-disburse-fuzz")
	routes := k.f.srv.payrollDisburseRoutes()
	rec := k.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	seed := decode[payrollRunOut](f, rec).ID
	for i, s := range []struct{ id, entry, query, key, body string }{
		{seed, "pent_x", "", "k1", ``},
		{seed, "pent_x", "status=FAILED&limit=100&cursor=pent_", "k2", `{}`},
		{"prun_nope", "pent_nope", "limit=0&limit=2", "", ``},
		{"../../x", "%00", "status=%00", strings.Repeat("k", 300), `[]`},
		{strings.Repeat("i", 200), strings.Repeat("e", 200), "cursor=" + strings.Repeat("c", 200), "\u00e9", `{"a":1}`},
	} {
		f.Add(uint8(i), uint8(i%3), s.id, s.entry, s.query, s.key, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, route, who uint8, id, entry, query, key string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(strings.Replace(r.Path, ":id", id, 1), ":entryId", entry, 1)
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.84:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		switch who % 3 {
		case 0:
			req.AddCookie(k.owner.cookie)
		case 1:
			req.AddCookie(k.clerk.cookie)
		}
		rec := httptest.NewRecorder()
		k.f.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}

// TestPayrollAdjustmentInAClosedPeriod: once the run of 2026-11 is approved its figures are
// fixed, so an adjustment of 2026-11 would never be paid: creating or approving one is 409
// PAYROLL_PERIOD_CLOSED, and so is reversing a paid one in its own, closed period (found by an
// audit: an earning posted after the approval was never paid, and its reversal in 2026-12 then
// took back 1,000 ETB the employee never got). A later, open period takes both: an adjustment
// of 2026-12 is posted, and the paid one is reversed effective 2026-12.
func TestPayrollAdjustmentInAClosedPeriod(t *testing.T) {
	t.Parallel()
	w := newPayrollDisburseWorld(t, 1)
	const base = "/api/payroll/adjustments"
	create := func(period string) string {
		t.Helper()
		rec := w.owner.call(http.MethodPost, base, map[string]any{"employeeId": w.employee, "period": period, "direction": "EARNING",
			"amountSantim": 100_000, "reason": "missed overtime"})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[mandatesOut](t, rec).ID
	}
	move := func(id, action string, body any) *httptest.ResponseRecorder {
		return w.checker.call(http.MethodPost, base+"/"+id+"/"+action, body)
	}
	paid, pending, open := create("2026-11"), create("2026-11"), create("2026-12")
	for _, id := range []string{paid, open} {
		requireStatus(t, move(id, "approve", nil), http.StatusOK, "")
	}
	requireStatus(t, move(paid, "post", nil), http.StatusOK, "")
	run := w.approvedRun(t)
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND earnings @> $2::jsonb`,
		run.ID, fmt.Sprintf(`[{"reference":%q}]`, paid)), "the run pays the adjustment posted before it")

	rec := w.owner.call(http.MethodPost, base, map[string]any{"employeeId": w.employee, "period": "2026-11", "direction": "EARNING",
		"amountSantim": 100_000, "reason": "late"})
	requireStatus(t, rec, http.StatusConflict, "PAYROLL_PERIOD_CLOSED")
	requireStatus(t, move(pending, "approve", nil), http.StatusConflict, "PAYROLL_PERIOD_CLOSED")
	requireStatus(t, move(paid, "reverse", map[string]any{"reason": "r", "effectivePeriod": "2026-11"}), http.StatusConflict,
		"PAYROLL_PERIOD_CLOSED")
	requireStatus(t, move(open, "post", nil), http.StatusOK, "")
	requireStatus(t, move(paid, "reverse", map[string]any{"reason": "paid twice", "effectivePeriod": "2026-12"}), http.StatusOK, "")
}
