package sanctions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/personname"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// SubjectType is what a check is about.
type SubjectType string

const (
	// SubjectUser: a login user; the subject id is the user id.
	SubjectUser SubjectType = "USER"
	// SubjectEmployee: an organization's employee; the subject id is the employee id.
	SubjectEmployee SubjectType = "EMPLOYEE"
)

// Subject is who was screened, in one organization.
type Subject struct {
	Type SubjectType
	ID   string
	// UserID is the login user the subject is, when known: for SubjectUser it is ID (filled in
	// when empty); for an employee, their linked user. That user reads the check through
	// GET /api/me/sanctions.
	UserID string
}

// Trigger says why a check ran.
type Trigger string

const (
	// TriggerScreen: a screening the application asked for (KYC approval).
	TriggerScreen Trigger = "SCREEN"
	// TriggerRescreen: the re-screening after a list ingest (Rescreen).
	TriggerRescreen Trigger = "RESCREEN"
)

// Decision is a reviewer's verdict on a REVIEW or BLOCK check.
type Decision string

const (
	// Cleared: the REVIEW match is a false positive; the gate opens. Only a REVIEW can be
	// cleared: a BLOCK is never overridden in the application.
	Cleared Decision = "CLEARED"
	// Confirmed: the match stands; the gate stays closed.
	Confirmed Decision = "CONFIRMED"
)

// Check is one recorded screening of a subject.
type Check struct {
	ID       string
	Seq      int64 // the order checks were recorded in; a subject's latest check has the highest
	TenantID string
	Subject  Subject
	Name     string
	// OtherNames are the subject's other names screened with Name (Result.OtherNames).
	OtherNames   []string
	DOB          string // YYYY-MM-DD, "" when none
	Outcome      Outcome
	Score        float64
	Evidence     []Evidence
	ListVersions []int64
	Trigger      Trigger
	NeedsReview  bool
	// Reason is the screening's Result.Reason: why it is a REVIEW whatever the lists hold.
	Reason string
	// NormalizerVersion is the version of the matching rules the check ran with; the gate treats
	// a check made by older rules as stale.
	NormalizerVersion int
	// Decision, ReviewedBy, ReviewedAt and ReviewNote are set once a reviewer decided.
	Decision   Decision
	ReviewedBy string
	ReviewedAt *time.Time
	ReviewNote string
	CreatedAt  time.Time
}

// Passes reports whether the check lets money move: CLEAR, or a REVIEW a reviewer cleared.
func (c Check) Passes() bool {
	return c.Outcome == Clear || (c.Outcome == Review && c.Decision == Cleared)
}

// Errors of the checks' store.
var (
	ErrNotFound      = errors.New("sanctions: no such check")
	ErrNotReviewable = errors.New("sanctions: the check does not await a review decision")
	ErrClearBlock    = errors.New("sanctions: a BLOCK cannot be cleared; only a REVIEW can")
)

// MaxNoteBytes bounds a reviewer's note.
const MaxNoteBytes = 1000

// validSubject checks a tenant and subject.
func validSubject(tenant string, s Subject) (Subject, error) {
	if err := field.Identifier("tenant", tenant, 0); err != nil {
		return s, err
	}
	switch s.Type {
	case SubjectUser:
		if s.UserID == "" {
			s.UserID = s.ID
		}
		if s.UserID != s.ID {
			return s, &field.Error{Field: "subject", Problem: "of type USER is its own user"}
		}
	case SubjectEmployee:
	default:
		return s, &field.Error{Field: "subjectType", Problem: "must be USER or EMPLOYEE"}
	}
	if err := field.Identifier("subjectId", s.ID, 0); err != nil {
		return s, err
	}
	if s.UserID != "" {
		if err := field.Identifier("userId", s.UserID, 0); err != nil {
			return s, err
		}
	}
	return s, nil
}

// RecordCheck records res, a Screen result, as subject's latest check in tenant, with its audit
// row (SanctionsScreened), in tx — the caller's transaction, so the check commits exactly with
// the decision it informed (a KYC approval, or the refusal of one). tx is scoped to tenant
// (tenancy.InTx) or on the cross-tenant path. A REVIEW or BLOCK is recorded as needing review.
// ctx carries the actor.
//
// Errors: *field.Error for a bad tenant or subject, an error for a result Screen did not make
// (no list versions, unknown outcome), a database error.
func RecordCheck(ctx context.Context, tx pgx.Tx, tenant string, subject Subject, res Result) (Check, error) {
	return record(ctx, tx, tenant, subject, res, TriggerScreen, nil)
}

func record(ctx context.Context, tx pgx.Tx, tenant string, subject Subject, res Result, trig Trigger, carried *Check) (Check, error) {
	subject, err := validSubject(tenant, subject)
	if err != nil {
		return Check{}, err
	}
	switch {
	case len(res.ListVersions) == 0:
		return Check{}, errors.New("sanctions.record_check: the result names no list version (use Screen's result)")
	case res.Outcome != Clear && res.Outcome != Review && res.Outcome != Block:
		return Check{}, fmt.Errorf("sanctions.record_check: unknown outcome %q", res.Outcome)
	case res.Score < 0 || res.Score > 1:
		return Check{}, fmt.Errorf("sanctions.record_check: score %v out of range", res.Score)
	case res.NormalizerVersion < 1 || res.NormalizerVersion > NormalizerVersion:
		return Check{}, fmt.Errorf("sanctions.record_check: normaliser version %d unknown (use Screen's result)", res.NormalizerVersion)
	}
	// As Screen checks it: a name stored before the edge refused invisible characters is
	// recorded as it was screened.
	if len(res.OtherNames) > MaxOtherNames {
		return Check{}, fmt.Errorf("sanctions.record_check: %d other names (at most %d)", len(res.OtherNames), MaxOtherNames)
	}
	for _, n := range append([]string{res.Name}, res.OtherNames...) {
		if err := field.Name("name", strings.TrimSpace(personname.StripIgnorable(n))); err != nil {
			return Check{}, err
		}
	}
	evidence := res.Evidence
	if evidence == nil {
		evidence = []Evidence{}
	}
	raw, err := json.Marshal(evidence)
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.record_check: %w", err)
	}
	versions := slices.Clone(res.ListVersions)
	slices.Sort(versions)
	c := Check{ID: uuid.Must(uuid.NewV7()).String(), TenantID: tenant, Subject: subject, Name: res.Name, OtherNames: res.OtherNames, DOB: res.DOB,
		Outcome: res.Outcome, Score: res.Score, Evidence: evidence, ListVersions: versions, Trigger: trig,
		NeedsReview: res.Outcome != Clear, Reason: res.Reason, NormalizerVersion: res.NormalizerVersion}
	if carried != nil {
		c.NeedsReview = false
		c.Decision, c.ReviewedBy, c.ReviewedAt = carried.Decision, carried.ReviewedBy, carried.ReviewedAt
		c.ReviewNote = "carried forward from check " + carried.ID
	}
	var dob *string
	if c.DOB != "" {
		dob = &c.DOB
	}
	err = tx.QueryRow(ctx, `
		INSERT INTO app.sanctions_checks (id, tenant_id, subject_type, subject_id, user_id, name_screened, dob, outcome, score,
			evidence, list_versions, trigger, needs_review, review_decision, reviewed_by, reviewed_at, review_note, review_reason,
			normalizer_version, other_names)
		VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6, $7::date, $8, $9, $10, $11, $12, $13, NULLIF($14, ''), NULLIF($15, ''), $16, NULLIF($17, ''),
			NULLIF($18, ''), $19, $20)
		RETURNING seq, created_at`,
		c.ID, tenant, string(subject.Type), subject.ID, subject.UserID, c.Name, dob, string(c.Outcome), c.Score, raw, versions,
		string(trig), c.NeedsReview, string(c.Decision), c.ReviewedBy, c.ReviewedAt, c.ReviewNote, c.Reason,
		c.NormalizerVersion, append([]string{}, c.OtherNames...)).Scan(&c.Seq, &c.CreatedAt)
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.record_check: %w", err)
	}
	// The audit row names the subject and the verdict, never the name or date of birth (PII).
	err = audit.Write(tenancy.WithTenant(ctx, tenant), tx, audit.Entry{Action: ActionScreened, Outcome: audit.Success,
		TargetType: "SanctionsCheck", TargetID: c.ID, Details: map[string]any{"subjectType": subject.Type, "subjectId": subject.ID,
			"outcome": c.Outcome, "needsReview": c.NeedsReview, "trigger": trig, "listVersions": versions, "matches": len(evidence)}})
	if err != nil {
		return Check{}, err
	}
	return c, nil
}

// Gate errors: why the sanctions gate refuses a subject. Every other error (a database error, a
// cancelled context) refuses too: the gate fails closed.
var (
	ErrSanctionsBlocked = errors.New("sanctions: the subject matches a sanctions list (BLOCK)")
	ErrSanctionsReview  = errors.New("sanctions: the subject's possible sanctions match awaits a reviewer")
	ErrNoCheck          = errors.New("sanctions: the subject has never been screened")
	// ErrCheckStale: the latest check ran against list versions that are no longer active, or
	// under matching rules older than NormalizerVersion; a re-screening (wagerail sanctions
	// rescreen; ingest runs one) must run first.
	ErrCheckStale = errors.New("sanctions: the subject's latest screening predates the active sanctions lists")
)

// Stable codes of the gate's refusals, for Temporal error types and API error codes.
const (
	CodeBlocked     = "SANCTIONS_BLOCKED"
	CodeReview      = "SANCTIONS_REVIEW_PENDING"
	CodeNoCheck     = "SANCTIONS_NOT_SCREENED"
	CodeStale       = "SANCTIONS_LIST_STALE"
	CodeUnavailable = "SANCTIONS_GATE_UNAVAILABLE"
)

// GateCode is the stable code of a Gate error: one of the Code constants (CodeUnavailable for
// any error that is not a decision, such as a database error), "" for nil.
func GateCode(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrSanctionsBlocked):
		return CodeBlocked
	case errors.Is(err, ErrSanctionsReview):
		return CodeReview
	case errors.Is(err, ErrNoCheck):
		return CodeNoCheck
	case errors.Is(err, ErrCheckStale):
		return CodeStale
	}
	return CodeUnavailable
}

// Gate is the pre-disburse sanctions gate the money sagas call: nil only when the subject's latest
// check in tenant passes (CLEAR, or a REVIEW a reviewer cleared) and ran against exactly the
// list versions active now, under the current matching rules (NormalizerVersion: a CLEAR under
// older rules may be a name they failed to see through). Otherwise ErrSanctionsBlocked (BLOCK, or a REVIEW confirmed),
// ErrSanctionsReview (a REVIEW nobody decided yet), ErrNoCheck, ErrCheckStale, or the error that
// kept it from deciding — never nil by default: it fails closed. q is a transaction scoped to
// tenant (or the cross-tenant path); the tenant is also matched explicitly.
func Gate(ctx context.Context, q db.Querier, tenant string, subjectType SubjectType, subjectID string) error {
	_, err := gate(ctx, q, tenant, subjectType, subjectID)
	return err
}

// gate is Gate that also answers the names the latest check screened (when it passes), in the
// same read.
func gate(ctx context.Context, q db.Querier, tenant string, subjectType SubjectType, subjectID string) (screened []string, err error) {
	if _, err := validSubject(tenant, Subject{Type: subjectType, ID: subjectID}); err != nil {
		return nil, fmt.Errorf("sanctions.gate: %w", err)
	}
	var id, outcome string
	var decision *string
	var versions, active []int64
	var normalizer int
	err = q.QueryRow(ctx, `
		SELECT c.id, c.outcome, c.review_decision, c.list_versions, c.normalizer_version, c.name_screened || c.other_names,
			(SELECT coalesce(array_agg(v.id ORDER BY v.id), '{}') FROM app.sanctions_list_versions v WHERE v.active)
		FROM app.sanctions_checks c
		WHERE c.tenant_id = $1 AND c.subject_type = $2 AND c.subject_id = $3
		ORDER BY c.seq DESC LIMIT 1`, tenant, string(subjectType), subjectID).Scan(&id, &outcome, &decision, &versions, &normalizer, &screened, &active)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("sanctions.gate: %s %s: %w", subjectType, subjectID, ErrNoCheck)
	}
	if err != nil {
		return nil, fmt.Errorf("sanctions.gate: %w", err)
	}
	c := Check{Outcome: Outcome(outcome)}
	if decision != nil {
		c.Decision = Decision(*decision)
	}
	switch {
	case c.Outcome == Block || c.Decision == Confirmed:
		return nil, fmt.Errorf("sanctions.gate: check %s: %w", id, ErrSanctionsBlocked)
	case !c.Passes():
		return nil, fmt.Errorf("sanctions.gate: check %s: %w", id, ErrSanctionsReview)
	case len(active) == 0 || !slices.Equal(versions, active):
		return nil, fmt.Errorf("sanctions.gate: check %s: %w", id, ErrCheckStale)
	case normalizer < NormalizerVersion:
		return nil, fmt.Errorf("sanctions.gate: check %s made by matching rules %d (now %d): %w", id, normalizer, NormalizerVersion, ErrCheckStale)
	}
	return screened, nil
}

// GateAs is Gate for a subject whose money is paid under name (an employee's name on record):
// when the latest check screened another name (the name on a KYC document, or the record's name
// before a rename), name is screened now against the active lists and must be CLEAR as well —
// a record renamed to a listed name after a CLEAR check is held back: ErrSanctionsBlocked for a
// BLOCK, ErrSanctionsReview for a REVIEW (a new KYC screens and records the name for a
// reviewer). Screening writes nothing; ErrNoActiveList and ErrListOutdated mean it cannot decide.
// tx is the caller's transaction, as Gate's q.
func GateAs(ctx context.Context, tx pgx.Tx, tenant string, subjectType SubjectType, subjectID, name string) error {
	screened, err := gate(ctx, tx, tenant, subjectType, subjectID)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(screened, func(s string) bool { return Key(s) == Key(name) }) {
		return nil
	}
	res, err := Screen(ctx, tx, name, time.Time{})
	var fe *field.Error
	switch {
	case errors.As(err, &fe):
		return fmt.Errorf("sanctions.gate: the name on record cannot be screened (%s): %w", fe.Problem, ErrSanctionsReview)
	case err != nil:
		return fmt.Errorf("sanctions.gate: %w", err)
	case res.Outcome == Block:
		return fmt.Errorf("sanctions.gate: the name on record, not the one screened: %w", ErrSanctionsBlocked)
	case res.Outcome != Clear:
		return fmt.Errorf("sanctions.gate: the name on record, not the one screened: %w", ErrSanctionsReview)
	}
	return nil
}

const checkColumns = `id, seq, tenant_id, subject_type, subject_id, coalesce(user_id, ''), name_screened,
	coalesce(to_char(dob, 'YYYY-MM-DD'), ''), outcome, score, evidence, list_versions, trigger, needs_review,
	coalesce(review_decision, ''), coalesce(reviewed_by, ''), reviewed_at, coalesce(review_note, ''), created_at,
	coalesce(review_reason, ''), normalizer_version, other_names`

func scanCheck(r pgx.CollectableRow) (Check, error) {
	var c Check
	var typ, outcome, trig, decision string
	var raw []byte
	err := r.Scan(&c.ID, &c.Seq, &c.TenantID, &typ, &c.Subject.ID, &c.Subject.UserID, &c.Name, &c.DOB, &outcome, &c.Score,
		&raw, &c.ListVersions, &trig, &c.NeedsReview, &decision, &c.ReviewedBy, &c.ReviewedAt, &c.ReviewNote, &c.CreatedAt,
		&c.Reason, &c.NormalizerVersion, &c.OtherNames)
	if err != nil {
		return c, err
	}
	if len(c.OtherNames) == 0 {
		c.OtherNames = nil
	}
	c.Subject.Type, c.Outcome, c.Trigger, c.Decision = SubjectType(typ), Outcome(outcome), Trigger(trig), Decision(decision)
	if err := json.Unmarshal(raw, &c.Evidence); err != nil {
		return c, fmt.Errorf("evidence: %w", err)
	}
	return c, nil
}

// CheckByID reads one check (ErrNotFound when q cannot see it).
func CheckByID(ctx context.Context, q db.Querier, id string) (Check, error) {
	rows, err := q.Query(ctx, `SELECT `+checkColumns+` FROM app.sanctions_checks WHERE id = $1`, id)
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.check: %w", err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCheck)
	if errors.Is(err, pgx.ErrNoRows) {
		return Check{}, ErrNotFound
	}
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.check: %w", err)
	}
	return c, nil
}

// LatestCheck is the subject's latest check in tenant (ErrNotFound when none).
func LatestCheck(ctx context.Context, q db.Querier, tenant string, subjectType SubjectType, subjectID string) (Check, error) {
	rows, err := q.Query(ctx, `SELECT `+checkColumns+` FROM app.sanctions_checks
		WHERE tenant_id = $1 AND subject_type = $2 AND subject_id = $3 ORDER BY seq DESC LIMIT 1`, tenant, string(subjectType), subjectID)
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.latest_check: %w", err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCheck)
	if errors.Is(err, pgx.ErrNoRows) {
		return Check{}, ErrNotFound
	}
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.latest_check: %w", err)
	}
	return c, nil
}

// CheckFilter selects checks for a list, newest first.
type CheckFilter struct {
	Outcome     Outcome // "" for any
	NeedsReview *bool
	TenantID    string // "" for any the transaction can see
	UserID      string // "" for any
	// Before is a cursor: only checks recorded before the one with this seq (0: from the newest).
	Before int64
	Limit  int // 1 to MaxListChecks
}

// MaxListChecks bounds one ListChecks call.
const MaxListChecks = 1000

// ListChecks lists the checks q can see that match f, newest first: on the cross-tenant path
// every tenant's, scoped to a user (tenancy.InUserTx) that user's own.
func ListChecks(ctx context.Context, q db.Querier, f CheckFilter) ([]Check, error) {
	if f.Limit < 1 || f.Limit > MaxListChecks {
		return nil, fmt.Errorf("sanctions.list_checks: limit %d out of 1..%d", f.Limit, MaxListChecks)
	}
	var w db.Where
	w.AddIf(f.Outcome != "", "outcome = ?", string(f.Outcome))
	if f.NeedsReview != nil {
		w.Add("needs_review = ?", *f.NeedsReview)
	}
	w.AddIf(f.TenantID != "", "tenant_id = ?", f.TenantID)
	w.AddIf(f.UserID != "", "user_id = ?", f.UserID)
	w.AddIf(f.Before > 0, "seq < ?", f.Before)
	limit := w.Next()
	rows, err := q.Query(ctx, `SELECT `+checkColumns+` FROM app.sanctions_checks WHERE `+w.String()+` ORDER BY seq DESC LIMIT `+limit,
		append(w.Args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("sanctions.list_checks: %w", err)
	}
	cs, err := pgx.CollectRows(rows, scanCheck)
	if err != nil {
		return nil, fmt.Errorf("sanctions.list_checks: %w", err)
	}
	return cs, nil
}

// ResolveReview records a reviewer's decision on a check that needs review, with its audit row
// (SanctionsReviewDecided, in the check's tenant), in tx — a cross-tenant transaction (only the
// platform role may change a check). A cleared REVIEW opens the gate if it is the subject's
// latest check; CONFIRMED keeps it closed.
//
// Errors: ErrNotFound, ErrNotReviewable (nothing to decide, or already decided), ErrClearBlock,
// *field.Error for a bad decision or note, a database error.
func ResolveReview(ctx context.Context, tx pgx.Tx, checkID string, d Decision, reviewer, note string, now time.Time) (Check, error) {
	if d != Cleared && d != Confirmed {
		return Check{}, &field.Error{Field: "decision", Problem: "must be CLEARED or CONFIRMED"}
	}
	if err := field.Text("note", note, MaxNoteBytes); err != nil {
		return Check{}, err
	}
	rows, err := tx.Query(ctx, `SELECT `+checkColumns+` FROM app.sanctions_checks WHERE id = $1 FOR UPDATE`, checkID)
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.resolve_review: %w", err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCheck)
	if errors.Is(err, pgx.ErrNoRows) {
		return Check{}, ErrNotFound
	}
	if err != nil {
		return Check{}, fmt.Errorf("sanctions.resolve_review: %w", err)
	}
	if !c.NeedsReview {
		return c, ErrNotReviewable
	}
	if d == Cleared && c.Outcome != Review {
		return c, ErrClearBlock
	}
	at := now.UTC()
	if _, err := tx.Exec(ctx, `UPDATE app.sanctions_checks SET needs_review = false, review_decision = $2, reviewed_by = $3,
		reviewed_at = $4, review_note = NULLIF($5, '') WHERE id = $1`, c.ID, string(d), reviewer, at, note); err != nil {
		return Check{}, fmt.Errorf("sanctions.resolve_review: %w", err)
	}
	c.NeedsReview, c.Decision, c.ReviewedBy, c.ReviewedAt, c.ReviewNote = false, d, reviewer, &at, note
	err = audit.Write(tenancy.WithTenant(ctx, c.TenantID), tx, audit.Entry{Action: ActionReviewDecided, Outcome: audit.Success,
		TargetType: "SanctionsCheck", TargetID: c.ID, Details: map[string]any{"decision": d, "outcome": c.Outcome,
			"subjectType": c.Subject.Type, "subjectId": c.Subject.ID}})
	if err != nil {
		return Check{}, err
	}
	return c, nil
}

// RescreenActor is who re-screening acts as.
var RescreenActor = tenancy.System("sanctions-rescreen")

// EventReviewRequired is the outbox event a re-screening writes for each subject with a new hit,
// in the subject's tenant: {checkId, subjectType, subjectId, outcome}.
const EventReviewRequired = "sanctions.review_required.v1"

// rescreenBatch is how many subjects one re-screening transaction takes.
const rescreenBatch = 200

// RescreenReport is what Rescreen did.
type RescreenReport struct {
	// Rescreened counts subjects screened again.
	Rescreened int `json:"rescreened"`
	// NewHits counts those with a match they did not have (or that was not cleared) before,
	// recorded as needing review.
	NewHits int `json:"newHits"`
	// Renormalized counts the active list versions whose names were rewritten under the current
	// matching rules first (see Renormalize).
	Renormalized int `json:"renormalized"`
}

// Rescreen screens again, against the active list versions, every subject of every tenant whose
// latest check passes the gate (CLEAR, or a REVIEW cleared by a reviewer) but ran against other
// versions or under older matching rules (NormalizerVersion), and records the new check (trigger RESCREEN). A match the subject did not have before
// is a new hit: recorded as needing review (the gate closes) with an EventReviewRequired event. A
// REVIEW whose matches are all entries a reviewer already cleared keeps that decision (carried
// forward). Subjects whose latest check is a REVIEW nobody decided, or a BLOCK, are left alone:
// their gate is closed already.
//
// It runs on the audited cross-tenant path as RescreenActor, in batches of one transaction each,
// so it can be run again after a failure and continues where it stopped (a re-screened subject's
// latest check is current). platform must log in as wagerail_platform. It first brings the
// active lists to the current matching rules (Renormalize), without which Screen refuses.
func Rescreen(ctx context.Context, platform db.Beginner) (RescreenReport, error) {
	ctx = tenancy.WithActor(ctx, RescreenActor)
	var rep RescreenReport
	var err error
	if rep.Renormalized, err = Renormalize(ctx, platform); err != nil {
		return rep, err
	}
	for {
		n, hits := 0, 0
		err := crosstenant.Tx(ctx, platform, "sanctions re-screening after a list ingest", func(tx pgx.Tx) error {
			n, hits = 0, 0
			active, _, err := activeVersions(ctx, tx)
			if err != nil {
				return err
			}
			if len(active) == 0 {
				return nil
			}
			rows, err := tx.Query(ctx, `
				WITH latest AS (
					SELECT DISTINCT ON (tenant_id, subject_type, subject_id) *
					FROM app.sanctions_checks ORDER BY tenant_id, subject_type, subject_id, seq DESC)
				SELECT `+checkColumns+` FROM latest
				WHERE (outcome = 'CLEAR' OR (outcome = 'REVIEW' AND review_decision = 'CLEARED'))
					AND (list_versions <> $1 OR normalizer_version < $3)
				ORDER BY seq LIMIT $2`, active, rescreenBatch, NormalizerVersion)
			if err != nil {
				return fmt.Errorf("sanctions.rescreen: %w", err)
			}
			due, err := pgx.CollectRows(rows, scanCheck)
			if err != nil {
				return fmt.Errorf("sanctions.rescreen: %w", err)
			}
			for _, prev := range due {
				newHit, err := rescreenOne(ctx, tx, prev)
				if err != nil {
					return err
				}
				n++
				if newHit {
					hits++
				}
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		rep.Rescreened += n
		rep.NewHits += hits
		if n == 0 {
			return rep, nil
		}
	}
}

// rescreenOne screens prev's subject again and records the result; it reports a new hit.
func rescreenOne(ctx context.Context, tx pgx.Tx, prev Check) (bool, error) {
	var dob time.Time
	if prev.DOB != "" {
		d, err := time.Parse(time.DateOnly, prev.DOB)
		if err != nil {
			return false, fmt.Errorf("sanctions.rescreen: check %s: %w", prev.ID, err)
		}
		dob = d
	}
	// Every name the subject was screened under is screened again; the worse answer decides.
	var res Result
	for i, name := range append([]string{prev.Name}, prev.OtherNames...) {
		r, err := Screen(ctx, tx, name, dob)
		if err != nil {
			return false, fmt.Errorf("sanctions.rescreen: check %s: %w", prev.ID, err)
		}
		if i == 0 {
			res = r
		} else {
			res = Worse(res, r)
		}
	}
	var carried *Check
	// A cleared REVIEW stays cleared only for the same matches and the same reason (a name the
	// screener now cannot read is a new question for the reviewer).
	if res.Outcome == Review && prev.Decision == Cleared && res.Reason == prev.Reason {
		cleared := map[string]bool{}
		for _, e := range prev.Evidence {
			cleared[string(e.ListSource)+"\x00"+e.SourceRef] = true
		}
		all := true
		for _, e := range res.Evidence {
			all = all && cleared[string(e.ListSource)+"\x00"+e.SourceRef]
		}
		if all {
			carried = &prev
		}
	}
	c, err := record(ctx, tx, prev.TenantID, prev.Subject, res, TriggerRescreen, carried)
	if err != nil {
		return false, err
	}
	if !c.NeedsReview {
		return false, nil
	}
	_, err = outbox.Write(tenancy.WithTenant(ctx, prev.TenantID), tx, EventReviewRequired, map[string]any{
		"checkId": c.ID, "subjectType": c.Subject.Type, "subjectId": c.Subject.ID, "outcome": c.Outcome})
	return true, err
}

// AwaitingReview counts the checks a platform admin has still to decide (needs_review), across
// every tenant the transaction sees (the platform dashboard).
func AwaitingReview(ctx context.Context, q db.Writer) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM app.sanctions_checks WHERE needs_review`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sanctions: awaiting review: %w", err)
	}
	return n, nil
}
