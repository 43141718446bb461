package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

type myMandateListJSON struct {
	Items      []myMandateJSON `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

// TestMyDeductionMandates: an employee reads every mandate on their own pay — the employer's court
// order (its payee account masked) and their own auto-save opt-in — and only theirs; they may
// cancel their own opt-in (200 CANCELLED, audited, event written; the employer's list shows it
// cancelled) but not the court order (403 PAYROLL_MANDATE_NOT_SELF_SERVICE, audited DENIED,
// nothing changed), nor another employee's opt-in (404), nor a cancelled one again (409). Bad
// input is 400 with nothing written; a caller with no employee 404 EMPLOYEE_NOT_LINKED.
func TestMyDeductionMandates(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{noWorker: true})
	const list = "/api/me/deduction-mandates"
	cancel := func(id string) string { return list + "/" + id + "/cancel" }
	read := func(c *apiClient, query string) myMandateListJSON {
		t.Helper()
		rec := c.call(http.MethodGet, list+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[myMandateListJSON](t, rec)
	}

	// The employer's court order on the saver's pay, and the saver's own auto-save opt-in.
	rec := w.owner.call(http.MethodPost, "/api/payroll/deduction-mandates", map[string]any{"employeeId": w.employee, "kind": "COURT_ORDER",
		"amountSantim": 50_000, "totalSantim": 600_000, "startPeriod": "2026-12", "reference": "Federal First Instance Court file 77/2026",
		"payee": map[string]any{"partner": "cbe", "accountNumber": "1000555123", "holderName": "Almaz Tesfaye"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	court := decode[mandateJSON](t, rec)
	g := w.goal(t, "Holiday", 500_000)
	rec = w.me.call(http.MethodPost, "/api/savings/goals/"+g.ID+"/autosave-mandate", map[string]any{"amountSantim": 25_000, "startPeriod": "2026-12"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	autosave := decode[mandateJSON](t, rec)

	// A neighbour in the same business with an opt-in of their own.
	neighbour := w.saverOf(t, w.owner, testkit.Unique("neighbour")+"@mandates.test")
	rec = neighbour.call(http.MethodPost, "/api/savings/goals", map[string]any{"name": "Theirs", "targetSantim": 1_000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	theirGoal := decode[savingsGoalJSON](t, rec)
	rec = neighbour.call(http.MethodPost, "/api/savings/goals/"+theirGoal.ID+"/autosave-mandate", map[string]any{"amountSantim": 10_000, "startPeriod": "2026-12"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	theirs := decode[mandateJSON](t, rec)

	mine := read(w.me, "")
	require.Nil(t, mine.NextCursor)
	require.Len(t, mine.Items, 2, "the saver's two mandates, not the neighbour's")
	byID := map[string]myMandateJSON{}
	for _, m := range mine.Items {
		byID[m.ID] = m
		require.Equal(t, w.employee, m.EmployeeID)
	}
	c, a := byID[court.ID], byID[autosave.ID]
	require.False(t, c.SelfService, "the employer's court order")
	require.NotNil(t, c.Payee)
	require.Equal(t, myMandatePayeeJSON{Partner: "cbe", MaskedAccountNumber: "****5123", HolderName: "Almaz Tesfaye"}, *c.Payee)
	require.NotContains(t, w.me.call(http.MethodGet, list, nil).Body.String(), "1000555123", "the payee account never in full")
	require.True(t, a.SelfService, "the saver's own opt-in")
	require.Nil(t, a.Payee)
	require.Equal(t, payroll.KindSavingsAutosave, a.Kind)
	require.Equal(t, []string{court.ID}, mandateIDs(read(w.me, "?kind=COURT_ORDER").Items))
	require.Equal(t, []string{theirs.ID}, mandateIDs(read(neighbour, "").Items))
	// Paged: one at a time, each once.
	first := read(w.me, "?limit=1")
	require.Len(t, first.Items, 1)
	require.NotNil(t, first.NextCursor)
	second := read(w.me, "?limit=1&cursor="+*first.NextCursor)
	require.ElementsMatch(t, []string{court.ID, autosave.ID}, append(mandateIDs(first.Items), mandateIDs(second.Items)...))

	// Bad input: 400, nothing written.
	for _, q := range []string{"?status=GONE", "?kind=LOAN", "?employeeId=" + theirs.EmployeeID, "?limit=0", "?limit=101",
		"?cursor=bad%20id", "?status=ACTIVE&status=PENDING", "?other=1"} {
		requireStatus(t, w.me.hostile(http.MethodGet, list+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	for _, body := range []map[string]any{{"reason": ""}, {"reason": "  "}, {"reason": 7}, {"other": "x"}} {
		requireStatus(t, w.me.hostile(http.MethodPost, cancel(autosave.ID), body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.me.hostile(http.MethodPost, cancel("bad%20id"), nil), http.StatusBadRequest, "INVALID_REQUEST")
	cancelled := func() int {
		return w.count(t, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE status = 'CANCELLED'`)
	}
	require.Zero(t, cancelled())

	// Not the caller's: 404; the employer's court order: 403, audited DENIED; nothing changed.
	requireStatus(t, w.me.call(http.MethodPost, cancel(theirs.ID), nil), http.StatusNotFound, "PAYROLL_MANDATE_NOT_FOUND")
	requireStatus(t, w.me.call(http.MethodPost, cancel("mdt_unknown"), nil), http.StatusNotFound, "PAYROLL_MANDATE_NOT_FOUND")
	requireStatus(t, w.owner.call(http.MethodPost, cancel(autosave.ID), nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, w.owner.call(http.MethodGet, list, nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, w.me.call(http.MethodPost, cancel(court.ID), map[string]any{"reason": "I disagree"}), http.StatusForbidden,
		payroll.CodeMandateNotSelfService)
	require.Zero(t, cancelled())
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'CancelDeductionMandate' AND outcome = 'DENIED'
		AND target_id = $1`, court.ID))

	// The saver's own opt-in: cancelled, audited, its event written; the employer sees it.
	rec = w.me.call(http.MethodPost, cancel(autosave.ID), map[string]any{"reason": "saving elsewhere"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[myMandateJSON](t, rec)
	require.Equal(t, payroll.MandateCancelled, got.Status)
	require.Equal(t, "saving elsewhere", *got.StatusReason)
	require.False(t, got.SelfService, "nothing left to cancel")
	require.Equal(t, 1, cancelled())
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'CancelDeductionMandate' AND outcome = 'SUCCESS'
		AND target_id = $1`, autosave.ID))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.deduction_mandate_cancelled.v1'
		AND payload->>'mandateId' = $1`, autosave.ID))
	rec = w.owner.call(http.MethodGet, "/api/payroll/deduction-mandates/"+autosave.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, payroll.MandateCancelled, decode[mandateJSON](t, rec).Status)
	// Again: 409, audited DENIED, nothing changed; the neighbour's still live.
	requireStatus(t, w.me.call(http.MethodPost, cancel(autosave.ID), nil), http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	require.Equal(t, 1, cancelled())
	require.Equal(t, payroll.MandatePending, read(neighbour, "").Items[0].Status)
	require.Equal(t, []string{autosave.ID}, mandateIDs(read(w.me, "?status=CANCELLED").Items))
}

// mandateIDs are the mandates' ids in order.
func mandateIDs(ms []myMandateJSON) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}
