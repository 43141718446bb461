package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// SettlementActor names the poller in audit rows: tenancy.System(SettlementActor).
const SettlementActor = "settlement-poller"

// MetricSettlementTicks is the poller's counter, by outcome (ok, error).
const MetricSettlementTicks = "svc_settlement_poller_ticks_total"

// Outcomes of a tick, the values of the outcome label.
const (
	SettlementTickOK    = "ok"
	SettlementTickError = "error"
)

// SettlementMetrics are the poller's Prometheus series (no tenant label).
type SettlementMetrics struct {
	Ticks *prometheus.CounterVec // svc_settlement_poller_ticks_total{outcome}
}

// NewSettlementMetrics creates the series, each outcome at 0 so an alert on the error rate sees
// 0 rather than no series from the first scrape. Register them where the process serves
// /metrics.
func NewSettlementMetrics() *SettlementMetrics {
	m := &SettlementMetrics{Ticks: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricSettlementTicks,
		Help: "Settlement poller ticks by outcome: ok (every unresolved transfer listed was asked about and its answer recorded), error (the database or a partner failed).",
	}, []string{"outcome"})}
	m.Ticks.WithLabelValues(SettlementTickOK)
	m.Ticks.WithLabelValues(SettlementTickError)
	return m
}

// Register adds the series to reg.
func (m *SettlementMetrics) Register(reg prometheus.Registerer) error {
	return reg.Register(m.Ticks)
}

// SettlementConfig configures a SettlementPoller. Zero values take the defaults named below.
type SettlementConfig struct {
	// Platform logs in as wagerail_platform (DATABASE_PLATFORM_URL): the unresolved transfers of
	// every tenant are listed through internal/platform/crosstenant, the one audited way across tenants.
	// That role only reads the register; answers are recorded through the Gateway's
	// tenant-scoped store as the runtime role. Required.
	Platform db.Beginner
	// Gateway asks the partners and records their answers. Only transfers of its partners are
	// polled: another gateway's partner is not this one's to ask. Required.
	Gateway *Gateway
	// Interval is the pause between ticks. Default 30s.
	Interval time.Duration
	// Grace is how long an INITIATED transfer is left alone: younger, its submission may still be
	// in flight. It should exceed the partner's transfer timeout. Default 1m.
	Grace time.Duration
	// BatchSize is the most transfers one tick asks about. Default 100.
	BatchSize int
	// Clock decides which INITIATED transfers are past Grace; it must agree with the database's
	// clock (rows are written with now()). Default SystemClock.
	Clock Clock
	// Logger gets what the poller learnt and why a tick failed. Default: discard.
	Logger *slog.Logger
	// Metrics receives the tick counter. Nil: a set of its own, registered nowhere.
	Metrics *SettlementMetrics
}

// Defaults of SettlementConfig.
const (
	DefaultSettlementInterval = 30 * time.Second
	DefaultSettlementGrace    = time.Minute
	DefaultSettlementBatch    = 100
)

// ErrSettlementConfig: NewSettlementPoller was given no platform pool or no gateway.
var ErrSettlementConfig = errors.New("gateway: invalid settlement poller config")

// SettlementPoller resolves the transfers whose partner answer the register does not have yet:
// INITIATED past the grace period (a submission that timed out, or a disburse that failed fast
// while the partner was down) and PENDING (accepted, not yet settled or failed). It asks their
// partner by our reference and records the answer, so the register follows the bank even when a
// callback is lost. It moves no money and decides nothing: a saga that waits on a transfer asks
// for its status and compensates if it must; a transfer the partner does not know (NOT_FOUND) is
// logged and left to that saga.
//
// Each tick continues a circular sweep over the unresolved transfers in age order, from the row
// after the last one the previous tick asked about, wrapping to the oldest, so transfers the
// partner can never resolve do not starve the rest. Several pollers (gateway replicas) may run
// at once: each only reads and asks, and the register's status only moves forward.
type SettlementPoller struct {
	cfg      SettlementConfig
	log      *slog.Logger
	m        *SettlementMetrics
	partners []string

	mu     sync.Mutex // one tick at a time; guards cursor
	cursor sweepPosition
}

// sweepPosition is a row's place in the sweep order (created_at, id); zero is before every row.
type sweepPosition struct {
	createdAt time.Time
	id        int64
}

// NewSettlementPoller builds a poller; Run it, or call Tick.
func NewSettlementPoller(cfg SettlementConfig) (*SettlementPoller, error) {
	switch {
	case cfg.Platform == nil:
		return nil, fmt.Errorf("%w: Platform pool is required", ErrSettlementConfig)
	case cfg.Gateway == nil:
		return nil, fmt.Errorf("%w: Gateway is required", ErrSettlementConfig)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSettlementInterval
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultSettlementGrace
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultSettlementBatch
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewSettlementMetrics()
	}
	return &SettlementPoller{cfg: cfg, log: cfg.Logger.With("component", SettlementActor), m: cfg.Metrics,
		partners: cfg.Gateway.PartnerNames()}, nil
}

// SettlementTick is what one tick did.
type SettlementTick struct {
	Listed   int // unresolved transfers the tick took from the register
	Answered int // the partner reported their status
	Changed  int // register rows the answers moved (to PENDING, SETTLED or FAILED)
	Unknown  int // the partner has no transfer with the reference (NOT_FOUND)
	Failed   int // the partner could not answer, or answered about another transfer
	Skipped  int // not asked: their partner had failed earlier in the tick
}

// Run ticks every Interval until ctx ends, then returns nil. A failed tick is logged and counted
// (svc_settlement_poller_ticks_total{outcome="error"}); the next one tries again.
func (p *SettlementPoller) Run(ctx context.Context) error {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		if res, err := p.Tick(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("settlement poller tick failed", "err", err, "listed", res.Listed, "failed", res.Failed, "skipped", res.Skipped)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick lists up to BatchSize unresolved transfers across tenants (one audited cross-tenant read),
// asks their partners, and records the answers for each transfer's tenant. It counts ok when
// every transfer listed got an answer (NOT_FOUND is one) and every answer was recorded, error
// when the database or a partner failed; a tick cut short because ctx ended counts neither.
// After a partner fault the tick skips that partner's remaining transfers (its breaker is
// opening; asking again only waits) and goes on with the others.
func (p *SettlementPoller) Tick(ctx context.Context) (SettlementTick, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	res, err := p.tick(tenancy.WithActor(ctx, tenancy.System(SettlementActor)))
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	outcome := SettlementTickOK
	if err != nil {
		outcome = SettlementTickError
	}
	p.m.Ticks.WithLabelValues(outcome).Inc()
	if err == nil && res.Changed > 0 {
		p.log.Info("settlement poller recorded partner answers", "listed", res.Listed, "changed", res.Changed, "unknown", res.Unknown)
	}
	return res, err
}

// unresolved is a listed transfer and its place in the sweep.
type unresolved struct {
	TransferRecord
	pos sweepPosition
}

func (p *SettlementPoller) tick(ctx context.Context) (SettlementTick, error) {
	var res SettlementTick
	if len(p.partners) == 0 {
		return res, nil
	}
	cutoff := p.cfg.Clock.Now().Add(-p.cfg.Grace)
	var list []unresolved
	// Audited when it lists something: an idle tick (nothing unresolved) writes no audit row.
	err := crosstenant.JobTx(ctx, p.cfg.Platform, "settlement poller: list unresolved transfers", func(tx pgx.Tx) (int, error) {
		var err error
		list, err = listUnresolved(ctx, tx, p.partners, cutoff, p.cursor, nil, p.cfg.BatchSize)
		if err != nil || len(list) == p.cfg.BatchSize || p.cursor == (sweepPosition{}) {
			return len(list), err
		}
		// The end of the register: wrap to the oldest, up to where this sweep began.
		upto := p.cursor
		more, err := listUnresolved(ctx, tx, p.partners, cutoff, sweepPosition{}, &upto, p.cfg.BatchSize-len(list))
		list = append(list, more...)
		return len(list), err
	})
	if err != nil {
		return res, fmt.Errorf("gateway.settlement_tick: list: %w", err)
	}
	res.Listed = len(list)
	if len(list) > 0 {
		p.cursor = list[len(list)-1].pos
	} else {
		p.cursor = sweepPosition{}
	}

	var errs []error
	faulted := map[string]bool{}
	answers := map[string][]TransferUpdate{} // by tenant
	var tenants []string
	for _, u := range list {
		if faulted[u.Partner] {
			res.Skipped++
			continue
		}
		pt, err := p.cfg.Gateway.Partner(u.Partner)
		if err != nil { // listed only for the gateway's own partners
			return res, fmt.Errorf("gateway.settlement_tick: %w", err)
		}
		t, err := pt.TransferByReference(ctx, u.Reference)
		switch {
		case ctx.Err() != nil:
			return res, ctx.Err()
		case err == nil && t.Reference != u.Reference:
			res.Failed++
			errs = append(errs, fmt.Errorf("%s answered about reference %q when asked for %q", u.Partner, t.Reference, u.Reference))
		case err == nil:
			res.Answered++
			if _, ok := answers[u.TenantID]; !ok {
				tenants = append(tenants, u.TenantID)
			}
			// The register says whose transfer it is; the partner's echo of the tenant is not
			// trusted for that.
			answers[u.TenantID] = append(answers[u.TenantID], TransferUpdate{Partner: u.Partner, Reference: u.Reference,
				Status: t.Status, PartnerTransferID: t.ID, FailureCode: t.FailureCode})
		case IsKind(err, KindNotFound):
			res.Unknown++
			p.log.Info("settlement poller: the partner has no transfer with this reference; its saga decides",
				"partner", u.Partner, "reference", u.Reference, "status", u.Status, "age", p.cfg.Clock.Now().Sub(u.CreatedAt).Round(time.Second))
		default:
			res.Failed++
			errs = append(errs, fmt.Errorf("%s %s: %w", u.Partner, u.Reference, err))
			if partnerFault(err) {
				faulted[u.Partner] = true
			}
		}
	}
	for _, tenant := range tenants {
		n, err := p.cfg.Gateway.store.UpdateTransfers(ctx, tenant, answers[tenant])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res.Changed += n
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("gateway.settlement_tick: %d of %d transfers unresolved (%d skipped): %w",
			res.Failed, res.Listed, res.Skipped, errors.Join(errs...))
	}
	return res, nil
}

// listUnresolved reads, in sweep order, up to limit transfers of partners that are PENDING, or
// INITIATED and created at or before cutoff, placed after after and (when upto is set) at or
// before upto. q must see every tenant (a cross-tenant transaction).
func listUnresolved(ctx context.Context, q pgx.Tx, partners []string, cutoff time.Time, after sweepPosition,
	upto *sweepPosition, limit int) ([]unresolved, error) {
	var uptoAt *time.Time
	var uptoID *int64
	if upto != nil {
		uptoAt, uptoID = &upto.createdAt, &upto.id
	}
	// The status and order match the partial index gateway.transfers_unresolved.
	rows, err := q.Query(ctx, `
		SELECT id, `+transferColumns+`
		FROM gateway.transfers
		WHERE status IN ('INITIATED', 'PENDING')
		  AND (status = 'PENDING' OR created_at <= $2)
		  AND partner = ANY($1)
		  AND (created_at, id) > ($3, $4)
		  AND ($5::timestamptz IS NULL OR (created_at, id) <= ($5, $6::bigint))
		ORDER BY created_at, id
		LIMIT $7`,
		partners, cutoff, after.createdAt, after.id, uptoAt, uptoID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (unresolved, error) {
		var u unresolved
		var err error
		u.TransferRecord, err = scanTransfer(idFirst{r, &u.pos.id})
		u.pos.createdAt = u.CreatedAt
		return u, err
	})
}

// idFirst scans a row whose first column is the id, then the columns scanTransfer reads.
type idFirst struct {
	pgx.Row
	id *int64
}

func (r idFirst) Scan(dest ...any) error { return r.Row.Scan(append([]any{r.id}, dest...)...) }
