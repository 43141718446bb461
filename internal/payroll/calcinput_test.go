package payroll

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
)

// TestCalcInputsAreWhatTheCalculatorPays: the mapped rows validate and are paid to the santim — a
// bonus and an OTHER earning (one exempt), an overtime entry at its recorded multiplier, and the
// reversal of an earlier taxable bonus taken before tax.
func TestCalcInputsAreWhatTheCalculatorPays(t *testing.T) {
	earnings, adjustments := CalcEarnings([]OneTimeEarning{
		{ID: "ote_bonus", Kind: EarningBonus, AmountSantim: 100_000, Taxable: true},
		{ID: "ote_other", Kind: EarningOther, AmountSantim: 5_000, Taxable: false},
	})
	require.Len(t, earnings, 1)
	require.Len(t, adjustments, 1)
	reversals := CalcReversals([]OneTimeEarning{{ID: "ote_old", Kind: EarningCommission, AmountSantim: 20_000, Taxable: true}})
	overtime := CalcOvertime([]OvertimeEntry{{ID: "ovt_1", Minutes: 120, MultiplierBasisPoints: 17_500}})
	in := paycalc.Input{Period: "2026-11", MonthlySalarySantim: 2_080_000, HireDate: paycalc.Date{Year: 2025, Month: 1, Day: 1},
		Earnings: earnings, Overtime: overtime, Adjustments: append(adjustments, reversals...), Policy: paycalc.DefaultPolicy()}
	require.NoError(t, in.Validate())
	e, err := paycalc.Calculate(in)
	require.NoError(t, err)
	// Gross: 20,800 ETB basic + 1,000 bonus + 50 exempt + 2 h × 100 ETB × 1.75 = 22,200 ETB.
	require.Equal(t, int64(2_080_000+100_000+5_000+35_000), e.GrossSantim)
	require.Equal(t, int64(5_000), e.ExemptSantim)
	taken := map[string]int64{}
	for _, d := range e.Deductions {
		taken[d.Reference] = d.AmountSantim
	}
	require.Equal(t, int64(20_000), taken["reversal:ote_old"], "the reversal is taken back in full")
	require.Equal(t, e.TaxableSantim-20_000, e.TaxBaseSantim, "before tax, as the earning was taxable")
}
