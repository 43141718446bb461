package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// payrollMandatesFixture is an organization with an owner (every permission), an approver (another
// organization_admin), a viewer (payroll.view), an editor (payroll.view + edit), an employee, and
// another organization with its owner and employee.
type payrollMandatesFixture struct {
	f                               *authFixture
	tenant                          string
	owner, approver, viewer, editor *apiClient
	other                           *apiClient
	emp, otherEmp                   string
}

func newPayrollMandatesFixture(t *testing.T) *payrollMandatesFixture {
	f := newAuthFixture(t)
	owner, res := f.signUp("owner@mandates.test", "BUSINESS")
	other, resB := f.signUp("owner@mandates-b.test", "BUSINESS")
	tenant := res.Organization.ID
	f.catalogAppRole(tenant, "payroll_viewer", `{"payroll":["view"]}`)
	f.catalogAppRole(tenant, "payroll_editor", `{"payroll":["view","edit"]}`)
	f.addMember(tenant, "approver@mandates.test", orgs.Admin, orgs.AdminRole)
	f.addMember(tenant, "viewer@mandates.test", orgs.Admin, "payroll_viewer")
	f.addMember(tenant, "editor@mandates.test", orgs.Admin, "payroll_editor")
	return &payrollMandatesFixture{f: f, tenant: tenant, owner: owner, other: other,
		approver: f.signIn("approver@mandates.test"), viewer: f.signIn("viewer@mandates.test"), editor: f.signIn("editor@mandates.test"),
		emp: f.catalogEmployee(tenant), otherEmp: f.catalogEmployee(resB.Organization.ID)}
}

// audits counts the tenant's audit rows of action with outcome.
func (x *payrollMandatesFixture) audits(action, outcome string) int {
	x.f.t.Helper()
	var n int
	ctx := tenancy.WithTenant(context.Background(), x.tenant)
	require.NoError(x.f.t, tenancy.InTx(ctx, x.f.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = $2`, action, outcome).Scan(&n)
	}))
	return n
}

type mandatesOut struct {
	ID              string  `json:"id"`
	Status          string  `json:"status"`
	RemainingSantim *int64  `json:"remainingSantim"`
	ReversalPeriod  *string `json:"reversalPeriod"`
	StatusReason    *string `json:"statusReason"`
}

type mandatesPage struct {
	Items      []mandatesOut `json:"items"`
	NextCursor *string       `json:"nextCursor"`
}

func mandatesStatus(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	if code != "" {
		require.Equal(t, code, errCode(rec), rec.Body.String())
	}
}

func TestPayrollProtectionPolicyRoutes(t *testing.T) {
	t.Parallel()
	x := newPayrollMandatesFixture(t)
	const base = "/api/payroll/protection-policies"
	body := map[string]any{"voluntaryShareNumerator": 1, "voluntaryShareDenominator": 3, "minimumNetSantim": 150000, "effectiveFrom": "2026-12"}

	mandatesStatus(t, x.viewer.call(http.MethodPost, base, body), http.StatusForbidden, "PERMISSION_DENIED")
	rec := x.editor.call(http.MethodPost, base, body)
	mandatesStatus(t, rec, http.StatusCreated, "")
	a := decode[mandatesOut](t, rec)
	require.Equal(t, "DRAFT", a.Status)

	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+a.ID+"/activate", nil), http.StatusForbidden, "PERMISSION_DENIED")
	rec = x.owner.call(http.MethodPost, base, body)
	mandatesStatus(t, rec, http.StatusCreated, "")
	own := decode[mandatesOut](t, rec).ID
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+own+"/activate", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	require.Equal(t, 1, x.audits("ActivateProtectionPolicy", "DENIED"))

	rec = x.owner.call(http.MethodPost, base+"/"+a.ID+"/activate", nil)
	mandatesStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "ACTIVE", decode[mandatesOut](t, rec).Status)
	mandatesStatus(t, x.approver.call(http.MethodPost, base+"/"+a.ID+"/activate", nil), http.StatusConflict, "PAYROLL_PROTECTION_POLICY_INVALID_STATE")
	rec = x.approver.call(http.MethodPost, base+"/"+own+"/activate", nil)
	mandatesStatus(t, rec, http.StatusOK, "")

	rec = x.viewer.call(http.MethodGet, base+"/"+a.ID, nil)
	mandatesStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "SUPERSEDED", decode[mandatesOut](t, rec).Status)
	rec = x.viewer.call(http.MethodGet, base+"?status=ACTIVE", nil)
	mandatesStatus(t, rec, http.StatusOK, "")
	page := decode[mandatesPage](t, rec)
	require.Len(t, page.Items, 1)
	require.Equal(t, own, page.Items[0].ID)
	rec = x.viewer.call(http.MethodGet, base+"?limit=1", nil)
	page = decode[mandatesPage](t, rec)
	require.Len(t, page.Items, 1)
	require.NotNil(t, page.NextCursor)
	rec = x.viewer.call(http.MethodGet, base+"?limit=1&cursor="+*page.NextCursor, nil)
	page2 := decode[mandatesPage](t, rec)
	require.Len(t, page2.Items, 1)
	require.NotEqual(t, page.Items[0].ID, page2.Items[0].ID)
	require.Nil(t, page2.NextCursor)

	// Another organization's policy is not found, whatever the route.
	mandatesStatus(t, x.other.call(http.MethodGet, base+"/"+a.ID, nil), http.StatusNotFound, "PAYROLL_PROTECTION_POLICY_NOT_FOUND")
	mandatesStatus(t, x.other.call(http.MethodPost, base+"/"+own+"/activate", nil), http.StatusNotFound, "PAYROLL_PROTECTION_POLICY_NOT_FOUND")
	rec = x.other.call(http.MethodGet, base, nil)
	require.Empty(t, decode[mandatesPage](t, rec).Items)
}

func TestPayrollAdjustmentRoutes(t *testing.T) {
	t.Parallel()
	x := newPayrollMandatesFixture(t)
	const base = "/api/payroll/adjustments"
	body := map[string]any{"employeeId": x.emp, "period": "2026-11", "direction": "DEDUCTION", "amountSantim": 25000,
		"reason": "overpaid transport allowance", "reference": "ticket 42"}
	create := func(a *apiClient) string {
		t.Helper()
		rec := a.call(http.MethodPost, base, body)
		mandatesStatus(t, rec, http.StatusCreated, "")
		return decode[mandatesOut](t, rec).ID
	}

	mandatesStatus(t, x.viewer.call(http.MethodPost, base, body), http.StatusForbidden, "PERMISSION_DENIED")
	id := create(x.editor)
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+id+"/approve", nil), http.StatusForbidden, "PERMISSION_DENIED")
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+id+"/post", nil), http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")
	require.Equal(t, 1, x.audits("PostPayrollAdjustment", "DENIED"))
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+id+"/approve", nil), http.StatusOK, "")
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+id+"/post", nil), http.StatusOK, "")
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+id+"/void", nil), http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+id+"/reverse", map[string]any{"reason": "r", "effectivePeriod": "2026-12"}),
		http.StatusForbidden, "PERMISSION_DENIED")
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+id+"/reverse", map[string]any{"reason": "r", "effectivePeriod": "2026-10"}),
		http.StatusBadRequest, "INVALID_REQUEST")
	rec := x.owner.call(http.MethodPost, base+"/"+id+"/reverse", map[string]any{"reason": "deducted twice", "effectivePeriod": "2026-12"})
	mandatesStatus(t, rec, http.StatusOK, "")
	got := decode[mandatesOut](t, rec)
	require.Equal(t, "REVERSED", got.Status)
	require.Equal(t, "2026-12", *got.ReversalPeriod)
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+id+"/reverse", map[string]any{"reason": "again", "effectivePeriod": "2026-12"}),
		http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")

	// The creator cannot approve their own; a void needs payroll.edit and takes an optional reason.
	own := create(x.owner)
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+own+"/approve", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	mandatesStatus(t, x.viewer.call(http.MethodPost, base+"/"+own+"/void", nil), http.StatusForbidden, "PERMISSION_DENIED")
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+own+"/void", map[string]any{"reason": "duplicate"}), http.StatusOK, "")
	mandatesStatus(t, x.approver.call(http.MethodPost, base+"/"+own+"/approve", nil), http.StatusConflict, "PAYROLL_ADJUSTMENT_INVALID_STATE")

	rec = x.viewer.call(http.MethodGet, base+"?status=REVERSED&employeeId="+x.emp+"&period=2026-11&direction=DEDUCTION", nil)
	mandatesStatus(t, rec, http.StatusOK, "")
	require.Len(t, decode[mandatesPage](t, rec).Items, 1)
	mandatesStatus(t, x.viewer.hostile(http.MethodGet, base+"?period=2026-13", nil), http.StatusBadRequest, "INVALID_REQUEST")
	mandatesStatus(t, x.viewer.hostile(http.MethodGet, base+"?status=DONE", nil), http.StatusBadRequest, "INVALID_REQUEST")

	// Another organization: its employee is not found here, our adjustment is not found there.
	mandatesStatus(t, x.owner.call(http.MethodPost, base, merge(body, map[string]any{"employeeId": x.otherEmp})), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	mandatesStatus(t, x.other.call(http.MethodGet, base+"/"+id, nil), http.StatusNotFound, "PAYROLL_ADJUSTMENT_NOT_FOUND")
	mandatesStatus(t, x.other.call(http.MethodPost, base+"/"+own+"/void", nil), http.StatusNotFound, "PAYROLL_ADJUSTMENT_NOT_FOUND")

	// A TERMINATED employee takes no new adjustment.
	ctx := tenancy.WithTenant(context.Background(), x.tenant)
	require.NoError(t, tenancy.InTx(ctx, x.f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET status = 'TERMINATED' WHERE id = $1`, x.emp)
		return err
	}))
	mandatesStatus(t, x.owner.call(http.MethodPost, base, body), http.StatusUnprocessableEntity, "PAYROLL_EMPLOYEE_TERMINATED")
	require.Equal(t, 1, x.audits("CreatePayrollAdjustment", "DENIED"))
}

func TestPayrollDeductionMandateRoutes(t *testing.T) {
	t.Parallel()
	x := newPayrollMandatesFixture(t)
	const base = "/api/payroll/deduction-mandates"
	court := map[string]any{"employeeId": x.emp, "kind": "COURT_ORDER", "amountSantim": 50000, "totalSantim": 600000,
		"startPeriod": "2026-12", "endPeriod": "2027-11", "priority": 1, "reference": "Federal First Instance Court file 77/2026",
		"payee": map[string]any{"partner": "cbe", "accountNumber": "1000555", "holderName": "Almaz Tesfaye"}}

	mandatesStatus(t, x.viewer.call(http.MethodPost, base, court), http.StatusForbidden, "PERMISSION_DENIED")
	rec := x.editor.call(http.MethodPost, base, court)
	mandatesStatus(t, rec, http.StatusCreated, "")
	m := decode[mandatesOut](t, rec)
	require.Equal(t, "PENDING", m.Status)
	require.Equal(t, int64(600000), *m.RemainingSantim)

	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+m.ID+"/activate", nil), http.StatusForbidden, "PERMISSION_DENIED")
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+m.ID+"/resume", nil), http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+m.ID+"/activate", nil), http.StatusOK, "")
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+m.ID+"/activate", nil), http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	rec = x.editor.call(http.MethodPost, base+"/"+m.ID+"/suspend", map[string]any{"reason": "employee on unpaid leave"})
	mandatesStatus(t, rec, http.StatusOK, "")
	got := decode[mandatesOut](t, rec)
	require.Equal(t, "SUSPENDED", got.Status)
	require.Equal(t, "employee on unpaid leave", *got.StatusReason)
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+m.ID+"/resume", nil), http.StatusOK, "")
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+m.ID+"/cancel", map[string]any{"reason": "order lifted"}), http.StatusOK, "")
	mandatesStatus(t, x.editor.call(http.MethodPost, base+"/"+m.ID+"/suspend", nil), http.StatusConflict, "PAYROLL_MANDATE_INVALID_STATE")
	require.Equal(t, 1, x.audits("SuspendDeductionMandate", "DENIED"))
	require.Equal(t, 1, x.audits("CancelDeductionMandate", "SUCCESS"))

	// Self-activation and another organization.
	rec = x.owner.call(http.MethodPost, base, map[string]any{"employeeId": x.emp, "kind": "UNION_DUES", "basisPoints": 100, "startPeriod": "2026-01"})
	mandatesStatus(t, rec, http.StatusCreated, "")
	own := decode[mandatesOut](t, rec).ID
	mandatesStatus(t, x.owner.call(http.MethodPost, base+"/"+own+"/activate", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	mandatesStatus(t, x.other.call(http.MethodGet, base+"/"+own, nil), http.StatusNotFound, "PAYROLL_MANDATE_NOT_FOUND")
	mandatesStatus(t, x.other.call(http.MethodPost, base+"/"+own+"/cancel", nil), http.StatusNotFound, "PAYROLL_MANDATE_NOT_FOUND")
	mandatesStatus(t, x.owner.call(http.MethodPost, base, merge(court, map[string]any{"employeeId": x.otherEmp})), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")

	rec = x.viewer.call(http.MethodGet, base+"?kind=UNION_DUES&status=PENDING&employeeId="+x.emp, nil)
	mandatesStatus(t, rec, http.StatusOK, "")
	list := decode[mandatesPage](t, rec).Items
	require.Len(t, list, 1)
	require.Equal(t, own, list[0].ID)
	require.Nil(t, list[0].RemainingSantim)
}

// TestPayrollMandatesDocumentStatesRules: each rule the handlers enforce, broken, is refused by the
// document and by the server (400); at its boundary, both accept it.
func TestPayrollMandatesDocumentStatesRules(t *testing.T) {
	t.Parallel()
	x := newPayrollMandatesFixture(t)
	const md, adj, pp = "/api/payroll/deduction-mandates", "/api/payroll/adjustments", "/api/payroll/protection-policies"
	payee := map[string]any{"partner": "cbe", "accountNumber": "1000555", "holderName": "Almaz Tesfaye"}
	mandate := map[string]any{"employeeId": x.emp, "kind": "OTHER", "amountSantim": 100, "startPeriod": "2026-12"}
	adjustment := map[string]any{"employeeId": x.emp, "period": "2026-11", "direction": "EARNING", "amountSantim": 1, "reason": "r"}
	policy := map[string]any{"voluntaryShareNumerator": 1, "voluntaryShareDenominator": 3, "effectiveFrom": "2026-12"}
	without := func(m map[string]any, k string) map[string]any {
		out := merge(m, nil)
		delete(out, k)
		return out
	}
	for _, c := range []struct {
		name     string
		path     string
		bad, ok  map[string]any
		okStatus int
	}{
		{"amount: both", md, merge(mandate, map[string]any{"basisPoints": 10}), mandate, http.StatusCreated},
		{"amount: neither", md, without(mandate, "amountSantim"), merge(without(mandate, "amountSantim"), map[string]any{"basisPoints": 10000}), http.StatusCreated},
		{"basis points bound", md, merge(without(mandate, "amountSantim"), map[string]any{"basisPoints": 10001}), merge(without(mandate, "amountSantim"), map[string]any{"basisPoints": 1}), http.StatusCreated},
		{"amount bound", md, merge(mandate, map[string]any{"amountSantim": 1000000000001}), merge(mandate, map[string]any{"amountSantim": 1000000000000}), http.StatusCreated},
		{"court order: payee", md, merge(mandate, map[string]any{"kind": "COURT_ORDER", "reference": "file 1"}), merge(mandate, map[string]any{"kind": "COURT_ORDER", "reference": "file 1", "payee": payee}), http.StatusCreated},
		{"court order: reference", md, merge(mandate, map[string]any{"kind": "COURT_ORDER", "payee": payee}), merge(mandate, map[string]any{"kind": "COURT_ORDER", "reference": "file 2", "payee": payee}), http.StatusCreated},
		{"loan: reference", md, merge(mandate, map[string]any{"kind": "LOAN_INSTALLMENT"}), merge(mandate, map[string]any{"kind": "LOAN_INSTALLMENT", "reference": "loan_1"}), http.StatusCreated},
		{"blank reference", md, merge(mandate, map[string]any{"reference": "  "}), merge(mandate, map[string]any{"reference": " x "}), http.StatusCreated},
		{"priority bound", md, merge(mandate, map[string]any{"priority": 10001}), merge(mandate, map[string]any{"priority": 10000}), http.StatusCreated},
		{"period bound", md, merge(mandate, map[string]any{"startPeriod": "1999-12"}), merge(mandate, map[string]any{"startPeriod": "2000-01"}), http.StatusCreated},
		{"period month", md, merge(mandate, map[string]any{"endPeriod": "2100-13"}), merge(mandate, map[string]any{"endPeriod": "2100-12"}), http.StatusCreated},
		{"unknown field", md, merge(mandate, map[string]any{"takenSantim": 5}), mandate, http.StatusCreated},
		{"adjustment amount", adj, merge(adjustment, map[string]any{"amountSantim": 0}), adjustment, http.StatusCreated},
		{"adjustment reason", adj, merge(adjustment, map[string]any{"reason": " \n "}), merge(adjustment, map[string]any{"reason": "x"}), http.StatusCreated},
		{"adjustment direction", adj, merge(adjustment, map[string]any{"direction": "BONUS"}), merge(adjustment, map[string]any{"direction": "DEDUCTION"}), http.StatusCreated},
		{"adjustment reason required", adj, without(adjustment, "reason"), adjustment, http.StatusCreated},
		{"policy denominator", pp, merge(policy, map[string]any{"voluntaryShareDenominator": 0}), merge(policy, map[string]any{"voluntaryShareDenominator": 10000}), http.StatusCreated},
		{"policy minimum", pp, merge(policy, map[string]any{"minimumNetSantim": -1}), merge(policy, map[string]any{"minimumNetSantim": 0}), http.StatusCreated},
		{"policy period", pp, merge(policy, map[string]any{"effectiveFrom": "2101-01"}), policy, http.StatusCreated},
	} {
		require.Error(t, x.owner.documentVerdict(http.MethodPost, c.path, c.bad), "%s: the document refuses it", c.name)
		mandatesStatus(t, x.owner.hostile(http.MethodPost, c.path, c.bad), http.StatusBadRequest, "INVALID_REQUEST")
		require.NoError(t, x.owner.documentVerdict(http.MethodPost, c.path, c.ok), "%s: the document allows the boundary", c.name)
		mandatesStatus(t, x.owner.call(http.MethodPost, c.path, c.ok), c.okStatus, "")
	}
	// Rules between two fields, named in the document: the server refuses them.
	mandatesStatus(t, x.owner.call(http.MethodPost, md, merge(mandate, map[string]any{"endPeriod": "2026-11"})), http.StatusBadRequest, "INVALID_REQUEST")
	mandatesStatus(t, x.owner.call(http.MethodPost, pp, merge(policy, map[string]any{"voluntaryShareNumerator": 4})), http.StatusBadRequest, "INVALID_REQUEST")
}

// FuzzPayrollMandateRoutes: any ids, query and body on the protection policy, adjustment and
// mandate routes answer success or 4xx, never 5xx, for the owner.
func FuzzPayrollMandateRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("fuzz@mandates.test", "BUSINESS")
	emp := fx.catalogEmployee(res.Organization.ID)
	routes := fx.srv.payrollMandateRoutes()
	f.Add(uint8(0), "x", "", `{"voluntaryShareNumerator":1,"voluntaryShareDenominator":3,"effectiveFrom":"2026-01"}`)
	f.Add(uint8(4), emp, "", `{"employeeId":"`+emp+`","period":"2026-11","direction":"EARNING","amountSantim":9223372036854775807,"reason":"r"}`)
	f.Add(uint8(11), emp, "", `{"employeeId":"`+emp+`","kind":"COURT_ORDER","amountSantim":1,"basisPoints":1,"startPeriod":"2026-01"}`)
	f.Add(uint8(12), "x", "status=ACTIVE&limit=0&cursor=%00", "")
	f.Add(uint8(9), "adj_x", "", `{"reason":"\u0000","effectivePeriod":"0000-00"}`)
	f.Add(uint8(17), "../..", "", "\xff")
	f.Fuzz(func(t *testing.T, which uint8, id, query, body string) {
		r := routes[int(which)%len(routes)]
		path := pathOf(r.Path, map[string]string{"id": id})
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.AddCookie(owner.cookie)
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q ?%q: %d %s", r.Method, path, query, rec.Code, rec.Body.String())
		}
	})
}
