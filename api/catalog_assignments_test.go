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

	rec := owner.call(http.MethodPost, "/api/allowances", map[string]any{"name": "Transport", "code": "TRN", "kind": "FIXED_SANTIM", "amountSantim": 60000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	allowance := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	rec = owner.call(http.MethodPost, "/api/deductions", map[string]any{"name": "Union", "code": "UNION", "kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 150})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	deduction := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	type assignmentOut struct {
		ID                    string `json:"id"`
		AmountSantim          *int64 `json:"amountSantim"`
		BasisPoints           *int64 `json:"basisPoints"`
		EffectiveAmountSantim *int64 `json:"effectiveAmountSantim"`
		EffectiveBasisPoints  *int64 `json:"effectiveBasisPoints"`
	}

	base := "/api/employees/" + emp + "/allowances"
	// An amount in the other unit than the definition's: 422, nothing assigned.
	rec = owner.call(http.MethodPost, base, map[string]any{"allowanceId": allowance, "basisPoints": 100})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "AMOUNT_KIND_MISMATCH", errCode(rec))
	require.Contains(t, rec.Body.String(), `"field":"basisPoints"`)
	rec = owner.call(http.MethodPost, base, map[string]any{"allowanceId": allowance, "amountSantim": 75000})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	got := decode[assignmentOut](t, rec)
	require.Equal(t, int64(75000), *got.AmountSantim)
	require.Equal(t, int64(75000), *got.EffectiveAmountSantim, "the employee's own amount wins")
	require.Nil(t, got.BasisPoints)
	require.Nil(t, got.EffectiveBasisPoints, "a fixed allowance has no share of gross")

	deductions := "/api/employees/" + emp + "/deductions"
	rec = owner.call(http.MethodPost, deductions, map[string]any{"deductionId": deduction, "amountSantim": 100})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "AMOUNT_KIND_MISMATCH", errCode(rec))
	rec = owner.call(http.MethodPost, deductions, map[string]any{"deductionId": deduction})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	ded := decode[assignmentOut](t, rec)
	require.Nil(t, ded.BasisPoints, "none of its own")
	require.Equal(t, int64(150), *ded.EffectiveBasisPoints, "the definition's")
	require.Nil(t, ded.EffectiveAmountSantim)

	rec = owner.call(http.MethodPost, base, map[string]any{"allowanceId": allowance})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "ALREADY_ASSIGNED", errCode(rec))
	rec = owner.hostile(http.MethodPost, base, map[string]any{"deductionId": allowance})
	require.Equal(t, http.StatusBadRequest, rec.Code, "the deductions field on the allowances route")
	for _, body := range []map[string]any{
		{"allowanceId": allowance, "amountSantim": -1},
		{"allowanceId": allowance, "amountSantim": 1_000_000_001},
		{"allowanceId": allowance, "basisPoints": 10_001},
		{"allowanceId": allowance, "amountSantim": 1, "basisPoints": 1},
		{"allowanceId": allowance, "amount": 1},
	} {
		require.Error(t, owner.documentVerdict(http.MethodPost, base, body), "the document refuses %v too", body)
		rec = owner.hostile(http.MethodPost, base, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", body, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec))
	}

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
	f.Add(uint8(1), emp, "x", `{"allowanceId":"alw_x","amountSantim":9223372036854775807}`)
	f.Add(uint8(4), emp, "x", `{"deductionId":"","basisPoints":-9223372036854775808}`)
	f.Add(uint8(1), emp, "x", `{"allowanceId":"alw_x","amountSantim":1,"basisPoints":1}`)
	f.Add(uint8(4), emp, "x", `{"deductionId":"ded_x","basisPoints":10000}`)
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
