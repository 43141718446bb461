package ledger

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/db"
	"github.com/wagerail/wagerail/internal/field"
	"github.com/wagerail/wagerail/internal/money"
)

// DefaultCheckpointEvery is how many entries past its newest checkpoint an account may have
// before a balance read writes a new checkpoint.
const DefaultCheckpointEvery = 1000

// Store is the ledger's Postgres store (schema ledger). Every method runs in a transaction
// scoped to one tenant, so row-level security hides every other tenant's rows.
type Store struct {
	pool     *pgxpool.Pool
	accounts *accountCache
	// CheckpointEvery overrides DefaultCheckpointEvery (tests use small values to exercise
	// checkpoints constantly).
	CheckpointEvery int64
}

// NewStore returns a store on a pool of the runtime role.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, accounts: newAccountCache(200_000)}
}

func (s *Store) checkpointEvery() int64 {
	if s.CheckpointEvery > 0 {
		return s.CheckpointEvery
	}
	return DefaultCheckpointEvery
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// AccountRef names an account by id or by name (exactly one).
type AccountRef struct {
	ID   string
	Name string
}

// normalize checks the reference and returns it with the id in canonical form.
func (r AccountRef) normalize() (AccountRef, error) {
	switch {
	case r.ID != "" && r.Name != "":
		return r, errorf(ReasonInvalidArgument, "set account_id or account_name, not both")
	case r.ID != "":
		id, err := parseID("account_id", r.ID)
		return AccountRef{ID: id}, err
	case r.Name != "":
		// Only a name of the chart can name an account (EnsureAccount refuses any other).
		_, err := ParseAccountName(r.Name)
		return r, err
	default:
		return r, errorf(ReasonInvalidArgument, "account_id or account_name is required")
	}
}

func (r AccountRef) String() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Name
}

// querier is what statements run on: a connection inside a transaction begun by inTx.
type querier interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// inTx runs fn in a transaction scoped to tenant: BEGIN, then the tenant setting for row-level
// security (set_config(..., true): SET LOCAL, so it dies with the transaction), then fn, then
// COMMIT. It does what db.InTenantTx does, with fewer round trips: BEGIN, the setting and the
// statements first queues (their results go to the queued callbacks) travel in one pipeline;
// with fn nil, that pipeline is the whole transaction (implicit, without BEGIN and COMMIT); fn
// may also end its last pipeline with COMMIT itself.
func (s *Store) inTx(ctx context.Context, tenant string, first func(b *pgx.Batch), fn func(tx querier) error) error {
	if err := validateTenant(tenant); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left inside a transaction (error, cancelled context) is destroyed on release.
	defer conn.Release()
	b := &pgx.Batch{}
	if fn != nil {
		b.Queue("BEGIN")
	}
	// With fn nil, nothing depends on first's results and no BEGIN/COMMIT is sent: the statements
	// of one pipeline (up to its Sync) run in one implicit transaction that commits at the Sync
	// or rolls back on the first error. The setting is local to that transaction all the same.
	b.Queue("SELECT set_config($1, $2, true)", db.TenantSetting, tenant)
	if first != nil {
		first(b)
	}
	err = conn.SendBatch(ctx, b).Close()
	if err == nil && fn != nil {
		err = fn(conn)
	}
	if err != nil {
		rollback(conn)
		return err
	}
	if fn == nil || conn.Conn().PgConn().TxStatus() == 'I' {
		// Committed in the last batch (fn may end its final pipeline with COMMIT).
		return nil
	}
	_, err = conn.Exec(ctx, "COMMIT")
	return err
}

func rollback(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' || conn.Conn().IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, "ROLLBACK")
}

const accountCols = `a.id::text, a.tenant_id, a.name, a.type, a.normal_side, a.currency, a.created_at`

func scanAccount(row pgx.Row) (Account, error) {
	var a Account
	err := row.Scan(&a.ID, &a.TenantID, &a.Name, &a.Type, &a.NormalSide, &a.Currency, &a.CreatedAt)
	return a, err
}

// EnsureAccount creates the account if (tenant, name) does not exist yet and returns it.
// typ may be empty (the chart's type is used); currency may be empty (ETB).
//
// Errors: ErrMissingTenant, ErrInvalidAccountName, ErrInvalidAccountType, ErrInvalidArgument,
// ErrAccountConflict.
func (s *Store) EnsureAccount(ctx context.Context, tenant, name string, typ AccountType, currency string) (Account, bool, error) {
	chartType, err := ParseAccountName(name)
	if err != nil {
		return Account{}, false, err
	}
	if typ == "" {
		typ = chartType
	}
	if !typ.Valid() {
		return Account{}, false, errorf(ReasonInvalidAccountType, "unknown account type %q", typ)
	}
	if typ != chartType {
		return Account{}, false, errorf(ReasonInvalidAccountType, "%s is a %s account in the chart, not %s", name, chartType, typ)
	}
	if currency == "" {
		currency = DefaultCurrency
	}
	if !currencyRE.MatchString(currency) {
		return Account{}, false, errorf(ReasonInvalidArgument, "currency %q must be three capital letters", currency)
	}
	var acc Account
	created := false
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		acc, err = scanAccount(tx.QueryRow(ctx, `
			INSERT INTO ledger.accounts AS a (tenant_id, name, type, currency) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, name) DO NOTHING
			RETURNING `+accountCols, tenant, name, string(typ), currency))
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		acc, err = scanAccount(tx.QueryRow(ctx, `SELECT `+accountCols+` FROM ledger.accounts a WHERE a.name = $1`, name))
		return err
	})
	if err != nil {
		return Account{}, false, storeErr("ledger.ensure_account", err)
	}
	if acc.Type != typ || acc.Currency != currency {
		return Account{}, false, errorf(ReasonAccountConflict, "account %s exists as %s %s, not %s %s", name, acc.Type, acc.Currency, typ, currency)
	}
	return acc, created, nil
}

// GetAccount finds an account by id or name.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAccountNotFound.
func (s *Store) GetAccount(ctx context.Context, tenant string, ref AccountRef) (Account, error) {
	ref, err := ref.normalize()
	if err != nil {
		return Account{}, err
	}
	if err := validateTenant(tenant); err != nil {
		return Account{}, err
	}
	var acc Account
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		var err error
		acc, err = getAccount(ctx, tx, ref)
		return err
	})
	return acc, storeErr("ledger.get_account", err)
}

func getAccount(ctx context.Context, tx querier, ref AccountRef) (Account, error) {
	var row pgx.Row
	if ref.ID != "" {
		row = tx.QueryRow(ctx, `SELECT `+accountCols+` FROM ledger.accounts a WHERE a.id = $1::uuid`, ref.ID)
	} else {
		row = tx.QueryRow(ctx, `SELECT `+accountCols+` FROM ledger.accounts a WHERE a.name = $1`, ref.Name)
	}
	acc, err := scanAccount(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
	}
	return acc, err
}

func pageSize(n int32) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return int(n)
}

// ListAccounts lists accounts by name, optionally filtered by a name prefix.
//
// Errors: ErrMissingTenant, ErrInvalidArgument (bad prefix or page token).
func (s *Store) ListAccounts(ctx context.Context, tenant, prefix string, size int32, token string) ([]Account, string, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, "", err
	}
	if prefix != "" {
		if err := field.Reference("name_prefix", prefix, maxAccountBytes); err != nil {
			return nil, "", fieldErr(err)
		}
	}
	after := ""
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		// The token is the last name of the previous page: a reference like any account name.
		if len(token) > maxTokenBytes || err != nil || field.Reference("page_token", string(b), maxAccountBytes) != nil {
			return nil, "", errorf(ReasonInvalidArgument, "bad page_token")
		}
		after = string(b)
	}
	n := pageSize(size)
	var out []Account
	err := s.inTx(ctx, tenant, nil, func(tx querier) error {
		rows, err := tx.Query(ctx, `SELECT `+accountCols+` FROM ledger.accounts a
			WHERE a.name > $1 AND starts_with(a.name, $2) ORDER BY a.name LIMIT $3`, after, prefix, n+1)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Account, error) { return scanAccount(r) })
		return err
	})
	if err != nil {
		return nil, "", storeErr("ledger.list_accounts", err)
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = base64.RawURLEncoding.EncodeToString([]byte(out[n-1].Name))
	}
	return out, next, nil
}

// pendingItem is one posting of a batch on its way to the database.
type pendingItem struct {
	idx      int
	p        Posting
	entries  []resolvedEntry
	names    []string
	hash     []byte
	id       string
	currency string
}

// PostBatch writes a batch of postings of one tenant in one database transaction, in one round
// trip whatever its size (accounts come from a cache; keys used before cost one more read).
// Each posting gets its own result; a posting's validation error does not fail the others. The
// returned error is for the batch as a whole: the database unavailable, or a refusal of the
// database, which is the whole statement's (ErrAccountLimitExceeded; the service writes such a
// batch again one posting at a time).
//
// Per-posting errors: those of ValidatePosting, ErrAccountNotFound, ErrMixedCurrency,
// ErrSingleAccount (an id and a name of one account), ErrIdempotencyConflict,
// ErrInvalidArgument (tenant mismatch).
func (s *Store) PostBatch(ctx context.Context, tenant string, ps []Posting) ([]PostResult, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, err
	}
	if len(ps) > MaxBatch {
		return nil, errorf(ReasonBatchTooLarge, "at most %d transactions per batch, got %d", MaxBatch, len(ps))
	}
	res := make([]PostResult, len(ps))
	var items []*pendingItem
	for i, p := range ps {
		if p.TenantID == "" {
			p.TenantID = tenant
		}
		if p.TenantID != tenant {
			res[i].Err = errorf(ReasonInvalidArgument, "transaction %d: tenant_id differs from the batch's", i)
			continue
		}
		if err := ValidatePosting(p); err != nil {
			res[i].Err = err
			continue
		}
		items = append(items, &pendingItem{idx: i, p: p})
	}
	if len(items) == 0 {
		return res, nil
	}

	var written []*pendingItem
	var replays []*pendingItem
	aliases := map[int]int{} // index of a repeated key in the batch -> index of its first use
	var entryRows []Entry
	var names, ids []string
	for _, it := range items {
		for _, e := range it.p.Entries {
			if e.AccountID != "" {
				ids = append(ids, e.AccountID)
			} else {
				names = append(names, e.AccountName)
			}
		}
	}
	byName, byID, err := s.accounts.resolve(ctx, s, tenant, names, ids)
	if err != nil {
		return nil, storeErr("ledger.post: accounts", err)
	}

	// Check each posting against its accounts and hash its content.
	firstByKey := map[string]*pendingItem{}
	var fresh []*pendingItem
	for _, it := range items {
		if err := it.resolve(byName, byID); err != nil {
			res[it.idx].Err = err
			continue
		}
		if first, ok := firstByKey[it.p.IdempotencyKey]; ok {
			if bytes.Equal(first.hash, it.hash) {
				aliases[it.idx] = first.idx
			} else {
				res[it.idx].Err = errorf(ReasonIdempotencyConflict, "idempotency key %q is used earlier in this batch with different content", it.p.IdempotencyKey)
			}
			continue
		}
		firstByKey[it.p.IdempotencyKey] = it
		it.id = uuid.NewString()
		fresh = append(fresh, it)
	}
	if len(fresh) > 0 {
		// Transactions go in by idempotency key, so two batches sharing keys wait for each
		// other's keys in one order and cannot deadlock.
		slices.SortFunc(fresh, func(a, b *pendingItem) int { return strings.Compare(a.p.IdempotencyKey, b.p.IdempotencyKey) })
		n := len(fresh)
		var (
			txIDs, keys, kinds, statuses, currencies, metas = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			wfs, runs, steps, asrc, arsn, aby, rby          = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			hashes                                          = make([][]byte, n)
		)
		type row struct {
			tx, acc, currency string
			phase             Phase
			dir               Direction
			amount            int64
		}
		var ers []row
		for i, it := range fresh {
			txIDs[i], keys[i], kinds[i], statuses[i], currencies[i] = it.id, it.p.IdempotencyKey, string(it.p.Kind), string(it.p.Status), it.currency
			metas[i], hashes[i] = string(metadataJSON(it.p.Metadata)), it.hash
			wfs[i], runs[i], steps[i] = it.p.Lineage.WorkflowID, it.p.Lineage.RunID, it.p.Lineage.Step
			if a := it.p.Adjustment; a != nil {
				asrc[i], arsn[i], aby[i], rby[i] = a.Source, a.Reason, a.ApprovedBy, a.RequestedBy
			}
			phase := PhasePosted
			if it.p.Status == Pending {
				phase = PhaseHold
			}
			for _, e := range it.entries {
				ers = append(ers, row{it.id, e.AccountID, it.currency, phase, e.Direction, e.Amount})
			}
		}
		// Entries go in by account, so the per-account locks the entries trigger takes are
		// acquired in one global order: concurrent postings never deadlock.
		slices.SortStableFunc(ers, func(a, b row) int { return strings.Compare(a.acc, b.acc) })
		m := len(ers)
		etx, eacc, ecur, ephase, edir, eamt := make([]string, m), make([]string, m), make([]string, m), make([]string, m), make([]string, m), make([]int64, m)
		for i, r := range ers {
			etx[i], eacc[i], ecur[i], ephase[i], edir[i], eamt[i] = r.tx, r.acc, r.currency, string(r.phase), string(r.dir), r.amount
		}
		type prior struct {
			id   string
			hash []byte
		}
		priors := map[string]prior{}
		// Ids travel as text[] and are cast in SQL: pgx encodes []string as text[] directly,
		// where as uuid[] it first tries (and fails) binary encodings, a measurable cost per batch.
		insert := func(b *pgx.Batch) {
			b.Queue(`
		WITH t AS (
			INSERT INTO ledger.transactions (id, tenant_id, idempotency_key, request_hash, kind, status, currency,
				metadata, workflow_id, run_id, step, adjustment_source, adjustment_reason, approved_by, requested_by, posted_at)
			SELECT u.id::uuid, $1, u.key, u.hash, u.kind, u.status, u.currency, u.meta::jsonb, u.wf, u.run, u.step,
				nullif(u.asrc, ''), nullif(u.arsn, ''), nullif(u.aby, ''), nullif(u.rby, ''),
				CASE WHEN u.status = 'POSTED' THEN now() END
			FROM unnest($2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[], $7::text[], $8::text[],
				$9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
				WITH ORDINALITY AS u(id, key, hash, kind, status, currency, meta, wf, run, step, asrc, arsn, aby, rby, ord)
			ORDER BY u.ord
			ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
			RETURNING id
		)
		INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
		SELECT $1, u.tx::uuid, u.acc::uuid, u.cur, u.phase, u.dir, u.amt
		FROM unnest($16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::bigint[])
			WITH ORDINALITY AS u(tx, acc, cur, phase, dir, amt, ord)
		WHERE u.tx::uuid IN (SELECT t.id FROM t)
		ORDER BY u.ord
		RETURNING seq, transaction_id::text, account_id::text, direction, amount::bigint, phase, currency, created_at`,
				tenant, txIDs, keys, hashes, kinds, statuses, currencies, metas, wfs, runs, steps, asrc, arsn, aby, rby,
				etx, eacc, ecur, ephase, edir, eamt).Query(func(rows pgx.Rows) error {
				var err error
				entryRows, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
					var e Entry
					err := r.Scan(&e.Seq, &e.TransactionID, &e.AccountID, &e.Direction, &e.AmountSantim, &e.Phase, &e.Currency, &e.CreatedAt)
					if a, ok := byID[e.AccountID]; ok {
						e.AccountName = a.Name
					}
					return e, err
				})
				return err
			})
		}
		// One round trip, one implicit transaction: the tenant, then one statement that inserts
		// the transactions and the entries of those whose key was new.
		if err := s.inTx(ctx, tenant, insert, nil); err != nil {
			if db.IsCode(err, "23503") {
				s.accounts.forget()
			}
			return nil, storeErr("ledger.post", err)
		}
		// Every written transaction has entries, so the entries say which keys were new.
		inserted := make(map[string]bool, len(fresh))
		for _, e := range entryRows {
			inserted[e.TransactionID] = true
		}
		var seenKeys []string
		for _, it := range fresh {
			if !inserted[it.id] {
				seenKeys = append(seenKeys, it.p.IdempotencyKey)
			}
		}
		if len(seenKeys) > 0 {
			// Keys used before (by a committed transaction: the insert waited for any that was
			// in flight). Key, id and hash of a transaction never change, so reading them after
			// our commit is as good as inside it.
			err := s.inTx(ctx, tenant, func(b *pgx.Batch) {
				b.Queue(`SELECT t.idempotency_key, t.id::text, t.request_hash
					FROM unnest($1::text[]) AS k(key) JOIN ledger.transactions t ON t.idempotency_key = k.key`,
					seenKeys).Query(func(rows pgx.Rows) error {
					for rows.Next() {
						var k string
						var p prior
						if err := rows.Scan(&k, &p.id, &p.hash); err != nil {
							return err
						}
						priors[k] = p
					}
					return rows.Err()
				})
			}, nil)
			if err != nil {
				return nil, storeErr("ledger.post: earlier keys", err)
			}
		}
		for _, it := range fresh {
			if inserted[it.id] {
				written = append(written, it)
				continue
			}
			// A key used before: the same content is a replay, anything else a conflict.
			p, ok := priors[it.p.IdempotencyKey]
			switch {
			case !ok:
				return nil, fmt.Errorf("ledger.post: idempotency key %q neither inserted nor found", it.p.IdempotencyKey)
			case bytes.Equal(p.hash, it.hash):
				it.id = p.id
				replays = append(replays, it)
			default:
				res[it.idx].Err = errorf(ReasonIdempotencyConflict, "idempotency key %q was used for a transaction with different content", it.p.IdempotencyKey)
			}
		}
	}

	// Build the results of what was written from what was sent and returned.
	now := time.Now()
	byTx := map[string][]Entry{}
	for _, e := range entryRows {
		byTx[e.TransactionID] = append(byTx[e.TransactionID], e)
	}
	for _, it := range written {
		es := byTx[it.id]
		slices.SortFunc(es, func(a, b Entry) int { return int(a.Seq - b.Seq) })
		t := &Transaction{
			ID: it.id, TenantID: tenant, IdempotencyKey: it.p.IdempotencyKey, Status: it.p.Status,
			Kind: it.p.Kind, Currency: it.currency, Metadata: it.p.Metadata, Lineage: it.p.Lineage,
			Adjustment: it.p.Adjustment, Entries: es, CreatedAt: now,
		}
		if t.Metadata == nil {
			t.Metadata = map[string]string{}
		}
		if len(es) > 0 {
			t.CreatedAt = es[0].CreatedAt
		}
		if t.Status == Posted {
			p := t.CreatedAt
			t.PostedAt = &p
		}
		res[it.idx].Transaction = t
	}
	if len(replays) > 0 {
		ids := make([]string, len(replays))
		for i, it := range replays {
			ids[i] = it.id
		}
		txs, err := s.loadTransactions(ctx, tenant, ids)
		if err != nil {
			return nil, storeErr("ledger.post: load replays", err)
		}
		for _, it := range replays {
			t, ok := txs[it.id]
			if !ok {
				return nil, fmt.Errorf("ledger.post: replayed transaction %s vanished", it.id)
			}
			res[it.idx] = PostResult{Transaction: t, Replayed: true}
		}
	}
	for dup, first := range aliases {
		if res[first].Err != nil {
			res[dup].Err = res[first].Err
			continue
		}
		res[dup] = PostResult{Transaction: res[first].Transaction, Replayed: true}
	}
	return res, nil
}

// resolve looks up the posting's accounts and checks that they share one currency, then
// computes the content hash.
func (it *pendingItem) resolve(byName, byID map[string]Account) error {
	it.entries = make([]resolvedEntry, len(it.p.Entries))
	it.names = make([]string, len(it.p.Entries))
	for i, e := range it.p.Entries {
		var a Account
		var ok bool
		if e.AccountID != "" {
			a, ok = byID[e.AccountID]
			if !ok {
				// ids come back in canonical form; compare that way too
				if u, err := uuid.Parse(e.AccountID); err == nil {
					a, ok = byID[u.String()]
				}
			}
		} else {
			a, ok = byName[e.AccountName]
		}
		if !ok {
			ref := e.AccountName
			if ref == "" {
				ref = e.AccountID
			}
			return errorf(ReasonAccountNotFound, "entry %d: account %s not found", i, ref)
		}
		if i == 0 {
			it.currency = a.Currency
		} else if a.Currency != it.currency {
			return errorf(ReasonMixedCurrency, "entry %d: account %s is in %s, the transaction in %s", i, a.Name, a.Currency, it.currency)
		}
		it.entries[i] = resolvedEntry{AccountID: a.ID, Direction: e.Direction, Amount: e.AmountSantim}
		it.names[i] = a.Name
	}
	// The validator told accounts named the same way apart; an id and a name may still be one.
	if !slices.ContainsFunc(it.entries[1:], func(e resolvedEntry) bool { return e.AccountID != it.entries[0].AccountID }) {
		return errorf(ReasonSingleAccount, "every entry is on account %s; a transaction moves money between accounts", it.names[0])
	}
	it.hash = postingHash(it.p, it.entries)
	return nil
}

// Post writes one posting.
//
// Errors: as PostBatch's per-posting errors, and ErrAccountLimitExceeded.
func (s *Store) Post(ctx context.Context, p Posting) (*Transaction, bool, error) {
	if err := validateTenant(p.TenantID); err != nil {
		return nil, false, err
	}
	res, err := s.PostBatch(ctx, p.TenantID, []Posting{p})
	if err != nil {
		return nil, false, err
	}
	r := res[0]
	if r.Err != nil {
		return nil, false, r.Err
	}
	if r.Replayed && len(r.Transaction.Entries) == 0 {
		return nil, false, fmt.Errorf("ledger.post: replay without entries")
	}
	return r.Transaction, r.Replayed, nil
}

const txCols = `t.id::text, t.tenant_id, t.idempotency_key, t.status, t.kind, t.currency, t.metadata,
	t.workflow_id, t.run_id, t.step, coalesce(t.reverses_id::text, ''),
	coalesce((SELECT r.id::text FROM ledger.transactions r WHERE r.reverses_id = t.id), ''),
	coalesce(t.reversal_reason, ''), coalesce(t.void_reason, ''),
	coalesce(t.adjustment_source, ''), coalesce(t.adjustment_reason, ''), coalesce(t.approved_by, ''),
	coalesce(t.requested_by, ''), t.created_at, t.posted_at, t.voided_at, t.reversed_at`

func scanTx(row pgx.Row) (*Transaction, error) {
	t := &Transaction{}
	var adj Adjustment
	err := row.Scan(&t.ID, &t.TenantID, &t.IdempotencyKey, &t.Status, &t.Kind, &t.Currency, &t.Metadata,
		&t.Lineage.WorkflowID, &t.Lineage.RunID, &t.Lineage.Step, &t.ReversesID, &t.ReversedByID,
		&t.ReversalReason, &t.VoidReason, &adj.Source, &adj.Reason, &adj.ApprovedBy, &adj.RequestedBy,
		&t.CreatedAt, &t.PostedAt, &t.VoidedAt, &t.ReversedAt)
	if err != nil {
		return nil, err
	}
	if t.Kind == AdjustmentKind {
		t.Adjustment = &adj
	}
	if t.Metadata == nil {
		t.Metadata = map[string]string{}
	}
	return t, nil
}

const entryCols = `e.seq, e.transaction_id::text, e.account_id::text, a.name, e.direction, e.amount::bigint, e.phase, e.currency, e.created_at`

func scanEntry(r pgx.CollectableRow) (Entry, error) {
	var e Entry
	err := r.Scan(&e.Seq, &e.TransactionID, &e.AccountID, &e.AccountName, &e.Direction, &e.AmountSantim, &e.Phase, &e.Currency, &e.CreatedAt)
	return e, err
}

// loadTransactions reads transactions with their entries.
func (s *Store) loadTransactions(ctx context.Context, tenant string, ids []string) (map[string]*Transaction, error) {
	out := map[string]*Transaction{}
	err := s.inTx(ctx, tenant, nil, func(tx querier) error {
		var err error
		out, err = loadTx(ctx, tx, ids)
		return err
	})
	return out, err
}

func loadTx(ctx context.Context, tx querier, ids []string) (map[string]*Transaction, error) {
	out := map[string]*Transaction{}
	rows, err := tx.Query(ctx, `SELECT `+txCols+` FROM unnest($1::uuid[]) AS i(id) JOIN ledger.transactions t ON t.id = i.id`, ids)
	if err != nil {
		return nil, err
	}
	txs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Transaction, error) { return scanTx(r) })
	if err != nil {
		return nil, err
	}
	for _, t := range txs {
		out[t.ID] = t
	}
	rows, err = tx.Query(ctx, `SELECT `+entryCols+` FROM unnest($1::uuid[]) AS i(id)
		JOIN ledger.entries e ON e.transaction_id = i.id JOIN ledger.accounts a ON a.id = e.account_id ORDER BY e.seq`, ids)
	if err != nil {
		return nil, err
	}
	es, err := pgx.CollectRows(rows, scanEntry)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if t := out[e.TransactionID]; t != nil {
			t.Entries = append(t.Entries, e)
		}
	}
	return out, nil
}

// GetTransaction finds a transaction by id, or by idempotency key when id is empty.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrTransactionNotFound.
func (s *Store) GetTransaction(ctx context.Context, tenant, id, key string) (*Transaction, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, err
	}
	switch {
	case id != "" && key != "":
		return nil, errorf(ReasonInvalidArgument, "set transaction_id or idempotency_key, not both")
	case id != "":
		var err error
		if id, err = parseID("transaction_id", id); err != nil {
			return nil, err
		}
	case key != "":
		if err := validateKey(key); err != nil {
			return nil, err
		}
	default:
		return nil, errorf(ReasonInvalidArgument, "transaction_id or idempotency_key is required")
	}
	var t *Transaction
	err := s.inTx(ctx, tenant, nil, func(tx querier) error {
		if id == "" {
			if err := tx.QueryRow(ctx, `SELECT id::text FROM ledger.transactions WHERE idempotency_key = $1`, key).Scan(&id); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return errorf(ReasonTransactionNotFound, "no transaction with this idempotency key")
				}
				return err
			}
		}
		m, err := loadTx(ctx, tx, []string{id})
		if err != nil {
			return err
		}
		if t = m[id]; t == nil {
			return errorf(ReasonTransactionNotFound, "transaction %s not found", id)
		}
		return nil
	})
	return t, storeErr("ledger.get_transaction", err)
}

// Commit moves a PENDING transaction to POSTED: it appends the posted entries and releases the
// holds. Concurrent commits and voids of one transaction serialise on its row; exactly one wins.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrTransactionNotFound, ErrAlreadyPosted,
// ErrAlreadyVoided.
func (s *Store) Commit(ctx context.Context, tenant, id string) (*Transaction, error) {
	return s.settle(ctx, tenant, id, Posted, "")
}

// Void moves a PENDING transaction to VOIDED: it releases the holds and posts nothing.
//
// Errors: as Commit.
func (s *Store) Void(ctx context.Context, tenant, id, reason string) (*Transaction, error) {
	return s.settle(ctx, tenant, id, Voided, reason)
}

func (s *Store) settle(ctx context.Context, tenant, id string, to Status, reason string) (*Transaction, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, err
	}
	id, err := parseID("transaction_id", id)
	if err != nil {
		return nil, err
	}
	if err := validateReason("reason", reason, false); err != nil {
		return nil, err
	}
	op := "ledger.commit"
	phases := []string{string(PhasePosted), string(PhaseRelease)}
	if to == Voided {
		op = "ledger.void"
		phases = []string{string(PhaseRelease)}
	}
	var t *Transaction
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		tag, err := tx.Exec(ctx, `UPDATE ledger.transactions SET status = $2::text,
				posted_at = CASE WHEN $2::text = 'POSTED' THEN now() END,
				voided_at = CASE WHEN $2::text = 'VOIDED' THEN now() END,
				void_reason = CASE WHEN $2::text = 'VOIDED' THEN $3 END
			WHERE id = $1::uuid AND status = 'PENDING'`, id, string(to), reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var st Status
			err := tx.QueryRow(ctx, `SELECT status FROM ledger.transactions WHERE id = $1::uuid`, id).Scan(&st)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return errorf(ReasonTransactionNotFound, "transaction %s not found", id)
			case err != nil:
				return err
			case st == Voided:
				return errorf(ReasonAlreadyVoided, "transaction %s is already voided", id)
			default:
				return errorf(ReasonAlreadyPosted, "transaction %s is already %s", id, strings.ToLower(string(st)))
			}
		}
		// Append, in account order (lock order), a copy of every hold in each new phase.
		if _, err := tx.Exec(ctx, `
			INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
			SELECT h.tenant_id, h.transaction_id, h.account_id, h.currency, p.phase, h.direction, h.amount
			FROM ledger.entries h CROSS JOIN unnest($2::text[]) AS p(phase)
			WHERE h.transaction_id = $1::uuid AND h.phase = 'HOLD'
			ORDER BY h.account_id, h.seq, p.phase`, id, phases); err != nil {
			return err
		}
		m, err := loadTx(ctx, tx, []string{id})
		if err != nil {
			return err
		}
		t = m[id]
		return nil
	})
	return t, storeErr(op, err)
}

// Reverse posts the mirror of a POSTED transaction (every posted entry with its direction
// flipped) and marks the original REVERSED, atomically. The same idempotency key with the same
// original and reason returns the first reversal.
//
// Errors: ErrMissingTenant, ErrMissingIdempotencyKey, ErrInvalidArgument,
// ErrTransactionNotFound, ErrIdempotencyConflict, ErrAlreadyReversed, ErrNotPosted,
// ErrNotReversible, ErrAccountLimitExceeded.
func (s *Store) Reverse(ctx context.Context, tenant, id, reason, key string, lin Lineage) (rev, orig *Transaction, replayed bool, err error) {
	if err := validateTenant(tenant); err != nil {
		return nil, nil, false, err
	}
	if err := validateKey(key); err != nil {
		return nil, nil, false, err
	}
	if id, err = parseID("transaction_id", id); err != nil {
		return nil, nil, false, err
	}
	if err := validateReason("reason", reason, true); err != nil {
		return nil, nil, false, err
	}
	if err := validateLineage(lin); err != nil {
		return nil, nil, false, err
	}
	hash := reversalHash(id, reason)
	revID := ""
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		// Lock the original first: concurrent reversals of it queue here, and the key lookup
		// below then sees whichever committed first.
		var st Status
		var kind Kind
		var currency string
		err := tx.QueryRow(ctx, `SELECT status, kind, currency FROM ledger.transactions WHERE id = $1::uuid FOR UPDATE`, id).Scan(&st, &kind, &currency)
		if errors.Is(err, pgx.ErrNoRows) {
			return errorf(ReasonTransactionNotFound, "transaction %s not found", id)
		}
		if err != nil {
			return err
		}
		replay := func() error {
			var prevHash []byte
			err := tx.QueryRow(ctx, `SELECT id::text, request_hash FROM ledger.transactions WHERE idempotency_key = $1`, key).Scan(&revID, &prevHash)
			if err != nil {
				return err
			}
			if !bytes.Equal(prevHash, hash) {
				return errorf(ReasonIdempotencyConflict, "idempotency key %q was used for a transaction with different content", key)
			}
			replayed = true
			return nil
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ledger.transactions WHERE idempotency_key = $1)`, key).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return replay()
		}
		switch {
		case kind == ReversalKind:
			return errorf(ReasonNotReversible, "transaction %s is itself a reversal", id)
		case st == Reversed:
			return errorf(ReasonAlreadyReversed, "transaction %s is already reversed", id)
		case st != Posted:
			return errorf(ReasonNotPosted, "transaction %s is %s; only posted transactions can be reversed", id, strings.ToLower(string(st)))
		}
		revID = uuid.NewString()
		// The reversal and its entries (the original's posted entries, mirrored) in one
		// statement, as the database requires of every transaction.
		tag, err := tx.Exec(ctx, `
			WITH t AS (
				INSERT INTO ledger.transactions (id, tenant_id, idempotency_key, request_hash, kind, status, currency,
					metadata, workflow_id, run_id, step, reverses_id, reversal_reason, posted_at)
				VALUES ($1::uuid, $2, $3, $4, 'REVERSAL', 'POSTED', $5, '{}'::jsonb, $6, $7, $8, $9::uuid, $10, now())
				ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
				RETURNING id
			)
			INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
			SELECT o.tenant_id, t.id, o.account_id, o.currency, 'POSTED',
				CASE o.direction WHEN 'DEBIT' THEN 'CREDIT' ELSE 'DEBIT' END, o.amount
			FROM t CROSS JOIN ledger.entries o
			WHERE o.transaction_id = $9::uuid AND o.phase = 'POSTED'
			ORDER BY o.account_id, o.seq`,
			revID, tenant, key, hash, currency, lin.WorkflowID, lin.RunID, lin.Step, id, reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return replay() // the key was taken by a concurrent call meanwhile
		}
		_, err = tx.Exec(ctx, `UPDATE ledger.transactions SET status = 'REVERSED', reversed_at = now() WHERE id = $1::uuid`, id)
		return err
	})
	if err != nil {
		return nil, nil, false, storeErr("ledger.reverse", err)
	}
	m, err := s.loadTransactions(ctx, tenant, []string{revID, id})
	if err != nil {
		return nil, nil, false, storeErr("ledger.reverse: load", err)
	}
	rev, orig = m[revID], m[id]
	if rev == nil || orig == nil {
		return nil, nil, false, fmt.Errorf("ledger.reverse: transactions %s/%s vanished", revID, id)
	}
	if rev.ReversesID != id {
		return nil, nil, false, errorf(ReasonIdempotencyConflict, "idempotency key %q belongs to another transaction", key)
	}
	return rev, orig, replayed, nil
}

// GetBalance derives an account's balance: the newest checkpoint (at or before asOf) plus the
// account's entries after it. A current read whose tail is longer than CheckpointEvery writes a
// new checkpoint, so reads stay fast on accounts with millions of entries. The read is one
// round trip: the tenant, then the account and its balance in one statement.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAccountNotFound.
func (s *Store) GetBalance(ctx context.Context, tenant string, ref AccountRef, asOf *time.Time) (Balance, error) {
	ref, err := ref.normalize()
	if err != nil {
		return Balance{}, err
	}
	if err := validateTenant(tenant); err != nil {
		return Balance{}, err
	}
	var r balanceRow
	found := false
	err = s.inTx(ctx, tenant, func(b *pgx.Batch) {
		sql, arg := balanceSQL(ref)
		b.Queue(sql, arg, asOf).Query(func(rows pgx.Rows) error {
			defer rows.Close()
			if rows.Next() {
				found = true
				if err := r.scan(rows); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	}, nil)
	if err != nil {
		return Balance{}, storeErr("ledger.get_balance", err)
	}
	if !found {
		return Balance{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
	}
	bal, err := r.balance(asOf)
	if err != nil {
		return Balance{}, storeErr("ledger.get_balance", err)
	}
	if asOf == nil && r.tailN >= s.checkpointEvery() {
		// The database computes the checkpoint itself (ledger.write_checkpoint): the runtime
		// role cannot write one, so a checkpoint never says what the entries do not.
		err = s.inTx(ctx, tenant, func(b *pgx.Batch) { b.Queue(`SELECT ledger.write_checkpoint($1::uuid)`, r.acc.ID) }, nil)
		if err != nil {
			return Balance{}, storeErr("ledger.get_balance: checkpoint", err)
		}
	}
	return bal, nil
}

// balanceRow is what balanceSQL returns: the account, its newest usable checkpoint and the
// sums of the entries after it.
type balanceRow struct {
	acc                                        Account
	cpSeq, cpCount, tailN, tailMax             int64
	cpPD, cpPC, cpHD, cpHC, tPD, tPC, tHD, tHC int64
	cpAt, tailAt                               *time.Time
}

func (r *balanceRow) scan(row pgx.Row) error {
	a := &r.acc
	return row.Scan(&a.ID, &a.TenantID, &a.Name, &a.Type, &a.NormalSide, &a.Currency, &a.CreatedAt,
		&r.cpSeq, &r.cpCount, &r.cpAt, &r.cpPD, &r.cpPC, &r.cpHD, &r.cpHC,
		&r.tailN, &r.tailMax, &r.tailAt, &r.tPD, &r.tPC, &r.tHD, &r.tHC)
}

func (r *balanceRow) balance(asOf *time.Time) (Balance, error) {
	b := Balance{AccountID: r.acc.ID, AccountName: r.acc.Name, Currency: r.acc.Currency, NormalSide: r.acc.NormalSide}
	var ok [4]bool
	b.PostedDebitsSantim, ok[0] = money.Add(r.cpPD, r.tPD)
	b.PostedCreditsSantim, ok[1] = money.Add(r.cpPC, r.tPC)
	b.PendingDebitsSantim, ok[2] = money.Add(r.cpHD, r.tHD)
	b.PendingCreditsSantim, ok[3] = money.Add(r.cpHC, r.tHC)
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return b, fmt.Errorf("balance of %s overflows int64 santim", r.acc.ID)
	}
	b.EntryCount = r.cpCount + r.tailN
	b.LastSeq = max(r.cpSeq, r.tailMax)
	if asOf != nil {
		b.AsOf = *asOf
	} else {
		b.AsOf = time.Now()
	}
	return b, nil
}

// balanceSQL reads an account and its balance in one statement, so the checkpoint and the
// entries after it come from one snapshot; the entries are summed by ledger.entry_sums, the same
// definition ledger.write_checkpoint uses. Parameters: the account id or name, then as_of (or
// NULL). Every comparison on the entries index is a plain column-to-parameter comparison:
// row-level security lets only leakproof quals into an index condition.
func balanceSQL(ref AccountRef) (string, string) {
	pred, arg := `a.name = $1`, ref.Name
	if ref.ID != "" {
		pred, arg = `a.id = $1::uuid`, ref.ID
	}
	return `
		WITH acc AS (
			SELECT a.id, a.tenant_id, a.name, a.type, a.normal_side, a.currency, a.created_at
			FROM ledger.accounts a WHERE ` + pred + `
		), cp AS (
			SELECT c.seq, c.entry_count, c.last_entry_at, c.posted_debits, c.posted_credits,
				c.pending_debits, c.pending_credits
			FROM ledger.balance_checkpoints c
			WHERE c.account_id = (SELECT acc.id FROM acc)
				AND ($2::timestamptz IS NULL OR c.last_entry_at <= $2::timestamptz)
			ORDER BY c.seq DESC LIMIT 1
		), tail AS (
			SELECT s.* FROM acc, (SELECT coalesce(max(cp.seq), 0) AS seq FROM cp) done
				CROSS JOIN LATERAL ledger.entry_sums(acc.id, done.seq, $2::timestamptz) s
		)
		SELECT acc.id::text, acc.tenant_id, acc.name, acc.type, acc.normal_side, acc.currency, acc.created_at,
			coalesce(cp.seq, 0), coalesce(cp.entry_count, 0), cp.last_entry_at,
			coalesce(cp.posted_debits, 0)::bigint, coalesce(cp.posted_credits, 0)::bigint,
			coalesce(cp.pending_debits, 0)::bigint, coalesce(cp.pending_credits, 0)::bigint,
			tail.n, tail.max_seq, tail.last_at, tail.pd::bigint, tail.pc::bigint, tail.hd::bigint, tail.hc::bigint
		FROM acc CROSS JOIN tail LEFT JOIN cp ON true`, arg
}

// balanceIn reads a balance inside an open transaction (reconciliation).
func balanceIn(ctx context.Context, tx querier, ref AccountRef, asOf *time.Time) (Account, Balance, error) {
	var r balanceRow
	sql, arg := balanceSQL(ref)
	if err := r.scan(tx.QueryRow(ctx, sql, arg, asOf)); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return Account{}, Balance{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
		}
		return Account{}, Balance{}, err
	}
	b, err := r.balance(asOf)
	return r.acc, b, err
}

// ListEntries lists an account's entries in sequence order within [from, to).
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAccountNotFound.
func (s *Store) ListEntries(ctx context.Context, tenant string, ref AccountRef, from, to *time.Time, size int32, token string) ([]Entry, string, error) {
	ref, err := ref.normalize()
	if err != nil {
		return nil, "", err
	}
	if err := validateTenant(tenant); err != nil {
		return nil, "", err
	}
	var after int64
	if token != "" {
		v, err := strconv.ParseInt(token, 36, 64)
		if len(token) > maxTokenBytes || err != nil || v < 0 {
			return nil, "", errorf(ReasonInvalidArgument, "bad page_token")
		}
		after = v
	}
	n := pageSize(size)
	var out []Entry
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		acc, err := getAccount(ctx, tx, ref)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+entryCols+` FROM ledger.entries e JOIN ledger.accounts a ON a.id = e.account_id
			WHERE e.account_id = $1::uuid AND e.seq > $2
				AND ($3::timestamptz IS NULL OR e.created_at >= $3::timestamptz)
				AND ($4::timestamptz IS NULL OR e.created_at < $4::timestamptz)
			ORDER BY e.seq LIMIT $5`, acc.ID, after, from, to, n+1)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanEntry)
		return err
	})
	if err != nil {
		return nil, "", storeErr("ledger.list_entries", err)
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = strconv.FormatInt(out[n-1].Seq, 36)
	}
	return out, next, nil
}

// CheckpointMismatch is a checkpoint that disagrees with the entries it summarises.
type CheckpointMismatch struct {
	AccountID   string `json:"accountId"`
	AccountName string `json:"accountName"`
	Seq         int64  `json:"seq"`
	Detail      string `json:"detail"`
}

// VerifyCheckpoints recomputes every checkpoint of a tenant from the entries, in one pass of
// running sums per account, and returns the ones that disagree.
//
// Errors: ErrMissingTenant.
func (s *Store) VerifyCheckpoints(ctx context.Context, tenant string) (int64, []CheckpointMismatch, error) {
	var checked int64
	var bad []CheckpointMismatch
	err := s.inTx(ctx, tenant, nil, func(tx querier) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM ledger.balance_checkpoints`).Scan(&checked); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			WITH running AS (
				SELECT e.account_id, e.seq,
					count(*) OVER w AS n,
					sum(CASE WHEN e.phase = 'POSTED' AND e.direction = 'DEBIT' THEN e.amount ELSE 0 END) OVER w AS pd,
					sum(CASE WHEN e.phase = 'POSTED' AND e.direction = 'CREDIT' THEN e.amount ELSE 0 END) OVER w AS pc,
					sum(CASE WHEN e.phase = 'POSTED' OR e.direction <> 'DEBIT' THEN 0
						WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END) OVER w AS hd,
					sum(CASE WHEN e.phase = 'POSTED' OR e.direction <> 'CREDIT' THEN 0
						WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END) OVER w AS hc,
					e.created_at
				FROM ledger.entries e
				WHERE e.account_id IN (SELECT DISTINCT account_id FROM ledger.balance_checkpoints)
				WINDOW w AS (PARTITION BY e.account_id ORDER BY e.seq)
			)
			SELECT c.account_id::text, a.name, c.seq,
				CASE WHEN r.seq IS NULL THEN 'no entry with this sequence number on the account'
				ELSE format('checkpoint count=%s posted=%s/%s pending=%s/%s at=%s; entries count=%s posted=%s/%s pending=%s/%s at=%s',
					c.entry_count, c.posted_debits, c.posted_credits, c.pending_debits, c.pending_credits, c.last_entry_at,
					r.n, r.pd, r.pc, r.hd, r.hc, r.created_at) END
			FROM ledger.balance_checkpoints c
			JOIN ledger.accounts a ON a.id = c.account_id
			LEFT JOIN running r ON r.account_id = c.account_id AND r.seq = c.seq
			WHERE r.seq IS NULL OR (c.entry_count, c.posted_debits, c.posted_credits, c.pending_debits,
				c.pending_credits, c.last_entry_at) IS DISTINCT FROM (r.n, r.pd, r.pc, r.hd, r.hc, r.created_at)
			ORDER BY a.name, c.seq`)
		if err != nil {
			return err
		}
		bad, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (CheckpointMismatch, error) {
			var m CheckpointMismatch
			err := r.Scan(&m.AccountID, &m.AccountName, &m.Seq, &m.Detail)
			return m, err
		})
		return err
	})
	return checked, bad, storeErr("ledger.verify_checkpoints", err)
}

// storeErr wraps a store failure with its operation, keeping ledger errors as they are (they
// already carry the reason the caller branches on) and translating constraint violations the
// database raised into the reasons the Go checks would have given.
func storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.ConstraintName == "entries_balanced":
			return errorf(ReasonUnbalanced, "%s", pgErr.Message)
		case pgErr.ConstraintName == "santim_max_check" || pgErr.ConstraintName == "entries_transaction_max":
			return errorf(ReasonAmountOutOfRange, "an amount is more than the ledger's maximum per entry (%d santim) or per transaction (%d santim)",
				money.MaxAmountSantim, money.MaxTransactionSantim)
		case pgErr.ConstraintName == "entries_one_account":
			return errorf(ReasonSingleAccount, "%s", pgErr.Message)
		case pgErr.ConstraintName == "account_total_max":
			return errorf(ReasonAccountLimitExceeded, "the posting would take an account's debit or credit total past %d santim", money.MaxAccountTotalSantim)
		case pgErr.Code == "23503" && pgErr.ConstraintName == "entries_account_fkey":
			return errorf(ReasonAccountNotFound, "an entry's account does not exist for this tenant and currency")
		case pgErr.Code == "22003": // numeric value out of range
			return errorf(ReasonAmountOverflow, "an amount is out of range")
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// accountCache remembers accounts by tenant and by name or id. Accounts are never updated or
// deleted (the database refuses both), so a remembered account cannot go stale; this saves the
// look-up round trip of every posting. It is bounded by forgetting everything when full.
type accountCache struct {
	mu     sync.RWMutex
	byName map[[2]string]Account
	byID   map[[2]string]Account
	max    int
}

func newAccountCache(max int) *accountCache {
	return &accountCache{byName: map[[2]string]Account{}, byID: map[[2]string]Account{}, max: max}
}

func (c *accountCache) put(accs ...Account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byID)+len(accs) > c.max {
		c.byName, c.byID = map[[2]string]Account{}, map[[2]string]Account{}
	}
	for _, a := range accs {
		c.byName[[2]string{a.TenantID, a.Name}] = a
		c.byID[[2]string{a.TenantID, a.ID}] = a
	}
}

// forget drops everything (after the database refused an account the cache vouched for, as
// after a restore from an older backup).
func (c *accountCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byName, c.byID = map[[2]string]Account{}, map[[2]string]Account{}
}

// resolve returns the tenant's accounts among names and ids (ids in canonical form), reading
// the ones it does not know in one round trip.
func (c *accountCache) resolve(ctx context.Context, s *Store, tenant string, names, ids []string) (map[string]Account, map[string]Account, error) {
	byName := make(map[string]Account, len(names))
	byID := make(map[string]Account, len(ids))
	var missNames, missIDs []string
	c.mu.RLock()
	for _, n := range names {
		if a, ok := c.byName[[2]string{tenant, n}]; ok {
			byName[n], byID[a.ID] = a, a
		} else {
			missNames = append(missNames, n)
		}
	}
	for _, id := range ids {
		if u, err := uuid.Parse(id); err == nil {
			id = u.String()
		}
		if a, ok := c.byID[[2]string{tenant, id}]; ok {
			byName[a.Name], byID[id] = a, a
		} else {
			missIDs = append(missIDs, id)
		}
	}
	c.mu.RUnlock()
	if len(missNames)+len(missIDs) == 0 {
		return byName, byID, nil
	}
	var found []Account
	err := s.inTx(ctx, tenant, func(b *pgx.Batch) {
		// Joins against the lists (rather than = ANY) keep index look-ups in the generic plan a
		// prepared statement ends up with.
		b.Queue(`SELECT `+accountCols+` FROM unnest($1::text[]) AS n(name) JOIN ledger.accounts a ON a.name = n.name
			UNION
			SELECT `+accountCols+` FROM unnest($2::uuid[]) AS i(id) JOIN ledger.accounts a ON a.id = i.id`,
			missNames, missIDs).Query(func(rows pgx.Rows) error {
			var err error
			found, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Account, error) { return scanAccount(r) })
			return err
		})
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range found {
		byName[a.Name], byID[a.ID] = a, a
	}
	c.put(found...)
	return byName, byID, nil
}
