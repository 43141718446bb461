// Package schedule is a loan's amortisation schedule: equal monthly instalments (an annuity),
// interest on the declining balance, integer santim. It is pure — no I/O, no clock — so a quote,
// an origination and a later restructure compute the same schedule from the same terms, and
// property tests can hold it to its rules. It imports only the standard library and the
// platform's money and field packages; no float touches an amount.
//
// # The schedule
//
// The monthly rate is the annual rate ÷ 12: i = AnnualRateBasisPoints ÷ 120,000. The level
// payment (principal + interest of every instalment but the last) is the annuity
//
//	A = P × i × (1 + i)^n ÷ ((1 + i)^n − 1)        (A = P ÷ n when the rate is 0)
//
// computed exactly with integers and rounded once, by the money package's rule (to the nearest
// santim, an exact half to the even santim). Instalment k (k = 0 … n−1) then takes
//
//	interest_k  = balance_k × i, rounded by the same rule (money.MulDiv)
//	principal_k = A − interest_k, but never more than balance_k
//	balance_k+1 = balance_k − principal_k
//
// and the LAST instalment takes the whole remaining balance as its principal, whatever A says:
// the santim the rounding of A and of each month's interest left over go to the last
// instalment, so its principal + interest may differ from A by that much. So the principal parts
// add up to the principal EXACTLY, every balance is between 0 and the principal and falls every
// month, the last balance is 0, and every instalment but the last pays exactly A.
//
// # Terms that do not amortise
//
// Rounding moves a balance by up to a santim a month, and that compounds: after k months the
// balance is within S_k = ((1 + i)^k − 1) ÷ i santim of the exact annuity's. With a high rate,
// a long term and a small principal, a month's exact principal part can be under a santim, and
// the compounded santim can pay the loan off months early or leave whole instalments without
// principal (980.08 ETB at 100% a year over 98 months: A rounded up by under half a santim pays
// it off a month early). An instalment without principal is one the borrower pays only interest
// on, and one of 0 santim can never be repaid, so it would keep the loan open and past due for
// ever. Such terms are refused (ErrNotAmortising): every instalment of a schedule repays at
// least one santim of principal, and every balance but the last is above 0. LongestTerm says
// how long a term a principal can take.
//
// When they are accepted: with p₀ = P ÷ s_n, the first month's exact principal part, where
// s_n = Σ_{j<n} (1 + i)^j, instalment k's principal part is within (1 + i)^k of the exact
// p₀ × (1 + i)^k, and the balance before the last is within S_{n−1} of the exact p₀ × (1 + i)^(n−1).
// So terms with p₀ > max(1, a_{n−1}), a_{n−1} = Σ_{1≤j<n} (1 + i)^−j, are always accepted. Every
// loan product's terms are (10 ETB of principal per month of its longest term, at most 60 months,
// at most 100% a year: the lending package's test checks each term and rate); a restructure of
// a small remainder over a long term is where a refusal is met.

// # Fees
//
// The fee is FeeFlatSantim + FeeBasisPoints of the principal (money.ApplyBasisPoints, the same
// rule), charged with the instalments, not deducted from the amount paid out: it is spread over
// the n instalments with money.Allocate in equal weights, so the fee parts add up to the fee
// exactly, differ by at most one santim, and the earlier instalments carry the extra santim. A
// fee spread this way keeps every instalment near A + fee ÷ n, so the payroll deduction is
// steady and affordability is judged on one figure (MaxInstalmentSantim) rather than on a large
// first instalment.
//
// # Figures
//
// APRBasisPoints is the annual percentage rate of the whole cost (interest and fee): the
// smallest whole number of basis points R such that the instalments, discounted monthly at
// R ÷ 120,000, are worth no more than the principal paid out — the nominal yearly rate the
// borrower actually pays, rounded up to a whole basis point; nil when above MaxAPRBasisPoints.
package schedule

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Bounds of the terms a schedule is computed for.
const (
	MaxTermMonths            = 120
	MaxAnnualRateBasisPoints = 10_000 // 100% a year
	MaxFeeBasisPoints        = 10_000
	// MaxAPRBasisPoints bounds the APR search (1,000,000% a year); a cost beyond it is reported
	// as no figure.
	MaxAPRBasisPoints = 100_000_000
	// MinPeriod and MaxPeriod bound the due periods ("YYYY-MM", UTC calendar months), as every
	// payroll period is bounded.
	MinPeriod = "2000-01"
	MaxPeriod = "2100-12"
)

// monthsPerYearBasis is the denominator of the monthly rate: 12 months × 10,000 basis points.
const monthsPerYearBasis = 12 * money.HundredPercent

// Terms is what a schedule is computed from.
type Terms struct {
	PrincipalSantim       int64 // 1 … money.MaxAmountSantim
	AnnualRateBasisPoints int64 // 0 … MaxAnnualRateBasisPoints
	TermMonths            int   // 1 … MaxTermMonths
	FeeFlatSantim         int64 // 0 … money.MaxAmountSantim
	FeeBasisPoints        int64 // 0 … MaxFeeBasisPoints, of the principal
	FirstDuePeriod        string
}

// Instalment is one line of the schedule.
type Instalment struct {
	Index           int    // 0 … TermMonths−1
	DuePeriod       string // the payroll period it is deducted in
	PrincipalSantim int64
	InterestSantim  int64
	FeeSantim       int64
	TotalSantim     int64 // principal + interest + fee
	BalanceSantim   int64 // principal still owed after this instalment
}

// Schedule is the whole plan.
type Schedule struct {
	Instalments []Instalment
	// PaymentSantim is A, the level principal + interest of every instalment but the last.
	PaymentSantim int64
	// MaxInstalmentSantim is the largest TotalSantim: what affordability is judged on.
	MaxInstalmentSantim  int64
	TotalPrincipalSantim int64 // = the principal
	TotalInterestSantim  int64
	TotalFeeSantim       int64
	TotalSantim          int64 // everything the borrower repays
	APRBasisPoints       *int64
}

// Check validates terms; the error is a *field.Error naming the term (the caller's 400).
func (t Terms) Check() error {
	switch {
	case t.PrincipalSantim < 1 || t.PrincipalSantim > money.MaxAmountSantim:
		return &field.Error{Field: "amountSantim", Problem: fmt.Sprintf("must be from 1 to %d", money.MaxAmountSantim)}
	case t.AnnualRateBasisPoints < 0 || t.AnnualRateBasisPoints > MaxAnnualRateBasisPoints:
		return &field.Error{Field: "annualRateBasisPoints", Problem: fmt.Sprintf("must be from 0 to %d", MaxAnnualRateBasisPoints)}
	case t.TermMonths < 1 || t.TermMonths > MaxTermMonths:
		return &field.Error{Field: "termMonths", Problem: fmt.Sprintf("must be from 1 to %d", MaxTermMonths)}
	case t.FeeFlatSantim < 0 || t.FeeFlatSantim > money.MaxAmountSantim:
		return &field.Error{Field: "feeFlatSantim", Problem: fmt.Sprintf("must be from 0 to %d", money.MaxAmountSantim)}
	case t.FeeBasisPoints < 0 || t.FeeBasisPoints > MaxFeeBasisPoints:
		return &field.Error{Field: "feeBasisPoints", Problem: fmt.Sprintf("must be from 0 to %d", MaxFeeBasisPoints)}
	}
	first, err := parsePeriod(t.FirstDuePeriod)
	if err != nil {
		return &field.Error{Field: "firstDuePeriod", Problem: err.Error()}
	}
	if last := first.AddDate(0, t.TermMonths-1, 0).Format("2006-01"); last > MaxPeriod {
		return &field.Error{Field: "termMonths", Problem: "would put the last instalment after " + MaxPeriod}
	}
	return nil
}

func parsePeriod(p string) (time.Time, error) {
	t, err := time.Parse("2006-01", p)
	if err != nil || len(p) != 7 {
		return time.Time{}, errors.New("must be a month written YYYY-MM")
	}
	if p < MinPeriod || p > MaxPeriod {
		return time.Time{}, errors.New("must be from " + MinPeriod + " to " + MaxPeriod)
	}
	return t, nil
}

// Fee is the whole fee of a loan of principal: flat + bps of the principal (rounded by the money
// package's rule).
func Fee(principal, flat, bps int64) (int64, error) {
	v, err := money.ApplyBasisPoints(principal, bps)
	if err != nil {
		return 0, err
	}
	total, ok := money.Add(v, flat)
	if !ok {
		return 0, money.ErrOverflow
	}
	return total, nil
}

// Payment is A, the level principal + interest of an annuity of principal over n months at the
// annual rate (see the package comment), rounded half to even.
func Payment(principal, annualBasisPoints int64, n int) int64 {
	if annualBasisPoints == 0 {
		v, _ := money.MulDiv(principal, 1, int64(n)) // principal ≤ MaxAmountSantim: no overflow
		return v
	}
	b := big.NewInt(monthsPerYearBasis)
	a := big.NewInt(monthsPerYearBasis + annualBasisPoints)
	an := new(big.Int).Exp(a, big.NewInt(int64(n)), nil)
	bn := new(big.Int).Exp(b, big.NewInt(int64(n)), nil)
	num := new(big.Int).Mul(big.NewInt(principal), big.NewInt(annualBasisPoints))
	num.Mul(num, an)
	den := new(big.Int).Sub(an, bn)
	den.Mul(den, b)
	return roundHalfEven(num, den)
}

// roundHalfEven is num ÷ den (both positive) to the nearest integer, an exact half to the even.
func roundHalfEven(num, den *big.Int) int64 {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	twice := new(big.Int).Lsh(r, 1)
	switch c := twice.Cmp(den); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// ErrNotAmortising refuses terms whose schedule would have an instalment that repays no
// principal (see "Terms that do not amortise"): the caller's term is too long for its principal
// at its rate.
var ErrNotAmortising = &field.Error{Field: "termMonths",
	Problem: "is too long for this principal at this rate: an instalment would repay no principal"}

// Compute is the schedule of t with its APR (see the package comment). Errors: a *field.Error
// for terms out of bounds, ErrNotAmortising.
func Compute(t Terms) (Schedule, error) {
	s, err := Plan(t)
	if err != nil {
		return Schedule{}, err
	}
	s.APRBasisPoints = apr(t.PrincipalSantim, s.Instalments)
	return s, nil
}

// LongestTerm is the longest term, at most t.TermMonths, that Plan accepts with t's other
// terms; 0 when none does.
func LongestTerm(t Terms) int {
	for n := min(t.TermMonths, MaxTermMonths); n >= 1; n-- {
		t.TermMonths = n
		if _, err := Plan(t); err == nil {
			return n
		}
	}
	return 0
}

// Plan is Compute without the APR (nil), for a caller that tries many principals (the largest
// affordable amount) and needs only the instalments.
func Plan(t Terms) (Schedule, error) {
	if err := t.Check(); err != nil {
		return Schedule{}, err
	}
	n := t.TermMonths
	fee, err := Fee(t.PrincipalSantim, t.FeeFlatSantim, t.FeeBasisPoints)
	if err != nil {
		return Schedule{}, &field.Error{Field: "feeFlatSantim", Problem: "makes the fee too large"}
	}
	weights := make([]int64, n)
	for i := range weights {
		weights[i] = 1
	}
	fees, err := money.Allocate(fee, weights)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule: fee split: %w", err)
	}
	first, _ := parsePeriod(t.FirstDuePeriod)
	s := Schedule{Instalments: make([]Instalment, n), PaymentSantim: Payment(t.PrincipalSantim, t.AnnualRateBasisPoints, n)}
	balance := t.PrincipalSantim
	for k := 0; k < n; k++ {
		interest, err := money.MulDiv(balance, t.AnnualRateBasisPoints, monthsPerYearBasis)
		if err != nil {
			return Schedule{}, fmt.Errorf("schedule: interest: %w", err)
		}
		principal := balance
		if k < n-1 {
			principal = s.PaymentSantim - interest
			if principal < 1 || principal >= balance {
				return Schedule{}, ErrNotAmortising
			}
		}
		balance -= principal
		in := Instalment{Index: k, DuePeriod: first.AddDate(0, k, 0).Format("2006-01"), PrincipalSantim: principal,
			InterestSantim: interest, FeeSantim: fees[k], TotalSantim: principal + interest + fees[k], BalanceSantim: balance}
		s.Instalments[k] = in
		s.MaxInstalmentSantim = max(s.MaxInstalmentSantim, in.TotalSantim)
		s.TotalPrincipalSantim += principal
		s.TotalInterestSantim += interest
		s.TotalFeeSantim += in.FeeSantim
		s.TotalSantim += in.TotalSantim
	}
	return s, nil
}

// apr is the smallest whole annual rate R (basis points) at which the present value of the
// instalments, discounted monthly at R ÷ 120,000 with the first a month away, is at most the
// principal; nil when none up to MaxAPRBasisPoints. The present value falls as R rises, so R is
// found by bisection, each test exact in integers:
//
//	Σ total_k × b^(k+1) × a^(n−k−1) ≤ P × a^n,   a = 120,000 + R, b = 120,000.
func apr(principal int64, ins []Instalment) *int64 {
	rhs0 := big.NewInt(principal)
	within := func(r int64) bool {
		a := big.NewInt(monthsPerYearBasis + r)
		b := big.NewInt(monthsPerYearBasis)
		// Horner: acc = Σ c_k × a^(n−1−k) with c_k = total_k × b^(k+1).
		acc, bPow, c := new(big.Int), new(big.Int).Set(b), new(big.Int)
		for _, in := range ins {
			acc.Mul(acc, a)
			acc.Add(acc, c.Mul(big.NewInt(in.TotalSantim), bPow))
			bPow.Mul(bPow, b)
		}
		rhs := new(big.Int).Exp(a, big.NewInt(int64(len(ins))), nil)
		rhs.Mul(rhs, rhs0)
		return acc.Cmp(rhs) <= 0
	}
	if !within(MaxAPRBasisPoints) {
		return nil
	}
	if within(0) {
		z := int64(0)
		return &z
	}
	lo, hi := int64(0), int64(MaxAPRBasisPoints) // within(lo) is false, within(hi) true
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if within(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return &hi
}
