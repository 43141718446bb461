package money

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// halfEven is the reference rounding: the exact rational a·n/d rounded to the nearest integer,
// an exact half to the even one, computed with big.Rat from the definition (floor, then look at
// the fraction), independently of MulDiv's magnitudes and 128-bit words.
func halfEven(a, n, d int64) *big.Int {
	x := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(a), big.NewInt(n)), big.NewInt(d))
	fl := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean division by a positive denominator: the floor
	frac := new(big.Rat).Sub(x, new(big.Rat).SetInt(fl))
	switch frac.Cmp(big.NewRat(1, 2)) {
	case 1:
		fl.Add(fl, big.NewInt(1))
	case 0:
		if fl.Bit(0) == 1 { // odd (Bit reads the two's-complement bit, so negatives work too)
			fl.Add(fl, big.NewInt(1))
		}
	}
	return fl
}

func TestMulDivAgreesWithBigRat(t *testing.T) {
	t.Parallel()
	check := func(a, n, d int64) {
		got, err := MulDiv(a, n, d)
		checkAgainstBig(t, "*/", a, n, halfEven(a, n, d), got, err)
	}
	dens := []int64{1, 2, 3, 7, 100, HundredPercent, 1 << 32, math.MaxInt64, math.MaxInt64 - 1, 3_037_000_500}
	for _, a := range edges {
		for _, n := range edges {
			for _, d := range dens {
				check(a, n, d)
			}
		}
	}
	r := rand.New(rand.NewPCG(12, 0x5eed))
	for range draws() {
		d := anyInt64(r)
		if d <= 0 {
			d = dens[r.IntN(len(dens))]
		}
		check(anyInt64(r), anyInt64(r), d)
		if t.Failed() {
			return
		}
	}
}

// floorRat is the reference for MulDivFloor: the exact rational a·n/d rounded toward negative
// infinity, with big.Int's Euclidean division (d > 0).
func floorRat(a, n, d int64) *big.Int {
	return new(big.Int).Div(new(big.Int).Mul(big.NewInt(a), big.NewInt(n)), big.NewInt(d))
}

func TestMulDivFloorAgreesWithBig(t *testing.T) {
	t.Parallel()
	check := func(a, n, d int64) {
		got, err := MulDivFloor(a, n, d)
		checkAgainstBig(t, "*/floor", a, n, floorRat(a, n, d), got, err)
	}
	dens := []int64{1, 2, 3, 7, 100, HundredPercent, 1 << 32, math.MaxInt64, math.MaxInt64 - 1, 3_037_000_500}
	for _, a := range edges {
		for _, n := range edges {
			for _, d := range dens {
				check(a, n, d)
			}
		}
	}
	r := rand.New(rand.NewPCG(13, 0x5eed))
	for range draws() {
		d := anyInt64(r)
		if d <= 0 {
			d = dens[r.IntN(len(dens))]
		}
		check(anyInt64(r), anyInt64(r), d)
		if t.Failed() {
			return
		}
	}
	for _, tc := range []struct{ a, n, d, want int64 }{
		{1_000, 1, 3, 333}, {999, 1, 3, 333}, {-1_000, 1, 3, -334}, {1_000, -1, 3, -334}, {5, 1, 2, 2}, {-5, 1, 2, -3}, {6, 1, 3, 2},
	} {
		got, err := MulDivFloor(tc.a, tc.n, tc.d)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%d × %d ÷ %d", tc.a, tc.n, tc.d)
	}
	for _, d := range []int64{0, -1, math.MinInt64} {
		_, err := MulDivFloor(10, 1, d)
		require.ErrorIs(t, err, ErrInvalid, "%d", d)
	}
}

// The rule, spelled out: halves go to the even santim, in both directions; everything else to
// the nearest.
func TestRoundingRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ amount, bps, want int64 }{
		{1_001, 250, 25},     // 25.025
		{50, 100, 0},         // 0.5 → 0
		{150, 100, 2},        // 1.5 → 2
		{250, 100, 2},        // 2.5 → 2
		{350, 100, 4},        // 3.5 → 4
		{-50, 100, 0},        // −0.5 → 0
		{-150, 100, -2},      // −1.5 → −2
		{-250, 100, -2},      // −2.5 → −2
		{51, 100, 1},         // 0.51 → 1
		{149, 100, 1},        // 1.49 → 1
		{-149, 100, -1},      // −1.49 → −1
		{12_345, -250, -309}, // −308.625 → −309
		{1, HundredPercent, 1},
		{math.MaxInt64, HundredPercent, math.MaxInt64},
		{math.MinInt64, HundredPercent, math.MinInt64},
		{math.MinInt64, 5_000, math.MinInt64 / 2},
		{math.MaxInt64, 5_000, 4_611_686_018_427_387_904}, // 4611686018427387903.5 → even
	} {
		got, err := ApplyBasisPoints(tc.amount, tc.bps)
		require.NoError(t, err, "%d × %d bp", tc.amount, tc.bps)
		require.Equal(t, tc.want, got, "%d × %d bp", tc.amount, tc.bps)
	}
	for _, tc := range []struct{ amount, bps int64 }{
		{math.MaxInt64, HundredPercent + 1},
		{math.MinInt64, -HundredPercent},
		{math.MaxInt64, math.MaxInt64},
	} {
		_, err := ApplyBasisPoints(tc.amount, tc.bps)
		require.ErrorIs(t, err, ErrOverflow, "%d × %d bp", tc.amount, tc.bps)
	}
	require.Equal(t, int64(300), 3*Percent)
	require.Equal(t, int64(10_000), HundredPercent)
}

// Over many halves the rule does not drift: exact halves of odd amounts of 1..N santim round up as
// often as down, so the sum of the rounded halves equals the sum of the exact halves.
func TestRoundingHasNoDrift(t *testing.T) {
	t.Parallel()
	var rounded, twiceExact int64
	for a := int64(1); a <= 10_000; a += 2 {
		h, err := MulDiv(a, 1, 2)
		require.NoError(t, err)
		rounded += h
		twiceExact += a
	}
	require.Equal(t, twiceExact, 2*rounded)
}

func TestMulDivRefusesNonPositiveDivisor(t *testing.T) {
	t.Parallel()
	for _, d := range []int64{0, -1, math.MinInt64} {
		_, err := MulDiv(10, 1, d)
		require.ErrorIs(t, err, ErrInvalid, "%d", d)
	}
}

func TestFormatPercent(t *testing.T) {
	t.Parallel()
	for bps, want := range map[int64]string{0: "0.00%", 250: "2.50%", 5: "0.05%", -1: "-0.01%", HundredPercent: "100.00%",
		math.MinInt64: "-92233720368547758.08%"} {
		require.Equal(t, want, FormatPercent(bps))
	}
}

// FuzzMulDiv: MulDiv agrees with the big.Rat reference for any operands.
func FuzzMulDiv(f *testing.F) {
	f.Add(int64(1_001), int64(250), HundredPercent)
	f.Add(int64(math.MinInt64), int64(-1), int64(1))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, a, n, d int64) {
		got, err := MulDiv(a, n, d)
		if d <= 0 {
			require.ErrorIs(t, err, ErrInvalid)
			return
		}
		checkAgainstBig(t, "*/", a, n, halfEven(a, n, d), got, err)
	})
}
