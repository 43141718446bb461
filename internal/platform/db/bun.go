package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// The rule for store code: a domain store with many plain tables (payroll, lending, equb,
// disputes, …) writes its models and queries with bun; a path where every microsecond counts
// (the ledger's postings, bulk inserts, the gateway's transfer book) stays on raw pgx. Both run
// over the same pool and in transactions scoped the same way, so row-level security applies to
// bun's queries exactly as to pgx's.

// NewBun returns bun over pool (database/sql through pgx's stdlib driver, Postgres dialect). The
// pool stays the one pool: database/sql keeps no idle connection of its own, so a connection goes
// back to pgxpool as soon as a transaction ends.
func NewBun(pool *pgxpool.Pool) *bun.DB {
	sqldb := stdlib.OpenDBFromPool(pool)
	sqldb.SetMaxIdleConns(0)
	return bun.NewDB(sqldb, pgdialect.New())
}

// Writer is what the shared write helpers (internal/platform/audit, internal/platform/outbox)
// need from a transaction: a pgx.Tx has it, and so has BunTx, so a bun store writes its audit
// row and outbox event in its own transaction.
type Writer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// BunTx is a bun transaction that also speaks Writer. Exec and QueryRow take Postgres's own
// placeholders ($1, $2, …) and go to the driver unformatted (bun's own ExecContext would read a
// jsonb `?` operator as a placeholder).
type BunTx struct{ bun.Tx }

// Exec runs a statement in the transaction; the tag carries only the affected row count.
func (t BunTx) Exec(ctx context.Context, query string, args ...any) (pgconn.CommandTag, error) {
	res, err := t.Tx.Tx.ExecContext(ctx, query, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return pgconn.NewCommandTag("EXEC " + strconv.FormatInt(n, 10)), nil
}

// QueryRow runs a query in the transaction; no row scans as pgx.ErrNoRows, as pgx's does.
func (t BunTx) QueryRow(ctx context.Context, query string, args ...any) pgx.Row {
	return noRows{t.Tx.Tx.QueryRowContext(ctx, query, args...)}
}

type noRows struct{ *sql.Row }

func (r noRows) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return pgx.ErrNoRows
	}
	return err
}

// InScopedBunTx is InScopedTx for bun: fn's transaction has the tenant and user settings row-level
// security reads; fn's error (or panic) rolls it back.
func InScopedBunTx(ctx context.Context, b *bun.DB, tenantID, userID string, fn func(BunTx) error) error {
	if tenantID == "" && userID == "" {
		return errors.New("db: a tenant or a user is required")
	}
	return b.RunInTx(ctx, SQLTxOptions(ctx), func(ctx context.Context, tx bun.Tx) error {
		t := BunTx{tx}
		if _, err := t.Exec(ctx, `SELECT set_config($1, $2, true), set_config($3, $4, true)`,
			TenantSetting, tenantID, UserSetting, userID); err != nil {
			return fmt.Errorf("db: set scope: %w", err)
		}
		return fn(t)
	})
}

// pgFormatter writes bun's query syntax (? placeholders, bun.List, bun.Ident) as Postgres SQL with
// the arguments quoted in, as bun itself sends every query.
var pgFormatter = schema.NewQueryGen(pgdialect.New())

// Select runs a query written in bun's syntax in tx (a BunTx, or a pgx Querier: a pgx.Tx above
// all) and returns its rows as T, matched by column name (a struct field's `db` tag, else its
// name, as pgx.RowToStructByName does; bun reads the `bun` tag, so a row type carries both). It
// lets one read path (the payroll calculator's loader) run inside whichever transaction its caller
// holds: a bun store's, or a pgx one that already holds the locks the read must be consistent with
// (early wage access).
func Select[T any](ctx context.Context, tx Writer, query string, args ...any) ([]T, error) {
	switch t := tx.(type) {
	case BunTx:
		var out []T
		if err := t.NewRaw(query, args...).Scan(ctx, &out); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return out, nil
	case Querier: // a pgx.Tx, or a pool or connection for a read outside a transaction
		rows, err := t.Query(ctx, pgFormatter.FormatQuery(query, args...))
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowToStructByName[T])
	}
	return nil, fmt.Errorf("db: Select in a %T, not a BunTx or a pgx Querier", tx)
}
