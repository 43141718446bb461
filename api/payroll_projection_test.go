package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The projection answers what the calculator makes of the stored inputs, to members with
// payroll.view, for the caller's own employees only, and changes nothing.
func TestPayrollProjection(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t) // clock: 2026-11-23
	owner, res := f.signUp("owner@projection.test", "BUSINESS")
	tenant := res.Organization.ID
	other, _ := f.signUp("owner@projection-other.test", "BUSINESS")
	emp := f.catalogEmployee(tenant) // 10,000 ETB a month since 2026-01-01

	rec := owner.call(http.MethodGet, "/api/payroll/projection?employeeId="+emp, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	p := decode[projectionJSON](t, rec)
	require.Equal(t, "2026-11", p.Period, "the clock's month")
	require.True(t, p.Paid)
	require.Equal(t, "ET-PAYE-2025-07", p.TaxTableVersion)
	// 10,000 ETB: PAYE 0 on 2,000 + 15% of 2,000 + 20% of 3,000 + 25% of 3,000 = 1,650 ETB;
	// pension 7% = 700 ETB; net 7,650 ETB; the share is a third of 7,650 ETB, all of it free.
	require.Equal(t, int64(1_000_000), p.GrossSantim)
	require.Equal(t, []projectionDeductionJSON{
		{projectionLineJSON{"PAYE", "ET-PAYE-2025-07", 165_000}, false},
		{projectionLineJSON{"PENSION_EMPLOYEE", "PENSION", 70_000}, false},
	}, p.Deductions)
	require.Equal(t, []projectionContributionJSON{{"PENSION_EMPLOYER", 110_000}}, p.EmployerContributions)
	require.Equal(t, int64(765_000), p.NetSantim)
	require.Equal(t, int64(255_000), p.ShareCapSantim)
	require.Equal(t, int64(255_000), p.RecoverableSantim)

	// An earlier period has the older table; the employee was hired on 2026-01-01, so 2025-12
	// pays nothing.
	p = decode[projectionJSON](t, owner.call(http.MethodGet, "/api/payroll/projection?employeeId="+emp+"&period=2025-12", nil))
	require.False(t, p.Paid)
	require.Zero(t, p.NetSantim)

	for _, c := range []struct {
		who    *apiClient
		path   string
		status int
		code   string
	}{
		{other, "/api/payroll/projection?employeeId=" + emp, http.StatusNotFound, "EMPLOYEE_NOT_FOUND"},
		{owner, "/api/payroll/projection?employeeId=emp_nope", http.StatusNotFound, "EMPLOYEE_NOT_FOUND"},
		{f.client(), "/api/payroll/projection?employeeId=" + emp, http.StatusUnauthorized, ""},
	} {
		rec := c.who.call(http.MethodGet, c.path, nil)
		require.Equal(t, c.status, rec.Code, rec.Body.String())
		if c.code != "" {
			require.Equal(t, c.code, errCode(rec))
		}
	}
	for _, q := range []string{"", "?employeeId=", "?employeeId=a%00b", "?employeeId=" + emp + "&period=2026-13",
		"?employeeId=" + emp + "&period=1999-12", "?employeeId=" + emp + "&period=2101-01", "?employeeId=" + emp + "&period=2026-1",
		"?employeeId=" + emp + "&employeeId=" + emp} {
		rec := owner.hostile(http.MethodGet, "/api/payroll/projection"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
	}

	// payroll.view is required: a member whose roles lack it is refused.
	f.catalogAppRole(tenant, "hr-clerk", `{"employees":["view"]}`)
	f.addMember(tenant, "clerk@projection.test", orgs.Admin, "hr-clerk")
	rec = f.signIn("clerk@projection.test").call(http.MethodGet, "/api/payroll/projection?employeeId="+emp, nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "PERMISSION_DENIED", errCode(rec))
}

// FuzzPayrollProjection: any query (employee ids of this or another tenant, any period text)
// answers 200 or 4xx, never 5xx.
func FuzzPayrollProjection(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("fuzz-projection@example.com", "BUSINESS")
	other, _ := fx.signUp("fuzz-projection-other@example.com", "BUSINESS")
	emp := fx.catalogEmployee(res.Organization.ID)
	f.Add(false, "employeeId="+emp)
	f.Add(false, "employeeId="+emp+"&period=2100-12")
	f.Add(false, "employeeId="+emp+"&period=2000-01")
	f.Add(false, "employeeId="+emp+"&period=%ff%00")
	f.Add(true, "employeeId="+emp)
	f.Add(false, "employeeId=%27%20OR%201%3D1--&period=2026-02")
	f.Add(false, "employeeId="+strings.Repeat("e", 300))
	f.Fuzz(func(t *testing.T, otherTenant bool, query string) {
		req := httptest.NewRequest(http.MethodGet, "/api/payroll/projection", nil)
		req.URL.RawQuery = query
		req.RemoteAddr = "192.0.2.82:40000"
		if otherTenant {
			req.AddCookie(other.cookie)
		} else {
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, query)
	})
}

// courtOrder gives tenant's employee an ACTIVE court order of amount santim a month, recorded by
// one user and activated by another.
func courtOrder(t *testing.T, f *authFixture, tenant, employee string, amount int64) {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: "user-maker"})
	require.NoError(t, tenancy.InBunTx(ctx, db.NewBun(f.d.App), func(tx db.BunTx) error {
		m, err := payroll.CreateMandate(ctx, tx, payroll.NewMandate{EmployeeID: employee, Kind: payroll.KindCourtOrder, AmountSantim: &amount,
			StartPeriod: "2026-01", Reference: "FHC-1", Payee: &payroll.Payee{Partner: "cbe", AccountNumber: "1000999", HolderName: "Court Trust"}}, f.now())
		if err != nil {
			return err
		}
		_, err = payroll.ActivateMandate(tenancy.WithActor(ctx, "user-checker"), tx, m.ID, f.now())
		return err
	}))
}
