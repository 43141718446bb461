package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestEmployeeSettings: the employee's settings page shows each section as its own route answers
// it — the profile, the notification preferences, the live deductions on their pay (the court
// order the employer recorded, their own opt-in) — and the account's security counted: a second
// sign-in is a second session, a changed preference shows at once, a cancelled opt-in leaves the
// live list. A neighbour's page shows only their own; a caller with no employee is 404
// EMPLOYEE_NOT_LINKED, an anonymous one 401, and any query string 400.
func TestEmployeeSettings(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{noWorker: true})
	const path = "/api/employee/settings"
	read := func(c *apiClient) map[string]json.RawMessage {
		t.Helper()
		rec := c.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[map[string]json.RawMessage](t, rec)
	}
	// same: the page's sections are these routes' answers now.
	same := func(c *apiClient, got map[string]json.RawMessage) {
		t.Helper()
		for section, route := range map[string]string{"profile": "/api/me/profile", "notifications": "/api/notifications/preferences"} {
			rec := c.call(http.MethodGet, route, nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.JSONEq(t, rec.Body.String(), string(got[section]), section)
		}
		rec := c.call(http.MethodGet, "/api/me/deduction-mandates", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		live := []myMandateJSON{}
		for _, m := range decode[myMandateListJSON](t, rec).Items {
			if m.Status == payroll.MandatePending || m.Status == payroll.MandateActive || m.Status == payroll.MandateSuspended {
				live = append(live, m)
			}
		}
		want, err := json.Marshal(employeeDeductionsJSON{Live: live})
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got["deductions"]))
	}
	security := func(got map[string]json.RawMessage) employeeSecurityJSON {
		t.Helper()
		var s employeeSecurityJSON
		require.NoError(t, json.Unmarshal(got["security"], &s))
		return s
	}

	got := read(w.me)
	require.JSONEq(t, `"`+w.employee+`"`, string(got["employeeId"]))
	require.JSONEq(t, `"`+w.tenant+`"`, string(got["businessId"]))
	same(w.me, got)
	require.JSONEq(t, `{"live": [], "more": false}`, string(got["deductions"]))
	sec := security(got)
	require.Equal(t, 1, sec.Sessions)
	require.Zero(t, sec.Passkeys)
	require.False(t, sec.TwoFactorEnabled)

	// The employer's court order and the employee's own auto-save: both live, only the opt-in theirs to cancel.
	rec := w.owner.call(http.MethodPost, "/api/payroll/deduction-mandates", map[string]any{"employeeId": w.employee, "kind": "COURT_ORDER",
		"amountSantim": 50_000, "startPeriod": "2026-12", "reference": "Court file 12/2026",
		"payee": map[string]any{"partner": "cbe", "accountNumber": "2000777888", "holderName": "Almaz Tesfaye"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	court := decode[mandateJSON](t, rec)
	g := w.goal(t, "School fees", 900_000)
	rec = w.me.call(http.MethodPost, "/api/savings/goals/"+g.ID+"/autosave-mandate", map[string]any{"amountSantim": 30_000, "startPeriod": "2026-12"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	autosave := decode[mandateJSON](t, rec)
	rec = w.me.call(http.MethodPut, "/api/notifications/preferences", map[string]any{"language": "am"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w.signIn(sec.Email) // a second device

	got = read(w.me)
	same(w.me, got)
	require.NotContains(t, string(got["deductions"]), "2000777888", "the payee account never in full")
	var d employeeDeductionsJSON
	require.NoError(t, json.Unmarshal(got["deductions"], &d))
	require.Len(t, d.Live, 2)
	self := map[string]bool{}
	for _, m := range d.Live {
		self[m.ID] = m.SelfService
	}
	require.Equal(t, map[string]bool{court.ID: false, autosave.ID: true}, self)
	require.Equal(t, 2, security(got).Sessions)
	require.Contains(t, string(got["notifications"]), `"language":"am"`)

	// A cancelled opt-in leaves the live list.
	rec = w.me.call(http.MethodPost, "/api/me/deduction-mandates/"+autosave.ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = read(w.me)
	same(w.me, got)
	require.NoError(t, json.Unmarshal(got["deductions"], &d))
	require.Len(t, d.Live, 1)
	require.Equal(t, court.ID, d.Live[0].ID)

	// A neighbour sees their own page only.
	neighbour := w.saverOf(t, w.owner, testkit.Unique("neighbour")+"@settings.test")
	theirs := read(neighbour)
	require.NotEqual(t, string(got["employeeId"]), string(theirs["employeeId"]))
	same(neighbour, theirs)
	require.JSONEq(t, `{"live": [], "more": false}`, string(theirs["deductions"]))

	// No employee, anonymous, a query: refused.
	requireStatus(t, w.owner.call(http.MethodGet, path, nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	require.Equal(t, http.StatusUnauthorized, newAPIClient(t, w.srv).call(http.MethodGet, path, nil).Code)
	requireStatus(t, w.me.hostile(http.MethodGet, path+"?x=1", nil), http.StatusBadRequest, "INVALID_REQUEST")
}
