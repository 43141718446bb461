package ewa_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/schema"
)

// TestRepaymentsMigrationKeepsWholeRepayments: a request repaid whole before repayments could be
// partial (app/0021's schema) comes through app/0022 with its one repayment: POSTED, seq 1,
// under the ledger key its journal was posted with, so a request repaid before and after the
// migration reads the same. Going down, a request repaid in part (which 0021 cannot show) is
// DISBURSED with nothing repaid, as 0022's down says.
func TestRepaymentsMigrationKeepsWholeRepayments(t *testing.T) {
	w := newRepayWorld(t)
	req := w.disbursed(10_000)
	total := req.PrincipalSantim + req.FeeSantim
	w.in(func(tx pgx.Tx) error { // REPAID as the handler before 0022 left it: no repayments row
		_, err := tx.Exec(w.ctx, `UPDATE app.ewa_requests SET status = 'REPAID', repaid_amount_santim = $2, repayment_source = 'PAYROLL',
			repayment_ledger_tx_id = 'ltx-repay-1', repaid_at = now() WHERE id = $1`, req.ID, total)
		return err
	})
	part := w.disbursed(10_000)
	_, err := w.repay(part, "wf-part", 3_000, false)
	require.NoError(t, err)
	w.pool.Close() // DDL below must not wait on the runtime pool
	owner := w.d.OwnerDSN

	appVersion := func() uint {
		vs, err := schema.Versions(owner)
		require.NoError(t, err)
		for _, v := range vs {
			if v.Component == "app" {
				return v.Version
			}
		}
		t.Fatal("no app component")
		return 0
	}
	require.NoError(t, schema.DownBelow(owner, "app", 22))
	require.Less(t, appVersion(), uint(22))
	conn, err := pgx.Connect(context.Background(), owner)
	require.NoError(t, err)
	var repaid *int64
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT set_config($1, $2, false)`, db.TenantSetting, w.tenant).Scan(new(string)))
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT repaid_amount_santim FROM app.ewa_requests WHERE id = $1`, part.ID).Scan(&repaid))
	require.Nil(t, repaid, "the partial sum is dropped going down")
	require.NoError(t, conn.Close(context.Background()))
	require.NoError(t, schema.Up(owner))

	pool, err := pgxpool.New(context.Background(), w.d.AppDSN)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var r ewa.Request
	var ps []ewa.Repayment
	require.NoError(t, tenancy.InTx(w.ctx, pool, func(tx pgx.Tx) error {
		var err error
		if r, err = ewa.Get(w.ctx, tx, w.tenant, req.ID); err != nil {
			return err
		}
		ps, err = ewa.Repayments(w.ctx, tx, req.ID)
		return err
	}))
	require.Equal(t, ewa.Repaid, r.Status)
	require.Equal(t, total, r.RepaidAmountSantim)
	require.Len(t, ps, 1)
	p := ps[0]
	require.Equal(t, []any{1, ewa.RepaymentPosted, total, "PAYROLL", "ewa-repay:" + req.ID, "ltx-repay-1", ""},
		[]any{p.Seq, p.Status, p.AmountSantim, p.Source, p.LedgerKey, p.LedgerTxID, p.WorkflowID})
}
