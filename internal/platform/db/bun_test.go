package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

type selected struct {
	ID     string     `bun:"id" db:"id"`
	Amount int64      `bun:"amount" db:"amount"`
	On     time.Time  `bun:"on" db:"on"`
	Until  *time.Time `bun:"until" db:"until"`
}

// Select reads the same rows in a pgx and in a bun transaction, with bun's placeholders, bun.List
// and arguments quoted in (a quote in a value stays a value).
func TestSelectReadsTheSameRowsInPgxAndBun(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()
	const q = `SELECT id, amount::bigint AS amount, "on", "until" FROM (VALUES
		('a', 1::numeric(20,0), DATE '2026-01-31', NULL::date),
		('b''; DROP TABLE x; --', 9223372036854775807, DATE '2026-02-28', DATE '2026-03-01'),
		('c', 3, DATE '2026-03-01', NULL)) AS v (id, amount, "on", "until")
		WHERE id IN (?) AND amount >= ? ORDER BY id`
	args := []any{bun.List([]string{"a", "b'; DROP TABLE x; --"}), int64(1)}
	until := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	want := []selected{
		{ID: "a", Amount: 1, On: time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)},
		{ID: "b'; DROP TABLE x; --", Amount: 9223372036854775807, On: time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC), Until: &until},
	}

	var viaPgx, viaBun []selected
	require.NoError(t, db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) (err error) {
		viaPgx, err = db.Select[selected](ctx, tx, q, args...)
		return err
	}))
	require.NoError(t, db.InScopedBunTx(ctx, db.NewBun(d.App), "tenant-a", "", func(tx db.BunTx) (err error) {
		viaBun, err = db.Select[selected](ctx, tx, q, args...)
		return err
	}))
	for _, got := range [][]selected{viaPgx, viaBun} {
		require.Len(t, got, 2)
		for i := range got {
			require.Equal(t, want[i].ID, got[i].ID)
			require.Equal(t, want[i].Amount, got[i].Amount)
			require.True(t, want[i].On.Equal(got[i].On), "%v", got[i].On)
			require.Equal(t, want[i].Until == nil, got[i].Until == nil)
		}
	}
	// No rows is an empty result in both.
	require.NoError(t, db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
		rows, err := db.Select[selected](ctx, tx, `SELECT 'x' AS id, 1::bigint AS amount, now() AS "on", NULL::date AS "until" WHERE ?`, false)
		require.Empty(t, rows)
		return err
	}))
	_, err := db.Select[selected](ctx, nil, `SELECT 1`)
	require.Error(t, err)
}
