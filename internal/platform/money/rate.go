package money

import (
	"fmt"
	"math"
	"math/bits"
)

// Rates are integers of basis points (hundredths of a percent), so no float ever touches money:
// 250 is 2.5%, 3*Percent is 3%, HundredPercent is the whole amount.
const (
	// Percent is one percent in basis points.
	Percent int64 = 100
	// HundredPercent is the whole amount in basis points.
	HundredPercent int64 = 100 * Percent
)

// MulDiv returns amount × num ÷ den, computed exactly (the product is held in 128 bits) and rounded
// once by the package's rule: to the nearest santim, an exact half to the even santim. den must be
// positive (ErrInvalid); a result outside int64 is ErrOverflow.
func MulDiv(amount, num, den int64) (int64, error) {
	if den <= 0 {
		return 0, fmt.Errorf("%w: divisor %d is not positive", ErrInvalid, den)
	}
	hi, lo := bits.Mul64(magnitude(amount), magnitude(num))
	d := uint64(den)
	if hi >= d { // the quotient is at least 2^64
		return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, amount, num, den)
	}
	q, r := bits.Div64(hi, lo, d)
	if roundsUp(q, r, d) {
		if q == math.MaxUint64 { // far outside int64 either way; do not let q wrap to 0
			return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, amount, num, den)
		}
		q++
	}
	v, ok := signed(q, (amount < 0) != (num < 0))
	if !ok {
		return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, amount, num, den)
	}
	return v, nil
}

// MulDivFloor returns amount × num ÷ den, computed exactly and rounded down (toward negative
// infinity) instead of to the nearest santim. It is for limits and caps, which must never allow
// more than their exact value: a third of 1,000 santim is a cap of 333, not 333.33 rounded. It is
// not a second rounding rule for amounts charged or paid (those go through MulDiv); a cap is
// compared with amounts, never booked. den must be positive (ErrInvalid); a result outside int64
// is ErrOverflow.
func MulDivFloor(amount, num, den int64) (int64, error) {
	if den <= 0 {
		return 0, fmt.Errorf("%w: divisor %d is not positive", ErrInvalid, den)
	}
	hi, lo := bits.Mul64(magnitude(amount), magnitude(num))
	d := uint64(den)
	if hi >= d {
		return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, amount, num, den)
	}
	q, r := bits.Div64(hi, lo, d)
	neg := (amount < 0) != (num < 0)
	if neg && r != 0 { // the floor of a negative quotient is one further from zero
		if q == math.MaxUint64 {
			return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, amount, num, den)
		}
		q++
	}
	v, ok := signed(q, neg)
	if !ok {
		return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, amount, num, den)
	}
	return v, nil
}

// roundsUp is the rounding rule on magnitudes: quotient q with remainder r of divisor d moves up
// when r/d is above one half, or exactly one half and q is odd (half to even). Rounding the
// magnitude and then applying the sign is the same rule on the signed value, since the rule is
// symmetric.
func roundsUp(q, r, d uint64) bool {
	rest := d - r // > 0 since r < d; comparing r with d-r avoids 2r overflowing
	return r > rest || (r == rest && q&1 == 1)
}

// ApplyBasisPoints returns bps basis points of amount (amount × bps ÷ 10,000), rounded by the
// package's rule: ApplyBasisPoints(1_001, 250) is 25 (25.025), ApplyBasisPoints(50, 100) is 0
// (0.5, to even), ApplyBasisPoints(150, 100) is 2 (1.5, to even). Either may be negative (a
// refund, a discount); the result is ErrOverflow only when it leaves int64.
func ApplyBasisPoints(amount, bps int64) (int64, error) {
	return MulDiv(amount, bps, HundredPercent)
}

// FormatPercent renders a rate of basis points as a percentage with two decimals for statements
// and payslips: 250 → "2.50%", 5 → "0.05%", -1 → "-0.01%".
func FormatPercent(bps int64) string {
	return FormatMajor(bps) + "%"
}
