package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCatalogAssignmentRoutes(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUp("owner@assign.test", "BUSINESS")
	other, resB := f.signUp("owner@assign-b.test", "BUSINESS")
	tenant := res.Organization.ID
	emp := f.catalogEmployee(tenant)
	empB := f.catalogEmployee(resB.Organization.ID)

	rec := owner.call(http.MethodPost, "/api/allowances", map[string]any{"name": "Transport", "code": "TRN", "kind": "FIXED_SANTIM", "amount": 60000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	allowance := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID

	base := "/api/employees/" + emp + "/allowances"
	rec = owner.call(http.MethodPost, base, map[string]any{"allowanceId": allowance, "amount": 75000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	got := decode[struct {
		ID              string `json:"id"`
		EffectiveAmount int64  `json:"effectiveAmount"`
	}](t, rec)
	require.Equal(t, int64(75000), got.EffectiveAmount, "the employee's own amount wins")

	rec = owner.call(http.MethodPost, base, map[string]any{"allowanceId": allowance})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "ALREADY_ASSIGNED", errCode(rec))
	rec = owner.hostile(http.MethodPost, base, map[string]any{"deductionId": allowance})
	require.Equal(t, http.StatusBadRequest, rec.Code, "the deductions field on the allowances route")
	rec = owner.hostile(http.MethodPost, base, map[string]any{"allowanceId": allowance, "amount": -1})
	require.Equal(t, http.StatusBadRequest, rec.Code)

	rec = owner.call(http.MethodGet, base, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Len(t, decode[struct {
		Items []any `json:"items"`
	}](t, rec).Items, 1)

	// Another tenant's employee (and an unknown one) is 404, from either side.
	for _, path := range []string{"/api/employees/" + empB + "/allowances", "/api/employees/emp_nobody/allowances"} {
		rec = owner.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusNotFound, rec.Code, path)
	}
	rec = other.call(http.MethodPost, base, map[string]any{"allowanceId": allowance})
	require.Equal(t, http.StatusNotFound, rec.Code)

	rec = owner.call(http.MethodDelete, base+"/"+got.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = owner.call(http.MethodDelete, base+"/"+got.ID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "ended once")
	rec = owner.call(http.MethodGet, "/api/employees/"+emp+"/deductions", nil)
	require.Equal(t, http.StatusOK, rec.Code)
}

// FuzzCatalogAssignmentRoutes: any body and ids on the per-employee routes answer success or 4xx.
func FuzzCatalogAssignmentRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("fuzz@assign.test", "BUSINESS")
	emp := fx.catalogEmployee(res.Organization.ID)
	routes := fx.srv.catalogAssignmentRoutes()
	f.Add(uint8(1), emp, "x", `{"allowanceId":"alw_x","amount":9223372036854775807}`)
	f.Add(uint8(4), emp, "x", `{"deductionId":"","amount":-9223372036854775808}`)
	f.Add(uint8(2), "../..", "%00", "")
	f.Add(uint8(0), "emp\x00", "", "\xff")
	f.Fuzz(func(t *testing.T, which uint8, id, assignment, body string) {
		r := routes[int(which)%len(routes)]
		path := pathOf(r.Path, map[string]string{"id": id, "assignmentId": assignment})
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = path, ""
		if body != "" {
			req.Header.Set("Content-Type", "application/json") // past checkBody, into the handlers
		}
		req.AddCookie(owner.cookie)
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", r.Method, path, rec.Code, rec.Body.String())
		}
	})
}
