package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// dueTransfer is a PENDING transfer whose settlement time has come.
type dueTransfer struct {
	id, reference, from, to, currency, tenantID, domain, callbackURL, forced string
	amount                                                                   int64
}

// settleDue settles (credits the destination) or fails (refunds the source) up to limit due
// transfers in one transaction, set-based: the due rows are claimed with FOR UPDATE SKIP LOCKED
// so several settlers never take the same transfer, the accounts they touch are locked in one
// ordered statement, and the transfer updates, balance updates, statement lines and callbacks
// are each written with one statement. It returns how many transfers it finished. The callback
// faults are read once the due transfers are claimed (in the transaction, when the cache is
// stale), not before: a fault set before a transfer was made due then always applies to its
// callback.
func (s *store) settleDue(ctx context.Context, limit int, faults *faultStore) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Due at the transaction's time (now()); the bookings take their own time below.
		rows, err := tx.Query(ctx, `SELECT id::text, reference, from_account, to_account, amount_santim, currency,
			tenant_id, domain, coalesce(callback_url, ''), coalesce(forced_failure_code, '')
			FROM sandbox.transfers WHERE status = 'PENDING' AND settle_after <= now()
			ORDER BY settle_after, id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit)
		if err != nil {
			return err
		}
		due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (dueTransfer, error) {
			var d dueTransfer
			err := r.Scan(&d.id, &d.reference, &d.from, &d.to, &d.amount, &d.currency, &d.tenantID, &d.domain,
				&d.callbackURL, &d.forced)
			return d, err
		})
		if err != nil || len(due) == 0 {
			return err
		}
		fs, err := faults.snapshotOn(ctx, tx)
		if err != nil {
			return err
		}
		// Lock the destinations, and the sources of the transfers that look like they will fail
		// (a refund). Sources of transfers that settle are left unlocked, so a busy payroll
		// account keeps accepting new transfers while its earlier ones settle. All locks are taken
		// in one ordered statement (no deadlock between settlers); a transfer whose destination
		// closed between the look and the lock waits for the next round.
		dests := make([]string, len(due))
		for i, d := range due {
			dests[i] = d.to
		}
		look, err := readAccounts(ctx, tx, dests)
		if err != nil {
			return err
		}
		numbers := dests
		for _, d := range due {
			if d.forced != "" || settleFailure(look[d.to], d.currency, d.amount) != "" {
				numbers = append(numbers, d.from)
			}
		}
		accts, err := lockAccounts(ctx, tx, numbers)
		if err != nil {
			return err
		}

		ids := make([]string, 0, len(due))
		statuses := make([]string, 0, len(due))
		codes := make([]string, 0, len(due))
		lines := make([]line, 0, len(due))
		events := make([]terminalEvent, 0, len(due))
		touched := map[string]bool{}
		for _, d := range due {
			dst := accts[d.to]
			code := d.forced
			if code == "" {
				code = settleFailure(dst, d.currency, d.amount)
			}
			if code != "" && accts[d.from] == nil {
				continue // its source is not locked: next round
			}
			i := len(ids)
			ids, codes, statuses = append(ids, d.id), append(codes, code), append(statuses, "")
			if code == "" {
				statuses[i] = StatusSettled
				if dst.balance, err = addSantim(dst.balance, d.amount); err != nil {
					return err
				}
				touched[dst.number] = true
				lines = append(lines, line{account: d.to, transferID: d.id, kind: "CREDIT", reference: d.reference,
					direction: "CRDT", amount: d.amount, currency: d.currency, counterparty: d.from, balanceAfter: dst.balance})
			} else {
				// The hold comes back to the source: the source row was locked above, and
				// accounts are never deleted, so it is there.
				statuses[i] = StatusFailed
				src := accts[d.from]
				if src.balance, err = addSantim(src.balance, d.amount); err != nil {
					return err
				}
				touched[src.number] = true
				lines = append(lines, line{account: d.from, transferID: d.id, kind: "REFUND", reference: d.reference,
					direction: "CRDT", amount: d.amount, currency: d.currency, counterparty: d.to, balanceAfter: src.balance})
			}
			events = append(events, terminalEvent{transferID: d.id, reference: d.reference, from: d.from, to: d.to,
				tenantID: d.tenantID, domain: d.domain, status: statuses[i], failureCode: code, callbackURL: d.callbackURL,
				amount: d.amount})
		}

		if len(ids) == 0 {
			return nil // every transfer waits for its source's lock: next round
		}
		nums := make([]string, 0, len(touched))
		bals := make([]int64, 0, len(touched))
		for num := range touched {
			nums = append(nums, num)
			bals = append(bals, accts[num].balance)
		}
		// The balances first, returning the time the bookings are made at: read under the account
		// locks (as bookingTime's is) by the statement that needs them anyway.
		var now time.Time
		if err := tx.QueryRow(ctx, `WITH u AS (
				UPDATE sandbox.accounts a SET balance_santim = v.bal
				FROM unnest($1::text[], $2::bigint[]) AS v(num, bal) WHERE a.account_number = v.num
				RETURNING clock_timestamp() AS at
			)
			SELECT max(at) FROM u`, nums, bals).Scan(&now); err != nil {
			return err
		}
		now = now.UTC()
		if _, err := tx.Exec(ctx, `UPDATE sandbox.transfers t SET status = v.status, failure_code = NULLIF(v.code, ''),
				settled_at = CASE WHEN v.status = 'SETTLED' THEN $4::timestamptz END,
				failed_at = CASE WHEN v.status = 'FAILED' THEN $4::timestamptz END
			FROM unnest($1::text[], $2::text[], $3::text[]) AS v(id, status, code)
			WHERE t.id = v.id::uuid`, ids, statuses, codes, now); err != nil {
			return err
		}
		if err := bookLines(ctx, tx, now, lines); err != nil {
			return err
		}
		if err := enqueueCallbacks(ctx, tx, now, events, fs); err != nil {
			return err
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sandbox.settle: %w", err)
	}
	return n, nil
}

// settleFailure is why a transfer to dst cannot settle, or "" when it can.
func settleFailure(dst *bookAccount, currency string, amount int64) string {
	switch {
	case dst == nil:
		return CodeAccountNotFound
	case dst.status != AccountActive:
		return CodeAccountClosed
	case dst.currency != currency:
		return CodeCurrencyMismatch
	case dst.balance > money.MaxAccountTotalSantim-amount:
		// A credit past the bound fails and refunds, rather than failing the whole settlement
		// round on an overflow and retrying it for ever. A refund may pass the bound by at most
		// the holds outstanding, which stays far inside int64.
		return CodeBalanceLimit
	}
	return ""
}

// settler runs settlement rounds until ctx ends.
type settler struct {
	store  *store
	faults *faultStore
	cfg    Config
	log    *slog.Logger
	nudge  chan struct{}
	done   func() // wakes the deliverer after a round wrote callbacks
}

func (s *settler) run(ctx context.Context) {
	var idle errorBackoff
	for {
		n, err := s.round(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.Error("sandbox settler: round failed", "err", err)
		}
		if n > 0 {
			s.done()
		}
		if !idle.pause(ctx, err, n == s.cfg.SettleChunk, s.nudge, s.cfg.PollInterval) {
			return
		}
	}
}

func (s *settler) round(ctx context.Context) (int, error) {
	return s.store.settleDue(ctx, s.cfg.SettleChunk, s.faults)
}

// errorBackoff stretches a polling loop's wait while its rounds keep failing (database down), from
// the poll interval up to 30 s, so an outage is not logged five times a second; one success resets it.
type errorBackoff struct{ wait time.Duration }

func (b *errorBackoff) next(err error, poll time.Duration) time.Duration {
	if err == nil {
		b.wait = 0
		return poll
	}
	if b.wait < poll {
		b.wait = poll
	} else {
		b.wait = min(2*b.wait, 30*time.Second)
	}
	return b.wait
}

// pause ends a round of a worker's polling loop (the settler's, the deliverer's). After a full
// round that did not fail it returns at once: more work is likely due. Otherwise it waits for a
// nudge (work this process made) or the poll interval (work of other processes, retries),
// stretched by next while rounds keep failing. It returns false when ctx has ended.
func (b *errorBackoff) pause(ctx context.Context, err error, full bool, nudge <-chan struct{}, poll time.Duration) bool {
	wait := b.next(err, poll)
	if err == nil && full {
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-nudge:
	case <-time.After(wait):
	}
	return true
}
