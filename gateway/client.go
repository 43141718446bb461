package gateway

import (
	"context"
	"time"

	"google.golang.org/grpc"

	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// ClientOptions tune a Client; zero values take the defaults.
type ClientOptions struct {
	// Timeout is the deadline of LookupAccount, VerifyNationalID, GetTransferStatus and
	// GetAdapterStatus (default 10 s); a caller's earlier deadline wins.
	Timeout time.Duration
	// TransferTimeout is the deadline of InitiateDisbursement (default 30 s). Keep it above the
	// gateway's own partner deadline, so the gateway answers UNKNOWN before the client gives up.
	TransferTimeout time.Duration
	// BatchTimeout is the deadline of InitiateBulkDisbursement, GetBatchStatus and FetchStatement
	// (default 120 s).
	BatchTimeout time.Duration
	// Breaker is the client's circuit breaker (rpcclient.BreakerOptions: zero values take its
	// defaults).
	Breaker rpcclient.BreakerOptions
}

// Client calls the integration gateway with a deadline per call and a circuit breaker, and turns
// failures into *Error values: errors.Is(err, gateway.ErrReferenceConflict), ReasonOf(err), and
// (*Error).Field for the request field an INVALID_ARGUMENT names.
//
// Dial options, breaker, deadlines and error mapping are internal/platform/rpcclient's, shared
// with the ledger's client. Only infrastructure failures (Reason.Infra) count against the
// breaker: the gateway unreachable, slow or failing (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL)
// and the partner behind it down or slow (PARTNER_UNAVAILABLE, PARTNER_TIMEOUT). A caller's mistake (INVALID_ARGUMENT, UNKNOWN_PARTNER,
// REFERENCE_CONFLICT, TRANSFER_NOT_FOUND, PARTNER_REFUSED_REQUEST, FAILED_PRECONDITION, …) is the
// gateway working and never opens it. While it is open, calls fail at once with ErrCircuitOpen
// and nothing is sent.
//
// The breaker is the Client's, whatever partner a request names: an outage of one partner opens
// it for all. With several live partners, use one Client per partner (NewClient on one shared
// connection).
//
// Money-moving calls: a disbursement answered UNKNOWN, or failing with DEADLINE_EXCEEDED,
// UNAVAILABLE or INTERNAL, may have been sent; resolve it with GetTransferStatus before any
// compensation. PARTNER_UNAVAILABLE, CIRCUIT_OPEN and every caller's mistake mean nothing was sent.
type Client struct {
	rpcclient.Base
	rpc  gatewayv1.GatewayServiceClient
	opts ClientOptions
}

// Dial connects to the gateway at addr (host:port, plaintext: the service runs inside the
// private network; put TLS in front of it with a mesh or pass grpc options in dialOpts).
func Dial(addr string, opts ClientOptions, dialOpts ...grpc.DialOption) (*Client, error) {
	conn, err := rpcclient.Dial("gateway", addr, dialOpts...)
	if err != nil {
		return nil, err
	}
	return newClient(gatewayv1.NewGatewayServiceClient(conn), conn, opts), nil
}

// NewClient wraps a generated client (one on an existing connection, which the caller closes).
func NewClient(rpc gatewayv1.GatewayServiceClient, opts ClientOptions) *Client {
	return newClient(rpc, nil, opts)
}

func newClient(rpc gatewayv1.GatewayServiceClient, conn *grpc.ClientConn, opts ClientOptions) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.TransferTimeout <= 0 {
		opts.TransferTimeout = 30 * time.Second
	}
	if opts.BatchTimeout <= 0 {
		opts.BatchTimeout = 120 * time.Second
	}
	base := rpcclient.NewBase[Reason]("gateway", conn, opts.Breaker)
	return &Client{Base: base, rpc: rpc, opts: opts}
}

// LookupAccount: see GatewayService.LookupAccount. A missing account is Exists false, not an
// error; a partner that cannot answer is ErrPartnerUnavail or ErrPartnerTimeout (fail closed).
func (c *Client) LookupAccount(ctx context.Context, r *gatewayv1.LookupAccountRequest) (*gatewayv1.LookupAccountResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.Timeout, c.rpc.LookupAccount, r)
}

// VerifyNationalID: see GatewayService.VerifyNationalId. An id the registry does not know is
// Found false, not an error; the answer carries verdicts only (status, name and date-of-birth
// match), never the registry's record. Errors: ErrInvalidArgument (a refused field, named by
// (*Error).Field; the registry was not asked), ErrUnknownPartner (no registry by that name),
// ErrPartnerUnavail and ErrPartnerTimeout (the registry unreachable, failing, slow or its breaker
// open at the gateway), ErrUnavailable, ErrDeadlineExceeded and ErrInternal (the gateway itself),
// ErrCircuitOpen (this Client's breaker; nothing sent). The last five are worth retrying later;
// none is a verdict, so a KYC gate fails closed on every one. A registry outage counts against
// this Client's breaker like a partner's: give the registry a Client of its own (NewClient on the
// shared connection) so it cannot block disbursements.
func (c *Client) VerifyNationalID(ctx context.Context, r *gatewayv1.VerifyNationalIdRequest) (*gatewayv1.VerifyNationalIdResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.Timeout, c.rpc.VerifyNationalId, r)
}

// InitiateDisbursement: see GatewayService.InitiateDisbursement. Errors: ErrInvalidArgument,
// ErrUnknownPartner, ErrReferenceConflict, ErrPartnerInvalid, ErrPartnerUnavail (not sent),
// ErrCircuitOpen (not sent); ErrDeadlineExceeded, ErrUnavailable, ErrInternal (outcome unknown).
func (c *Client) InitiateDisbursement(ctx context.Context, r *gatewayv1.InitiateDisbursementRequest) (*gatewayv1.InitiateDisbursementResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.TransferTimeout, c.rpc.InitiateDisbursement, r)
}

// InitiateBulkDisbursement: see GatewayService.InitiateBulkDisbursement; errors as
// InitiateDisbursement.
func (c *Client) InitiateBulkDisbursement(ctx context.Context, r *gatewayv1.InitiateBulkDisbursementRequest) (*gatewayv1.InitiateBulkDisbursementResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.BatchTimeout, c.rpc.InitiateBulkDisbursement, r)
}

// GetTransferStatus: see GatewayService.GetTransferStatus. ErrTransferNotFound means the partner
// has no transfer with the reference, so initiating it again is safe.
func (c *Client) GetTransferStatus(ctx context.Context, r *gatewayv1.GetTransferStatusRequest) (*gatewayv1.GetTransferStatusResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.Timeout, c.rpc.GetTransferStatus, r)
}

// GetBatchStatus: see GatewayService.GetBatchStatus. ErrTransferNotFound means the partner has no
// batch with the reference, so initiating it again (same reference, same items) is safe.
func (c *Client) GetBatchStatus(ctx context.Context, r *gatewayv1.GetBatchStatusRequest) (*gatewayv1.GetBatchStatusResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.BatchTimeout, c.rpc.GetBatchStatus, r)
}

// GetAdapterStatus: see GatewayService.GetAdapterStatus.
func (c *Client) GetAdapterStatus(ctx context.Context, r *gatewayv1.GetAdapterStatusRequest) (*gatewayv1.GetAdapterStatusResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.Timeout, c.rpc.GetAdapterStatus, r)
}

// FetchStatement: see GatewayService.FetchStatement. Errors besides the partner's:
// ErrStatementBad, ErrStatementForeign, ErrStatementChanged.
func (c *Client) FetchStatement(ctx context.Context, r *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error) {
	return rpcclient.Invoke(ctx, &c.Base, c.opts.BatchTimeout, c.rpc.FetchStatement, r)
}
