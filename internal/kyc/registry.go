package kyc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// National-ID auto-lookup: every submission (and every amendment of one) is looked up in the
// national ID registry by the kyc-registry-lookup consumer of kyc.verification_requested.v1, and
// a reviewer can ask for the lookup again. The registry answers verdicts (is the id known and
// active, do the name and the date of birth match it), never its record; each answer is kept
// (app.kyc_registry_checks) against the content it was about, audited CheckNationalId, and
// announced as kyc.registry_checked.v1 in the same transaction. Approval refuses a submission
// whose current check is negative unless the reviewer acknowledges it with a note (api/kyc.go).

// RegistryAnswer is the registry's verdict on one national id, name and date of birth.
type RegistryAnswer struct {
	Found bool
	// IDStatus is ACTIVE, REVOKED or DECEASED; "" when not found.
	IDStatus           string
	NameMatches        bool
	DateOfBirthMatches bool
}

// Registry looks national ids up (the gateway's VerifyNationalId, in cmd/wagerail's wiring).
type Registry interface {
	// Name is the registry's configured name, recorded with each check.
	Name() string
	// VerifyNationalID asks the registry; an error means it did not answer (retry later).
	VerifyNationalID(ctx context.Context, nationalID, fullName string, dob time.Time) (RegistryAnswer, error)
}

// RegistryOutcome sums a check up.
type RegistryOutcome string

const (
	RegistryVerified RegistryOutcome = "VERIFIED"  // an active id whose name and date of birth match
	RegistryMismatch RegistryOutcome = "MISMATCH"  // an active id; the name or the date of birth differs
	RegistryNotFound RegistryOutcome = "NOT_FOUND" // the registry has no such id
	RegistryInactive RegistryOutcome = "INACTIVE"  // the id is revoked, or its holder deceased
)

// Outcome sums a up.
func (a RegistryAnswer) Outcome() RegistryOutcome {
	switch {
	case !a.Found:
		return RegistryNotFound
	case a.IDStatus != "ACTIVE":
		return RegistryInactive
	case !a.NameMatches || !a.DateOfBirthMatches:
		return RegistryMismatch
	}
	return RegistryVerified
}

// RegistryCheck is one recorded answer.
type RegistryCheck struct {
	ID                 string          `json:"id"`
	Registry           string          `json:"registry"`
	Outcome            RegistryOutcome `json:"outcome"`
	IDStatus           string          `json:"idStatus"`
	NameMatches        bool            `json:"nameMatches"`
	DateOfBirthMatches bool            `json:"dateOfBirthMatches"`
	CheckedBy          string          `json:"checkedBy"`
	CheckedAt          time.Time       `json:"checkedAt"`
	Digest             string          `json:"digest"`
}

// Negative reports whether the check speaks against the submission.
func (c RegistryCheck) Negative() bool { return c.Outcome != RegistryVerified }

// latestCheck is the columns subquery: the submission's newest check, as JSON (NULL: none).
const latestCheck = `(SELECT json_build_object('id', c.id, 'registry', c.registry, 'outcome', c.outcome,
		'idStatus', coalesce(c.id_status, ''), 'nameMatches', c.name_matches, 'dateOfBirthMatches', c.date_of_birth_matches,
		'checkedBy', c.checked_by, 'checkedAt', c.checked_at, 'digest', c.input_digest)
	FROM app.kyc_registry_checks c WHERE c.submission_id = s.id ORDER BY c.checked_at DESC, c.id DESC LIMIT 1)`

// currentCheck is the newest check when it is about s's current content (nil: none is).
func currentCheck(s Submission, raw []byte) (*RegistryCheck, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var c RegistryCheck
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("kyc: registry check: %w", err)
	}
	if c.Digest != s.registryDigest() {
		return nil, nil // about content the applicant has since amended
	}
	return &c, nil
}

// registryDigest fingerprints what a lookup sends: the national id, full name and date of birth.
func (s Submission) registryDigest() string {
	sum := sha256.Sum256([]byte(s.NationalID + "\x00" + s.FullName + "\x00" + s.DateOfBirth.Format(time.DateOnly)))
	return hex.EncodeToString(sum[:])
}

// Errors of CheckRegistry.
var (
	// ErrNotOpen: the submission is decided; nothing is looked up.
	ErrNotOpen = errors.New("kyc: the submission is no longer open")
	// ErrRegistryUnavailable: the registry did not answer; nothing is recorded.
	ErrRegistryUnavailable = errors.New("kyc: the national ID registry did not answer")
)

// TxRunner runs fn in a transaction that sees the submission's tenant: the runtime role's
// (tenancy.InTx) for the consumer, the cross-tenant path for a reviewer.
type TxRunner func(fn func(tx pgx.Tx) error) error

// CheckRegistry looks submission id of tenant up in reg and records the answer, audited
// CheckNationalId (actor and request id from ctx), with its EventRegistryChecked event, all in
// the one transaction that records it. trigger names what asked (an event, a reviewer's
// request): the same trigger records once, writes one event, and answers the check it recorded.
// The registry is called between two transactions, never inside one.
func CheckRegistry(ctx context.Context, inTx TxRunner, reg Registry, tenant, id, trigger string) (RegistryCheck, error) {
	var s Submission
	if err := inTx(func(tx pgx.Tx) (err error) {
		s, err = ByID(ctx, tx, tenant, id)
		return err
	}); err != nil {
		return RegistryCheck{}, err
	}
	if s.Status != Pending && s.Status != InReview {
		return RegistryCheck{}, ErrNotOpen
	}
	a, err := reg.VerifyNationalID(ctx, s.NationalID, s.FullName, s.DateOfBirth)
	if err != nil {
		return RegistryCheck{}, fmt.Errorf("%w: %w", ErrRegistryUnavailable, err)
	}
	var c RegistryCheck
	err = inTx(func(tx pgx.Tx) error {
		c, err = recordCheck(ctx, tx, tenant, s, reg.Name(), a, trigger)
		return err
	})
	return c, err
}

func recordCheck(ctx context.Context, tx pgx.Tx, tenant string, s Submission, registry string, a RegistryAnswer, trigger string) (RegistryCheck, error) {
	actor := tenancy.From(ctx).Actor
	c := RegistryCheck{ID: "kycreg_" + identity.NewID(), Registry: registry, Outcome: a.Outcome(), IDStatus: a.IDStatus,
		NameMatches: a.NameMatches, DateOfBirthMatches: a.DateOfBirthMatches, CheckedBy: actor, Digest: s.registryDigest()}
	var status *string
	if a.IDStatus != "" {
		status = &a.IDStatus
	}
	err := tx.QueryRow(ctx, `INSERT INTO app.kyc_registry_checks (id, tenant_id, submission_id, registry, input_digest, outcome,
			id_status, name_matches, date_of_birth_matches, trigger, checked_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (submission_id, trigger) DO NOTHING RETURNING checked_at`,
		c.ID, tenant, s.ID, registry, c.Digest, string(c.Outcome), status, c.NameMatches, c.DateOfBirthMatches, trigger, actor).Scan(&c.CheckedAt)
	if errors.Is(err, pgx.ErrNoRows) { // this trigger has recorded its check, its audit row and its event already
		return checkByTrigger(ctx, tx, s.ID, trigger)
	}
	if err != nil {
		return RegistryCheck{}, fmt.Errorf("kyc: record registry check: %w", err)
	}
	actx := tenancy.WithTenant(ctx, tenant) // the audit row and the event are the submission's tenant's
	if err := audit.Write(actx, tx, audit.Entry{Action: "CheckNationalId", Outcome: audit.Success, TargetType: "KycSubmission",
		TargetID: s.ID, Details: map[string]any{"registry": registry, "outcome": c.Outcome, "checkId": c.ID}}); err != nil {
		return RegistryCheck{}, err
	}
	// The submission as it stands now: a reviewer may have claimed or decided it while the
	// registry was being asked, and the event's status says so.
	cur, err := ByID(ctx, tx, tenant, s.ID)
	if err != nil {
		return RegistryCheck{}, err
	}
	if _, err := outbox.Write(actx, tx, EventRegistryChecked, checkedEvent(cur, c)); err != nil {
		return RegistryCheck{}, err
	}
	return c, nil
}

// checkedEvent is a recorded check's outbox payload: the submission's ids and state (event's) and
// the check's verdict. Never what was looked up — the national id, the name, the date of birth,
// nor their digest (a hash of a short structured id is guessed by trying them all) — and not the
// registry's per-field verdicts or the id's standing (deceased is personal data too): the outcome
// sums them up, and a reviewer reads the rest through the API.
func checkedEvent(s Submission, c RegistryCheck) map[string]any {
	p := event(s)
	p["checkId"], p["outcome"], p["registry"], p["checkedAt"] = c.ID, c.Outcome, c.Registry, c.CheckedAt.UTC()
	return p
}

func checkByTrigger(ctx context.Context, tx pgx.Tx, submission, trigger string) (RegistryCheck, error) {
	var c RegistryCheck
	var status *string
	err := tx.QueryRow(ctx, `SELECT id, registry, outcome, id_status, name_matches, date_of_birth_matches, checked_by, checked_at, input_digest
		FROM app.kyc_registry_checks WHERE submission_id = $1 AND trigger = $2`, submission, trigger).
		Scan(&c.ID, &c.Registry, &c.Outcome, &status, &c.NameMatches, &c.DateOfBirthMatches, &c.CheckedBy, &c.CheckedAt, &c.Digest)
	if err != nil {
		return RegistryCheck{}, fmt.Errorf("kyc: registry check: %w", err)
	}
	if status != nil {
		c.IDStatus = *status
	}
	return c, nil
}

// RegistryLookupConsumer is the lookup consumer's name (its delivery state and dead letters).
const RegistryLookupConsumer = "kyc-registry-lookup"

// RegistryLookup is the outbox consumer that looks every submitted (or amended) submission up.
// The relay retries a lookup the registry did not answer, with backoff, and dead-letters it when
// the attempts run out; a reviewer can then ask again (POST /api/kyc/<id>/registry-check).
type RegistryLookup struct {
	DB       *pgxpool.Pool // the runtime role's pool
	Registry Registry
}

// Name is the consumer's name.
func (l *RegistryLookup) Name() string { return RegistryLookupConsumer }

// Subscription is the consumer's row of the worker's table of consumers.
func (l *RegistryLookup) Subscription() outbox.Subscription {
	return outbox.Subscription{EventType: EventVerificationRequested, Consumer: l}
}

// The auto-lookup's events: the one it consumes, and the one each recorded check writes.
const (
	// EventVerificationRequested is the event a submission and an amendment write.
	EventVerificationRequested = "kyc.verification_requested.v1"
	// EventRegistryChecked is the event each recorded registry check writes (consumer's and
	// reviewer's alike): submissionId, subjectType, subjectId, status, checkId, outcome, registry,
	// checkedAt. The lookup does not take it: a check must never ask for another.
	EventRegistryChecked = "kyc.registry_checked.v1"
)

// Consume looks the event's submission up, once per event; a decided submission is skipped. Any
// event but EventVerificationRequested is done with nothing looked up: above all the lookup's own
// EventRegistryChecked, which would otherwise ask the registry again, and again, should the
// consumer ever be subscribed to more than its Subscription says.
func (l *RegistryLookup) Consume(ctx context.Context, e outbox.Event) error {
	if e.Type != EventVerificationRequested {
		return nil
	}
	var p struct {
		SubmissionID string `json:"submissionId"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil || e.TenantID == "" || p.SubmissionID == "" {
		return fmt.Errorf("kyc: registry lookup: event %s names no submission", e.ID)
	}
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: e.TenantID, Actor: tenancy.System(RegistryLookupConsumer), RequestID: e.ID})
	inTx := func(fn func(pgx.Tx) error) error { return tenancy.InTx(ctx, l.DB, fn) }
	_, err := CheckRegistry(ctx, inTx, l.Registry, e.TenantID, p.SubmissionID, "event:"+e.ID)
	if errors.Is(err, ErrNotOpen) || errors.Is(err, ErrNotFound) {
		return nil // decided before the lookup ran, or gone: nothing to inform
	}
	return err
}
