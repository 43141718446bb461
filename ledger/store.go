package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
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
// may also end its last pipeline with COMMIT itself. When ctx has a deadline, the setting comes
// with a statement_timeout (see statementTimeout): the database gives up at the deadline too,
// and its refusal then is a deadline's error (see deadlineErr).
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
	timeout, hasDeadline, err := statementTimeout(ctx)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	if fn != nil {
		b.Queue("BEGIN")
	}
	// With fn nil, nothing depends on first's results and no BEGIN/COMMIT is sent: the statements
	// of one pipeline (up to its Sync) run in one implicit transaction that commits at the Sync
	// or rolls back on the first error. The settings are local to that transaction all the same.
	if hasDeadline {
		b.Queue("SELECT set_config($1, $2, true), set_config('statement_timeout', $3, true)", db.TenantSetting, tenant, timeout)
	} else {
		b.Queue("SELECT set_config($1, $2, true)", db.TenantSetting, tenant)
	}
	if first != nil {
		first(b)
	}
	err = conn.SendBatch(ctx, b).Close()
	if err == nil && fn != nil {
		err = fn(conn)
	}
	if err != nil {
		rollback(conn)
		return deadlineErr(ctx, err)
	}
	if fn == nil || conn.Conn().PgConn().TxStatus() == 'I' {
		// Committed in the last batch (fn may end its final pipeline with COMMIT).
		return nil
	}
	_, err = conn.Exec(ctx, "COMMIT")
	return deadlineErr(ctx, err)
}

// statementTimeout is the statement_timeout inTx gives the database for ctx's deadline: the
// time left, in milliseconds, rounded up. The database then gives up at the deadline by itself:
// pgx closes the connection at the deadline and sends a cancel request, on a connection of its
// own and asynchronously, and a statement of a pipeline that gets an account's lock (the entries
// trigger, ledger.account_lock_key) before that request lands still runs, and the pipeline's
// implicit transaction commits at its Sync although its client is gone.
//
// In the extended protocol PostgreSQL (15, checked) starts the timeout afresh at each statement
// of a pipeline, with the value set then, so the setting bounds each statement queued after it:
// a posting's one insert, which waits for the locks, starts as the setting ends. The timeout
// covers waiting for locks (advisory ones included); a lock_timeout as long would add nothing,
// as the statement's timer starts before any lock wait in it. A later round trip of fn's may
// outlast the deadline in the database, but its transaction commits only on the COMMIT inTx
// sends while ctx lasts. Rounded up, the timeout never fires before ctx's deadline, so a batch
// it ended finds its earliest caller out of time (see coalescer.writeBatch).
func statementTimeout(ctx context.Context) (ms string, ok bool, err error) {
	d, ok := ctx.Deadline()
	if !ok {
		return "", false, nil
	}
	left := time.Until(d)
	if left <= 0 {
		return "", false, context.DeadlineExceeded
	}
	n := min((left+time.Millisecond-1)/time.Millisecond, math.MaxInt32) // the setting's maximum
	return strconv.FormatInt(int64(n), 10), true, nil
}

// deadlineErr turns the database's refusal for a timeout after ctx's deadline (the
// statement_timeout inTx set, or a lock_timeout) into the error a deadline gives in Go
// (errors.Is(err, context.DeadlineExceeded)), so the caller gets the DeadlineExceeded it gets
// when pgx ends the wait, never Internal: either way nothing committed and the caller, who gave
// up at its deadline, treats the outcome as unknown.
func deadlineErr(ctx context.Context, err error) error {
	d, ok := ctx.Deadline()
	if !ok || time.Now().Before(d) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if db.IsCode(err, pgerrcode.QueryCanceled) || db.IsCode(err, pgerrcode.LockNotAvailable) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
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
		case pgErr.Code == pgerrcode.ForeignKeyViolation && pgErr.ConstraintName == "entries_account_fkey":
			return errorf(ReasonAccountNotFound, "an entry's account does not exist for this tenant and currency")
		case pgErr.Code == pgerrcode.NumericValueOutOfRange: // numeric value out of range
			return errorf(ReasonAmountOverflow, "an amount is out of range")
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}
