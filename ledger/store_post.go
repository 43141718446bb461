package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

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
// ErrSingleAccount (an id and a name of one account), ErrIdempotencyConflict, ErrKeyVoided
// (VoidByKey), ErrInvalidArgument (tenant mismatch).
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
			if db.IsCode(err, pgerrcode.ForeignKeyViolation) {
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
		voided := map[string]bool{}
		if len(seenKeys) > 0 {
			// Keys used before (by a committed transaction: the insert waited for any that was
			// in flight), or voided (VoidByKey: the insert skipped them). Key, id and hash of a
			// transaction never change, nor does a voided key, so reading them after our commit
			// is as good as inside it.
			err := s.inTx(ctx, tenant, func(b *pgx.Batch) {
				b.Queue(`SELECT k.key, t.id::text, t.request_hash
					FROM unnest($1::text[]) AS k(key) LEFT JOIN ledger.transactions t ON t.idempotency_key = k.key
					WHERE t.id IS NOT NULL OR EXISTS (SELECT 1 FROM ledger.voided_keys v WHERE v.idempotency_key = k.key)`,
					seenKeys).Query(func(rows pgx.Rows) error {
					for rows.Next() {
						var k string
						var id *string
						var p prior
						if err := rows.Scan(&k, &id, &p.hash); err != nil {
							return err
						}
						if id == nil {
							voided[k] = true
							continue
						}
						p.id = *id
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
			case !ok && voided[it.p.IdempotencyKey]:
				res[it.idx].Err = errorf(ReasonKeyVoided, "idempotency key %q was voided before any transaction held it", it.p.IdempotencyKey)
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

// Reads of transactions and of their entries by a list of ids ($1::uuid[]); row-level security
// leaves another tenant's ids out. The ids are a restriction (= ANY), which the primary key and
// entries_transaction serve, not a join against unnest($1): joined, the plan the prepared
// statement settled on read every entry of the tenant into a hash (measured in the EWA work
// count: 0.46 ms a saga at 200 sagas, growing with the tenant's history; 0.18–0.25 ms now).
const (
	txByIDsSQL      = `SELECT ` + txCols + ` FROM ledger.transactions t WHERE t.id = ANY($1::uuid[])`
	entriesByIDsSQL = `SELECT ` + entryCols + ` FROM ledger.entries e JOIN ledger.accounts a ON a.id = e.account_id
		WHERE e.transaction_id = ANY($1::uuid[]) ORDER BY e.seq`
)

func loadTx(ctx context.Context, tx querier, ids []string) (map[string]*Transaction, error) {
	out := map[string]*Transaction{}
	rows, err := tx.Query(ctx, txByIDsSQL, ids)
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
	rows, err = tx.Query(ctx, entriesByIDsSQL, ids)
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

// queueLoadTx queues the reads of transactions ids with their entries into byID (loadTx as one
// part of a pipeline).
func queueLoadTx(b *pgx.Batch, ids []string, byID map[string]*Transaction) {
	b.Queue(txByIDsSQL, ids).Query(func(rows pgx.Rows) error {
		txs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Transaction, error) { return scanTx(r) })
		for _, t := range txs {
			byID[t.ID] = t
		}
		return err
	})
	b.Queue(entriesByIDsSQL, ids).Query(func(rows pgx.Rows) error {
		es, err := pgx.CollectRows(rows, scanEntry)
		for _, e := range es {
			if t := byID[e.TransactionID]; t != nil {
				t.Entries = append(t.Entries, e)
			}
		}
		return err
	})
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

// GetTransactions reads the tenant's transactions with the given ids (at most
// MaxGetTransactions), in the order each id is first asked for. An id the tenant does not have
// (unknown, or another tenant's, which row-level security hides) is left out; a repeated id is
// answered once. With entries false, the transactions come without their entries and only the
// transactions are read.
//
// It is one pipeline, one round trip: the tenant setting, the transactions and (when asked)
// their entries, in one implicit transaction, so the entries belong to the transactions read.
//
// Errors: ErrMissingTenant, ErrBatchTooLarge, ErrInvalidArgument.
func (s *Store) GetTransactions(ctx context.Context, tenant string, ids []string, entries bool) ([]*Transaction, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, err
	}
	if len(ids) > MaxGetTransactions {
		return nil, errorf(ReasonBatchTooLarge, "transaction_ids has %d ids, more than the maximum of %d", len(ids), MaxGetTransactions)
	}
	uniq := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		id, err := parseID(fmt.Sprintf("transaction_ids[%d]", i), id)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	if len(uniq) == 0 {
		return nil, nil
	}
	byID := make(map[string]*Transaction, len(uniq))
	err := s.inTx(ctx, tenant, func(b *pgx.Batch) {
		if entries {
			queueLoadTx(b, uniq, byID)
			return
		}
		b.Queue(txByIDsSQL, uniq).Query(func(rows pgx.Rows) error {
			txs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Transaction, error) { return scanTx(r) })
			for _, t := range txs {
				byID[t.ID] = t
			}
			return err
		})
	}, nil)
	if err != nil {
		return nil, storeErr("ledger.get_transactions", err)
	}
	out := make([]*Transaction, 0, len(byID))
	for _, id := range uniq {
		if t := byID[id]; t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}
