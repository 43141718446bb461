package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
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
	// registries are the national ID registries, by name (AddRegistry).
	registries map[string]*Registry
	// baselined holds the tenant/partner/account keys whose mirror baseline is settled
	// (recorded, or known never to be): the check is once per account per process.
	baselined sync.Map
}

// ErrReferenceReused: the transfer register already holds the (partner, reference) with another
// body, or for another tenant. Nothing is sent to the partner.
var ErrReferenceReused = errors.New("reference already used by another transfer")

// New returns a gateway over the given guarded partners.
func New(store *Store, metrics *Metrics, log *slog.Logger, clock Clock, partners ...*Partner) *Gateway {
	if clock == nil {
		clock = SystemClock{}
	}
	g := &Gateway{partners: map[string]*Partner{}, registries: map[string]*Registry{}, store: store, metrics: metrics, clock: clock, log: log}
	for _, p := range partners {
		g.partners[p.Partner()] = p
		metrics.knownPartner(p.Partner())
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

// AddRegistry makes a guarded national ID registry available under its name. Call it before
// the gateway serves: the registries are not guarded against concurrent change.
func (g *Gateway) AddRegistry(r *Registry) {
	g.registries[r.Name()] = r
	g.metrics.knownRegistry(r.Name())
}

// Registry returns the named national ID registry. An unknown name is the same error as an
// unknown partner (reason UNKNOWN_PARTNER): the gateway has no counterparty by that name.
func (g *Gateway) Registry(name string) (*Registry, error) {
	r, ok := g.registries[name]
	if !ok {
		return nil, &Error{Reason: ReasonUnknownPartner, Message: fmt.Sprintf("unknown registry %q", name)}
	}
	return r, nil
}

// RegistryNames lists the configured national ID registries.
func (g *Gateway) RegistryNames() []string {
	out := make([]string, 0, len(g.registries))
	for n := range g.registries {
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

// IdentityResult is VerifyNationalID's answer: verdicts about the registry's record, never the
// record itself (data minimisation: the registry's name and date of birth stay in the gateway).
type IdentityResult struct {
	// Found: the registry has the national id. Everything below is about its record.
	Found bool
	// Status is "" when not found.
	Status IdentityStatus
	// NameMatch compares the submitted name with the registry's (NamesMatch); NOT_CHECKED when
	// not found or no name was given.
	NameMatch NameMatch
	// DateOfBirthMatches compares calendar dates; false when not found.
	DateOfBirthMatches bool
	// Health is the registry's, by the degraded rule.
	Health Health
	// Outcome is the identity_verify_total outcome: verified, not_found, revoked, deceased,
	// name_mismatch or dob_mismatch.
	Outcome string
}

// VerifyNationalID looks nationalID (normalized) up in the named registry and compares fullName
// and dateOfBirth (its calendar date, in its own location) with the registry's record. An id the
// registry does not know is a result (Found false), not an error. Errors: ErrUnknownPartner (no
// registry by that name), or the guard's *PartnerError when the registry could not answer
// (KindUnavailable: unreachable or its breaker open; KindUnknown: it failed, Timeout set when the
// deadline passed), as for LookupAccount: a KYC gate must fail closed on them, and may retry.
func (g *Gateway) VerifyNationalID(ctx context.Context, registry, nationalID, fullName string, dateOfBirth time.Time) (IdentityResult, error) {
	r, err := g.Registry(registry)
	if err != nil {
		return IdentityResult{}, err
	}
	start := time.Now()
	id, err := r.LookupIdentity(ctx, nationalID)
	g.metrics.VerifyLatency.WithLabelValues(registry).Observe(time.Since(start).Seconds())
	res := IdentityResult{NameMatch: NameNotChecked}
	switch {
	case err == nil:
		res.Found, res.Status = true, id.Status
		if fullName != "" {
			res.NameMatch = NameMismatch
			if NamesMatch(fullName, id.FullName) {
				res.NameMatch = NameMatches
			}
		}
		res.DateOfBirthMatches = sameDate(dateOfBirth, id.DateOfBirth)
	case IsKind(err, KindNotFound):
		res.Outcome = "not_found"
	default:
		g.metrics.Verify.WithLabelValues(registry, lookupErrorReason(err)).Inc()
		return IdentityResult{}, err
	}
	res.Health = r.Status().Health
	switch {
	case res.Outcome != "":
	case res.Status == IdentityRevoked:
		res.Outcome = "revoked"
	case res.Status == IdentityDeceased:
		res.Outcome = "deceased"
	case res.NameMatch == NameMismatch:
		res.Outcome = "name_mismatch"
	case !res.DateOfBirthMatches:
		res.Outcome = "dob_mismatch"
	default:
		res.Outcome = "verified"
	}
	g.metrics.Verify.WithLabelValues(registry, res.Outcome).Inc()
	return res, nil
}

// sameDate reports whether a and b fall on the same calendar date, each read in its own
// location: a date of birth is a day, not an instant. A zero time matches nothing.
func sameDate(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return false
	}
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

// InitiateTransfer records the disbursement in the transfer register, then submits it to
// partner, then records what the partner answered. Nothing is sent unless the record is written:
// a bank callback about the transfer must always find whose it is. A transfer the register holds
// as REJECTED is not sent again: the partner's recorded rejection is the answer (see
// recordedRejection). Before the first transfer from an account for a tenant it records the
// account's mirror baseline (ensureBaseline). Errors: ErrUnknownPartner, ErrReferenceReused (the
// register holds the reference with another body or tenant; nothing sent), a *PartnerError
// (KindRejected, KindConflict, KindInvalid, KindUnavailable, KindUnknown).
func (g *Gateway) InitiateTransfer(ctx context.Context, partner string, req TransferRequest) (Transfer, bool, error) {
	const op = "gateway.initiate_transfer"
	p, err := g.Partner(partner)
	if err != nil {
		return Transfer{}, false, err
	}
	g.ensureBaseline(ctx, p, req.TenantID, req.FromAccount, req.Reference)
	rec := TransferRecord{Partner: partner, Reference: req.Reference, TenantID: req.TenantID, Domain: req.Domain,
		AmountSantim: req.AmountSantim, Currency: req.Currency, FromAccount: req.FromAccount, ToAccount: req.ToAccount}
	registered, err := g.store.recordTransfers(ctx, req.TenantID, []TransferRecord{rec})
	if err != nil {
		return Transfer{}, false, fmt.Errorf("%s: %w", op, err)
	}
	if err := g.recordedRejection(op, registered); err != nil {
		return Transfer{}, false, err
	}
	t, replayed, err := p.InitiateTransfer(ctx, req)
	switch {
	case err == nil:
		g.noteAnswers(ctx, req.TenantID, TransferUpdate{Partner: partner, Reference: req.Reference, Status: t.Status,
			PartnerTransferID: t.ID, FailureCode: t.FailureCode})
	case refusedRequest(err):
		g.noteAnswers(ctx, req.TenantID, TransferUpdate{Partner: partner, Reference: req.Reference, Status: TransferRejected,
			FailureCode: AsPartnerError(err).Code})
	}
	return t, replayed, err
}

// InitiateBatch records every item of the bulk disbursement in the transfer register, then
// submits the batch to partner, then records each item's answer. A batch the partner refused
// whole (its items REJECTED) is not sent again, as InitiateTransfer; an item failed inside a batch
// the partner accepted is FAILED, not REJECTED: the partner holds it, and the batch sent again is
// its replay. Errors as InitiateTransfer.
func (g *Gateway) InitiateBatch(ctx context.Context, partner string, req BatchRequest) (Batch, bool, error) {
	const op = "gateway.initiate_batch"
	p, err := g.Partner(partner)
	if err != nil {
		return Batch{}, false, err
	}
	g.ensureBaseline(ctx, p, req.TenantID, req.FromAccount, req.BatchReference)
	recs := make([]TransferRecord, len(req.Items))
	for i, it := range req.Items {
		recs[i] = TransferRecord{Partner: partner, Reference: it.Reference, TenantID: req.TenantID, Domain: req.Domain,
			AmountSantim: it.AmountSantim, Currency: req.Currency, FromAccount: req.FromAccount, ToAccount: it.ToAccount,
			BatchReference: req.BatchReference}
	}
	registered, err := g.store.recordTransfers(ctx, req.TenantID, recs)
	if err != nil {
		return Batch{}, false, fmt.Errorf("%s: %w", op, err)
	}
	if err := g.recordedRejection(op, registered); err != nil {
		return Batch{}, false, err
	}
	b, replayed, err := p.InitiateBatch(ctx, req)
	switch {
	case err == nil:
		ups := make([]TransferUpdate, len(b.Items))
		for i, it := range b.Items {
			ups[i] = TransferUpdate{Partner: partner, Reference: it.Reference, Status: it.Status, PartnerTransferID: it.TransferID, FailureCode: it.FailureCode}
		}
		g.noteAnswers(ctx, req.TenantID, ups...)
	case refusedRequest(err):
		ups := make([]TransferUpdate, len(req.Items))
		for i, it := range req.Items {
			ups[i] = TransferUpdate{Partner: partner, Reference: it.Reference, Status: TransferRejected, FailureCode: AsPartnerError(err).Code}
		}
		g.noteAnswers(ctx, req.TenantID, ups...)
	}
	return b, replayed, err
}

// recordedRejection is the partner's rejection of a request the register holds as refused (every
// transfer of it REJECTED; the store lets only the refused request itself come back that way), as
// the caller was first answered: KindRejected with the partner's code, which the edge turns into
// outcome REJECTED. Nothing is sent: the partner wrote nothing when it refused, so whatever it
// would answer now (the cause may have gone: the account opened, the source funded) is a new
// transfer under a reference the caller has already been told moved nothing, and that caller
// may already have written it off and paid it under another. nil when the request is not one
// the partner refused.
//
// A request refused as invalid (KindInvalid, a 4xx other than 422) is REJECTED in the register
// too, and answered this way: the register keeps the code, not the kind.
func (g *Gateway) recordedRejection(op string, registered []TransferRecord) error {
	if len(registered) == 0 {
		return nil
	}
	for _, r := range registered {
		if r.Status != TransferRejected {
			return nil
		}
	}
	r := registered[0]
	code := r.FailureCode
	if code == "" {
		code = string(ReasonPartnerInvalid)
	}
	ref := r.Reference
	if r.BatchReference != "" {
		ref = r.BatchReference
	}
	g.log.Info("gateway: a request the partner refused came again; answered with its rejection, not sent",
		"partner", r.Partner, "reference", ref, "code", code)
	return &PartnerError{Op: op, Kind: KindRejected, Code: code,
		Message: fmt.Sprintf("%s was refused by the partner (%s) and is not sent again; a new attempt takes a new reference", ref, code)}
}

// refusedRequest: the partner answered and refused the request, so it moved nothing for it (a
// timeout, a 5xx or a request that never left is not a refusal: the transfer stays INITIATED).
// A conflict is not one either: the partner holds the reference (a batch's, with other items)
// from an earlier request, whose transfers may have moved money under the same item references;
// what became of them is learnt from a lookup or a callback, never presumed REJECTED.
func refusedRequest(err error) bool {
	return IsKind(err, KindRejected) || IsKind(err, KindInvalid)
}

// noteAnswers records partner answers in the register. The partner's answer is the truth about
// the money and reaches the caller whatever happens here: a failure to record it is logged, and
// the next answer (a status lookup, a replay) records it.
func (g *Gateway) noteAnswers(ctx context.Context, tenantID string, ups ...TransferUpdate) {
	ups = slices.DeleteFunc(ups, func(u TransferUpdate) bool {
		switch u.Status {
		case TransferPending, TransferSettled, TransferFailed, TransferRejected:
			return false
		}
		return true // a status the register does not know says nothing it can record
	})
	if len(ups) == 0 || tenantID == "" {
		return
	}
	// The caller may leave once the partner answered; the answer is still recorded.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := g.store.UpdateTransfers(uctx, tenantID, ups); err != nil {
		g.log.Warn("gateway: transfer register not updated", "partner", ups[0].Partner, "transfers", len(ups), "err", err)
	}
}

// TransferStatus asks partner for the transfer with our reference, and records a PENDING,
// SETTLED or FAILED answer in the register (for the tenant the partner reports, which is the one
// we sent). Errors: ErrUnknownPartner, a *PartnerError (KindNotFound when the partner has no such
// transfer).
func (g *Gateway) TransferStatus(ctx context.Context, partner, reference string) (Transfer, error) {
	p, err := g.Partner(partner)
	if err != nil {
		return Transfer{}, err
	}
	t, err := p.TransferByReference(ctx, reference)
	if err == nil && t.Reference == reference {
		g.noteAnswers(ctx, t.TenantID, TransferUpdate{Partner: partner, Reference: reference, Status: t.Status,
			PartnerTransferID: t.ID, FailureCode: t.FailureCode})
	}
	return t, err
}

// BatchStatus asks partner for the bulk disbursement with our batch reference, and records each
// item's PENDING, SETTLED or FAILED answer in the register (for the tenant the partner reports,
// which is the one we sent). Errors: ErrUnknownPartner, a *PartnerError (KindNotFound when the
// partner has no such batch).
func (g *Gateway) BatchStatus(ctx context.Context, partner, batchReference string) (Batch, error) {
	p, err := g.Partner(partner)
	if err != nil {
		return Batch{}, err
	}
	b, err := p.BatchByReference(ctx, batchReference)
	if err == nil && b.BatchReference == batchReference {
		ups := make([]TransferUpdate, len(b.Items))
		for i, it := range b.Items {
			ups[i] = TransferUpdate{Partner: partner, Reference: it.Reference, Status: it.Status, PartnerTransferID: it.TransferID, FailureCode: it.FailureCode}
		}
		g.noteAnswers(ctx, b.TenantID, ups...)
	}
	return b, err
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
	// The statement holds what the bank had booked when it was asked for: a day counts as
	// covered whole only by a statement asked for after the day ended (reconcile.Coverage), so
	// the fetch is recorded as of the request, not of the ingest a moment later.
	asked := time.Now()
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
		Format: req.Format, SHA256: res.SHA256, Lines: lines, AskedAt: asked,
	})
	if err != nil {
		return FetchResult{}, err
	}
	g.metrics.Ingested(req.Partner, g.clock.Now())
	return res, nil
}

// ProbeDependencies checks the database, every partner and every national ID registry once and
// sets svc_dependency_up and gateway_adapter_degraded (a registry's series are labelled
// "registry:<name>", a partner's dependency "partner:<name>").
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
	for name, r := range g.registries {
		up("registry:"+name, r.Probe(ctx))
		d := 0.0
		if r.Status().Health == Degraded {
			d = 1
		}
		g.metrics.AdapterHealth.WithLabelValues("registry:" + name).Set(d)
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
