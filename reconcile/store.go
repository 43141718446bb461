package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Store keeps reconciliation runs and the discrepancies they flag (gateway.recon_runs,
// gateway.recon_flags) and reads which statement periods were fetched (gateway.statement_fetches).
// Every method works on the context's tenant (tenancy.InTx): a run never sees another tenant's
// statements or flags.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a store on pool (the runtime role).
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// RunRecord is one finished reconciliation of a pair, as RecordRun stores it.
type RunRecord struct {
	Partner                           string
	From, To                          time.Time // UTC days, inclusive
	StartedAt                         time.Time
	Scanned, Matched, Flagged, Errors int
	ErrorDetail                       string
	// CleanAccounts are the accounts reconciled without a runner error: their open flags within
	// the period that this run no longer sees are resolved. Other accounts' flags stay as they are.
	CleanAccounts []string
	Flags         []Flag
	// Cancelled are movements that cancelled out with their reversal: their open flags, on
	// whichever day, are resolved.
	Cancelled []TxRef
}

// RecordRun stores a finished run, its flags (one row per fingerprint, so re-runs update rather
// than duplicate) and marks RESOLVED the open flags of the clean accounts and days that this run
// no longer sees and those of the movements that cancelled out with their reversal, all in one
// transaction: an attempt that fails writes nothing, so a retried activity never leaves a
// half-recorded run behind.
func (s *Store) RecordRun(ctx context.Context, r RunRecord) (int64, error) {
	status := "CLEAN"
	switch {
	case r.Errors > 0:
		status = "ERROR"
	case r.Flagged > 0:
		status = "FLAGGED"
	}
	var runID int64
	tenant := tenancy.TenantID(ctx)
	err := tenancy.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `
			INSERT INTO gateway.recon_runs (tenant_id, partner, period_from, period_to, started_at, finished_at,
			    scanned, matched, flagged, errors, status, error_detail)
			VALUES ($1, $2, $3, $4, $5, now(), $6, $7, $8, $9, $10, $11) RETURNING id`,
			tenant, r.Partner, r.From, r.To, r.StartedAt, r.Scanned, r.Matched, r.Flagged, r.Errors, status, r.ErrorDetail).Scan(&runID); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, f := range r.Flags {
			b.Queue(`
				INSERT INTO gateway.recon_flags
				    (tenant_id, partner, account, kind, fingerprint, on_date, reference, direction, entry_ref,
				     ledger_transaction_id, ledger_entry_seq, bank_amount_santim, ledger_amount_santim, detail,
				     first_run_id, last_run_id)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULLIF($11, 0), $12, $13, $14, $15, $15)
				ON CONFLICT (tenant_id, partner, kind, fingerprint) DO UPDATE SET
				    last_run_id = EXCLUDED.last_run_id, seen_count = gateway.recon_flags.seen_count + 1,
				    status = 'OPEN', resolved_run_id = NULL, detail = EXCLUDED.detail,
				    bank_amount_santim = EXCLUDED.bank_amount_santim, ledger_amount_santim = EXCLUDED.ledger_amount_santim,
				    updated_at = now()`,
				tenant, r.Partner, f.Account, string(f.Kind), f.Fingerprint(), f.Date, f.Reference, string(f.Direction),
				f.EntryRef, f.TransactionID, f.LedgerSeq, f.BankSantim, f.LedgerSantim, f.Detail, runID)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if len(r.Cancelled) > 0 {
			fps := make([]string, len(r.Cancelled))
			for i, c := range r.Cancelled {
				fps[i] = c.fingerprint()
			}
			if _, err := tx.Exec(ctx, `
				UPDATE gateway.recon_flags SET status = 'RESOLVED', resolved_run_id = $1, updated_at = now()
				WHERE partner = $2 AND status = 'OPEN' AND fingerprint = ANY($3) AND last_run_id <> $1`,
				runID, r.Partner, fps); err != nil {
				return err
			}
		}
		if len(r.CleanAccounts) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `
			UPDATE gateway.recon_flags SET status = 'RESOLVED', resolved_run_id = $1, updated_at = now()
			WHERE partner = $2 AND status = 'OPEN' AND account = ANY($3) AND on_date BETWEEN $4 AND $5
			  AND last_run_id <> $1`, runID, r.Partner, r.CleanAccounts, r.From, r.To)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reconcile.record_run: %w", err)
	}
	return runID, nil
}

// StoredFlag is a flag as operators see it.
type StoredFlag struct {
	ID        int64
	Kind      FlagKind
	Account   string
	Reference string
	EntryRef  string
	TxID      string
	OnDate    time.Time
	Status    string
	SeenCount int
	Detail    string
}

// Flags lists the context tenant's flags of a partner, open ones only when openOnly.
func (s *Store) Flags(ctx context.Context, partner string, openOnly bool) ([]StoredFlag, error) {
	var out []StoredFlag
	err := tenancy.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT id, kind, account, reference, entry_ref, ledger_transaction_id, on_date, status, seen_count, detail
			FROM gateway.recon_flags WHERE partner = $1 AND (NOT $2 OR status = 'OPEN') ORDER BY on_date, id`, partner, openOnly)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f StoredFlag
			var kind string
			if err := rows.Scan(&f.ID, &kind, &f.Account, &f.Reference, &f.EntryRef, &f.TxID, &f.OnDate, &f.Status, &f.SeenCount, &f.Detail); err != nil {
				return err
			}
			f.Kind = FlagKind(kind)
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile.flags: %w", err)
	}
	return out, nil
}

// RunStatus is the status of one of the context tenant's runs (CLEAN, FLAGGED, ERROR).
func (s *Store) RunStatus(ctx context.Context, runID int64) (string, error) {
	var st string
	err := tenancy.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT status FROM gateway.recon_runs WHERE id = $1`, runID).Scan(&st)
	})
	if err != nil {
		return "", fmt.Errorf("reconcile.run_status: %w", err)
	}
	return st, nil
}

// Coverage is how the statements fetched for an account cover a period, day by day.
type Coverage struct {
	// Covered: every day of the period has a statement that may be compared. A day that has
	// ended counts only by a statement fetched after its end: one fetched while the day was still
	// running lacks what the bank booked later that day, and comparing it with the ledger would
	// flag the rest of the day as missing at the bank (or cancel a reversal out on lines the bank
	// had not booked yet). A day not yet ended counts by any statement of it: what the bank has
	// booked so far, compared provisionally.
	Covered bool
	// Whole: every day has ended and has a statement fetched after its end (implies Covered).
	Whole bool
	// Gap is the first day that is not covered (when !Covered), and PartialAt when the last
	// statement of it was fetched, before it ended (zero when it has none at all).
	Gap, PartialAt time.Time
}

// StatementCovers reports how the statements fetched for the account cover every day of
// [from, to] at now (see Coverage). Without coverage, a ledger movement with no bank line could
// just be a statement nobody fetched (or fetched too early), and the runner must not flag it.
func (s *Store) StatementCovers(ctx context.Context, partner, account string, from, to, now time.Time) (Coverage, error) {
	type fetch struct{ from, to, at time.Time }
	var fetches []fetch
	err := tenancy.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT period_from, period_to, fetched_at FROM gateway.statement_fetches
			WHERE partner = $1 AND account = $2 AND period_to >= $3 AND period_from <= $4`, partner, account, from, to)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f fetch
			if err := rows.Scan(&f.from, &f.to, &f.at); err != nil {
				return err
			}
			fetches = append(fetches, f)
		}
		return rows.Err()
	})
	if err != nil {
		return Coverage{}, fmt.Errorf("reconcile.statement_covers: %w", err)
	}
	c := Coverage{Covered: true, Whole: true}
	// The period is at most gateway.MaxStatementPeriod days (PairRequest.check), one day for a
	// reversal's pair: a day-by-day walk over the period's fetches is small.
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		end := d.AddDate(0, 0, 1)
		var fetched bool
		var last time.Time
		for _, f := range fetches {
			if !f.from.After(d) && !f.to.Before(d) {
				fetched = true
				if f.at.After(last) {
					last = f.at
				}
			}
		}
		ended := !now.Before(end)
		switch {
		case fetched && !last.Before(end):
			// Asked for after the day ended: the day's whole statement.
		case fetched && !ended:
			c.Whole = false
		default:
			c.Covered, c.Whole, c.Gap = false, false, d
			if fetched {
				c.PartialAt = last
			}
			return c, nil
		}
	}
	return c, nil
}
