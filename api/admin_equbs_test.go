package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// adminEqubGroup creates a FORMING group of business o at created (equb.CreateGroup, as the
// organizer's route stores it once the escrow account is confirmed) with members ACTIVE members.
func adminEqubGroup(t *testing.T, o *payrolltest.Org, name string, contribution int64, created time.Time, members int) string {
	t.Helper()
	var id string
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		g, err := equb.CreateGroup(ctx, tx, equb.GroupInput{Name: name, ContributionSantim: contribution, MaxMembers: 10,
			PayoutOrder: equb.OrderLottery, EscrowPartner: "sandbox", EscrowAccountNumber: "OTHER-ESCROW-77"}, created)
		if err != nil {
			return err
		}
		id = g.ID
		for range members {
			m := "eqm_" + identity.NewID()
			if _, err := tx.Exec(ctx, `INSERT INTO app.equb_memberships (id, tenant_id, group_id, employee_id, user_id, status, joined_at)
				VALUES ($1, app.current_tenant(), $2, $3, $4, 'ACTIVE', $5)`, m, g.ID, "emp_"+m, "usr_"+m, created); err != nil {
				return err
			}
		}
		return nil
	}))
	return id
}

// TestAdminEqubList: a platform admin lists every business's equb groups: one formed through the
// routes (its members joined, its first round open) and others of a second business, newest
// first, each with its business's name, its members, its per-round pot, its current round and its
// escrow partner (never the escrow account's number); narrowed by state, business and window;
// paged without a duplicate or a gap; the totals are the items' sums. The read is audited as a
// cross-tenant access. Everyone else is refused; a bad query is 400 naming the field and writes
// nothing.
func TestAdminEqubList(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 2)
	platform := s.reviewer

	// Through the routes: a group the members join and whose first round opens, and one still forming.
	running := s.createGroup(t, equb.OrderFixed, false, 25_000)
	s.joinAll(t, running)
	s.openCycle(t, running)
	forming := s.createGroup(t, equb.OrderLottery, true, 10_000)
	at := s.group(t, running.ID).CreatedAt
	require.False(t, s.group(t, forming.ID).CreatedAt.Before(at))

	// A second business, its groups written by the store.
	other := payrolltest.NewOrg(t, s.d)
	newest := adminEqubGroup(t, other, "Newest", 5_000, at.Add(time.Hour), 3)
	oldest := adminEqubGroup(t, other, "Oldest", 100, at.Add(-time.Hour), 0)
	newestFirst := []string{newest, forming.ID, running.ID, oldest}

	list := func(query string) adminEqubListJSON {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/equbs"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NotContains(t, rec.Body.String(), s.escrow, "never the escrow account's number")
		require.NotContains(t, rec.Body.String(), "OTHER-ESCROW-77")
		return decode[adminEqubListJSON](t, rec)
	}
	ids := func(p adminEqubListJSON) []string {
		out := []string{}
		for _, g := range p.Items {
			out = append(out, g.ID)
		}
		return out
	}
	requireTotals := func(p adminEqubListJSON, status string) {
		t.Helper()
		want := map[string]adminEqubTotalJSON{}
		for _, st := range equb.GroupStatuses {
			if status == "" || status == st {
				want[st] = adminEqubTotalJSON{}
			}
		}
		for _, g := range p.Items {
			w := want[g.Status]
			w.Count++
			w.PotSantim += g.PotSantim
			want[g.Status] = w
		}
		require.Equal(t, want, p.Totals)
	}

	platformID := bizUserID(t, platform)
	before := bizAudits(t, s.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	all := list("")
	require.Equal(t, before+1, bizAudits(t, s.d, "*", "CrossTenantAccess", "SUCCESS", platformID), "the read is audited")
	if forming.ID < running.ID && s.group(t, forming.ID).CreatedAt.Equal(at) { // made in the same instant: by id
		newestFirst[1], newestFirst[2] = running.ID, forming.ID
	}
	require.Equal(t, newestFirst, ids(all))
	require.Nil(t, all.NextCursor)
	requireTotals(all, "")
	byID := map[string]adminEqubJSON{}
	for _, g := range all.Items {
		byID[g.ID] = g
	}
	type view struct {
		Business, BusinessName, Name, Status, Partner string
		Members, Pot                                  int64
		Rounds                                        int
	}
	viewOf := func(g adminEqubJSON) view {
		return view{g.BusinessID, g.BusinessName, g.Name, g.Status, g.EscrowPartner, g.ActiveMembers, g.PotSantim, g.RoundsTotal}
	}
	bizName, otherName := "Org of owner@kyc.test", "Org "+other.ID
	require.Equal(t, view{s.tenant, bizName, running.Name, "RUNNING", "sandbox", 2, 50_000, 2}, viewOf(byID[running.ID]))
	require.Equal(t, view{s.tenant, bizName, forming.Name, "FORMING", "sandbox", 0, 0, 0}, viewOf(byID[forming.ID]))
	require.Equal(t, view{other.ID, otherName, "Newest", "FORMING", "sandbox", 3, 15_000, 0}, viewOf(byID[newest]))
	require.Equal(t, view{other.ID, otherName, "Oldest", "FORMING", "sandbox", 0, 0, 0}, viewOf(byID[oldest]))
	r := byID[running.ID]
	require.NotNil(t, r.CurrentRound)
	require.Equal(t, [3]any{1, "OPEN", (*time.Time)(nil)}, [3]any{r.CurrentRound.Number, r.CurrentRound.Status, r.CurrentRound.PaidAt})
	require.Equal(t, r.CurrentRound.OpenedAt.Add(time.Duration(r.ContributionDueHours)*time.Hour), r.CurrentRound.DueAt)
	require.Equal(t, [4]any{int64(25_000), "FIXED", "WAIT", 10}, [4]any{r.ContributionSantim, r.PayoutOrder, r.DefaultRule, r.MaxMembers})
	require.Nil(t, byID[forming.ID].CurrentRound)
	require.Equal(t, "LOTTERY", byID[newest].PayoutOrder)

	// Filters, alone and together.
	window := "&from=" + url.QueryEscape(at.Add(-30*time.Minute).Format(time.RFC3339Nano)) +
		"&to=" + url.QueryEscape(at.Add(time.Hour).Format(time.RFC3339Nano))
	only := func(keep ...string) []string {
		in := map[string]bool{}
		for _, id := range keep {
			in[id] = true
		}
		out := []string{}
		for _, id := range newestFirst {
			if in[id] {
				out = append(out, id)
			}
		}
		return out
	}
	for q, want := range map[string][]string{
		"?status=FORMING":                             only(newest, forming.ID, oldest),
		"?status=RUNNING":                             only(running.ID),
		"?status=COMPLETED":                           only(),
		"?businessId=" + other.ID:                     only(newest, oldest),
		"?businessId=" + s.tenant + "&status=FORMING": only(forming.ID),
		"?limit=100" + window:                         only(forming.ID, running.ID),
		"?businessId=nobody":                          only(),
	} {
		p := list(q)
		require.Equal(t, want, ids(p), q)
		status := ""
		if strings.Contains(q, "status=") {
			status = strings.Split(strings.Split(q, "status=")[1], "&")[0]
		}
		requireTotals(p, status)
	}

	// Pages of one: each group once, in order; every page carries the filter's totals.
	var paged []string
	cursor := ""
	for range 10 {
		p := list("?limit=1" + cursor)
		require.Equal(t, all.Totals, p.Totals)
		paged = append(paged, ids(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *p.NextCursor
	}
	require.Equal(t, newestFirst, paged)
	p := list("?cursor=equb_nobody")
	require.Empty(t, p.Items, "a cursor that names no group")
	require.Equal(t, all.Totals, p.Totals)

	// Only platform admins.
	for _, a := range []*apiClient{s.owner, s.other, s.members[0].apiClient} {
		requireStatus(t, a.call(http.MethodGet, "/api/admin/equbs", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, s.client().call(http.MethodGet, "/api/admin/equbs", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field, and nothing written (not even the cross-tenant read's row).
	audits := platformAudits(t, s.d)
	for q, fieldName := range map[string]string{
		"?merchantId=x":                  "merchantId",
		"?status=forming":                "status",
		"?status=ACTIVE":                 "status",
		"?status=RUNNING&status=FORMING": "status",
		"?status=RUNNING%0A":             "status",
		"?businessId=a%20b":              "businessId",
		"?businessId=%00":                "businessId",
		"?businessId=%F0%9F%92%A9":       "businessId",
		"?from=2027-01-01":               "from",
		"?to=tomorrow":                   "to",
		"?from=2027-01-02T00:00:00Z&to=2027-01-02T00:00:00Z": "to",
		"?limit=-1":                  "limit",
		"?limit=9223372036854775808": "limit",
		"?cursor=..%2F":              "cursor",
		"?cursor=bnpl_x":             "cursor",
		"?cursor=equb_":              "cursor",
	} {
		rec := platform.hostile(http.MethodGet, "/api/admin/equbs"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, audits, platformAudits(t, s.d), "a refused query reads nothing and writes nothing")
}
