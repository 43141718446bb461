package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Baseline is the bank's balance of a partner account at the moment it became a ledger mirror
// for a tenant (gateway.mirror_baselines): the lines the bank had booked up to then are in it,
// the ones after are the mirror's. Reconciliation starts from it, so an account's history from
// before Wagerail used it (its opening balance, other people's bookings) is not drift.
type Baseline struct {
	Partner string
	Account string
	// AsOfDate is the bank's booking day of the snapshot; AsOfEntryRef the last line booked on
	// it at the time ("" when none was).
	AsOfDate      time.Time
	AsOfEntryRef  string
	BalanceSantim int64
	Source        string // why it was taken
	RecordedAt    time.Time
}

// BaselineTimeout bounds the statement download of a baseline: it comes before the first
// transfer from an account, and a slow statement must not hold a disbursement up for long.
const BaselineTimeout = 3 * time.Second

// MirrorBaseline returns the tenant's baseline of a partner account; ok is false when none was
// recorded.
func (s *Store) MirrorBaseline(ctx context.Context, tenantID, partner, account string) (b Baseline, ok bool, err error) {
	err = db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT partner, account, as_of_date, as_of_entry_ref, balance_santim, source, recorded_at
			FROM gateway.mirror_baselines WHERE partner = $1 AND account = $2`, partner, account).
			Scan(&b.Partner, &b.Account, &b.AsOfDate, &b.AsOfEntryRef, &b.BalanceSantim, &b.Source, &b.RecordedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		ok = err == nil
		return err
	})
	if err != nil {
		return Baseline{}, false, fmt.Errorf("gateway.mirror_baseline: %w", err)
	}
	return b, ok, nil
}

// RecordBaseline stores b as the tenant's baseline of the account, unless one is recorded
// already (the first stands: it returns that one) or the transfer register holds a transfer
// from the account for the tenant: then the snapshot may include money we moved, which would
// hide it from reconciliation, so none is recorded (ok false) and reconciliation keeps the
// account's whole history, flagging too much rather than too little.
func (s *Store) RecordBaseline(ctx context.Context, tenantID string, b Baseline) (got Baseline, ok bool, err error) {
	err = db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			WITH ins AS (
				INSERT INTO gateway.mirror_baselines (tenant_id, partner, account, as_of_date, as_of_entry_ref, balance_santim, source)
				SELECT $1, $2, $3, $4, $5, $6, $7
				WHERE NOT EXISTS (SELECT 1 FROM gateway.transfers WHERE partner = $2 AND from_account = $3)
				ON CONFLICT (tenant_id, partner, account) DO NOTHING
				RETURNING partner, account, as_of_date, as_of_entry_ref, balance_santim, source, recorded_at)
			SELECT * FROM ins
			UNION ALL
			SELECT partner, account, as_of_date, as_of_entry_ref, balance_santim, source, recorded_at
			FROM gateway.mirror_baselines WHERE partner = $2 AND account = $3 AND NOT EXISTS (SELECT 1 FROM ins)`,
			tenantID, b.Partner, b.Account, b.AsOfDate, b.AsOfEntryRef, b.BalanceSantim, b.Source).
			Scan(&got.Partner, &got.Account, &got.AsOfDate, &got.AsOfEntryRef, &got.BalanceSantim, &got.Source, &got.RecordedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		ok = err == nil
		return err
	})
	if err != nil {
		return Baseline{}, false, fmt.Errorf("gateway.record_baseline: %w", err)
	}
	return got, ok, nil
}

// ensureBaseline records the tenant's baseline of the account a transfer is sent from, before
// the first one is: the partner's statement of the day so far (camt.053), its closing balance
// and its last line. Best effort by design: a baseline that cannot be taken (the partner's
// statement down or slow) must not stop a disbursement, and its absence only makes
// reconciliation count the account's whole history, which flags more, never less.
func (g *Gateway) ensureBaseline(ctx context.Context, p *Partner, tenantID, account, reference string) {
	if tenantID == "" || g.store == nil {
		return
	}
	key := tenantID + "\x00" + p.Partner() + "\x00" + account
	if _, done := g.baselined.Load(key); done {
		return
	}
	if p.breakerOpen() {
		// The transfer is refused at once too; the next one takes the baseline.
		return
	}
	log := g.log.With("partner", p.Partner(), "account", account, "reference", reference)
	if _, ok, err := g.store.MirrorBaseline(ctx, tenantID, p.Partner(), account); err != nil {
		log.Warn("gateway: mirror baseline not read", "err", err)
		return
	} else if ok {
		g.baselined.Store(key, true)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, BaselineTimeout)
	defer cancel()
	// The bank's booking day, by the wall clock as the bank's (g.clock is the health window's).
	day := time.Now().UTC().Truncate(24 * time.Hour)
	raw, err := p.baselineStatement(sctx, StatementRequest{Account: account, From: day, To: day, Format: FormatCamt053})
	if err != nil {
		log.Warn("gateway: mirror baseline not taken: statement not fetched", "err", err)
		return
	}
	lines, closing, ok, err := ParseCamt053Closing(raw)
	switch {
	case err != nil:
		log.Warn("gateway: mirror baseline not taken: statement not read", "err", err)
		return
	case !ok:
		log.Warn("gateway: mirror baseline not taken: the statement has no closing balance")
		return
	}
	b := Baseline{Partner: p.Partner(), Account: account, AsOfDate: day, BalanceSantim: closing,
		Source: "before the first transfer from the account, " + reference}
	for _, l := range lines {
		if l.BookingDate.Equal(day) {
			b.AsOfEntryRef = l.EntryRef
		}
	}
	got, ok, err := g.store.RecordBaseline(ctx, tenantID, b)
	switch {
	case err != nil:
		log.Warn("gateway: mirror baseline not recorded", "err", err)
	case !ok:
		log.Warn("gateway: no mirror baseline: the account already sent a transfer before one was taken")
		g.baselined.Store(key, true)
	default:
		log.Info("gateway: mirror baseline recorded", "as_of", got.AsOfDate.Format(time.DateOnly), "entry_ref", got.AsOfEntryRef,
			"balance_santim", got.BalanceSantim)
		g.baselined.Store(key, true)
	}
}
