package money

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSum(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "12345": 12345, "-7": -7, strconv.FormatInt(math.MaxInt64, 10): math.MaxInt64,
		strconv.FormatInt(math.MinInt64, 10): math.MinInt64} {
		got, err := ParseSum(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"9223372036854775808", "-9223372036854775809", "100000000000000000000"} {
		_, err := ParseSum(s)
		require.ErrorIs(t, err, ErrOverflow, s)
	}
	for _, s := range []string{"", "1.5", "1e3", " 1", "abc"} {
		_, err := ParseSum(s)
		require.Error(t, err, s)
		require.NotErrorIs(t, err, ErrOverflow, s)
	}
}

func TestParseSums(t *testing.T) {
	var a, b int64 = -1, -1
	require.NoError(t, ParseSums([]string{"3", "4"}, &a, &b))
	require.Equal(t, [2]int64{3, 4}, [2]int64{a, b})

	a, b = -1, -1
	require.ErrorIs(t, ParseSums([]string{"5", "9223372036854775808"}, &a, &b), ErrOverflow)
	require.Equal(t, [2]int64{5, -1}, [2]int64{a, b}, "the figures from the failed sum on are left as they were")

	err := ParseSums([]string{"1"}, &a, &b)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrOverflow)
}
