package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employeetransfer"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const transferPath = "/api/employees/%s/transfer"

type transferErrJSON struct {
	Error struct {
		Code    string `json:"code"`
		Details struct {
			Obligations []employeetransfer.Obligation `json:"obligations"`
		} `json:"details"`
	} `json:"error"`
}

// joinAsAdmin makes the user behind client a an active admin of tenant (a user of the test's
// database), so they can consent for it as a transfer's target.
func joinAsAdmin(t testing.TB, d *testkit.DB, a *apiClient, tenant string) {
	t.Helper()
	rec := a.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	user := decode[sessionResult](t, rec).User.ID
	ctx := context.Background()
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, tenant), d.App, func(tx pgx.Tx) error {
		_, err := orgs.AddMember(ctx, tx, tenant, orgs.NewMember{UserID: user, Role: orgs.Admin, Status: orgs.Active})
		return err
	}))
}

// countIn counts rows of query in tenant's scope.
func countIn(t testing.TB, d *testkit.DB, tenant, query string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, query, args...).Scan(&n)
	}))
	return n
}

// transferTrail is what a transfer leaves in one business: transfer rows, audit rows of both
// sides' actions, employee.transferred.v1 events.
func transferTrail(t testing.TB, d *testkit.DB, tenant string) [3]int {
	return [3]int{
		countIn(t, d, tenant, `SELECT count(*) FROM app.employee_transfers WHERE tenant_id = $1`, tenant),
		countIn(t, d, tenant, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action IN ('TransferEmployeeOut', 'TransferEmployeeIn')`, tenant),
		countIn(t, d, tenant, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'employee.transferred.v1'`, tenant),
	}
}

func blockedBy(t *testing.T, rec *httptest.ResponseRecorder) []employeetransfer.Obligation {
	t.Helper()
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	e := decode[transferErrJSON](t, rec)
	require.Equal(t, "EMPLOYEE_TRANSFER_BLOCKED", e.Error.Code)
	return e.Error.Details.Obligations
}

// TestEmployeeTransferEndToEnd: business A's employee moves to business B, over HTTP on a real
// database: without obligations; with deduction mandates (refused unhandled, a court order never
// cancelled, carried over); an idempotent retry; racing requests; who may call; bad input.
func TestEmployeeTransferEndToEnd(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	hr := w.admin // an admin of A, made an admin of B: the target's consent
	joinAsAdmin(t, w.f.d, hr, w.b)

	// No obligations.
	emp := w.create(w.owner, w.body("ET11110001"))
	body := map[string]any{"targetBusinessId": w.b, "effectiveDate": "2026-11-30", "grossMonthlySalarySantim": 2600000,
		"reason": "group restructuring"}
	key := testkit.Unique("transfer")
	rec := w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp.ID), body, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	first := rec.Body.String()
	tr := decode[employeeTransferJSON](t, rec)
	require.Equal(t, "2026-11-30", tr.EffectiveDate)
	require.Empty(t, tr.Obligations)
	require.Equal(t, w.a, tr.Source.BusinessID)
	require.Equal(t, "TERMINATED", string(tr.Source.Employee.Status))
	require.Equal(t, "2026-11-30", *tr.Source.Employee.TerminationDate)
	require.Equal(t, w.b, tr.Target.Employee.BusinessID)
	require.Equal(t, "ACTIVE", string(tr.Target.Employee.Status))
	require.Equal(t, "2026-12-01", tr.Target.Employee.HireDate, "the day after the last day with the source")
	require.Equal(t, int64(2600000), tr.Target.Employee.GrossMonthlySalarySantim)
	require.Equal(t, emp.NationalID, tr.Target.Employee.NationalID) // masked alike: the same person
	require.Nil(t, tr.Target.Employee.Department)

	rec = w.call(w.otherOwn, http.MethodGet, "/api/employees/"+tr.Target.Employee.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+emp.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "TERMINATED", string(decode[employeeJSON](t, rec).Status))
	rec = w.call(w.otherOwn, http.MethodGet, "/api/employees/"+emp.ID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "B does not see A's record")
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.a))
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.b))
	require.Equal(t, 1, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.employee_transfers WHERE side = 'OUT' AND employee_id = $1
		AND counterpart_tenant_id = $2 AND counterpart_employee_id = $3`, emp.ID, w.b, tr.Target.Employee.ID))

	// The retry answers the stored response and does nothing again; the key on another body is
	// refused; a new key finds the employment ended.
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp.ID), body, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	require.JSONEq(t, first, rec.Body.String())
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp.ID), map[string]any{"targetBusinessId": w.b}, "Idempotency-Key", key)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "IDEMPOTENCY_KEY_REUSED", errCode(rec))
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp.ID), body, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "EMPLOYEE_NOT_TRANSFERABLE", errCode(rec))
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.a))
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.b))

	// Deduction mandates: a court order and union dues.
	const md = "/api/payroll/deduction-mandates"
	emp2 := w.create(w.owner, w.body("ET11110002"))
	rec = w.call(w.owner, http.MethodPost, md, map[string]any{"employeeId": emp2.ID, "kind": "COURT_ORDER", "amountSantim": 50000,
		"totalSantim": 600000, "startPeriod": "2026-10", "priority": 1, "reference": "Federal First Instance Court file 77/2026",
		"payee": map[string]any{"partner": "cbe", "accountNumber": "1000555", "holderName": "Almaz Tesfaye"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	court := decode[mandatesOut](t, rec).ID
	rec = w.call(w.owner, http.MethodPost, md, map[string]any{"employeeId": emp2.ID, "kind": "UNION_DUES", "basisPoints": 100, "startPeriod": "2026-01"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	dues := decode[mandatesOut](t, rec).ID
	employeesOfB := countIn(t, w.f.d, w.b, `SELECT count(*) FROM app.employees WHERE tenant_id = $1`, w.b)
	eventsOfB := countIn(t, w.f.d, w.b, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1`, w.b)

	to := map[string]any{"targetBusinessId": w.b}
	blocking := blockedBy(t, w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp2.ID), to, "Idempotency-Key", testkit.Unique("transfer")))
	require.Len(t, blocking, 2)
	for _, o := range blocking {
		require.Equal(t, employeetransfer.DeductionMandate, o.Kind)
		require.Equal(t, employeetransfer.ProblemUnhandled, o.Problem)
	}
	cancel := map[string]any{"targetBusinessId": w.b, "obligations": map[string]any{"deductionMandates": "CANCEL"}}
	blocking = blockedBy(t, w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp2.ID), cancel, "Idempotency-Key", testkit.Unique("transfer")))
	require.Len(t, blocking, 1)
	require.Equal(t, court, blocking[0].ID)
	require.Equal(t, "COURT_ORDER", blocking[0].MandateKind)
	require.Equal(t, employeetransfer.ProblemNotAllowed, blocking[0].Problem)
	// Refused: nothing written on either side, the refusals audited.
	require.Equal(t, employeesOfB, countIn(t, w.f.d, w.b, `SELECT count(*) FROM app.employees WHERE tenant_id = $1`, w.b))
	require.Equal(t, eventsOfB, countIn(t, w.f.d, w.b, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1`, w.b))
	require.Equal(t, 2, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.audit_log WHERE action = 'TransferEmployee' AND outcome = 'DENIED'
		AND details->>'code' = 'EMPLOYEE_TRANSFER_BLOCKED'`))
	require.Equal(t, 2, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.payroll_deduction_mandates WHERE employee_id = $1 AND status = 'PENDING'`, emp2.ID))

	carry := map[string]any{"targetBusinessId": w.b, "obligations": map[string]any{"deductionMandates": "CARRY_OVER"}}
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp2.ID), carry, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	tr2 := decode[employeeTransferJSON](t, rec)
	require.Equal(t, "2026-11-23", tr2.EffectiveDate, "today by default")
	require.Len(t, tr2.Obligations, 2)
	carried := map[string]string{}
	for _, o := range tr2.Obligations {
		require.Equal(t, employeetransfer.CarryOver, o.Handling)
		require.NotEmpty(t, o.CarriedOverTo)
		carried[o.ID] = o.CarriedOverTo
	}
	for _, id := range []string{court, dues} {
		rec = w.call(w.owner, http.MethodGet, md+"/"+id, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, "CANCELLED", decode[mandatesOut](t, rec).Status)
		rec = w.call(w.otherOwn, http.MethodGet, md+"/"+carried[id], nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		m := decode[struct {
			Status     string `json:"status"`
			EmployeeID string `json:"employeeId"`
		}](t, rec)
		require.Equal(t, "PENDING", m.Status)
		require.Equal(t, tr2.Target.Employee.ID, m.EmployeeID)
	}
	rec = w.call(w.otherOwn, http.MethodGet, md+"/"+carried[court], nil)
	require.Equal(t, int64(600000), *decode[mandatesOut](t, rec).RemainingSantim)

	// Racing requests with different keys, and with one key: one transfer each.
	for _, sameKey := range []bool{false, true} {
		e := w.create(w.owner, w.body(fmt.Sprintf("ET1111100%d", map[bool]int{false: 3, true: 4}[sameKey])))
		shared := testkit.Unique("race")
		const n = 8
		codes, errs := make([]int, n), make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				k := shared
				if !sameKey {
					k = testkit.Unique("race")
				}
				r := hr.call(http.MethodPost, fmt.Sprintf(transferPath, e.ID), to, "Idempotency-Key", k)
				codes[i], errs[i] = r.Code, errCode(r)
			})
		}
		wg.Wait()
		created := 0
		for i := range n {
			switch {
			case codes[i] == http.StatusCreated:
				created++
			case sameKey:
				require.Equal(t, "IDEMPOTENCY_KEY_IN_USE", errs[i])
			default:
				require.Equal(t, http.StatusConflict, codes[i])
				require.Equal(t, "EMPLOYEE_NOT_TRANSFERABLE", errs[i])
			}
		}
		if !sameKey {
			require.Equal(t, 1, created)
		} else {
			require.GreaterOrEqual(t, created, 1) // the winner and any replays of it
		}
		require.Equal(t, 1, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.employee_transfers WHERE employee_id = $1`, e.ID))
	}

	// Who may call.
	emp5 := w.create(w.owner, w.body("ET11110005"))
	rec = w.call(w.owner, http.MethodPost, fmt.Sprintf(transferPath, emp5.ID), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "TARGET_ADMIN_REQUIRED", errCode(rec), "A's owner is no admin of B")
	rec = w.call(w.member, http.MethodPost, fmt.Sprintf(transferPath, emp5.ID), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": "org_nowhere"},
		"Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "TARGET_ADMIN_REQUIRED", errCode(rec), "an unknown business looks like one the caller is no admin of")
	// Another tenant's employee is 404, even for a caller who is an admin there too.
	theirs := w.create(w.otherOwn, w.body("ET11110006"))
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, theirs.ID), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "NOT_FOUND", errCode(rec))
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, "emp_00000000-0000-0000-0000-000000000000"), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())

	// Bad input: 400, nothing written.
	before := [2][3]int{transferTrail(t, w.f.d, w.a), transferTrail(t, w.f.d, w.b)}
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.a}, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Equal(t, "INVALID_REQUEST", errCode(rec), "the employee's own business")
	for _, bad := range []struct {
		path string
		body any
		hdr  []string
	}{
		{fmt.Sprintf(transferPath, "x%20y"), to, nil},
		{fmt.Sprintf(transferPath, "emp%00x"), to, nil},
		{fmt.Sprintf(transferPath, strings.Repeat("e", 129)), to, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": "bad id"}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": ""}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "effectiveDate": "2026-02-30"}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "effectiveDate": "30/11/2026"}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "grossMonthlySalarySantim": -1}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "reason": strings.Repeat("r", 501)}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "obligations": map[string]any{"loans": "CANCEL"}}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "obligations": map[string]any{"savings": "CARRY_OVER"}}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "tenantId": w.b}, nil},
		{fmt.Sprintf(transferPath, emp5.ID), to, []string{"Idempotency-Key", ""}},
	} {
		hdr := bad.hdr
		if hdr == nil {
			hdr = []string{"Idempotency-Key", testkit.Unique("transfer")}
		}
		rec = w.hostile(hr, http.MethodPost, bad.path, bad.body, hdr...)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, rec.Code, "%s %v: %s", bad.path, bad.body, rec.Body.String())
		if !strings.Contains(bad.path, "%00") {
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s %v: %s", bad.path, bad.body, rec.Body.String())
		}
	}
	rec = w.call(hr, http.MethodPost, fmt.Sprintf(transferPath, emp5.ID), map[string]any{"targetBusinessId": w.b, "effectiveDate": "2024-02-29"},
		"Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "TRANSFER_DATE_BEFORE_HIRE", errCode(rec))
	require.Equal(t, before, [2][3]int{transferTrail(t, w.f.d, w.a), transferTrail(t, w.f.d, w.b)})
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+emp5.ID, nil)
	require.Equal(t, "ACTIVE", string(decode[employeeJSON](t, rec).Status))
}

// FuzzEmployeeTransfer: whatever the id, the Idempotency-Key and the body, the transfer routes
// (the organization's, as its owner, and the platform admin's) answer 4xx or success, never 5xx.
// The seeds include a real employee and a real target (a transfer may succeed once; later ones
// find the employment ended).
func FuzzEmployeeTransfer(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("owner@transfer-fuzz-a.example", "BUSINESS")
	a := res.Organization.ID
	_, res = fx.signUp("owner@transfer-fuzz-b.example", "BUSINESS")
	b := res.Organization.ID
	joinAsAdmin(f, fx.d, owner, b)
	root := fx.platformAdmin("root@transfer-fuzz.example")
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Abebe", "lastName": "Kebede", "nationalId": "ET55550001", "hireDate": "2024-03-01",
		"grossMonthlySalarySantim": 2500000,
		"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Abebe Kebede"}})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	emp := decode[employeeJSON](f, rec).ID
	ok := fmt.Sprintf(`{"targetBusinessId":%q}`, b)
	f.Add(false, emp, "k-1", ok)
	f.Add(false, emp, "k-2", fmt.Sprintf(`{"targetBusinessId":%q,"obligations":{"deductionMandates":"CARRY_OVER","loans":"RETAIN_WITH_SOURCE"},"effectiveDate":"2026-12-01"}`, b))
	f.Add(false, emp, "k-3", fmt.Sprintf(`{"targetBusinessId":%q}`, a))
	f.Add(false, emp, "", ok)
	f.Add(false, emp, "k-4", `{"targetBusinessId":"x","effectiveDate":"9999-99-99","grossMonthlySalarySantim":1e30}`)
	f.Add(false, emp, "k-5", `{"targetBusinessId":null,"obligations":[]}`)
	f.Add(false, emp, "k-6", fmt.Sprintf(`{"targetBusinessId":%q,"obligations":{"ewaAdvances":"CANCEL"}}`, b))
	f.Add(false, emp, "k-7", fmt.Sprintf(`{"targetBusinessId":%q,"reason":"\u0000"}`, b))
	f.Add(false, emp+"x", "k-8", ok)
	f.Add(false, "emp_00000000-0000-0000-0000-000000000000", "k-9", ok)
	f.Add(false, "x y", "\x00", "\xff")
	f.Add(false, "..", strings.Repeat("k", 300), "[]")
	f.Add(false, emp, "k-10", "null")
	f.Add(false, emp, "k-11", ok+ok)
	// The platform admin's route: the business found from the employee.
	f.Add(true, emp, "k-12", ok)
	f.Add(true, emp, "k-13", fmt.Sprintf(`{"targetBusinessId":%q,"obligations":{"equbMemberships":"RETAIN_WITH_SOURCE"}}`, a))
	f.Add(true, "emp_00000000-0000-0000-0000-000000000000", "k-14", ok)
	f.Add(true, "x%00", "k-15", ok)
	f.Add(true, emp, "k-16", `{"targetBusinessId":"org_nowhere"}`)
	f.Fuzz(func(t *testing.T, admin bool, id, key, body string) {
		route, who := "/api/employees/:id/transfer", owner
		if admin {
			route, who = "/api/admin/employees/:id/transfer", root
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = pathOf(route, map[string]string{"id": id}), ""
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		req.AddCookie(who.cookie)
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("transfer %q key %q body %q", id, key, body))
	})
}

// TestEmployeeTransferWithAdvanceAndLoan: on the real stack (embedded Temporal, ledger and
// gateway over gRPC, the bank sandbox), an employee with a disbursed advance, an active loan and
// an advance still REQUESTED: the transfer is refused until nothing is in flight and each kind is
// handled; then the advance and the loan stay with the old employer, where the advance is still
// collected.
func TestEmployeeTransferWithAdvanceAndLoan(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	_, res := s.signUp("owner@transfer-target.test", "BUSINESS")
	target := res.Organization.ID
	joinAsAdmin(t, s.d, s.owner, target)

	adv := s.request(t, 10_000)
	rec := s.disburse(adv.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	adv = s.waitStatus(t, adv.ID, "DISBURSED")
	loan := s.activeLoan(t, s.fi, s.product, 200_000, 3)
	pending := s.request(t, 5_000)

	path := fmt.Sprintf(transferPath, s.employee)
	to := map[string]any{"targetBusinessId": target}
	blocking := blockedBy(t, s.owner.call(http.MethodPost, path, to, "Idempotency-Key", testkit.Unique("transfer")))
	problems := map[string]string{}
	for _, o := range blocking {
		problems[string(o.Kind)+" "+o.ID] = o.Problem
	}
	require.Equal(t, employeetransfer.ProblemUnhandled, problems["EWA_ADVANCE "+adv.ID])
	require.Equal(t, employeetransfer.ProblemUnhandled, problems["LOAN "+loan.ID])
	require.Equal(t, employeetransfer.ProblemInFlight, problems["EWA_ADVANCE "+pending.ID])

	handled := map[string]any{"targetBusinessId": target, "obligations": map[string]any{
		"ewaAdvances": "RETAIN_WITH_SOURCE", "loans": "RETAIN_WITH_SOURCE", "deductionMandates": "CARRY_OVER"}}
	blocking = blockedBy(t, s.owner.call(http.MethodPost, path, handled, "Idempotency-Key", testkit.Unique("transfer")))
	require.Len(t, blocking, 1, "only the request in flight still blocks")
	require.Equal(t, pending.ID, blocking[0].ID)
	require.Equal(t, employeetransfer.ProblemInFlight, blocking[0].Problem)
	require.Equal(t, [3]int{0, 0, 0}, transferTrail(t, s.d, s.tenant))
	require.Equal(t, [3]int{0, 0, 0}, transferTrail(t, s.d, target))

	rec = s.owner.call(http.MethodPost, "/api/ewa/requests/"+pending.ID+"/cancel", nil, "Idempotency-Key", testkit.Unique("cancel"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	ledgerBefore := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	transfersBefore := s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant)

	key := testkit.Unique("transfer")
	rec = s.owner.call(http.MethodPost, path, handled, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	tr := decode[employeeTransferJSON](t, rec)
	handling := map[string]employeetransfer.Handling{}
	for _, o := range tr.Obligations {
		handling[string(o.Kind)+" "+o.ID] = o.Handling
	}
	require.Equal(t, employeetransfer.RetainWithSource, handling["EWA_ADVANCE "+adv.ID])
	require.Equal(t, employeetransfer.RetainWithSource, handling["LOAN "+loan.ID])
	require.NotContains(t, handling, "EWA_ADVANCE "+pending.ID, "a cancelled request owes nothing")
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, s.d, s.tenant))
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, s.d, target))
	// No money moved.
	require.Equal(t, ledgerBefore, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, transfersBefore, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant))

	// The retry answers the stored transfer.
	rec = s.owner.call(http.MethodPost, path, handled, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, tr.ID, decode[employeeTransferJSON](t, rec).ID)
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, s.d, target))

	// Kept by the old employer, not dropped: the loan is still ACTIVE and the advance is still
	// collected there.
	require.Equal(t, "ACTIVE", s.loan(t, loan.ID).Status)
	rec = s.owner.call(http.MethodPost, "/api/ewa/requests/"+adv.ID+"/record-repayment", map[string]any{
		"ewaRequestId": adv.ID, "repaidAmountSantim": adv.TotalSantim, "source": "EMPLOYER"}, "Idempotency-Key", testkit.Unique("repay"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	s.waitStatus(t, adv.ID, "REPAID")
}

// TestEmployeeTransferByPlatformAdmin: a platform admin, a member of no organization, has no
// active organization for the organization route (403 TENANT_CONTEXT_MISSING); on the platform
// route the employee's business is found from the employee and the transfer runs there, audited
// with the platform admin as actor on both sides and on the cross-tenant path; a retry answers
// the stored response; a second transfer finds the employment ended; unknown employees and
// targets are 404; nobody else may call it.
func TestEmployeeTransferByPlatformAdmin(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	const adminPath = "/api/admin/employees/%s/transfer"
	emp := w.create(w.owner, w.body("ET22220001"))
	rec := w.call(w.owner, http.MethodPost, "/api/payroll/deduction-mandates", map[string]any{"employeeId": emp.ID,
		"kind": "UNION_DUES", "basisPoints": 100, "startPeriod": "2026-01"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	dues := decode[mandatesOut](t, rec).ID
	to := map[string]any{"targetBusinessId": w.b, "effectiveDate": "2026-11-30", "reason": "platform support ticket 42",
		"obligations": map[string]any{"deductionMandates": "CARRY_OVER"}}

	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(transferPath, emp.ID), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "TENANT_CONTEXT_MISSING", errCode(rec), "the organization route needs an active organization")
	for _, c := range []*apiClient{w.owner, w.admin, w.otherOwn} {
		rec = w.call(c, http.MethodPost, fmt.Sprintf(adminPath, emp.ID), to, "Idempotency-Key", testkit.Unique("transfer"))
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	}
	require.Equal(t, [3]int{0, 0, 0}, transferTrail(t, w.f.d, w.a))

	rec = w.call(w.platform, http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	root := decode[sessionResult](t, rec).User.ID
	crossBefore := countIn(t, w.f.d, "*", `SELECT count(*) FROM app.audit_log WHERE action = 'CrossTenantAccess' AND actor = $1`, root)

	key := testkit.Unique("transfer")
	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(adminPath, emp.ID), to, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	first := rec.Body.String()
	tr := decode[employeeTransferJSON](t, rec)
	require.Equal(t, w.a, tr.Source.BusinessID, "the source is the employee's business")
	require.Equal(t, "TERMINATED", string(tr.Source.Employee.Status))
	require.Equal(t, w.b, tr.Target.BusinessID)
	require.Equal(t, w.b, tr.Target.Employee.BusinessID)
	require.Equal(t, "ACTIVE", string(tr.Target.Employee.Status))
	require.Len(t, tr.Obligations, 1)
	require.Equal(t, dues, tr.Obligations[0].ID)
	require.Equal(t, employeetransfer.CarryOver, tr.Obligations[0].Handling)
	require.NotEmpty(t, tr.Obligations[0].CarriedOverTo)
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.a))
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.b))
	// Audited: each side's row names the platform admin; the employee's business was found, and
	// the transfer ran, on the audited cross-tenant path.
	require.Equal(t, 1, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.audit_log WHERE action = 'TransferEmployeeOut'
		AND outcome = 'SUCCESS' AND actor = $1 AND target_id = $2`, root, tr.ID))
	require.Equal(t, 1, countIn(t, w.f.d, w.b, `SELECT count(*) FROM app.audit_log WHERE action = 'TransferEmployeeIn'
		AND outcome = 'SUCCESS' AND actor = $1 AND target_id = $2`, root, tr.ID))
	require.Equal(t, 1, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.employee_transfers WHERE id = $1 AND side = 'OUT'
		AND created_by = $2 AND reason = 'platform support ticket 42'`, tr.ID, root))
	require.Equal(t, crossBefore+2, countIn(t, w.f.d, "*", `SELECT count(*) FROM app.audit_log WHERE action = 'CrossTenantAccess'
		AND actor = $1`, root), "one row for finding the business, one for the transfer")
	rec = w.call(w.otherOwn, http.MethodGet, "/api/payroll/deduction-mandates/"+tr.Obligations[0].CarriedOverTo, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "PENDING", decode[mandatesOut](t, rec).Status)

	// The retry answers the stored response; a new key finds the employment ended (audited DENIED
	// in the employee's business).
	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(adminPath, emp.ID), to, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	require.JSONEq(t, first, rec.Body.String())
	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(adminPath, emp.ID), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "EMPLOYEE_NOT_TRANSFERABLE", errCode(rec))
	require.Equal(t, 1, countIn(t, w.f.d, w.a, `SELECT count(*) FROM app.audit_log WHERE action = 'TransferEmployee'
		AND outcome = 'DENIED' AND actor = $1 AND details->>'code' = 'EMPLOYEE_NOT_TRANSFERABLE'`, root))
	require.Equal(t, [3]int{1, 1, 1}, transferTrail(t, w.f.d, w.a))

	// Unknown employees and targets; the employee's own business as the target.
	emp2 := w.create(w.owner, w.body("ET22220002"))
	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(adminPath, "emp_00000000-0000-0000-0000-000000000000"), to,
		"Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "NOT_FOUND", errCode(rec))
	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(adminPath, emp2.ID), map[string]any{"targetBusinessId": "org_nowhere"},
		"Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "TARGET_BUSINESS_NOT_FOUND", errCode(rec))
	rec = w.call(w.platform, http.MethodPost, fmt.Sprintf(adminPath, emp2.ID), map[string]any{"targetBusinessId": w.a},
		"Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	rec = w.hostile(w.platform, http.MethodPost, fmt.Sprintf(adminPath, "x%20y"), to, "Idempotency-Key", testkit.Unique("transfer"))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+emp2.ID, nil)
	require.Equal(t, "ACTIVE", string(decode[employeeJSON](t, rec).Status))
}
