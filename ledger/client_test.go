package ledger

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// slowLedger answers GetBalance only when the caller gives up.
type slowLedger struct {
	ledgerv1.UnimplementedLedgerServiceServer
}

func (slowLedger) GetBalance(ctx context.Context, _ *ledgerv1.GetBalanceRequest) (*ledgerv1.GetBalanceResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestClientDeadline(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	ledgerv1.RegisterLedgerServiceServer(srv, slowLedger{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	c, err := Dial(lis.Addr().String(), ClientOptions{Timeout: 150 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	start := time.Now()
	_, err = c.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: "t", AccountName: "fee-income"})
	requireReason(t, err, ReasonDeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second, "the per-call deadline bounds the call")
}

// flakyLedger fails GetAccount with Unavailable while down is set, and counts calls.
type flakyLedger struct {
	ledgerv1.LedgerServiceClient
	down  atomic.Bool
	calls atomic.Int64
}

func (f *flakyLedger) GetAccount(ctx context.Context, _ *ledgerv1.GetAccountRequest, _ ...grpc.CallOption) (*ledgerv1.GetAccountResponse, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}
	return &ledgerv1.GetAccountResponse{Account: &ledgerv1.Account{Name: "fee-income"}}, nil
}

func (f *flakyLedger) PostTransaction(ctx context.Context, _ *ledgerv1.PostTransactionRequest, _ ...grpc.CallOption) (*ledgerv1.PostTransactionResponse, error) {
	f.calls.Add(1)
	return nil, (&Error{Reason: ReasonUnbalanced, Message: "debits differ"}).GRPCStatus().Err()
}

func TestClientCircuitBreaker(t *testing.T) {
	t.Parallel()
	f := &flakyLedger{}
	var changes []string
	c := NewClient(f, ClientOptions{Breaker: rpcclient.BreakerOptions{Failures: 3, OpenFor: 200 * time.Millisecond,
		OnStateChange: func(from, to string) { changes = append(changes, from+">"+to) }}})
	ctx := context.Background()

	// Refusals are the ledger working: they never open the breaker.
	for range 10 {
		_, err := c.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{})
		require.ErrorIs(t, err, ErrUnbalanced)
	}
	require.Equal(t, "closed", c.BreakerState())

	f.down.Store(true)
	for range 3 {
		_, err := c.GetAccount(ctx, &ledgerv1.GetAccountRequest{})
		requireReason(t, err, ReasonUnavailable)
	}
	require.Equal(t, "open", c.BreakerState())
	calls := f.calls.Load()
	_, err := c.GetAccount(ctx, &ledgerv1.GetAccountRequest{})
	requireReason(t, err, ReasonCircuitOpen)
	require.Equal(t, calls, f.calls.Load(), "an open breaker sends nothing")

	f.down.Store(false)
	time.Sleep(250 * time.Millisecond)
	r, err := c.GetAccount(ctx, &ledgerv1.GetAccountRequest{})
	require.NoError(t, err, "after the open period a probe goes through")
	require.Equal(t, "fee-income", r.GetAccount().GetName())
	require.Equal(t, "closed", c.BreakerState())
	require.Equal(t, []string{"closed>open", "open>half-open", "half-open>closed"}, changes)
}

func TestClientAgainstService(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := testkit.Unique("t")
	e.ensure(t, tenant, "payroll-clearing", "fee-income")
	_, err := e.client.PostTransaction(context.Background(), twoLeg(tenant, "k", "payroll-clearing", "fee-income", 1))
	require.NoError(t, err)
	_, err = e.client.PostTransaction(context.Background(), twoLeg(tenant, "k", "payroll-clearing", "fee-income", 2))
	require.ErrorIs(t, err, ErrIdempotencyConflict, "typed errors survive the wire")
	require.Equal(t, codes.AlreadyExists, err.(*Error).Code())
	require.Equal(t, "closed", e.client.BreakerState())

	// Metrics and /healthz on the metrics listener.
	resp, err := http.Get("http://" + e.metricsAddr + "/healthz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, err = http.Get("http://" + e.metricsAddr + "/metrics")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`svc_ledger_rpc_requests_total{outcome="ok",rpc="PostTransaction"} 1`,
		`svc_ledger_rpc_requests_total{outcome="IDEMPOTENCY_CONFLICT",rpc="PostTransaction"} 1`,
		`svc_ledger_rpc_latency_seconds_count{rpc="PostTransaction"} 2`,
		`svc_ledger_entries_posted_total 2`,
		`svc_ledger_transaction_status_transitions_total{from="NONE",to="POSTED"} 1`,
	} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, tenant, "no tenant in any label")
	require.False(t, errors.Is(err, ErrUnavailable))
	require.True(t, strings.Contains(text, "svc_ledger_rpc_latency_seconds_bucket"))
}

// PostCreatingAccounts creates the accounts a first posting names (by the chart) and posts it
// once; the same posting again is a replay; an account outside the chart is still refused.
func TestClientPostCreatingAccounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tenant := testkit.Unique("t")
	req := &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "k-1", Entries: []*ledgerv1.EntryInput{
		{AccountName: "payroll-clearing", Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 700},
		{AccountName: "receivable-from-employee:emp-1", Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 700},
	}}
	_, err := e.client.PostTransaction(ctx, req)
	require.ErrorIs(t, err, ErrAccountNotFound, "the accounts do not exist yet")
	first, err := e.client.PostCreatingAccounts(ctx, req)
	require.NoError(t, err)
	require.False(t, first.GetReplayed())
	again, err := e.client.PostCreatingAccounts(ctx, req)
	require.NoError(t, err)
	require.True(t, again.GetReplayed())
	require.Equal(t, first.GetTransaction().GetId(), again.GetTransaction().GetId())
	acc, err := e.client.ListAccounts(ctx, &ledgerv1.ListAccountsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Len(t, acc.GetAccounts(), 2)

	bad := &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "k-2", Entries: []*ledgerv1.EntryInput{
		{AccountName: "cash", Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 1},
		{AccountName: "payroll-clearing", Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 1},
	}}
	_, err = e.client.PostCreatingAccounts(ctx, bad)
	require.Error(t, err, "no cash account in the chart")
}
