package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"
)

// Gateway is the integration gateway: the partners it knows, its store and its metrics. The gRPC
// Server is a thin edge over it.
type Gateway struct {
	partners map[string]*Partner
	store    *Store
	metrics  *Metrics
	clock    Clock
	log      *slog.Logger
}

// ErrReferenceReused: the transfer register already holds the (partner, reference) with another
// body, or for another tenant. Nothing is sent to the partner.
var ErrReferenceReused = errors.New("reference already used by another transfer")

// New returns a gateway over the given guarded partners.
func New(store *Store, metrics *Metrics, log *slog.Logger, clock Clock, partners ...*Partner) *Gateway {
	if clock == nil {
		clock = SystemClock{}
	}
	g := &Gateway{partners: map[string]*Partner{}, store: store, metrics: metrics, clock: clock, log: log}
	for _, p := range partners {
		g.partners[p.Partner()] = p
	}
	return g
}

// Partner returns the named partner.
func (g *Gateway) Partner(name string) (*Partner, error) {
	p, ok := g.partners[name]
	if !ok {
		return nil, &Error{Reason: ReasonUnknownPartner, Message: fmt.Sprintf("unknown partner %q", name)}
	}
	return p, nil
}

// PartnerNames lists the configured partners.
func (g *Gateway) PartnerNames() []string {
	out := make([]string, 0, len(g.partners))
	for n := range g.partners {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NameMatch is the outcome of comparing an expected holder name.
type NameMatch string

const (
	NameNotChecked NameMatch = "NOT_CHECKED"
	NameMatches    NameMatch = "MATCH"
	NameMismatch   NameMatch = "MISMATCH"
)

// LookupResult is LookupAccount's answer.
type LookupResult struct {
	Exists     bool
	Account    Account
	NameMatch  NameMatch
	Health     Health
	FailReason string // the lookup_failure_total reason, "" on success
}

// LookupAccount asks partner about account and compares the holder name when expected is set.
// A missing account is a result (Exists false), not an error; an error means the partner could
// not answer, and a caller's gate must fail closed on it.
func (g *Gateway) LookupAccount(ctx context.Context, partner, account, expected string) (LookupResult, error) {
	p, err := g.Partner(partner)
	if err != nil {
		return LookupResult{}, err
	}
	start := time.Now()
	acc, err := p.LookupAccount(ctx, account)
	g.metrics.LookupLatency.WithLabelValues(partner).Observe(time.Since(start).Seconds())
	res := LookupResult{NameMatch: NameNotChecked}
	switch {
	case err == nil:
		res.Exists, res.Account = true, acc
		if expected != "" {
			res.NameMatch = NameMismatch
			if NamesMatch(expected, acc.HolderName) {
				res.NameMatch = NameMatches
			}
		}
	case IsKind(err, KindNotFound):
		res.FailReason = "not_found"
	default:
		g.metrics.LookupFailure.WithLabelValues(partner, lookupErrorReason(err)).Inc()
		return LookupResult{}, err
	}
	res.Health = p.Status().Health
	switch {
	case res.FailReason != "":
	case acc.Closed:
		res.FailReason = "account_closed"
	case res.NameMatch == NameMismatch:
		res.FailReason = "name_mismatch"
	}
	if res.FailReason != "" {
		g.metrics.LookupFailure.WithLabelValues(partner, res.FailReason).Inc()
	} else {
		g.metrics.LookupSuccess.WithLabelValues(partner).Inc()
	}
	return res, nil
}

func lookupErrorReason(err error) string {
	pe := AsPartnerError(err)
	switch {
	case pe.Timeout:
		return "timeout"
	case pe.Kind == KindUnavailable:
		return "unavailable"
	case pe.Kind == KindInvalid:
		return "invalid"
	}
	return "partner_error"
}

// InitiateTransfer submits one disbursement to partner. Errors: ErrUnknownPartner, a
// *PartnerError (KindRejected, KindConflict, KindInvalid, KindUnavailable, KindUnknown).
func (g *Gateway) InitiateTransfer(ctx context.Context, partner string, req TransferRequest) (Transfer, bool, error) {
	p, err := g.Partner(partner)
	if err != nil {
		return Transfer{}, false, err
	}
	return p.InitiateTransfer(ctx, req)
}

// InitiateBatch submits one bulk disbursement to partner. Errors as InitiateTransfer.
func (g *Gateway) InitiateBatch(ctx context.Context, partner string, req BatchRequest) (Batch, bool, error) {
	p, err := g.Partner(partner)
	if err != nil {
		return Batch{}, false, err
	}
	return p.InitiateBatch(ctx, req)
}

// TransferStatus asks partner for the transfer with our reference. Errors: ErrUnknownPartner, a
// *PartnerError (KindNotFound when the partner has no such transfer).
func (g *Gateway) TransferStatus(ctx context.Context, partner, reference string) (Transfer, error) {
	p, err := g.Partner(partner)
	if err != nil {
		return Transfer{}, err
	}
	return p.TransferByReference(ctx, reference)
}

// FetchRequest asks for one account's statement over [From, To] (UTC dates, inclusive).
type FetchRequest struct {
	Partner  string
	TenantID string
	Account  string
	From, To time.Time
	Format   StatementFormat
}

// FetchResult is what FetchStatement ingested.
type FetchResult struct {
	Lines  []StatementLine
	Raw    []byte
	SHA256 string
	IngestResult
}

// MaxStatementPeriod bounds one statement request.
const MaxStatementPeriod = 92 * 24 * time.Hour

// FetchStatement downloads, parses and stores a statement. A malformed statement is refused
// whole (ErrStatement) and nothing is stored.
func (g *Gateway) FetchStatement(ctx context.Context, req FetchRequest) (FetchResult, error) {
	p, err := g.Partner(req.Partner)
	if err != nil {
		return FetchResult{}, err
	}
	raw, err := p.Statement(ctx, StatementRequest{Account: req.Account, From: req.From, To: req.To, Format: req.Format})
	if err != nil {
		return FetchResult{}, err
	}
	lines, err := ParseStatement(req.Format, raw)
	if err != nil {
		return FetchResult{}, fmt.Errorf("gateway.fetch_statement: %s %s: %w", req.Partner, req.Account, err)
	}
	sum := sha256.Sum256(raw)
	res := FetchResult{Lines: lines, Raw: raw, SHA256: hex.EncodeToString(sum[:])}
	res.IngestResult, err = g.store.IngestStatement(ctx, Ingest{
		TenantID: req.TenantID, Partner: req.Partner, Account: req.Account, From: req.From, To: req.To,
		Format: req.Format, SHA256: res.SHA256, Lines: lines,
	})
	if err != nil {
		return FetchResult{}, err
	}
	g.metrics.Ingested(req.Partner, g.clock.Now())
	return res, nil
}

// ProbeDependencies checks the database and every partner once and sets svc_dependency_up and
// gateway_adapter_degraded.
func (g *Gateway) ProbeDependencies(ctx context.Context) {
	up := func(dep string, err error) {
		v := 1.0
		if err != nil {
			v = 0
			g.log.Warn("dependency probe failed", "dependency", dep, "err", err)
		}
		g.metrics.DependencyUp.WithLabelValues(dep).Set(v)
	}
	if g.store != nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		up("database", g.store.Ping(pctx))
		cancel()
	}
	for name, p := range g.partners {
		up("partner:"+name, p.Probe(ctx))
		d := 0.0
		if p.Status().Health == Degraded {
			d = 1
		}
		g.metrics.AdapterHealth.WithLabelValues(name).Set(d)
	}
}

// RunProbes probes every interval until ctx ends.
func (g *Gateway) RunProbes(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		g.ProbeDependencies(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
