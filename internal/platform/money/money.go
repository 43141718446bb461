// Package money holds what every part of Wagerail agrees on about amounts: they are int64 santim
// (1/100 ETB), they have documented bounds, arithmetic on them is checked (an overflow is an
// error, never a wrap), rates are integers of basis points, one rounding rule applies wherever a
// division leaves a fraction of a santim, and amounts are written and read as decimal birr in one
// way.
//
// # Bounds
//
// The bounds are far above any salary-linked amount (a whole payroll of a large employer is a few
// hundred million ETB) and far below int64 (about 9.2e18 santim), so the checks refuse only input
// that is a mistake or an attack.
//
// # Rounding
//
// Where an exact result has a fraction of a santim (a fee of 2.5% of 1,001 santim is 25.025
// santim), it is rounded once, at the end, to the nearest santim, and an exact half goes to the
// even santim ("banker's rounding", round half to even): 0.5 → 0, 1.5 → 2, 2.5 → 2, −2.5 → −2.
// The reason is fairness over volume: a platform that computes millions of fees and interest
// amounts must not drift in its own favour (or the employee's), and rounding halves always up
// (half away from zero) adds +0.25 santim on average per half it meets, all in one direction.
// Half to even is unbiased, symmetric for negative amounts (round(−x) = −round(x)), and is the rule
// of IEEE 754 and of most accounting systems. Intermediate products are exact (128-bit), so the
// one rounding is the only one. Where several rounded parts must add up to a total (a loan split
// into instalments, a fee split between parties), do not round each part: use Allocate, which
// gives every part its share and hands the leftover santim out deterministically. A limit (the most
// a rule lets be taken, such as a third of a wage) is not an amount: it is rounded down with
// MulDivFloor, so it never allows more than its exact value.
//
// # Formats
//
// FormatETB is the form for statements and payslips ("1,234.56 ETB", "-0.05 ETB"); FormatMajor is
// the plain decimal form of files (ISO 20022 camt.053, CSV: "1234.56"). Each has a parser.
package money

import (
	"errors"
	"fmt"
	"math"
)

const (
	// Currency is the one currency Wagerail books: the Ethiopian birr, by its ISO 4217 code.
	Currency = "ETB"
	// SantimPerBirr is the birr's minor unit: amounts are integers of santim, 1/100 birr.
	SantimPerBirr int64 = 100
)

const (
	// MaxAmountSantim bounds one amount: a ledger entry, a transfer, a batch item (10 billion ETB).
	MaxAmountSantim int64 = 1_000_000_000_000
	// MaxTransactionSantim bounds the debits (equally the credits) of one ledger transaction
	// (100 billion ETB).
	MaxTransactionSantim int64 = 10_000_000_000_000
	// MaxAccountTotalSantim bounds each running total of one account: the sum of its debits and the
	// sum of its credits, pending included (10^16 ETB). With both totals at most 1e18, any balance
	// derived from them, and the sum of a handful of them, stays inside int64.
	MaxAccountTotalSantim int64 = 1_000_000_000_000_000_000
)

var (
	// ErrOverflow: the exact result does not fit in int64 santim.
	ErrOverflow = errors.New("money: amount overflows int64 santim")
	// ErrInvalid: an argument the operation is not defined for (a divisor or weight sum that is not
	// positive, a negative weight).
	ErrInvalid = errors.New("money: invalid argument")
	// ErrSyntax: text that is not an amount in the expected form.
	ErrSyntax = errors.New("money: not an amount")
)

// Add adds two amounts, reporting overflow instead of wrapping.
func Add(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// Sub returns a − b, or ErrOverflow when the exact difference leaves int64.
func Sub(a, b int64) (int64, error) {
	if (b < 0 && a > math.MaxInt64+b) || (b > 0 && a < math.MinInt64+b) {
		return 0, fmt.Errorf("%w: %d - %d", ErrOverflow, a, b)
	}
	return a - b, nil
}

// Mul returns a × b (an amount times a count, or two counts), or ErrOverflow when the exact
// product leaves int64.
func Mul(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	p := a * b
	// The product wrapped exactly when dividing it back does not give the other factor; the one
	// case division itself cannot check is MinInt64 × −1 (MinInt64 / −1 wraps to MinInt64).
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, fmt.Errorf("%w: %d * %d", ErrOverflow, a, b)
	}
	return p, nil
}

// Abs returns |a|, or ErrOverflow for math.MinInt64 (whose magnitude is not an int64).
func Abs(a int64) (int64, error) {
	if a == math.MinInt64 {
		return 0, fmt.Errorf("%w: |%d|", ErrOverflow, a)
	}
	if a < 0 {
		return -a, nil
	}
	return a, nil
}

// ValidAmount reports whether v is a positive amount within MaxAmountSantim.
func ValidAmount(v int64) bool { return v > 0 && v <= MaxAmountSantim }

// magnitude is |a| as a uint64, defined for every int64 (|MinInt64| = 2^63).
func magnitude(a int64) uint64 {
	if a < 0 {
		return uint64(^a) + 1
	}
	return uint64(a)
}

// signed turns a magnitude and a sign back into an int64, or reports that it does not fit.
func signed(m uint64, neg bool) (int64, bool) {
	switch {
	case !neg && m <= math.MaxInt64:
		return int64(m), true
	case neg && m <= 1<<63:
		return int64(^m + 1), true // two's complement: 2^63 becomes MinInt64
	}
	return 0, false
}
