package kyc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Action is a reviewer's (or the clock's) move on a submission.
type Action string

const (
	Claim           Action = "claim"
	Approve         Action = "approve"
	Reject          Action = "reject"
	RequestMoreInfo Action = "request-more-info"
	Expire          Action = "expire"
)

// from lists the states each action may start from; everything else is ErrInvalidTransition.
// A reviewer must claim before deciding, so two reviewers never decide the same submission.
var from = map[Action][]Status{
	Claim:           {Pending},
	Approve:         {InReview},
	Reject:          {InReview},
	RequestMoreInfo: {InReview},
	Expire:          {Approved},
}

// events are the outbox events (the spec's names; expiry and claim are ours).
var events = map[Action]string{
	Claim: "kyc.claimed.v1", Approve: "kyc.approved.v1", Reject: "kyc.rejected.v1",
	RequestMoreInfo: "kyc.more_info_requested.v1", Expire: "kyc.expired.v1",
}

// audits are the audit actions.
var audits = map[Action]string{
	Claim: "ClaimKyc", Approve: "ApproveKyc", Reject: "RejectKyc", RequestMoreInfo: "RequestKycMoreInfo", Expire: "ExpireKyc",
}

// AuditAction names the audit row of a (or a refused) move.
func AuditAction(a Action) string { return audits[a] }

// ErrClaimedByOther refuses a decision by a reviewer who did not claim the submission.
var ErrClaimedByOther = errors.New("kyc: another reviewer claimed this submission")

// ErrSelfReview refuses a reviewer who is a party to the submission: who submitted it, the user
// it verifies, or the user linked to the employee it verifies. A KYC approval opens the money
// gates, so it is always a second person's.
var ErrSelfReview = errors.New("kyc: a reviewer may not review a submission they made or that verifies them")

// selfReview reports whether reviewer is a party to submission s (ErrSelfReview).
func selfReview(ctx context.Context, tx pgx.Tx, s Submission, reviewer string) (bool, error) {
	switch {
	case reviewer == s.SubmittedBy, s.SubjectType == SubjectUser && s.SubjectID == reviewer:
		return true, nil
	case s.SubjectType != SubjectEmployee:
		return false, nil
	}
	var linked *string
	err := tx.QueryRow(ctx, `SELECT user_id FROM app.employees WHERE tenant_id = $1 AND id = $2`, s.TenantID, s.SubjectID).Scan(&linked)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("kyc: the employee's user: %w", err)
	}
	return linked != nil && *linked == reviewer, nil
}

// DocumentParty reports whether upload key of tenant is held by a KYC submission (its photo or
// one of its documents) and, if it is, whether user is a party to one that holds it (selfReview's
// rule: its submitter or its subject). An identity document is its subject's: the organization's
// admins and the platform's reviewers read it, its other members do not.
func DocumentParty(ctx context.Context, tx pgx.Tx, tenant, key, user string) (bound, party bool, err error) {
	rows, err := tx.Query(ctx, `SELECT `+columns+` FROM app.kyc_submissions s WHERE s.tenant_id = $1
		AND (s.photo_key = $2 OR EXISTS (SELECT 1 FROM app.kyc_documents d
		                                 WHERE d.tenant_id = s.tenant_id AND d.submission_id = s.id AND d.upload_key = $2))`, tenant, key)
	if err != nil {
		return false, false, fmt.Errorf("kyc: submissions holding an upload: %w", err)
	}
	subs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Submission, error) { return scan(r) })
	if err != nil {
		return false, false, err
	}
	for _, s := range subs {
		if party, err = selfReview(ctx, tx, s, user); err != nil || party {
			return true, party, err
		}
	}
	return len(subs) > 0, false, nil
}

// Change is what a move needs besides the submission.
type Change struct {
	Reviewer string        // the platform admin (user id) or system actor
	Note     string        // applicant-facing: required for reject and request-more-info
	Validity time.Duration // approve: how long the approval holds (0: DefaultValidity)
	Now      time.Time
	// AcknowledgeRegistryCheck (approve) is the id of the negative national-ID registry check the
	// reviewer has examined and approves despite, with Note as the reason. It covers that check
	// only: a newer negative one refuses the approval again.
	AcknowledgeRegistryCheck string
}

// RegistryNegativeError refuses approving a submission whose current registry check is negative
// and not acknowledged.
type RegistryNegativeError struct{ Check RegistryCheck }

func (e *RegistryNegativeError) Error() string {
	return fmt.Sprintf("kyc: the national ID registry check %s is %s", e.Check.ID, e.Check.Outcome)
}

// Transition applies action to the submission under a row lock, with its audit row and outbox
// event, in tx. ctx carries the actor; the audit row goes to the submission's tenant.
func Transition(ctx context.Context, tx pgx.Tx, tenant, id string, action Action, ch Change) (Submission, error) {
	allowed, ok := from[action]
	if !ok {
		return Submission{}, fmt.Errorf("kyc: unknown action %q", action)
	}
	cur, err := scan(tx.QueryRow(ctx, `SELECT `+columns+` FROM app.kyc_submissions s
		WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenant, id))
	if err != nil {
		return Submission{}, err
	}
	if !slices.Contains(allowed, cur.Status) {
		return cur, fmt.Errorf("%w: %s from %s", ErrInvalidTransition, action, cur.Status)
	}
	if (action == Approve || action == Reject || action == RequestMoreInfo) && cur.ClaimedBy != ch.Reviewer {
		return cur, ErrClaimedByOther
	}
	if action == Claim || action == Approve {
		if self, err := selfReview(ctx, tx, cur, ch.Reviewer); err != nil {
			return cur, err
		} else if self {
			return cur, ErrSelfReview
		}
	}
	acknowledged := false
	if action == Approve && cur.RegistryCheck != nil && cur.RegistryCheck.Negative() {
		if ch.AcknowledgeRegistryCheck != cur.RegistryCheck.ID || ch.Note == "" {
			return cur, &RegistryNegativeError{Check: *cur.RegistryCheck}
		}
		acknowledged = true
	}
	var err2 error
	switch action {
	case Claim:
		_, err2 = tx.Exec(ctx, `UPDATE app.kyc_submissions SET status = 'IN_REVIEW', claimed_by = $3, claimed_at = $4,
			rejection_reason = NULL, updated_at = $4 WHERE tenant_id = $1 AND id = $2`, tenant, id, ch.Reviewer, ch.Now)
	case Approve:
		validity := ch.Validity
		if validity <= 0 {
			validity = DefaultValidity
		}
		_, err2 = tx.Exec(ctx, `UPDATE app.kyc_submissions SET status = 'APPROVED', decided_by = $3, decided_at = $4,
			valid_until = $5, updated_at = $4 WHERE tenant_id = $1 AND id = $2`, tenant, id, ch.Reviewer, ch.Now, ch.Now.Add(validity))
	case Reject:
		_, err2 = tx.Exec(ctx, `UPDATE app.kyc_submissions SET status = 'REJECTED', decided_by = $3, decided_at = $4,
			rejection_reason = $5, updated_at = $4 WHERE tenant_id = $1 AND id = $2`, tenant, id, ch.Reviewer, ch.Now, ch.Note)
	case RequestMoreInfo:
		// Back to the applicant: the claim ends, the note tells them what is missing.
		_, err2 = tx.Exec(ctx, `UPDATE app.kyc_submissions SET status = 'PENDING', claimed_by = NULL, claimed_at = NULL,
			rejection_reason = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2`, tenant, id, ch.Note, ch.Now)
	case Expire:
		_, err2 = tx.Exec(ctx, `UPDATE app.kyc_submissions SET status = 'EXPIRED', updated_at = $3
			WHERE tenant_id = $1 AND id = $2`, tenant, id, ch.Now)
	}
	if err2 != nil {
		return Submission{}, fmt.Errorf("kyc: %s: %w", action, err2)
	}
	next, err := ByID(ctx, tx, tenant, id)
	if err != nil {
		return Submission{}, err
	}
	actx := tenancy.WithTenant(ctx, tenant)
	details := map[string]string{"from": string(cur.Status), "to": string(next.Status)}
	if acknowledged {
		details["registryCheckAcknowledged"], details["registryOutcome"], details["note"] =
			cur.RegistryCheck.ID, string(cur.RegistryCheck.Outcome), ch.Note
	}
	if err := audit.Write(actx, tx, audit.Entry{Action: audits[action], Outcome: audit.Success, TargetType: "KycSubmission", TargetID: id,
		Details: details}); err != nil {
		return Submission{}, err
	}
	payload := event(next)
	if action == RequestMoreInfo || action == Reject {
		payload["note"] = ch.Note // applicant-facing by design: the notification consumer sends it
	}
	if _, err := outbox.Write(actx, tx, events[action], payload); err != nil {
		return Submission{}, err
	}
	return next, nil
}

// Gate is the KYC check the money sagas call: nil only when the subject's newest submission is
// APPROVED and its validity has not ended at now. Anything else — no submission, another state,
// an expired approval, a database error — is an error: the gate fails closed.
func Gate(ctx context.Context, q db.Querier, tenant string, t SubjectType, subjectID string, now time.Time) error {
	s, err := Latest(ctx, q, tenant, t, subjectID)
	switch {
	case errors.Is(err, ErrNotFound):
		return ErrNotApproved
	case err != nil:
		return fmt.Errorf("kyc gate: %w", err)
	case s.Status == Expired, s.Status == Approved && !now.Before(s.ValidUntil):
		return ErrExpired
	case s.Status != Approved:
		return ErrNotApproved
	}
	return nil
}

// Due lists APPROVED submissions whose validity ended by now (every tenant the transaction sees),
// at most limit, for the expiry sweep.
func Due(ctx context.Context, q db.Querier, now time.Time, limit int) ([]Submission, error) {
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM app.kyc_submissions s
		WHERE status = 'APPROVED' AND valid_until <= $1 ORDER BY valid_until, id LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("kyc: due: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Submission, error) { return scan(r) })
}
