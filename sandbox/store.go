package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// store is the bank's books in schema sandbox. Every money movement changes an account balance and
// writes its statement line in one transaction, holding the account row lock, so balances are
// exact to the santim under any concurrency and the statement always explains the balance.
type store struct {
	pool *pgxpool.Pool
}

var errRetry = errors.New("sandbox: retry")

// line is one statement line to book.
type line struct {
	account, transferID, kind, reference, direction, currency, counterparty string
	amount, balanceAfter                                                    int64
}

var lineColumns = []string{"account_number", "transfer_id", "kind", "reference", "direction",
	"amount_santim", "currency", "counterparty", "balance_after_santim", "booked_at", "booking_date", "value_date"}

// bookLines writes statement lines: one with a plain INSERT (one round trip, while the account
// lock is held), many with COPY (a batch books thousands at once).
func bookLines(ctx context.Context, tx pgx.Tx, now time.Time, lines []line) error {
	if len(lines) == 0 {
		return nil
	}
	day := utcDate(now)
	if len(lines) == 1 {
		l := lines[0]
		_, err := tx.Exec(ctx, `INSERT INTO sandbox.statement_lines (account_number, transfer_id, kind, reference, direction,
			amount_santim, currency, counterparty, balance_after_santim, booked_at, booking_date, value_date)
			VALUES ($1, NULLIF($2, '')::uuid, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
			l.account, l.transferID, l.kind, l.reference, l.direction, l.amount, l.currency, l.counterparty, l.balanceAfter, now, day)
		return err
	}
	rows := make([][]any, len(lines))
	for i, l := range lines {
		var tid any
		if l.transferID != "" {
			tid = l.transferID
		}
		rows[i] = []any{l.account, tid, l.kind, l.reference, l.direction, l.amount, l.currency,
			l.counterparty, l.balanceAfter, now, day, day}
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"sandbox", "statement_lines"}, lineColumns, pgx.CopyFromRows(rows))
	return err
}

// utcDate is the UTC calendar day of t as a midnight time (what a date column stores).
func utcDate(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func txNow(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	var now time.Time
	err := tx.QueryRow(ctx, `SELECT now()`).Scan(&now)
	return now.UTC(), err
}

// bookingTime is the time a booking is made, read after the account locks are held: bookings on
// one account are serialised by its lock, so their times (and booking dates) increase with their
// line ids even across midnight, which a statement's running balance relies on.
func bookingTime(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	var now time.Time
	err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now)
	return now.UTC(), err
}

// bookAccount is an account row read (and usually locked) inside a transaction.
type bookAccount struct {
	number, holder, currency, status string
	balance                          int64
}

func scanAccount(row pgx.Row) (bookAccount, error) {
	var a bookAccount
	err := row.Scan(&a.number, &a.holder, &a.currency, &a.status, &a.balance)
	return a, err
}

const accountCols = `account_number, holder_name, currency, status, balance_santim`

// --- accounts ---

func (s *store) getAccount(ctx context.Context, number string) (OperatorAccount, error) {
	var a OperatorAccount
	err := s.pool.QueryRow(ctx, `SELECT account_number, holder_name, currency, status, balance_santim, created_at
		FROM sandbox.accounts WHERE account_number = $1`, number).
		Scan(&a.AccountNumber, &a.HolderName, &a.Currency, &a.Status, &a.BalanceSantim, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, errf(404, CodeAccountNotFound, "account %s does not exist", number)
	}
	if err != nil {
		return a, fmt.Errorf("sandbox.getAccount: %w", err)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// createAccount opens an account; an opening balance is booked as an OPENING credit line so the
// statement explains it.
func (s *store) createAccount(ctx context.Context, r CreateAccountRequest) (OperatorAccount, bool, error) {
	if r.Status == "" {
		r.Status = AccountActive
	}
	if r.Currency == "" {
		r.Currency = "ETB"
	}
	created := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		now, err := txNow(ctx, tx)
		if err != nil {
			return err
		}
		var closedAt *time.Time
		if r.Status == AccountClosed {
			closedAt = &now
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sandbox.accounts (account_number, holder_name, currency, status, balance_santim, created_at, closed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_number) DO NOTHING`,
			r.AccountNumber, r.HolderName, r.Currency, r.Status, r.BalanceSantim, now, closedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		created = true
		if r.BalanceSantim == 0 {
			return nil
		}
		return bookLines(ctx, tx, now, []line{{account: r.AccountNumber, kind: "OPENING", reference: "OPENING-BALANCE",
			direction: "CRDT", amount: r.BalanceSantim, currency: r.Currency, balanceAfter: r.BalanceSantim}})
	})
	if err != nil {
		return OperatorAccount{}, false, fmt.Errorf("sandbox.createAccount: %w", err)
	}
	a, err := s.getAccount(ctx, r.AccountNumber)
	return a, created, err
}

func (s *store) closeAccount(ctx context.Context, number string) (OperatorAccount, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE sandbox.accounts SET status = 'CLOSED', closed_at = coalesce(closed_at, now())
		WHERE account_number = $1`, number)
	if err != nil {
		return OperatorAccount{}, fmt.Errorf("sandbox.closeAccount: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return OperatorAccount{}, errf(404, CodeAccountNotFound, "account %s does not exist", number)
	}
	return s.getAccount(ctx, number)
}

// fundAccount credits an account from outside the bank (a cash deposit, in the story), booked as
// a FUNDING line. Errors: 404 ACCOUNT_NOT_FOUND, 422 ACCOUNT_CLOSED, 422 BALANCE_LIMIT_EXCEEDED
// (the balance would leave money.MaxAccountTotalSantim, the bound every balance read relies on).
func (s *store) fundAccount(ctx context.Context, number string, r FundRequest) (OperatorAccount, error) {
	if r.Reference == "" {
		r.Reference = "FUNDING"
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := scanAccount(tx.QueryRow(ctx, `SELECT `+accountCols+` FROM sandbox.accounts WHERE account_number = $1 FOR NO KEY UPDATE`, number))
		if errors.Is(err, pgx.ErrNoRows) {
			return errf(404, CodeAccountNotFound, "account %s does not exist", number)
		}
		if err != nil {
			return err
		}
		switch {
		case a.status != AccountActive:
			return errf(422, CodeAccountClosed, "account %s is closed", number)
		case a.balance > money.MaxAccountTotalSantim-r.AmountSantim:
			return errf(422, CodeBalanceLimit, "funding would take account %s past %d santim", number, money.MaxAccountTotalSantim)
		}
		now, err := bookingTime(ctx, tx)
		if err != nil {
			return err
		}
		bal := a.balance + r.AmountSantim // bounded just above
		if _, err := tx.Exec(ctx, `UPDATE sandbox.accounts SET balance_santim = $2 WHERE account_number = $1`, number, bal); err != nil {
			return err
		}
		return bookLines(ctx, tx, now, []line{{account: number, kind: "FUNDING", reference: r.Reference,
			direction: "CRDT", amount: r.AmountSantim, currency: a.currency, balanceAfter: bal}})
	})
	if err != nil {
		if _, ok := AsError(err); ok {
			return OperatorAccount{}, err
		}
		return OperatorAccount{}, fmt.Errorf("sandbox.fundAccount: %w", err)
	}
	return s.getAccount(ctx, number)
}

// --- transfers ---

const transferCols = `id::text, reference, from_account, to_account, amount_santim, currency, tenant_id, domain,
	coalesce(callback_url, ''), status, coalesce(failure_code, ''), coalesce(batch_id::text, ''), created_at, settled_at, failed_at`

func scanTransfer(row pgx.Row) (Transfer, error) {
	var t Transfer
	err := row.Scan(&t.ID, &t.Reference, &t.FromAccount, &t.ToAccount, &t.AmountSantim, &t.Currency, &t.TenantID,
		&t.Domain, &t.CallbackURL, &t.Status, &t.FailureCode, &t.BatchID, &t.CreatedAt, &t.SettledAt, &t.FailedAt)
	if err != nil {
		return t, err
	}
	t.CreatedAt = t.CreatedAt.UTC()
	if t.SettledAt != nil {
		u := t.SettledAt.UTC()
		t.SettledAt = &u
	}
	if t.FailedAt != nil {
		u := t.FailedAt.UTC()
		t.FailedAt = &u
	}
	return t, nil
}

func (s *store) getTransfer(ctx context.Context, q pgx.Tx, by, value string) (Transfer, error) {
	sql := `SELECT ` + transferCols + ` FROM sandbox.transfers WHERE `
	switch by {
	case "id":
		sql += `id = $1::uuid`
	default:
		sql += `reference = $1`
	}
	var row pgx.Row
	if q != nil {
		row = q.QueryRow(ctx, sql, value)
	} else {
		row = s.pool.QueryRow(ctx, sql, value)
	}
	t, err := scanTransfer(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, errf(404, CodeTransferNotFound, "no transfer with %s %s", by, value)
	}
	if err != nil {
		return t, fmt.Errorf("sandbox.getTransfer: %w", err)
	}
	return t, nil
}

func (s *store) listTransfers(ctx context.Context, status string, limit int) ([]Transfer, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+transferCols+` FROM sandbox.transfers
		WHERE ($1 = '' OR status = $1) ORDER BY created_at DESC, id LIMIT $2`, status, limit)
	if err != nil {
		return nil, fmt.Errorf("sandbox.listTransfers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Transfer, error) { return scanTransfer(r) })
	if err != nil {
		return nil, fmt.Errorf("sandbox.listTransfers: %w", err)
	}
	return out, nil
}

// sameTransfer reports whether a stored transfer is what the request asks for (a replay).
func sameTransfer(t Transfer, r TransferRequest) bool {
	return t.FromAccount == r.FromAccount && t.ToAccount == r.ToAccount && t.AmountSantim == r.AmountSantim &&
		t.Currency == r.Currency && t.TenantID == r.TenantID && t.Domain == r.Domain && t.CallbackURL == r.CallbackURL
}

// createTransfer holds the amount at the source and records a PENDING transfer, idempotently on
// the reference. It reports whether the transfer is new (false: a replay of the same request).
// Errors: 409 REFERENCE_CONFLICT, 422 ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, CURRENCY_MISMATCH,
// INSUFFICIENT_FUNDS; on any of them nothing is written.
// createTransfer books r, or answers the transfer already booked under its reference. A non-empty
// rejectCode (an injected rejection) refuses a new transfer with 422 and that code, writing
// nothing; a replay of a transfer the bank already holds is answered as usual, as a real bank
// would, so a retry after the fault was set never reads as a rejection of a transfer that settles.
func (s *store) createTransfer(ctx context.Context, r TransferRequest, rejectCode, forcedFailure string, delay time.Duration) (Transfer, bool, error) {
	for range 5 {
		t, created, err := s.tryCreateTransfer(ctx, r, rejectCode, forcedFailure, delay)
		if errors.Is(err, errRetry) {
			continue
		}
		return t, created, err
	}
	return Transfer{}, false, errors.New("sandbox.createTransfer: reference kept changing under us")
}

func (s *store) tryCreateTransfer(ctx context.Context, r TransferRequest, rejectCode, forcedFailure string, delay time.Duration) (Transfer, bool, error) {
	var out Transfer
	created := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The unique index on reference is the idempotency guard: a concurrent duplicate waits
		// here for our commit (or rollback) and then finds our row. The transfer is created at the
		// transaction's time (now(), returned), settling delay later.
		id := newID()
		var now time.Time
		err := tx.QueryRow(ctx, `INSERT INTO sandbox.transfers (id, reference, from_account, to_account, amount_santim,
			currency, tenant_id, domain, callback_url, status, forced_failure_code, created_at, settle_after)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULLIF($9, ''), 'PENDING', NULLIF($10, ''), now(),
				now() + $11::bigint * interval '1 microsecond')
			ON CONFLICT (reference) DO NOTHING
			RETURNING created_at`,
			id, r.Reference, r.FromAccount, r.ToAccount, r.AmountSantim, r.Currency, r.TenantID, r.Domain,
			r.CallbackURL, forcedFailure, delay.Microseconds()).Scan(&now)
		if db.IsCode(err, pgerrcode.ForeignKeyViolation) {
			// No row holds the reference (a conflict is found before the key is checked): a new
			// transfer, which an injected rejection refuses first.
			if rejectCode != "" {
				return injectedRejection("transfer", rejectCode, r.Reference)
			}
			return errf(422, CodeAccountNotFound, "source account %s does not exist", r.FromAccount)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			existing, err := s.getTransfer(ctx, tx, "reference", r.Reference)
			if e, ok := AsError(err); ok && e.Code == CodeTransferNotFound {
				return errRetry
			}
			if err != nil {
				return err
			}
			if !sameTransfer(existing, r) {
				return errf(409, CodeReferenceConflict, "reference %s is already used by a different transfer", r.Reference)
			}
			out = existing
			return nil
		}
		if err != nil {
			return err
		}
		if rejectCode != "" {
			// A new transfer: the rejection rolls the row just inserted back.
			return injectedRejection("transfer", rejectCode, r.Reference)
		}
		now = now.UTC()
		// The destination is read (not locked), then the source's balance lock is taken, in one
		// statement (one round trip): the destination's branch runs first, so a busy source
		// account is locked for no round trip more than before.
		rows, err := tx.Query(ctx, `WITH src AS (
				SELECT `+accountCols+` FROM sandbox.accounts WHERE account_number = $2 FOR NO KEY UPDATE
			)
			SELECT false, `+accountCols+` FROM sandbox.accounts WHERE account_number = $1
			UNION ALL
			SELECT true, `+accountCols+` FROM src`, r.ToAccount, r.FromAccount)
		if err != nil {
			return err
		}
		var dst, src *bookAccount
		var isSrc bool
		var a bookAccount
		if _, err := pgx.ForEachRow(rows, []any{&isSrc, &a.number, &a.holder, &a.currency, &a.status, &a.balance}, func() error {
			if got := a; isSrc {
				src = &got
			} else {
				dst = &got
			}
			return nil
		}); err != nil {
			return err
		}
		if dst == nil {
			return errf(422, CodeAccountNotFound, "destination account %s does not exist", r.ToAccount)
		}
		if src == nil {
			return errf(422, CodeAccountNotFound, "source account %s does not exist", r.FromAccount)
		}
		switch {
		case src.status != AccountActive:
			return errf(422, CodeAccountClosed, "source account %s is closed", r.FromAccount)
		case dst.status != AccountActive:
			return errf(422, CodeAccountClosed, "destination account %s is closed", r.ToAccount)
		case src.currency != r.Currency:
			return errf(422, CodeCurrencyMismatch, "source account %s is held in %s, not %s", r.FromAccount, src.currency, r.Currency)
		case dst.currency != r.Currency:
			return errf(422, CodeCurrencyMismatch, "destination account %s is held in %s, not %s", r.ToAccount, dst.currency, r.Currency)
		case src.balance < r.AmountSantim:
			return errf(422, CodeInsufficientFunds, "source account %s cannot cover %d santim", r.FromAccount, r.AmountSantim)
		}
		bal := src.balance - r.AmountSantim
		// The hold and its statement line in one statement (one round trip under the source's
		// lock), booked at the time the balance changed (see bookingTime), on its UTC day.
		tag, err := tx.Exec(ctx, `
			WITH u AS (
				UPDATE sandbox.accounts SET balance_santim = $2 WHERE account_number = $1
				RETURNING clock_timestamp() AS at
			)
			INSERT INTO sandbox.statement_lines (account_number, transfer_id, kind, reference, direction,
				amount_santim, currency, counterparty, balance_after_santim, booked_at, booking_date, value_date)
			SELECT $1, $3::uuid, 'HOLD', $4, 'DBIT', $5, $6, $7, $2, u.at, (u.at AT TIME ZONE 'UTC')::date,
				(u.at AT TIME ZONE 'UTC')::date
			FROM u`,
			r.FromAccount, bal, id, r.Reference, r.AmountSantim, r.Currency, r.ToAccount)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("source account %s vanished under its lock", r.FromAccount)
		}
		created = true
		out = Transfer{ID: id, Reference: r.Reference, FromAccount: r.FromAccount, ToAccount: r.ToAccount,
			AmountSantim: r.AmountSantim, Currency: r.Currency, TenantID: r.TenantID, Domain: r.Domain,
			Status: StatusPending, CallbackURL: r.CallbackURL, CreatedAt: now}
		return nil
	})
	if err != nil {
		if _, ok := AsError(err); ok || errors.Is(err, errRetry) {
			return Transfer{}, false, err
		}
		return Transfer{}, false, fmt.Errorf("sandbox.createTransfer: %w", err)
	}
	return out, created, nil
}

// readAccounts reads accounts without locking them.
func readAccounts(ctx context.Context, tx pgx.Tx, numbers []string) (map[string]*bookAccount, error) {
	rows, err := tx.Query(ctx, `SELECT `+accountCols+` FROM sandbox.accounts WHERE account_number = ANY($1)`, numbers)
	return collectAccounts(rows, err)
}

// collectAccounts reads a query's accounts by number.
func collectAccounts(rows pgx.Rows, err error) (map[string]*bookAccount, error) {
	if err != nil {
		return nil, err
	}
	accts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bookAccount, error) { return scanAccount(r) })
	if err != nil {
		return nil, err
	}
	out := make(map[string]*bookAccount, len(accts))
	for i := range accts {
		out[accts[i].number] = &accts[i]
	}
	return out, nil
}

// lockAccounts locks the given accounts in account-number order (the one lock order every writer
// that takes more than one account lock uses, so writers never deadlock each other). Every
// account lock is FOR NO KEY UPDATE: a balance change never touches the key, and this mode does
// not conflict with the KEY SHARE lock a foreign-key check takes, so two transactions inserting
// transfers from the same account queue on the balance lock instead of deadlocking.
func lockAccounts(ctx context.Context, tx pgx.Tx, numbers []string) (map[string]*bookAccount, error) {
	numbers = slices.Clone(numbers)
	slices.Sort(numbers)
	numbers = slices.Compact(numbers)
	rows, err := tx.Query(ctx, `SELECT `+accountCols+` FROM sandbox.accounts WHERE account_number = ANY($1)
		ORDER BY account_number FOR NO KEY UPDATE`, numbers)
	return collectAccounts(rows, err)
}
