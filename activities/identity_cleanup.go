package activities

import (
	"go.temporal.io/sdk/worker"

	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/ratelimit"
)

// Registered names of the identity clean-up steps (stable across Go renames).
const (
	CleanupVerificationsActivity = "identity.CleanupVerifications"
	CleanupSessionsActivity      = "identity.CleanupSessions"
	CleanupRateLimitsActivity    = "ratelimit.Cleanup"
)

// The clean-ups, typed (what the workflow calls).
var (
	CleanupVerifications = Activity[CleanupBeforeInput, CleanupResult]{CleanupVerificationsActivity}
	CleanupSessions      = Activity[CleanupBeforeInput, CleanupResult]{CleanupSessionsActivity}
	CleanupRateLimits    = Activity[RateLimitCleanupInput, CleanupResult]{CleanupRateLimitsActivity}
)

// Register registers the clean-ups.
func (a *IdentityCleanup) Register(r worker.ActivityRegistry) {
	CleanupVerifications.Register(r, a.Verifications)
	CleanupSessions.Register(r, a.Sessions)
	CleanupRateLimits.Register(r, a.RateLimits)
}

// IdentityCleanup holds the daily deletion of identity rows nobody can use any more: expired
// one-time secrets, long-expired sessions and ended rate-limit windows. These tables are
// platform-wide, without row-level security, and the runtime role may delete from them, so the
// steps run as that role and need no cross-tenant path (and, touching no tenant, write no
// tenant's audit trail).
type IdentityCleanup struct {
	// DB is the runtime role's pool (wagerail_app); nil fails every step as misconfigured. A
	// concrete pool type, so a nil pool cannot hide inside a non-nil interface.
	DB *pgxpool.Pool
	// Limiter deletes the ended rate-limit windows; nil means one on DB, on the database's clock
	// (the clock the API's replicas count by).
	Limiter *ratelimit.Limiter
}

// CleanupBeforeInput says what to delete: rows that expired before Before. The workflow fixes
// Before, so a retried attempt deletes by the same cutoff.
type CleanupBeforeInput struct {
	Before time.Time
}

// RateLimitCleanupInput is the rate-limit step's input. It is empty: a window has ended by the
// database's clock, not the workflow's, or a worker whose clock runs ahead would reset a limit
// early.
type RateLimitCleanupInput struct{}

// CleanupResult reports one step.
type CleanupResult struct {
	Deleted int64
}

// Verifications deletes the one-time secrets (e-mail verification, reset, set-up and magic-link
// tokens, phone OTPs) that expired before in.Before, used or not: none of them can be spent any more.
func (a *IdentityCleanup) Verifications(ctx context.Context, in CleanupBeforeInput) (CleanupResult, error) {
	if err := a.check(in.Before); err != nil {
		return CleanupResult{}, err
	}
	n, err := identity.CleanupVerifications(ctx, a.DB, in.Before)
	if err != nil {
		return CleanupResult{}, temporalError(err)
	}
	return CleanupResult{Deleted: n}, nil
}

// Sessions deletes the sessions that expired before in.Before (the workflow passes the run's
// time less identity.SessionRetention).
func (a *IdentityCleanup) Sessions(ctx context.Context, in CleanupBeforeInput) (CleanupResult, error) {
	if err := a.check(in.Before); err != nil {
		return CleanupResult{}, err
	}
	n, err := identity.CleanupSessions(ctx, a.DB, in.Before)
	if err != nil {
		return CleanupResult{}, temporalError(err)
	}
	return CleanupResult{Deleted: n}, nil
}

// RateLimits deletes the rate-limit counters whose window has ended.
func (a *IdentityCleanup) RateLimits(ctx context.Context, _ RateLimitCleanupInput) (CleanupResult, error) {
	l := a.Limiter
	if l == nil {
		if a.DB == nil {
			return CleanupResult{}, misconfigured("identity clean-up: no database pool")
		}
		l = ratelimit.New(a.DB)
	}
	n, err := l.Cleanup(ctx)
	if err != nil {
		return CleanupResult{}, temporalError(err)
	}
	return CleanupResult{Deleted: n}, nil
}

func (a *IdentityCleanup) check(before time.Time) error {
	if a.DB == nil {
		return misconfigured("identity clean-up: no database pool")
	}
	if before.IsZero() {
		return nonRetryable("identity clean-up: Before must be set", ErrTypeInvalidArgument)
	}
	return nil
}
