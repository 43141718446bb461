package audit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// List answers the tenant's rows about the named targets, oldest first, in pages, and nothing of
// another tenant's or another target's; a query with no target or a limit out of bounds is
// refused before the database is asked.
func TestListPagesTheTargetsRows(t *testing.T) {
	d := testkit.NewDB(t)
	a := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-7", RequestID: "req-1"})
	b := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-b", Actor: "user-8"})
	write := func(ctx context.Context, typ, id, action string) {
		require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: typ, TargetID: id,
				Details: map[string]any{"n": action}})
		}))
	}
	for i := range 5 {
		write(a, "PayrollRun", "prun_1", fmt.Sprintf("Run%d", i))
		write(a, "PayrollEntry", fmt.Sprintf("pent_%d", i), fmt.Sprintf("Entry%d", i))
		write(a, "PayrollRun", "prun_2", "Other")
		write(b, "PayrollRun", "prun_1", "TenantB") // another tenant's run of the same id
	}
	q := audit.Query{Targets: []audit.Target{{Type: "PayrollRun", IDs: []string{"prun_1"}},
		{Type: "PayrollEntry", In: `SELECT 'pent_1' UNION SELECT ?`, InArgs: []any{"pent_3"}}}, Limit: 4}
	var got []string
	for {
		var page []audit.Row
		require.NoError(t, tenancy.InTx(a, d.App, func(tx pgx.Tx) (err error) {
			page, err = audit.List(a, tx, q)
			return err
		}))
		for _, r := range page {
			got = append(got, r.Action)
			require.Equal(t, "user-7", r.Actor)
			require.Equal(t, "req-1", r.RequestID)
			require.Equal(t, audit.Success, r.Outcome)
			require.JSONEq(t, fmt.Sprintf(`{"n":%q}`, r.Action), string(r.Details))
		}
		if len(page) < q.Limit {
			break
		}
		q.After = page[len(page)-1].ID
	}
	require.Equal(t, []string{"Run0", "Run1", "Entry1", "Run2", "Run3", "Entry3", "Run4"}, got)

	for name, bad := range map[string]audit.Query{
		"no target":   {Limit: 10},
		"no id":       {Targets: []audit.Target{{Type: "PayrollRun"}}, Limit: 10},
		"no type":     {Targets: []audit.Target{{IDs: []string{"x"}}}, Limit: 10},
		"ids and in":  {Targets: []audit.Target{{Type: "PayrollRun", IDs: []string{"x"}, In: "SELECT 'x'"}}, Limit: 10},
		"limit 0":     {Targets: []audit.Target{{Type: "PayrollRun", IDs: []string{"x"}}}},
		"limit large": {Targets: []audit.Target{{Type: "PayrollRun", IDs: []string{"x"}}}, Limit: audit.MaxPage + 1},
	} {
		_, err := audit.List(a, nil, bad)
		require.ErrorIs(t, err, audit.ErrQuery, name)
	}
}

// Find refuses a page size out of bounds or a negative cursor before the database is asked.
func TestFindRefusesABadPage(t *testing.T) {
	for name, bad := range map[string]audit.Search{
		"limit 0":     {},
		"limit large": {Limit: audit.MaxPage + 1},
		"before < 0":  {Limit: 10, Before: -1},
	} {
		_, err := audit.Find(context.Background(), nil, bad)
		require.ErrorIs(t, err, audit.ErrQuery, name)
	}
}
