package activities

import (
	"go.temporal.io/sdk/worker"

	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
)

// IdempotencyCleanupActivity is the registered name of the clean-up step (stable across Go
// renames).
const IdempotencyCleanupActivity = "idempotency.Cleanup"

// IdempotencyCleanupStep is the clean-up, typed (what the workflow calls).
var IdempotencyCleanupStep = Activity[IdempotencyCleanupInput, IdempotencyCleanupResult]{IdempotencyCleanupActivity}

// Register registers the clean-up.
func (a *IdempotencyCleanup) Register(r worker.ActivityRegistry) {
	IdempotencyCleanupStep.Register(r, a.Cleanup)
}

// IdempotencyCleanup holds the daily deletion of finished idempotency records, a system job that
// crosses tenants through internal/platform/crosstenant (audited).
type IdempotencyCleanup struct {
	// Platform is the pool of the cross-tenant role wagerail_platform (DATABASE_PLATFORM_URL);
	// nil (not configured) fails the activity as misconfigured. A concrete pool type, so a nil
	// pool cannot hide inside a non-nil interface.
	Platform *pgxpool.Pool
	// Metrics counts the deleted records (outcome "deleted"); nil counts nothing.
	Metrics *idempotency.Metrics
}

// IdempotencyCleanupInput says what to delete: records completed more than OlderThan before Now.
// Now is the run's time, fixed by the workflow, so a retried attempt deletes by the same cutoff.
type IdempotencyCleanupInput struct {
	OlderThan time.Duration
	Now       time.Time
}

// IdempotencyCleanupResult reports a run.
type IdempotencyCleanupResult struct {
	Deleted int64
	// Cutoff is Now - OlderThan: records completed before it were deleted.
	Cutoff time.Time
}

// Cleanup deletes, in every tenant, the completed records older than the input's cutoff. A
// database outage is retried; a worker without the platform pool, or with the runtime role's
// pool in its place, is misconfigured and fails at once.
func (a *IdempotencyCleanup) Cleanup(ctx context.Context, in IdempotencyCleanupInput) (IdempotencyCleanupResult, error) {
	if a.Platform == nil {
		return IdempotencyCleanupResult{}, misconfigured("idempotency clean-up: no platform database pool (DATABASE_PLATFORM_URL)")
	}
	if in.OlderThan <= 0 || in.Now.IsZero() {
		return IdempotencyCleanupResult{}, nonRetryable("idempotency clean-up: OlderThan must be positive and Now set", ErrTypeInvalidArgument)
	}
	n, err := idempotency.Cleanup(ctx, a.Platform, in.OlderThan, in.Now)
	switch {
	case errors.Is(err, crosstenant.ErrNotPlatformRole):
		return IdempotencyCleanupResult{}, misconfigured("idempotency clean-up: " + err.Error())
	case err != nil:
		return IdempotencyCleanupResult{}, temporalError(err)
	}
	a.Metrics.Add(idempotency.Deleted, int(n))
	return IdempotencyCleanupResult{Deleted: n, Cutoff: in.Now.Add(-in.OlderThan)}, nil
}
