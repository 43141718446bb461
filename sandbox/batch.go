package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// batchHash is the fingerprint of a batch request: the same batch reference with another
// fingerprint is a conflict, not a replay.
func batchHash(r BatchRequest) []byte {
	raw, _ := json.Marshal(r) // struct fields marshal in a fixed order; cannot fail
	sum := sha256.Sum256(raw)
	return sum[:]
}

// createBatch accepts a bulk credit transfer: one hold per item at the source, in one
// transaction, with every row written by COPY so 10,000 items are accepted in well under a
// second. Items to unknown, closed or foreign-currency accounts (or accounts with an injected
// reject) are recorded FAILED with their code, and get their callback, while the others proceed.
// Errors: 409 REFERENCE_CONFLICT (batch reference reused with another body, or an item reference
// already used), 422 ACCOUNT_NOT_FOUND / ACCOUNT_CLOSED / CURRENCY_MISMATCH for the source, 422
// INSUFFICIENT_FUNDS when the source cannot cover every item that would be held; on any of them
// nothing is written.
//
// A non-empty rejectCode (an injected rejection of the whole batch) refuses a new batch with 422
// and that code, writing nothing; a replay of a stored batch is answered as usual.
func (s *store) createBatch(ctx context.Context, r BatchRequest, rejectCode string, faults faultSet, delay time.Duration) (Batch, bool, error) {
	hash := batchHash(r)
	for range 5 {
		id, created, err := s.tryCreateBatch(ctx, r, hash, rejectCode, faults, delay)
		if errors.Is(err, errRetry) {
			continue
		}
		if err != nil {
			return Batch{}, false, err
		}
		b, err := s.getBatch(ctx, id)
		return b, created, err
	}
	return Batch{}, false, errors.New("sandbox.createBatch: batch reference kept changing under us")
}

func (s *store) tryCreateBatch(ctx context.Context, r BatchRequest, hash []byte, rejectCode string, faults faultSet, delay time.Duration) (string, bool, error) {
	var batchID string
	created := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A replay needs no lock: a stored batch never changes.
		id, err := storedBatch(ctx, tx, r.BatchReference, hash)
		if err != nil || id != "" {
			batchID = id
			return err
		}
		src, err := scanAccount(tx.QueryRow(ctx, `SELECT `+accountCols+` FROM sandbox.accounts WHERE account_number = $1 FOR NO KEY UPDATE`, r.FromAccount))
		if errors.Is(err, pgx.ErrNoRows) {
			if rejectCode != "" {
				return injectedRejection("batch", rejectCode, r.BatchReference)
			}
			return errf(422, CodeAccountNotFound, "source account %s does not exist", r.FromAccount)
		}
		if err != nil {
			return err
		}
		// Look again under the source lock, the lock the item checks below run under: an
		// identical batch that committed while this one waited for the lock has its items
		// booked, and without this look they would read as references used by another transfer
		// (409) instead of as this batch's replay. Read committed gives this statement a fresh
		// snapshot taken after the lock was granted.
		if id, err = storedBatch(ctx, tx, r.BatchReference, hash); err != nil || id != "" {
			batchID = id
			return err
		}
		if rejectCode != "" {
			return injectedRejection("batch", rejectCode, r.BatchReference)
		}
		switch {
		case src.status != AccountActive:
			return errf(422, CodeAccountClosed, "source account %s is closed", r.FromAccount)
		case src.currency != r.Currency:
			return errf(422, CodeCurrencyMismatch, "source account %s is held in %s, not %s", r.FromAccount, src.currency, r.Currency)
		}
		now, err := bookingTime(ctx, tx)
		if err != nil {
			return err
		}

		refs := make([]string, len(r.Items))
		dests := make([]string, len(r.Items))
		var total int64
		for i, it := range r.Items {
			refs[i], dests[i] = it.Reference, it.ToAccount
			total += it.AmountSantim // bounded by MaxBatchItems × money.MaxAmountSantim
		}
		var used string
		err = tx.QueryRow(ctx, `SELECT reference FROM sandbox.transfers WHERE reference = ANY($1) LIMIT 1`, refs).Scan(&used)
		if err == nil {
			return errf(409, CodeReferenceConflict, "item reference %s is already used by another transfer", used)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		accts := map[string]bookAccount{}
		rows, err := tx.Query(ctx, `SELECT `+accountCols+` FROM sandbox.accounts WHERE account_number = ANY($1)`, dests)
		if err != nil {
			return err
		}
		for rows.Next() {
			a, err := scanAccount(rows)
			if err != nil {
				rows.Close()
				return err
			}
			accts[a.number] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}

		batchID = newID()
		tag, err := tx.Exec(ctx, `INSERT INTO sandbox.batches (id, batch_reference, request_hash, from_account, currency,
			tenant_id, domain, item_count, total_santim, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (batch_reference) DO NOTHING`,
			batchID, r.BatchReference, hash, r.FromAccount, r.Currency, r.TenantID, r.Domain, len(r.Items), total, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errRetry // a concurrent identical call won the race: replay it
		}

		transfers := make([][]any, len(r.Items))
		var holds []line
		var failed []terminalEvent
		bal := src.balance
		var cbURL any
		if r.CallbackURL != "" {
			cbURL = r.CallbackURL
		}
		settleAfter := now.Add(delay)
		for i, it := range r.Items {
			id := newID()
			code := ""
			dst, ok := accts[it.ToAccount]
			f := faults.For(it.ToAccount)
			switch {
			case !ok:
				code = CodeAccountNotFound
			case dst.status != AccountActive:
				code = CodeAccountClosed
			case dst.currency != r.Currency:
				code = CodeCurrencyMismatch
			case f.RejectCode != "":
				code = f.RejectCode
			}
			var status, failure, forced any = StatusPending, nil, nil
			var failedAt any
			if code != "" {
				status, failure, failedAt = StatusFailed, code, now
				failed = append(failed, terminalEvent{transferID: id, reference: it.Reference, from: r.FromAccount,
					to: it.ToAccount, amount: it.AmountSantim, tenantID: r.TenantID, domain: r.Domain,
					status: StatusFailed, failureCode: code, callbackURL: r.CallbackURL})
			} else {
				if sf := faults.For(r.FromAccount, it.ToAccount).SettleFailureCode; sf != "" {
					forced = sf
				}
				bal -= it.AmountSantim
				holds = append(holds, line{account: r.FromAccount, transferID: id, kind: "HOLD", reference: it.Reference,
					direction: "DBIT", amount: it.AmountSantim, currency: r.Currency, counterparty: it.ToAccount, balanceAfter: bal})
			}
			transfers[i] = []any{id, it.Reference, r.FromAccount, it.ToAccount, it.AmountSantim, r.Currency, r.TenantID,
				r.Domain, cbURL, status, failure, forced, batchID, i, now, settleAfter, failedAt}
		}
		if bal < 0 {
			return errf(422, CodeInsufficientFunds, "source account %s cannot cover the batch (%d santim to hold)", r.FromAccount, src.balance-bal)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"sandbox", "transfers"}, []string{"id", "reference", "from_account",
			"to_account", "amount_santim", "currency", "tenant_id", "domain", "callback_url", "status", "failure_code",
			"forced_failure_code", "batch_id", "batch_seq", "created_at", "settle_after", "failed_at"},
			pgx.CopyFromRows(transfers)); err != nil {
			if db.IsCode(err, pgerrcode.UniqueViolation) {
				return errf(409, CodeReferenceConflict, "an item reference of batch %s was used concurrently by another transfer", r.BatchReference)
			}
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE sandbox.accounts SET balance_santim = $2 WHERE account_number = $1`, r.FromAccount, bal); err != nil {
			return err
		}
		if err := bookLines(ctx, tx, now, holds); err != nil {
			return err
		}
		if err := enqueueCallbacks(ctx, tx, now, failed, faults); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		if _, ok := AsError(err); ok || errors.Is(err, errRetry) {
			return "", false, err
		}
		return "", false, fmt.Errorf("sandbox.createBatch: %w", err)
	}
	return batchID, created, nil
}

// storedBatch returns the id of the batch stored under ref ("" when there is none), or 409
// REFERENCE_CONFLICT when it was stored from another request.
func storedBatch(ctx context.Context, tx pgx.Tx, ref string, hash []byte) (string, error) {
	var id string
	var storedHash []byte
	err := tx.QueryRow(ctx, `SELECT id::text, request_hash FROM sandbox.batches WHERE batch_reference = $1`, ref).Scan(&id, &storedHash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", err
	case !bytes.Equal(storedHash, hash):
		return "", errf(409, CodeReferenceConflict, "batch reference %s is already used by a different batch", ref)
	}
	return id, nil
}

// getBatch returns a batch with the current status of each item, in item order.
func (s *store) getBatch(ctx context.Context, id string) (Batch, error) {
	var b Batch
	err := s.pool.QueryRow(ctx, `SELECT id::text, batch_reference, from_account, currency, tenant_id, domain,
		item_count, total_santim, created_at FROM sandbox.batches WHERE id = $1::uuid`, id).
		Scan(&b.ID, &b.BatchReference, &b.FromAccount, &b.Currency, &b.TenantID, &b.Domain, &b.ItemCount, &b.TotalSantim, &b.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, errf(404, CodeBatchNotFound, "no batch with id %s", id)
	}
	if err != nil {
		return b, fmt.Errorf("sandbox.getBatch: %w", err)
	}
	b.CreatedAt = b.CreatedAt.UTC()
	b.Status = BatchAccepted
	rows, err := s.pool.Query(ctx, `SELECT reference, id::text, to_account, amount_santim, status, coalesce(failure_code, '')
		FROM sandbox.transfers WHERE batch_id = $1::uuid ORDER BY batch_seq`, id)
	if err != nil {
		return b, fmt.Errorf("sandbox.getBatch: %w", err)
	}
	b.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (BatchItem, error) {
		var it BatchItem
		err := r.Scan(&it.Reference, &it.TransferID, &it.ToAccount, &it.AmountSantim, &it.Status, &it.FailureCode)
		return it, err
	})
	if err != nil {
		return b, fmt.Errorf("sandbox.getBatch: %w", err)
	}
	return b, nil
}

func (s *store) batchIDByReference(ctx context.Context, ref string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id::text FROM sandbox.batches WHERE batch_reference = $1`, ref).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errf(404, CodeBatchNotFound, "no batch with reference %s", ref)
	}
	if err != nil {
		return "", fmt.Errorf("sandbox.batchIDByReference: %w", err)
	}
	return id, nil
}
