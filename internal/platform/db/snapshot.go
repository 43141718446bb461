package db

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// A read that sums figures over several tables (a dashboard) must see them as of one instant:
// READ COMMITTED takes a fresh snapshot per statement, so a change that commits between two of
// its statements shows in one figure and not in the next. WithSnapshot marks a context whose
// transactions run REPEATABLE READ, one snapshot for the whole transaction; every transaction
// helper of this package (InScopedTx, InScopedBunTx) and the cross-tenant path
// (internal/platform/crosstenant) begin that way when the context says so. Such a transaction
// may still write (the cross-tenant path's audit row), but a write that meets a concurrent
// change fails with a serialization error instead of waiting, so only reads take it.

type snapshotKey struct{}

// WithSnapshot returns ctx whose transactions see one snapshot (REPEATABLE READ).
func WithSnapshot(ctx context.Context) context.Context {
	return context.WithValue(ctx, snapshotKey{}, true)
}

// Snapshot reports whether ctx asks for one snapshot per transaction (WithSnapshot).
func Snapshot(ctx context.Context) bool {
	v, _ := ctx.Value(snapshotKey{}).(bool)
	return v
}

// TxOptions are the pgx options of a transaction begun under ctx.
func TxOptions(ctx context.Context) pgx.TxOptions {
	if Snapshot(ctx) {
		return pgx.TxOptions{IsoLevel: pgx.RepeatableRead}
	}
	return pgx.TxOptions{}
}

// SQLTxOptions are the database/sql options (bun's) of a transaction begun under ctx; nil is the
// default.
func SQLTxOptions(ctx context.Context) *sql.TxOptions {
	if Snapshot(ctx) {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead}
	}
	return nil
}

// beginStatement is the BEGIN of a transaction under ctx, for a begin query of our own.
func beginStatement(ctx context.Context) string {
	if Snapshot(ctx) {
		return "BEGIN ISOLATION LEVEL REPEATABLE READ"
	}
	return "BEGIN"
}
