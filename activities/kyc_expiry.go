package activities

import (
	"go.temporal.io/sdk/worker"

	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// ExpireKycActivity is the registered name of one batch of the KYC expiry sweep.
const ExpireKycActivity = "kyc.ExpireDue"

// ExpireKyc is the expiry, typed (what the workflow calls).
var ExpireKyc = Activity[ExpireKycInput, ExpireKycResult]{ExpireKycActivity}

// Register registers the expiry.
func (a *KycExpiry) Register(r worker.ActivityRegistry) { ExpireKyc.Register(r, a.ExpireDue) }

// kycExpiryActor is the audit actor of expiries: the clock, not a person.
var kycExpiryActor = tenancy.System("kyc-expiry")

// KycExpiry turns APPROVED submissions whose validity has ended into EXPIRED, every tenant's, on
// the audited cross-tenant path (each expiry with its own audit row and kyc.expired.v1 event, in
// the same transaction). The money gates never rely on it running on time: kyc.Gate refuses an
// approval past its validity by itself.
type KycExpiry struct {
	// Platform is the cross-tenant role's pool (wagerail_platform); nil fails as misconfigured.
	Platform *pgxpool.Pool
}

// ExpireKycInput fixes the sweep's clock (the workflow's time) and its batch size.
type ExpireKycInput struct {
	Now   time.Time
	Batch int
}

// ExpireKycResult says how many were expired and whether more may be due.
type ExpireKycResult struct {
	Expired int
	More    bool
}

// ExpireDue expires at most in.Batch due submissions.
func (a *KycExpiry) ExpireDue(ctx context.Context, in ExpireKycInput) (ExpireKycResult, error) {
	if a.Platform == nil {
		return ExpireKycResult{}, temporalError(errors.New("kyc expiry: no platform pool configured"))
	}
	if in.Now.IsZero() || in.Batch <= 0 {
		return ExpireKycResult{}, temporalError(errors.New("kyc expiry: input needs Now and a positive Batch"))
	}
	ctx = tenancy.WithActor(ctx, kycExpiryActor)
	var res ExpireKycResult
	// Audited when it expired something: an hourly sweep that finds nothing due writes no row.
	err := crosstenant.JobTx(ctx, a.Platform, "kyc expiry sweep", func(tx pgx.Tx) (int, error) {
		due, err := kyc.Due(ctx, tx, in.Now, in.Batch)
		if err != nil {
			return 0, err
		}
		for _, s := range due {
			if _, err := kyc.Transition(ctx, tx, s.TenantID, s.ID, kyc.Expire, kyc.Change{Reviewer: kycExpiryActor, Now: in.Now}); err != nil {
				return 0, err
			}
		}
		res = ExpireKycResult{Expired: len(due), More: len(due) == in.Batch}
		return len(due), nil
	})
	if err != nil {
		return ExpireKycResult{}, temporalError(err)
	}
	return res, nil
}
