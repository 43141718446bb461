package ewa

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestOwedIsTheSummarysRule: a request owes principal + fee less its repayments while DISBURSED,
// nothing in any other status.
func TestOwedIsTheSummarysRule(t *testing.T) {
	t.Parallel()
	r := Request{PrincipalSantim: 100_000, FeeSantim: 3_000, RepaidAmountSantim: 40_000}
	for _, s := range Statuses {
		r.Status = s
		want := int64(0)
		if s == Disbursed {
			want = 63_000
		}
		require.Equal(t, want, r.OwedSantim(), s)
	}
}

// TestAdvanceBookReadsThroughIndexes: every filter of the advance book reads the requests
// through an index across tenants, as the platform role reads them (sequential scans off: an
// index that can serve is used); a status alone through ewa_requests_book_status (migration
// 0101), not by walking every request.
func TestAdvanceBookReadsThroughIndexes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.WithActor(context.Background(), "system:plan-test")
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		f     AdvanceBookFilter
		index string
	}{
		"everything": {AdvanceBookFilter{}, "ewa_requests_pkey"},
		"a status":   {AdvanceBookFilter{Status: Disbursed}, "ewa_requests_book_status"},
		"a business": {AdvanceBookFilter{BusinessID: "biz_1"}, "ewa_requests_"},
		"a window":   {AdvanceBookFilter{From: window, To: window.AddDate(0, 1, 0)}, "ewa_requests_pkey"},
	} {
		for _, before := range []string{"", "ewa_x"} {
			var text string
			require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "plan test", func(tx pgx.Tx) error {
				sql, args := advanceBookSQL(c.f, before, 51)
				var err error
				text, err = testkit.Plan(ctx, tx, sql, args...)
				return err
			}))
			require.NotContains(t, text, "Seq Scan on ewa_requests", "%s:\n%s", name, text)
			require.Contains(t, text, " "+c.index, "%s:\n%s", name, text)
		}
	}
}
