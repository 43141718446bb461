package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// injectedRejection is the answer to a new transfer or batch under a RejectCode fault.
func injectedRejection(what, code, reference string) *Error {
	return errf(422, code, "injected rejection of %s %s", what, reference)
}

// GlobalScope is the fault scope that applies to every request.
const GlobalScope = "*"

// Faults is one scope's injected misbehaviour (the contract's fault body). A bank that times out,
// answers twice, answers out of order and rejects is what Wagerail's gateway and workflows must
// survive, so every field here is something a real partner bank has done.
type Faults struct {
	// LatencyMs delays the response of every bank endpoint the scope touches.
	LatencyMs int `json:"latencyMs"`
	// ErrorRatePercent answers that share of requests with 503 INJECTED_FAILURE, writing nothing.
	ErrorRatePercent int `json:"errorRatePercent"`
	// ExecuteThenTimeoutMs books the transfer as normal, then holds the response back this long,
	// so the caller's deadline expires for a transfer that exists.
	ExecuteThenTimeoutMs int `json:"executeThenTimeoutMs"`
	// RejectCode answers the creation of a new transfer (or batch) with 422 and this code, writing
	// nothing; a retry of one the bank already holds is answered as usual (200, the stored
	// transfer). In a batch, a destination account's reject code fails that item alone.
	RejectCode string `json:"rejectCode,omitempty"`
	// DuplicateCallback sends every callback twice (same eventId).
	DuplicateCallback bool `json:"duplicateCallback"`
	// OutOfOrderCallbacks holds callbacks back until the burst is over, then sends them newest
	// first.
	OutOfOrderCallbacks bool `json:"outOfOrderCallbacks"`
	// DropCallback never sends the callback: the caller has to ask for the status.
	DropCallback bool `json:"dropCallback"`
	// WrongSignature signs callbacks with a wrong key (checked at every attempt, so clearing the
	// fault lets the next retry through).
	WrongSignature bool `json:"wrongSignature"`
	// SettleFailureCode (an addition to the contract) accepts the transfer but fails it at
	// settlement with this code, refunding the source.
	SettleFailureCode string `json:"settleFailureCode,omitempty"`
}

var codeRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// Validate checks the bounds of a fault body.
func (f *Faults) Validate() *Error {
	switch {
	case f.LatencyMs < 0 || f.LatencyMs > 300_000:
		return invalid("latencyMs must be between 0 and 300000")
	case f.ErrorRatePercent < 0 || f.ErrorRatePercent > 100:
		return invalid("errorRatePercent must be between 0 and 100")
	case f.ExecuteThenTimeoutMs < 0 || f.ExecuteThenTimeoutMs > 300_000:
		return invalid("executeThenTimeoutMs must be between 0 and 300000")
	case f.RejectCode != "" && !codeRe.MatchString(f.RejectCode):
		return invalid("rejectCode must be an upper-case code such as ACCOUNT_BLOCKED")
	case f.SettleFailureCode != "" && !codeRe.MatchString(f.SettleFailureCode):
		return invalid("settleFailureCode must be an upper-case code such as BENEFICIARY_BANK_REJECTED")
	}
	return nil
}

// merge combines the faults of every scope a request touches: the worst of each numeric fault,
// any of each flag, and the first code in scope order (the accounts before the global scope).
func merge(scopes ...*Faults) Faults {
	var m Faults
	for _, f := range scopes {
		if f == nil {
			continue
		}
		m.LatencyMs = max(m.LatencyMs, f.LatencyMs)
		m.ErrorRatePercent = max(m.ErrorRatePercent, f.ErrorRatePercent)
		m.ExecuteThenTimeoutMs = max(m.ExecuteThenTimeoutMs, f.ExecuteThenTimeoutMs)
		if m.RejectCode == "" {
			m.RejectCode = f.RejectCode
		}
		if m.SettleFailureCode == "" {
			m.SettleFailureCode = f.SettleFailureCode
		}
		m.DuplicateCallback = m.DuplicateCallback || f.DuplicateCallback
		m.OutOfOrderCallbacks = m.OutOfOrderCallbacks || f.OutOfOrderCallbacks
		m.DropCallback = m.DropCallback || f.DropCallback
		m.WrongSignature = m.WrongSignature || f.WrongSignature
	}
	return m
}

// faultSet is a snapshot of every scope's faults.
type faultSet map[string]*Faults

// For merges the global faults with those of the given accounts.
func (fs faultSet) For(accounts ...string) Faults {
	scopes := make([]*Faults, 0, len(accounts)+1)
	for _, a := range accounts {
		scopes = append(scopes, fs[a])
	}
	scopes = append(scopes, fs[GlobalScope])
	return merge(scopes...)
}

// faultStore keeps faults in the database (so every sandbox process sees them) behind a short
// cache: the hot paths (every request, every callback attempt) read the cache, and a write in
// this process refreshes it at once.
type faultStore struct {
	pool *pgxpool.Pool
	ttl  time.Duration

	mu      sync.Mutex
	set     faultSet
	fetched time.Time
}

func (s *faultStore) snapshot(ctx context.Context) (faultSet, error) {
	return s.snapshotOn(ctx, s.pool)
}

// snapshotOn is snapshot read through q when the cache is stale: a transaction that needs the
// faults reads them on its own connection rather than holding it while it waits for another.
func (s *faultStore) snapshotOn(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) (faultSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set != nil && time.Since(s.fetched) < s.ttl {
		return s.set, nil
	}
	rows, err := q.Query(ctx, `SELECT scope, config FROM sandbox.faults`)
	if err != nil {
		return nil, fmt.Errorf("sandbox.faults: %w", err)
	}
	defer rows.Close()
	set := faultSet{}
	for rows.Next() {
		var scope string
		var raw []byte
		if err := rows.Scan(&scope, &raw); err != nil {
			return nil, fmt.Errorf("sandbox.faults: %w", err)
		}
		f := new(Faults)
		if err := json.Unmarshal(raw, f); err != nil {
			return nil, fmt.Errorf("sandbox.faults: scope %s: %w", scope, err)
		}
		set[scope] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sandbox.faults: %w", err)
	}
	s.set, s.fetched = set, time.Now()
	return set, nil
}

func (s *faultStore) invalidate() {
	s.mu.Lock()
	s.set = nil
	s.mu.Unlock()
}

func (s *faultStore) put(ctx context.Context, scope string, f Faults) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO sandbox.faults (scope, config) VALUES ($1, $2)
		ON CONFLICT (scope) DO UPDATE SET config = EXCLUDED.config, updated_at = now()`, scope, raw)
	s.invalidate()
	if err != nil {
		return fmt.Errorf("sandbox.faults put: %w", err)
	}
	return nil
}

func (s *faultStore) clear(ctx context.Context, scope string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM sandbox.faults WHERE scope = $1`, scope)
	s.invalidate()
	if err != nil {
		return fmt.Errorf("sandbox.faults clear: %w", err)
	}
	return nil
}

func (s *faultStore) clearAll(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM sandbox.faults`)
	s.invalidate()
	if err != nil {
		return fmt.Errorf("sandbox.faults clear all: %w", err)
	}
	return nil
}
