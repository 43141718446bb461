package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// equbStack is the EWA stack (API, ledger, gateway and sandbox, Temporal, a worker) with an equb
// escrow account at the sandbox and n members: each an org member of the business signed in,
// linked to an ACTIVE employee whose payout account at the sandbox holds memberBalance.
type equbStack struct {
	*ewaStack
	escrow  string
	members []equbMemberClient
}

type equbMemberClient struct {
	*apiClient
	employee, account string
}

const equbMemberBalance int64 = 10_000_000

var equbNationalIDs atomic.Int64

func newEqubStack(t testing.TB, o ewaStackOpts, n int) *equbStack {
	t.Helper()
	s := &equbStack{ewaStack: newEwaStack(t, o)}
	s.escrow = testkit.Unique("escrow")
	s.bank.Account(t, s.escrow, "Equb Escrow", 0)
	for i := range n {
		s.members = append(s.members, s.addEqubMember(t, i))
	}
	return s
}

// addEqubMember adds a plain member linked to a new employee with their own sandbox account.
func (s *equbStack) addEqubMember(t testing.TB, i int) equbMemberClient {
	t.Helper()
	email := fmt.Sprintf("%s@equb.test", testkit.Unique("m"))
	s.addMember(s.tenant, email, orgs.PlainMember)
	acct := testkit.Unique("eqacct")
	holder := fmt.Sprintf("Member %c Equb", 'A'+rune(i%26))
	s.bank.Account(t, acct, holder, equbMemberBalance)
	rec := s.owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Member", "lastName": "Equb", "nationalId": fmt.Sprintf("EQ%08d", equbNationalIDs.Add(1)), "hireDate": "2024-01-01",
		"grossMonthlySalarySantim": 1_000_000,
		"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": acct, "holderName": holder},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	emp := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	ctx := context.Background()
	u, err := identity.UserByEmail(ctx, s.d.App, email)
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, s.tenant)
	require.NoError(t, tenancy.InTx(tctx, s.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, emp)
		return err
	}))
	return equbMemberClient{apiClient: s.signIn(email), employee: emp, account: acct}
}

func (s *equbStack) createGroup(t testing.TB, order string, allowChanges bool, contribution int64) equbGroupJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/equb/groups", map[string]any{"name": "Circle " + order, "contributionSantim": contribution,
		"maxMembers": 10, "payoutOrder": order, "allowChangesAfterStart": allowChanges,
		"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": s.escrow}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[equbGroupJSON](t, rec)
}

func (s *equbStack) joinAll(t testing.TB, g equbGroupJSON) {
	t.Helper()
	for _, m := range s.members {
		rec := m.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/join", nil)
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
}

func (s *equbStack) openCycle(t testing.TB, g equbGroupJSON) equbCycleJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/cycles", nil)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[equbCycleJSON](t, rec)
}

func (s *equbStack) group(t testing.TB, id string) equbGroupJSON {
	t.Helper()
	rec := s.owner.call(http.MethodGet, "/api/equb/groups/"+id, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[equbGroupJSON](t, rec)
}

// TestEqubGroupsMembershipAndCycles: an organizer creates a group (its escrow account looked up at
// the partner: an unknown one is refused and nothing stored); members join (once; an org member
// without an employee cannot); the first cycle fixes the order and binds the escrow ACTIVE with
// its pool account; then joining and leaving are locked; cycles are the organizer's and the
// members' to see (another member and another organization get 404); /api/me/equb/groups lists
// the caller's own.
func TestEqubGroupsMembershipAndCycles(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 3)

	rec := s.owner.call(http.MethodPost, "/api/equb/groups", map[string]any{"name": "Nowhere", "contributionSantim": 10_000,
		"maxMembers": 5, "payoutOrder": "FIXED", "escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": "no-such-acct"}})
	requireStatus(t, rec, http.StatusUnprocessableEntity, "EQUB_ESCROW_ACCOUNT_NOT_FOUND")
	requireStatus(t, s.members[0].call(http.MethodPost, "/api/equb/groups", map[string]any{"name": "Mine", "contributionSantim": 10_000,
		"maxMembers": 5, "payoutOrder": "FIXED", "escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": s.escrow}}),
		http.StatusForbidden, "INSUFFICIENT_ROLE")

	g := s.createGroup(t, equb.OrderFixed, false, 10_000)
	require.Equal(t, "FORMING", g.Status)
	requireStatus(t, s.owner.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/cycles", nil), http.StatusConflict, "EQUB_NOT_ENOUGH_MEMBERS")

	s.joinAll(t, g)
	requireStatus(t, s.members[0].call(http.MethodPost, "/api/equb/groups/"+g.ID+"/join", nil), http.StatusConflict, "EQUB_ALREADY_MEMBER")
	requireStatus(t, s.owner.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/join", nil), http.StatusConflict, "EQUB_EMPLOYEE_NOT_ACTIVE")
	requireStatus(t, s.other.call(http.MethodGet, "/api/equb/groups/"+g.ID, nil), http.StatusNotFound, "EQUB_GROUP_NOT_FOUND")

	// A fourth member joins and leaves while the group is FORMING.
	late := s.addEqubMember(t, 3)
	require.Equal(t, http.StatusCreated, late.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/join", nil).Code)
	rec = late.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/leave", map[string]any{})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "LEFT", decode[equbMemberJSON](t, rec).Status)

	c := s.openCycle(t, g)
	require.Equal(t, 1, c.Number)
	require.Equal(t, "OPEN", c.Status)
	require.Equal(t, 3, c.MembersDue)
	require.NotNil(t, c.EscrowBinding)
	require.Equal(t, "ACTIVE", c.EscrowBinding.Status)
	require.Equal(t, "equb:pool:"+s.tenant+":"+c.ID, c.EscrowBinding.LedgerPoolAccountID)
	require.Equal(t, s.escrow, c.EscrowBinding.PartnerAccountID)
	requireStatus(t, s.owner.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/cycles", nil), http.StatusConflict, "EQUB_CYCLE_IN_PROGRESS")

	got := s.group(t, g.ID)
	require.Equal(t, "RUNNING", got.Status)
	require.Equal(t, 3, got.CyclesTotal)
	require.Nil(t, got.LotterySeed)
	var order []string
	for _, m := range got.Members {
		if m.Status == "ACTIVE" {
			require.NotNil(t, m.Position)
			order = append(order, m.EmployeeID)
			require.Equal(t, len(order), *m.Position, "FIXED pays in join order")
		}
	}
	require.Equal(t, []string{s.members[0].employee, s.members[1].employee, s.members[2].employee}, order)
	require.Equal(t, got.Members[0].ID, c.RecipientID)

	// Started, and the group allows no changes.
	requireStatus(t, late.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/join", nil), http.StatusConflict, "EQUB_CHANGES_LOCKED")
	requireStatus(t, s.members[1].call(http.MethodPost, "/api/equb/groups/"+g.ID+"/leave", map[string]any{}), http.StatusConflict, "EQUB_CHANGES_LOCKED")

	// Cycles: the organizer and the members; not another member, not another organization.
	rec = s.members[2].call(http.MethodGet, "/api/equb/groups/"+g.ID+"/cycles", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, decode[equbCycleListJSON](t, rec).Items, 1)
	require.Equal(t, http.StatusOK, s.owner.call(http.MethodGet, "/api/equb/groups/"+g.ID+"/cycles", nil).Code)
	requireStatus(t, late.call(http.MethodGet, "/api/equb/groups/"+g.ID+"/cycles", nil), http.StatusNotFound, "EQUB_GROUP_NOT_FOUND")
	requireStatus(t, s.other.call(http.MethodGet, "/api/equb/groups/"+g.ID+"/cycles", nil), http.StatusNotFound, "EQUB_GROUP_NOT_FOUND")

	// The caller's own.
	rec = s.members[0].call(http.MethodGet, "/api/me/equb/groups", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	mine := decode[equbGroupListJSON](t, rec)
	require.Len(t, mine.Items, 1)
	require.Equal(t, g.ID, mine.Items[0].ID)
	rec = late.call(http.MethodGet, "/api/me/equb/groups", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[equbGroupListJSON](t, rec).Items)
	requireStatus(t, s.owner.call(http.MethodGet, "/api/me/equb/groups", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	rec = s.members[0].call(http.MethodGet, "/api/me/equb/contributions", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = s.members[0].call(http.MethodGet, "/api/me/equb/payouts", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// A lottery group records its seed, and the seed draws the order again.
	lg := s.createGroup(t, equb.OrderLottery, true, 10_000)
	s.joinAll(t, lg)
	s.openCycle(t, lg)
	lgot := s.group(t, lg.ID)
	require.NotNil(t, lgot.LotterySeed)
	ids := make([]string, 0, len(lgot.Members))
	for _, m := range lgot.Members {
		ids = append(ids, m.ID)
	}
	drawn := equb.LotteryOrder(*lgot.LotterySeed, ids)
	for _, m := range lgot.Members {
		require.Equal(t, m.ID, drawn[*m.Position-1], "position %d", *m.Position)
	}

	// A group that allows changes takes a late member, paid last.
	rec = late.call(http.MethodPost, "/api/equb/groups/"+lg.ID+"/join", nil)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	lm := decode[equbMemberJSON](t, rec)
	require.NotNil(t, lm.Position)
	require.Equal(t, 4, *lm.Position)
}

// TestEqubLotteryOrderIsTheSeeds: the draw depends only on the seed and the members, not on the
// order they are given in; another seed draws (almost surely) another order.
func TestEqubLotteryOrderIsTheSeeds(t *testing.T) {
	t.Parallel()
	ids := []string{"eqm_a", "eqm_b", "eqm_c", "eqm_d", "eqm_e"}
	seed := "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	a := equb.LotteryOrder(seed, ids)
	b := equb.LotteryOrder(seed, []string{"eqm_e", "eqm_c", "eqm_a", "eqm_d", "eqm_b"})
	require.Equal(t, a, b)
	require.ElementsMatch(t, ids, a)
	require.NotEqual(t, a, equb.LotteryOrder("ff"+seed[2:], ids))
}

// FuzzEqubRoutes: every equb route (groups, membership, cycles, the caller's own, contribute and
// payout) with any path parameters, query and body, as a member, the organizer or a stranger,
// answers 4xx or success with the error envelope, never 5xx.
func FuzzEqubRoutes(f *testing.F) {
	s := newEqubStack(f, ewaStackOpts{}, 1)
	s.srv.deps.EqubMoneyMovement = true
	g := s.createGroup(f, equb.OrderFixed, true, 10_000)
	routes := append(s.srv.equbRoutes(), s.srv.equbMoneyRoutes()...)
	f.Add(uint8(0), uint8(1), g.ID, "1", "", `{"name":"Fuzz","contributionSantim":1000,"maxMembers":3,"payoutOrder":"FIXED","escrowAccount":{"partner":"sandbox","accountNumber":"`+s.escrow+`"}}`)
	f.Add(uint8(0), uint8(1), g.ID, "1", "", `{"name":" x","contributionSantim":1e400,"maxMembers":-1,"payoutOrder":"BID","escrowAccount":{"partner":"A:B","accountNumber":"\u0000"}}`)
	f.Add(uint8(0), uint8(1), g.ID, "1", "", `{"name":"x","extra":1}`)
	f.Add(uint8(0), uint8(1), g.ID, "1", "", `{"name":"Fuzz","contributionSantim":1000,"maxMembers":3,"payoutOrder":"FIXED","defaultRule":"PAY_COLLECTED","contributionDueHours":1,"escrowAccount":{"partner":"sandbox","accountNumber":"`+s.escrow+`"}}`)
	f.Add(uint8(0), uint8(1), g.ID, "1", "", `{"name":"Fuzz","contributionSantim":1000,"maxMembers":3,"payoutOrder":"FIXED","defaultRule":null,"contributionDueHours":9e99,"escrowAccount":{"partner":"sandbox","accountNumber":"`+s.escrow+`"}}`)
	f.Add(uint8(0), uint8(1), g.ID, "1", "", `{"name":"Fuzz","contributionSantim":1000,"maxMembers":3,"payoutOrder":"FIXED","defaultRule":"wait","contributionDueHours":-2147483649,"escrowAccount":{"partner":"sandbox","accountNumber":"`+s.escrow+`"}}`)
	f.Add(uint8(1), uint8(0), g.ID, "1", "limit=1&cursor=equb_zzz", "")
	f.Add(uint8(1), uint8(0), g.ID, "1", "limit=0&cursor=%ff%00", "")
	f.Add(uint8(2), uint8(0), "%ff%00", "1", "", "")
	f.Add(uint8(3), uint8(0), g.ID, "1", "", "")
	f.Add(uint8(4), uint8(0), g.ID, "1", "", `{"acknowledgeSettlement":"yes"}`)
	f.Add(uint8(4), uint8(0), g.ID, "1", "", `{"acknowledgeSettlement":true}`)
	f.Add(uint8(5), uint8(1), g.ID, "1", "", "")
	f.Add(uint8(6), uint8(2), g.ID, "1", "", "")
	f.Add(uint8(7), uint8(0), "", "", "limit=101", "")
	f.Add(uint8(10), uint8(0), g.ID, "1", "", "")
	f.Add(uint8(11), uint8(1), g.ID, "99", "", "")
	f.Add(uint8(11), uint8(1), g.ID, "01", "", "")
	f.Add(uint8(11), uint8(1), "eqc_"+strings.Repeat("x", 300), "-1", "", "")
	// 12: POST .../contribution-mandate (the payroll-deduction opt-in).
	f.Add(uint8(12), uint8(0), g.ID, "", "", `{"startPeriod":"2026-11"}`)
	f.Add(uint8(12), uint8(0), g.ID, "", "", `{"startPeriod":"2026-11","endPeriod":"2026-10"}`)
	f.Add(uint8(12), uint8(0), g.ID, "", "", `{"startPeriod":"2026-13","endPeriod":""}`)
	f.Add(uint8(12), uint8(0), g.ID, "", "", `{"startPeriod":null,"amountSantim":1e400}`)
	f.Add(uint8(12), uint8(1), g.ID, "", "", `{"startPeriod":"2026-11"}`)
	f.Add(uint8(12), uint8(2), g.ID, "", "", `{"startPeriod":"2026-11"}`)
	f.Add(uint8(12), uint8(0), "%ff%00", "", "", `[]`)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, route, who uint8, id, cycle, query, body string) {
		r := routes[int(route)%len(routes)]
		path := strings.ReplaceAll(strings.ReplaceAll(r.Path, ":id", url.PathEscape(id)), ":cycle", url.PathEscape(cycle))
		key := fmt.Sprintf("fuzz-equb-%d", n.Add(1))
		// A money route whose saga had not decided in time answers 503 DECISION_PENDING (not
		// stored): the client sends the same request with the same key again.
		rec := untilDecided(func() *httptest.ResponseRecorder {
			req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
			req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if r.Idem {
				req.Header.Set("Idempotency-Key", key)
			}
			req.RemoteAddr = "192.0.2.83:40000"
			switch who % 3 {
			case 0:
				req.AddCookie(s.members[0].cookie)
			case 1:
				req.AddCookie(s.owner.cookie)
			case 2:
				req.AddCookie(s.other.cookie)
			}
			rec := httptest.NewRecorder()
			s.srv.Engine.ServeHTTP(rec, req)
			return rec
		})
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}
