package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

type inFlightRowsJSON struct {
	Saga  string            `json:"saga"`
	Items []inFlightRowJSON `json:"items"`
}

// TestAdminInFlight: a platform admin reads every kind's count and oldest age, then a kind's
// oldest rows over every tenant with their tenant, key and workflow id; an unknown kind is 404;
// organizations' members and anonymous callers are refused; bad queries are 400.
func TestAdminInFlight(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	run := func(tenant, period, status, age string) string {
		id := "prun_" + testkit.Unique("i")
		dashFixture(t, w.f.d, tenant, []any{`INSERT INTO app.payroll_runs (id, tenant_id, period, status, created_by, calculated_by,
				calculated_at, approved_by, approved_at, disbursement_workflow_id, disbursing_at, disbursing_by)
			VALUES ($1, $2, $3, $4, 'maker', 'maker', now(), 'checker', now(), 'wf-' || $1, now() - $5::interval, 'checker')`,
			id, tenant, period, status, age})
		return id
	}
	older := run(w.b, "2026-10", "DISBURSING", "3 hours")
	newer := run(w.a, "2026-10", "DISBURSING", "5 minutes")
	run(w.a, "2026-09", "COMPLETED", "40 days")

	rec := w.platform.call(http.MethodGet, "/api/admin/in-flight", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	summary := decode[struct {
		Kinds []inFlightKindJSON `json:"kinds"`
	}](t, rec).Kinds
	require.Len(t, summary, len(workflows.InFlight()))
	for _, k := range summary {
		if k.Saga == "payroll_disburse" {
			require.Equal(t, int64(2), k.Count)
			require.InDelta(t, 3*3600, k.OldestAgeSeconds, 120)
			continue
		}
		require.Equal(t, inFlightKindJSON{Saga: k.Saga}, k)
	}

	rec = w.platform.call(http.MethodGet, "/api/admin/in-flight/payroll_disburse", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rows := decode[inFlightRowsJSON](t, rec)
	require.Equal(t, "payroll_disburse", rows.Saga)
	require.Len(t, rows.Items, 2)
	require.Equal(t, [2]string{w.b, older}, [2]string{rows.Items[0].TenantID, rows.Items[0].Key}, "oldest first")
	require.Equal(t, [2]string{w.a, newer}, [2]string{rows.Items[1].TenantID, rows.Items[1].Key})
	require.Equal(t, "wf-"+older, *rows.Items[0].WorkflowID)
	require.InDelta(t, 3*3600, rows.Items[0].AgeSeconds, 120)
	rec = w.platform.call(http.MethodGet, "/api/admin/in-flight/payroll_disburse?limit=1", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, decode[inFlightRowsJSON](t, rec).Items, 1)
	rec = w.platform.call(http.MethodGet, "/api/admin/in-flight/loan_remit", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[inFlightRowsJSON](t, rec).Items)

	requireStatus(t, w.platform.call(http.MethodGet, "/api/admin/in-flight/no_such_saga", nil), http.StatusNotFound, "IN_FLIGHT_KIND_NOT_FOUND")
	for _, path := range []string{"/api/admin/in-flight", "/api/admin/in-flight/payroll_disburse"} {
		for _, a := range []*apiClient{w.owner, w.admin, w.member} {
			requireStatus(t, a.call(http.MethodGet, path, nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		}
		requireStatus(t, w.anon.call(http.MethodGet, path, nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	}
	for _, path := range []string{"/api/admin/in-flight?saga=x", "/api/admin/in-flight?&", "/api/admin/in-flight/payroll_disburse?limit=0",
		"/api/admin/in-flight/payroll_disburse?limit=101", "/api/admin/in-flight/payroll_disburse?limit=1&limit=2",
		"/api/admin/in-flight/payroll_disburse?tenantId=x"} {
		requireStatus(t, w.platform.hostile(http.MethodGet, path, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
}
