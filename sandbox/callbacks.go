package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
)

// CallbackBody is what the bank POSTs when a transfer reaches SETTLED or FAILED.
type CallbackBody struct {
	EventID      string    `json:"eventId"`
	TenantID     string    `json:"tenant_id"`
	Domain       string    `json:"domain"`
	Reference    string    `json:"reference"`
	TransferID   string    `json:"transferId"`
	Status       string    `json:"status"`
	AmountSantim int64     `json:"amountSantim"`
	FailureCode  string    `json:"failureCode,omitempty"`
	OccurredAt   time.Time `json:"occurredAt"`
}

// terminalEvent is a transfer that has just reached SETTLED or FAILED.
type terminalEvent struct {
	transferID, reference, from, to, tenantID, domain, status, failureCode, callbackURL string
	amount                                                                              int64
}

// enqueueCallbacks writes the callbacks of terminal transfers into the outbox, in the transaction
// that made them terminal: a settlement is never committed without its callback, and a callback
// is never sent for a settlement that rolled back. Callback faults are decided here, once per
// event (drop, duplicate, out-of-order); a wrong signature is decided at each attempt.
func enqueueCallbacks(ctx context.Context, tx pgx.Tx, now time.Time, events []terminalEvent, faults faultSet) error {
	if len(events) == 0 {
		return nil
	}
	rows := make([][]any, 0, len(events))
	for _, e := range events {
		f := faults.For(e.from, e.to)
		eventID := newID()
		body, err := json.Marshal(CallbackBody{EventID: eventID, TenantID: e.tenantID, Domain: e.domain,
			Reference: e.reference, TransferID: e.transferID, Status: e.status, AmountSantim: e.amount,
			FailureCode: e.failureCode, OccurredAt: now})
		if err != nil {
			return err
		}
		var url any
		if e.callbackURL != "" {
			url = e.callbackURL
		}
		rows = append(rows, []any{eventID, int16(1), e.transferID, url, body, f.OutOfOrderCallbacks, f.DropCallback, now, now})
		if f.DuplicateCallback && !f.DropCallback {
			rows = append(rows, []any{eventID, int16(2), e.transferID, url, body, f.OutOfOrderCallbacks, false, now, now})
		}
	}
	var err error
	if len(rows) == 1 {
		// One callback (a single transfer settling): an INSERT is one round trip and cheaper to
		// run than a COPY (two round trips and its setup), as bookLines does for one line.
		r := rows[0]
		_, err = tx.Exec(ctx, `INSERT INTO sandbox.callbacks (event_id, copy, transfer_id, url, body, out_of_order, dropped,
			created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, r...)
	} else {
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"sandbox", "callbacks"}, []string{"event_id", "copy", "transfer_id", "url",
			"body", "out_of_order", "dropped", "created_at", "next_attempt_at"}, pgx.CopyFromRows(rows))
	}
	if err != nil {
		return fmt.Errorf("enqueue callbacks: %w", err)
	}
	return nil
}

// CallbackRecord is an outbox row as the operator endpoint shows it.
type CallbackRecord struct {
	ID            int64      `json:"id"`
	EventID       string     `json:"eventId"`
	Copy          int        `json:"copy"`
	TransferID    string     `json:"transferId"`
	URL           string     `json:"url,omitempty"`
	Body          string     `json:"body"`
	OutOfOrder    bool       `json:"outOfOrder"`
	Dropped       bool       `json:"dropped"`
	Attempts      int        `json:"attempts"`
	LastStatus    *int       `json:"lastStatus,omitempty"`
	LastError     string     `json:"lastError,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	NextAttemptAt time.Time  `json:"nextAttemptAt"`
	DeliveredAt   *time.Time `json:"deliveredAt,omitempty"`
	GaveUpAt      *time.Time `json:"gaveUpAt,omitempty"`
}

func (s *store) listCallbacks(ctx context.Context, transferID string, limit int) ([]CallbackRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, event_id::text, copy, transfer_id::text, coalesce(url, ''), body,
		out_of_order, dropped, attempts, last_status, coalesce(last_error, ''), created_at, next_attempt_at, delivered_at, gave_up_at
		FROM sandbox.callbacks WHERE ($1 = '' OR transfer_id = $1::uuid) ORDER BY id DESC LIMIT $2`, transferID, limit)
	if err != nil {
		return nil, fmt.Errorf("sandbox.listCallbacks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (CallbackRecord, error) {
		var c CallbackRecord
		var body []byte
		err := r.Scan(&c.ID, &c.EventID, &c.Copy, &c.TransferID, &c.URL, &body, &c.OutOfOrder, &c.Dropped, &c.Attempts,
			&c.LastStatus, &c.LastError, &c.CreatedAt, &c.NextAttemptAt, &c.DeliveredAt, &c.GaveUpAt)
		c.Body = string(body)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox.listCallbacks: %w", err)
	}
	return out, nil
}

// deliverer sends outbox callbacks with retries. Rows are claimed with a lease (FOR UPDATE SKIP
// LOCKED, then lease_until) and sent outside any transaction, so several sandbox processes can
// deliver side by side and a crash only delays a callback until its lease runs out. Delivery is
// at least once: receivers deduplicate on eventId.
//
// The lease_until a claim wrote is its token: another process re-claims a row only once that
// time has passed, and writes a later one. An outcome is recorded only while the row still holds
// the claim's token (or, for an acknowledged attempt, while no one has recorded the callback
// delivered or given up), so a slow attempt whose lease ran out never undoes what the process
// that took the row over recorded. A round claims no more than its lease lets it send, and an
// attempt starts only while it can be answered and recorded before the lease ends; a callback
// left over is released at the end of the round, for the next one.
type deliverer struct {
	pool   *pgxpool.Pool
	faults *faultStore
	cfg    Config
	log    *slog.Logger
	client *http.Client
	nudge  chan struct{}
	// leaseGrace is added to the round's sending time to make its lease; recordGrace is the part
	// of the lease kept for recording the outcomes (an attempt starts only if it ends before).
	// Tests shorten them.
	leaseGrace, recordGrace time.Duration
}

// callbackWaves is how many attempts one round makes per unit of CallbackConcurrency: a round
// claims at most callbackWaves×CallbackConcurrency callbacks (and never more than claimLimit).
const callbackWaves = 4

// Defaults of deliverer.leaseGrace and deliverer.recordGrace.
const (
	callbackLeaseGrace  = 30 * time.Second
	callbackRecordGrace = 10 * time.Second
)

// lease is how long a round holds the callbacks it claimed: time for callbackWaves attempts one
// after the other, and the grace.
func (d *deliverer) lease() time.Duration {
	return callbackWaves*d.cfg.CallbackTimeout + d.leaseGrace
}

// roundSize is how many callbacks a round claims at most.
func (d *deliverer) roundSize() int {
	return min(claimLimit, callbackWaves*d.cfg.CallbackConcurrency)
}

// claimed is one callback attempt to make.
type claimed struct {
	id         int64
	url        string
	body       []byte
	outOfOrder bool
	attempts   int
	createdAt  time.Time
	from, to   string
	lease      time.Time // lease_until as claimed: the claim's token
}

// outcome is the result of one attempt.
type outcome struct {
	id     int64
	lease  time.Time
	late   bool // not attempted: too little of the lease was left; released for the next round
	status int
	err    string
	ok     bool
	giveUp bool
	next   time.Time
}

const claimLimit = 500

func (d *deliverer) run(ctx context.Context) {
	var idle errorBackoff
	for {
		n, err := d.deliverOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			d.log.Error("sandbox callbacks: delivery round failed", "err", err)
		}
		if !idle.pause(ctx, err, n == d.roundSize(), d.nudge, d.cfg.PollInterval) {
			return
		}
	}
}

func (d *deliverer) claim(ctx context.Context) ([]claimed, error) {
	rows, err := d.pool.Query(ctx, `UPDATE sandbox.callbacks c SET lease_until = now() + $2::interval
		FROM (
			SELECT c2.id, t.from_account, t.to_account
			FROM sandbox.callbacks c2 JOIN sandbox.transfers t ON t.id = c2.transfer_id
			WHERE c2.delivered_at IS NULL AND c2.gave_up_at IS NULL AND NOT c2.dropped
			  AND c2.next_attempt_at <= now()
			  AND (c2.lease_until IS NULL OR c2.lease_until < now())
			  -- out-of-order callbacks wait until the burst they belong to is over
			  AND (NOT c2.out_of_order OR c2.attempts > 0 OR NOT EXISTS (
			      SELECT 1 FROM sandbox.callbacks h
			      WHERE h.out_of_order AND h.attempts = 0 AND h.delivered_at IS NULL AND h.gave_up_at IS NULL
			        AND NOT h.dropped AND h.created_at > now() - $3::interval))
			ORDER BY c2.next_attempt_at, c2.id
			LIMIT $1
			FOR UPDATE OF c2 SKIP LOCKED
		) due
		WHERE c.id = due.id
		RETURNING c.id, coalesce(c.url, ''), c.body, c.out_of_order, c.attempts, c.created_at, due.from_account, due.to_account,
			c.lease_until`,
		d.roundSize(), d.lease(), d.cfg.OutOfOrderWindow)
	if err != nil {
		return nil, fmt.Errorf("claim callbacks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := r.Scan(&c.id, &c.url, &c.body, &c.outOfOrder, &c.attempts, &c.createdAt, &c.from, &c.to, &c.lease)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim callbacks: %w", err)
	}
	return out, nil
}

// deliverOnce claims due callbacks, sends them and records the outcomes. Ordinary callbacks go
// out concurrently; held-back out-of-order ones go one by one, newest first.
func (d *deliverer) deliverOnce(ctx context.Context) (int, error) {
	// The lease runs from the database's now() in the claim, which is later than this: an attempt
	// that starts by lastStart is answered (CallbackTimeout) and leaves recordGrace of the lease.
	lastStart := time.Now().Add(d.lease() - d.recordGrace - d.cfg.CallbackTimeout)
	batch, err := d.claim(ctx)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	faults, err := d.faults.snapshot(ctx)
	if err != nil {
		return 0, err
	}
	var normal, reversed []claimed
	for _, c := range batch {
		if c.outOfOrder && c.attempts == 0 {
			reversed = append(reversed, c)
		} else {
			normal = append(normal, c)
		}
	}
	slices.SortFunc(reversed, func(a, b claimed) int { return int(b.id - a.id) })

	results := make([]*outcome, len(batch))
	idx := make(map[int64]int, len(batch))
	for i, c := range batch {
		idx[c.id] = i
	}
	try := func(c claimed) *outcome {
		if time.Now().After(lastStart) {
			return &outcome{id: c.id, lease: c.lease, late: true}
		}
		o := d.attempt(ctx, c, faults)
		if o != nil {
			o.lease = c.lease
		}
		return o
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, c := range reversed {
			results[idx[c.id]] = try(c)
		}
	}()
	sem := make(chan struct{}, d.cfg.CallbackConcurrency)
	for _, c := range normal {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[idx[c.id]] = try(c)
		}()
	}
	wg.Wait()

	var ids []int64
	var statuses []int32
	var errs []string
	var oks, giveUps []bool
	var nexts, leases []time.Time
	var lateIDs []int64
	var lateLeases []time.Time
	for _, r := range results {
		switch {
		case r == nil:
			continue // interrupted by shutdown: the lease runs out and the row is sent again
		case r.late:
			lateIDs = append(lateIDs, r.id)
			lateLeases = append(lateLeases, r.lease)
			continue
		}
		ids = append(ids, r.id)
		statuses = append(statuses, int32(r.status))
		errs = append(errs, r.err)
		oks = append(oks, r.ok)
		giveUps = append(giveUps, r.giveUp)
		nexts = append(nexts, r.next)
		leases = append(leases, r.lease)
	}
	// Outcomes are recorded even while shutting down, so a delivered callback is not sent again.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if len(ids) > 0 {
		// Only over this claim's lease: a row whose lease ran out may have been taken over by
		// another process, and what that process recorded stands. An acknowledgement is recorded
		// whoever holds the row now, unless the callback is already delivered or given up: the
		// receiver has it, so it is not sent again.
		tag, err := d.pool.Exec(wctx, `UPDATE sandbox.callbacks c SET attempts = c.attempts + 1,
				last_status = NULLIF(v.status, 0), last_error = NULLIF(v.err, ''),
				delivered_at = CASE WHEN v.ok THEN now() END,
				gave_up_at = CASE WHEN v.give_up THEN now() END,
				next_attempt_at = v.next, lease_until = NULL
			FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bool[], $5::bool[], $6::timestamptz[], $7::timestamptz[])
				AS v(id, status, err, ok, give_up, next, lease)
			WHERE c.id = v.id AND c.delivered_at IS NULL AND c.gave_up_at IS NULL
			  AND (c.lease_until = v.lease OR v.ok)`, ids, statuses, errs, oks, giveUps, nexts, leases)
		if err != nil {
			return len(batch), fmt.Errorf("record callback outcomes: %w", err)
		}
		if lost := int64(len(ids)) - tag.RowsAffected(); lost > 0 {
			d.log.Warn("sandbox callbacks: outcomes not recorded, the lease ran out and the callbacks were taken over", "count", lost)
		}
	}
	if len(lateIDs) > 0 {
		_, err := d.pool.Exec(wctx, `UPDATE sandbox.callbacks c SET lease_until = NULL
			FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, lease)
			WHERE c.id = v.id AND c.lease_until = v.lease`, lateIDs, lateLeases)
		if err != nil {
			return len(batch), fmt.Errorf("release callbacks: %w", err)
		}
	}
	return len(batch), nil
}

// attempt makes one delivery attempt. It returns nil when shutdown interrupted it.
func (d *deliverer) attempt(ctx context.Context, c claimed, faults faultSet) *outcome {
	if ctx.Err() != nil {
		return nil
	}
	url := c.url
	if url == "" {
		url = d.cfg.CallbackURL
	}
	if !slices.Contains(d.cfg.CallbackAllowlist, url) {
		// A row written before the allowlist (or under a wider one) is never sent: the bank
		// calls only receivers this process was started to call.
		d.log.Warn("sandbox callbacks: URL not on the allowlist, giving up", "callback_id", c.id)
		return &outcome{id: c.id, err: "callback URL is not on the allowlist", giveUp: true, next: time.Now()}
	}
	secret := d.cfg.CallbackSecret
	if faults.For(c.from, c.to).WrongSignature {
		// A key the receiver does not hold: the signature is well-formed and wrong.
		secret = "not-the-partner-secret:" + secret
	}
	status, err := d.post(ctx, url, secret, c.body)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	o := &outcome{id: c.id, status: status}
	if err == nil && status >= 200 && status < 300 {
		o.ok = true
		o.next = time.Now()
		return o
	}
	if err != nil {
		o.err = err.Error()
	} else {
		o.err = fmt.Sprintf("receiver answered %d", status)
	}
	wait := backoff(c.attempts+1, d.cfg.CallbackBackoffMin, d.cfg.CallbackBackoffMax)
	o.next = time.Now().Add(wait)
	if time.Since(c.createdAt)+wait > d.cfg.CallbackMaxAge {
		o.giveUp = true
		d.log.Warn("sandbox callbacks: giving up", "callback_id", c.id, "attempts", c.attempts+1, "last_error", o.err)
	}
	return o
}

func (d *deliverer) post(ctx context.Context, url, secret string, body []byte) (int, error) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	nonce := randomHex(16)
	ctx, cancel := context.WithTimeout(ctx, d.cfg.CallbackTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "wagerail-sandbox-bank")
	req.Header.Set(callbacksig.HeaderTimestamp, ts)
	req.Header.Set(callbacksig.HeaderNonce, nonce)
	req.Header.Set(callbacksig.HeaderSignature, callbacksig.Sign([]byte(secret), ts, nonce, body))
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// backoff is the wait after the n-th failed attempt: min, 2·min, 4·min … capped at max, with up to
// 10% jitter so a receiver that comes back is not hit by every retry at once.
func backoff(n int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	if j := int64(d / 10); j > 0 {
		d += time.Duration(randInt64(j))
	}
	return d
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

var errNoSecret = errors.New("sandbox: a callback secret is required")
