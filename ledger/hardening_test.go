package ledger

import (
	"strings"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestHardening2_OneAccountPostingRefused: a posting whose entries all touch one account is
// refused with SINGLE_ACCOUNT (InvalidArgument), whether the account is named twice, given by
// two spellings of its id, or by its id and its name; and the database refuses it from raw SQL.
func TestHardening2_OneAccountPostingRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	id := ids["payroll-clearing"]
	upper, braced := strings.ToUpper(id), "{"+id+"}"
	before := e.counts(t, tenant)

	byID := func(s string, d ledgerv1.Direction) *ledgerv1.EntryInput {
		return &ledgerv1.EntryInput{AccountId: s, Direction: d, AmountSantim: 100}
	}
	for name, entries := range map[string][]*ledgerv1.EntryInput{
		"one name twice":        {leg("payroll-clearing", dr, 100), leg("payroll-clearing", cr, 100)},
		"one name, three legs":  {leg("payroll-clearing", dr, 100), leg("payroll-clearing", cr, 60), leg("payroll-clearing", cr, 40)},
		"one id, two spellings": {byID(id, dr), byID(upper, cr)},
		"one id, braced":        {byID(braced, dr), byID(id, cr)},
		"id and name":           {byID(id, dr), leg("payroll-clearing", cr, 100)},
		"name and id":           {leg("payroll-clearing", dr, 100), byID(upper, cr)},
	} {
		_, err := e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "k-" + strings.ReplaceAll(name, " ", "-"), Entries: entries})
		requireReason(t, err, ReasonSingleAccount)
		b, err := e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: []*ledgerv1.PostTransactionRequest{
			{IdempotencyKey: "b-" + strings.ReplaceAll(name, " ", "-"), Entries: entries}}})
		require.NoError(t, err)
		requireReason(t, ItemError(b.GetResults()[0]), ReasonSingleAccount)
	}
	require.Equal(t, codes.InvalidArgument, ReasonSingleAccount.Code())
	// The validator alone, for callers of the Go API.
	p := valid()
	p.Entries[1].AccountName = p.Entries[0].AccountName
	require.ErrorIs(t, ValidatePosting(p), ErrSingleAccount)

	// Raw SQL as the runtime role: a balanced pair on one account.
	raw := db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `WITH t AS (
				INSERT INTO ledger.transactions (tenant_id, idempotency_key, request_hash, kind, status, currency)
				VALUES ($1, 'raw', decode(repeat('00', 32), 'hex'), 'STANDARD', 'POSTED', 'ETB') RETURNING id)
			INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
			SELECT $1, t.id, $2::uuid, 'ETB', 'POSTED', v.dir, 100 FROM t, (VALUES ('DEBIT'), ('CREDIT')) AS v(dir)`, tenant, id)
		return err
	})
	var pgErr *pgconn.PgError
	require.ErrorAs(t, raw, &pgErr)
	require.Equal(t, "entries_one_account", pgErr.ConstraintName)
	requireReason(t, storeErr("x", raw), ReasonSingleAccount)
	require.Equal(t, before, e.counts(t, tenant), "nothing written")

	// Two accounts are a transaction.
	_, err := e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "two",
		Entries: []*ledgerv1.EntryInput{byID(upper, dr), leg("fee-income", cr, 100)}})
	require.NoError(t, err)
}

// TestHardening3_CheckpointsCannotLie: the runtime role can no longer write, change or remove a
// balance checkpoint; only ledger.write_checkpoint (SECURITY DEFINER, pinned search_path), which
// computes the sums itself, writes one, and only for an account of the caller's tenant. The
// checkpoints it writes agree with the entries, and balance reads through them are right.
func TestHardening3_CheckpointsCannotLie(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	e.store.CheckpointEvery = 2
	tenant, other := testkit.Unique("t"), testkit.Unique("o")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	otherIDs := e.ensure(t, other, "payroll-clearing", "fee-income")
	for i := range 5 {
		_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k"+string(rune('a'+i)), "payroll-clearing", "fee-income", 100))
		require.NoError(t, err)
		_, err = e.client.PostTransaction(ctx, twoLeg(other, "k"+string(rune('a'+i)), "payroll-clearing", "fee-income", 7))
		require.NoError(t, err)
		require.Equal(t, int64(100*(i+1)), e.balance(t, tenant, "fee-income").GetPostedSantim())
	}
	v, err := e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Positive(t, v.GetCheckpointsChecked(), "balance reads wrote checkpoints through the function")
	require.Empty(t, v.GetMismatches())
	before, beforeOther := e.counts(t, tenant), e.counts(t, other)

	run := func(tenant, sql string, args ...any) error {
		return db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		})
	}
	// A forged checkpoint: a posted credit total of 10^12 at the newest entry.
	var seq int64
	require.NoError(t, asTenant(e.db.App, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT max(seq) FROM ledger.entries WHERE account_id = $1::uuid`, ids["fee-income"]).QueryRow(func(r pgx.Row) error { return r.Scan(&seq) })
	}))
	forged := run(tenant, forgedCheckpointSQL, tenant, ids["fee-income"], "ETB", seq+1, 1, "2100-01-01Z", 0, 1_000_000_000_000, 0, 0)
	require.True(t, db.IsCode(forged, pgerrcode.InsufficientPrivilege), "forged checkpoint: want permission denied, got %v", forged)
	for _, sql := range []string{
		`UPDATE ledger.balance_checkpoints SET posted_credits = 1`,
		`DELETE FROM ledger.balance_checkpoints`,
		`UPDATE ledger.account_totals SET debits = 0`,
		`INSERT INTO ledger.account_totals (account_id, tenant_id, debits, credits) VALUES (gen_random_uuid(), current_setting('app.tenant_id'), 0, 0)`,
		`DELETE FROM ledger.account_totals`,
	} {
		err := run(tenant, sql)
		require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "%s: want permission denied, got %v", sql, err)
	}

	// The function checkpoints only the caller's tenant: another tenant's account is invisible
	// to it, as to the caller.
	var wrote bool
	require.NoError(t, db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT ledger.write_checkpoint($1::uuid)`, otherIDs["fee-income"]).Scan(&wrote)
	}))
	require.False(t, wrote)
	// Without a tenant it sees nothing at all.
	require.NoError(t, e.db.App.QueryRow(ctx, `SELECT ledger.write_checkpoint($1::uuid)`, ids["fee-income"]).Scan(&wrote))
	require.False(t, wrote)
	require.Equal(t, before, e.counts(t, tenant))
	require.Equal(t, beforeOther, e.counts(t, other))

	// For its own tenant it writes the true sums.
	_, err = e.client.PostTransaction(ctx, twoLeg(tenant, "late", "payroll-clearing", "fee-income", 1))
	require.NoError(t, err)
	require.NoError(t, db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT ledger.write_checkpoint($1::uuid)`, ids["fee-income"]).Scan(&wrote)
	}))
	require.True(t, wrote)
	v, err = e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: tenant})
	require.NoError(t, err)
	require.Greater(t, v.GetCheckpointsChecked(), int64(before.checkpoints))
	require.Empty(t, v.GetMismatches())
	require.Equal(t, int64(501), e.balance(t, tenant, "fee-income").GetPostedSantim())

	// It runs as its owner with a pinned search_path, and the runtime role owns nothing.
	var secdef bool
	var config []string
	var owner string
	require.NoError(t, e.db.App.QueryRow(ctx, `SELECT p.prosecdef, coalesce(p.proconfig, '{}'), pg_get_userbyid(p.proowner)
		FROM pg_proc p WHERE p.oid = 'ledger.write_checkpoint(uuid)'::regprocedure`).Scan(&secdef, &config, &owner))
	require.True(t, secdef)
	require.Contains(t, config, "search_path=pg_catalog, pg_temp")
	require.NotEqual(t, db.AppRole, owner)
}
