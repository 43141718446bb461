package money

import (
	"fmt"
	"math/bits"
	"slices"
)

// Allocate splits total into len(weights) parts in proportion to weights, so that the parts add
// up to total exactly, whatever the rounding. Each part first gets the whole santim of its exact
// share (total × weight ÷ sum of weights, truncated toward zero); the santim left over (fewer than
// the number of parts) then go one each to the parts with the largest discarded fractions, ties to
// the earlier part. So every part is within one santim of its exact share, a part of weight 0 gets
// 0, equal weights differ by at most one santim with the earlier parts larger, and the same input
// always gives the same split. A negative total is split as its magnitude and every part negated.
//
// Weights must be non-negative with a positive sum that fits in int64 (ErrInvalid otherwise).
func Allocate(total int64, weights []int64) ([]int64, error) {
	if len(weights) == 0 {
		return nil, fmt.Errorf("%w: no weights", ErrInvalid)
	}
	var sum int64
	for i, w := range weights {
		if w < 0 {
			return nil, fmt.Errorf("%w: weight %d is negative (%d)", ErrInvalid, i, w)
		}
		var ok bool
		if sum, ok = Add(sum, w); !ok {
			return nil, fmt.Errorf("%w: weights add up beyond int64", ErrInvalid)
		}
	}
	if sum == 0 {
		return nil, fmt.Errorf("%w: weights add up to 0", ErrInvalid)
	}
	t, s := magnitude(total), uint64(sum)
	parts := make([]uint64, len(weights))
	rems := make([]uint64, len(weights))
	var given uint64
	for i, w := range weights {
		// t × w < 2^63 × s, so the high word is below s and Div64 cannot overflow.
		hi, lo := bits.Mul64(t, uint64(w))
		parts[i], rems[i] = bits.Div64(hi, lo, s)
		given += parts[i] // at most t: each part is at most its exact share
	}
	// The leftover is t − given, fewer than len(weights) santim: the exact shares add up to t and
	// each part lost less than one santim of its share.
	if left := t - given; left > 0 {
		order := make([]int, len(weights))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case rems[a] > rems[b]:
				return -1
			case rems[a] < rems[b]:
				return 1
			}
			return 0 // stable: the earlier part first
		})
		for _, i := range order[:left] {
			parts[i]++
		}
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		out[i], _ = signed(p, total < 0) // p ≤ |total|, so it fits with total's sign
	}
	return out, nil
}
