package ewa_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

func TestPeriod(t *testing.T) {
	start, end := ewa.Period(time.Date(2028, 2, 29, 23, 59, 0, 0, time.UTC))
	require.Equal(t, time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), start)
	require.Equal(t, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), end)
	// The period is the UTC month, whatever the clock's zone.
	addis := time.FixedZone("EAT", 3*3600)
	start, _ = ewa.Period(time.Date(2026, 12, 1, 1, 0, 0, 0, addis))
	require.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), start)
}

func TestFeeRoundsHalfToEven(t *testing.T) {
	s := ewa.Settings{FeeFlatSantim: 500, FeeBasisPoints: 250}
	for _, c := range []struct{ principal, fee int64 }{
		{100_020, 500 + 2_500}, // 2,500.5 → 2,500
		{100_060, 500 + 2_502}, // 2,501.5 → 2,502
		{100_041, 500 + 2_501}, // 2,501.025 → 2,501
		{1, 500},               // 0.025 → 0
		{money.MaxAmountSantim, 500 + 25_000_000_000},
	} {
		fee, err := ewa.Fee(c.principal, s)
		require.NoError(t, err)
		require.Equal(t, c.fee, fee, c.principal)
	}
}

func TestCompute(t *testing.T) {
	s := ewa.Settings{AccessCapPercent: 100}
	// February 2028 has 29 days; the 29th earns the whole salary.
	e, err := ewa.Compute(2_900, 0, true, s, time.Date(2028, 2, 29, 23, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.EqualValues(t, 2_900, e.EarnedSantim)
	require.EqualValues(t, 2_900, e.MaxPrincipalSantim)
	// Outstanding above the cap leaves 0, never a negative availability.
	e, err = ewa.Compute(3_000, 5_000, true, s, time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.EqualValues(t, 103, e.EarnedSantim, "3,000 × 1 / 29 = 103.4, down")
	require.Zero(t, e.AvailableSantim)
	require.Zero(t, e.MaxPrincipalSantim)
	// A flat fee larger than the availability: nothing fits.
	e, err = ewa.Compute(3_000, 0, true, ewa.Settings{AccessCapPercent: 100, FeeFlatSantim: 200}, time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Zero(t, e.MaxPrincipalSantim)
	// Not ACTIVE: nothing available, though the figures are shown.
	e, err = ewa.Compute(3_000, 0, false, s, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.EqualValues(t, 3_000, e.CapSantim)
	require.Zero(t, e.AvailableSantim)
	// The largest salary and a 100% fee stay exact.
	e, err = ewa.Compute(money.MaxAmountSantim, 0, true, ewa.Settings{AccessCapPercent: 100, FeeBasisPoints: 10_000, FeeFlatSantim: 1},
		time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.EqualValues(t, 499_999_999_999, e.MaxPrincipalSantim, "2p + 1 ≤ 1e12")
	_, err = ewa.Compute(-1, 0, true, s, time.Now())
	require.ErrorIs(t, err, money.ErrInvalid)
}

// TestMaxPrincipalIsTheLargestThatFits checks the search against its definition on a grid.
func TestMaxPrincipalIsTheLargestThatFits(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, salary := range []int64{0, 1, 99, 1_000_001, 7_654_321} {
		for _, s := range []ewa.Settings{
			{AccessCapPercent: 50}, {AccessCapPercent: 33, FeeFlatSantim: 7, FeeBasisPoints: 1}, {AccessCapPercent: 100, FeeBasisPoints: 9_999},
			{AccessCapPercent: 1, FeeFlatSantim: 1_000},
		} {
			e, err := ewa.Compute(salary, 0, true, s, now)
			require.NoError(t, err)
			if e.MaxPrincipalSantim > 0 {
				_, ok, err := ewa.Allowed(e.MaxPrincipalSantim, e.AvailableSantim, s)
				require.NoError(t, err)
				require.True(t, ok)
			}
			_, ok, err := ewa.Allowed(e.MaxPrincipalSantim+1, e.AvailableSantim, s)
			require.NoError(t, err)
			require.False(t, ok, "salary %d settings %+v", salary, s)
		}
	}
}

func ptr(v int64) *int64 { return &v }

func TestSettingsValidate(t *testing.T) {
	ok := ewa.Settings{Funding: ewa.Account{Partner: "sandbox", AccountNumber: "2000-01"}, AccessCapPercent: 50}
	require.NoError(t, ok.Validate())
	edges := ok
	edges.MaxPerDaySantim, edges.MaxPerPeriodSantim = ptr(1), ptr(money.MaxAmountSantim)
	edges.MaxRequestsPerDay, edges.MaxRequestsPerPeriod = ptr(1), ptr(ewa.MaxRequestsCap)
	require.NoError(t, edges.Validate(), "each cap's bounds are allowed")
	require.NoError(t, ewa.DefaultSettings("t").Validate(), "the defaults (no funding account) are valid")
	for name, c := range map[string]struct {
		change func(*ewa.Settings)
		field  string
	}{
		"partner upper case": {func(s *ewa.Settings) { s.Funding.Partner = "Sandbox" }, "fundingAccount.partner"},
		"partner dot":        {func(s *ewa.Settings) { s.Funding.Partner = "a.b" }, "fundingAccount.partner"},
		"account colon":      {func(s *ewa.Settings) { s.Funding.AccountNumber = "a:b" }, "fundingAccount.accountNumber"},
		"account space":      {func(s *ewa.Settings) { s.Funding.AccountNumber = "a b" }, "fundingAccount.accountNumber"},
		"half an account":    {func(s *ewa.Settings) { s.Funding.AccountNumber = "" }, "fundingAccount.accountNumber"},
		"cap 0":              {func(s *ewa.Settings) { s.AccessCapPercent = 0 }, "accessCapPercent"},
		"fee flat":           {func(s *ewa.Settings) { s.FeeFlatSantim = ewa.MaxFeeFlatSantim + 1 }, "feeFlatSantim"},
		"fee bps":            {func(s *ewa.Settings) { s.FeeBasisPoints = -1 }, "feeBasisPoints"},
		"day cap 0":          {func(s *ewa.Settings) { s.MaxPerDaySantim = ptr(0) }, "maxPerDaySantim"},
		"day cap over max":   {func(s *ewa.Settings) { s.MaxPerDaySantim = ptr(money.MaxAmountSantim + 1) }, "maxPerDaySantim"},
		"period cap -1":      {func(s *ewa.Settings) { s.MaxPerPeriodSantim = ptr(-1) }, "maxPerPeriodSantim"},
		"period cap over":    {func(s *ewa.Settings) { s.MaxPerPeriodSantim = ptr(money.MaxAmountSantim + 1) }, "maxPerPeriodSantim"},
		"day count 0":        {func(s *ewa.Settings) { s.MaxRequestsPerDay = ptr(0) }, "maxRequestsPerDay"},
		"day count 101":      {func(s *ewa.Settings) { s.MaxRequestsPerDay = ptr(ewa.MaxRequestsCap + 1) }, "maxRequestsPerDay"},
		"period count 0":     {func(s *ewa.Settings) { s.MaxRequestsPerPeriod = ptr(0) }, "maxRequestsPerPeriod"},
		"period count 101":   {func(s *ewa.Settings) { s.MaxRequestsPerPeriod = ptr(ewa.MaxRequestsCap + 1) }, "maxRequestsPerPeriod"},
	} {
		s := ok
		c.change(&s)
		err := s.Validate()
		var fe *field.Error
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, c.field, fe.Field, name)
	}
}

// TestEvaluateLimits: available is the smallest room of every limit, and LimitingFactor names
// it. Salary 3,000,000 on the 23rd of a 30-day month earns 2,300,000; the 50% cap is 1,150,000.
func TestEvaluateLimits(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	base := ewa.Settings{AccessCapPercent: 50}
	with := func(change func(*ewa.Settings)) ewa.Settings {
		s := base
		change(&s)
		return s
	}
	for _, c := range []struct {
		name      string
		s         ewa.Settings
		in        ewa.Inputs
		available int64
		factor    ewa.Factor
	}{
		{"access cap only, as before", base, ewa.Inputs{OutstandingSantim: 150_000}, 1_000_000, ewa.FactorAccessCap},
		{"no usage, caps far", with(func(s *ewa.Settings) {
			s.MaxPerDaySantim, s.MaxPerPeriodSantim, s.MaxRequestsPerDay, s.MaxRequestsPerPeriod = ptr(5_000_000), ptr(9_000_000), ptr(3), ptr(10)
		}), ewa.Inputs{}, 1_150_000, ewa.FactorAccessCap},
		{"day amount binds", with(func(s *ewa.Settings) { s.MaxPerDaySantim = ptr(300_000) }),
			ewa.Inputs{OutstandingSantim: 200_000, Usage: ewa.Usage{DrawnTodaySantim: 100_000, DrawnInPeriodSantim: 200_000}}, 200_000, ewa.FactorDayAmount},
		{"period amount binds, repaid advances count", with(func(s *ewa.Settings) {
			s.MaxPerDaySantim, s.MaxPerPeriodSantim = ptr(300_000), ptr(500_000)
		}), ewa.Inputs{OutstandingSantim: 0, Usage: ewa.Usage{DrawnInPeriodSantim: 450_000}}, 50_000, ewa.FactorPeriodAmount},
		{"drawn past a lowered cap is 0, never negative", with(func(s *ewa.Settings) { s.MaxPerPeriodSantim = ptr(100) }),
			ewa.Inputs{Usage: ewa.Usage{DrawnInPeriodSantim: 450_000}}, 0, ewa.FactorPeriodAmount},
		{"period count reached", with(func(s *ewa.Settings) { s.MaxRequestsPerPeriod = ptr(2) }),
			ewa.Inputs{Usage: ewa.Usage{RequestsInPeriod: 2, RequestsToday: 1}}, 0, ewa.FactorPeriodCount},
		{"period count not reached limits nothing", with(func(s *ewa.Settings) { s.MaxRequestsPerPeriod = ptr(3) }),
			ewa.Inputs{Usage: ewa.Usage{RequestsInPeriod: 2}}, 1_150_000, ewa.FactorAccessCap},
		{"day count reached", with(func(s *ewa.Settings) { s.MaxRequestsPerDay = ptr(1) }),
			ewa.Inputs{Usage: ewa.Usage{RequestsInPeriod: 1, RequestsToday: 1}}, 0, ewa.FactorDayCount},
		{"both counts reached: the period's first", with(func(s *ewa.Settings) { s.MaxRequestsPerDay, s.MaxRequestsPerPeriod = ptr(1), ptr(1) }),
			ewa.Inputs{Usage: ewa.Usage{RequestsInPeriod: 1, RequestsToday: 1}}, 0, ewa.FactorPeriodCount},
		{"projected net pay binds", base, ewa.Inputs{RecoverableSantim: ptr(400_000)}, 400_000, ewa.FactorProjectedNetPay},
		{"projected net pay above the cap", base, ewa.Inputs{RecoverableSantim: ptr(2_000_000)}, 1_150_000, ewa.FactorAccessCap},
		{"nothing recoverable", base, ewa.Inputs{RecoverableSantim: ptr(0)}, 0, ewa.FactorProjectedNetPay},
		{"a negative projection allows nothing", base, ewa.Inputs{RecoverableSantim: ptr(-5)}, 0, ewa.FactorProjectedNetPay},
		{"tie: the access cap before a tenant's cap", with(func(s *ewa.Settings) { s.MaxPerPeriodSantim = ptr(1_150_000) }),
			ewa.Inputs{}, 1_150_000, ewa.FactorAccessCap},
		{"tie: the projection before the amount caps", with(func(s *ewa.Settings) { s.MaxPerDaySantim = ptr(10) }),
			ewa.Inputs{RecoverableSantim: ptr(10)}, 10, ewa.FactorProjectedNetPay},
		{"not active", with(func(s *ewa.Settings) { s.MaxPerDaySantim = ptr(10) }), ewa.Inputs{Active: false, SalarySantim: 3_000_000}, 0,
			ewa.FactorEmployeeNotActive},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			if in.SalarySantim == 0 {
				in.SalarySantim, in.Active = 3_000_000, true
			}
			e, err := ewa.Evaluate(in, c.s, now)
			require.NoError(t, err)
			require.EqualValues(t, 1_150_000, e.CapSantim)
			require.Equal(t, c.available, e.AvailableSantim)
			require.Equal(t, c.factor, e.LimitingFactor)
			require.Equal(t, in.Usage, e.Usage)
			// Each room is its limit less its usage, nil when the limit is not set.
			l := e.Limits
			require.Equal(t, max(1_150_000-in.OutstandingSantim, 0), l.AccessCapSantim)
			checkRoom := func(limit *int64, used int64, got *int64) {
				if limit == nil {
					require.Nil(t, got)
					return
				}
				require.NotNil(t, got)
				require.Equal(t, max(*limit-used, 0), *got)
			}
			checkRoom(c.s.MaxPerDaySantim, in.Usage.DrawnTodaySantim, l.DayAmountSantim)
			checkRoom(c.s.MaxPerPeriodSantim, in.Usage.DrawnInPeriodSantim, l.PeriodAmountSantim)
			checkRoom(c.s.MaxRequestsPerDay, in.Usage.RequestsToday, l.DayRequestsLeft)
			checkRoom(c.s.MaxRequestsPerPeriod, in.Usage.RequestsInPeriod, l.PeriodRequestsLeft)
			if in.RecoverableSantim == nil {
				require.Nil(t, e.RecoverableSantim)
				require.Nil(t, l.ProjectedNetPaySantim)
			} else {
				require.Equal(t, max(*in.RecoverableSantim, 0), *e.RecoverableSantim)
				require.Equal(t, e.RecoverableSantim, l.ProjectedNetPaySantim)
			}
			// The largest principal fits the available amount, and one more does not.
			_, ok, err := ewa.Allowed(e.MaxPrincipalSantim+1, e.AvailableSantim, c.s)
			require.NoError(t, err)
			require.False(t, ok)
			if !in.Active {
				return
			}
			// Evaluate with no caps, no usage and no projection is the access cap alone (Compute).
			old, err := ewa.Compute(in.SalarySantim, in.OutstandingSantim, true, base, now)
			require.NoError(t, err)
			require.LessOrEqual(t, e.AvailableSantim, old.AvailableSantim, "a limit never raises availability")
		})
	}
	_, err := ewa.Evaluate(ewa.Inputs{SalarySantim: 1, Usage: ewa.Usage{RequestsToday: -1}}, base, now)
	require.ErrorIs(t, err, money.ErrInvalid)
}

// TestEvaluateNeverExceedsAnyLimit: over random settings, usage and projections, available is
// at most every room and equals one of them (or 0 with a reached count or an inactive employee).
func TestEvaluateNeverExceedsAnyLimit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opt := func(name string, lo, hi int64) *int64 {
			if rapid.Bool().Draw(t, name+"Set") {
				v := rapid.Int64Range(lo, hi).Draw(t, name)
				return &v
			}
			return nil
		}
		s := ewa.Settings{AccessCapPercent: rapid.Int64Range(1, 100).Draw(t, "cap"), FeeFlatSantim: rapid.Int64Range(0, 1_000).Draw(t, "flat"),
			FeeBasisPoints:  rapid.Int64Range(0, 10_000).Draw(t, "bps"),
			MaxPerDaySantim: opt("day", 1, 5_000_000), MaxPerPeriodSantim: opt("period", 1, 5_000_000),
			MaxRequestsPerDay: opt("dayCount", 1, ewa.MaxRequestsCap), MaxRequestsPerPeriod: opt("periodCount", 1, ewa.MaxRequestsCap)}
		require.NoError(t, s.Validate())
		in := ewa.Inputs{SalarySantim: rapid.Int64Range(0, 10_000_000).Draw(t, "salary"), Active: rapid.Bool().Draw(t, "active"),
			OutstandingSantim: rapid.Int64Range(0, 3_000_000).Draw(t, "outstanding"),
			Usage: ewa.Usage{DrawnInPeriodSantim: rapid.Int64Range(0, 6_000_000).Draw(t, "drawnPeriod"),
				DrawnTodaySantim: rapid.Int64Range(0, 6_000_000).Draw(t, "drawnToday"),
				RequestsInPeriod: rapid.Int64Range(0, 120).Draw(t, "nPeriod"), RequestsToday: rapid.Int64Range(0, 120).Draw(t, "nToday")},
			RecoverableSantim: opt("recoverable", -10, 5_000_000)}
		now := time.Date(2026, time.Month(rapid.IntRange(1, 12).Draw(t, "month")), rapid.IntRange(1, 28).Draw(t, "day"), 12, 0, 0, 0, time.UTC)
		e, err := ewa.Evaluate(in, s, now)
		require.NoError(t, err)
		require.GreaterOrEqual(t, e.AvailableSantim, int64(0))
		rooms := []*int64{&e.Limits.AccessCapSantim, e.Limits.ProjectedNetPaySantim, e.Limits.PeriodAmountSantim, e.Limits.DayAmountSantim}
		equalsOne := false
		for _, r := range rooms {
			if r != nil {
				require.LessOrEqual(t, e.AvailableSantim, *r)
				equalsOne = equalsOne || e.AvailableSantim == *r
			}
		}
		reached := e.Limits.PeriodRequestsLeft != nil && *e.Limits.PeriodRequestsLeft == 0 ||
			e.Limits.DayRequestsLeft != nil && *e.Limits.DayRequestsLeft == 0
		if reached || !in.Active {
			require.Zero(t, e.AvailableSantim)
		} else {
			require.True(t, equalsOne, "available is one of the rooms")
		}
		_, ok, err := ewa.Allowed(e.MaxPrincipalSantim+1, e.AvailableSantim, s)
		require.NoError(t, err)
		require.False(t, ok)
	})
}
