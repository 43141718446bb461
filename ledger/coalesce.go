package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// coalescer turns concurrent single postings of one tenant into PostBatch calls. The first
// posting of an idle tenant is written at once, alone; postings that arrive while a batch is
// being written wait for the next batch, which takes them all. Under load a commit (and its
// WAL flush, and the locks of a hot account) is shared by many postings, which is how a ledger
// keeps up with concurrent clients without holding money in memory: each caller still gets
// its own result, only after its batch committed.
//
// A batch costs nearly the same whatever its size: measured at 8 clients on 2 cores, PostBatch
// took 1.8-2.0 ms for one posting and 2.1-2.4 ms for four. So a second batch beside a running
// one is worth its cost only when enough postings wait for it, both when it starts and when a
// writer goes on with another batch (see post and write).
type coalescer struct {
	store       *Store
	maxBatch    int
	maxInFlight int // batches being written at once per tenant
	minSecond   int // postings that must wait before a batch starts beside a running one

	mu      sync.Mutex
	tenants map[string]*tenantQueue
}

type tenantQueue struct {
	pending  []*postRequest
	inFlight int
}

type postRequest struct {
	ctx  context.Context
	p    Posting
	done chan PostResult // buffered: a caller that gave up never blocks the writer
}

// batchTimeout bounds a batch whose callers set no deadline.
const batchTimeout = 30 * time.Second

// expired reports whether the caller is gone or its deadline has passed (by now, even before
// its context says so).
func (r *postRequest) expired(now time.Time) bool {
	if r.ctx.Err() != nil {
		return true
	}
	d, ok := r.ctx.Deadline()
	return ok && !now.Before(d)
}

// giveUp answers a caller that is gone or whose deadline passed; it already returned its
// context's error, or is about to.
func (r *postRequest) giveUp() {
	err := r.ctx.Err()
	if err == nil {
		err = context.DeadlineExceeded
	}
	r.done <- PostResult{Err: err}
}

// batchContext is the context a batch of rs is written under: no later than the earliest
// deadline among them (batchTimeout when none has one). A caller told DeadlineExceeded treats
// the outcome as unknown and looks its key up, or voids it by key, taking nothing found for
// nothing to void (activities.LedgerVoid); so nothing may commit for it once its deadline
// passed, and a batch it shares must not outlive it. Two things keep a statement still waiting
// (for an account's lock) from committing after that: the database gives up at the deadline by
// itself (Store.inTx sets statement_timeout; pgx's cancel request, sent asynchronously when it
// closes the connection, may land after the lock was granted and the pipeline committed), and
// the deadline is deadlineMargin earlier than the caller's own (Metrics.UnaryInterceptor), which
// covers the request's transit time and the commit of a statement granted its lock at the last
// moment. Callers with later deadlines are written again without it (see writeBatch).
func batchContext(rs []*postRequest) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(batchTimeout)
	for _, r := range rs {
		if d, ok := r.ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
	}
	return context.WithDeadline(context.Background(), deadline)
}

func newCoalescer(s *Store) *coalescer {
	return &coalescer{store: s, maxBatch: 500, maxInFlight: 2, minSecond: 4, tenants: map[string]*tenantQueue{}}
}

// post writes one posting through the tenant's batches.
//
// Errors: as Store.Post.
func (c *coalescer) post(ctx context.Context, p Posting) (*Transaction, bool, error) {
	if err := validateTenant(p.TenantID); err != nil {
		return nil, false, err
	}
	// Refuse what the validator refuses before queueing: a bad posting costs no batch slot.
	if err := ValidatePosting(p); err != nil {
		return nil, false, err
	}
	r := &postRequest{ctx: ctx, p: p, done: make(chan PostResult, 1)}
	c.mu.Lock()
	q := c.tenants[p.TenantID]
	if q == nil {
		q = &tenantQueue{}
		c.tenants[p.TenantID] = q
	}
	q.pending = append(q.pending, r)
	// An idle tenant's posting is written at once. While a batch is being written, another
	// starts only when enough postings wait for it; fewer wait for the running writer, which
	// takes them all when it is done. Measured at 8 clients on 2 cores in interleaved runs,
	// starting the second batch at once gave 2,070-2,300 postings/s (2.3 per batch), waiting
	// for 4 gave 2,480-2,980/s; waiting for 3, 5 or 6, or 3 batches in flight, less.
	start := q.inFlight == 0 || (q.inFlight < c.maxInFlight && len(q.pending) >= c.minSecond)
	if start {
		q.inFlight++
	}
	c.mu.Unlock()
	if start {
		go c.write(p.TenantID, q)
	}
	select {
	case res := <-r.done:
		if res.Err != nil {
			return nil, false, res.Err
		}
		return res.Transaction, res.Replayed, nil
	case <-ctx.Done():
		// The posting may still be written (as when a caller hangs up after the commit); a
		// retry with the same idempotency key returns it.
		return nil, false, ctx.Err()
	}
}

// write takes the tenant's queued postings, batch after batch, until none is left, or until
// fewer than minSecond are left while another batch is being written: that writer takes them
// when it is done, with whatever arrived meanwhile, and the last writer always takes all.
// Going on with whatever is left makes over a quarter of the batches at 8 clients single
// postings; leaving them to the other writer measured +11% postings/s at 8 clients, +6% on a
// hot account and at 32 clients.
func (c *coalescer) write(tenant string, q *tenantQueue) {
	for {
		c.mu.Lock()
		if len(q.pending) == 0 || (q.inFlight > 1 && len(q.pending) < c.minSecond) {
			q.inFlight--
			if q.inFlight == 0 {
				delete(c.tenants, tenant)
			}
			c.mu.Unlock()
			return
		}
		n := min(len(q.pending), c.maxBatch)
		batch := make([]*postRequest, n)
		copy(batch, q.pending)
		q.pending = q.pending[n:]
		c.mu.Unlock()

		live := batch[:0]
		now := time.Now()
		for _, r := range batch {
			if r.expired(now) { // its caller is gone or out of time: leave it unwritten
				r.giveUp()
				continue
			}
			live = append(live, r)
		}
		if len(live) > 0 {
			if again := c.writeBatch(tenant, live); len(again) > 0 {
				c.mu.Lock()
				q.pending = append(again, q.pending...)
				c.mu.Unlock()
			}
		}
	}
}

// writeBatch writes batch and answers its callers. It returns the callers to write again: when
// the deadline of some (the earliest) ended the batch, nothing of it committed (or all of it
// did, which a second write replays by key), and the others still have time.
func (c *coalescer) writeBatch(tenant string, batch []*postRequest) (again []*postRequest) {
	ps := make([]Posting, len(batch))
	for i, r := range batch {
		ps[i] = r.p
	}
	// The batch outlives no caller: its deadline is the earliest of theirs.
	ctx, cancel := batchContext(batch)
	res, err := c.store.PostBatch(ctx, tenant, ps)
	// The database's own timeout may answer before ctx's timer has fired.
	timedOut := ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)
	cancel()
	if err != nil && timedOut && !errors.Is(err, context.DeadlineExceeded) {
		// The deadline ended the batch, whatever words the driver found for it then (a statement
		// canceled, a connection closed mid-pipeline): its callers are answered DeadlineExceeded,
		// never Internal. Nothing of it committed, or a caller's lookup by key finds it (see
		// batchContext). A caller of a batch of one used to be told Internal when this answer
		// reached it at the same instant as its own deadline (post's select picks either).
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	if err != nil && timedOut && len(batch) > 1 {
		now := time.Now()
		for _, r := range batch {
			if r.expired(now) {
				r.giveUp()
			} else {
				again = append(again, r)
			}
		}
		if len(again) < len(batch) {
			return again // the batch is smaller each time: the loop ends
		}
		again = nil // no caller's deadline did it (batchTimeout): answer them all
	}
	if err != nil && len(batch) > 1 && isDataError(err) {
		// The database refused something the validator let through: find out which posting
		// by writing each alone, so one bad posting never fails its neighbours.
		for _, r := range batch {
			if r.expired(time.Now()) {
				r.giveUp()
				continue
			}
			ctx, cancel := batchContext([]*postRequest{r})
			one, err := c.store.PostBatch(ctx, tenant, []Posting{r.p})
			cancel()
			if err != nil {
				r.done <- PostResult{Err: err}
			} else {
				r.done <- one[0]
			}
		}
		return nil
	}
	for i, r := range batch {
		if err != nil {
			r.done <- PostResult{Err: err}
		} else {
			r.done <- res[i]
		}
	}
	return nil
}

// isDataError reports whether the database refused the data (a constraint, a raised
// exception, a bad value) rather than failed.
func isDataError(err error) bool {
	var le *Error
	if errors.As(err, &le) {
		return le.Reason.Code() != ReasonInternal.Code()
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return pgerrcode.IsDataException(pgErr.Code) || pgerrcode.IsIntegrityConstraintViolation(pgErr.Code) ||
		pgerrcode.IsPLpgSQLError(pgErr.Code)
}
