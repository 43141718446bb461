package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Store is the gateway's database (schema gateway). Every tenant-scoped statement runs through
// db.InTenantTx, so row-level security decides what a call sees.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a store on pool (the runtime role).
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// ErrForeignStatementLine means a line of the statement is already stored for another tenant:
// the account is not this tenant's to ingest.
var ErrForeignStatementLine = errors.New("statement line belongs to another tenant")

// ErrStatementLineChanged means the bank sent a line id it had sent before with different content.
// Bank lines are immutable; the stored line is kept and the new file is refused for review.
var ErrStatementLineChanged = errors.New("statement line changed since it was ingested")

// Ingest describes one statement download.
type Ingest struct {
	TenantID string
	Partner  string
	Account  string
	From, To time.Time
	Format   StatementFormat
	SHA256   string
	Lines    []StatementLine
	// AskedAt is when the statement was asked of the bank, recorded as the fetch's fetched_at
	// (zero: when it is stored).
	AskedAt time.Time
}

// IngestResult counts what was new.
type IngestResult struct {
	New, AlreadyPresent int
}

// IngestStatement stores the lines of one statement, each once per (partner, entryRef): running
// it again with the same or an overlapping statement stores nothing twice. Either every line is
// accounted for or nothing is written.
func (s *Store) IngestStatement(ctx context.Context, in Ingest) (IngestResult, error) {
	var res IngestResult
	n := len(in.Lines)
	refs := make([]string, n)
	booking := make([]time.Time, n)
	value := make([]time.Time, n)
	ourRefs := make([]string, n)
	dirs := make([]string, n)
	amounts := make([]int64, n)
	ccys := make([]string, n)
	cps := make([]string, n)
	bals := make([]*int64, n)
	byRef := make(map[string]StatementLine, n)
	for i, l := range in.Lines {
		refs[i], booking[i], value[i], ourRefs[i] = l.EntryRef, l.BookingDate, l.ValueDate, l.Reference
		dirs[i], amounts[i], ccys[i], cps[i], bals[i] = string(l.Direction), l.AmountSantim, l.Currency, l.Counterparty, l.BalanceAfterSantim
		byRef[l.EntryRef] = l
	}
	err := db.InTenantTx(ctx, s.pool, in.TenantID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			INSERT INTO gateway.statement_lines
			    (tenant_id, partner, account, entry_ref, booking_date, value_date, reference, direction,
			     amount_santim, currency, counterparty, balance_after_santim, source_format, statement_sha256)
			SELECT $1, $2, $3, r, b, v, ref, d, a, c, cp, bal, $4, $5
			FROM unnest($6::text[], $7::date[], $8::date[], $9::text[], $10::text[], $11::numeric[],
			            $12::text[], $13::text[], $14::numeric[]) AS t(r, b, v, ref, d, a, c, cp, bal)
			ON CONFLICT (partner, entry_ref) DO NOTHING
			RETURNING entry_ref`,
			in.TenantID, in.Partner, in.Account, string(in.Format), in.SHA256,
			refs, booking, value, ourRefs, dirs, amounts, ccys, cps, bals)
		if err != nil {
			return err
		}
		inserted, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		res.New = len(inserted)
		if res.New < n {
			if err := s.checkExisting(ctx, tx, in, byRef, inserted); err != nil {
				return err
			}
		}
		res.AlreadyPresent = n - res.New
		if _, err := tx.Exec(ctx, `
			INSERT INTO gateway.statement_fetches
			    (tenant_id, partner, account, period_from, period_to, source_format, sha256, line_count, new_lines, fetched_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, coalesce($10, now()))`,
			in.TenantID, in.Partner, in.Account, in.From, in.To, string(in.Format), in.SHA256, n, res.New, askedAt(in.AskedAt)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO gateway.partner_ingest_state (partner, last_ingested_at) VALUES ($1, now())
			ON CONFLICT (partner) DO UPDATE SET last_ingested_at = GREATEST(gateway.partner_ingest_state.last_ingested_at, EXCLUDED.last_ingested_at)`,
			in.Partner)
		return err
	})
	if err != nil {
		return IngestResult{}, fmt.Errorf("gateway.ingest_statement: %w", err)
	}
	return res, nil
}

func askedAt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// checkExisting verifies that every line not inserted is already stored for this tenant and
// account with the same content.
func (s *Store) checkExisting(ctx context.Context, tx pgx.Tx, in Ingest, byRef map[string]StatementLine, inserted []string) error {
	skip := make(map[string]bool, len(inserted))
	for _, r := range inserted {
		skip[r] = true
	}
	var want []string
	for r := range byRef {
		if !skip[r] {
			want = append(want, r)
		}
	}
	rows, err := tx.Query(ctx, `
		SELECT entry_ref, account, booking_date, value_date, reference, direction, amount_santim, currency, counterparty, balance_after_santim
		FROM gateway.statement_lines WHERE partner = $1 AND entry_ref = ANY($2)`, in.Partner, want)
	if err != nil {
		return err
	}
	defer rows.Close()
	found := 0
	for rows.Next() {
		var (
			l       StatementLine
			account string
			dir     string
		)
		if err := rows.Scan(&l.EntryRef, &account, &l.BookingDate, &l.ValueDate, &l.Reference, &dir, &l.AmountSantim, &l.Currency, &l.Counterparty, &l.BalanceAfterSantim); err != nil {
			return err
		}
		l.Direction = Direction(dir)
		found++
		if account != in.Account || !sameLine(l, byRef[l.EntryRef]) {
			return fmt.Errorf("%w: partner %s entry %s", ErrStatementLineChanged, in.Partner, l.EntryRef)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if found < len(want) {
		// Row-level security hid them: another tenant ingested these lines.
		return fmt.Errorf("%w: %d of the lines of account %s at %s", ErrForeignStatementLine, len(want)-found, in.Account, in.Partner)
	}
	return nil
}

func sameLine(a, b StatementLine) bool {
	balEq := (a.BalanceAfterSantim == nil) == (b.BalanceAfterSantim == nil) &&
		(a.BalanceAfterSantim == nil || *a.BalanceAfterSantim == *b.BalanceAfterSantim)
	return a.EntryRef == b.EntryRef && a.BookingDate.Equal(b.BookingDate) && a.ValueDate.Equal(b.ValueDate) &&
		a.Reference == b.Reference && a.Direction == b.Direction && a.AmountSantim == b.AmountSantim &&
		a.Currency == b.Currency &&
		// The counterparty is descriptive and formats render it differently (a name in one, an
		// account in another); camt.053 carries no running balance: a line first seen in CSV and again in camt.053 is
		// the same line.
		(balEq || a.BalanceAfterSantim == nil || b.BalanceAfterSantim == nil)
}

// StoredLine is a statement line with the account it belongs to.
type StoredLine struct {
	StatementLine
	Account string
}

// StatementLines returns a tenant's stored lines of one partner booked within [from, to]
// (dates, inclusive), optionally for one account, in booking order.
func (s *Store) StatementLines(ctx context.Context, tenantID, partner, account string, from, to time.Time) ([]StoredLine, error) {
	var out []StoredLine
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT account, entry_ref, booking_date, value_date, reference, direction, amount_santim, currency, counterparty, balance_after_santim
			FROM gateway.statement_lines
			WHERE partner = $1 AND ($2 = '' OR account = $2) AND booking_date BETWEEN $3 AND $4
			ORDER BY booking_date, id`, partner, account, from, to)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (StoredLine, error) {
			var l StoredLine
			var dir string
			err := r.Scan(&l.Account, &l.EntryRef, &l.BookingDate, &l.ValueDate, &l.Reference, &dir, &l.AmountSantim, &l.Currency, &l.Counterparty, &l.BalanceAfterSantim)
			l.Direction = Direction(dir)
			return l, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gateway.statement_lines: %w", err)
	}
	return out, nil
}

// StatementAccounts lists the accounts of a partner for which the tenant has stored lines.
func (s *Store) StatementAccounts(ctx context.Context, tenantID, partner string) ([]string, error) {
	var out []string
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT account FROM gateway.statement_lines WHERE partner = $1 ORDER BY account`, partner)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gateway.statement_accounts: %w", err)
	}
	return out, nil
}

// LastIngest returns when each partner's statements were last ingested.
func (s *Store) LastIngest(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, `SELECT partner, last_ingested_at FROM gateway.partner_ingest_state`)
	if err != nil {
		return nil, fmt.Errorf("gateway.last_ingest: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var p string
		var t time.Time
		if err := rows.Scan(&p, &t); err != nil {
			return nil, fmt.Errorf("gateway.last_ingest: %w", err)
		}
		out[p] = t
	}
	return out, rows.Err()
}

// Ping checks the database (for svc_dependency_up).
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }
