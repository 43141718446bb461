package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmployeeHelp: the employee's help page names their employer's contact as the business
// profile holds it (null until given, then what the owner set), lists the disputes they raised
// that are still open — newest first, each as GET /api/me/disputes answers it — and drops one once
// decided; a colleague's disputes never show, and the actions are routes of the table. A caller
// with no employee is 404 EMPLOYEE_NOT_LINKED, any query string 400.
func TestEmployeeHelp(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	const path = "/api/employee/help"
	read := func(c *apiClient) employeeHelpJSON {
		t.Helper()
		rec := c.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[employeeHelpJSON](t, rec)
	}
	mine := func(ids ...string) {
		t.Helper()
		rec := s.me.call(http.MethodGet, "/api/me/disputes", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		want := []disputeJSON{}
		for _, d := range decode[disputeListJSON](t, rec).Items {
			if d.Status == "OPENED" || d.Status == "UNDER_INVESTIGATION" {
				want = append(want, d)
			}
		}
		got := read(s.me)
		require.Equal(t, want, got.Disputes.Open, "the open ones, as GET /api/me/disputes answers them")
		require.False(t, got.Disputes.More)
		var open []string
		for _, d := range got.Disputes.Open {
			open = append(open, d.ID)
		}
		require.Equal(t, ids, open)
	}

	got := read(s.me)
	require.Equal(t, s.emp, got.EmployeeID)
	require.Equal(t, s.tenant, got.BusinessID)
	require.NotEmpty(t, got.Employer.Name)
	require.Nil(t, got.Employer.ContactEmail, "no contact given yet")
	require.Nil(t, got.Employer.ContactPhone)
	require.Empty(t, got.Disputes.Open)
	for _, a := range got.Actions {
		_, ok := s.srv.guards[a.Method+" "+a.Path]
		require.True(t, ok, "%s %s is a route", a.Method, a.Path)
	}

	// The owner gives the business's contact; the page shows it.
	rec := s.owner.call(http.MethodPut, "/api/business/"+s.tenant, map[string]any{"name": got.Employer.Name,
		"contactEmail": "hr@dsp.example", "contactPhone": "+251911000111"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = read(s.me)
	require.Equal(t, "hr@dsp.example", *got.Employer.ContactEmail)
	require.Equal(t, "+251911000111", *got.Employer.ContactPhone)

	// Two disputes under investigation, newest first; a colleague's never shows; a decided one leaves.
	first, _ := s.opened(t, 120_000)
	second, _ := s.opened(t, 80_000)
	rec = s.open(t, s.colleague, s.post(t, s.tenant, s.colleagueEmp, 50_000))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	mine(second.ID, first.ID)
	rec = s.decide(s.operator, first.ID, map[string]any{"decision": "NO_ACTION", "reason": "the advance was taken"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	mine(second.ID)
	require.Len(t, read(s.colleague).Disputes.Open, 1)

	requireStatus(t, s.owner.call(http.MethodGet, path, nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, s.me.hostile(http.MethodGet, path+"?all=1", nil), http.StatusBadRequest, "INVALID_REQUEST")
}
