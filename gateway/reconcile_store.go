package gateway

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/db"
)

// StartRun records the start of a reconciliation run and returns its id.
func (s *Store) StartRun(ctx context.Context, tenantID, partner string, from, to time.Time) (int64, error) {
	var id int64
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO gateway.recon_runs (tenant_id, partner, period_from, period_to)
			VALUES ($1, $2, $3, $4) RETURNING id`, tenantID, partner, from, to).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("gateway.start_run: %w", err)
	}
	return id, nil
}

// RunCounts is what a finished run reports.
type RunCounts struct {
	Scanned, Matched, Flagged, Errors int
	ErrorDetail                       string
}

// FinishRun stores the run's flags (one row per fingerprint, so re-runs update rather than
// duplicate), marks RESOLVED the open flags of the reconciled accounts and days that this run no
// longer sees, and closes the run with its counts, all in one transaction.
func (s *Store) FinishRun(ctx context.Context, tenantID, partner string, runID int64, from, to time.Time, cleanAccounts []string, flags []Flag, c RunCounts) error {
	status := "CLEAN"
	switch {
	case c.Errors > 0:
		status = "ERROR"
	case c.Flagged > 0:
		status = "FLAGGED"
	}
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, f := range flags {
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
				tenantID, partner, f.Account, string(f.Kind), f.Fingerprint(), f.Date, f.Reference, string(f.Direction),
				f.EntryRef, f.TransactionID, f.LedgerSeq, f.BankSantim, f.LedgerSantim, f.Detail, runID)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if len(cleanAccounts) > 0 {
			if _, err := tx.Exec(ctx, `
				UPDATE gateway.recon_flags SET status = 'RESOLVED', resolved_run_id = $1, updated_at = now()
				WHERE partner = $2 AND status = 'OPEN' AND account = ANY($3) AND on_date BETWEEN $4 AND $5
				  AND last_run_id <> $1`, runID, partner, cleanAccounts, from, to); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `
			UPDATE gateway.recon_runs SET finished_at = now(), scanned = $2, matched = $3, flagged = $4,
			    errors = $5, status = $6, error_detail = $7
			WHERE id = $1`, runID, c.Scanned, c.Matched, c.Flagged, c.Errors, status, c.ErrorDetail)
		return err
	})
	if err != nil {
		return fmt.Errorf("gateway.finish_run: %w", err)
	}
	return nil
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

// Flags lists a tenant's flags of a partner, open ones only when openOnly.
func (s *Store) Flags(ctx context.Context, tenantID, partner string, openOnly bool) ([]StoredFlag, error) {
	var out []StoredFlag
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
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
		return nil, fmt.Errorf("gateway.flags: %w", err)
	}
	return out, nil
}

// StatementCovers reports whether statements fetched for the account together cover every day
// of [from, to]. Without that, a ledger movement with no bank line could just be a statement
// nobody fetched, and the runner must not flag it.
func (s *Store) StatementCovers(ctx context.Context, tenantID, partner, account string, from, to time.Time) (bool, error) {
	type span struct{ from, to time.Time }
	var spans []span
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT period_from, period_to FROM gateway.statement_fetches
			WHERE partner = $1 AND account = $2 AND period_to >= $3 AND period_from <= $4`, partner, account, from, to)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sp span
			if err := rows.Scan(&sp.from, &sp.to); err != nil {
				return err
			}
			spans = append(spans, sp)
		}
		return rows.Err()
	})
	if err != nil {
		return false, fmt.Errorf("gateway.statement_covers: %w", err)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from.Before(spans[j].from) })
	next := from // first day not yet covered
	for _, sp := range spans {
		if sp.from.After(next) {
			return false, nil
		}
		if d := sp.to.AddDate(0, 0, 1); d.After(next) {
			next = d
		}
		if next.After(to) {
			return true, nil
		}
	}
	return next.After(to), nil
}
