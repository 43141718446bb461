package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
)

type payrollEarningOut struct {
	ID             string  `json:"id"`
	EmployeeID     string  `json:"employeeId"`
	Period         string  `json:"period"`
	Kind           string  `json:"kind"`
	AmountSantim   int64   `json:"amountSantim"`
	Taxable        bool    `json:"taxable"`
	Reference      *string `json:"reference"`
	Status         string  `json:"status"`
	CreatedBy      string  `json:"createdBy"`
	ApprovedBy     *string `json:"approvedBy"`
	VoidReason     *string `json:"voidReason"`
	ReversalReason *string `json:"reversalReason"`
	ReversalPeriod *string `json:"reversalPeriod"`
}

type payrollPolicyOut struct {
	ID                    string `json:"id"`
	Status                string `json:"status"`
	WorkingDayBasisPoints int64  `json:"workingDayBasisPoints"`
	NightBasisPoints      int64  `json:"nightBasisPoints"`
}

type payrollEntryOut struct {
	ID                    string  `json:"id"`
	EmployeeID            string  `json:"employeeId"`
	WorkDate              string  `json:"workDate"`
	Period                string  `json:"period"`
	Minutes               int64   `json:"minutes"`
	MultiplierBasisPoints int64   `json:"multiplierBasisPoints"`
	PolicyID              *string `json:"policyId"`
	EstimatedAmountSantim int64   `json:"estimatedAmountSantim"`
	Status                string  `json:"status"`
}

type payrollList[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// payrollKit is an organization with its owner (organization_admin: every payroll permission),
// a checker admin holding every payroll permission, a clerk holding view and edit, a viewer
// holding view only, a bare admin and a plain member, and an employee (10,000 ETB a month).
type payrollKit struct {
	f                                           *authFixture
	tenant, employee                            string
	owner, checker, clerk, viewer, bare, member *apiClient
	ownerID                                     string
	otherOwner                                  *apiClient
	otherTenant, otherEmployee                  string
	calc                                        *payrollCalculation // the run's calculation workflow
}

func newPayrollKit(t testing.TB, tag string) *payrollKit {
	f := newAuthFixture(t)
	k := &payrollKit{f: f}
	var res, other signUpResult
	k.owner, res = f.signUp("owner@"+tag+".example", "BUSINESS")
	k.tenant, k.ownerID = res.Organization.ID, res.User.ID
	f.catalogAppRole(k.tenant, "payroll-checker", `{"payroll":["view","edit","approve"]}`)
	f.catalogAppRole(k.tenant, "payroll-clerk", `{"payroll":["view","edit"]}`)
	f.catalogAppRole(k.tenant, "payroll-viewer", `{"payroll":["view"]}`)
	for _, m := range []struct {
		who  string
		role orgs.MemberRole
		app  []string
	}{{"checker", orgs.Admin, []string{"payroll-checker"}}, {"clerk", orgs.Admin, []string{"payroll-clerk"}},
		{"viewer", orgs.Admin, []string{"payroll-viewer"}}, {"bare", orgs.Admin, nil}, {"member", orgs.PlainMember, []string{orgs.AdminRole}}} {
		f.addMember(k.tenant, m.who+"@"+tag+".example", m.role, m.app...)
	}
	k.checker, k.clerk, k.viewer = f.signIn("checker@"+tag+".example"), f.signIn("clerk@"+tag+".example"), f.signIn("viewer@"+tag+".example")
	k.bare, k.member = f.signIn("bare@"+tag+".example"), f.signIn("member@"+tag+".example")
	k.employee = f.catalogEmployee(k.tenant)
	k.otherOwner, other = f.signUp("other@"+tag+".example", "BUSINESS")
	k.otherTenant = other.Organization.ID
	k.otherEmployee = f.catalogEmployee(k.otherTenant)
	k.calc = withPayrollCalculation(t, f)
	return k
}

// audits counts the tenant's audit rows of action with outcome.
func (k *payrollKit) audits(action, outcome string) int {
	return k.f.orgAuthAudits(k.tenant, action, outcome)
}

func (k *payrollKit) events(typ string) int {
	k.f.t.Helper()
	var n int
	require.NoError(k.f.t, db.InTenantTx(context.Background(), k.f.d.App, k.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.outbox WHERE type = $1`, typ).Scan(&n)
	}))
	return n
}

func (k *payrollKit) earning(t *testing.T, by *apiClient, body map[string]any) payrollEarningOut {
	t.Helper()
	rec := by.call(http.MethodPost, "/api/payroll/one-time-earnings", body)
	catalogStatus(t, rec, http.StatusCreated, "")
	return decode[payrollEarningOut](t, rec)
}

func TestPayrollOneTimeEarningRoutes(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-earn")
	const base = "/api/payroll/one-time-earnings"
	// The fixture's clock: 2026-11-23, so November is the current period.
	e := k.earning(t, k.owner, map[string]any{"employeeId": k.employee, "period": "2026-11", "kind": "BONUS", "amountSantim": 500_000,
		"taxable": true, "description": "Q3 target met", "reference": "HR-2026-114"})
	require.Equal(t, "PENDING", e.Status)
	require.Equal(t, k.ownerID, e.CreatedBy)
	require.Equal(t, "HR-2026-114", *e.Reference)

	// Maker ≠ checker: the owner may approve in general, not their own earning (audited DENIED).
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+e.ID+"/approve", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	require.Equal(t, 1, k.audits("ApproveOneTimeEarning", "DENIED"))
	// The clerk holds edit, not approve.
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+e.ID+"/approve", nil), http.StatusForbidden, "PERMISSION_DENIED")
	rec := k.checker.call(http.MethodPost, base+"/"+e.ID+"/approve", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	e = decode[payrollEarningOut](t, rec)
	require.Equal(t, "APPROVED", e.Status)
	require.NotNil(t, e.ApprovedBy)
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+e.ID+"/approve", nil), http.StatusConflict, "PAYROLL_EARNING_INVALID_STATE")
	// Reverse while the period is open: nothing was paid (void is the way).
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+e.ID+"/reverse", map[string]any{"reason": "duplicate"}), http.StatusConflict, "PAYROLL_PERIOD_OPEN")

	// A second earning by the clerk: the clerk cannot void it once approved (approve needed), the
	// checker can; a voided earning is final.
	e2 := k.earning(t, k.clerk, map[string]any{"employeeId": k.employee, "period": "2026-12", "kind": "COMMISSION", "amountSantim": 12_345, "taxable": false})
	catalogStatus(t, k.owner.call(http.MethodPost, base+"/"+e2.ID+"/approve", nil), http.StatusOK, "")
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+e2.ID+"/void", nil), http.StatusForbidden, "PERMISSION_DENIED")
	rec = k.checker.call(http.MethodPost, base+"/"+e2.ID+"/void", map[string]any{"reason": "commission plan cancelled"})
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "commission plan cancelled", *decode[payrollEarningOut](t, rec).VoidReason)
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+e2.ID+"/void", nil), http.StatusConflict, "PAYROLL_EARNING_INVALID_STATE")
	// A pending one the clerk may void (no body needed).
	e3 := k.earning(t, k.clerk, map[string]any{"employeeId": k.employee, "period": "2026-11", "kind": "OTHER", "amountSantim": 1, "taxable": true})
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+e3.ID+"/void", nil), http.StatusOK, "")

	// Lists and filters; the viewer reads.
	rec = k.viewer.call(http.MethodGet, base+"?status=APPROVED&period=2026-11&employeeId="+k.employee, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	list := decode[payrollList[payrollEarningOut]](t, rec)
	require.Len(t, list.Items, 1)
	require.Equal(t, e.ID, list.Items[0].ID)
	rec = k.viewer.call(http.MethodGet, base+"?limit=2", nil)
	page := decode[payrollList[payrollEarningOut]](t, rec)
	require.Len(t, page.Items, 2)
	require.NotNil(t, page.NextCursor)
	rec = k.viewer.call(http.MethodGet, base+"?limit=2&cursor="+*page.NextCursor, nil)
	page = decode[payrollList[payrollEarningOut]](t, rec)
	require.Len(t, page.Items, 1)
	require.Nil(t, page.NextCursor)
	rec = k.viewer.call(http.MethodGet, base+"/"+e.ID, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, int64(500_000), decode[payrollEarningOut](t, rec).AmountSantim)

	// December: November has closed, the approved bonus was paid. Void is refused, reverse
	// records the take-back in December; a new November earning is refused.
	k.f.advance(8 * 24 * time.Hour) // 2026-12-01; the sessions (7 days) are signed in again
	k.owner, k.checker, k.clerk = k.f.signIn("owner@pay-earn.example"), k.f.signIn("checker@pay-earn.example"), k.f.signIn("clerk@pay-earn.example")
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+e.ID+"/void", nil), http.StatusConflict, "PAYROLL_PERIOD_CLOSED")
	catalogStatus(t, k.clerk.call(http.MethodPost, base+"/"+e.ID+"/reverse", map[string]any{"reason": "x"}), http.StatusForbidden, "PERMISSION_DENIED")
	rec = k.checker.call(http.MethodPost, base+"/"+e.ID+"/reverse", map[string]any{"reason": "paid twice in November"})
	catalogStatus(t, rec, http.StatusOK, "")
	e = decode[payrollEarningOut](t, rec)
	require.Equal(t, "REVERSED", e.Status)
	require.Equal(t, "2026-12", *e.ReversalPeriod)
	catalogStatus(t, k.checker.call(http.MethodPost, base+"/"+e.ID+"/reverse", map[string]any{"reason": "again"}), http.StatusConflict, "PAYROLL_EARNING_INVALID_STATE")
	catalogStatus(t, k.owner.call(http.MethodPost, base, map[string]any{"employeeId": k.employee, "period": "2026-11", "kind": "ARREARS",
		"amountSantim": 1, "taxable": true}), http.StatusConflict, "PAYROLL_PERIOD_CLOSED")

	// One audit row and one event per change.
	require.Equal(t, 3, k.audits("CreateOneTimeEarning", "SUCCESS"))
	require.Equal(t, 2, k.audits("ApproveOneTimeEarning", "SUCCESS"))
	require.Equal(t, 2, k.audits("VoidOneTimeEarning", "SUCCESS"))
	require.Equal(t, 1, k.audits("ReverseOneTimeEarning", "SUCCESS"))
	require.Equal(t, 1, k.audits("CreateOneTimeEarning", "DENIED"))
	require.Equal(t, 3, k.events("payroll.one_time_earning_created.v1"))
	require.Equal(t, 2, k.events("payroll.one_time_earning_approved.v1"))
	require.Equal(t, 2, k.events("payroll.one_time_earning_voided.v1"))
	require.Equal(t, 1, k.events("payroll.one_time_earning_reversed.v1"))
}

// TestPayrollInputAccess: every route of the family needs the row's permission; a plain member
// is refused whatever they hold; another organization's employee and ids are 404.
func TestPayrollInputAccess(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-access")
	e := k.earning(t, k.owner, map[string]any{"employeeId": k.employee, "period": "2026-12", "kind": "BONUS", "amountSantim": 100, "taxable": true})
	rec := k.owner.call(http.MethodPost, "/api/payroll/overtime-policies", map[string]any{"name": "P", "workingDayBasisPoints": 15000,
		"nightBasisPoints": 17500, "weeklyRestDayBasisPoints": 20000, "publicHolidayBasisPoints": 25000})
	catalogStatus(t, rec, http.StatusCreated, "")
	pol := decode[payrollPolicyOut](t, rec).ID
	rec = k.owner.call(http.MethodPost, "/api/payroll/overtime-entries", map[string]any{"employeeId": k.employee, "workDate": "2026-11-20",
		"category": "WORKING_DAY", "minutes": 90})
	catalogStatus(t, rec, http.StatusCreated, "")
	ent := decode[payrollEntryOut](t, rec).ID

	ids := map[string]string{"one-time-earnings": e.ID, "overtime-policies": pol, "overtime-entries": ent}
	bodies := map[string]map[string]any{
		"POST /api/payroll/one-time-earnings": {"employeeId": k.employee, "period": "2026-12", "kind": "BONUS", "amountSantim": 1, "taxable": true},
		"POST /api/payroll/overtime-policies": {"name": "Q", "workingDayBasisPoints": 15000, "nightBasisPoints": 17500,
			"weeklyRestDayBasisPoints": 20000, "publicHolidayBasisPoints": 25000},
		"POST /api/payroll/overtime-entries":              {"employeeId": k.employee, "workDate": "2026-11-21", "category": "NIGHT", "minutes": 30},
		"POST /api/payroll/one-time-earnings/:id/reverse": {"reason": "r"},
		"POST /api/payroll/one-time-earnings/:id/void":    {"reason": "r"},
	}
	perm := map[string]string{}
	for _, r := range k.f.srv.payrollEarningRoutes() {
		perm[r.Method+" "+r.Path] = r.Permission.Action
	}
	require.Len(t, perm, 13)
	for _, r := range k.f.srv.payrollEarningRoutes() {
		path := r.Path
		for fam, id := range ids {
			path = strings.Replace(path, "/"+fam+"/:id", "/"+fam+"/"+id, 1)
		}
		var body any
		if b, ok := bodies[r.Method+" "+r.Path]; ok {
			body = b
		}
		name := r.Method + " " + r.Path
		// The viewer passes the reads only, the clerk reads and edits, the bare admin nothing,
		// the plain member is refused for their role. Refused attempts change nothing.
		for who, c := range map[string]*apiClient{"viewer": k.viewer, "clerk": k.clerk, "bare": k.bare, "member": k.member} {
			allowed := who == "viewer" && r.Permission.Action == "view" || who == "clerk" && r.Permission.Action != "approve"
			if allowed {
				continue
			}
			want := "PERMISSION_DENIED"
			if who == "member" {
				want = "INSUFFICIENT_ROLE"
			}
			rec := c.call(r.Method, path, body)
			require.Equal(t, http.StatusForbidden, rec.Code, "%s: %s: %s", who, name, rec.Body.String())
			require.Equal(t, want, errCode(rec), "%s: %s", who, name)
		}
		// Another organization's owner: every id is not found (nothing of ours shows).
		if strings.Contains(r.Path, ":id") {
			rec := k.otherOwner.call(r.Method, path, body)
			require.Equal(t, http.StatusNotFound, rec.Code, "other owner: %s: %s", name, rec.Body.String())
		}
		anon := k.f.client()
		catalogStatus(t, anon.call(r.Method, path, body), http.StatusUnauthorized, "UNAUTHENTICATED")
	}
	// The other organization's lists are empty, and its employee is not ours to pay.
	for _, p := range []string{"/api/payroll/one-time-earnings", "/api/payroll/overtime-entries", "/api/payroll/overtime-policies"} {
		rec := k.otherOwner.call(http.MethodGet, p, nil)
		catalogStatus(t, rec, http.StatusOK, "")
		require.Empty(t, decode[payrollList[map[string]any]](t, rec).Items, p)
	}
	catalogStatus(t, k.owner.call(http.MethodPost, "/api/payroll/one-time-earnings", map[string]any{"employeeId": k.otherEmployee,
		"period": "2026-12", "kind": "BONUS", "amountSantim": 1, "taxable": true}), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	catalogStatus(t, k.owner.call(http.MethodPost, "/api/payroll/overtime-entries", map[string]any{"employeeId": k.otherEmployee,
		"workDate": "2026-11-20", "category": "NIGHT", "minutes": 1}), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	require.Positive(t, k.audits("AccessRoute", "DENIED"), "refusals are audited")

	// A terminated employee receives no new input.
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, k.f.d.App, k.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET status = 'TERMINATED' WHERE id = $1`, k.employee)
		return err
	}))
	catalogStatus(t, k.owner.call(http.MethodPost, "/api/payroll/one-time-earnings", map[string]any{"employeeId": k.employee,
		"period": "2026-12", "kind": "BONUS", "amountSantim": 1, "taxable": true}), http.StatusUnprocessableEntity, "PAYROLL_EMPLOYEE_TERMINATED")
	catalogStatus(t, k.owner.call(http.MethodPost, "/api/payroll/overtime-entries", map[string]any{"employeeId": k.employee,
		"workDate": "2026-11-20", "category": "NIGHT", "minutes": 1}), http.StatusUnprocessableEntity, "PAYROLL_EMPLOYEE_TERMINATED")
	catalogStatus(t, k.checker.call(http.MethodPost, "/api/payroll/one-time-earnings/"+e.ID+"/approve", nil), http.StatusUnprocessableEntity, "PAYROLL_EMPLOYEE_TERMINATED")
}

func TestPayrollOvertimeRoutes(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-ot")
	const policies, entries = "/api/payroll/overtime-policies", "/api/payroll/overtime-entries"
	type policyList struct {
		Items     []payrollPolicyOut `json:"items"`
		Effective struct {
			Source           string  `json:"source"`
			PolicyID         *string `json:"policyId"`
			NightBasisPoints int64   `json:"nightBasisPoints"`
		} `json:"effective"`
	}
	rec := k.viewer.call(http.MethodGet, policies, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	pl := decode[policyList](t, rec)
	require.Empty(t, pl.Items)
	require.Equal(t, "DEFAULT", pl.Effective.Source)
	require.Nil(t, pl.Effective.PolicyID)
	require.Equal(t, int64(17_500), pl.Effective.NightBasisPoints)

	// 90 minutes of night work under the default: 10,000 ETB ÷ 208 h × 1.5 h × 1.75 = 126.20 ETB.
	rec = k.clerk.call(http.MethodPost, entries, map[string]any{"employeeId": k.employee, "workDate": "2026-11-21", "category": "NIGHT",
		"minutes": 90, "description": "inventory"})
	catalogStatus(t, rec, http.StatusCreated, "")
	ent := decode[payrollEntryOut](t, rec)
	require.Equal(t, "2026-11", ent.Period)
	require.Equal(t, int64(17_500), ent.MultiplierBasisPoints)
	require.Nil(t, ent.PolicyID)
	require.Equal(t, int64(12_620), ent.EstimatedAmountSantim) // 1,000,000 × 90 × 17,500 ÷ (208 × 60 × 10,000) = 12,620.19…

	// The estimate follows the organization's monthly working hours (tenant settings).
	catalogStatus(t, k.clerk.call(http.MethodPost, "/api/payroll/tenant-settings", map[string]any{"monthlyWorkingHours": 160}), http.StatusOK, "")
	rec = k.viewer.call(http.MethodGet, entries+"/"+ent.ID, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, int64(16_406), decode[payrollEntryOut](t, rec).EstimatedAmountSantim) // 1,000,000 × 90 × 17,500 ÷ (160 × 60 × 10,000) = 16,406.25
	catalogStatus(t, k.clerk.call(http.MethodDelete, "/api/payroll/tenant-settings", nil), http.StatusNoContent, "")

	rec = k.clerk.call(http.MethodPost, policies, map[string]any{"name": "  Night double  ", "workingDayBasisPoints": 15000,
		"nightBasisPoints": 20000, "weeklyRestDayBasisPoints": 20000, "publicHolidayBasisPoints": 25000})
	catalogStatus(t, rec, http.StatusCreated, "")
	pol := decode[payrollPolicyOut](t, rec)
	require.Equal(t, "DRAFT", pol.Status)
	catalogStatus(t, k.clerk.call(http.MethodPost, policies+"/"+pol.ID+"/activate", nil), http.StatusForbidden, "PERMISSION_DENIED")
	catalogStatus(t, k.checker.call(http.MethodPost, policies+"/"+pol.ID+"/activate", nil), http.StatusOK, "")
	catalogStatus(t, k.checker.call(http.MethodPost, policies+"/"+pol.ID+"/activate", nil), http.StatusConflict, "PAYROLL_OVERTIME_POLICY_INVALID_STATE")
	pl = decode[policyList](t, k.viewer.call(http.MethodGet, policies+"?status=ACTIVE", nil))
	require.Len(t, pl.Items, 1)
	require.Equal(t, "POLICY", pl.Effective.Source)
	require.Equal(t, pol.ID, *pl.Effective.PolicyID)

	// Entries recorded now take the active policy; the earlier one keeps its multiplier.
	rec = k.clerk.call(http.MethodPost, entries, map[string]any{"employeeId": k.employee, "workDate": "2026-10-31", "period": "2026-11",
		"category": "NIGHT", "minutes": 60})
	catalogStatus(t, rec, http.StatusCreated, "")
	ent2 := decode[payrollEntryOut](t, rec)
	require.Equal(t, int64(20_000), ent2.MultiplierBasisPoints)
	require.Equal(t, pol.ID, *ent2.PolicyID)
	require.Equal(t, "2026-11", ent2.Period)
	rec = k.viewer.call(http.MethodGet, entries+"/"+ent.ID, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, int64(17_500), decode[payrollEntryOut](t, rec).MultiplierBasisPoints)

	// Refusals: future date, closed period, the day's cap.
	catalogStatus(t, k.clerk.call(http.MethodPost, entries, map[string]any{"employeeId": k.employee, "workDate": "2026-11-24",
		"category": "NIGHT", "minutes": 60}), http.StatusUnprocessableEntity, "PAYROLL_OVERTIME_DATE_IN_FUTURE")
	catalogStatus(t, k.clerk.call(http.MethodPost, entries, map[string]any{"employeeId": k.employee, "workDate": "2026-10-30",
		"category": "NIGHT", "minutes": 60}), http.StatusConflict, "PAYROLL_PERIOD_CLOSED")
	catalogStatus(t, k.clerk.call(http.MethodPost, entries, map[string]any{"employeeId": k.employee, "workDate": "2026-11-21",
		"category": "WORKING_DAY", "minutes": 1351}), http.StatusUnprocessableEntity, "PAYROLL_OVERTIME_LIMIT_EXCEEDED")

	// Approve: not the creator, once.
	catalogStatus(t, k.owner.call(http.MethodPost, entries+"/"+ent.ID+"/approve", nil), http.StatusOK, "")
	catalogStatus(t, k.owner.call(http.MethodPost, entries+"/"+ent.ID+"/approve", nil), http.StatusConflict, "PAYROLL_OVERTIME_INVALID_STATE")
	catalogStatus(t, k.checker.call(http.MethodPost, entries, map[string]any{"employeeId": k.employee, "workDate": "2026-11-22",
		"category": "PUBLIC_HOLIDAY", "minutes": 120}), http.StatusCreated, "")
	mine := decode[payrollList[payrollEntryOut]](t, k.viewer.call(http.MethodGet, entries+"?status=PENDING&period=2026-11", nil)).Items
	require.Len(t, mine, 2)
	catalogStatus(t, k.checker.call(http.MethodPost, entries+"/"+mine[1].ID+"/approve", nil), http.StatusForbidden, "PAYROLL_SELF_APPROVAL")
	list := decode[payrollList[payrollEntryOut]](t, k.viewer.call(http.MethodGet, entries+"?status=APPROVED&employeeId="+k.employee, nil))
	require.Len(t, list.Items, 1)
	require.Equal(t, ent.ID, list.Items[0].ID)
	require.Equal(t, 3, k.events("payroll.overtime_entry_created.v1"))
	require.Equal(t, 1, k.events("payroll.overtime_entry_approved.v1"))
	require.Equal(t, 1, k.events("payroll.overtime_policy_activated.v1"))
	require.Equal(t, 2, k.audits("ApproveOvertimeEntry", "DENIED"), "the second approval and the self-approval")
}

// TestPayrollInputDocumentStatesRules: each rule the handlers enforce on these routes, broken
// (the document refuses it and so does the server) and at its allowed boundary.
func TestPayrollInputDocumentStatesRules(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "pay-rules")
	owner := k.owner
	earning := func(over map[string]any) map[string]any {
		return merge(map[string]any{"employeeId": k.employee, "period": "2026-12", "kind": "BONUS", "amountSantim": 100, "taxable": true}, over)
	}
	policy := func(over map[string]any) map[string]any {
		return merge(map[string]any{"name": "P", "workingDayBasisPoints": 15000, "nightBasisPoints": 17500,
			"weeklyRestDayBasisPoints": 20000, "publicHolidayBasisPoints": 25000}, over)
	}
	entry := func(over map[string]any) map[string]any {
		return merge(map[string]any{"employeeId": k.employee, "workDate": "2026-11-02", "category": "NIGHT", "minutes": 1}, over)
	}
	approved := k.earning(t, owner, earning(nil))
	catalogStatus(t, k.checker.call(http.MethodPost, "/api/payroll/one-time-earnings/"+approved.ID+"/approve", nil), http.StatusOK, "")
	pending := k.earning(t, owner, earning(nil))
	const earnings, policies, entries = "/api/payroll/one-time-earnings", "/api/payroll/overtime-policies", "/api/payroll/overtime-entries"
	cases := []ruleCase{
		{name: "earning requires taxable", method: http.MethodPost, path: earnings, body: earning(map[string]any{"taxable": nil}),
			okBody: earning(nil), okStatus: 201},
		{name: "earning period 2000-01..2100-12", method: http.MethodPost, path: earnings, body: earning(map[string]any{"period": "2101-01"}),
			okBody: earning(map[string]any{"period": "2100-12"}), okStatus: 201},
		{name: "earning period is a month", method: http.MethodPost, path: earnings, body: earning(map[string]any{"period": "2026-13"})},
		{name: "earning amount at least 1", method: http.MethodPost, path: earnings, body: earning(map[string]any{"amountSantim": 0}),
			okBody: earning(map[string]any{"amountSantim": 1}), okStatus: 201},
		{name: "earning amount at most 10 billion ETB", method: http.MethodPost, path: earnings, body: earning(map[string]any{"amountSantim": 1_000_000_000_001}),
			okBody: earning(map[string]any{"amountSantim": 1_000_000_000_000}), okStatus: 201},
		{name: "earning kind", method: http.MethodPost, path: earnings, body: earning(map[string]any{"kind": "SALARY"}),
			okBody: earning(map[string]any{"kind": "OTHER"}), okStatus: 201},
		{name: "earning description 500", method: http.MethodPost, path: earnings, body: earning(map[string]any{"description": strings.Repeat("d", 501)}),
			okBody: earning(map[string]any{"description": strings.Repeat("d", 500)}), okStatus: 201},
		{name: "earning reference has no spaces", method: http.MethodPost, path: earnings, body: earning(map[string]any{"reference": "HR 1"}),
			okBody: earning(map[string]any{"reference": strings.Repeat("R", 64)}), okStatus: 201},
		{name: "earning reference not empty", method: http.MethodPost, path: earnings, body: earning(map[string]any{"reference": ""})},
		{name: "earning no unknown field", method: http.MethodPost, path: earnings, body: earning(map[string]any{"currency": "ETB"})},
		{name: "earning employeeId an identifier", method: http.MethodPost, path: earnings, body: earning(map[string]any{"employeeId": "emp/1"})},
		{name: "reverse requires a reason", method: http.MethodPost, path: earnings + "/" + approved.ID + "/reverse", body: map[string]any{},
			okBody: map[string]any{"reason": "x"}, okStatus: 409, okCode: "PAYROLL_PERIOD_OPEN"},
		{name: "reverse reason not blank", method: http.MethodPost, path: earnings + "/" + approved.ID + "/reverse", body: map[string]any{"reason": " \u00a0"}},
		{name: "void reason 500", method: http.MethodPost, path: earnings + "/" + pending.ID + "/void", body: map[string]any{"reason": strings.Repeat("r", 501)},
			okBody: map[string]any{"reason": strings.Repeat("r", 500)}, okStatus: 200},
		{name: "earnings list period", method: http.MethodGet, path: earnings + "?period=1999-12", okPath: earnings + "?period=2000-01", okStatus: 200},
		{name: "earnings list status", method: http.MethodGet, path: earnings + "?status=PAID", okPath: earnings + "?status=REVERSED", okStatus: 200},
		{name: "policy multiplier at least 1x", method: http.MethodPost, path: policies, body: policy(map[string]any{"nightBasisPoints": 9999}),
			okBody: policy(map[string]any{"nightBasisPoints": 10000}), okStatus: 201},
		{name: "policy multiplier at most 4x", method: http.MethodPost, path: policies, body: policy(map[string]any{"publicHolidayBasisPoints": 40001}),
			okBody: policy(map[string]any{"publicHolidayBasisPoints": 40000}), okStatus: 201},
		{name: "policy name not blank", method: http.MethodPost, path: policies, body: policy(map[string]any{"name": "  "}),
			okBody: policy(map[string]any{"name": " x "}), okStatus: 201},
		{name: "policy requires every multiplier", method: http.MethodPost, path: policies, body: policy(map[string]any{"weeklyRestDayBasisPoints": nil})},
		{name: "entry minutes at most 1440", method: http.MethodPost, path: entries, body: entry(map[string]any{"minutes": 1441}),
			okBody: entry(map[string]any{"minutes": 1440}), okStatus: 201},
		{name: "entry minutes at least 1", method: http.MethodPost, path: entries, body: entry(map[string]any{"minutes": 0})},
		{name: "entry category", method: http.MethodPost, path: entries, body: entry(map[string]any{"category": "OVERNIGHT"}),
			okBody: entry(map[string]any{"category": "WEEKLY_REST_DAY", "workDate": "2026-11-03"}), okStatus: 201},
		{name: "entry work date form", method: http.MethodPost, path: entries, body: entry(map[string]any{"workDate": "2026-11-2"}),
			okBody: entry(map[string]any{"workDate": "2026-11-04"}), okStatus: 201},
		{name: "entry work date from 2000", method: http.MethodPost, path: entries, body: entry(map[string]any{"workDate": "1999-12-31"}),
			okBody: entry(map[string]any{"workDate": "2000-01-01"}), okStatus: 409, okCode: "PAYROLL_PERIOD_CLOSED"},
		{name: "entry period form", method: http.MethodPost, path: entries, body: entry(map[string]any{"period": "2026-1"}),
			okBody: entry(map[string]any{"period": "2026-12", "workDate": "2026-11-05"}), okStatus: 201},
		{name: "entries list status", method: http.MethodGet, path: entries + "?status=VOIDED", okPath: entries + "?status=APPROVED", okStatus: 200},
		{name: "policies list status", method: http.MethodGet, path: policies + "?status=PENDING", okPath: policies + "?status=SUPERSEDED", okStatus: 200},
	}
	for _, tc := range cases {
		tc.caller = owner
		if tc.status == 0 {
			tc.status, tc.code = http.StatusBadRequest, "INVALID_REQUEST"
		}
		// A nil in a merged body is a field left out.
		for _, b := range []any{tc.body, tc.okBody} {
			if m, ok := b.(map[string]any); ok {
				for key, v := range m {
					if v == nil {
						delete(m, key)
					}
				}
			}
		}
		t.Run(tc.name, func(t *testing.T) {
			a := tc.caller.clone()
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
	// Rules no schema states, each a 400 the document names in words: a date that does not exist,
	// a period before the work date's month.
	catalogStatus(t, owner.call(http.MethodPost, entries, entry(map[string]any{"workDate": "2026-02-29"})), http.StatusBadRequest, "INVALID_REQUEST")
	catalogStatus(t, owner.call(http.MethodPost, entries, entry(map[string]any{"period": "2026-10"})), http.StatusBadRequest, "INVALID_REQUEST")
}

// FuzzPayrollEarningRoutes: whatever reaches a one-time earning or overtime route (any id, query
// and body, from the owner, a clerk without approve or nobody) answers 4xx or success, never 5xx.
func FuzzPayrollEarningRoutes(f *testing.F) {
	k := newPayrollKit(f, "pay-fuzz")
	routes := k.f.srv.payrollEarningRoutes()
	rec := k.owner.call(http.MethodPost, "/api/payroll/one-time-earnings", map[string]any{"employeeId": k.employee, "period": "2026-12",
		"kind": "BONUS", "amountSantim": 100, "taxable": true})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	seed := decode[payrollEarningOut](f, rec).ID
	for i, s := range []struct{ id, query, body string }{
		{"", "", `{"employeeId":"` + k.employee + `","period":"2026-12","kind":"ARREARS","amountSantim":1,"taxable":false}`},
		{"", "", `{"employeeId":"` + k.employee + `","workDate":"2026-11-20","category":"NIGHT","minutes":1440}`},
		{"", "", `{"employeeId":"` + k.employee + `","workDate":"2026-11-20","period":"2100-12","category":"NIGHT","minutes":1}`},
		{"", "", `{"name":"P","workingDayBasisPoints":40000,"nightBasisPoints":10000,"weeklyRestDayBasisPoints":1e400,"publicHolidayBasisPoints":-1}`},
		{"", "", `{"employeeId":"` + k.employee + `","period":"2026-12","kind":"BONUS","amountSantim":9223372036854775807,"taxable":true}`},
		{"", "", `{"employeeId":"` + k.employee + `","workDate":"9999-99-99","category":"NIGHT","minutes":-9223372036854775808}`},
		{seed, "", `{"reason":"\u0000"}`},
		{seed, "", `{"reason":"` + strings.Repeat("é", 300) + `"}`},
		{seed, "", ``},
		{"ote_x", "status=APPROVED&period=2026-11&employeeId=" + k.employee + "&limit=1&cursor=ote_", ""},
		{"../../x", "period=%00&limit=0&limit=2", `[]`},
		{strings.Repeat("i", 200), "cursor=" + strings.Repeat("c", 200), `{"reason":1}`},
	} {
		f.Add(uint8(i), uint8(i%3), s.id, s.query, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, route, who uint8, id, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(r.Path, ":id", id, 1)
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.82:40000"
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
