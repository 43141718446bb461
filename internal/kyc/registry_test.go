package kyc_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// fakeRegistry answers every lookup with answer (or err), counting the lookups.
type fakeRegistry struct {
	answer kyc.RegistryAnswer
	err    error
	calls  atomic.Int64
}

func (r *fakeRegistry) Name() string { return "sandbox" }

func (r *fakeRegistry) VerifyNationalID(context.Context, string, string, time.Time) (kyc.RegistryAnswer, error) {
	r.calls.Add(1)
	return r.answer, r.err
}

// inTx is the consumer's TxRunner: the runtime role, scoped to the fixture's tenant.
func (f *fixture) inTx(fn func(pgx.Tx) error) error { return tenancy.InTx(f.ctx, f.d.App, fn) }

// checkedEvents are the payloads of the kyc.registry_checked.v1 events about submission id.
func (f *fixture) checkedEvents(t *testing.T, id string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	require.NoError(t, f.inTx(func(tx pgx.Tx) error {
		rows, err := tx.Query(f.ctx, `SELECT payload FROM app.outbox WHERE type = $1 AND payload->>'submissionId' = $2 ORDER BY id`,
			kyc.EventRegistryChecked, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[json.RawMessage])
		return err
	}))
	return out
}

// recorded counts what a check leaves about submission id: check rows, CheckNationalId audit
// rows and kyc.registry_checked.v1 events.
func (f *fixture) recorded(t *testing.T, id string) (checks, audits, events int) {
	t.Helper()
	return f.count(t, `SELECT count(*) FROM app.kyc_registry_checks WHERE submission_id = $1`, id),
		f.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'CheckNationalId' AND target_id = $1`, id),
		len(f.checkedEvents(t, id))
}

// Each outcome the registry can give is recorded with exactly one kyc.registry_checked.v1 event,
// written by the transaction that records the check and its audit row; its payload carries the
// submission's and the check's ids, the verdict, the registry and the time, the subject reference
// the other kyc events carry, and nothing that was looked up. The same trigger again records
// nothing more; another trigger is a check, and an event, of its own.
func TestRegistryCheckWritesOneEventWithoutPersonalData(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		answer kyc.RegistryAnswer
		want   kyc.RegistryOutcome
	}{
		{kyc.RegistryAnswer{Found: true, IDStatus: "ACTIVE", NameMatches: true, DateOfBirthMatches: true}, kyc.RegistryVerified},
		{kyc.RegistryAnswer{Found: true, IDStatus: "ACTIVE", NameMatches: true, DateOfBirthMatches: false}, kyc.RegistryMismatch},
		{kyc.RegistryAnswer{Found: false}, kyc.RegistryNotFound},
		{kyc.RegistryAnswer{Found: true, IDStatus: "DECEASED", NameMatches: true, DateOfBirthMatches: true}, kyc.RegistryInactive},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			s := f.submit(t, "emp-reg-"+strings.ToLower(string(tc.want)))
			reg := &fakeRegistry{answer: tc.answer}
			c, err := kyc.CheckRegistry(f.ctx, f.inTx, reg, f.tenant, s.ID, "request:first")
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Outcome)

			evs := f.checkedEvents(t, s.ID)
			require.Len(t, evs, 1, "one event per recorded check")
			var p map[string]any
			require.NoError(t, json.Unmarshal(evs[0], &p))
			keys := make([]string, 0, len(p))
			for k := range p {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			require.Equal(t, []string{"checkId", "checkedAt", "outcome", "registry", "status", "subjectId", "subjectType", "submissionId"}, keys)
			require.Equal(t, s.ID, p["submissionId"])
			require.Equal(t, c.ID, p["checkId"])
			require.Equal(t, string(tc.want), p["outcome"])
			require.Equal(t, "sandbox", p["registry"])
			require.Equal(t, string(kyc.SubjectEmployee), p["subjectType"])
			require.Equal(t, s.SubjectID, p["subjectId"])
			require.Equal(t, string(kyc.Pending), p["status"])
			at, err := time.Parse(time.RFC3339Nano, p["checkedAt"].(string))
			require.NoError(t, err)
			require.True(t, c.CheckedAt.Equal(at), "checkedAt %s, recorded %s", at, c.CheckedAt)
			// No personal data: not what was looked up, not its digest, not the registry's record.
			for _, pii := range []string{s.NationalID, s.FullName, "Abebe", "Kebede", "1990-01-02", c.Digest, `"DECEASED"`, `"ACTIVE"`} {
				require.NotContains(t, string(evs[0]), pii)
			}

			// The check, its audit row and its event were written by one transaction.
			var sameTx bool
			require.NoError(t, f.inTx(func(tx pgx.Tx) error {
				return tx.QueryRow(f.ctx, `SELECT
						(SELECT xmin::text FROM app.kyc_registry_checks WHERE id = $1) =
						(SELECT xmin::text FROM app.outbox WHERE type = $2 AND payload->>'checkId' = $1)
					AND (SELECT xmin::text FROM app.kyc_registry_checks WHERE id = $1) =
						(SELECT xmin::text FROM app.audit_log WHERE action = 'CheckNationalId' AND details->>'checkId' = $1)`,
					c.ID, kyc.EventRegistryChecked).Scan(&sameTx)
			}))
			require.True(t, sameTx, "check, audit row and event in one transaction")

			// The same trigger answers the check it recorded and writes nothing more.
			again, err := kyc.CheckRegistry(f.ctx, f.inTx, reg, f.tenant, s.ID, "request:first")
			require.NoError(t, err)
			require.Equal(t, c.ID, again.ID)
			checks, audits, events := f.recorded(t, s.ID)
			require.Equal(t, []int{1, 1, 1}, []int{checks, audits, events})

			// Another trigger is another check, with its own event.
			other, err := kyc.CheckRegistry(f.ctx, f.inTx, reg, f.tenant, s.ID, "request:second")
			require.NoError(t, err)
			require.NotEqual(t, c.ID, other.ID)
			checks, audits, events = f.recorded(t, s.ID)
			require.Equal(t, []int{2, 2, 2}, []int{checks, audits, events})
		})
	}
}

// The event's status is the submission's when the check is recorded: a reviewer who claimed the
// submission while the registry was being asked is not reported as PENDING.
func TestRegistryCheckEventCarriesTheStatusAtRecording(t *testing.T) {
	f := newFixture(t)
	s := f.submit(t, "emp-reg-claimed")
	reg := &fakeRegistry{answer: kyc.RegistryAnswer{Found: true, IDStatus: "ACTIVE", NameMatches: false, DateOfBirthMatches: true}}
	n := 0
	inTx := func(fn func(pgx.Tx) error) error {
		if n++; n == 2 { // between the read and the recording: a reviewer claims it
			_, err := f.move(t, s.ID, kyc.Claim, kyc.Change{Reviewer: "admin-1", Now: t0})
			require.NoError(t, err)
		}
		return f.inTx(fn)
	}
	c, err := kyc.CheckRegistry(f.ctx, inTx, reg, f.tenant, s.ID, "request:claimed")
	require.NoError(t, err)
	evs := f.checkedEvents(t, s.ID)
	require.Len(t, evs, 1)
	var p struct{ Status, Outcome, CheckID string }
	require.NoError(t, json.Unmarshal(evs[0], &p))
	require.Equal(t, string(kyc.InReview), p.Status)
	require.Equal(t, string(kyc.RegistryMismatch), p.Outcome)
	require.Equal(t, c.ID, p.CheckID)
}

// A check whose transaction rolls back leaves no check, no audit row and no event; the registry
// not answering records nothing either. Asked again, the same trigger records the check once.
func TestRolledBackRegistryCheckWritesNoEvent(t *testing.T) {
	f := newFixture(t)
	s := f.submit(t, "emp-reg-rollback")
	reg := &fakeRegistry{answer: kyc.RegistryAnswer{Found: false}}
	boom := errors.New("the commit did not happen")
	n := 0
	failing := func(fn func(pgx.Tx) error) error {
		n++
		return f.inTx(func(tx pgx.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			if n == 2 { // the recording transaction: everything written, then rolled back
				return boom
			}
			return nil
		})
	}
	_, err := kyc.CheckRegistry(f.ctx, failing, reg, f.tenant, s.ID, "request:rollback")
	require.ErrorIs(t, err, boom)
	require.Equal(t, 2, n)
	checks, audits, events := f.recorded(t, s.ID)
	require.Equal(t, []int{0, 0, 0}, []int{checks, audits, events}, "a rolled-back check leaves nothing")

	down := &fakeRegistry{err: errors.New("registry 503")}
	_, err = kyc.CheckRegistry(f.ctx, f.inTx, down, f.tenant, s.ID, "request:rollback")
	require.ErrorIs(t, err, kyc.ErrRegistryUnavailable)
	checks, audits, events = f.recorded(t, s.ID)
	require.Equal(t, []int{0, 0, 0}, []int{checks, audits, events}, "no answer, nothing recorded")

	c, err := kyc.CheckRegistry(f.ctx, f.inTx, reg, f.tenant, s.ID, "request:rollback")
	require.NoError(t, err)
	require.Equal(t, kyc.RegistryNotFound, c.Outcome)
	checks, audits, events = f.recorded(t, s.ID)
	require.Equal(t, []int{1, 1, 1}, []int{checks, audits, events})
}

// The kyc-registry-lookup consumer on a real relay: a submission is looked up once, its check
// writes one kyc.registry_checked.v1, and that event does not come back to the lookup — the relay
// runs dry with the registry asked once. Handed its own event (or a redelivered request) directly,
// the consumer asks nothing and records nothing more.
func TestRegistryLookupDoesNotConsumeItsOwnEvent(t *testing.T) {
	f := newFixture(t)
	reg := &fakeRegistry{answer: kyc.RegistryAnswer{Found: true, IDStatus: "ACTIVE", NameMatches: true, DateOfBirthMatches: true}}
	relay, err := outbox.NewRelay(outbox.Config{Platform: f.d.Platform(t), Registerer: prometheus.NewRegistry(),
		MaxAttempts: 3, BackoffBase: time.Millisecond, BackoffCap: time.Millisecond})
	require.NoError(t, err)
	lookup := &kyc.RegistryLookup{DB: f.d.App, Registry: reg}
	require.Equal(t, kyc.EventVerificationRequested, lookup.Subscription().EventType)
	var (
		mu   sync.Mutex
		seen []outbox.Event
	)
	tap := outbox.ConsumerFunc("tap", func(_ context.Context, e outbox.Event) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e)
		return nil
	})
	require.NoError(t, relay.RegisterAll([]outbox.Subscription{lookup.Subscription(), {EventType: outbox.AllEvents, Consumer: tap}}))

	s := f.submit(t, "emp-reg-relay")
	claimed := 0
	for range 10 {
		res, err := relay.Poll(context.Background())
		require.NoError(t, err)
		require.Zero(t, res.DeadLettered)
		if res.Claimed == 0 {
			break
		}
		claimed += res.Claimed
	}
	require.Equal(t, 2, claimed, "the request and the check's event, each once")
	require.EqualValues(t, 1, reg.calls.Load(), "looked up once")
	checks, audits, events := f.recorded(t, s.ID)
	require.Equal(t, []int{1, 1, 1}, []int{checks, audits, events})
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	require.Equal(t, kyc.EventVerificationRequested, seen[0].Type)
	require.Equal(t, kyc.EventRegistryChecked, seen[1].Type)

	// Directly: its own event is not a request to look up.
	require.NoError(t, lookup.Consume(context.Background(), seen[1]))
	require.EqualValues(t, 1, reg.calls.Load(), "its own event asks nothing")
	checks, audits, events = f.recorded(t, s.ID)
	require.Equal(t, []int{1, 1, 1}, []int{checks, audits, events})
	// A redelivered request asks the registry (the lookup records after the answer) but records
	// the check it recorded the first time: no second check, no second event.
	require.NoError(t, lookup.Consume(context.Background(), seen[0]))
	checks, audits, events = f.recorded(t, s.ID)
	require.Equal(t, []int{1, 1, 1}, []int{checks, audits, events})
}
