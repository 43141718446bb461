package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// payrollPayoutEntry is an entry as the entries list shows where it is paid.
type payrollPayoutEntry struct {
	ID            string `json:"id"`
	EmployeeID    string `json:"employeeId"`
	Status        string `json:"status"`
	NetSantim     int64  `json:"netSantim"`
	PayoutAccount *struct {
		Partner       string `json:"partner"`
		AccountNumber string `json:"accountNumber"`
		HolderName    string `json:"holderName"`
	} `json:"payoutAccount"`
}

func (w *payrollDisburseWorld) entriesByEmployee(t *testing.T, runID string) map[string]payrollPayoutEntry {
	t.Helper()
	rec := w.checker.call(http.MethodGet, "/api/payroll/"+runID+"/entries?limit=100", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := map[string]payrollPayoutEntry{}
	for _, e := range decode[struct {
		Items []payrollPayoutEntry `json:"items"`
	}](t, rec).Items {
		out[e.EmployeeID] = e
	}
	return out
}

// setPayout changes an employee's payout account as c (PUT /api/employees/{id}).
func (w *payrollDisburseWorld) setPayout(t *testing.T, c *apiClient, employee, account string) {
	t.Helper()
	rec := c.call(http.MethodPut, "/api/employees/"+employee, map[string]any{
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": account, "holderName": "Payee " + account}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// Four-eyes on where pay goes. The maker (the owner) calculates and the checker approves: the
// entries are paid to the accounts the checker approved, whatever the maker changes afterwards.
// An account changed between calculation and approval makes the run stale; one changed after
// the approval is not paid (the approved one is); and a failed entry sent again to a corrected
// account needs someone other than who corrected it. Every call is checked against
// api/openapi.yaml by the test client.
func TestPayrollPaysTheApprovedPayoutAccount(t *testing.T) {
	w := newPayrollDisburseWorld(t, 3)
	w.setPayrollAccount(t, w.payroll, "Employer PLC")
	var diverted, dormant string // employee ids
	for id := range w.employees {
		switch {
		case id == w.employee:
		case diverted == "":
			diverted = id
		default:
			dormant = id
		}
	}
	thief := testkit.Unique("THIEF")
	w.bank.Account(t, thief, "Payee "+thief, 0)

	// Changed after the calculation: the checker would approve an account it was not shown.
	rec := w.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	run := decode[payrollRunOut](t, rec)
	base := "/api/payroll/" + run.ID
	rec = w.owner.call(http.MethodPost, base+"/calculate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for id, e := range w.entriesByEmployee(t, run.ID) {
		require.NotNil(t, e.PayoutAccount, "entry of %s", id)
		require.Equal(t, w.employees[id], e.PayoutAccount.AccountNumber)
		require.Equal(t, "sandbox", e.PayoutAccount.Partner)
	}
	w.setPayout(t, w.owner, diverted, thief)
	catalogStatus(t, w.checker.call(http.MethodPost, base+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_STALE")
	w.setPayout(t, w.owner, diverted, w.employees[diverted])
	rec = w.owner.call(http.MethodPost, base+"/calculate", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.checker.call(http.MethodPost, base+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// Changed after the approval: the approved account is paid, the new one gets nothing.
	w.setPayout(t, w.owner, diverted, thief)
	w.bank.Fault(t, w.employees[dormant], map[string]any{"rejectCode": "ACCOUNT_DORMANT"})
	rec = w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "DISBURSED")
	entries := w.entriesByEmployee(t, run.ID)
	require.Equal(t, "PAID", entries[diverted].Status)
	require.Equal(t, w.employees[diverted], entries[diverted].PayoutAccount.AccountNumber)
	require.Equal(t, "FAILED", entries[dormant].Status)
	bal := w.balances(t, []string{thief, w.employees[diverted]})
	require.Zero(t, bal[thief], "the account set after the approval was paid")
	require.Equal(t, entries[diverted].NetSantim, bal[w.employees[diverted]])

	// The dormant account corrected by the owner: the owner may not send the pay to it (nothing
	// changes, audited DENIED); the checker may, and the new account is paid.
	corrected := testkit.Unique("FIXED")
	w.bank.Account(t, corrected, "Payee "+corrected, 0)
	w.setPayout(t, w.owner, dormant, corrected)
	denied := w.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'RetryPayrollEntry' AND outcome = 'DENIED'`, w.tenant)
	catalogStatus(t, w.owner.call(http.MethodPost, base+"/entries/"+entries[dormant].ID+"/retry", nil, "Idempotency-Key", testkit.Unique("k")),
		http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	require.Equal(t, denied+1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'RetryPayrollEntry' AND outcome = 'DENIED'`, w.tenant))
	require.Equal(t, "FAILED", w.entriesByEmployee(t, run.ID)[dormant].Status)
	require.Equal(t, 3, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND from_account = $2`, w.tenant, w.payroll))

	rec = w.checker.call(http.MethodPost, base+"/entries/"+entries[dormant].ID+"/retry", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	after := w.entriesByEmployee(t, run.ID)[dormant]
	require.Equal(t, "PAID", after.Status)
	require.Equal(t, corrected, after.PayoutAccount.AccountNumber)
	bal = w.balances(t, []string{corrected, w.employees[dormant]})
	require.Equal(t, after.NetSantim, bal[corrected])
	require.Zero(t, bal[w.employees[dormant]])
}

// A run's disbursement resumed by a new saga (its first one terminated after the bank had its
// batch) sends the list the claim sent, unchanged: not the entry the claim did not send (its
// account was at another partner) that an operator has since retried and paid, and every
// outcome on its own entry. Before, the resumed list took the retried entry in: the batch's
// items shifted, the bank's outcomes were matched to the wrong entries and the last entry
// waited for an outcome that never came (or, with the batch not yet at the bank, the retried
// entry was paid twice).
func TestPayrollResumedDisbursementSendsTheClaimedList(t *testing.T) {
	w := payrollWorldOn(t, newEwaStack(t, ewaStackOpts{settleDelay: 3 * time.Second}), 4, payrollDisburseFunds)
	w.setPayrollAccount(t, w.payroll, "Employer PLC")
	var elsewhere string // an employee whose account is at another bank when the run is calculated
	for id := range w.employees {
		if id != w.employee && (elsewhere == "" || id < elsewhere) {
			elsewhere = id
		}
	}
	rec := w.owner.call(http.MethodPut, "/api/employees/"+elsewhere, map[string]any{
		"payoutAccount": map[string]any{"partner": "cbe", "accountNumber": w.employees[elsewhere], "holderName": "Payee " + w.employees[elsewhere]}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	run := w.approvedRun(t)
	base := "/api/payroll/" + run.ID

	rec = w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[payrollDisburseOut](t, rec)
	require.Equal(t, 3, first.Sent)
	require.Equal(t, 1, first.FailedUnsent)
	sagaID := workflows.PayrollDisburseWorkflowID(run.ID)
	require.Eventually(t, func() bool {
		return w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND reference LIKE $2`, w.tenant, sagaID+"%") == 3
	}, 30*time.Second, 20*time.Millisecond, "the batch at the bank")
	require.NoError(t, w.tc.TerminateWorkflow(context.Background(), sagaID, "", "test: the saga dies"))

	// The entry the claim did not send: its account corrected (by the owner) and sent again (by
	// the checker) in its own saga.
	w.setPayout(t, w.owner, elsewhere, w.employees[elsewhere])
	entry := w.entriesByEmployee(t, run.ID)[elsewhere]
	require.Equal(t, "FAILED", entry.Status)
	rec = w.checker.call(http.MethodPost, base+"/entries/"+entry.ID+"/retry", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Eventually(t, func() bool { return w.entriesByEmployee(t, run.ID)[elsewhere].Status == "PAID" },
		30*time.Second, 50*time.Millisecond)

	// A new saga resumes the run: the same three items, each with its own outcome.
	rec = w.checker.call(http.MethodPost, base+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	require.Equal(t, 3, decode[payrollDisburseOut](t, rec).Sent)
	w.waitRun(t, run.ID, "COMPLETED")
	accounts := []string{w.payroll}
	for _, a := range w.employees {
		accounts = append(accounts, a)
	}
	bal := w.balances(t, accounts)
	var paid int64
	for id, e := range w.entriesByEmployee(t, run.ID) {
		require.Equal(t, "PAID", e.Status, "entry of %s", id)
		require.Equal(t, e.NetSantim, bal[w.employees[id]], "payee %s paid exactly once", id)
		paid += e.NetSantim
	}
	require.Equal(t, int64(payrollDisburseFunds)-paid, bal[w.payroll])
}
