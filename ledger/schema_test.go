package ledger

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/schema"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestRowLevelSecurity: tenant B never sees tenant A's rows, through gRPC and through raw SQL
// as the runtime role; without a tenant nothing is visible at all.
func TestRowLevelSecurity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	a, b := testkit.Unique("a"), testkit.Unique("b")
	aIDs := e.ensure(t, a, "payroll-clearing", "fee-income")
	e.ensure(t, b, "payroll-clearing", "fee-income")
	pa, err := e.client.PostTransaction(ctx, twoLeg(a, "k1", "payroll-clearing", "fee-income", 500))
	require.NoError(t, err)
	_, err = e.client.PostTransaction(ctx, twoLeg(b, "k1", "payroll-clearing", "fee-income", 7))
	require.NoError(t, err, "idempotency keys are per tenant")
	e.balance(t, a, "fee-income")
	e.store.CheckpointEvery = 1
	e.balance(t, a, "fee-income") // a checkpoint row for A
	for _, tenant := range []string{a, b} {
		_, err = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, IdempotencyKey: "never-posted"})
		require.NoError(t, err, "a voided key row for each")
	}

	// gRPC: B asks for A's things by id and gets NOT_FOUND, never A's data.
	_, err = e.client.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: b, TransactionId: pa.GetTransaction().GetId()})
	requireReason(t, err, ReasonTransactionNotFound)
	_, err = e.client.GetAccount(ctx, &ledgerv1.GetAccountRequest{TenantId: b, AccountId: aIDs["fee-income"]})
	requireReason(t, err, ReasonAccountNotFound)
	_, err = e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: b, AccountId: aIDs["fee-income"]})
	requireReason(t, err, ReasonAccountNotFound)
	_, err = e.client.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: b, AccountId: aIDs["fee-income"]})
	requireReason(t, err, ReasonAccountNotFound)
	_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: b, TransactionId: pa.GetTransaction().GetId()})
	requireReason(t, err, ReasonTransactionNotFound)
	_, err = e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: b, TransactionId: pa.GetTransaction().GetId(), Reason: "x", IdempotencyKey: "r"})
	requireReason(t, err, ReasonTransactionNotFound)
	l, err := e.client.ListAccounts(ctx, &ledgerv1.ListAccountsRequest{TenantId: b})
	require.NoError(t, err)
	for _, acc := range l.GetAccounts() {
		require.Equal(t, b, acc.GetTenantId())
	}
	require.Equal(t, int64(7), e.balance(t, b, "fee-income").GetPostedSantim())
	require.Equal(t, int64(500), e.balance(t, a, "fee-income").GetPostedSantim())

	// Raw SQL as the runtime role.
	tables := []string{"accounts", "transactions", "entries", "balance_checkpoints", "account_totals", "reconcile_drift", "voided_keys"}
	for _, tenant := range []string{a, b} {
		require.NoError(t, db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
			for _, tbl := range tables {
				var n, foreign int
				require.NoError(t, tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE tenant_id <> $1) FROM ledger.`+tbl, tenant).Scan(&n, &foreign))
				require.Zero(t, foreign, "%s sees another tenant's rows in %s", tenant, tbl)
				if tbl != "reconcile_drift" && (tbl != "balance_checkpoints" || tenant == a) {
					require.Positive(t, n, "%s sees its own rows in %s", tenant, tbl)
				}
			}
			return nil
		}))
	}
	conn, err := e.db.App.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	for _, tbl := range tables {
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM ledger.`+tbl).Scan(&n))
		require.Zero(t, n, "without a tenant, %s shows nothing", tbl)
	}
	// Writing a row for another tenant is refused by the policy's WITH CHECK.
	err = db.InTenantTx(ctx, e.db.App, b, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO ledger.accounts (tenant_id, name, type) VALUES ($1, 'misc-loss', 'EXPENSE')`, a)
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "got %v", err)
	// The runtime role cannot switch RLS off or claim to bypass it.
	var bypass, super bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT rolbypassrls, rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&bypass, &super))
	require.False(t, bypass)
	require.False(t, super)
	_, err = conn.Exec(ctx, `ALTER TABLE ledger.entries DISABLE ROW LEVEL SECURITY`)
	require.Error(t, err)
	var forced int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'ledger' AND c.relkind = 'r' AND c.relrowsecurity AND c.relforcerowsecurity`).Scan(&forced))
	require.Equal(t, len(tables)+1, forced, "every ledger table has RLS enabled and forced (and reconcile_drift_totals, which holds no tenant)")
}

// TestDatabaseRefuses checks the invariants the database keeps by itself, bypassing the Go
// code: raw SQL as the runtime role and as the owner.
func TestDatabaseRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant, other := testkit.Unique("t"), testkit.Unique("o")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")
	otherIDs := e.ensure(t, other, "fee-income")
	usd, err := e.client.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: "partner-bank:x:1", Currency: "USD"})
	require.NoError(t, err)
	posted, err := e.client.PostTransaction(ctx, twoLeg(tenant, "k1", "payroll-clearing", "fee-income", 500))
	require.NoError(t, err)
	txID := posted.GetTransaction().GetId()

	owner, err := db.Open(ctx, e.db.OwnerDSN, 2)
	require.NoError(t, err)
	defer owner.Close()

	run := func(pool db.Beginner, sql string, args ...any) error {
		return db.InTenantTx(ctx, pool, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		})
	}
	// constraint is the name of the check constraint err violated.
	constraint := func(err error) string {
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, pgerrcode.CheckViolation, pgErr.Code, "got %v", err)
		return pgErr.ConstraintName
	}
	before := e.counts(t, tenant)

	// Entries are append-only: no privilege for the runtime role, a trigger for the owner.
	require.True(t, db.IsCode(run(e.db.App, `UPDATE ledger.entries SET amount = 1`), "42501"))
	require.True(t, db.IsCode(run(e.db.App, `DELETE FROM ledger.entries`), "42501"))
	require.True(t, db.IsCode(run(e.db.App, `TRUNCATE ledger.entries`), "42501"))
	require.ErrorContains(t, run(owner, `UPDATE ledger.entries SET amount = 1`), "append-only")
	require.ErrorContains(t, run(owner, `DELETE FROM ledger.entries`), "append-only")
	require.ErrorContains(t, run(owner, `TRUNCATE ledger.entries CASCADE`), "append-only")
	require.True(t, db.IsCode(run(e.db.App, `DELETE FROM ledger.transactions`), "42501"))
	require.ErrorContains(t, run(owner, `DELETE FROM ledger.transactions WHERE id = $1`, txID), "not allowed")
	require.True(t, db.IsCode(run(e.db.App, `UPDATE ledger.accounts SET name = 'misc-loss'`), "42501"))
	require.ErrorContains(t, run(owner, `UPDATE ledger.accounts SET currency = 'USD'`), "append-only")
	// A voided key stays voided.
	require.NoError(t, run(e.db.App, `INSERT INTO ledger.voided_keys (tenant_id, idempotency_key) VALUES ($1, 'gone')`, tenant))
	require.True(t, db.IsCode(run(e.db.App, `DELETE FROM ledger.voided_keys`), "42501"))
	require.True(t, db.IsCode(run(e.db.App, `UPDATE ledger.voided_keys SET reason = 'x'`), "42501"))
	require.ErrorContains(t, run(owner, `DELETE FROM ledger.voided_keys`), "append-only")
	require.ErrorContains(t, run(owner, `TRUNCATE ledger.voided_keys`), "append-only")

	// Only forward status moves, and only the status.
	require.ErrorContains(t, run(e.db.App, `UPDATE ledger.transactions SET status = 'PENDING' WHERE id = $1`, txID), "not allowed")
	require.ErrorContains(t, run(e.db.App, `UPDATE ledger.transactions SET status = 'VOIDED' WHERE id = $1`, txID), "not allowed")
	require.ErrorContains(t, run(e.db.App, `UPDATE ledger.transactions SET metadata = '{"x":"y"}' WHERE id = $1`, txID), "only the status")
	require.ErrorContains(t, run(e.db.App, `UPDATE ledger.transactions SET status = 'REVERSED' WHERE id = $1`, txID), "without a reversal")

	// A transaction whose debits and credits differ is refused. A transaction goes in together
	// with its entries, in one statement (withPair: the transaction and a debit and a credit).
	insertTx := `INSERT INTO ledger.transactions (id, tenant_id, idempotency_key, request_hash, kind, status, currency)
		VALUES ($1, $2, $3, decode(repeat('00', 32), 'hex'), 'STANDARD', 'POSTED', $4)`
	insertEntry := `INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
		VALUES ($1, $2, $3, $4, 'POSTED', $5, $6)`
	withPair := `WITH t AS (
			INSERT INTO ledger.transactions (id, tenant_id, idempotency_key, request_hash, kind, status, currency)
			VALUES ($1, $2, $3, decode(repeat('00', 32), 'hex'), 'STANDARD', $4, 'ETB') RETURNING id)
		INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
		SELECT $2, t.id, v.acc, v.cur, 'POSTED', v.dir, v.amt
		FROM t, (VALUES ($5::uuid, $6, 'DEBIT', $7::numeric), ($8::uuid, $9, 'CREDIT', $10::numeric)) AS v(acc, cur, dir, amt)`
	newID := "0d8d6f0e-8f8a-4c1e-9c43-3c1b8f1b2a01"
	unbalanced := run(e.db.App, withPair, newID, tenant, "raw-1", "POSTED", ids["payroll-clearing"], "ETB", 100, ids["fee-income"], "ETB", 99)
	require.ErrorContains(t, unbalanced, "unbalanced")
	require.Equal(t, ReasonUnbalanced, storeErr("x", unbalanced).(*Error).Reason)

	// A transaction with no entries at all is refused too, and so is one whose entries would
	// only follow in a later statement.
	require.ErrorContains(t, run(e.db.App, insertTx, newID, tenant, "raw-2", "ETB"), "do not match its status")
	later := db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertTx, newID, tenant, "raw-2b", "ETB"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, insertEntry, tenant, newID, ids["payroll-clearing"], "ETB", "DEBIT", 100)
		return err
	})
	require.ErrorContains(t, later, "none were inserted with it")
	// Entries added later to an old, balanced transaction must balance as well.
	require.ErrorContains(t, run(e.db.App, insertEntry, tenant, txID, ids["fee-income"], "ETB", "CREDIT", 1), "unbalanced")
	// Zero and negative amounts are outside the amount's domain.
	require.Equal(t, "santim_check", constraint(run(e.db.App, insertEntry, tenant, txID, ids["fee-income"], "ETB", "CREDIT", 0)))
	require.Equal(t, "santim_check", constraint(run(e.db.App, insertEntry, tenant, txID, ids["fee-income"], "ETB", "CREDIT", -5)))
	// An account of another tenant, or of another currency, breaks the composite foreign key.
	crossTenant := run(e.db.App, withPair, newID, tenant, "raw-3", "POSTED", ids["payroll-clearing"], "ETB", 100, otherIDs["fee-income"], "ETB", 100)
	require.True(t, db.IsCode(crossTenant, pgerrcode.ForeignKeyViolation), "got %v", crossTenant)
	mixed := run(e.db.App, withPair, newID, tenant, "raw-4", "POSTED", ids["payroll-clearing"], "ETB", 100, usd.GetAccount().GetId(), "ETB", 100)
	require.True(t, db.IsCode(mixed, pgerrcode.ForeignKeyViolation), "got %v", mixed)
	// Entries must belong to a transaction of their own tenant and currency: a USD pair (its
	// accounts are USD) on an ETB transaction, and a pair on a transaction that does not exist.
	usdID := usd.GetAccount().GetId()
	otherCurrency := run(e.db.App, withPair, newID, tenant, "raw-6", "POSTED", usdID, "USD", 100, usdID, "USD", 100)
	require.True(t, db.IsCode(otherCurrency, pgerrcode.ForeignKeyViolation), "got %v", otherCurrency)
	require.ErrorContains(t, otherCurrency, "currency")
	insertPair := `INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
		VALUES ($1, $2, $3, $4, 'POSTED', 'DEBIT', 100), ($1, $2, $5, $4, 'POSTED', 'CREDIT', 100)`
	noTx := run(e.db.App, insertPair, tenant, "0d8d6f0e-8f8a-4c1e-9c43-3c1b8f1b2a02", ids["payroll-clearing"], "ETB", ids["fee-income"])
	require.True(t, db.IsCode(noTx, pgerrcode.ForeignKeyViolation), "got %v", noTx)
	require.ErrorContains(t, noTx, "does not exist")
	// The other tenant cannot attach entries to this tenant's transaction (it cannot see it).
	foreignTx := db.InTenantTx(ctx, e.db.App, other, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, insertPair, other, txID, otherIDs["fee-income"], "ETB", otherIDs["fee-income"])
		return err
	})
	require.True(t, db.IsCode(foreignTx, pgerrcode.ForeignKeyViolation), "got %v", foreignTx)
	// Entries that balance but contradict the status (posted entries on a pending transaction).
	pendingWithPosted := run(e.db.App, withPair, newID, tenant, "raw-5", "PENDING", ids["payroll-clearing"], "ETB", 100, ids["fee-income"], "ETB", 100)
	require.ErrorContains(t, pendingWithPosted, "do not match its status")
	// A status change without the entries that go with it is refused at commit (deferred).
	pendingReq := twoLeg(tenant, "k-pending", "payroll-clearing", "fee-income", 300)
	pendingReq.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	pending, err := e.client.PostTransaction(ctx, pendingReq)
	require.NoError(t, err)
	before.transactions++
	before.entries += 2
	bareCommit := run(e.db.App, `UPDATE ledger.transactions SET status = 'POSTED', posted_at = now() WHERE id = $1`, pending.GetTransaction().GetId())
	require.ErrorContains(t, bareCommit, "do not match its status")
	// A second reversal of the same transaction breaks a unique constraint.
	rev, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: txID, Reason: "r", IdempotencyKey: "rev"})
	require.NoError(t, err)
	before.transactions++
	before.entries += 2
	second := run(e.db.App, `INSERT INTO ledger.transactions (tenant_id, idempotency_key, request_hash, kind, status, currency, reverses_id)
		VALUES ($1, 'rev-again', decode(repeat('00', 32), 'hex'), 'REVERSAL', 'POSTED', 'ETB', $2)`, tenant, txID)
	require.True(t, db.IsCode(second, pgerrcode.UniqueViolation), "got %v", second)
	// A reversal is posted, references what it reverses, and is never reversed itself.
	unanchored := run(e.db.App, `WITH t AS (
			INSERT INTO ledger.transactions (tenant_id, idempotency_key, request_hash, kind, status, currency)
			VALUES ($1, 'rev-none', decode(repeat('00', 32), 'hex'), 'REVERSAL', 'POSTED', 'ETB') RETURNING id)
		INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
		SELECT $1, t.id, v.acc, 'ETB', 'POSTED', v.dir, 100 FROM t, (VALUES ($2::uuid, 'DEBIT'), ($3::uuid, 'CREDIT')) AS v(acc, dir)`,
		tenant, ids["payroll-clearing"], ids["fee-income"])
	require.Equal(t, "transactions_reversal_shape", constraint(unanchored))
	reverseReversal := run(e.db.App, `UPDATE ledger.transactions SET status = 'REVERSED', reversed_at = now() WHERE id = $1`,
		rev.GetReversal().GetId())
	require.Equal(t, "transactions_reversal_shape", constraint(reverseReversal))
	// An adjustment approved by its requester is refused.
	selfApproved := run(e.db.App, `INSERT INTO ledger.transactions (tenant_id, idempotency_key, request_hash, kind, status, currency,
			adjustment_source, adjustment_reason, approved_by, requested_by)
		VALUES ($1, 'adj', decode(repeat('00', 32), 'hex'), 'ADJUSTMENT', 'POSTED', 'ETB', 's', 'r', 'u1', 'u1')`, tenant)
	require.Equal(t, "transactions_adjustment_shape", constraint(selfApproved))
	// Values outside their domain, each refused by its domain's check (not by the later check
	// that a transaction comes with entries): an empty idempotency key, a currency that is no
	// code, metadata that is not an object, an unknown status, a hash that is not 32 bytes.
	for domainCheck, bad := range map[string]string{
		"key_text_check":           `%s) VALUES ($1, '', decode(repeat('00', 32), 'hex'), 'STANDARD', 'POSTED', 'ETB')`,
		"currency_code_check":      `%s) VALUES ($1, 'c', decode(repeat('00', 32), 'hex'), 'STANDARD', 'POSTED', 'etb')`,
		"json_object_check":        `%s, metadata) VALUES ($1, 'm', decode(repeat('00', 32), 'hex'), 'STANDARD', 'POSTED', 'ETB', '[]')`,
		"transaction_status_check": `%s) VALUES ($1, 's', decode(repeat('00', 32), 'hex'), 'STANDARD', 'DONE', 'ETB')`,
		"sha256_check":             `%s) VALUES ($1, 'h', decode('00', 'hex'), 'STANDARD', 'POSTED', 'ETB')`,
	} {
		sql := fmt.Sprintf(bad, `INSERT INTO ledger.transactions (tenant_id, idempotency_key, request_hash, kind, status, currency`)
		require.Equal(t, domainCheck, constraint(run(e.db.App, sql, tenant)), sql)
	}

	require.Equal(t, before, e.counts(t, tenant), "every refused statement left nothing behind")
}

// TestMigrationsUpDownUp rolls the ledger's migrations all the way back and up again.
func TestMigrationsUpDownUp(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := ctxT(t)
	tables := func() int {
		conn, err := pgx.Connect(ctx, d.OwnerDSN)
		require.NoError(t, err)
		defer conn.Close(context.Background())
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'ledger'`).Scan(&n))
		return n
	}
	require.Equal(t, 8, tables())
	versions, err := schema.Versions(d.OwnerDSN)
	require.NoError(t, err)
	var ledgerVersion uint
	for _, v := range versions {
		if v.Component == "ledger" {
			ledgerVersion = v.Version
		}
	}
	require.GreaterOrEqual(t, ledgerVersion, uint(2))
	require.NoError(t, schema.Down(d.OwnerDSN, int(ledgerVersion), "ledger"))
	require.Equal(t, 0, tables())
	require.NoError(t, schema.Up(d.OwnerDSN))
	require.Equal(t, 8, tables())

	// The schema works after the round trip.
	pool, err := db.Open(ctx, d.AppDSN, 4)
	require.NoError(t, err)
	defer pool.Close()
	s := NewStore(pool)
	for _, n := range []string{"payroll-clearing", "fee-income"} {
		_, _, err := s.EnsureAccount(ctx, "t1", n, "", "")
		require.NoError(t, err)
	}
	_, _, err = s.Post(ctx, Posting{TenantID: "t1", IdempotencyKey: "k", Status: Posted, Kind: Standard, Entries: []EntryInput{
		{AccountName: "payroll-clearing", Direction: Debit, AmountSantim: 5}, {AccountName: "fee-income", Direction: Credit, AmountSantim: 5}}})
	require.NoError(t, err)
}
