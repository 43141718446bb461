package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/ratelimit"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// seedIdentityHousekeeping writes, relative to now: one-time secrets expired (used and not) and live; sessions expired
// 33 days ago, expired 3 days ago and live; rate-limit windows ended and running.
func seedIdentityHousekeeping(t *testing.T, pool *pgxpool.Pool, now time.Time) {
	t.Helper()
	ctx := context.Background()
	u, err := identity.CreateUser(ctx, pool, identity.NewUser{Email: "someone@example.org", Name: "Someone"})
	require.NoError(t, err)
	// Expired: a reset token from two hours ago (one hour TTL), a spent one too; live: a set-up token.
	_, err = identity.IssueToken(ctx, pool, identity.ResetPassword, u.ID, u.Email, identity.ResetPasswordTTL, now.Add(-2*time.Hour))
	require.NoError(t, err)
	spent, err := identity.IssueToken(ctx, pool, identity.MagicLink, u.ID, u.Email, identity.MagicLinkTTL, now.Add(-time.Hour))
	require.NoError(t, err)
	_, err = identity.ConsumeToken(ctx, pool, identity.MagicLink, spent, now.Add(-time.Hour+time.Minute))
	require.NoError(t, err)
	_, err = identity.IssueToken(ctx, pool, identity.AccountSetup, u.ID, u.Email, identity.AccountSetupTTL, now.Add(-time.Hour))
	require.NoError(t, err)
	// Sessions live 7 days: created 40 days ago it expired 33 days ago; 10 days ago, 3 days ago.
	for _, age := range []time.Duration{40 * 24 * time.Hour, 10 * 24 * time.Hour, time.Hour} {
		_, _, err := identity.CreateSession(ctx, pool, identity.NewSession{UserID: u.ID}, now.Add(-age))
		require.NoError(t, err)
	}
	rule := ratelimit.Rule{Name: "test.cleanup", Limit: 5, Window: time.Minute}
	for subject, at := range map[string]time.Time{"ended": now.Add(-time.Hour), "running": now.Add(-10 * time.Second)} {
		_, err := ratelimit.New(pool, ratelimit.WithClock(func() time.Time { return at })).Allow(ctx, rule, subject)
		require.NoError(t, err)
	}
}

func countRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM app.`+table).Scan(&n))
	return n
}

func TestIdentityCleanupAgainstPostgres(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	now := time.Date(2026, 11, 23, 3, 15, 0, 0, time.UTC)
	seedIdentityHousekeeping(t, d.App, now)
	a := &IdentityCleanup{DB: d.App, Limiter: ratelimit.New(d.App, ratelimit.WithClock(func() time.Time { return now }))}
	ctx := context.Background()

	res, err := a.Verifications(ctx, CleanupBeforeInput{Before: now})
	require.NoError(t, err)
	require.Equal(t, CleanupResult{Deleted: 2}, res)
	require.Equal(t, 1, countRows(t, d.App, "verifications"), "the live set-up token stays")

	res, err = a.Sessions(ctx, CleanupBeforeInput{Before: now.Add(-identity.SessionRetention)})
	require.NoError(t, err)
	require.Equal(t, CleanupResult{Deleted: 1}, res)
	require.Equal(t, 2, countRows(t, d.App, "sessions"), "expired 3 days ago and live stay")

	res, err = a.RateLimits(ctx, RateLimitCleanupInput{})
	require.NoError(t, err)
	require.Equal(t, CleanupResult{Deleted: 1}, res)
	require.Equal(t, 1, countRows(t, d.App, "rate_limit_counters"), "the running window stays")

	// Retried with the same cutoffs (an attempt whose answer was lost): nothing more goes.
	for _, step := range []func() (CleanupResult, error){
		func() (CleanupResult, error) { return a.Verifications(ctx, CleanupBeforeInput{Before: now}) },
		func() (CleanupResult, error) {
			return a.Sessions(ctx, CleanupBeforeInput{Before: now.Add(-identity.SessionRetention)})
		},
		func() (CleanupResult, error) { return a.RateLimits(ctx, RateLimitCleanupInput{}) },
	} {
		res, err := step()
		require.NoError(t, err)
		require.Zero(t, res.Deleted)
	}

	// Without a limiter the step makes one on DB, on the database's clock: the running window
	// (started "10 seconds before" 2026-11-23, long ended in real time) goes too.
	res, err = (&IdentityCleanup{DB: d.App}).RateLimits(ctx, RateLimitCleanupInput{})
	require.NoError(t, err)
	require.Equal(t, CleanupResult{Deleted: 1}, res)
}

func TestIdentityCleanupMisconfigured(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	now := time.Date(2026, 11, 23, 3, 15, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		step    func() error
		errType string
	}{
		"verifications, no pool": {func() error {
			_, err := (&IdentityCleanup{}).Verifications(context.Background(), CleanupBeforeInput{Before: now})
			return err
		}, ErrTypeMisconfigured},
		"sessions, no pool": {func() error {
			_, err := (&IdentityCleanup{}).Sessions(context.Background(), CleanupBeforeInput{Before: now})
			return err
		}, ErrTypeMisconfigured},
		"rate limits, no pool": {func() error {
			_, err := (&IdentityCleanup{}).RateLimits(context.Background(), RateLimitCleanupInput{})
			return err
		}, ErrTypeMisconfigured},
		"verifications, no time": {func() error {
			_, err := (&IdentityCleanup{DB: d.App}).Verifications(context.Background(), CleanupBeforeInput{})
			return err
		}, ErrTypeInvalidArgument},
		"sessions, no time": {func() error {
			_, err := (&IdentityCleanup{DB: d.App}).Sessions(context.Background(), CleanupBeforeInput{})
			return err
		}, ErrTypeInvalidArgument},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.step()
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, tc.errType, appErr.Type())
			require.True(t, appErr.NonRetryable())
		})
	}
}
