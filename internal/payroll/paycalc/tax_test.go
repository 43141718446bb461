package paycalc

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/money"
)

func TestTableForChoosesByPeriod(t *testing.T) {
	t.Parallel()
	for period, want := range map[string]string{
		"2000-01": TaxTable2016, "2016-07": TaxTable2016, "2025-06": TaxTable2016,
		"2025-07": TaxTable2025, "2025-12": TaxTable2025, "2100-12": TaxTable2025,
	} {
		tb, err := TableFor(period)
		require.NoError(t, err, period)
		require.Equal(t, want, tb.Version, period)
	}
	for _, bad := range []string{"1999-12", "2101-01", "2025-7", "July"} {
		_, err := TableFor(bad)
		require.Error(t, err, bad)
	}
}

// The tables are well formed: effective dates in order, bands rising, the last unbounded; and the
// highest rate plus the highest employee pension stays below 100%, so statutory deductions never
// exceed gross (net ≥ 0 always).
func TestTaxTablesAreWellFormed(t *testing.T) {
	t.Parallel()
	tables := TaxTables()
	require.Len(t, tables, 2)
	seen := map[string]bool{}
	for i, tb := range tables {
		require.False(t, seen[tb.Version])
		seen[tb.Version] = true
		_, _, err := parsePeriod(tb.EffectiveFrom)
		require.NoError(t, err)
		if i > 0 {
			require.Greater(t, tb.EffectiveFrom, tables[i-1].EffectiveFrom)
		} else {
			require.Equal(t, MinPeriod, tb.EffectiveFrom)
		}
		var prev, prevRate int64
		for j, b := range tb.Bands {
			require.GreaterOrEqual(t, b.RateBasisPoints, prevRate, "rates rise")
			require.LessOrEqual(t, b.RateBasisPoints+MaxEmployeePensionBasisPoints, money.HundredPercent)
			if j == len(tb.Bands)-1 {
				require.Zero(t, b.UpToSantim)
			} else {
				require.Greater(t, b.UpToSantim, prev)
				prev = b.UpToSantim
			}
			prevRate = b.RateBasisPoints
		}
	}
	// TaxTables is a copy.
	tables[0].Bands[0].RateBasisPoints = 9_999
	require.Zero(t, TaxTables()[0].Bands[0].RateBasisPoints)
}

// Tax agrees with the big.Rat reference everywhere, is monotone, and its marginal rate never
// exceeds the top band's.
func TestTaxAgreesWithReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 0x5eed))
	for _, tb := range TaxTables() {
		var edges []int64
		for _, b := range tb.Bands {
			if b.UpToSantim > 0 {
				edges = append(edges, b.UpToSantim-1, b.UpToSantim, b.UpToSantim+1)
			}
		}
		for range 20_000 {
			edges = append(edges, r.Int64N(5_000_000), r.Int64N(money.MaxAmountSantim+1))
		}
		edges = append(edges, 0, 1, money.MaxAmountSantim)
		for _, x := range edges {
			got, err := tb.Tax(x)
			require.NoError(t, err)
			require.Equal(t, referenceTax(tb, x), got, "%s on %d", tb.Version, x)
			next, err := tb.Tax(x + 1)
			if x < money.MaxAmountSantim {
				require.NoError(t, err)
				require.GreaterOrEqual(t, next, got)
				require.LessOrEqual(t, next-got, int64(1))
			}
		}
		_, err := tb.Tax(-1)
		require.Error(t, err)
		_, err = tb.Tax(money.MaxAmountSantim + 1)
		require.Error(t, err)
	}
}
