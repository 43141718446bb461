package payroll

import "github.com/wagerail/wagerail/internal/payroll/paycalc"

// How the rows of this package become the calculator's input (paycalc.Input), for the loader
// that gathers a period. References are the rows' ids, unique across tenants and lists.

// ReversalReferencePrefix starts the reference of a reversal's deduction (then the earning's id),
// so the payslip line names the earning it takes back.
const ReversalReferencePrefix = "reversal:"

// CalcEarnings maps APPROVED one-time earnings to the calculator: BONUS, ARREARS and COMMISSION
// as one-time earnings of their kind; OTHER, for which the calculator has no earning kind, as an
// EARNING adjustment of the same amount and taxability (paid and taxed alike, shown as an
// adjustment line). Feed the first result to Input.Earnings and append the second to
// Input.Adjustments.
func CalcEarnings(es []OneTimeEarning) ([]paycalc.OneTimeEarning, []paycalc.Adjustment) {
	var earnings []paycalc.OneTimeEarning
	var adjustments []paycalc.Adjustment
	for _, e := range es {
		switch e.Kind {
		case EarningBonus, EarningArrears, EarningCommission:
			earnings = append(earnings, paycalc.OneTimeEarning{Reference: e.ID, Kind: paycalc.EarningKind(e.Kind),
				AmountSantim: e.AmountSantim, Taxable: e.Taxable})
		default:
			adjustments = append(adjustments, paycalc.Adjustment{Reference: e.ID, Direction: paycalc.AdjustEarning,
				AmountSantim: e.AmountSantim, Taxable: e.Taxable})
		}
	}
	return earnings, adjustments
}

// CalcReversals maps the earnings REVERSED into a period (ReversedOneTimeEarningsForPeriod) to the
// calculator: each a DEDUCTION adjustment of the earning's amount, Taxable when the earning was
// (it corrects taxable pay already taxed, so it is taken before tax). As a deduction of the
// protected tier it never takes the net below the minimum nor past the protection share: what it
// cannot take is carried forward, never dropped. Append to Input.Adjustments.
func CalcReversals(es []OneTimeEarning) []paycalc.Adjustment {
	out := make([]paycalc.Adjustment, 0, len(es))
	for _, e := range es {
		out = append(out, paycalc.Adjustment{Reference: ReversalReferencePrefix + e.ID, Direction: paycalc.AdjustDeduction,
			AmountSantim: e.AmountSantim, Taxable: e.Taxable})
	}
	return out
}

// CalcOvertime maps APPROVED overtime entries to the calculator's Input.Overtime (minutes and the
// multiplier recorded with each entry; the calculator applies the hourly rate).
func CalcOvertime(es []OvertimeEntry) []paycalc.Overtime {
	out := make([]paycalc.Overtime, 0, len(es))
	for _, e := range es {
		out = append(out, paycalc.Overtime{Reference: e.ID, Minutes: e.Minutes, MultiplierBasisPoints: e.MultiplierBasisPoints})
	}
	return out
}
