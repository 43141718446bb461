package equb

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// TestAdminReadOverflowIsARefusal: a figure past int64 (Postgres's numeric_value_out_of_range,
// however wrapped) is EQUB_TOTALS_OVERFLOW (422), the caller's filter to narrow; any other error
// stays ours. (A group's pot is at most 5·10^9 santim, so the database cannot be made to pass
// int64 here; the BNPL list's test reaches the same mapping through the database.)
func TestAdminReadOverflowIsARefusal(t *testing.T) {
	err := adminReadError("totals", fmt.Errorf("bun: %w", &pgconn.PgError{Code: pgerrcode.NumericValueOutOfRange}))
	var r *refusal.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, [2]any{CodeAdminTotalsOverflow, http.StatusUnprocessableEntity}, [2]any{r.Code, r.Status})

	other := &pgconn.PgError{Code: pgerrcode.UniqueViolation}
	err = adminReadError("list", other)
	require.False(t, errors.As(err, &r))
	require.ErrorIs(t, err, other)
}
