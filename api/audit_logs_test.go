package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

type auditLogPage struct {
	Items      []auditLogJSON `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

// auditLogsAll follows a list's pages from path (which carries its filters) to the end, checking
// that each page is newest first and carries no row twice.
func auditLogsAll(t *testing.T, a *apiClient, path string) []auditLogJSON {
	t.Helper()
	var all []auditLogJSON
	next := path
	for {
		rec := a.call(http.MethodGet, next, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		page := decode[auditLogPage](t, rec)
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			break
		}
		next = path + "&cursor=" + *page.NextCursor
	}
	for i := 1; i < len(all); i++ {
		prev, _ := strconv.ParseInt(all[i-1].ID, 10, 64)
		cur, _ := strconv.ParseInt(all[i].ID, 10, 64)
		require.Greater(t, prev, cur, "newest first, each row once")
	}
	return all
}

func auditActions(rows []auditLogJSON) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Action
	}
	return out
}

// An organization's owner and admins read its whole trail, newest first, in pages, filtered by
// actor, action, outcome, target and time, and nothing of another organization's; a plain member
// is refused. A platform admin reads any tenant's, the platform-wide rows (its own read among them,
// as CrossTenantAccess) and all of them at once. Each filter answers exactly the rows the database
// holds for it.
func TestAuditLogsReadTheTrail(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, a := f.signUp("audit-owner-a@example.com", "BUSINESS")
	ownerB, b := f.signUp("audit-owner-b@example.com", "BUSINESS")
	tenantA, tenantB := a.Organization.ID, b.Organization.ID
	f.addMember(tenantA, "audit-admin-a@example.com", orgs.Admin)
	f.addMember(tenantA, "audit-member-a@example.com", orgs.PlainMember)
	admin, member := f.signIn("audit-admin-a@example.com"), f.signIn("audit-member-a@example.com")
	platform := f.platformAdmin("audit-platform@example.com")

	ctx := context.Background()
	write := func(tenant, actor, action string, outcome audit.Outcome, target string) {
		actx := tenancy.With(ctx, tenancy.Scope{TenantID: tenant, Actor: actor, RequestID: "req-" + action})
		require.NoError(t, tenancy.InTx(actx, f.d.App, func(tx pgx.Tx) error {
			return audit.Write(actx, tx, audit.Entry{Action: action, Outcome: outcome, TargetType: "EwaRequest", TargetID: target,
				Details: map[string]any{"n": target}})
		}))
	}
	clock := func() time.Time {
		var now time.Time
		require.NoError(t, f.d.App.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now))
		return now
	}
	for i := range 12 {
		outcome := audit.Success
		if i%4 == 3 {
			outcome = audit.Denied
		}
		write(tenantA, []string{"user-audit-1", "system:ewa"}[i%2], []string{"DisburseEwa", "CancelEwa", "RequestEwa"}[i%3], outcome, fmt.Sprintf("ewa_%d", i%5))
		write(tenantB, "user-audit-1", "DisburseEwa", audit.Success, "ewa_0") // the same actor and target in another tenant
	}
	mid := clock()
	for i := range 6 {
		write(tenantA, "user-audit-2", "DisburseEwa", audit.Failed, fmt.Sprintf("ewa_late_%d", i))
	}

	count := func(where string, args ...any) int {
		return f.tenantCount(tenantA, `SELECT count(*) FROM app.audit_log WHERE `+where, args...)
	}
	all := auditLogsAll(t, owner, "/api/audit-logs?limit=7")
	require.Len(t, all, count("true"))
	require.GreaterOrEqual(t, len(all), 18)
	for _, r := range all {
		require.Equal(t, tenantA, r.TenantID)
	}
	require.Equal(t, "DisburseEwa", all[0].Action, "the newest row first")
	require.Equal(t, "user-audit-2", all[0].Actor)
	require.Equal(t, audit.Failed, audit.Outcome(all[0].Outcome))
	require.NotNil(t, all[0].RequestID)
	require.Equal(t, "req-DisburseEwa", *all[0].RequestID)
	require.JSONEq(t, `{"n":"ewa_late_5"}`, string(all[0].Details))
	require.Equal(t, all, auditLogsAll(t, admin, "/api/audit-logs?limit=100"), "an admin reads the same trail")

	for filter, want := range map[string]int{
		"actor=user-audit-1":                                    count("actor = $1", "user-audit-1"),
		"actor=system%3Aewa":                                    count("actor = $1", "system:ewa"),
		"action=DisburseEwa":                                    count("action = $1", "DisburseEwa"),
		"action=DisburseEwa&actor=user-audit-1":                 count("action = $1 AND actor = $2", "DisburseEwa", "user-audit-1"),
		"outcome=DENIED":                                        count("outcome = 'DENIED'"),
		"outcome=FAILED":                                        6,
		"targetType=EwaRequest&targetId=ewa_0":                  count("target_type = 'EwaRequest' AND target_id = 'ewa_0'"),
		"targetId=ewa_late_3":                                   1,
		"from=" + url.QueryEscape(mid.Format(time.RFC3339Nano)): 6,
		"to=" + url.QueryEscape(mid.Format(time.RFC3339Nano)):   count("occurred_at < $1", mid),
		"action=Nothing":                                        0,
	} {
		rows := auditLogsAll(t, owner, "/api/audit-logs?limit=3&"+filter)
		require.Len(t, rows, want, filter)
		q, _ := url.ParseQuery(filter)
		for _, r := range rows {
			for k, v := range map[string]string{"actor": r.Actor, "action": r.Action, "outcome": r.Outcome, "targetId": r.TargetID} {
				if q.Has(k) {
					require.Equal(t, q.Get(k), v, filter)
				}
			}
			if q.Has("from") {
				require.False(t, r.OccurredAt.Before(mid), filter)
			}
		}
	}
	require.Equal(t, 2, count("actor = $1 AND action = $2", "user-audit-1", "DisburseEwa"), "the seed's shape")

	// Tenant B's owner sees B's trail only; a plain member of A sees nothing.
	for _, r := range auditLogsAll(t, ownerB, "/api/audit-logs?actor=user-audit-1") {
		require.Equal(t, tenantB, r.TenantID)
	}
	rec := member.call(http.MethodGet, "/api/audit-logs", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = owner.call(http.MethodGet, "/api/admin/audit-logs", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))

	// The platform admin: one tenant's trail is the owner's; "*" holds its own reads; no tenantId
	// is every tenant's.
	all = auditLogsAll(t, owner, "/api/audit-logs?limit=100")
	require.Equal(t, "AccessRoute", all[0].Action, "the member's refusal is on the trail")
	require.Equal(t, audit.Denied, audit.Outcome(all[0].Outcome))
	require.Equal(t, all, auditLogsAll(t, platform, "/api/admin/audit-logs?limit=100&tenantId="+tenantA))
	rows := auditLogsAll(t, platform, "/api/admin/audit-logs?tenantId=*&action="+crosstenant.Action+"&limit=100")
	require.NotEmpty(t, rows)
	require.Equal(t, crosstenant.PlatformTenant, rows[0].TenantID)
	require.Equal(t, audit.Success, audit.Outcome(rows[0].Outcome))
	both := auditLogsAll(t, platform, "/api/admin/audit-logs?actor=user-audit-1&targetId=ewa_0&limit=100")
	tenants := map[string]int{}
	for _, r := range both {
		tenants[r.TenantID]++
	}
	require.Equal(t, map[string]int{tenantA: count("actor = 'user-audit-1' AND target_id = 'ewa_0'"), tenantB: 12}, tenants)

	// Bad queries are refused with 400 and the field named.
	for query, field := range map[string]string{
		"actor=%00":                       "actor",
		"actor=" + url.QueryEscape("a b"): "actor",
		"action=disburseEwa":              "action",
		"targetType=" + url.QueryEscape("Ewa\u200bRequest"): "targetType",
		"outcome=OK": "outcome",
		"cursor=0":   "cursor",
		"cursor=007": "cursor",
		"limit=101":  "limit",
		"from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z": "to",
		"from=yesterday":      "from",
		"action=A&action=B":   "action",
		"tenantId=" + tenantB: "tenantId",
		"sort=id":             "sort",
	} {
		rec := owner.hostile(http.MethodGet, "/api/audit-logs?"+query, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, query)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, query)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, field), string(body.Error.Details), query)
	}
	for _, query := range []string{"tenantId=..%2Fx", "tenantId=%2A%2A", "tenantId=" + url.QueryEscape("a\u00e9")} {
		rec := platform.hostile(http.MethodGet, "/api/admin/audit-logs?"+query, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, query)
	}
	require.True(t, slices.Contains(auditActions(all), "CancelEwa"))
}
