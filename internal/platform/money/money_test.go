package money

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// edges are the int64 values where checked arithmetic goes wrong if it goes wrong anywhere: the
// ends, their neighbours, the square roots of the ends, the 32-bit boundaries and the bounds.
var edges = []int64{
	0, 1, -1, 2, -2, 3, -3, 10, -10, 99, 100, 101, -100,
	math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1,
	math.MaxInt64 / 2, math.MinInt64 / 2, math.MaxInt64/2 + 1, math.MinInt64/2 - 1,
	3_037_000_499, 3_037_000_500, -3_037_000_499, -3_037_000_500, // ⌊√MaxInt64⌋ and one more
	math.MaxInt32, math.MinInt32, math.MaxUint32, -math.MaxUint32, 1 << 32, -(1 << 32),
	MaxAmountSantim, MaxTransactionSantim, MaxAccountTotalSantim, -MaxAccountTotalSantim,
}

// draws returns how many random cases a property runs: more under WAGERAIL_SOAK.
func draws() int {
	if os.Getenv("WAGERAIL_SOAK") != "" {
		return 2_000_000
	}
	return 50_000
}

// anyInt64 draws from a mix that reaches every region: an edge, an edge nudged, a small value, a
// value of a random bit length (so products near 2^63 are common), or any int64.
func anyInt64(r *rand.Rand) int64 {
	switch r.IntN(5) {
	case 0:
		return edges[r.IntN(len(edges))]
	case 1:
		v, _ := Add(edges[r.IntN(len(edges))], r.Int64N(7)-3)
		return v
	case 2:
		return r.Int64N(2001) - 1000
	case 3:
		v := int64(r.Uint64() >> (1 + r.IntN(63)))
		if r.IntN(2) == 0 {
			v = -v
		}
		return v
	}
	return int64(r.Uint64())
}

// pairs calls f with every pair of edges, then with draws() random pairs from a fixed seed.
func pairs(t *testing.T, f func(a, b int64)) {
	for _, a := range edges {
		for _, b := range edges {
			f(a, b)
		}
	}
	r := rand.New(rand.NewPCG(11, 0x5eed))
	for range draws() {
		f(anyInt64(r), anyInt64(r))
		if t.Failed() {
			return
		}
	}
}

var (
	bigMin = big.NewInt(math.MinInt64)
	bigMax = big.NewInt(math.MaxInt64)
)

func fits(x *big.Int) bool { return x.Cmp(bigMin) >= 0 && x.Cmp(bigMax) <= 0 }

// checkAgainstBig asserts that a checked operation returned the exact result when it fits in
// int64, and ErrOverflow exactly when it does not.
func checkAgainstBig(t *testing.T, op string, a, b int64, want *big.Int, got int64, err error) {
	t.Helper()
	if fits(want) {
		require.NoError(t, err, "%d %s %d", a, op, b)
		require.Equal(t, want.Int64(), got, "%d %s %d", a, op, b)
		return
	}
	require.ErrorIs(t, err, ErrOverflow, "%d %s %d = %s", a, op, b, want)
	require.Zero(t, got)
}

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

// Add, Sub and Mul agree with math/big on every pair of edges and on random pairs, and fail
// exactly when the exact result leaves int64.
func TestArithmeticAgreesWithBig(t *testing.T) {
	t.Parallel()
	pairs(t, func(a, b int64) {
		x, y := big.NewInt(a), big.NewInt(b)

		sum := new(big.Int).Add(x, y)
		got, ok := Add(a, b)
		require.Equal(t, fits(sum), ok, "%d + %d", a, b)
		if ok {
			require.Equal(t, sum.Int64(), got, "%d + %d", a, b)
		}

		got, err := Sub(a, b)
		checkAgainstBig(t, "-", a, b, new(big.Int).Sub(x, y), got, err)

		got, err = Mul(a, b)
		checkAgainstBig(t, "*", a, b, new(big.Int).Mul(x, y), got, err)

		got, err = Abs(a)
		checkAgainstBig(t, "abs", a, 0, new(big.Int).Abs(x), got, err)
	})
}

func TestArithmeticCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    func(a, b int64) (int64, error)
		a, b int64
		want int64
		over bool
	}{
		{"sub", Sub, 5, 7, -2, false},
		{"sub", Sub, math.MinInt64, 1, 0, true},
		{"sub", Sub, 0, math.MinInt64, 0, true},
		{"sub", Sub, -1, math.MinInt64, math.MaxInt64, false},
		{"sub", Sub, math.MaxInt64, -1, 0, true},
		{"sub", Sub, math.MinInt64, math.MinInt64, 0, false},
		{"mul", Mul, 120_000, 12, 1_440_000, false},
		{"mul", Mul, math.MinInt64, -1, 0, true},
		{"mul", Mul, -1, math.MinInt64, 0, true},
		{"mul", Mul, math.MinInt64, 1, math.MinInt64, false},
		{"mul", Mul, 3_037_000_499, 3_037_000_499, 9_223_372_030_926_249_001, false},
		{"mul", Mul, 3_037_000_500, 3_037_000_500, 0, true},
		{"mul", Mul, 1 << 32, 1 << 31, 0, true},
		{"mul", Mul, -(1 << 32), 1 << 31, math.MinInt64, false},
	} {
		got, err := tc.f(tc.a, tc.b)
		if tc.over {
			require.ErrorIs(t, err, ErrOverflow, "%s %d %d", tc.name, tc.a, tc.b)
			continue
		}
		require.NoError(t, err, "%s %d %d", tc.name, tc.a, tc.b)
		require.Equal(t, tc.want, got, "%s %d %d", tc.name, tc.a, tc.b)
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

func TestCurrency(t *testing.T) {
	t.Parallel()
	require.Equal(t, "ETB", Currency)
	require.Equal(t, int64(100), SantimPerBirr)
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

// FuzzArithmetic: Add, Sub and Mul agree with math/big on any pair.
func FuzzArithmetic(f *testing.F) {
	for _, a := range edges[:8] {
		f.Add(a, int64(math.MinInt64))
		f.Add(a, int64(math.MaxInt64))
	}
	f.Fuzz(func(t *testing.T, a, b int64) {
		x, y := big.NewInt(a), big.NewInt(b)
		got, err := Sub(a, b)
		checkAgainstBig(t, "-", a, b, new(big.Int).Sub(x, y), got, err)
		got, err = Mul(a, b)
		checkAgainstBig(t, "*", a, b, new(big.Int).Mul(x, y), got, err)
		sum := new(big.Int).Add(x, y)
		got, ok := Add(a, b)
		require.Equal(t, fits(sum), ok)
		if ok {
			require.Equal(t, sum.Int64(), got)
		}
	})
}
