package gateway

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// client is a Client on the env's real gRPC connection.
func (e *env) client(opts ClientOptions) *Client {
	return NewClient(gatewayv1.NewGatewayServiceClient(e.conn), opts)
}

// requireReason checks that err is a gateway *Error with reason r.
func requireReason(t *testing.T, err error, r Reason) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, r, ReasonOf(err), "%v", err)
	require.ErrorIs(t, err, &Error{Reason: r})
}

// Every RPC through the Client against the real gateway and sandbox: answers arrive, and the
// gateway's refusals come back as typed errors with their reasons (and the refused field).
func TestClientAgainstGateway(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	c := e.client(ClientOptions{})
	ctx := ctxT(t)
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)

	look, err := c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: dst, ExpectedHolderName: "abebe kebede"})
	require.NoError(t, err)
	require.True(t, look.GetExists())
	require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_MATCH, look.GetNameMatch())

	ref := uniq("cl")
	req := &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: src, ToAccount: dst,
		AmountSantim: 2_500, TenantId: "tenant-a", Domain: "EWA"}
	d, err := c.InitiateDisbursement(ctx, req)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, d.GetOutcome())

	bref := uniq("clb")
	b, err := c.InitiateBulkDisbursement(ctx, &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: bref,
		FromAccount: src, TenantId: "tenant-a", Domain: "PAYROLL", Items: []*gatewayv1.BulkItem{{Reference: bref + "-1", ToAccount: dst, AmountSantim: 100}}})
	require.NoError(t, err)
	require.Equal(t, int64(1), b.GetItemCount())

	st, err := c.GetTransferStatus(ctx, &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: ref})
	require.NoError(t, err)
	require.Equal(t, d.GetTransfer().GetId(), st.GetTransfer().GetId())

	as, err := c.GetAdapterStatus(ctx, &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
	require.NoError(t, err)
	require.Equal(t, "closed", as.GetBreakerState())

	today := time.Now().UTC().Format(time.DateOnly)
	fs, err := c.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: uniq("tenant"), Account: src, FromDate: today, ToDate: today})
	require.NoError(t, err)
	require.Equal(t, SandboxPartner, fs.GetPartner())

	// Typed errors.
	_, err = c.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: uniq("cl"), FromAccount: src,
		ToAccount: dst, AmountSantim: 0, TenantId: "tenant-a", Domain: "EWA"})
	requireReason(t, err, ReasonInvalidArgument)
	var ge *Error
	require.ErrorAs(t, err, &ge)
	require.Equal(t, "amount_santim", ge.Field)
	_, err = c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: "nobank", AccountId: dst})
	requireReason(t, err, ReasonUnknownPartner)
	require.ErrorIs(t, err, ErrUnknownPartner)
	conflict := proto.Clone(req).(*gatewayv1.InitiateDisbursementRequest)
	conflict.AmountSantim++
	_, err = c.InitiateDisbursement(ctx, conflict)
	requireReason(t, err, ReasonReferenceConflict)
	require.ErrorIs(t, err, ErrReferenceConflict)
	_, err = c.GetTransferStatus(ctx, &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: uniq("none")})
	requireReason(t, err, ReasonTransferNotFound)
	_, err = c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: "a.b"})
	requireReason(t, err, ReasonPartnerInvalid)
	require.Equal(t, "closed", c.BreakerState())
}

// A partner outage opens the client's breaker; then nothing more is sent to the gateway until the
// open period ends, and a successful probe closes it again.
func TestClientBreakerOpensOnPartnerOutage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.BreakerFailures = 1000 // the client's breaker is under test, not the gateway's
		g.Attempts = 1
	}})
	var (
		mu      sync.Mutex
		changes []string
	)
	c := e.client(ClientOptions{Breaker: rpcclient.BreakerOptions{Failures: 3, OpenFor: 200 * time.Millisecond,
		OnStateChange: func(from, to string) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, from+">"+to)
		}}})
	ctx := ctxT(t)
	down := acct("down")
	e.account(t, down, "Down Account", 0)
	e.fault(t, down, map[string]any{"errorRatePercent": 100})
	lookupDown := func() error {
		_, err := c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: down})
		return err
	}
	for range 3 {
		requireReason(t, lookupDown(), ReasonPartnerUnavail)
	}
	require.Equal(t, "open", c.BreakerState())

	// Open: refused in the client, nothing reaches the gateway.
	served := func() float64 {
		return testutil.ToFloat64(e.metrics.Requests.WithLabelValues("LookupAccount", string(ReasonPartnerUnavail))) +
			testutil.ToFloat64(e.metrics.Requests.WithLabelValues("LookupAccount", "ok"))
	}
	n := served()
	err := lookupDown()
	requireReason(t, err, ReasonCircuitOpen)
	require.ErrorIs(t, err, ErrCircuitOpen)
	require.Equal(t, n, served(), "an open breaker sends nothing")

	// The partner recovers; once the open period is over one probe goes through and closes it.
	e.clearFault(t, down)
	require.Eventually(t, func() bool { return c.BreakerState() == "half-open" }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		if c.BreakerState() != "half-open" {
			return false // the sandbox served its cached fault once more: wait for the next probe
		}
		return lookupDown() == nil
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "closed", c.BreakerState())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "closed>open", changes[0])
	require.Equal(t, "open>half-open", changes[1])
	require.Equal(t, "half-open>closed", changes[len(changes)-1])
}

// The gateway itself unreachable is an infrastructure failure too.
func TestClientBreakerOpensWhenGatewayIsDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c, err := Dial(addr, ClientOptions{Breaker: rpcclient.BreakerOptions{Failures: 2, OpenFor: time.Hour}, Timeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for range 2 {
		_, err := c.GetAdapterStatus(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
		requireReason(t, err, ReasonUnavailable)
	}
	require.Equal(t, "open", c.BreakerState())
	_, err = c.GetAdapterStatus(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
	requireReason(t, err, ReasonCircuitOpen)
}

// A flood of callers' mistakes, of every kind the gateway refuses, never opens the breaker, and a
// valid call goes through afterwards.
func TestClientBreakerIgnoresInvalidRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	c := e.client(ClientOptions{Breaker: rpcclient.BreakerOptions{Failures: 2, OpenFor: time.Hour}})
	ctx := ctxT(t)
	src, dst, closed := acct("src"), acct("dst"), acct("closed")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.account(t, closed, "Closed Account", 0)
	e.bankCall(t, http.MethodPost, "/api/v1/sandbox/accounts/"+closed+"/close", nil, http.StatusOK, nil)
	used := uniq("used")
	disb := func(ref, from, to string, amount int64) *gatewayv1.InitiateDisbursementRequest {
		return &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: from, ToAccount: to,
			AmountSantim: amount, TenantId: "tenant-a", Domain: "EWA"}
	}
	_, err := c.InitiateDisbursement(ctx, disb(used, src, dst, 10))
	require.NoError(t, err)

	reasons := map[Reason]int{}
	for range 20 {
		errs := []error{}
		add := func(_ any, err error) { errs = append(errs, err) }
		add(c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: "a b"}))
		add(c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: "nobank", AccountId: dst}))
		add(c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: "a.b"}))
		add(c.InitiateDisbursement(ctx, disb(uniq("r"), src, src, 1)))
		add(c.InitiateDisbursement(ctx, disb(used, src, dst, 11)))
		add(c.InitiateBulkDisbursement(ctx, &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: uniq("b"),
			FromAccount: src, TenantId: "tenant-a", Domain: "PAYROLL"}))
		add(c.GetTransferStatus(ctx, &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: uniq("none")}))
		add(c.GetAdapterStatus(ctx, &gatewayv1.GetAdapterStatusRequest{Partner: "nobank"}))
		add(c.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: "t", Account: src, FromDate: "2026-03-02", ToDate: "2026-03-01"}))
		for _, err := range errs {
			require.Error(t, err)
			var ge *Error
			require.ErrorAs(t, err, &ge)
			require.False(t, ge.Reason.Infra(), "%v", err)
			reasons[ReasonOf(err)]++
		}
		// Business answers that are not errors at all: a rejection and a missing account.
		r, err := c.InitiateDisbursement(ctx, disb(uniq("r"), src, dst, 999_999_999))
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, r.GetOutcome())
		l, err := c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: acct("nobody")})
		require.NoError(t, err)
		require.False(t, l.GetExists())
		l, err = c.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: closed})
		require.NoError(t, err)
		require.Equal(t, gatewayv1.AccountStatus_ACCOUNT_STATUS_CLOSED, l.GetAccountStatus())
	}
	require.Equal(t, "closed", c.BreakerState())
	for _, r := range []Reason{ReasonInvalidArgument, ReasonUnknownPartner, ReasonPartnerInvalid, ReasonReferenceConflict, ReasonTransferNotFound} {
		require.NotZero(t, reasons[r], "the flood holds %s", r)
	}
	r, err := c.InitiateDisbursement(ctx, disb(uniq("ok"), src, dst, 500))
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
}
