package kyc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// Status is a submission's state.
type Status string

const (
	Pending  Status = "PENDING"
	InReview Status = "IN_REVIEW"
	Approved Status = "APPROVED"
	Rejected Status = "REJECTED"
	Expired  Status = "EXPIRED"
)

// SubjectType says what a submission verifies.
type SubjectType string

const (
	SubjectEmployee SubjectType = "EMPLOYEE"
	SubjectUser     SubjectType = "USER"
)

// DefaultValidity is how long an approval holds unless configured otherwise.
const DefaultValidity = 365 * 24 * time.Hour

// Errors; the API maps each to one code.
var (
	ErrNotFound          = errors.New("kyc: not found")
	ErrInvalidTransition = errors.New("kyc: transition not allowed from this state")
	ErrOpenSubmission    = errors.New("kyc: the subject already has a submission under review")
	ErrNotApproved       = errors.New("kyc: the subject's KYC is not approved")
	ErrExpired           = errors.New("kyc: the subject's KYC approval has expired")
)

// Document is one submitted document: an upload of the tenant and the hash its content had.
type Document struct {
	Type      string `json:"type"`
	UploadKey string `json:"uploadKey"`
	SHA256    string `json:"sha256"`
}

// Submission is one KYC submission.
type Submission struct {
	ID              string
	TenantID        string
	SubjectType     SubjectType
	SubjectID       string
	FullName        string
	NationalID      string
	DateOfBirth     time.Time
	PhotoKey        string
	Status          Status
	RejectionReason string
	ClaimedBy       string
	DecidedBy       string
	DecidedAt       time.Time
	ValidUntil      time.Time
	SubmittedBy     string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Documents       []Document // the photo first, then by type
	// RegistryCheck is the national ID registry's newest answer about the current content (nil:
	// not looked up yet, or only before the applicant amended it).
	RegistryCheck *RegistryCheck
}

const columns = `id, tenant_id, subject_type, subject_id, full_name, national_id, date_of_birth, photo_key, status,
	coalesce(rejection_reason, ''), coalesce(claimed_by, ''), coalesce(decided_by, ''), coalesce(decided_at, 'epoch'),
	coalesce(valid_until, 'epoch'), submitted_by, created_at, updated_at,
	coalesce((SELECT json_agg(json_build_object('type', d.doc_type, 'uploadKey', d.upload_key, 'sha256', d.sha256) ORDER BY d.doc_type <> 'photo', d.doc_type)
	          FROM app.kyc_documents d WHERE d.submission_id = s.id), '[]'), ` + latestCheck

func scan(row pgx.Row) (Submission, error) {
	var s Submission
	var docs, check []byte
	err := row.Scan(&s.ID, &s.TenantID, &s.SubjectType, &s.SubjectID, &s.FullName, &s.NationalID, &s.DateOfBirth, &s.PhotoKey,
		&s.Status, &s.RejectionReason, &s.ClaimedBy, &s.DecidedBy, &s.DecidedAt, &s.ValidUntil, &s.SubmittedBy,
		&s.CreatedAt, &s.UpdatedAt, &docs, &check)
	if errors.Is(err, pgx.ErrNoRows) {
		return Submission{}, ErrNotFound
	}
	if err != nil {
		return Submission{}, fmt.Errorf("kyc: submission: %w", err)
	}
	if s.DecidedAt.Unix() == 0 {
		s.DecidedAt = time.Time{}
	}
	if s.ValidUntil.Unix() == 0 {
		s.ValidUntil = time.Time{}
	}
	if err := json.Unmarshal(docs, &s.Documents); err != nil {
		return Submission{}, fmt.Errorf("kyc: documents: %w", err)
	}
	if s.RegistryCheck, err = currentCheck(s, check); err != nil {
		return Submission{}, err
	}
	return s, nil
}

// NewSubmission is what Submit needs (validated by the caller).
type NewSubmission struct {
	SubjectType SubjectType
	SubjectID   string
	FullName    string
	NationalID  string
	DateOfBirth time.Time
	PhotoKey    string
	Documents   []Document
	SubmittedBy string
}

// Submit creates a PENDING submission for tenant with its documents, its audit row
// (SubmitKyc) and its kyc.verification_requested.v1 event, in tx (scoped to tenant, actor set).
//
// A subject whose open submission a reviewer sent back for more information (PENDING with the
// reviewer's note) answers it by submitting again: that submission is amended in place
// (amended true) with the new name, national id, date of birth, photo and documents, its note
// cleared, audited ResubmitKyc, and the event sent again, so it returns to the reviewers' queue
// as the same case. Any other open submission refuses: ErrOpenSubmission.
func Submit(ctx context.Context, tx pgx.Tx, tenant string, n NewSubmission) (s Submission, amended bool, err error) {
	var openID, note string
	var status Status
	err = tx.QueryRow(ctx, `SELECT id, status, coalesce(rejection_reason, '') FROM app.kyc_submissions
		WHERE tenant_id = $1 AND subject_type = $2 AND subject_id = $3 AND status IN ('PENDING', 'IN_REVIEW') FOR UPDATE`,
		tenant, string(n.SubjectType), n.SubjectID).Scan(&openID, &status, &note)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		s, err = create(ctx, tx, tenant, n)
		return s, false, err
	case err != nil:
		return Submission{}, false, fmt.Errorf("kyc: open submission: %w", err)
	case status != Pending || note == "":
		return Submission{}, false, ErrOpenSubmission
	}
	s, err = amend(ctx, tx, tenant, openID, n)
	return s, true, err
}

func create(ctx context.Context, tx pgx.Tx, tenant string, n NewSubmission) (Submission, error) {
	id := "kyc_" + identity.NewID()
	_, err := tx.Exec(ctx, `INSERT INTO app.kyc_submissions (id, tenant_id, subject_type, subject_id, full_name,
			national_id, date_of_birth, photo_key, status, submitted_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'PENDING', $9)`,
		id, tenant, string(n.SubjectType), n.SubjectID, n.FullName, n.NationalID, n.DateOfBirth, n.PhotoKey, n.SubmittedBy)
	if db.IsCode(err, pgerrcode.UniqueViolation) {
		return Submission{}, ErrOpenSubmission // a racing submission for the same subject
	}
	if err != nil {
		return Submission{}, fmt.Errorf("kyc: submit: %w", err)
	}
	return recordSubmitted(ctx, tx, tenant, id, n.Documents, "SubmitKyc")
}

// amend replaces the content of submission id (PENDING, sent back with a note, locked by the
// caller). Documents are bound per type: a type submitted again is the new upload, one not
// submitted again keeps its earlier upload (rows are never deleted).
func amend(ctx context.Context, tx pgx.Tx, tenant, id string, n NewSubmission) (Submission, error) {
	if _, err := tx.Exec(ctx, `UPDATE app.kyc_submissions SET full_name = $3, national_id = $4, date_of_birth = $5,
			photo_key = $6, submitted_by = $7, rejection_reason = NULL, updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenant, id, n.FullName, n.NationalID, n.DateOfBirth, n.PhotoKey, n.SubmittedBy); err != nil {
		return Submission{}, fmt.Errorf("kyc: resubmit: %w", err)
	}
	return recordSubmitted(ctx, tx, tenant, id, n.Documents, "ResubmitKyc")
}

// recordSubmitted binds docs to submission id and writes the submission's audit row (action) and its
// kyc.verification_requested.v1 event.
func recordSubmitted(ctx context.Context, tx pgx.Tx, tenant, id string, docs []Document, action string) (Submission, error) {
	for _, d := range docs {
		if _, err := tx.Exec(ctx, `INSERT INTO app.kyc_documents (tenant_id, submission_id, doc_type, upload_key, sha256)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (submission_id, doc_type) DO UPDATE SET upload_key = EXCLUDED.upload_key, sha256 = EXCLUDED.sha256`,
			tenant, id, d.Type, d.UploadKey, d.SHA256); err != nil {
			return Submission{}, fmt.Errorf("kyc: document %s: %w", d.Type, err)
		}
	}
	s, err := ByID(ctx, tx, tenant, id)
	if err != nil {
		return Submission{}, err
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "KycSubmission", TargetID: id,
		Details: map[string]string{"subjectType": string(s.SubjectType), "subjectId": s.SubjectID}}); err != nil {
		return Submission{}, err
	}
	if _, err := outbox.Write(ctx, tx, EventVerificationRequested, event(s)); err != nil {
		return Submission{}, err
	}
	return s, nil
}

// event is a transition's outbox payload: ids and states, no personal data.
func event(s Submission) map[string]any {
	p := map[string]any{"submissionId": s.ID, "subjectType": s.SubjectType, "subjectId": s.SubjectID, "status": s.Status}
	if !s.ValidUntil.IsZero() {
		p["validUntil"] = s.ValidUntil.UTC()
	}
	return p
}

// ByID reads a submission of tenant.
func ByID(ctx context.Context, q db.Querier, tenant, id string) (Submission, error) {
	return scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.kyc_submissions s WHERE tenant_id = $1 AND id = $2`, tenant, id))
}

// Latest is the subject's newest submission.
func Latest(ctx context.Context, q db.Querier, tenant string, t SubjectType, subjectID string) (Submission, error) {
	return scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.kyc_submissions s
		WHERE tenant_id = $1 AND subject_type = $2 AND subject_id = $3 ORDER BY created_at DESC, id DESC LIMIT 1`,
		tenant, string(t), subjectID))
}

// Queue lists submissions waiting for a reviewer (PENDING, then IN_REVIEW), oldest first, across
// every tenant the transaction sees (a platform admin's cross-tenant transaction).
func Queue(ctx context.Context, q db.Querier, status []Status, after string, limit int) ([]Submission, error) {
	ss := make([]string, 0, len(status))
	for _, s := range status {
		ss = append(ss, string(s))
	}
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM app.kyc_submissions s
		WHERE status = ANY($1) AND id > $2 ORDER BY id LIMIT $3`, ss, after, limit)
	if err != nil {
		return nil, fmt.Errorf("kyc: queue: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Submission, error) { return scan(r) })
}

// QueueCounts counts the submissions waiting for a reviewer, PENDING and IN_REVIEW, across every
// tenant the transaction sees (the platform dashboard), in one query.
func QueueCounts(ctx context.Context, q db.Writer) (pending, inReview int64, err error) {
	err = q.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'PENDING'), count(*) FILTER (WHERE status = 'IN_REVIEW')
		FROM app.kyc_submissions WHERE status IN ('PENDING', 'IN_REVIEW')`).Scan(&pending, &inReview)
	if err != nil {
		return 0, 0, fmt.Errorf("kyc: queue counts: %w", err)
	}
	return pending, inReview, nil
}
