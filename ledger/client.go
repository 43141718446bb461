package ledger

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// ClientOptions tune a Client; zero values take the defaults.
type ClientOptions struct {
	// Timeout is the deadline of each call (default 5 s); a caller's earlier deadline wins.
	Timeout time.Duration
	// BatchTimeout is the deadline of PostTransactions and ReconcileWithBank (default 60 s).
	BatchTimeout time.Duration
	// Breaker is the client's circuit breaker (rpcclient.BreakerOptions: zero values take its
	// defaults).
	Breaker rpcclient.BreakerOptions
}

// Client calls the ledger service with a deadline per call and a circuit breaker, and turns
// failures into *Error values (errors.Is(err, ledger.ErrIdempotencyConflict), ...).
//
// Only infrastructure failures (Unavailable, DeadlineExceeded, Internal) count against the
// breaker: a refused posting is the ledger working, not failing. While the breaker is open,
// calls fail at once with ErrCircuitOpen and nothing is sent. Dial options, breaker, deadlines
// and error mapping are internal/platform/rpcclient's, shared with the gateway's client.
type Client struct {
	rpcclient.Base
	rpc  ledgerv1.LedgerServiceClient
	opts ClientOptions
}

// Dial connects to the ledger at addr (host:port, plaintext: the service runs inside the
// private network; put TLS in front of it with a mesh or pass grpc options in dialOpts).
func Dial(addr string, opts ClientOptions, dialOpts ...grpc.DialOption) (*Client, error) {
	conn, err := rpcclient.Dial("ledger", addr, dialOpts...)
	if err != nil {
		return nil, err
	}
	return newClient(ledgerv1.NewLedgerServiceClient(conn), conn, opts), nil
}

// NewClient wraps a generated client (one on an existing connection, which the caller closes).
func NewClient(rpc ledgerv1.LedgerServiceClient, opts ClientOptions) *Client {
	return newClient(rpc, nil, opts)
}

func newClient(rpc ledgerv1.LedgerServiceClient, conn *grpc.ClientConn, opts ClientOptions) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.BatchTimeout <= 0 {
		opts.BatchTimeout = 60 * time.Second
	}
	base := rpcclient.NewBase[Reason]("ledger", conn, opts.Breaker)
	return &Client{Base: base, rpc: rpc, opts: opts}
}

// call runs one RPC under the breaker and the deadline, mapping its error back to *Error.
func call[Req, Resp any](ctx context.Context, c *Client, timeout time.Duration, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	return rpcclient.Invoke(ctx, &c.Base, timeout, fn, req)
}

// EnsureAccount: see LedgerService.EnsureAccount.
func (c *Client) EnsureAccount(ctx context.Context, r *ledgerv1.EnsureAccountRequest) (*ledgerv1.EnsureAccountResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.EnsureAccount, r)
}

// GetAccount: see LedgerService.GetAccount.
func (c *Client) GetAccount(ctx context.Context, r *ledgerv1.GetAccountRequest) (*ledgerv1.GetAccountResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.GetAccount, r)
}

// ListAccounts: see LedgerService.ListAccounts.
func (c *Client) ListAccounts(ctx context.Context, r *ledgerv1.ListAccountsRequest) (*ledgerv1.ListAccountsResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.ListAccounts, r)
}

// PostTransaction: see LedgerService.PostTransaction.
func (c *Client) PostTransaction(ctx context.Context, r *ledgerv1.PostTransactionRequest) (*ledgerv1.PostTransactionResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.PostTransaction, r)
}

// PostCreatingAccounts posts r and, when the ledger refuses it because an account does not exist
// yet, creates each of its named accounts (by the chart's type) and posts it again. A tenant's
// accounts exist after its first posting, so ensuring them before every posting would cost a
// round trip per entry; the refused first posting wrote nothing, and the idempotency key makes
// the second the only one.
func (c *Client) PostCreatingAccounts(ctx context.Context, r *ledgerv1.PostTransactionRequest) (*ledgerv1.PostTransactionResponse, error) {
	resp, err := c.PostTransaction(ctx, r)
	if !errors.Is(err, ErrAccountNotFound) {
		return resp, err
	}
	ensured := map[string]bool{}
	for _, e := range r.GetEntries() {
		name := e.GetAccountName()
		if name == "" || ensured[name] {
			continue
		}
		if _, err := c.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: r.GetTenantId(), Name: name}); err != nil {
			return nil, err
		}
		ensured[name] = true
	}
	return c.PostTransaction(ctx, r)
}

// PostTransactions: see LedgerService.PostTransactions. Per-item errors are in the results;
// ItemError turns one into an *Error.
func (c *Client) PostTransactions(ctx context.Context, r *ledgerv1.PostTransactionsRequest) (*ledgerv1.PostTransactionsResponse, error) {
	return call(ctx, c, c.opts.BatchTimeout, c.rpc.PostTransactions, r)
}

// ItemResult is one item of a batch answer that carries its own error: a PostTransactions or a
// GetBalances result.
type ItemResult interface {
	GetErrorReason() string
	GetErrorMessage() string
}

// ItemError is the error of one PostTransactions or GetBalances result, or nil when it
// succeeded: the *Error the item would have failed with as a call of its own, so
// errors.Is(ItemError(r), ErrAccountNotFound) works as on GetBalance's error.
func ItemError(r ItemResult) error {
	if r.GetErrorReason() == "" {
		return nil
	}
	return &Error{Reason: Reason(r.GetErrorReason()), Message: strings.TrimPrefix(r.GetErrorMessage(), r.GetErrorReason()+": ")}
}

// CommitPending: see LedgerService.CommitPending.
func (c *Client) CommitPending(ctx context.Context, r *ledgerv1.CommitPendingRequest) (*ledgerv1.CommitPendingResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.CommitPending, r)
}

// VoidPending: see LedgerService.VoidPending.
func (c *Client) VoidPending(ctx context.Context, r *ledgerv1.VoidPendingRequest) (*ledgerv1.VoidPendingResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.VoidPending, r)
}

// Reverse: see LedgerService.Reverse.
func (c *Client) Reverse(ctx context.Context, r *ledgerv1.ReverseRequest) (*ledgerv1.ReverseResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.Reverse, r)
}

// PostAdjustment: see LedgerService.PostAdjustment (sign with SignAdjustmentRequest).
func (c *Client) PostAdjustment(ctx context.Context, r *ledgerv1.PostAdjustmentRequest) (*ledgerv1.PostAdjustmentResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.PostAdjustment, r)
}

// GetBalance: see LedgerService.GetBalance.
func (c *Client) GetBalance(ctx context.Context, r *ledgerv1.GetBalanceRequest) (*ledgerv1.GetBalanceResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.GetBalance, r)
}

// GetBalances: see LedgerService.GetBalances. At most MaxGetBalances accounts a call; an
// account the tenant does not have fails only its own result (ItemError gives
// ErrAccountNotFound), not the call.
func (c *Client) GetBalances(ctx context.Context, r *ledgerv1.GetBalancesRequest) (*ledgerv1.GetBalancesResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.GetBalances, r)
}

// ListEntries: see LedgerService.ListEntries.
func (c *Client) ListEntries(ctx context.Context, r *ledgerv1.ListEntriesRequest) (*ledgerv1.ListEntriesResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.ListEntries, r)
}

// GetTransaction: see LedgerService.GetTransaction.
func (c *Client) GetTransaction(ctx context.Context, r *ledgerv1.GetTransactionRequest) (*ledgerv1.GetTransactionResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.GetTransaction, r)
}

// GetTransactions: see LedgerService.GetTransactions. At most MaxGetTransactions ids a call.
func (c *Client) GetTransactions(ctx context.Context, r *ledgerv1.GetTransactionsRequest) (*ledgerv1.GetTransactionsResponse, error) {
	return call(ctx, c, c.opts.Timeout, c.rpc.GetTransactions, r)
}

// ReconcileWithBank: see LedgerService.ReconcileWithBank.
func (c *Client) ReconcileWithBank(ctx context.Context, r *ledgerv1.ReconcileWithBankRequest) (*ledgerv1.ReconcileWithBankResponse, error) {
	return call(ctx, c, c.opts.BatchTimeout, c.rpc.ReconcileWithBank, r)
}

// VerifyCheckpoints: see LedgerService.VerifyCheckpoints.
func (c *Client) VerifyCheckpoints(ctx context.Context, r *ledgerv1.VerifyCheckpointsRequest) (*ledgerv1.VerifyCheckpointsResponse, error) {
	return call(ctx, c, c.opts.BatchTimeout, c.rpc.VerifyCheckpoints, r)
}
