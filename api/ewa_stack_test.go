package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	"github.com/wagerail/wagerail/reconcile"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// ewaStack is every real component of an EWA disbursement in one test: the API (served over HTTP
// too, for the bank's callbacks), the ledger over gRPC, the gateway over gRPC with the bank
// sandbox over HTTP, the embedded Temporal server and a worker on a task queue of the test's own,
// all on one fresh database. The KYC world on top gives a business, its owner, a platform
// reviewer and an employee whose payout account exists at the sandbox.
type ewaStack struct {
	*kycWorld
	bank     *gatewaytest.Stack
	tc       client.Client
	temporal *devtemporaltest.Process
	queue    string
	ledger   *ledger.Client
	// ledgerAddr is the ledger's gRPC address (for a worker run as its own process).
	ledgerAddr string
	gateway    *gateway.Client
	worker     worker.Worker
	funding    string // the tenant's funding account at the sandbox
	opts       ewaStackOpts
	// deadGateway is a client of a gateway that is not there (the gateway-down case).
	deadGateway *gateway.Client
}

type ewaStackOpts struct {
	settleDelay time.Duration // the sandbox's (default: gatewaytest's)
	noWorker    bool          // the test starts (and stops) workers itself
	gatewayDown bool          // the worker's gates reach no gateway (connection refused)
	// temporalPostgres runs the saga on the embedded Temporal server that keeps its state in
	// Postgres (devtemporaltest.OnPostgres) instead of the in-memory SQLite one.
	temporalPostgres bool
	// sagaWait replaces the API's wait for a saga's acceptance (0: the default), for tests whose
	// many concurrent sagas take longer than that on a loaded machine.
	sagaWait time.Duration
	// interceptors are added to the worker's (the bench's step timings).
	interceptors []interceptor.WorkerInterceptor
}

const (
	stackCallbackSecret = "ewa-stack-callback-secret"
	stackEmployeeAcct   = "1000123456789" // the KYC world's employee payout account
	stackFundingBalance = 10_000_000_00   // 10 M ETB
)

func newEwaStack(t testing.TB, o ewaStackOpts) *ewaStack {
	t.Helper()
	d := testkit.NewDB(t)
	var engine atomic.Value // the API's handler, set once built (the bank needs the URL first)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		engine.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	bank := gatewaytest.Start(t, d.App, gatewaytest.Options{
		SettleDelay: o.settleDelay, CallbackSecret: stackCallbackSecret,
		CallbackURL: hs.URL + "/api/integration/bank-callback/sandbox",
	})
	// The ledger and the API share an adjustment key, as make run's credentials give them: the
	// dispute adjustments work (cmd/wagerail/credentials.go).
	lrpc, ledgerAddr := ledgertest.ServeAddr(t, d.App, disputeAdjustmentKey)
	lc := ledger.NewClient(lrpc, ledger.ClientOptions{})
	gc := gateway.NewClient(bank.Gateway, gateway.ClientOptions{})
	ts := devtemporaltest.Server(t)
	if o.temporalPostgres {
		ts = devtemporaltest.OnPostgres(t)
	}
	// The embedded server is on loopback: requests go uncompressed, as cmd/wagerail sends them
	// to a loopback frontend (temporalConnection).
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace(),
		Logger:            sdklog.NewStructuredLogger(slog.New(stackLogHandler())),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("ewa")

	u := newUploadsFixtureOn(t, d, func(deps *Deps) {
		deps.Now = time.Now // the bank signs its callbacks with the real clock
		deps.Temporal, deps.TaskQueue = tc, queue
		deps.Ledger, deps.Gateway = lc, gc
		// The reviewers' lookup route: the sandbox's registry, through a client of its own (as
		// cmd/wagerail wires it).
		deps.NationalIDRegistry = activities.NationalIDRegistry{Registry: "sandbox",
			Gateway: gateway.NewClient(bank.Gateway, gateway.ClientOptions{})}
		deps.DisburseWait = o.sagaWait
		deps.AdjustmentKeys = [][]byte{disputeAdjustmentKey}
		if os.Getenv("WAGERAIL_TEST_TEMPORAL_LOG") != "" {
			deps.Log = slog.New(stackLogHandler()) // the API's log lines beside the saga's
		}
		deps.WebhookSecrets = map[string][]byte{"sandbox": []byte(stackCallbackSecret)}
	})
	engine.Store(http.Handler(u.srv.Engine))
	s := &ewaStack{kycWorld: newKycWorldOn(t, u), bank: bank, tc: tc, temporal: ts, queue: queue, ledger: lc, ledgerAddr: ledgerAddr,
		gateway: gc, opts: o}

	if o.gatewayDown {
		dead, err := gateway.Dial("127.0.0.1:1", gateway.ClientOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = dead.Close() })
		s.deadGateway = dead
	}
	s.funding = testkit.Unique("fund")
	bank.Account(t, s.funding, "Org Treasury", stackFundingBalance)
	bank.Account(t, stackEmployeeAcct, "Abebe Kebede", 0)
	rec := s.owner.call(http.MethodPut, "/api/ewa/settings", map[string]any{
		"fundingAccount":   map[string]any{"partner": "sandbox", "accountNumber": s.funding},
		"accessCapPercent": 50, "feeFlatSantim": 500, "feeBasisPoints": 100, "accountNameMatch": false,
	})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	if !o.noWorker {
		s.worker = s.startWorker(t, nil)
	}
	return s
}

// startWorker runs a worker on the stack's queue with the real activities; extra may register
// replacements (the crash test). It stops when the test ends; Stop before that is allowed.
func (s *ewaStack) startWorker(t testing.TB, extra func(worker.Registry)) worker.Worker {
	t.Helper()
	opts := workflows.WorkerOptions()
	opts.Interceptors = append(opts.Interceptors, s.opts.interceptors...)
	w := worker.New(s.tc, s.queue, opts)
	workflows.Register(w, s.realActivities())
	if extra != nil {
		extra(w)
	}
	require.NoError(t, w.Start())
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stoppable{Worker: w, stop: stop}
}

// stoppable makes a worker's Stop safe to call twice (the test and its cleanup).
type stoppable struct {
	worker.Worker
	stop func()
}

func (w stoppable) Stop() { w.stop() }

// realActivities are the worker's activities on the stack's real components, as
// cmd/wagerail's workerDeps builds them.
func (s *ewaStack) realActivities() workflows.Deps {
	gates := s.gateway
	if s.opts.gatewayDown {
		gates = s.deadGateway
	}
	return workflows.Deps{
		Gates:    &activities.Gates{DB: s.d.App, Gateway: gates},
		Money:    &activities.Money{Ledger: s.ledger, Gateway: s.gateway, Metrics: activities.NewSettlementPollMetrics(prometheus.NewRegistry())},
		Ewa:      &activities.Ewa{DB: s.d.App},
		EwaRepay: &activities.EwaRepay{DB: s.d.App},
		Bulk:     &activities.Bulk{Gateway: s.gateway},
		// The loan disbursement saga's record steps (api/lending_disburse_test.go's stack).
		LoanDisburse: &activities.LoanDisburse{DB: s.d.App},
		// The BNPL sagas' record steps (api/bnpl_test.go).
		Bnpl: &activities.Bnpl{DB: db.NewBun(s.d.App)}, BnplWriteOff: &activities.BnplWriteOff{DB: db.NewBun(s.d.App)},
		// The payroll disbursement saga's record steps (api/payroll_disburse_test.go).
		PayrollDisburse: &activities.PayrollDisburse{DB: db.NewBun(s.d.App)},
		// The completion a fully paid run starts (api/payroll_complete_test.go) and the deductions
		// poller's cross-tenant look-up: a stack that ensures its schedule (the hostile sweep) has
		// a firing that succeeds.
		PayrollComplete: &activities.PayrollComplete{DB: db.NewBun(s.d.App), Platform: db.NewBun(s.srv.deps.Platform)},
		// The run's calculation (api/payroll_runs.go's calculate).
		PayrollCalculate: &activities.PayrollCalculate{DB: db.NewBun(s.d.App)},
		// The equb sagas' record steps (api/equb_money_test.go).
		Equb: &activities.Equb{DB: db.NewBun(s.d.App), MoneyMovement: true},
		// The equb escrow reconciliation (api/equb_escrow_recon_test.go); the route's switch decides.
		EqubEscrowRecon: &activities.EqubEscrowRecon{Enabled: true, Platform: s.srv.deps.Platform,
			Runner: &reconcile.EscrowRunner{DB: s.d.App, Ledger: s.ledger, Gateway: s.gateway}},
		// The savings deposit and withdraw saga's steps (api/savings_test.go).
		Savings: &activities.Savings{DB: s.d.App, Ledger: s.ledger},
		// The wallet transfer saga's steps (api/wallet_transfer_test.go).
		Wallet: &activities.Wallet{DB: s.d.App, Ledger: s.ledger},
		// The dispute decisions' steps and the loan servicing sagas' (api/disputes_decide_test.go,
		// api/lending_servicing_test.go run them on stacks of their own).
		Disputes:        &activities.Disputes{DB: s.d.App, Ledger: s.ledger},
		LoanDelinquency: &activities.LoanDelinquency{DB: db.NewBun(s.d.App)},
		LoanWriteOff:    &activities.LoanWriteOff{DB: db.NewBun(s.d.App)},
		// The court-order remittance saga's steps and the hourly auto-submit's cross-tenant
		// look-up (api/payroll_courtorders_test.go): a stack that ensures the schedule (the
		// hostile sweep) has a firing that succeeds, so its payroll health stays 200 across
		// the hour, not 503 FAILING.
		PayrollCourtOrders: &activities.PayrollCourtOrders{DB: db.NewBun(s.d.App), Platform: db.NewBun(s.srv.deps.Platform)},
	}
}

// approveKyc submits the employee's KYC and approves it as the platform reviewer.
func (s *ewaStack) approveKyc(t testing.TB) {
	t.Helper()
	sub, code, errc := s.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code, errc)
	for _, step := range []string{"claim", "approve"} {
		rec := s.reviewer.call(http.MethodPost, "/api/kyc/"+sub.ID+"/"+step, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
}

// request creates an EWA request for the employee.
func (s *ewaStack) request(t testing.TB, amount int64) ewaRequestJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/ewa/requests", map[string]any{"employeeId": s.employee, "amountSantim": amount},
		"Idempotency-Key", testkit.Unique("req"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[ewaRequestJSON](t, rec)
}

func (s *ewaStack) disburse(id, key string) *httptest.ResponseRecorder {
	return s.owner.call(http.MethodPost, "/api/ewa/requests/"+id+"/disburse", nil, "Idempotency-Key", key)
}

// waitStatus polls the request until it reaches want.
func (s *ewaStack) waitStatus(t *testing.T, id, want string) ewaRequestJSON {
	t.Helper()
	var last ewaRequestJSON
	require.Eventually(t, func() bool {
		rec := s.owner.call(http.MethodGet, "/api/ewa/requests/"+id, nil)
		if rec.Code != http.StatusOK {
			return false
		}
		last = decode[ewaRequestJSON](t, rec)
		return string(last.Status) == want
	}, 60*time.Second, 50*time.Millisecond, "request %s never reached %s", id, want)
	return last
}

// count runs a count(*) query in the stack's tenant.
func (s *ewaStack) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, query, args...).Scan(&n)
	}))
	return n
}

// sideEffects counts what a disbursement leaves behind for the tenant: ledger transactions,
// partner transfers and outbox events of the EWA saga.
func (s *ewaStack) sideEffects(t *testing.T) (ledgerTxs, transfers, events int) {
	t.Helper()
	ledgerTxs = s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	transfers = s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant)
	events = s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type IN ('ewa.disbursed.v1', 'ewa.disbursement_failed.v1')`, s.tenant)
	return
}

// auditRows counts the tenant's audit rows of action.
// sandboxBalance is an account's balance at the bank sandbox.
func (s *ewaStack) sandboxBalance(t *testing.T, number string) int64 {
	t.Helper()
	var out struct {
		BalanceSantim int64 `json:"balanceSantim"`
	}
	s.bank.Bank(t, http.MethodGet, "/api/v1/sandbox/accounts/"+number, nil, http.StatusOK, &out)
	return out.BalanceSantim
}

func (s *ewaStack) auditRows(t *testing.T, action string) int {
	return s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = $2`, s.tenant, action)
}

// entries returns a ledger transaction's POSTED entries as "D|C account amount" lines.
func entryLines(tx *ledgerv1.Transaction) []string {
	var out []string
	for _, e := range tx.GetEntries() {
		if e.GetPhase() != ledgerv1.EntryPhase_ENTRY_PHASE_POSTED {
			continue
		}
		side := "D"
		if e.GetDirection() == ledgerv1.Direction_DIRECTION_CREDIT {
			side = "C"
		}
		out = append(out, side+" "+e.GetAccountName()+" "+strconv.FormatInt(e.GetAmountSantim(), 10))
	}
	return out
}

// stackLogHandler is where the stack's Temporal client and workers log: nowhere, unless
// WAGERAIL_TEST_TEMPORAL_LOG is set (debugging a saga test).
func stackLogHandler() slog.Handler {
	if os.Getenv("WAGERAIL_TEST_TEMPORAL_LOG") != "" {
		return slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	return slog.DiscardHandler
}
