package sanctions

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Standing is where a subject's screening stands, as the subject's own checklist shows it (GET
// /api/employee/onboarding). It says no more than GET /api/me/sanctions shows the subject (the
// outcome of their recorded checks and a reviewer's decision): never a list, an entry, a score or
// evidence.
type Standing string

const (
	StandingClear       Standing = "CLEAR"        // the gate passes (GateAs)
	StandingNotScreened Standing = "NOT_SCREENED" // no check recorded yet (a KYC approval screens)
	// StandingUnderReview: the gate holds the subject back for now and a decision is due: a
	// REVIEW no reviewer decided, a check older than the active lists or matching rules, or a
	// name on record the recorded check did not screen (whatever screening that name would say).
	StandingUnderReview Standing = "UNDER_REVIEW"
	StandingBlocked     Standing = "BLOCKED" // the latest recorded check is a BLOCK, or a REVIEW confirmed
)

// SubjectStanding reads the subject's standing with the gate the money sagas call: Gate on the
// latest recorded check, then, for a subject paid under nameOnRecord (an employee's name; "" for
// none), GateAs. Only a recorded check can make the subject BLOCKED: a refusal GateAs reaches by
// screening the name on record now (nothing recorded, nothing a reviewer saw) is UNDER_REVIEW.
// An error is one that kept the gate from deciding (the database). tx is scoped to tenant.
func SubjectStanding(ctx context.Context, tx pgx.Tx, tenant string, subjectType SubjectType, subjectID, nameOnRecord string) (Standing, error) {
	switch err := Gate(ctx, tx, tenant, subjectType, subjectID); {
	case errors.Is(err, ErrSanctionsBlocked):
		return StandingBlocked, nil
	case errors.Is(err, ErrSanctionsReview), errors.Is(err, ErrCheckStale):
		return StandingUnderReview, nil
	case errors.Is(err, ErrNoCheck):
		return StandingNotScreened, nil
	case err != nil:
		return "", err
	}
	if nameOnRecord == "" {
		return StandingClear, nil
	}
	switch err := GateAs(ctx, tx, tenant, subjectType, subjectID, nameOnRecord); {
	case err == nil:
		return StandingClear, nil
	case errors.Is(err, ErrSanctionsBlocked), errors.Is(err, ErrSanctionsReview),
		errors.Is(err, ErrNoActiveList), errors.Is(err, ErrListOutdated):
		return StandingUnderReview, nil
	default:
		return "", err
	}
}
