package schedule_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/lending/schedule"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

type row struct {
	principal, interest, fee, total, balance int64
}

func rows(s schedule.Schedule) []row {
	out := make([]row, len(s.Instalments))
	for i, in := range s.Instalments {
		out[i] = row{in.PrincipalSantim, in.InterestSantim, in.FeeSantim, in.TotalSantim, in.BalanceSantim}
	}
	return out
}

// TestGoldenSchedules: schedules worked out by hand to the santim.
func TestGoldenSchedules(t *testing.T) {
	t.Parallel()
	t.Run("12% a year over 3 months", func(t *testing.T) {
		// P = 1,200.00 ETB, i = 1,200 / 120,000 = 1% a month, n = 3, no fee.
		// A = 120,000 × 0.01 × 1.01³ / (1.01³ − 1) = 1,236.3612 / 0.030301 = 40,802.65… → 40,803.
		// k=0: interest 120,000 × 1% = 1,200;      principal 40,803 − 1,200 = 39,603; balance 80,397.
		// k=1: interest 80,397 × 1% = 803.97 → 804; principal 40,803 − 804 = 39,999;  balance 40,398.
		// k=2: interest 40,398 × 1% = 403.98 → 404; principal = the balance 40,398;   total 40,802.
		// Σ principal = 39,603 + 39,999 + 40,398 = 120,000; Σ interest = 2,408.
		// APR: at 1,200 bp the present value is 40,803/1.01 + 40,803/1.0201 + 40,802/1.030301 =
		// 40,399.0099 + 39,999.0197 + 39,602.0194 = 120,000.05 > 120,000 (A was rounded up by
		// 0.35), so the APR is the next basis point up: 1,201.
		s, err := schedule.Compute(schedule.Terms{PrincipalSantim: 120_000, AnnualRateBasisPoints: 1_200, TermMonths: 3, FirstDuePeriod: "2026-12"})
		require.NoError(t, err)
		require.Equal(t, int64(40_803), s.PaymentSantim)
		require.Equal(t, []row{{39_603, 1_200, 0, 40_803, 80_397}, {39_999, 804, 0, 40_803, 40_398}, {40_398, 404, 0, 40_802, 0}}, rows(s))
		require.Equal(t, []string{"2026-12", "2027-01", "2027-02"}, []string{s.Instalments[0].DuePeriod, s.Instalments[1].DuePeriod, s.Instalments[2].DuePeriod})
		require.Equal(t, int64(120_000), s.TotalPrincipalSantim)
		require.Equal(t, int64(2_408), s.TotalInterestSantim)
		require.Equal(t, int64(122_408), s.TotalSantim)
		require.Equal(t, int64(40_803), s.MaxInstalmentSantim)
		require.Equal(t, int64(1_201), *s.APRBasisPoints)
	})
	t.Run("no interest, flat and percentage fee", func(t *testing.T) {
		// P = 1,000.00 ETB over 3 months at 0%: A = 100,000 / 3 = 33,333.33 → 33,333; the last
		// takes the rest, 33,334. Fee = 10.00 ETB flat + 2.5% of 100,000 (2,500) = 3,500, spread
		// by Allocate in equal parts: 1,166.67 each → 1,166 each and 2 santim left, one each to
		// the first two (equal fractions: earlier first): 1,167, 1,167, 1,166. Every instalment is
		// 34,500.
		s, err := schedule.Compute(schedule.Terms{PrincipalSantim: 100_000, TermMonths: 3, FeeFlatSantim: 1_000, FeeBasisPoints: 250, FirstDuePeriod: "2026-11"})
		require.NoError(t, err)
		require.Equal(t, int64(33_333), s.PaymentSantim)
		require.Equal(t, []row{{33_333, 0, 1_167, 34_500, 66_667}, {33_333, 0, 1_167, 34_500, 33_334}, {33_334, 0, 1_166, 34_500, 0}}, rows(s))
		require.Equal(t, int64(3_500), s.TotalFeeSantim)
		require.Equal(t, int64(103_500), s.TotalSantim)
		require.Equal(t, int64(2_088), *s.APRBasisPoints, "a 3.5% fee over 3 months is about 20.9% a year")
	})
	t.Run("18% a year over 12 months with a 1% fee", func(t *testing.T) {
		// P = 50,000.00 ETB, i = 1.5% a month. A = 75,000 × 1.015¹² / (1.015¹² − 1) =
		// 75,000 × 1.195618… / 0.195618… = 458,399.99… → 458,400. Fee 1% = 50,000 santim: 4,166.67
		// a month → eight of 4,167 and four of 4,166. k=0: interest 75,000, principal 383,400;
		// k=1: interest 4,616,600 × 1.5% = 69,249, principal 389,151; … the last: interest
		// 451,625 × 1.5% = 6,774.375 → 6,774, principal 451,625 (the balance), total 462,565.
		s, err := schedule.Compute(schedule.Terms{PrincipalSantim: 5_000_000, AnnualRateBasisPoints: 1_800, TermMonths: 12, FeeBasisPoints: 100, FirstDuePeriod: "2026-12"})
		require.NoError(t, err)
		require.Equal(t, int64(458_400), s.PaymentSantim)
		want := []row{
			{383_400, 75_000, 4_167, 462_567, 4_616_600}, {389_151, 69_249, 4_167, 462_567, 4_227_449},
			{394_988, 63_412, 4_167, 462_567, 3_832_461}, {400_913, 57_487, 4_167, 462_567, 3_431_548},
			{406_927, 51_473, 4_167, 462_567, 3_024_621}, {413_031, 45_369, 4_167, 462_567, 2_611_590},
			{419_226, 39_174, 4_167, 462_567, 2_192_364}, {425_515, 32_885, 4_167, 462_567, 1_766_849},
			{431_897, 26_503, 4_166, 462_566, 1_334_952}, {438_376, 20_024, 4_166, 462_566, 896_576},
			{444_951, 13_449, 4_166, 462_566, 451_625}, {451_625, 6_774, 4_166, 462_565, 0},
		}
		require.Equal(t, want, rows(s))
		require.Equal(t, "2027-11", s.Instalments[11].DuePeriod)
		require.Equal(t, int64(462_567), s.MaxInstalmentSantim)
		require.Equal(t, int64(1_975), *s.APRBasisPoints)
	})
	t.Run("one month", func(t *testing.T) {
		// 24% a year: 2% of 10,000 = 200 interest; the one instalment takes the whole principal.
		s, err := schedule.Compute(schedule.Terms{PrincipalSantim: 10_000, AnnualRateBasisPoints: 2_400, TermMonths: 1, FeeFlatSantim: 50, FirstDuePeriod: "2100-12"})
		require.NoError(t, err)
		require.Equal(t, []row{{10_000, 200, 50, 10_250, 0}}, rows(s))
		require.Equal(t, int64(3_000), *s.APRBasisPoints, "250 on 10,000 for a month is 2.5% a month, 30% a year")
	})
}

func TestTermsRefused(t *testing.T) {
	t.Parallel()
	ok := schedule.Terms{PrincipalSantim: 100_000, AnnualRateBasisPoints: 1_000, TermMonths: 12, FirstDuePeriod: "2026-12"}
	for name, tc := range map[string]struct {
		change func(*schedule.Terms)
		field  string
	}{
		"zero principal":      {func(t *schedule.Terms) { t.PrincipalSantim = 0 }, "amountSantim"},
		"principal too large": {func(t *schedule.Terms) { t.PrincipalSantim = money.MaxAmountSantim + 1 }, "amountSantim"},
		"negative rate":       {func(t *schedule.Terms) { t.AnnualRateBasisPoints = -1 }, "annualRateBasisPoints"},
		"rate too high":       {func(t *schedule.Terms) { t.AnnualRateBasisPoints = 10_001 }, "annualRateBasisPoints"},
		"no term":             {func(t *schedule.Terms) { t.TermMonths = 0 }, "termMonths"},
		"term too long":       {func(t *schedule.Terms) { t.TermMonths = 121 }, "termMonths"},
		"negative fee":        {func(t *schedule.Terms) { t.FeeFlatSantim = -1 }, "feeFlatSantim"},
		"fee bps too high":    {func(t *schedule.Terms) { t.FeeBasisPoints = 10_001 }, "feeBasisPoints"},
		"bad period":          {func(t *schedule.Terms) { t.FirstDuePeriod = "2026-13" }, "firstDuePeriod"},
		"period too early":    {func(t *schedule.Terms) { t.FirstDuePeriod = "1999-12" }, "firstDuePeriod"},
		"ends after 2100-12":  {func(t *schedule.Terms) { t.FirstDuePeriod = "2100-02" }, "termMonths"},
	} {
		terms := ok
		tc.change(&terms)
		_, err := schedule.Compute(terms)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, tc.field, fe.Field, name)
	}
}

// TestScheduleProperties: for any terms within the bounds, the schedule keeps its rules.
func TestScheduleProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		terms := schedule.Terms{
			// Small principals too, where long terms at high rates do not amortise.
			PrincipalSantim:       rapid.OneOf(rapid.Int64Range(1, 10_000_000), rapid.Int64Range(1, money.MaxAmountSantim)).Draw(t, "principal"),
			AnnualRateBasisPoints: rapid.Int64Range(0, schedule.MaxAnnualRateBasisPoints).Draw(t, "rate"),
			TermMonths:            rapid.IntRange(1, schedule.MaxTermMonths).Draw(t, "n"),
			FeeFlatSantim:         rapid.Int64Range(0, 10_000_000).Draw(t, "flat"),
			FeeBasisPoints:        rapid.Int64Range(0, schedule.MaxFeeBasisPoints).Draw(t, "feeBps"),
			FirstDuePeriod:        "2026-12",
		}
		n := terms.TermMonths
		s, err := schedule.Compute(terms)
		if errors.Is(err, schedule.ErrNotAmortising) {
			// Refused: only terms outside the sufficient condition may be, and a shorter term
			// that amortises is named.
			if surelyAmortises(terms.PrincipalSantim, terms.AnnualRateBasisPoints, n) {
				t.Fatalf("refused terms that surely amortise")
			}
			longest := schedule.LongestTerm(terms)
			if longest < 1 || longest >= n {
				t.Fatalf("longest term %d for a refused term of %d", longest, n)
			}
			terms.TermMonths = longest
			if _, err := schedule.Compute(terms); err != nil {
				t.Fatalf("the longest term %d is refused: %v", longest, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("compute: %v", err)
		}
		if got := schedule.LongestTerm(terms); got != n {
			t.Fatalf("longest term %d for accepted terms of %d", got, n)
		}
		if len(s.Instalments) != n {
			t.Fatalf("%d instalments for %d months", len(s.Instalments), n)
		}
		fee, _ := schedule.Fee(terms.PrincipalSantim, terms.FeeFlatSantim, terms.FeeBasisPoints)
		var sumP, sumI, sumF, sumT, maxT int64
		prev := terms.PrincipalSantim
		for k, in := range s.Instalments {
			if in.Index != k {
				t.Fatalf("index %d at %d", in.Index, k)
			}
			if in.PrincipalSantim < 0 || in.InterestSantim < 0 || in.FeeSantim < 0 {
				t.Fatalf("negative part at %d: %+v", k, in)
			}
			if in.TotalSantim != in.PrincipalSantim+in.InterestSantim+in.FeeSantim {
				t.Fatalf("total is not the sum of its parts at %d: %+v", k, in)
			}
			if in.BalanceSantim != prev-in.PrincipalSantim || in.BalanceSantim < 0 || (k < n-1) != (in.BalanceSantim > 0) {
				t.Fatalf("balance at %d: %d after %d", k, in.BalanceSantim, prev)
			}
			// Every instalment repays principal: the balance falls every month.
			if in.PrincipalSantim < 1 {
				t.Fatalf("instalment %d repays no principal: %+v", k, in)
			}
			// The interest is the rounded interest of the balance before it.
			if want, _ := money.MulDiv(prev, terms.AnnualRateBasisPoints, 120_000); in.InterestSantim != want {
				t.Fatalf("interest at %d: %d, want %d", k, in.InterestSantim, want)
			}
			if k < n-1 && in.PrincipalSantim+in.InterestSantim != s.PaymentSantim {
				t.Fatalf("instalment %d is not level: %d + %d != %d", k, in.PrincipalSantim, in.InterestSantim, s.PaymentSantim)
			}
			if k > 0 && (in.FeeSantim > s.Instalments[k-1].FeeSantim || s.Instalments[k-1].FeeSantim-in.FeeSantim > 1) {
				t.Fatalf("fee parts are not even, earlier first, at %d", k)
			}
			prev = in.BalanceSantim
			sumP += in.PrincipalSantim
			sumI += in.InterestSantim
			sumF += in.FeeSantim
			sumT += in.TotalSantim
			maxT = max(maxT, in.TotalSantim)
		}
		if sumP != terms.PrincipalSantim || prev != 0 {
			t.Fatalf("principal parts add up to %d of %d, last balance %d", sumP, terms.PrincipalSantim, prev)
		}
		if sumF != fee || s.TotalFeeSantim != fee {
			t.Fatalf("fee parts add up to %d of %d", sumF, fee)
		}
		if s.TotalPrincipalSantim != sumP || s.TotalInterestSantim != sumI || s.TotalSantim != sumT || s.MaxInstalmentSantim != maxT {
			t.Fatalf("totals %+v", s)
		}
		if s.APRBasisPoints != nil && terms.FeeFlatSantim == 0 && terms.FeeBasisPoints == 0 && terms.PrincipalSantim >= 1_000_000 {
			// Without a fee the APR is the nominal rate, give or take the rounding of A.
			if d := *s.APRBasisPoints - terms.AnnualRateBasisPoints; d < -2 || d > 2 {
				t.Fatalf("APR %d for a rate of %d and no fee", *s.APRBasisPoints, terms.AnnualRateBasisPoints)
			}
		}
	})
}

// TestTermsThatDoNotAmortise: terms whose level schedule would leave an instalment without
// principal are refused, and LongestTerm names the longest that is not.
func TestTermsThatDoNotAmortise(t *testing.T) {
	t.Parallel()
	// 3 santim at 0%: over 6 months A = 0.5 → 0 (to the even) repays nothing; over 5 or 4, A = 1
	// pays the loan off in the third month and leaves the rest empty; over 3, A = 1 is exact.
	small := schedule.Terms{PrincipalSantim: 3, TermMonths: 6, FirstDuePeriod: "2026-12"}
	for _, n := range []int{6, 5, 4} {
		small.TermMonths = n
		_, err := schedule.Compute(small)
		require.ErrorIs(t, err, schedule.ErrNotAmortising, "%d months", n)
		var fe *field.Error
		require.ErrorAs(t, err, &fe)
		require.Equal(t, "termMonths", fe.Field)
	}
	small.TermMonths = 6
	require.Equal(t, 3, schedule.LongestTerm(small))
	small.TermMonths = 3
	s, err := schedule.Compute(small)
	require.NoError(t, err)
	require.Equal(t, []row{{1, 0, 0, 1, 2}, {1, 0, 0, 1, 1}, {1, 0, 0, 1, 0}}, rows(s))

	// 980.08 ETB at 100% a year over 98 months (found by TestScheduleProperties): the first
	// month's exact principal is 0.4 santim, A = 8,170.55… rounds up, and the compounded half
	// santim pays the loan off before the last month.
	long := schedule.Terms{PrincipalSantim: 98_008, AnnualRateBasisPoints: 10_000, TermMonths: 98, FirstDuePeriod: "2026-12"}
	_, err = schedule.Compute(long)
	require.ErrorIs(t, err, schedule.ErrNotAmortising)
	n := schedule.LongestTerm(long)
	require.Less(t, n, 98)
	long.TermMonths = n
	s, err = schedule.Compute(long)
	require.NoError(t, err)
	require.Len(t, s.Instalments, n)
	require.True(t, surelyAmortises(98_008, 10_000, 60), "every product's longest term at its smallest amount amortises")
	require.False(t, surelyAmortises(98_008, 10_000, 98))
}

// surelyAmortises is the package comment's sufficient condition, exactly: P > s_n × max(1,
// a_{n−1}), with s_n = Σ_{j<n} (1+i)^j and a_{n−1} = Σ_{1≤j<n} (1+i)^−j at i = r ÷ 120,000.
func surelyAmortises(principal, r int64, n int) bool {
	x, y := big.NewRat(120_000+r, 120_000), big.NewRat(1, 1) // 1 + i, and (1 + i)^j as j runs
	s, a := new(big.Rat), new(big.Rat)
	for j := 0; j < n; j++ {
		s.Add(s, y)
		if j > 0 {
			a.Add(a, new(big.Rat).Inv(y))
		}
		y.Mul(y, x)
	}
	bound := new(big.Rat).Mul(s, maxRat(big.NewRat(1, 1), a))
	return new(big.Rat).SetInt64(principal).Cmp(bound) > 0
}

func maxRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// TestEveryProductTermAmortises: every loan a product can make satisfies the sufficient
// condition, so its schedule is never refused: for each term up to the products' longest and
// each rate up to their highest (basis point by basis point; the bound is not monotone in the
// rate), the smallest principal a product allows for that term — 10 ETB a month — is above the
// bound. Exact integers: with x = 120,000 + r and y = 120,000,
//
//	P > s_n       ⇔ P·r·y^(n−1) > x^n − y^n
//	P > s_n·a_{n−1} ⇔ P·r²·x^(n−1)·y^(n−1) > (x^n − y^n)·(x^(n−1) − y^(n−1))·y
//
// (at r = 0, s_n = n and a_{n−1} = n − 1).
func TestEveryProductTermAmortises(t *testing.T) {
	t.Parallel()
	for n := 1; n <= lending.MaxTermMonths; n++ {
		p := lending.MinPrincipalPerMonthSantim * int64(n)
		require.Greater(t, p, int64(n)*int64(max(1, n-1)), "%d months at 0%%", n)
	}
	y := big.NewInt(120_000)
	for r := int64(1); r <= lending.MaxAnnualRateBasisPoints; r++ {
		x := big.NewInt(120_000 + r)
		xPrev, yPrev := big.NewInt(1), big.NewInt(1) // x^(n−1), y^(n−1)
		xn, yn := new(big.Int), new(big.Int)
		lhs, rhs, d, dPrev := new(big.Int), new(big.Int), new(big.Int), new(big.Int)
		for n := 1; n <= lending.MaxTermMonths; n++ {
			xn.Mul(xPrev, x)
			yn.Mul(yPrev, y)
			p := big.NewInt(lending.MinPrincipalPerMonthSantim * int64(n))
			d.Sub(xn, yn)
			lhs.Mul(p, big.NewInt(r)).Mul(lhs, yPrev)
			if lhs.Cmp(d) <= 0 {
				t.Fatalf("%d months at %d bp: the first month's principal is under a santim", n, r)
			}
			lhs.Mul(lhs, big.NewInt(r)).Mul(lhs, xPrev)
			dPrev.Sub(xPrev, yPrev)
			rhs.Mul(d, dPrev).Mul(rhs, y)
			if lhs.Cmp(rhs) <= 0 {
				t.Fatalf("%d months at %d bp: the rounding could pay the loan off early", n, r)
			}
			xPrev.Set(xn)
			yPrev.Set(yn)
		}
	}
}

// TestPaymentIsTheAnnuity: A is the exact annuity rounded half to even.
func TestPaymentIsTheAnnuity(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(40_803), schedule.Payment(120_000, 1_200, 3))
	require.Equal(t, int64(8_333), schedule.Payment(100_000, 0, 12), "100,000 / 12 = 8,333.33")
	require.Equal(t, int64(2), schedule.Payment(5, 0, 2), "2.5 to the even 2")
	require.Equal(t, int64(4), schedule.Payment(7, 0, 2), "3.5 to the even 4")
}
