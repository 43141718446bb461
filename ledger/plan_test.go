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
// entries through their index rather than scan them, whether it reads one account (GetBalance,
// by id or by name) or many (GetBalances, ids and names mixed).
func TestBalanceReadSumsThroughTheEntriesIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	var accts []Account
	for _, name := range []string{"partner-bank:plan:1", "partner-bank:plan:2", "partner-bank:plan:3"} {
		acct, _, err := e.store.EnsureAccount(ctx, "plan-tenant", name, Asset, "ETB")
		require.NoError(t, err)
		accts = append(accts, acct)
	}
	for _, refs := range [][]AccountRef{
		{{ID: accts[0].ID}},
		{{Name: accts[0].Name}},
		{{ID: accts[0].ID}, {Name: accts[1].Name}, {ID: accts[2].ID}},
	} {
		ids, names := balanceArgs(refs)
		var plan strings.Builder
		require.NoError(t, db.InTenantTx(ctx, e.db.App, "plan-tenant", func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, "EXPLAIN "+balancesSQL, ids, names, nil)
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
		require.NotContains(t, plan.String(), "Seq Scan on balance_checkpoints", "checkpoints scanned:\n%s", plan.String())
		// Both bounds of the tail (the account, the sequence after the checkpoint) must be index
		// conditions: with the sequence only in a filter, a read past a checkpoint would visit
		// every entry the account ever had.
		require.Regexp(t, `Index Cond: \(\(account_id = [^)]+\) AND \(seq > `, plan.String(), "tail not bounded by the index:\n%s", plan.String())
		t.Logf("%d accounts:\n%s", len(refs), plan.String())
	}
}
