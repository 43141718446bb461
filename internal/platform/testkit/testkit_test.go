package testkit_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Ended tests' databases are dropped in batches: never more than a batch's worth waits, and the
// batch that fills is dropped whole.
func TestEndedTestsDatabasesAreDroppedInBatches(t *testing.T) {
	s := testkit.PG(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.SuperDSN("postgres"))
	require.NoError(t, err)
	defer conn.Close(ctx)
	ours := func() int {
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE $1`,
			fmt.Sprintf("wagerail\\_t\\_%d\\_%%", os.Getpid())).Scan(&n))
		return n
	}
	require.Zero(t, ours())
	for i := range 15 {
		t.Run("ends", func(t *testing.T) { testkit.NewDB(t) })
		require.Equal(t, i+1, ours(), "an ended test's database waits for its batch")
	}
	t.Run("fills the batch", func(t *testing.T) { testkit.NewDB(t) })
	require.Zero(t, ours(), "the full batch is dropped")
	t.Run("starts the next", func(t *testing.T) { testkit.NewDB(t) })
	require.Equal(t, 1, ours())
}
