package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// TestEveryOperationAnswersHostileInputCleanly is the document-driven sweep beside the hand-seeded
// route fuzz targets: every operation in api/openapi.yaml, on the real stack, as a caller the
// route's guards let through, gets a request the document allows (generated from its schemas)
// and then that request broken one place at a time: each path parameter, each query parameter,
// each body property (two levels deep) and the Idempotency-Key replaced with a hostile value
// (control characters, invalid UTF-8, int64's edges, overlong strings, look-alike and invisible
// characters, wrong JSON types), and whole bodies that are not a JSON object. Every answer must
// be below 500, a refusal must carry the error envelope's code, every answer must be one the
// document allows (status and body), and a request the document allows must not be refused for
// its shape (issue 21's rule, here on every parameter and property) — so a generated client meets
// no surprise on bad input either. Every operation must have a base request the document allows,
// and nine in ten requests must get past the guards, or the sweep would test only the guards. An
// operation on a resource (a path's :id, :memberId, …) is swept on a real one, the first of its list
// (realID), so that its rules past "not found" are reached: eight in ten must be. Before it is
// broken, each base request also races copies of itself (race): no 5xx, and one answer per
// Idempotency-Key. A refusal of bad input on a saga's route must have started no saga (noSaga).
// The figures (operations, requests, share past the guards, statuses) are logged.
func TestEveryOperationAnswersHostileInputCleanly(t *testing.T) {
	t.Parallel()
	// The sweep is some 20,000 requests, one after another: it runs in sweepShards shards side by
	// side, each on a world of its own (newSweep) over the operations of some of the paths' first
	// segments (sweepShardOf: an operation on a resource stays with those that make and list it),
	// in the one order (each shard still sweeps the operations that remove what the others act on
	// last), and the rules below hold for the shards together.
	shards := make([]*sweep, sweepShards)
	var routes []Route
	start := time.Now()
	t.Run("shards", func(t *testing.T) {
		for k := range shards {
			t.Run(strconv.Itoa(k), func(t *testing.T) {
				t.Parallel()
				sw, all := newSweep(t)
				shardOf := sweepShardOf(all)
				for _, r := range all {
					if shardOf(r) == k {
						sw.operation(r)
					}
				}
				sw.requireNoPartnerFault(t)
				shards[k] = sw
				if k == 0 {
					routes = all
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	elapsed := time.Since(start)
	sw := &sweep{statuses: map[int]int{}}
	for _, s := range shards {
		sw.ops, sw.requests, sw.pastGuards, sw.onReal, sw.idOps, sw.sagaChecks = sw.ops+s.ops, sw.requests+s.requests,
			sw.pastGuards+s.pastGuards, sw.onReal+s.onReal, sw.idOps+s.idOps, sw.sagaChecks+s.sagaChecks
		for c, n := range s.statuses {
			sw.statuses[c] += n
		}
		sw.noBase, sw.failures = append(sw.noBase, s.noBase...), append(sw.failures, s.failures...)
		sw.unaudited = append(sw.unaudited, s.unaudited...)
	}
	// One way only: a saga or a consumer writing a row meanwhile can hide a no-op, never make one.
	for _, op := range sw.unaudited {
		require.Contains(t, sweepUnauditedOK, op,
			"a state-changing operation that succeeded wrote no audit row (the trail must show every change: GET /api/audit-logs)")
	}
	var hist []string
	for _, c := range slices.Sorted(maps.Keys(sw.statuses)) {
		hist = append(hist, fmt.Sprintf("%d×%d", c, sw.statuses[c]))
	}
	t.Logf("hostile sweep: %d operations, %d requests in %s (%d shards); %d of them (%.0f%%) past the guards; %d operations without a document-valid base request; %d of %d operations on a resource swept on a real one; %d refusals of bad input on a saga's route started no saga; statuses %s",
		sw.ops, sw.requests, elapsed.Round(time.Millisecond), sweepShards, sw.pastGuards, 100*float64(sw.pastGuards)/float64(sw.requests),
		len(sw.noBase), sw.onReal, sw.idOps, sw.sagaChecks, strings.Join(hist, " "))
	require.Empty(t, sw.noBase, "operations whose schemas the sweep cannot build a request for (teach sweepValue)")
	require.Equal(t, len(routes), sw.ops, "every route is an operation of the document")
	require.GreaterOrEqual(t, 10*sw.pastGuards, 9*sw.requests, "most requests reach the handlers")
	require.GreaterOrEqual(t, 10*sw.onReal, 8*sw.idOps, "most operations on a resource are swept on a real one")
	if len(sw.failures) > 0 {
		t.Fatalf("%d answers break the rules (first %d):\n%s", len(sw.failures), min(len(sw.failures), 600),
			strings.Join(sw.failures[:min(len(sw.failures), 600)], "\n"))
	}
}

// sweepUnauditedOK are the operations of a state-changing method whose base request succeeds in
// the sweep without an audit row, each because it changed nothing: a read by POST (a quote, an
// anonymous passkey challenge), or a request that finds what it asks for already so (the period's
// run exists, there are no settings to remove, the status or the policy is already the one asked,
// the goal is closed). Every other success must be on the trail.
var sweepUnauditedOK = []string{
	"DELETE /api/payroll/auto-lock-policy",
	"DELETE /api/payroll/tenant-settings",
	"POST /api/auth/passkey/generate-authenticate-options",
	"POST /api/bnpl/quotes",
	"POST /api/payroll",
	"POST /api/savings/goals/:id/close",
	"PUT /api/employees/:id/status",
	"PUT /api/organization/security-policy",
}

// sweepShards is how many worlds the sweep runs side by side.
const sweepShards = 3

// sweepShardOf deals routes to the shards by their path's first segment (/api/<segment>/…),
// whole segments at a time, each to the shard with the fewest operations so far, largest
// segment first.
func sweepShardOf(routes []Route) func(Route) int {
	segment := func(r Route) string {
		parts := strings.SplitN(strings.TrimPrefix(r.Path, "/"), "/", 3)
		if len(parts) < 2 {
			return r.Path
		}
		return parts[1]
	}
	ops := map[string]int{}
	for _, r := range routes {
		ops[segment(r)]++
	}
	segments := slices.SortedFunc(maps.Keys(ops), func(a, b string) int {
		if ops[a] != ops[b] {
			return ops[b] - ops[a]
		}
		return strings.Compare(a, b)
	})
	shard, load := map[string]int{}, make([]int, sweepShards)
	for _, seg := range segments {
		k := slices.Index(load, slices.Min(load))
		shard[seg], load[k] = k, load[k]+ops[seg]
	}
	return func(r Route) int { return shard[segment(r)] }
}

// requireNoPartnerFault: bad input opened no breaker and caused no partner fault in the sweep's
// world: whatever reached the bank was a call it could answer.
func (sw *sweep) requireNoPartnerFault(t *testing.T) {
	t.Helper()
	partnerCalls := map[string]float64{}
	ch := make(chan prometheus.Metric, 64)
	go func() { sw.stack.bank.GW.Metrics.PartnerCalls.Collect(ch); close(ch) }()
	for m := range ch {
		var pb dto.Metric
		require.NoError(t, m.Write(&pb))
		for _, l := range pb.GetLabel() {
			if l.GetName() == "result" {
				partnerCalls[l.GetValue()] += pb.GetCounter().GetValue()
			}
		}
	}
	t.Logf("partner calls by result: %v", partnerCalls)
	for _, fault := range []string{"invalid", "unknown", "unavailable"} {
		require.Zero(t, partnerCalls[fault], "partner calls that ended %s", fault)
	}
	require.Equal(t, "closed", sw.stack.gateway.BreakerState(), "the gateway client's breaker")
	require.Equal(t, "closed", sw.stack.ledger.BreakerState(), "the ledger client's breaker")
}

// newSweep is the sweep's world on the real stack (loan and BNPL stacks: a business owner, an FI,
// a merchant, a linked employee, a platform admin, an operator and a second business for the
// platform routes) and the route table in the order it is swept: the operations that remove what
// the others act on go last, the owner's organization last of all.
func newSweep(tb testing.TB) (*sweep, []Route) {
	ls := newLoanStack(tb, ewaStackOpts{})
	bs := bnplOn(tb, ls.ewaStack)
	// The equb routes' handlers, not their master switches' 503.
	bs.srv.deps.EqubMoneyMovement, bs.srv.deps.EqubEscrowRecon = true, true
	// The court-order auto-submit's and the deductions poller's schedules, as a worker with the
	// platform role ensures them: the payroll health is healthy, not 503 MISSING.
	sweepSchedule.use(tb, ls.tc, ls.queue)
	_, victim := bs.signUp("owner@sweep-victim.test", "BUSINESS")
	// One resource of each kind the operations on a resource act on, where the sweep's own
	// creations do not make one: an approved loan, an equb group, a BNPL agreement, a pending
	// KYC submission of a second employee, an invited member of each organization, and a
	// dispute of the employee's over an advance recorded against them.
	ls.approvedLoan(tb, ls.fi, ls.product, 300_000, 3)
	rec := bs.owner.call(http.MethodPost, "/api/kyc", map[string]any{"employeeId": ls.secondEmployee(tb), "fullName": "Hana Girma",
		"nationalId": "ET12345679", "dateOfBirth": "1991-04-05", "photoKey": bs.upload("photo.png", "image/png", uploadsPNG),
		"documents": []map[string]any{{"type": "national_id", "uploadKey": bs.upload("id.pdf", "application/pdf", uploadsPDF)}}})
	require.Equal(tb, http.StatusCreated, rec.Code, rec.Body.String())
	escrow := testkit.Unique("escrow")
	bs.bank.Account(tb, escrow, "Sweep Escrow", 0)
	rec = bs.owner.call(http.MethodPost, "/api/equb/groups", map[string]any{"name": "Sweep circle", "contributionSantim": 10_000,
		"maxMembers": 10, "payoutOrder": "FIXED", "allowChangesAfterStart": true,
		"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": escrow}})
	require.Equal(tb, http.StatusCreated, rec.Code, rec.Body.String())
	rec = bs.owner.call(http.MethodPost, "/api/bnpl/agreements", bs.agreementBody(120_000, 3, "sweep-seed"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(tb, http.StatusAccepted, rec.Code, rec.Body.String())
	employee := bs.linkEmployeeUser(tb, "employee@sweep.test")
	// A member invited to each organization, for the team operations to act on.
	for prefix, o := range map[string]sweepOrg{"/api/business/": {bs.owner, bs.tenant}, "/api/financial-institutions/": {ls.fi, ls.fiID},
		"/api/merchants/": {bs.merchant, bs.merchantID}} {
		rec = o.cl.call(http.MethodPost, prefix+o.id+"/team-members", map[string]any{"email": "invitee-" + o.id + "@sweep.test",
			"name": "Sweep Invitee", "role": "member"})
		require.Equal(tb, http.StatusCreated, rec.Code, rec.Body.String())
	}
	advance, err := bs.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{TenantId: bs.tenant,
		IdempotencyKey: testkit.Unique("sweep-advance"), Entries: []*ledgerv1.EntryInput{
			{AccountName: chart.EmployeeReceivable(bs.employee), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 50_000},
			{AccountName: chart.PayrollClearing, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 50_000},
		}})
	require.NoError(tb, err)
	rec = employee.call(http.MethodPost, "/api/me/disputes", map[string]any{"ledgerTransactionId": advance.GetTransaction().GetId(),
		"reason": "I never took this advance"})
	require.Equal(tb, http.StatusCreated, rec.Code, rec.Body.String())
	sw := &sweep{
		t:        tb,
		stack:    bs,
		auditDB:  bs.d.Platform(tb),
		doc:      openapiDoc(tb),
		anon:     bs.client(),
		platform: bs.reviewer,
		operator: bs.operator("operator@sweep.test"),
		employee: employee,
		orgs: []sweepOrg{
			{bs.owner, bs.tenant}, {ls.fi, ls.fiID}, {bs.merchant, bs.merchantID},
		},
		victim: victim.Organization.ID,
		// The ids a base request names, the stack's own (and the partner bank's name and
		// today), so that the request reaches the rules past "no such resource".
		known: map[string]string{
			"employeeId": bs.employee, "merchantId": bs.merchantID, "productId": ls.product.ID,
			"financialInstitutionId": ls.fiID, "fiId": ls.fiID, "businessId": bs.tenant, "partner": "sandbox",
			"ledgerTransactionId": advance.GetTransaction().GetId(),
			// Today: work of a closed pay period is refused before it is recorded.
			"workDate": time.Now().UTC().Format(time.DateOnly),
		},
		fresh: func(n int) *apiClient {
			// Each from its own address: sign-ups are limited per address.
			c := bs.client()
			c.ip = fmt.Sprintf("198.51.100.%d", n%250+1)
			rec := c.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{
				"email": fmt.Sprintf("sweep-%d@sweep.test", n), "password": testPassword, "name": "Sweep User",
				"organization": map[string]any{"name": fmt.Sprintf("Sweep Org %d", n), "kind": "BUSINESS"}})
			require.Equal(tb, http.StatusCreated, rec.Code, rec.Body.String())
			return c
		},
		statuses: map[int]int{},
	}
	routes := bs.srv.routes()
	rank := func(r Route) int {
		switch {
		case r.Method == http.MethodDelete && r.Path == "/api/business/:id":
			return 2
		case r.Method == http.MethodDelete, strings.HasSuffix(r.Path, "/retire"):
			return 1
		}
		return 0
	}
	sort.SliceStable(routes, func(i, j int) bool { return rank(routes[i]) < rank(routes[j]) })
	// The sweep's own people are never the resource it acts on: a base request that edits a
	// membership (its application roles, say) would otherwise lock its caller out of the rest.
	sw.own = map[string]bool{}
	for _, cl := range []*apiClient{sw.platform, sw.operator, sw.employee, bs.owner, ls.fi, bs.merchant} {
		sw.own[decode[sessionResult](tb, cl.call(http.MethodGet, "/api/auth/get-session", nil)).User.ID] = true
	}
	sw.lists = map[string]Route{}
	for _, r := range routes {
		if r.Method == http.MethodGet {
			sw.lists[r.Path] = r
		}
	}
	return sw, routes
}

// sweepSchedule is the payroll schedules the sweeps' worlds share (the court-order auto-submit
// and the deductions poller): one id each on the one Temporal server, deleted when the last
// world that uses them ends (a shard that ended first would otherwise delete them under the
// others' payroll health: 503 MISSING).
var sweepSchedule sharedSchedule

type sharedSchedule struct {
	mu    sync.Mutex
	users int
}

// sweepSchedules are the schedules sweepSchedule ensures, each with its firing's result.
var sweepSchedules = []struct {
	id     string
	ensure func(context.Context, client.Client, string) error
	result func() any
}{
	{workflows.CourtOrderAutoSubmitScheduleID, workflows.EnsureCourtOrderAutoSubmitSchedule,
		func() any { return new(workflows.PayrollCourtOrderAutoSubmitResult) }},
	{workflows.PayrollDeductionsPollerScheduleID, workflows.EnsurePayrollDeductionsPollerSchedule,
		func() any { return new(workflows.PayrollDeductionsPollResult) }},
}

// use ensures the schedules (on queue) for tb's world, fires each once there and requires that
// firing to succeed (a periodic firing may come mid-sweep: a failing one would turn the payroll
// health 503 FAILING), and lets the schedules go when tb ends.
func (s *sharedSchedule) use(tb testing.TB, tc client.Client, queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	for _, sched := range sweepSchedules {
		require.NoError(tb, sched.ensure(ctx, tc, queue))
		h := tc.ScheduleClient().GetHandle(ctx, sched.id)
		latest := func() *client.ScheduleActionResult {
			d, err := h.Describe(ctx)
			require.NoError(tb, err)
			var last *client.ScheduleActionResult
			for i := range d.Info.RecentActions {
				if a := &d.Info.RecentActions[i]; last == nil || a.ActualTime.After(last.ActualTime) {
					last = a
				}
			}
			return last
		}
		before := latest()
		require.NoError(tb, h.Trigger(ctx, client.ScheduleTriggerOptions{}))
		var fired *client.ScheduleActionResult
		require.Eventually(tb, func() bool {
			fired = latest()
			return fired != nil && (before == nil || fired.ActualTime.After(before.ActualTime))
		}, 20*time.Second, 50*time.Millisecond, "the triggered firing of %s", sched.id)
		require.NoError(tb, tc.GetWorkflow(ctx, fired.StartWorkflowResult.WorkflowID, "").Get(ctx, sched.result()),
			"the firing of %s on the sweep's worker", sched.id)
	}
	s.users++
	tb.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.users--; s.users == 0 {
			for _, sched := range sweepSchedules {
				_ = tc.ScheduleClient().GetHandle(context.Background(), sched.id).Delete(context.Background())
			}
		}
	})
}

type sweepOrg struct {
	cl *apiClient
	id string
}

type sweep struct {
	// t is where a request that cannot be built fails: the test, or the fuzz target's iteration.
	t                            testing.TB
	stack                        *bnplStack
	doc                          *openapi3.T
	anon, platform, operator     *apiClient
	employee                     *apiClient
	orgs                         []sweepOrg
	victim                       string
	known                        map[string]string
	own                          map[string]bool  // the user ids of the sweep's callers
	lists                        map[string]Route // the GET routes by path
	fresh                        func(n int) *apiClient
	ops, requests, pastGuards, n int
	// idOps and onReal count the operations that name a resource in their path and those the
	// sweep found a real one for (realID).
	idOps, onReal int
	// sagaChecks counts the refusals noSaga looked for a saga of.
	sagaChecks int
	statuses   map[int]int
	failures   []string
	noBase     []string
	// unaudited are the state-changing operations whose base request succeeded and wrote no
	// audit row.
	unaudited []string
	auditDB   *pgxpool.Pool
}

// sweepHostileStrings are path, query and header values no route may fail on.
var sweepHostileStrings = []string{
	"%00", "%FF%FE", "a%0Ab", "%E2%80%8B", "%E2%80%AEa", "..", "%2E%2E%2F", "9223372036854775808", "-1", "0",
	"%27%20OR%201%3D1--", "%F0%9F%92%A9", "%EF%BC%A1%EF%BC%91", "%20", strings.Repeat("a", 4096),
}

// sweepHostileJSON are the values each body property is set to, one at a time.
var sweepHostileJSON = []string{
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`, `1e400`, `-1`, `0.5`,
	`null`, `true`, `[]`, `{}`, `"\u0000"`, `"\ud800"`, "\"\xff\xfe\"", `"a\u202eb"`, `"\u200b"`, `"ＡＢ１"`, `"   "`,
	`"9223372036854775808"`, `"` + strings.Repeat("a", 4096) + `"`, `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// sweepHostileBodies are whole bodies that are not the JSON object a route takes.
var sweepHostileBodies = []string{
	"\xff\xfe", `{"a":`, `[]`, `null`, `"s"`, `{}`, strings.Repeat("[", 100_000), `{"a":1}{"b":2}`, "\ufeff{}",
}

func (sw *sweep) fail(format string, args ...any) {
	sw.failures = append(sw.failures, fmt.Sprintf(format, args...))
}

// sweepOp is one operation ready to be swept: its route, parameters, body schema, caller and the
// base request the document allows.
type sweepOp struct {
	r          Route
	params     openapi3.Parameters
	bodySchema *openapi3.Schema
	caller     *apiClient
	base       sweepRequest
}

// prepare builds r's base request from its operation's schemas, finds its caller and sends the
// base request (nil: r is not in the document, a failure recorded).
func (sw *sweep) prepare(r Route) *sweepOp {
	docPath := ginToDocPath(r.Path)
	item := sw.doc.Paths.Find(docPath)
	if item == nil || item.GetOperation(r.Method) == nil {
		sw.fail("%s %s: not in api/openapi.yaml", r.Method, r.Path)
		return nil
	}
	sw.ops++
	op := item.GetOperation(r.Method)
	params := append(openapi3.Parameters{}, item.Parameters...)
	params = append(params, op.Parameters...)

	base := sweepRequest{method: r.Method, path: map[string]string{}, query: map[string]string{}}
	for _, p := range params {
		pv := p.Value
		switch pv.In {
		case openapi3.ParameterInPath:
			v, ok := sweepString(pv.Schema.Value)
			if !ok {
				sw.noBase = append(sw.noBase, r.Method+" "+r.Path+" path "+pv.Name)
			}
			base.path[pv.Name] = url.PathEscape(v)
		case openapi3.ParameterInQuery:
			if pv.Required {
				v, ok := sweepString(pv.Schema.Value)
				if !ok {
					sw.noBase = append(sw.noBase, r.Method+" "+r.Path+" query "+pv.Name)
				}
				if id, known := sw.known[pv.Name]; known && pv.Schema.Value.VisitJSON(id) == nil {
					v = id
				}
				base.query[pv.Name] = url.QueryEscape(v)
			}
		}
	}
	var bodySchema *openapi3.Schema
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			bodySchema = mt.Schema.Value
			v, ok := sweepValue(bodySchema, 0, nil)
			if !ok {
				sw.noBase = append(sw.noBase, r.Method+" "+r.Path+" body")
			}
			base.body = v
		}
	}

	if r.Auth == Platform {
		for _, name := range []string{"id", "tenantId", "businessId"} {
			if _, ok := base.path[name]; ok && (strings.Contains(r.Path, "business") || strings.Contains(r.Path, "tenant") ||
				strings.Contains(r.Path, "financial-institutions") || strings.Contains(r.Path, "merchants")) {
				base.path[name] = sw.victim
			}
		}
	}
	sw.knownBody(&base, bodySchema)
	caller := sw.caller(r, &base)
	if sw.realID(r, caller, &base) {
		sw.onReal++
		sw.send(caller, r, base, "the base request on a real resource")
	}
	return &sweepOp{r: r, params: params, bodySchema: bodySchema, caller: caller, base: base}
}

// knownBody sets the base body's ids (top-level and in its objects) to the stack's own
// (sw.known) where the schema takes them.
func (sw *sweep) knownBody(base *sweepRequest, s *openapi3.Schema) {
	body, ok := base.body.(map[string]any)
	if !ok {
		return
	}
	objs := []map[string]any{body}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if m, ok := body[k].(map[string]any); ok {
			objs = append(objs, m)
		}
	}
	for _, obj := range objs {
		for _, name := range slices.Sorted(maps.Keys(sw.known)) {
			old, had := obj[name]
			if !had {
				continue
			}
			obj[name] = sw.known[name]
			if s.VisitJSON(body) != nil {
				obj[name] = old
			}
		}
	}
}

// sweepListOf names the list a resource is found in where it is not the GET of the path's prefix.
var sweepListOf = map[string]string{
	"/api/admin/disputes": "/api/disputes",
	"/api/kyc":            "/api/kyc/queue",
	"/api/savings/goals":  "/api/me/savings/goals",
}

// sweepResourceParams are the path parameters that name a resource.
var sweepResourceParams = []string{"id", "userId", "memberId", "adminId", "entryId"}

// realID sets base's resource ids (the path's :id, :memberId, ...; not its organization) to ones
// the caller can see, each the first item of the list of the path up to it (GET /api/loans for
// /api/loans/:id/..., GET /api/business/:id/team-members for .../team-members/:memberId), so that
// the sweep reaches the handler's rules on a real resource and not only its "not found". It
// reports whether it found them all; an id is left as it is when its list is empty or absent.
func (sw *sweep) realID(r Route, caller *apiClient, base *sweepRequest) bool {
	parts := strings.Split(r.Path, "/")
	tried, found := false, true
	for i, part := range parts {
		name, param := strings.CutPrefix(part, ":")
		if !param || !slices.Contains(sweepResourceParams, name) || name == r.Tenant || base.path[name] == sw.victim {
			continue
		}
		tried = true
		id := sw.firstOf(r, caller, strings.Join(parts[:i], "/"), name, base)
		if id == "" {
			found = false
			break
		}
		base.path[name] = url.PathEscape(id)
	}
	if tried {
		sw.idOps++
	}
	return tried && found
}

// firstOf is the first id (the item's name field, else its id) of the list at prefix (or the one
// sweepListOf names), its path parameters as base has them: as the caller, and for a platform or
// operator route (which acts across organizations) also as each organization and the employee.
func (sw *sweep) firstOf(r Route, caller *apiClient, prefix, name string, base *sweepRequest) string {
	list, ok := sw.lists[prefix]
	if alias, aliased := sweepListOf[prefix]; aliased {
		list, ok = sw.lists[alias]
	}
	if !ok {
		return ""
	}
	req := sweepRequest{method: http.MethodGet, path: map[string]string{}, query: map[string]string{}}
	for _, part := range strings.Split(list.Path, "/") {
		if p, param := strings.CutPrefix(part, ":"); param {
			req.path[p] = base.path[p]
		}
	}
	lookers := []*apiClient{caller}
	if r.Auth == Platform || r.Auth == Operator {
		for _, o := range sw.orgs {
			lookers = append(lookers, o.cl)
		}
		lookers = append(lookers, sw.employee)
	}
	for _, cl := range lookers {
		rec := sw.send(cl, list, req, "the list a real id is taken from")
		var page any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
			continue
		}
		for _, field := range []string{name, "id"} {
			if id := sweepFirstID(page, field, sw.own); id != "" {
				return id
			}
		}
	}
	return ""
}

// sweepFirstID is the field (a string or a number) of the first item of a list answer (a JSON
// array, or the first property of an object, by name, that is an array of objects carrying field)
// whose userId, if it has one, is not among skip.
func sweepFirstID(page any, field string, skip map[string]bool) string {
	var lists [][]any
	switch v := page.(type) {
	case []any:
		lists = append(lists, v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if l, ok := v[k].([]any); ok {
				lists = append(lists, l)
			}
		}
	}
	for _, l := range lists {
		for _, item := range l {
			m, _ := item.(map[string]any)
			if u, ok := m["userId"].(string); ok && skip[u] {
				continue
			}
			switch id := m[field].(type) {
			case string:
				if id != "" {
					return id
				}
			case float64: // a numeric id (the webhook events')
				return strconv.FormatFloat(id, 'f', -1, 64)
			}
		}
	}
	return ""
}

// operation sweeps one route: its base request, then each hostile variant.
func (sw *sweep) operation(r Route) {
	o := sw.prepare(r)
	if o == nil {
		return
	}
	sw.race(o)
	base, params, bodySchema := o.base, o.params, o.bodySchema
	send := func(req sweepRequest, what string) { sw.send(o.caller, r, req, what) }

	for _, p := range params {
		pv := p.Value
		for _, h := range sweepHostileStrings {
			req := base.clone()
			switch pv.In {
			case openapi3.ParameterInPath:
				req.path[pv.Name] = h
				// The document's validator reads a path parameter as escaped text, the server
				// unescaped: its verdict on an escaped value is not the document's.
				req.noVerdict = strings.Contains(h, "%")
			case openapi3.ParameterInQuery:
				req.query[pv.Name] = h
			default:
				continue
			}
			send(req, fmt.Sprintf("%s %s = %.40q", pv.In, pv.Name, h))
		}
	}
	if r.Idem {
		for _, h := range []string{"", strings.Repeat("k", 300), "k\x00", "k\xff", " k", "k\u202e", "k,k"} {
			req := base.clone()
			req.key = &h
			send(req, fmt.Sprintf("Idempotency-Key %.40q", h))
		}
	}
	if bodySchema == nil {
		if r.Method != http.MethodGet && bodyOf(r) != BodyOwn {
			req := base.clone()
			req.raw = []byte(`{"unexpected":1}`)
			req.noVerdict = true // OpenAPI 3.0 cannot say "no body": the server refuses one (400)
			send(req, "a body where none is taken")
		}
		return
	}
	for _, b := range sweepHostileBodies {
		req := base.clone()
		req.raw = []byte(b)
		send(req, fmt.Sprintf("body %.40q", b))
	}
	// The base body as another media type, and a body past the limit (each operation declares
	// its 415 and 413).
	for _, ct := range []string{"text/plain", "application/json; charset=latin1", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req := base.clone()
		req.contentType = ct
		send(req, "Content-Type "+ct)
	}
	over := base.clone()
	over.raw = []byte(`{"x":"` + strings.Repeat("a", int(DefaultMaxBodyBytes)) + `"}`)
	send(over, "a body past the limit")
	for _, path := range sweepPropertyPaths(bodySchema, nil, 0) {
		for _, h := range sweepHostileJSON {
			raw, err := sweepSetRaw(base.body, path, h)
			require.NoError(sw.t, err)
			req := base.clone()
			req.raw = raw
			send(req, fmt.Sprintf("body .%s = %.40q", strings.Join(path, "."), h))
		}
	}
}

// caller is the client whose request reaches the route's handler, by the route's access level;
// for an organization's route, the first organization (business, FI, merchant; on a mount of one
// kind, that kind's) the guards let through, whose id base then carries in the route's tenant
// parameter. It sends base, as that
// caller: for an organization's route the one that found it.
func (sw *sweep) caller(r Route, base *sweepRequest) *apiClient {
	var cl *apiClient
	switch r.Auth {
	case Public, PublicSigned:
		cl = sw.anon
	case Platform:
		cl = sw.platform
	case Operator:
		cl = sw.operator
	case Session:
		switch {
		case strings.HasPrefix(r.Path, "/api/auth/"):
			// Sign-out, two-factor, leaving or switching organizations change the session
			// itself: a fresh user each.
			sw.n++
			cl = sw.fresh(sw.n)
		case strings.Contains(r.Path, "/me/") || strings.HasPrefix(r.Path, "/api/employee/") || strings.HasPrefix(r.Path, "/api/savings") ||
			strings.HasPrefix(r.Path, "/api/wallet") || strings.HasPrefix(r.Path, "/api/bnpl/agreements"):
			cl = sw.employee
		default:
			cl = sw.orgs[0].cl
		}
	}
	if cl != nil {
		sw.send(cl, r, *base, "the base request")
		return cl
	}
	// A route mounted for one kind of organization (the team routes) is the organization of that
	// kind's; the others answer 404 there.
	orgs := sw.orgs
	for i, mount := range []string{"/api/business/", "/api/financial-institutions/", "/api/merchants/"} {
		if strings.HasPrefix(r.Path, mount) {
			orgs = sw.orgs[i : i+1]
		}
	}
	for i, o := range orgs {
		if r.Tenant != "" {
			base.path[r.Tenant] = o.id
		}
		rec := sw.send(o.cl, r, *base, "the base request")
		if (rec.Code != http.StatusUnauthorized && rec.Code != http.StatusForbidden) || i == len(orgs)-1 {
			return o.cl
		}
	}
	panic("unreachable")
}

// send serves req as cl and checks the answer.
func (sw *sweep) send(cl *apiClient, r Route, req sweepRequest, what string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	hreq := sw.as(cl, r, req)
	cl.h.ServeHTTP(rec, hreq)
	sw.check(r, req, rec, what)
	sw.noSaga(cl, r, hreq.Header.Get("Idempotency-Key"), rec, what)
	return rec
}

// noSaga checks that a request refused as bad input (400, 413, 415) on a route that takes an
// Idempotency-Key started no saga, so moved no money: no workflow has the id its key derives
// (idempotency.WorkflowID) in the caller's organization (in any of the sweep's for a platform or
// operator caller). A refusal a saga answers (a gate's 422) is not bad input, and the key's own
// refusals (in use, reused for another request) name a key another request may have started a
// saga with.
func (sw *sweep) noSaga(cl *apiClient, r Route, key string, rec *httptest.ResponseRecorder, what string) {
	badInput := rec.Code == http.StatusBadRequest || rec.Code == http.StatusRequestEntityTooLarge || rec.Code == http.StatusUnsupportedMediaType
	if !r.Idem || key == "" || !badInput || rec.Header().Get(idempotentReplayedHeader) != "" {
		return
	}
	sw.sagaChecks++
	route := r.Method + " " + r.Path
	tenants := []string{sw.victim}
	for _, o := range sw.orgs {
		tenants = append(tenants, o.id)
		if o.cl == cl {
			tenants = []string{o.id}
			break
		}
	}
	if cl == sw.employee {
		tenants = []string{sw.orgs[0].id}
	}
	for _, tenant := range tenants {
		id := idempotency.WorkflowID(tenant, route, key)
		_, err := sw.stack.tc.DescribeWorkflowExecution(context.Background(), id, "")
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			sw.fail("%s: %s: refused %d, yet workflow %s exists (%v)", route, what, rec.Code, id, err)
		}
	}
}

// as is req built as cl's request.
func (sw *sweep) as(cl *apiClient, r Route, req sweepRequest) *http.Request {
	hreq := req.build(sw.t, r)
	hreq.RemoteAddr = cl.ip + ":40000"
	if cl.cookie != nil {
		hreq.AddCookie(cl.cookie)
	}
	return hreq
}

// check counts the answer rec to req and holds it to the sweep's rules.
func (sw *sweep) check(r Route, req sweepRequest, rec *httptest.ResponseRecorder, what string) {
	t := sw.t
	sw.requests++
	sw.statuses[rec.Code]++
	if rec.Code != http.StatusUnauthorized && rec.Code != http.StatusForbidden {
		sw.pastGuards++
	}
	name := r.Method + " " + r.Path + ": " + what
	if rec.Code >= 500 {
		sw.fail("%s: %d %.300s", name, rec.Code, rec.Body.String())
		return
	}
	if rec.Code >= 400 && errCode(rec) == "" {
		sw.fail("%s: %d without an error code: %.300s", name, rec.Code, rec.Body.String())
		return
	}
	// The answer must be one the document allows to the operation the request is.
	again := req.build(t, r)
	route, params, err := openapiRouter(t).FindRoute(again)
	if err != nil {
		// A value that leaves no operation of the document (an empty segment): the checks above
		// (below 500, the envelope's code) are all the document can say of the answer.
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: again, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := answerError(in, rec); err != nil {
		sw.fail("%s: answer %d breaks the document: %.300s (%.200s)", name, rec.Code, err, rec.Body.String())
	}
	// A request the document allows is not refused for its shape: that would be a handler rule
	// the document does not state (issue 21). The exception: a rule between two parts of the
	// request, or one against data the server holds, that the operation's text states
	// (sweepWordRules).
	code := errCode(rec)
	if req.noVerdict || (code != "INVALID_REQUEST" && code != "IDEMPOTENCY_KEY_INVALID") ||
		openapi3filter.ValidateRequest(context.Background(), in) != nil {
		return
	}
	var e errBody
	var details struct {
		Field string `json:"field"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	_ = json.Unmarshal(e.Error.Details, &details)
	phrase, cross := sweepWordRules[r.Method+" "+r.Path+" "+details.Field]
	if !cross {
		sw.fail("%s: the document allows the request, the server refuses it: %.300s", name, rec.Body.String())
		return
	}
	op := route.Operation
	text := op.Description
	for _, p := range op.Parameters {
		text += " " + p.Value.Description
	}
	if op.RequestBody != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
			text += " " + mt.Schema.Value.Description
			props, _, _ := sweepProperties(mt.Schema.Value)
			if p := props[details.Field]; p != nil {
				text += " " + p.Value.Description
			}
		}
	}
	if !strings.Contains(text, phrase) {
		sw.fail("%s: the rule on %s is not in the operation's text (%q)", name, details.Field, phrase)
	}
}

// sweepRacers is how many copies of a base request race.
const sweepRacers = 6

// race sends o's base request sweepRacers times at once: for an operation that takes an
// Idempotency-Key once with one key for all (one runs; the others replay its answer, or are told
// the key is in use) and once with a key each, otherwise as it is. Each answer is held to the
// sweep's rules, and the answers under one key must agree: one status, and one body when it is a
// success.
func (sw *sweep) race(o *sweepOp) {
	rounds := []bool{false}
	if o.r.Idem {
		rounds = []bool{true, false}
	}
	for _, shared := range rounds {
		req := o.base.clone()
		what := "a racing copy of the base request"
		if shared {
			key := testkit.Unique("race")
			req.key = &key
			what += " under one Idempotency-Key"
		}
		hreqs := make([]*http.Request, sweepRacers)
		recs := make([]*httptest.ResponseRecorder, sweepRacers)
		for i := range hreqs {
			hreqs[i], recs[i] = sw.as(o.caller, o.r, req), httptest.NewRecorder()
		}
		head := sw.auditHead()
		var wg sync.WaitGroup
		for i := range hreqs {
			wg.Go(func() { o.caller.h.ServeHTTP(recs[i], hreqs[i]) })
		}
		wg.Wait()
		if o.r.Method != http.MethodGet && !shared && sw.auditHead() == head &&
			slices.ContainsFunc(recs, func(r *httptest.ResponseRecorder) bool { return r.Code < 300 }) {
			sw.unaudited = append(sw.unaudited, o.r.Method+" "+o.r.Path)
		}
		var first *httptest.ResponseRecorder
		for _, rec := range recs {
			sw.check(o.r, req, rec, what)
			if !shared || errCode(rec) == "IDEMPOTENCY_KEY_IN_USE" {
				continue
			}
			switch {
			case first == nil:
				first = rec
			case rec.Code != first.Code:
				sw.fail("%s %s: %s: answered %d and %d: %.200s / %.200s", o.r.Method, o.r.Path, what, first.Code, rec.Code,
					first.Body.String(), rec.Body.String())
			case rec.Code < 300 && !bytes.Equal(rec.Body.Bytes(), first.Body.Bytes()):
				sw.fail("%s %s: %s: two bodies for one key: %.200s / %.200s", o.r.Method, o.r.Path, what, first.Body.String(), rec.Body.String())
			}
		}
	}
}

// sweepWordRules are the rules no schema can state, by route and refused field, with the words
// of the operation's text that state each: a rule between two parts of a request, or a value
// checked against data the server holds (the time zone database) or after a transformation the
// document cannot describe (the sanctions normaliser).
var sweepWordRules = map[string]string{
	"GET /api/business limit":                                        "limit and cursor without all=true are refused (400)",
	"GET /api/business cursor":                                       "limit and cursor without all=true are refused (400)",
	"POST /api/ewa/requests/:id/record-repayment ewaRequestId":       "must equal the path's id",
	"POST /api/fi/products maxTermMonths":                            "minTermMonths ≤ maxTermMonths",
	"POST /api/fi/products maxAmountSantim":                          "minAmountSantim ≤",
	"POST /api/fi/products minAmountSantim":                          "minAmountSantim ≥ 1000 × maxTermMonths",
	"PATCH /api/fi/products/:id maxTermMonths":                       "the result must keep the create's rules",
	"PATCH /api/fi/products/:id maxAmountSantim":                     "the result must keep the create's rules",
	"PATCH /api/fi/products/:id minAmountSantim":                     "the result must keep the create's rules",
	"POST /api/sanctions/screen name":                                "it must still hold a letter or digit",
	"POST /api/payroll/auto-lock-policy timeZone":                    "an IANA time zone name the zone database has",
	"POST /api/payroll/protection-policies voluntaryShareNumerator":  "at most voluntaryShareDenominator",
	"POST /api/platform/payroll/auto-lock-policy/:tenantId timeZone": "an IANA time zone name the zone database has",
	"GET /api/bnpl/merchant/settlements from":                        "calendar dates that exist, from ≤ to, at most 366 days both included",
	"GET /api/bnpl/merchant/settlements to":                          "calendar dates that exist, from ≤ to, at most 366 days both included",
}

// sweepRequest is one request of the sweep before it is built.
type sweepRequest struct {
	method string
	// path and query hold their values escaped (the hostile ones are written escaped).
	path  map[string]string
	query map[string]string
	body  any
	raw   []byte // replaces body when set
	key   *string
	// contentType replaces application/json when set.
	contentType string
	// noVerdict: the document's validator cannot judge this request (see where it is set).
	noVerdict bool
}

func (q sweepRequest) clone() sweepRequest {
	c := q
	c.path, c.query = map[string]string{}, map[string]string{}
	for k, v := range q.path {
		c.path[k] = v
	}
	for k, v := range q.query {
		c.query[k] = v
	}
	return c
}

func (q sweepRequest) build(t testing.TB, r Route) *http.Request {
	parts := strings.Split(r.Path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = q.path[p[1:]]
		}
	}
	target := strings.Join(parts, "/")
	if len(q.query) > 0 {
		var qs []string
		for _, k := range slices.Sorted(maps.Keys(q.query)) {
			qs = append(qs, k+"="+q.query[k])
		}
		target += "?" + strings.Join(qs, "&")
	}
	var raw []byte
	switch {
	case q.raw != nil:
		raw = q.raw
	case q.body != nil:
		var err error
		raw, err = json.Marshal(q.body)
		require.NoError(t, err)
	}
	req := httptest.NewRequest(q.method, "http://127.0.0.1:8080"+target, bytes.NewReader(raw))
	req.RemoteAddr = "192.0.2.77:40000"
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if q.contentType != "" {
		req.Header.Set("Content-Type", q.contentType)
	}
	if r.Idem {
		// A key of its own, so no request replays another's answer.
		key := testkit.Unique("sweep")
		if q.key != nil {
			key = *q.key
		}
		req.Header.Set("Idempotency-Key", key)
	}
	return req
}

func ginToDocPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// sweepString is a parameter's value the schema allows, as text (ok false: none of the
// candidates is).
func sweepString(s *openapi3.Schema) (string, bool) {
	switch v, ok := sweepValue(s, 0, nil); v := v.(type) {
	case string:
		return v, ok
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), ok
	case bool:
		return strconv.FormatBool(v), ok
	}
	return "sweep-1", false
}

// sweepStringCandidates are tried in turn for a string schema: the first its pattern, format and
// bounds take (padded to its minLength) is the base value.
var sweepStringCandidates = []string{
	"sweep-1", "1", "0", "123456", "#1A2B3C", "upl_00000000-0000-4000-8000-000000000000", "2026-12",
	"2000-01-01", "2026-12-01", "2026-12-01T00:00:00Z", "sweep@example.com", "+251911234567", "sandbox",
	"lrep_sweep", "00000000-0000-4000-8000-000000000000", "SWEEP", "Sweep Name", "12:00", "https://example.com/x",
	"receivable-from-employee:sweep-1",
}

// sweepValue is a value the schema allows, built from its enum, alternatives, properties and
// bounds (ok false: the best try the schema still refuses).
func sweepValue(s *openapi3.Schema, depth int, rng *rand.Rand) (any, bool) {
	if s == nil {
		return "sweep-1", false
	}
	check := func(v any) (any, bool) { return v, s.VisitJSON(v) == nil }
	if len(s.Enum) > 0 {
		if rng != nil {
			return check(s.Enum[rng.IntN(len(s.Enum))])
		}
		return check(s.Enum[0])
	}
	for _, alt := range append(append([]*openapi3.SchemaRef{}, s.OneOf...), s.AnyOf...) {
		if v, ok := sweepValue(alt.Value, depth, rng); ok {
			if _, ok := check(v); ok {
				return v, true
			}
		}
	}
	props, required, minProps := sweepProperties(s)
	switch {
	case s.Type.Is("object") || len(props) > 0:
		// An object whose alternatives require more (oneOf: "amountSantim or basisPoints") is
		// built once per alternative, as that alternative with the object's own properties.
		for _, alt := range append(append([]*openapi3.SchemaRef{}, s.OneOf...), s.AnyOf...) {
			if alt.Value == nil {
				continue
			}
			ap, ar, am := sweepProperties(alt.Value)
			merged := openapi3.Schemas{}
			for k, v := range props {
				merged[k] = v
			}
			for k, v := range ap {
				merged[k] = v
			}
			one := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: merged, Required: append(append([]string{}, required...), ar...),
				MinProps: max(minProps, am), OneOf: alt.Value.OneOf, AnyOf: alt.Value.AnyOf}
			if v, ok := sweepValue(one, depth, rng); ok {
				if v, ok := check(v); ok {
					return v, true
				}
			}
		}
		// Optional properties are added one at a time until the schema takes the object (an
		// update that must change something; a "not" that refuses one property alone).
		var obj map[string]any
		for extra := uint64(0); extra <= uint64(len(props)); extra++ {
			obj = sweepObject(props, required, minProps+extra, depth, rng)
			if v, ok := check(obj); ok {
				return v, true
			}
		}
		// Rules across properties the above does not read (allOf of oneOfs: "exactly one of
		// these" and "this kind needs that field"): a seeded search over subsets of the optional
		// properties and the enums' values.
		if rng == nil && depth == 0 {
			search := rand.New(rand.NewPCG(1, 2))
			for range 500 {
				cand := map[string]any{}
				for _, name := range slices.Sorted(maps.Keys(props)) {
					if slices.Contains(required, name) || search.IntN(2) == 0 {
						cand[name], _ = sweepValue(props[name].Value, depth+1, search)
					}
				}
				if v, ok := check(cand); ok {
					return v, true
				}
			}
		}
		return obj, false
	case s.Type.Is("array"):
		arr := []any{}
		if s.MinItems > 0 && s.Items != nil {
			item, _ := sweepValue(s.Items.Value, depth+1, rng)
			for range s.MinItems {
				arr = append(arr, item)
			}
		}
		return check(arr)
	case s.Type.Is("integer") || s.Type.Is("number"):
		cands := []float64{1, 100, 0}
		if s.Min != nil {
			cands = append([]float64{*s.Min, *s.Min + 1}, cands...)
		}
		if s.Max != nil {
			cands = append(cands, *s.Max)
		}
		for _, c := range cands {
			if v, ok := check(c); ok {
				return v, true
			}
		}
		return cands[0], false
	case s.Type.Is("boolean"):
		return check(false)
	}
	for _, c := range sweepStringCandidates {
		if int(s.MinLength) > len(c) {
			c += strings.Repeat("a", int(s.MinLength)-len(c))
		}
		if v, ok := check(c); ok {
			return v, true
		}
	}
	return "sweep-1", false
}

// sweepObject is an object of the required properties, and of optional ones until it has
// minProps (an update that must change something).
func sweepObject(props openapi3.Schemas, required []string, minProps uint64, depth int, rng *rand.Rand) map[string]any {
	obj := map[string]any{}
	if depth >= 6 {
		return obj
	}
	for _, name := range required {
		if p := props[name]; p != nil {
			obj[name], _ = sweepValue(p.Value, depth+1, rng)
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if uint64(len(obj)) >= minProps {
			break
		}
		if _, ok := obj[name]; !ok {
			if v, ok := sweepValue(props[name].Value, depth+1, rng); ok {
				obj[name] = v
			}
		}
	}
	return obj
}

// sweepProperties are an object schema's properties, required names and least property count,
// its allOf members' included.
func sweepProperties(s *openapi3.Schema) (openapi3.Schemas, []string, uint64) {
	props := openapi3.Schemas{}
	required := append([]string{}, s.Required...)
	minProps := s.MinProps
	for k, v := range s.Properties {
		props[k] = v
	}
	for _, m := range s.AllOf {
		if m.Value == nil {
			continue
		}
		p, r, mp := sweepProperties(m.Value)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
		minProps = max(minProps, mp)
	}
	return props, required, minProps
}

// sweepPropertyPaths are the body's properties to break: each property, and each property of an
// object-valued one (depth ≤ 1).
func sweepPropertyPaths(s *openapi3.Schema, prefix []string, depth int) [][]string {
	props, _, _ := sweepProperties(s)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	var out [][]string
	for _, name := range names {
		path := append(append([]string{}, prefix...), name)
		out = append(out, path)
		if p := props[name].Value; p != nil && depth < 1 && (p.Type.Is("object") || len(p.Properties) > 0) {
			out = append(out, sweepPropertyPaths(p, path, depth+1)...)
		}
	}
	return out
}

// sweepSetRaw is base (a JSON object) with the property at path set to the raw JSON text h.
func sweepSetRaw(base any, path []string, h string) ([]byte, error) {
	const mark = "\x00sweep-mark\x00"
	var root map[string]any
	if m, ok := base.(map[string]any); ok {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &root); err != nil {
			return nil, err
		}
	} else {
		root = map[string]any{}
	}
	cur := root
	for _, k := range path[:len(path)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = mark
	raw, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(raw, []byte(`"\u0000sweep-mark\u0000"`), []byte(h), 1), nil
}

// FuzzEveryOperation is the sweep as a fuzz target (make fuzz): the fuzzer chooses the operation,
// the place (a path or query parameter, a body property, the whole body, the Idempotency-Key) and
// the value, and the answer is held to the sweep's rules: below 500, the envelope's code on a
// refusal, declared by the document, and no refusal of a request the document allows. The seeds
// are the sweep's hostile values, spread over the operations.
func FuzzEveryOperation(f *testing.F) {
	sw, routes := newSweep(f)
	var ops []*sweepOp
	for _, r := range routes {
		if r.Method == http.MethodDelete && r.Path == "/api/business/:id" {
			continue // the owner's organization stays for every iteration
		}
		if o := sw.prepare(r); o != nil {
			ops = append(ops, o)
		}
	}
	require.Empty(f, sw.failures, "the base requests")
	for i, h := range append(append([]string{}, sweepHostileStrings...), sweepHostileJSON...) {
		f.Add(uint16(i*41), uint16(i), h)
	}
	f.Fuzz(func(t *testing.T, op, place uint16, value string) {
		o := ops[int(op)%len(ops)]
		places := o.places()
		p := places[int(place)%len(places)]
		req := o.base.clone()
		switch p.kind {
		case openapi3.ParameterInPath:
			req.path[p.name] = url.PathEscape(value)
			req.noVerdict = req.path[p.name] != value // the validator reads the escaped text
		case openapi3.ParameterInQuery:
			req.query[p.name] = url.QueryEscape(value)
		case "header":
			req.key = &value
		case "body":
			req.raw = []byte(value)
			// OpenAPI 3.0 cannot say "no body": the server refuses one (400).
			req.noVerdict = o.bodySchema == nil
		default: // a body property
			raw := value
			if !json.Valid([]byte(value)) {
				b, _ := json.Marshal(value)
				raw = string(b)
			}
			var err error
			req.raw, err = sweepSetRaw(o.base.body, p.path, raw)
			require.NoError(t, err)
		}
		// Two rules the document states in words only: a name's invisible characters beyond the
		// Basic Multilingual Plane and the joiners outside the scripts that spell with them, and
		// bounds counted in bytes (maxLength counts characters).
		if sweepWordsOnly(value) {
			req.noVerdict = true
		}
		sw.t = t
		n := len(sw.failures)
		sw.send(o.caller, o.r, req, fmt.Sprintf("%s %s = %.60q", p.kind, p.name, value))
		if len(sw.failures) > n {
			t.Fatal(strings.Join(sw.failures[n:], "\n"))
		}
	})
}

// sweepPlace is where a fuzzed value goes: kind is a parameter's "path" or "query", "header"
// (the Idempotency-Key), "body" (the whole body) or "property" (path names it).
type sweepPlace struct {
	kind, name string
	path       []string
}

func (o *sweepOp) places() []sweepPlace {
	var out []sweepPlace
	for _, p := range o.params {
		if p.Value.In == openapi3.ParameterInPath || p.Value.In == openapi3.ParameterInQuery {
			out = append(out, sweepPlace{kind: p.Value.In, name: p.Value.Name})
		}
	}
	if o.r.Idem {
		out = append(out, sweepPlace{kind: "header", name: "Idempotency-Key"})
	}
	if o.bodySchema != nil {
		out = append(out, sweepPlace{kind: "body"})
		for _, path := range sweepPropertyPaths(o.bodySchema, nil, 0) {
			out = append(out, sweepPlace{kind: "property", name: strings.Join(path, "."), path: path})
		}
	}
	if len(out) == 0 {
		out = append(out, sweepPlace{kind: "body"}) // a body where none is taken
	}
	return out
}

// sweepWordsOnly reports whether v holds what the document states in words only (its
// description's list of rules no schema can state): a character beyond the Basic Multilingual
// Plane, a zero-width joiner or non-joiner, more bytes than characters (the server bounds text in
// bytes), a number with a fraction or an exponent (an integer is written as one), or a key twice
// in one object.
func sweepWordsOnly(v string) bool {
	for _, r := range v {
		if r > 0xFFFF || r == 0x200C || r == 0x200D {
			return true
		}
	}
	if len(v) != utf8.RuneCountInString(v) {
		return true
	}
	if _, dup := duplicateKey([]byte(v)); dup {
		return true
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok && strings.ContainsAny(string(n), ".eE") {
			return true
		}
	}
}

// auditHead is the newest audit row's id in any tenant (0: none).
func (sw *sweep) auditHead() int64 {
	var id int64
	ctx := context.Background()
	tx, err := sw.auditDB.Begin(ctx)
	require.NoError(sw.t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SET LOCAL app.cross_tenant = 'on'`)
	require.NoError(sw.t, err)
	require.NoError(sw.t, tx.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM app.audit_log`).Scan(&id))
	return id
}
