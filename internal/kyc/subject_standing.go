package kyc

import (
	"context"
	"errors"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Standing is where a subject's KYC stands, as the subject's own checklist shows it (GET
// /api/employee/onboarding): the state of their newest submission, read through Gate so that
// APPROVED means exactly what the money sagas' KYC gate accepts.
type Standing string

const (
	StandingNotStarted Standing = "NOT_STARTED" // no submission
	StandingPending    Standing = "PENDING"     // submitted (or amended), waiting for a reviewer
	StandingInReview   Standing = "IN_REVIEW"   // a reviewer claimed it
	// StandingMoreInfo: a reviewer sent it back with a note (PENDING with a note); the applicant
	// answers with POST /api/kyc.
	StandingMoreInfo Standing = "MORE_INFO_REQUESTED"
	StandingApproved Standing = "APPROVED" // Gate passes: APPROVED and still valid at now
	StandingRejected Standing = "REJECTED"
	// StandingExpired: EXPIRED, or APPROVED with its validity ended at now (the expiry sweep has
	// not marked it yet): Gate refuses it as ErrExpired.
	StandingExpired Standing = "EXPIRED"
)

// SubjectStanding reads the subject's KYC standing at now. q is a transaction scoped to tenant.
func SubjectStanding(ctx context.Context, q db.Querier, tenant string, t SubjectType, subjectID string, now time.Time) (Standing, error) {
	switch err := Gate(ctx, q, tenant, t, subjectID, now); {
	case err == nil:
		return StandingApproved, nil
	case errors.Is(err, ErrExpired):
		return StandingExpired, nil
	case !errors.Is(err, ErrNotApproved):
		return "", err
	}
	s, err := Latest(ctx, q, tenant, t, subjectID)
	switch {
	case errors.Is(err, ErrNotFound):
		return StandingNotStarted, nil
	case err != nil:
		return "", err
	}
	switch s.Status {
	case Pending:
		if s.RejectionReason != "" {
			return StandingMoreInfo, nil
		}
		return StandingPending, nil
	case InReview:
		return StandingInReview, nil
	case Rejected:
		return StandingRejected, nil
	case Expired:
		return StandingExpired, nil
	}
	// APPROVED yet refused by Gate as not approved: no such state; fail closed, not approved.
	return StandingPending, nil
}
