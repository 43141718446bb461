// Package money holds what every part of Wagerail agrees on about amounts: they are int64 santim
// (1/100 ETB), and they have documented bounds, so no sum the ledger or a partner adapter makes can
// leave int64.
//
// The bounds are far above any salary-linked amount (a whole payroll of a large employer is a few
// hundred million ETB) and far below int64 (about 9.2e18 santim), so the checks refuse only input
// that is a mistake or an attack.
package money

import "math"

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

// Add adds two amounts, reporting overflow instead of wrapping.
func Add(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// ValidAmount reports whether v is a positive amount within MaxAmountSantim.
func ValidAmount(v int64) bool { return v > 0 && v <= MaxAmountSantim }
