package money

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAdd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b, want int64
		ok         bool
	}{
		{1, 2, 3, true},
		{math.MaxInt64, 0, math.MaxInt64, true},
		{math.MaxInt64, 1, 0, false},
		{math.MinInt64, -1, 0, false},
		{math.MinInt64, math.MaxInt64, -1, true},
		{-5, 3, -2, true},
	} {
		got, ok := Add(tc.a, tc.b)
		require.Equal(t, tc.ok, ok, "%d+%d", tc.a, tc.b)
		require.Equal(t, tc.want, got, "%d+%d", tc.a, tc.b)
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	require.True(t, ValidAmount(1))
	require.True(t, ValidAmount(MaxAmountSantim))
	for _, v := range []int64{0, -1, MaxAmountSantim + 1, math.MaxInt64, math.MinInt64} {
		require.False(t, ValidAmount(v), "%d", v)
	}
	// Four totals at the bound still add up inside int64: a balance read never overflows.
	require.LessOrEqual(t, MaxAccountTotalSantim, int64(math.MaxInt64/4))
	require.LessOrEqual(t, MaxAmountSantim, MaxTransactionSantim)
}

func TestDomains(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"EWA", "LOAN", "PAYROLL", "EQUB", "WALLET", "BNPL", "SAVINGS", "OTHER"} {
		require.True(t, ValidDomain(d), d)
		require.Contains(t, DomainList(), d)
	}
	for _, d := range []string{"", "ewa", "EWA ", "LOANS", "EWA\x00"} {
		require.False(t, ValidDomain(d), "%q", d)
	}
}
