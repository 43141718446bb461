package money

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllocateCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		total   int64
		weights []int64
		want    []int64
	}{
		{100, []int64{1, 1, 1}, []int64{34, 33, 33}},
		{-100, []int64{1, 1, 1}, []int64{-34, -33, -33}},
		{101, []int64{1, 1}, []int64{51, 50}},
		{5, []int64{1, 0, 1}, []int64{3, 0, 2}},
		{0, []int64{3, 4}, []int64{0, 0}},
		{1, []int64{1, 1, 1, 1}, []int64{1, 0, 0, 0}},
		{1, []int64{1, 2}, []int64{0, 1}},                 // shares 1/3 and 2/3: the larger fraction wins
		{10, []int64{3, 3, 4}, []int64{3, 3, 4}},          // exact
		{1_000, []int64{1, 2, 3}, []int64{167, 333, 500}}, // 166.67, 333.33, 500
		{math.MaxInt64, []int64{1, 1}, []int64{math.MaxInt64/2 + 1, math.MaxInt64 / 2}},
		{math.MinInt64, []int64{1, 1}, []int64{math.MinInt64 / 2, math.MinInt64 / 2}},
		{math.MinInt64, []int64{math.MaxInt64 / 2, math.MaxInt64 / 2}, []int64{math.MinInt64 / 2, math.MinInt64 / 2}},
		{7, []int64{math.MaxInt64}, []int64{7}},
	} {
		got, err := Allocate(tc.total, tc.weights)
		require.NoError(t, err, "%d %v", tc.total, tc.weights)
		require.Equal(t, tc.want, got, "%d %v", tc.total, tc.weights)
	}
}

func TestAllocateRefuses(t *testing.T) {
	t.Parallel()
	for _, w := range [][]int64{nil, {}, {0}, {0, 0}, {1, -1}, {math.MaxInt64, 1}} {
		_, err := Allocate(100, w)
		require.ErrorIs(t, err, ErrInvalid, "%v", w)
	}
}

// Property: for any total and weights, the parts add up to the total exactly, each part is within
// one santim of its exact share and has the total's sign, a zero weight gets zero, the leftover
// goes to the largest fractions (ties to the earlier part), and the split is the same every time.
func TestAllocateProperties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 0x5eed))
	n := draws() / 10
	for i := range n {
		total := anyInt64(r)
		weights := make([]int64, 1+r.IntN(12))
		maxW := []int64{1, 3, 100, 10_000, math.MaxInt64 / int64(len(weights))}[r.IntN(5)]
		for j := range weights {
			if r.IntN(6) > 0 {
				weights[j] = r.Int64N(maxW) + 1
			}
		}
		if i%7 == 0 { // equal weights: the ties case
			for j := range weights {
				weights[j] = maxW
			}
		}
		var sumW int64
		for _, w := range weights {
			sumW += w
		}
		if sumW == 0 {
			weights[0], sumW = 1, 1
		}
		parts, err := Allocate(total, weights)
		require.NoError(t, err, "%d %v", total, weights)
		again, err := Allocate(total, weights)
		require.NoError(t, err)
		require.Equal(t, parts, again)

		sum := new(big.Int)
		shares := make([]*big.Rat, len(parts))
		for j, p := range parts {
			sum.Add(sum, big.NewInt(p))
			exact := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(total), big.NewInt(weights[j])), big.NewInt(sumW))
			diff := new(big.Rat).Sub(new(big.Rat).SetInt64(p), exact)
			require.Equal(t, -1, new(big.Rat).Abs(diff).Cmp(big.NewRat(1, 1)), "part %d of %d %v: %d vs %s", j, total, weights, p, exact.FloatString(3))
			if weights[j] == 0 {
				require.Zero(t, p)
			}
			require.False(t, (total > 0 && p < 0) || (total < 0 && p > 0), "sign of part %d", j)
			shares[j] = exact
		}
		require.Zero(t, sum.Cmp(big.NewInt(total)), "%d %v → %v", total, weights, parts)

		// A part that was rounded up (in magnitude) never has a smaller fraction than one that was
		// not, and on equal fractions it comes first.
		fracs, ups := make([]*big.Rat, len(parts)), make([]bool, len(parts))
		for j := range parts {
			a := new(big.Rat).Abs(shares[j])
			fl := new(big.Int).Quo(a.Num(), a.Denom())
			fracs[j] = new(big.Rat).Sub(a, new(big.Rat).SetInt(fl))
			ups[j] = magnitude(parts[j]) > fl.Uint64()
		}
		for j := range parts {
			for k := range parts {
				if ups[j] && !ups[k] {
					c := fracs[j].Cmp(fracs[k])
					require.True(t, c > 0 || (c == 0 && j < k), "%d %v → %v: part %d up, %d not", total, weights, parts, j, k)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
}
