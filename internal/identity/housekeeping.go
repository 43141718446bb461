package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// SessionRetention is how long a session row is kept after it expired (or was revoked before
// expiring): long enough to answer "which devices signed in last month", short enough that the
// table holds no stale token hashes for ever. The daily identity clean-up deletes older ones.
const SessionRetention = 30 * 24 * time.Hour

// CleanupSessions deletes the sessions that expired before cutoff (no token of theirs can sign in
// again) and returns how many.
func CleanupSessions(ctx context.Context, q db.Querier, cutoff time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM app.sessions WHERE expires_at < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("identity: cleanup sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}
