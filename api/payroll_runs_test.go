package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type payrollRunOut struct {
	ID               string  `json:"id"`
	Period           string  `json:"period"`
	Status           string  `json:"status"`
	Locked           bool    `json:"locked"`
	EmployeeCount    int     `json:"employeeCount"`
	GrossSantim      int64   `json:"grossSantim"`
	DeductionsSantim int64   `json:"deductionsSantim"`
	NetSantim        int64   `json:"netSantim"`
	CalculatedBy     *string `json:"calculatedBy"`
	ApprovedBy       *string `json:"approvedBy"`
	CancelReason     *string `json:"cancelReason"`
}

type payrollRunDetailOut struct {
	payrollRunOut
	EntryCounts map[string]int `json:"entryCounts"`
	Staleness   *struct {
		Stale              bool     `json:"stale"`
		ChangedEntries     int      `json:"changedEntries"`
		AddedEmployees     int      `json:"addedEmployees"`
		ChangedEmployeeIDs []string `json:"changedEmployeeIds"`
	} `json:"staleness"`
}

type payrollRunEntryOut struct {
	ID               string `json:"id"`
	EmployeeID       string `json:"employeeId"`
	Status           string `json:"status"`
	GrossSantim      int64  `json:"grossSantim"`
	DeductionsSantim int64  `json:"deductionsSantim"`
	NetSantim        int64  `json:"netSantim"`
	PAYESantim       int64  `json:"payeSantim"`
	Deductions       []struct {
		Kind         string `json:"kind"`
		AmountSantim int64  `json:"amountSantim"`
	} `json:"deductions"`
}

// The run lifecycle over HTTP, every request and answer validated against the document: create
// (201, then 200 with the same run), list, read, entries paged, calculate, staleness, maker ≠
// checker, approve once, the period closed to inputs, lock, cancel, another tenant's run.
func TestPayrollRunRoutes(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-run")
	for range 3 {
		k.f.catalogEmployee(k.tenant) // four employees with the kit's own
	}
	const base = "/api/payroll"
	// The fixture's clock: 2026-11-23.
	rec := k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-11"})
	catalogStatus(t, rec, http.StatusCreated, "")
	run := decode[payrollRunOut](t, rec)
	require.Equal(t, "DRAFT", run.Status)
	rec = k.owner.call(http.MethodPost, base, map[string]any{"period": "2026-11"})
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, run.ID, decode[payrollRunOut](t, rec).ID, "one run per period")
	require.Equal(t, 1, k.events("payroll.run_created.v1"))
	catalogStatus(t, k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-12"}), http.StatusUnprocessableEntity, "PAYROLL_PERIOD_IN_FUTURE")
	require.Equal(t, 1, k.audits("CreatePayrollRun", "DENIED"))
	catalogStatus(t, k.viewer.call(http.MethodPost, base, map[string]any{"period": "2026-10"}), http.StatusForbidden, "PERMISSION_DENIED")

	list := decode[payrollList[payrollRunOut]](t, k.viewer.call(http.MethodGet, base+"?status=DRAFT&periodFrom=2026-11&periodTo=2026-11", nil))
	require.Len(t, list.Items, 1)
	require.Empty(t, decode[payrollList[payrollRunOut]](t, k.viewer.call(http.MethodGet, base+"?status=APPROVED", nil)).Items)

	// Calculate: an entry per employee; the clerk calculated, so the clerk is the maker.
	rec = k.clerk.call(http.MethodPost, base+"/"+run.ID+"/calculate", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	run = decode[payrollRunOut](t, rec)
	require.Equal(t, "CALCULATED", run.Status)
	require.Equal(t, 4, run.EmployeeCount)
	require.Equal(t, run.GrossSantim-run.DeductionsSantim, run.NetSantim)
	detail := decode[payrollRunDetailOut](t, k.viewer.call(http.MethodGet, base+"/"+run.ID, nil))
	require.Equal(t, 4, detail.EntryCounts["CALCULATED"])
	require.Equal(t, 0, detail.EntryCounts["APPROVED"])
	require.NotNil(t, detail.Staleness)
	require.False(t, detail.Staleness.Stale)

	// Entries, two pages of two; each entry's figures hold.
	page := decode[payrollList[payrollRunEntryOut]](t, k.viewer.call(http.MethodGet, base+"/"+run.ID+"/entries?limit=2", nil))
	require.Len(t, page.Items, 2)
	require.NotNil(t, page.NextCursor)
	next := decode[payrollList[payrollRunEntryOut]](t, k.viewer.call(http.MethodGet, base+"/"+run.ID+"/entries?limit=2&cursor="+*page.NextCursor, nil))
	require.Len(t, next.Items, 2)
	require.Nil(t, next.NextCursor)
	for _, e := range append(page.Items, next.Items...) {
		require.Equal(t, "CALCULATED", e.Status)
		require.Equal(t, e.GrossSantim-e.DeductionsSantim, e.NetSantim)
		require.Equal(t, int64(1_000_000), e.GrossSantim, "10,000 ETB, the whole month")
		require.Equal(t, "PAYE", e.Deductions[0].Kind)
		require.Equal(t, e.PAYESantim, e.Deductions[0].AmountSantim)
	}
	one := decode[payrollList[payrollRunEntryOut]](t, k.viewer.call(http.MethodGet, base+"/"+run.ID+"/entries?employeeId="+k.employee, nil))
	require.Len(t, one.Items, 1)

	// An approved bonus after the calculation makes the run stale: not approved until recalculated.
	e := k.earning(t, k.owner, map[string]any{"employeeId": k.employee, "period": "2026-11", "kind": "BONUS", "amountSantim": 100_000, "taxable": true})
	catalogStatus(t, k.checker.call(http.MethodPost, "/api/payroll/one-time-earnings/"+e.ID+"/approve", nil), http.StatusOK, "")
	detail = decode[payrollRunDetailOut](t, k.viewer.call(http.MethodGet, base+"/"+run.ID, nil))
	require.True(t, detail.Staleness.Stale)
	require.Equal(t, 1, detail.Staleness.ChangedEntries)
	require.Equal(t, []string{k.employee}, detail.Staleness.ChangedEmployeeIDs)
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+run.ID+"/approve", nil), http.StatusForbidden, "PERMISSION_DENIED")
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+run.ID+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_STALE")
	require.Equal(t, 1, k.audits("ApprovePayrollRun", "DENIED"))
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+run.ID+"/calculate", nil), http.StatusOK, "")
	// The clerk calculated: the owner (who holds approve) may approve (and may not approve a run
	// it calculated itself: October, below).
	rec = k.owner.call(http.MethodPost, base+"/"+run.ID+"/approve", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	run = decode[payrollRunOut](t, rec)
	require.Equal(t, "APPROVED", run.Status)
	require.Equal(t, k.ownerID, *run.ApprovedBy)
	require.Equal(t, 4, k.events("payroll.deductions_taken.v1"))
	// Retried: refused, nothing more written.
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+run.ID+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+run.ID+"/approve", nil), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")
	require.Equal(t, 4, k.events("payroll.deductions_taken.v1"))
	require.Equal(t, 1, k.events("payroll.run_approved.v1"))
	detail = decode[payrollRunDetailOut](t, k.viewer.call(http.MethodGet, base+"/"+run.ID, nil))
	require.Equal(t, 4, detail.EntryCounts["APPROVED"])
	require.Nil(t, detail.Staleness, "an approved run's figures are fixed")
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+run.ID+"/calculate", nil), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")

	// The period is closed to its inputs now.
	catalogStatus(t, k.owner.call(http.MethodPost, "/api/payroll/one-time-earnings", map[string]any{"employeeId": k.employee, "period": "2026-11",
		"kind": "BONUS", "amountSantim": 100, "taxable": true}), http.StatusConflict, "PAYROLL_PERIOD_CLOSED")

	// Cancel an APPROVED run needs approve; lock needs approve; a locked run is not cancelled.
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+run.ID+"/cancel", nil), http.StatusForbidden, "PERMISSION_DENIED")
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+run.ID+"/lock", nil), http.StatusForbidden, "PERMISSION_DENIED")
	rec = k.checker.call(http.MethodPost, base+"/"+run.ID+"/lock", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.True(t, decode[payrollRunOut](t, rec).Locked)
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+run.ID+"/lock", nil), http.StatusConflict, "PAYROLL_RUN_LOCKED")
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+run.ID+"/cancel", map[string]any{"reason": "oops"}), http.StatusConflict, "PAYROLL_RUN_LOCKED")
	require.Equal(t, 1, k.events("payroll.run_locked.v1"))

	// The run's audit trail, oldest first, in pages of three: each success in order, the refusals
	// with them, every row about the run.
	var trail []string
	for cursor := ""; ; {
		path := base + "/" + run.ID + "/audit?limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		page := decode[payrollList[struct {
			Action     string `json:"action"`
			Outcome    string `json:"outcome"`
			TargetType string `json:"targetType"`
			TargetID   string `json:"targetId"`
		}]](t, k.viewer.call(http.MethodGet, path, nil))
		for _, r := range page.Items {
			require.Equal(t, []string{"PayrollRun", run.ID}, []string{r.TargetType, r.TargetID})
			trail = append(trail, r.Action+":"+r.Outcome)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	var successes []string
	for _, a := range trail {
		if a, ok := strings.CutSuffix(a, ":SUCCESS"); ok {
			successes = append(successes, a)
		}
	}
	require.Equal(t, []string{"CreatePayrollRun", "CalculatePayrollRun", "CalculatePayrollRun", "ApprovePayrollRun", "LockPayrollRun"}, successes)
	require.Contains(t, trail, "ApprovePayrollRun:DENIED")
	require.Equal(t, k.audits("ApprovePayrollRun", "DENIED")+k.audits("CalculatePayrollRun", "DENIED")+k.audits("LockPayrollRun", "DENIED")+
		k.audits("CancelPayrollRun", "DENIED")+len(successes), len(trail), "every row about the run, no other")
	catalogStatus(t, k.viewer.hostile(http.MethodGet, base+"/"+run.ID+"/audit?cursor=abc", nil), http.StatusBadRequest, "")

	// Another organization sees none of it.
	catalogStatus(t, k.otherOwner.call(http.MethodGet, base+"/"+run.ID, nil), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, k.otherOwner.call(http.MethodGet, base+"/"+run.ID+"/audit", nil), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, k.otherOwner.call(http.MethodGet, base+"/"+run.ID+"/entries", nil), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, k.otherOwner.call(http.MethodPost, base+"/"+run.ID+"/cancel", nil), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	require.Empty(t, decode[payrollList[payrollRunOut]](t, k.otherOwner.call(http.MethodGet, base, nil)).Items)

	// October: the owner calculates and may not approve its own figures; cancelled as a DRAFT
	// or a CALCULATED run with a reason, its period is free again.
	oct := decode[payrollRunOut](t, k.owner.call(http.MethodPost, base, map[string]any{"period": "2026-10"}))
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+oct.ID+"/lock", nil), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+oct.ID+"/calculate", nil), http.StatusOK, "")
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+oct.ID+"/approve", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	rec = k.clerk.call(http.MethodPost, base+"/"+oct.ID+"/cancel", map[string]any{"reason": "wrong cut-off"})
	catalogStatus(t, rec, http.StatusOK, "")
	oct = decode[payrollRunOut](t, rec)
	require.Equal(t, "CANCELLED", oct.Status)
	require.Equal(t, "wrong cut-off", *oct.CancelReason)
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+oct.ID+"/cancel", nil), http.StatusConflict, "PAYROLL_RUN_INVALID_STATE")
	rec = k.clerk.call(http.MethodPost, base, map[string]any{"period": "2026-10"})
	catalogStatus(t, rec, http.StatusCreated, "")
	require.NotEqual(t, oct.ID, decode[payrollRunOut](t, rec).ID)
	// Two runs of October (one cancelled) and November: paged latest period first.
	all := decode[payrollList[payrollRunOut]](t, k.viewer.call(http.MethodGet, base+"?limit=2", nil))
	require.Len(t, all.Items, 2)
	require.Equal(t, "2026-11", all.Items[0].Period)
	require.NotNil(t, all.NextCursor)
	rest := decode[payrollList[payrollRunOut]](t, k.viewer.call(http.MethodGet, base+"?limit=2&cursor="+*all.NextCursor, nil))
	require.Len(t, rest.Items, 1)
	require.Equal(t, "2026-10", rest.Items[0].Period)
	require.Nil(t, rest.NextCursor)
}

// Every rule the run handlers enforce is in the document: a request breaking it is refused by
// both, its allowed boundary accepted by both.
func TestPayrollRunDocumentRules(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-run-rules")
	const base = "/api/payroll"
	run := decode[payrollRunOut](t, k.owner.call(http.MethodPost, base, map[string]any{"period": "2026-11"}))
	cases := []ruleCase{
		{name: "create requires period", method: http.MethodPost, path: base, body: map[string]any{},
			okBody: map[string]any{"period": "2026-11"}, okStatus: 200},
		{name: "create period form", method: http.MethodPost, path: base, body: map[string]any{"period": "2026-1"},
			okBody: map[string]any{"period": "2026-09"}, okStatus: 201},
		{name: "create period month", method: http.MethodPost, path: base, body: map[string]any{"period": "2026-00"},
			okBody: map[string]any{"period": "2000-01"}, okStatus: 201},
		{name: "create period from 2000", method: http.MethodPost, path: base, body: map[string]any{"period": "1999-12"}},
		{name: "create no unknown field", method: http.MethodPost, path: base, body: map[string]any{"period": "2026-11", "status": "APPROVED"}},
		{name: "list status", method: http.MethodGet, path: base + "?status=LOCKED", okPath: base + "?status=CANCELLED", okStatus: 200},
		{name: "list periodFrom", method: http.MethodGet, path: base + "?periodFrom=2026-13", okPath: base + "?periodFrom=2100-12", okStatus: 200},
		{name: "list limit", method: http.MethodGet, path: base + "?limit=101", okPath: base + "?limit=100", okStatus: 200},
		{name: "entries status", method: http.MethodGet, path: base + "/" + run.ID + "/entries?status=DONE",
			okPath: base + "/" + run.ID + "/entries?status=FAILED", okStatus: 200},
		{name: "entries limit", method: http.MethodGet, path: base + "/" + run.ID + "/entries?limit=0",
			okPath: base + "/" + run.ID + "/entries?limit=1", okStatus: 200},
		{name: "cancel reason 500", method: http.MethodPost, path: base + "/" + run.ID + "/cancel", body: map[string]any{"reason": strings.Repeat("r", 501)},
			okBody: map[string]any{"reason": strings.Repeat("r", 500)}, okStatus: 200},
	}
	for _, tc := range cases {
		if tc.status == 0 {
			tc.status, tc.code = http.StatusBadRequest, "INVALID_REQUEST"
		}
		t.Run(tc.name, func(t *testing.T) {
			a := k.owner.clone()
			a.t = t
			require.Error(t, a.documentVerdict(tc.method, tc.path, tc.body), "the document must refuse what the server refuses")
			rec := a.hostile(tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, tc.code, errCode(rec), rec.Body.String())
			if tc.okStatus == 0 {
				return
			}
			path := tc.path
			if tc.okPath != "" {
				path = tc.okPath
			}
			rec = a.call(tc.method, path, tc.okBody)
			require.Equal(t, tc.okStatus, rec.Code, "the allowed boundary: %s", rec.Body.String())
			require.Equal(t, tc.okCode, errCode(rec), rec.Body.String())
		})
	}
	// A rule no schema states, named in the document: periodTo before periodFrom.
	catalogStatus(t, k.owner.call(http.MethodGet, base+"?periodFrom=2026-11&periodTo=2026-10", nil), http.StatusBadRequest, "INVALID_REQUEST")
}

// FuzzPayrollRunRoutes: whatever reaches a run route (any id, query and body, from the owner, a
// clerk without approve or nobody) answers 4xx or success, never 5xx.
func FuzzPayrollRunRoutes(f *testing.F) {
	k := newPayrollKit(f, "pay-run-fuzz")
	routes := k.f.srv.payrollRunRoutes()
	rec := k.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	seed := decode[payrollRunOut](f, rec).ID
	for i, s := range []struct{ id, query, body string }{
		{"", "", `{"period":"2026-11"}`},
		{"", "", `{"period":"2026-10"}`},
		{"", "", `{"period":"2100-12"}`},
		{"", "", `{"period":"9999-99"}`},
		{"", "", `{"period":1}`},
		{seed, "", ``},
		{seed, "", `{"reason":"\u0000"}`},
		{seed, "", `{"reason":"` + strings.Repeat("é", 300) + `"}`},
		{seed, "status=APPROVED&periodFrom=2026-01&periodTo=2026-12&limit=1&cursor=prun_", ""},
		{seed, "status=FAILED&employeeId=emp_x&limit=100&cursor=pent_", ""},
		{"../../x", "periodFrom=%00&limit=0&limit=2", `[]`},
		{strings.Repeat("i", 200), "cursor=" + strings.Repeat("c", 200), `{"reason":1}`},
	} {
		f.Add(uint8(i), uint8(i%3), s.id, s.query, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, route, who uint8, id, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(r.Path, ":id", id, 1)
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.83:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
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
