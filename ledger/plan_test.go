package ledger

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// TestBalanceReadSumsThroughTheEntriesIndex: the balance read and write_checkpoint share
// ledger.entry_sums. Postgres must inline it into the read (a function scan would sum outside the
// planner's view), and the read, run as the runtime role under row-level security, must reach the
// entries through their index rather than scan them.
func TestBalanceReadSumsThroughTheEntriesIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acct, _, err := e.store.EnsureAccount(ctx, "plan-tenant", "partner-bank:plan:1", Asset, "ETB")
	require.NoError(t, err)
	for _, ref := range []AccountRef{{ID: acct.ID}, {Name: acct.Name}} {
		sql, arg := balanceSQL(ref)
		var plan strings.Builder
		require.NoError(t, db.InTenantTx(ctx, e.db.App, "plan-tenant", func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, "EXPLAIN "+sql, arg, nil)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					return err
				}
				plan.WriteString(line + "\n")
			}
			return rows.Err()
		}))
		require.NotContains(t, plan.String(), "Function Scan", "entry_sums not inlined:\n%s", plan.String())
		require.NotContains(t, plan.String(), "Seq Scan on entries", "entries scanned:\n%s", plan.String())
		// Both bounds of the tail (the account, the sequence after the checkpoint) must be index
		// conditions: with the sequence only in a filter, a read past a checkpoint would visit
		// every entry the account ever had.
		require.Regexp(t, `Index Cond: \(\(account_id = [^)]+\) AND \(seq > `, plan.String(), "tail not bounded by the index:\n%s", plan.String())
	}
}
