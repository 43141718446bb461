package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

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

// VoidByKey voids the PENDING transaction posted under key, as Void does. When no transaction
// holds the key, it voids the key instead (keyVoided, and no transaction): a posting under it,
// now or later, is refused with ErrKeyVoided. That is for a caller whose posting never answered:
// the posting may still be on its way, and once the void has answered it can no longer land.
// Voiding a voided key again answers the same.
//
// Errors: as Void, and ErrMissingIdempotencyKey.
func (s *Store) VoidByKey(ctx context.Context, tenant, key, reason string) (t *Transaction, keyVoided bool, err error) {
	if err := validateTenant(tenant); err != nil {
		return nil, false, err
	}
	if err := validateKey(key); err != nil {
		return nil, false, err
	}
	if err := validateReason("reason", reason, false); err != nil {
		return nil, false, err
	}
	// The key's lock first, in a statement of its own, so that the next statement's snapshot
	// (taken once the lock is held) sees any posting under the key that held it: the posting's
	// insert takes the lock shared before it checks the voided keys (ledger migration 0010).
	var id *string
	err = s.inTx(ctx, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT pg_advisory_xact_lock(ledger.key_lock_class(), ledger.key_lock_key($1, $2))`, tenant, key)
		b.Queue(`
			WITH held AS (SELECT id FROM ledger.transactions WHERE idempotency_key = $2),
			voided AS (
				INSERT INTO ledger.voided_keys (tenant_id, idempotency_key, reason)
				SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM held)
				ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
			)
			SELECT (SELECT id::text FROM held)`, tenant, key, reason).QueryRow(func(r pgx.Row) error {
			return r.Scan(&id)
		})
	}, nil)
	if err != nil {
		return nil, false, storeErr("ledger.void_key", err)
	}
	if id == nil {
		return nil, true, nil
	}
	t, err = s.Void(ctx, tenant, *id, reason)
	return t, false, err
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
	// One pipeline, one round trip, one implicit transaction (committed at its end, rolled back
	// on its first error): the tenant, then one statement that moves the transaction out of
	// PENDING and appends, in account order (lock order), a copy of every hold in each new phase
	// — only when that statement's own update matched, so a transaction already settled gets no
	// second copy — then the transaction and its entries as they now are. The per-account locks
	// the entries take are held from that statement to the commit, with no round trip between.
	var inserted int64
	byID := map[string]*Transaction{}
	err = s.inTx(ctx, tenant, func(b *pgx.Batch) {
		b.Queue(`
			WITH u AS (
				UPDATE ledger.transactions SET status = $2::text,
					posted_at = CASE WHEN $2::text = 'POSTED' THEN now() END,
					voided_at = CASE WHEN $2::text = 'VOIDED' THEN now() END,
					void_reason = CASE WHEN $2::text = 'VOIDED' THEN $3 END
				WHERE id = $1::uuid AND status = 'PENDING'
				RETURNING id
			)
			INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
			SELECT h.tenant_id, h.transaction_id, h.account_id, h.currency, p.phase, h.direction, h.amount
			FROM u JOIN ledger.entries h ON h.transaction_id = u.id CROSS JOIN unnest($4::text[]) AS p(phase)
			WHERE h.phase = 'HOLD'
			ORDER BY h.account_id, h.seq, p.phase`, id, string(to), reason, phases).Exec(func(tag pgconn.CommandTag) error {
			inserted = tag.RowsAffected()
			return nil
		})
		queueLoadTx(b, []string{id}, byID)
	}, nil)
	if err != nil {
		return nil, storeErr(op, err)
	}
	t := byID[id]
	switch {
	case t == nil:
		return nil, errorf(ReasonTransactionNotFound, "transaction %s not found", id)
	case inserted > 0:
		return t, nil
	case t.Status == Voided:
		return nil, errorf(ReasonAlreadyVoided, "transaction %s is already voided", id)
	case t.Status == Pending:
		// Every pending transaction has holds, so its update matched and copied them.
		return nil, fmt.Errorf("%s: pending transaction %s has no holds", op, id)
	default:
		return nil, errorf(ReasonAlreadyPosted, "transaction %s is already %s", id, strings.ToLower(string(t.Status)))
	}
}

// Reverse posts the mirror of a POSTED transaction (every posted entry with its direction
// flipped) and marks the original REVERSED, atomically. The same idempotency key with the same
// original and reason returns the first reversal.
//
// Errors: ErrMissingTenant, ErrMissingIdempotencyKey, ErrInvalidArgument,
// ErrTransactionNotFound, ErrIdempotencyConflict, ErrAlreadyReversed, ErrNotPosted,
// ErrNotReversible, ErrAccountLimitExceeded, ErrKeyVoided.
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
			if errors.Is(err, pgx.ErrNoRows) {
				// The insert found no transaction under the key and skipped the row: the key
				// was voided (VoidByKey).
				return errorf(ReasonKeyVoided, "idempotency key %q was voided before any transaction held it", key)
			}
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
