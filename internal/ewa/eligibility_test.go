package ewa_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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

func TestSettingsValidate(t *testing.T) {
	ok := ewa.Settings{Funding: ewa.Account{Partner: "sandbox", AccountNumber: "2000-01"}, AccessCapPercent: 50}
	require.NoError(t, ok.Validate())
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
	} {
		s := ok
		c.change(&s)
		err := s.Validate()
		var fe *field.Error
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, c.field, fe.Field, name)
	}
}
