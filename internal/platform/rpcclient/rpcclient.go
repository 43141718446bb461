// Package rpcclient is the foundation every Wagerail gRPC client stands on (the ledger's and the
// gateway's): the dial options, a deadline per call, a circuit breaker that counts only
// infrastructure failures, and the service error (Error[R]) with its wire form: the status a
// service sends it as and FromStatus, which turns a failed call back into it, so a caller matches
// a service's sentinel errors with errors.Is on both sides of the wire.
//
// Why only infrastructure failures: a refusal (invalid argument, not found, conflict, failed
// precondition) is the service working as it should, so no caller can open a breaker, and cut
// every other caller off, by sending bad requests. A caller that gave up (its context canceled or
// its own deadline passed) says nothing about the service either and is not counted.
package rpcclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Settings describe one client's breaker and error mapping.
type Settings struct {
	// Name names the breaker (the service: "ledger", "gateway").
	Name string
	// Failures consecutive infrastructure failures open the breaker (default 5).
	Failures uint32
	// OpenFor is how long the breaker stays open before letting one probe through (default 10 s).
	OpenFor time.Duration
	// OnStateChange, when set, is told of breaker state changes (for logs or metrics).
	OnStateChange func(from, to string)
	// MapError turns the error of a gRPC call into the client's typed error (required).
	MapError func(error) error
	// Infra reports whether a mapped error says the service is failing (required).
	Infra func(error) bool
	// OpenError is the error returned, nothing sent, while the breaker is open (required); cause
	// is the breaker's own error.
	OpenError func(cause error) error
}

// Breaker runs calls under one circuit breaker.
type Breaker struct {
	cb *gobreaker.CircuitBreaker[any]
	s  Settings
}

// NewBreaker builds a closed breaker.
func NewBreaker(s Settings) *Breaker {
	if s.Failures == 0 {
		s.Failures = 5
	}
	if s.OpenFor <= 0 {
		s.OpenFor = 10 * time.Second
	}
	st := gobreaker.Settings{
		Name:        s.Name,
		MaxRequests: 1,
		Timeout:     s.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= s.Failures },
		IsSuccessful: func(err error) bool {
			return err == nil || !s.Infra(err)
		},
		IsExcluded: func(err error) bool {
			var g gaveUp
			return errors.As(err, &g) || errors.Is(err, context.Canceled)
		},
	}
	if s.OnStateChange != nil {
		st.OnStateChange = func(_ string, from, to gobreaker.State) { s.OnStateChange(from.String(), to.String()) }
	}
	return &Breaker{cb: gobreaker.NewCircuitBreaker[any](st), s: s}
}

// State is "closed", "half-open" or "open".
func (b *Breaker) State() string { return b.cb.State().String() }

// gaveUp marks the failure of a call whose caller had already given up, so the breaker leaves it
// out of its counts.
type gaveUp struct{ err error }

func (g gaveUp) Error() string { return g.err.Error() }
func (g gaveUp) Unwrap() error { return g.err }

// Call runs one RPC under b with a deadline of timeout (a caller's earlier deadline wins) and
// returns its response or its mapped error.
func Call[Req, Resp any](ctx context.Context, b *Breaker, timeout time.Duration, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	var zero Resp
	out, err := b.cb.Execute(func() (any, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := fn(cctx, req)
		if err != nil {
			err = b.s.MapError(err)
			if ctx.Err() != nil {
				return nil, gaveUp{err}
			}
			return nil, err
		}
		return resp, nil
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return zero, b.s.OpenError(err)
	}
	var g gaveUp
	if errors.As(err, &g) {
		err = g.err
	}
	if err != nil {
		return zero, err
	}
	return out.(Resp), nil
}

// Dial opens a client connection to service name at addr (host:port). Plaintext by default: the
// services run inside the private network; put TLS in front with a mesh, or pass credentials in
// dialOpts. grpc.NewClient connects lazily, so an error here is a malformed address or option,
// never an unreachable service.
func Dial(name, addr string, dialOpts ...grpc.DialOption) (*grpc.ClientConn, error) {
	dialOpts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dialOpts...)
	conn, err := grpc.NewClient(addr, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("%s.dial %s: %w", name, addr, err)
	}
	return conn, nil
}

// BreakerOptions are the breaker settings of a service client; zero values take the defaults.
type BreakerOptions struct {
	// Failures consecutive infrastructure failures open the breaker (default 5); a call whose
	// caller gave up first (canceled, or its own deadline passed) is not counted.
	Failures uint32
	// OpenFor is how long the breaker stays open before letting a probe through (default 10 s).
	OpenFor time.Duration
	// OnStateChange, when set, is told of breaker state changes (for logs or metrics).
	OnStateChange func(from, to string)
}

// Base is what every service client holds besides its generated stub: the connection Dial
// opened (nil for a client on an existing connection) and its breaker, which maps each failure
// with FromStatus[R], counts only reasons whose Infra is true, and while open answers
// CIRCUIT_OPEN with nothing sent. A client embeds it and sends each call through Call.
type Base struct {
	conn    *grpc.ClientConn
	breaker *Breaker
}

// NewBase builds the Base of service name's client on conn (nil when the caller owns the
// connection).
func NewBase[R Reason](name string, conn *grpc.ClientConn, o BreakerOptions) Base {
	b := NewBreaker(Settings{
		Name: name, Failures: o.Failures, OpenFor: o.OpenFor, OnStateChange: o.OnStateChange,
		MapError: FromStatus[R],
		Infra: func(err error) bool {
			var e *Error[R]
			return !errors.As(err, &e) || e.Reason.Infra()
		},
		OpenError: func(cause error) error {
			return &Error[R]{Reason: ReasonCircuitOpen, Message: name + " circuit breaker is open: " + cause.Error()}
		},
	})
	return Base{conn: conn, breaker: b}
}

// Close closes the connection Dial opened, if any.
func (b *Base) Close() error {
	if b.conn == nil {
		return nil
	}
	return b.conn.Close()
}

// BreakerState is "closed", "half-open" or "open".
func (b *Base) BreakerState() string { return b.breaker.State() }

// Invoke runs one RPC of the client under its breaker with a deadline of timeout (a caller's
// earlier deadline wins) and returns its response or its mapped error.
func Invoke[Req, Resp any](ctx context.Context, b *Base, timeout time.Duration, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	return Call(ctx, b.breaker, timeout, fn, req)
}
