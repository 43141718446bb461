package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// CleanupActor is the audit actor of the clean-up.
var CleanupActor = tenancy.System("idempotency-cleanup")

// Cleanup deletes, in every tenant, the completed records whose result is older than olderThan
// at now (Retention in production), and returns how many it deleted. In-flight records are never
// deleted: their lease decides. It runs through the audited cross-tenant path (an audit row when
// it deleted something or failed; none for a run that found nothing), so platform must be the
// wagerail_platform role's pool.
func Cleanup(ctx context.Context, platform db.Beginner, olderThan time.Duration, now time.Time) (int64, error) {
	if olderThan <= 0 {
		return 0, errors.New("idempotency.cleanup: olderThan must be positive")
	}
	cutoff := now.Add(-olderThan)
	ctx = tenancy.WithActor(ctx, CleanupActor)
	reason := fmt.Sprintf("delete completed idempotency records older than %s (completed before %s)", olderThan, cutoff.UTC().Format(time.RFC3339))
	var n int64
	err := crosstenant.JobTx(ctx, platform, reason, func(tx pgx.Tx) (int, error) {
		tag, err := tx.Exec(ctx, `DELETE FROM app.idempotency_records WHERE state = 'COMPLETED' AND completed_at < $1`, cutoff)
		n = tag.RowsAffected()
		return int(n), err
	})
	if err != nil {
		return 0, fmt.Errorf("idempotency.cleanup: %w", err)
	}
	return n, nil
}
