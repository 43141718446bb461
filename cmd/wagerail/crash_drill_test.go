//go:build !noembed

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/pgcluster"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The crash drill (issue 22): a real `wagerail dev` with the demo seeded, drillSagas concurrent EWA
// disburses over HTTP, each with its own Idempotency-Key, and the whole stack — dev's process
// group and its Postgres — SIGKILLed while they are in flight (or, in some runs, once every call
// is answered and the sagas wait for the bank's settlement; and in some, again just after the
// restart). dev restarts on the same data dir and ports (Postgres finds the dead run's locks and
// recovers), and each client retries its own key until it has a final answer. Then every advance the saga accepted was paid exactly once (one sandbox
// transfer and one POSTED ledger transaction per request, the employee's bank balance up by the
// accepted principals and no more), every answer was the saga's (202/200 as the first call would
// have had, or the saga's own refusal; never 409 EWA_INVALID_STATE, never a 5xx), a further retry
// of each key gets that same answer, and the restarted stack stops cleanly.
//
// It runs under `make soak` (WAGERAIL_SOAK=1); WAGERAIL_DRILL_SEED repeats a run's kill point.

const (
	drillSagas = 40
	// drillClientDeadline bounds one client's retries (an idempotency lease left by the crash
	// answers IDEMPOTENCY_KEY_IN_USE for up to 30 s after it).
	drillClientDeadline = 5 * time.Minute
	disburseRoute       = "POST /api/ewa/requests/:id/disburse"
)

// drillAttempt is one POST of a client's key.
type drillAttempt struct {
	status    int // 0: no HTTP answer (the stack was down)
	code      string
	err       string
	afterKill bool // sent after the kill
}

// drillAnswer is a final answer: what the saga said.
type drillAnswer struct {
	status     int
	code       string // the error code of a refusal
	workflowID string // of an accepted call
	body       string
	afterKill  bool // the attempt that got it was sent after the kill
}

func (a drillAnswer) accepted() bool {
	return a.status == http.StatusOK || a.status == http.StatusAccepted
}

// drillClient is one caller: one EWA request, one Idempotency-Key.
type drillClient struct {
	requestID, key string
	principal      int64
	wfID           string // the workflow the key names
	attempts       []drillAttempt
	final          *drillAnswer
	replay         *drillAnswer // the extra retry once every client had its answer
}

// drillKill is one kill of the stack and the restart after it.
type drillKill struct {
	why                          string
	at                           time.Time
	after                        time.Duration // since the calls were fired
	inFlight, answered, accepted int
	restart, readyz              time.Duration
	pgStart, pgLog               string
}

// drillState is what the clients and the killer share.
type drillState struct {
	mu            sync.Mutex
	killed        bool
	inFlight      int // POSTs sent and not answered
	answered      int // clients with a final answer
	acceptedEarly int // 200/202 answers before the kill
	killAfter     int // the kill comes at this many acceptedEarly (or the timer)
	killNow       chan struct{}
	allAnswered   chan struct{} // closed when every client has its answer
}

func TestCrashDrillEwaDisburse(t *testing.T) {
	if os.Getenv("WAGERAIL_SOAK") == "" {
		t.Skip("the full-stack crash drill runs under make soak (WAGERAIL_SOAK=1)")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("WAGERAIL_DRILL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "WAGERAIL_DRILL_SEED")
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	t.Logf("crash drill seed %d (WAGERAIL_DRILL_SEED repeats it)", seed)

	bin := testkit.Binary(t)
	dataDir := filepath.Join(testkit.DataDir(t), "data")
	var p *devProc
	var launch devLaunch
	for attempt := 1; p == nil; attempt++ {
		launch = devLaunch{ports: devPorts(t), ownGroup: true}
		p = startedDev(t, launchDevWith(t, bin, dataDir, launch), attempt)
	}
	require.Contains(t, p.out.String(), "  demo       ready in", "stderr tail:\n%s", tail(p.errOut.String(), 30))
	d := readCredentials(t, dataDir).Demo
	require.NotNil(t, d)
	emp := d.Employees["kycApproved"]
	empAccount := demoEmployees[0].Account
	require.Equal(t, "kycApproved", demoEmployees[0].Key)
	ctx := t.Context()
	owner, err := signedIn(ctx, p.apiURL, d.OwnerEmail, d.OwnerPassword)
	require.NoError(t, err)

	// drillSagas requests, each within an equal share of what the employee may draw today.
	var elig struct {
		AvailableSantim int64 `json:"availableSantim"`
		Settings        struct {
			FeeFlatSantim  int64 `json:"feeFlatSantim"`
			FeeBasisPoints int64 `json:"feeBasisPoints"`
		} `json:"settings"`
	}
	require.NoError(t, owner.call(ctx, http.MethodGet, "/api/ewa/eligibility?employeeId="+emp, nil, http.StatusOK, &elig))
	principal := drillPrincipal(t, elig.AvailableSantim/drillSagas, ewa.Settings{FeeFlatSantim: elig.Settings.FeeFlatSantim, FeeBasisPoints: elig.Settings.FeeBasisPoints})
	clients := make([]*drillClient, drillSagas)
	for i := range clients {
		var req struct {
			ID string `json:"id"`
		}
		require.NoError(t, owner.callKeyed(ctx, http.MethodPost, "/api/ewa/requests", testkit.Unique("drill-req"),
			map[string]any{"employeeId": emp, "amountSantim": principal}, http.StatusCreated, &req))
		key := testkit.Unique("drill-disburse")
		clients[i] = &drillClient{requestID: req.ID, key: key, principal: principal,
			wfID: idempotency.WorkflowID(d.BusinessID, disburseRoute, key)}
	}
	sb := p.sandboxURL(t)
	empBefore := sandboxBalance(t, sb, empAccount)
	fundBefore := sandboxBalance(t, sb, demoFundingAccount)

	// Fire, and kill the stack while the calls are in flight: after the first few accepted
	// answers or a short random delay, whichever comes first; in one run of four, once every call
	// is answered, while the sagas wait for the bank's settlement (2 s after each transfer).
	st := &drillState{killAfter: 2 + rng.IntN(7), killNow: make(chan struct{}), allAnswered: make(chan struct{})}
	killDelay := time.Duration(300+rng.IntN(1500)) * time.Millisecond
	settling := rng.IntN(4) == 0
	killPostgres := rng.IntN(3) > 0
	twice := rng.IntN(3) == 0
	secondKill := time.Duration(200+rng.IntN(2500)) * time.Millisecond
	hc := owner.hc
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, c := range clients {
		wg.Go(func() {
			<-start
			c.run(ctx, hc, p.apiURL, st)
		})
	}
	t0 := time.Now()
	close(start)
	trigger := "timer " + killDelay.String()
	if settling {
		select {
		case <-st.allAnswered:
		case <-time.After(drillClientDeadline):
			t.Fatal("the calls were not all answered before the kill")
		}
		time.Sleep(killDelay - 300*time.Millisecond)
		trigger = fmt.Sprintf("every call answered, then %s", killDelay-300*time.Millisecond)
	} else {
		select {
		case <-st.killNow:
			trigger = fmt.Sprintf("%d accepted answers", st.killAfter)
		case <-time.After(killDelay):
		}
	}
	// The whole stack goes: dev's process group (it leads one) and, in two runs of three,
	// postgres too (its own group; else it sees its parent die and shuts down fast while dev
	// restarts). In one run of three the restarted stack is killed once more, a moment after it
	// is ready, while it recovers the sagas.
	var kills []drillKill
	crash := func(p *devProc, why string) {
		pgPID := p.postgresPID(t)
		st.mu.Lock()
		st.killed = true
		k := drillKill{why: why, after: time.Since(t0), inFlight: st.inFlight, answered: st.answered, accepted: st.acceptedEarly}
		killErr := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		if killPostgres && killErr == nil {
			killErr = syscall.Kill(pgPID, syscall.SIGKILL)
		}
		k.at = time.Now()
		st.mu.Unlock()
		require.NoError(t, killErr, "SIGKILL")
		<-p.exited
		kills = append(kills, k)
	}
	// restart starts dev again on the same data dir and ports, while the clients keep retrying.
	pgLog := filepath.Join(dataDir, "pg", "postgres.log")
	restart := func() *devProc {
		k := &kills[len(kills)-1]
		pgLogFrom := fileSize(pgLog)
		r0 := time.Now()
		p := startedDev(t, launchDevWith(t, bin, dataDir, launch), 3)
		k.restart = time.Since(r0)
		k.pgStart = startLine(p.out.String(), "postgres")
		p.waitReadyz(t, http.StatusOK)
		k.readyz = time.Since(r0)
		k.pgLog = pgRestartLines(t, pgLog, pgLogFrom)
		return p
	}
	crash(p, trigger)
	p2 := restart()
	if twice {
		time.Sleep(secondKill)
		crash(p2, fmt.Sprintf("%s after the restart was ready", secondKill))
		p2 = restart()
	}
	restarted := time.Now()
	wg.Wait()
	allAnswered := time.Since(restarted)

	// Every attempt: an answer of the saga, or (not final) the stack down or the crashed call's
	// idempotency lease not yet expired.
	var accepted, refused, answeredLater, transportErrs, inUse int
	for _, c := range clients {
		for _, a := range c.attempts {
			switch {
			case a.status == 0:
				transportErrs++
			case a.code == "IDEMPOTENCY_KEY_IN_USE":
				inUse++
			}
			require.NotEqual(t, ewa.CodeInvalidState, a.code, "request %s key %s: %s", c.requestID, c.key, c.history())
			require.Less(t, a.status, 500, "request %s key %s: %s", c.requestID, c.key, c.history())
		}
		require.NotNil(t, c.final, "request %s key %s never got a final answer: %s", c.requestID, c.key, c.history())
		if c.final.afterKill {
			answeredLater++
		}
		if c.final.accepted() {
			accepted++
			require.Equal(t, c.wfID, c.final.workflowID, "the answer names the key's saga")
			continue
		}
		refused++
		_, ok := ewa.RefusalOf(c.final.code)
		require.True(t, ok, "request %s: %d %s is not one of the saga's refusals: %s", c.requestID, c.final.status, c.final.code, c.final.body)
	}

	// Each accepted advance reaches DISBURSED; a refused one is left REQUESTED.
	settleStart := time.Now()
	for _, c := range clients {
		want := string(ewa.Requested)
		if c.final.accepted() {
			want = string(ewa.Disbursed)
		}
		var got struct {
			Status     string  `json:"status"`
			WorkflowID *string `json:"workflowId"`
		}
		require.Eventually(t, func() bool {
			return owner.call(ctx, http.MethodGet, "/api/ewa/requests/"+c.requestID, nil, http.StatusOK, &got) == nil && got.Status == want
		}, 3*time.Minute, 250*time.Millisecond, "request %s: %s, want %s", c.requestID, got.Status, want)
		if c.final.accepted() {
			require.NotNil(t, got.WorkflowID)
			require.Equal(t, c.wfID, *got.WorkflowID, "the request was claimed by its key's saga")
		}
	}
	settled := time.Since(settleStart)

	// A further retry of each key gets the same answer.
	for _, c := range clients {
		c.replay = c.post(ctx, hc, p2.apiURL, true)
		require.NotNil(t, c.replay)
		require.Equal(t, c.final.status, c.replay.status, "request %s: the retry after the drill: %s", c.requestID, c.replay.body)
		require.Equal(t, c.final.code, c.replay.code)
		require.Equal(t, c.final.workflowID, c.replay.workflowID)
	}

	// Paid exactly once: at the bank, one settled transfer per accepted advance (its reference
	// the saga's), none for a refused one, none else for the tenant; the employee's balance up
	// by the accepted principals, the float's down by as much.
	sb = p2.sandboxURL(t)
	transfers := sandboxTransfers(t, sb)
	byWorkflow := map[string][]sandboxTransfer{}
	for _, tr := range transfers {
		if tr.TenantID != d.BusinessID {
			continue
		}
		wf := partnerref.WorkflowIDOf(tr.Reference)
		byWorkflow[wf] = append(byWorkflow[wf], tr)
	}
	var paid int64
	ours := map[string]bool{}
	for _, c := range clients {
		ours[c.wfID] = true
		trs := byWorkflow[c.wfID]
		if !c.final.accepted() {
			require.Empty(t, trs, "refused request %s was paid", c.requestID)
			continue
		}
		require.Len(t, trs, 1, "request %s: transfers at the bank %+v", c.requestID, trs)
		tr := trs[0]
		require.Equal(t, "SETTLED", tr.Status)
		require.Equal(t, c.principal, tr.AmountSantim)
		require.Equal(t, empAccount, tr.ToAccount)
		require.Equal(t, demoFundingAccount, tr.FromAccount)
		paid += tr.AmountSantim
	}
	for wf, trs := range byWorkflow {
		require.True(t, ours[wf], "a transfer no drill request owns: %+v", trs)
	}
	require.Equal(t, empBefore+paid, sandboxBalance(t, sb, empAccount), "the employee is paid each accepted advance once")
	require.Equal(t, fundBefore-paid, sandboxBalance(t, sb, demoFundingAccount))

	// In the ledger: one POSTED transaction per accepted advance, under the saga's posting key,
	// balanced at principal + fee; none for a refused one.
	ledgerTxs := drillLedger(t, dataDir, launch.ports[1], d.BusinessID)
	for _, c := range clients {
		txs := ledgerTxs[c.wfID]
		if !c.final.accepted() {
			require.Empty(t, txs, "refused request %s has a ledger posting", c.requestID)
			continue
		}
		require.Len(t, txs, 1, "request %s: ledger transactions %+v", c.requestID, txs)
		tx := txs[0]
		require.Equal(t, "POSTED", tx.status)
		require.Equal(t, "ewa-disburse:"+c.wfID, tx.key)
		fee, err := ewa.Fee(c.principal, ewa.Settings{FeeFlatSantim: elig.Settings.FeeFlatSantim, FeeBasisPoints: elig.Settings.FeeBasisPoints})
		require.NoError(t, err)
		require.Equal(t, [2]int64{c.principal + fee, c.principal + fee}, [2]int64{tx.debits, tx.credits})
	}
	// One ewa.disbursed.v1 event per accepted advance.
	events := drillEvents(t, dataDir, launch.ports[1], d.BusinessID)
	for _, c := range clients {
		want := 0
		if c.final.accepted() {
			want = 1
		}
		require.Equal(t, want, events[c.requestID], "request %s: %s events", c.requestID, ewa.EventDisbursed)
	}
	var others []string
	for wf := range ledgerTxs {
		if !ours[wf] {
			others = append(others, wf)
		}
	}
	require.Empty(t, others, "ledger transactions of sagas the drill did not start")

	killed := "dev's process group and postgres"
	if !killPostgres {
		killed = "dev's process group"
	}
	t.Logf("crash drill: %d disburses of %d santim; %d kill(s) of %s", drillSagas, principal, len(kills), killed)
	for i, k := range kills {
		moved := drillMovedBy(t, dataDir, launch.ports[1], d.BusinessID, k.at)
		t.Logf("kill %d at %s (%s): %d calls answered (%d accepted before the first kill), %d not (%d POSTs on the wire); by then %d ledger postings, %d transfers booked at the bank, %d settled, %d DISBURSED",
			i+1, k.after.Round(time.Millisecond), k.why, k.answered, k.accepted, drillSagas-k.answered, k.inFlight, moved[0], moved[1], moved[2], moved[3])
		t.Logf("restart %d: dev ready in %s (%s), readyz 200 at %s; postgres:\n%s", i+1, k.restart.Round(time.Millisecond), k.pgStart, k.readyz.Round(time.Millisecond), k.pgLog)
	}
	t.Logf("answers: %d accepted, %d refused by the saga, %d given after a kill (the last %s after the last restart); retries: %d with the stack down, %d IDEMPOTENCY_KEY_IN_USE",
		accepted, refused, answeredLater, allAnswered.Round(time.Millisecond), transportErrs, inUse)
	t.Logf("all DISBURSED %s after; %d santim paid in %d transfers, one each", settled.Round(time.Millisecond), paid, accepted)

	pg2 := p2.postgresPID(t)
	p2.stop(t)
	require.False(t, processAlive(pg2), "postgres %d survived shutdown", pg2)
	require.Empty(t, processesMentioning(dataDir), "processes left behind")
}

// history is the client's attempts, in short: runs of "stack down" counted, answers with their
// code, the kill marked.
func (c *drillClient) history() string {
	var out []string
	down, killed := 0, false
	flush := func() {
		if down > 0 {
			out = append(out, fmt.Sprintf("no answer ×%d", down))
			down = 0
		}
	}
	for _, a := range c.attempts {
		if a.afterKill && !killed {
			flush()
			out, killed = append(out, "| kill |"), true
		}
		if a.status == 0 {
			down++
			continue
		}
		flush()
		out = append(out, strings.TrimSpace(strconv.Itoa(a.status)+" "+a.code))
	}
	flush()
	if c.final != nil {
		out = append(out, "final: "+c.final.body)
	}
	return strings.Join(out, ", ")
}

// drillPrincipal is the largest principal up to 100 ETB whose principal + fee fits in share.
func drillPrincipal(t *testing.T, share int64, s ewa.Settings) int64 {
	t.Helper()
	for p := min(share, 10_000); p > 0; p-- {
		fee, err := ewa.Fee(p, s)
		require.NoError(t, err)
		if p+fee <= share {
			return p
		}
	}
	t.Fatalf("the employee may draw %d santim per request today, less than any advance and its fee", share)
	return 0
}

// run posts the client's key until it has a final answer.
func (c *drillClient) run(ctx context.Context, hc *http.Client, base string, st *drillState) {
	deadline := time.Now().Add(drillClientDeadline)
	for time.Now().Before(deadline) {
		st.mu.Lock()
		st.inFlight++
		afterKill := st.killed
		st.mu.Unlock()
		a, retryAfter := c.attempt(ctx, hc, base, afterKill)
		st.mu.Lock()
		st.inFlight--
		c.attempts = append(c.attempts, a.drillAttempt)
		if a.final != nil {
			c.final = a.final
			st.answered++
			if !afterKill && a.status != 0 && a.final.accepted() {
				st.acceptedEarly++
				if st.acceptedEarly == st.killAfter && !st.killed {
					close(st.killNow)
				}
			}
			if st.answered == drillSagas && !st.killed {
				close(st.allAnswered)
			}
		}
		st.mu.Unlock()
		if c.final != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryAfter):
		}
	}
}

type drillResult struct {
	drillAttempt
	final *drillAnswer
}

// attempt posts the key once: a final answer, or the wait before the next try.
func (c *drillClient) attempt(ctx context.Context, hc *http.Client, base string, afterKill bool) (drillResult, time.Duration) {
	a := drillResult{drillAttempt: drillAttempt{afterKill: afterKill}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/ewa/requests/"+c.requestID+"/disburse", nil)
	if err != nil {
		a.err = err.Error()
		return a, time.Second
	}
	req.Header.Set("Idempotency-Key", c.key)
	resp, err := hc.Do(req)
	if err != nil {
		a.err = err.Error()
		return a, 250 * time.Millisecond // the stack is down or restarting
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		a.err = err.Error()
		return a, 250 * time.Millisecond
	}
	a.status = resp.StatusCode
	ans := parseDrillAnswer(resp.StatusCode, body, afterKill)
	a.code = ans.code
	if a.status == http.StatusConflict && a.code == "IDEMPOTENCY_KEY_IN_USE" {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return a, time.Duration(max(secs, 1)) * time.Second
	}
	a.final = &ans
	return a, 0
}

// post sends the key once more and returns the answer (nil: no HTTP answer).
func (c *drillClient) post(ctx context.Context, hc *http.Client, base string, afterKill bool) *drillAnswer {
	a, _ := c.attempt(ctx, hc, base, afterKill)
	if a.status == 0 {
		return nil
	}
	if a.final == nil {
		return &drillAnswer{status: a.status, code: a.code}
	}
	return a.final
}

func parseDrillAnswer(status int, body []byte, afterKill bool) drillAnswer {
	ans := drillAnswer{status: status, body: string(body), afterKill: afterKill}
	var v struct {
		WorkflowID string `json:"workflowId"`
		Error      struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &v)
	ans.code, ans.workflowID = v.Error.Code, v.WorkflowID
	return ans
}

// callKeyed is call with an Idempotency-Key.
func (c *demoClient) callKeyed(ctx context.Context, method, path, key string, body any, want int, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	return c.do(req, want, out)
}

type sandboxTransfer struct {
	Reference    string `json:"reference"`
	FromAccount  string `json:"fromAccount"`
	ToAccount    string `json:"toAccount"`
	AmountSantim int64  `json:"amountSantim"`
	TenantID     string `json:"tenantId"`
	Status       string `json:"status"`
}

func sandboxTransfers(t *testing.T, base string) []sandboxTransfer {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/sandbox/transfers?limit=10000")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Transfers []sandboxTransfer `json:"transfers"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Transfers
}

func sandboxBalance(t *testing.T, base, account string) int64 {
	t.Helper()
	code, acct := sandboxAccount(t, base, account)
	require.Equal(t, http.StatusOK, code, account)
	n, ok := acct["balanceSantim"].(float64)
	require.True(t, ok, "account %s: %v", account, acct)
	return int64(n)
}

// drillLedgerTx is a ledger transaction of a saga with its POSTED totals.
type drillLedgerTx struct {
	key, status     string
	debits, credits int64
}

// drillLedger reads the tenant's ledger transactions by workflow id, as the private cluster's
// superuser (over its socket).
func drillLedger(t *testing.T, dataDir string, pgPort int, tenant string) map[string][]drillLedgerTx {
	t.Helper()
	c := pgcluster.Cluster{Dir: filepath.Join(dataDir, "pg", "data"), Port: pgPort}
	conn, err := pgx.Connect(t.Context(), c.SuperuserDSN(devDatabase))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `
		SELECT t.workflow_id, t.idempotency_key, t.status,
		       coalesce(sum(e.amount) FILTER (WHERE e.phase = 'POSTED' AND e.direction = 'DEBIT'), 0)::bigint,
		       coalesce(sum(e.amount) FILTER (WHERE e.phase = 'POSTED' AND e.direction = 'CREDIT'), 0)::bigint
		FROM ledger.transactions t LEFT JOIN ledger.entries e ON e.transaction_id = t.id
		WHERE t.tenant_id = $1 AND t.workflow_id <> ''
		GROUP BY t.id`, tenant)
	require.NoError(t, err)
	out := map[string][]drillLedgerTx{}
	for rows.Next() {
		var wf string
		var tx drillLedgerTx
		require.NoError(t, rows.Scan(&wf, &tx.key, &tx.status, &tx.debits, &tx.credits))
		out[wf] = append(out[wf], tx)
	}
	require.NoError(t, rows.Err())
	return out
}

// drillEvents counts the tenant's ewa.disbursed.v1 events by request id.
func drillEvents(t *testing.T, dataDir string, pgPort int, tenant string) map[string]int {
	t.Helper()
	c := pgcluster.Cluster{Dir: filepath.Join(dataDir, "pg", "data"), Port: pgPort}
	conn, err := pgx.Connect(t.Context(), c.SuperuserDSN(devDatabase))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT payload->>'requestId', count(*) FROM app.outbox
		WHERE tenant_id = $1 AND type = $2 GROUP BY 1`, tenant, ewa.EventDisbursed)
	require.NoError(t, err)
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		require.NoError(t, rows.Scan(&id, &n))
		out[id] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// drillMovedBy counts what the tenant's sagas had done before at: ledger transactions, bank
// transfers booked and settled, requests DISBURSED.
func drillMovedBy(t *testing.T, dataDir string, pgPort int, tenant string, at time.Time) (n [4]int) {
	t.Helper()
	c := pgcluster.Cluster{Dir: filepath.Join(dataDir, "pg", "data"), Port: pgPort}
	conn, err := pgx.Connect(t.Context(), c.SuperuserDSN(devDatabase))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT
		(SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND workflow_id <> '' AND created_at < $2),
		(SELECT count(*) FROM sandbox.transfers WHERE tenant_id = $1 AND created_at < $2),
		(SELECT count(*) FROM sandbox.transfers WHERE tenant_id = $1 AND settled_at < $2),
		(SELECT count(*) FROM app.ewa_requests WHERE tenant_id = $1 AND disbursed_at < $2)`, tenant, at).Scan(&n[0], &n[1], &n[2], &n[3]))
	return n
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// pgRestartLines are the lines of postgres's log since from that tell how the restart went (the
// dead run's lock, crash recovery, ready).
func pgRestartLines(t *testing.T, path string, from int64) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	// Left out: the dead run's backends going, and the start's own readiness probes.
	noise := regexp.MustCompile(`unexpected postmaster exit|is starting up|not yet accepting|Consistent recovery state`)
	for _, l := range strings.Split(string(b[min(from, int64(len(b))):]), "\n") {
		if noise.MatchString(l) {
			continue
		}
		for _, w := range []string{"lock", "interrupted", "redo", "recovery", "checkpoint starting: end-of-recovery", "ready to accept", "FATAL", "shared memory"} {
			if strings.Contains(l, w) {
				out = append(out, "  "+l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// startLine is what dev printed for component ("postgres   ready in …").
func startLine(out, component string) string {
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(component) + `\s+(ready in \S+)`).FindStringSubmatch(out)
	if m == nil {
		return component + " ?"
	}
	return component + " " + m[1]
}
