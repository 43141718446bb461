package identity

import (
	"context"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// SpendTokens marks every unused token of purpose minted for userID as used, so that only a token
// minted afterwards works: resending an account set-up link retires the links sent before it.
// It returns how many were spent.
func SpendTokens(ctx context.Context, q db.Querier, p Purpose, userID string, now time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE app.verifications SET used_at = $3
		WHERE purpose = $1 AND user_id = $2 AND used_at IS NULL`, string(p), userID, now)
	if err != nil {
		return 0, wrap("spend tokens", err)
	}
	return tag.RowsAffected(), nil
}
