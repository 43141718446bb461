// Package paycalc is the payroll calculator: one employee, one monthly period, Input in, Entry
// out. It is a pure function — no I/O, no clock, no randomness — so a run can be recalculated,
// replayed in a workflow and checked by property tests; the payroll stores gather the Input and
// the payroll run stores the Entry. It imports only the standard library and the platform's money
// and field packages. Every amount is int64 santim, every rate basis points, never a float.
//
// # Gross
//
// Basic salary is pro-rated by calendar days for a joiner or a leaver: basic = monthly salary ×
// days employed ÷ days in the month, where days employed run from the hire date (or the first of
// the month) to the termination date, the last day worked (or the month's last day), both
// inclusive. Fixed allowances are pro-rated the same way; percentage allowances are basis points
// of the pro-rated basic. Overtime is minutes × monthly salary × multiplier ÷ (monthly hours × 60 ×
// 10,000): the hourly rate is the monthly salary ÷ Policy.MonthlyHours (default 208: 48 hours a
// week × 52 ÷ 12), and the labour-law multipliers are exported (1.5, 1.75, 2, 2.5 as 15,000 …
// 25,000 basis points). One-time earnings (bonus, arrears, commission) and earning adjustments are
// added as they are. Gross = basic + every earning, taxable and exempt.
//
// # Order of deductions
//
//  1. Statutory, always taken in full: PAYE on the taxable income, then the employee's pension
//     (Policy, default 7% of the pro-rated basic; the employer's 11% is reported as an employer
//     contribution and not deducted). The pension is not deducted from the income PAYE is
//     computed on.
//  2. Court orders (mandates of kind COURT_ORDER), by priority then reference. A court decides
//     what its order takes, so court orders are NOT limited by the protection share; they are
//     limited by the minimum net pay: they never take the net below Policy.MinNetSantim.
//  3. The protected tier, in this order: loan instalments (LoanInstalment items and
//     LOAN_INSTALLMENT mandates), EWA recoveries, the other mandates (UNION_DUES, COST_SHARING,
//     OTHER), catalog deductions, deduction adjustments; within each group by priority, then
//     reference, then kind (a stable tie-breaker: the order of the Input's slices never matters).
//
// Percentage mandates and percentage catalog deductions are basis points of the entry's gross pay.
//
// # Protection
//
// Let disposable = gross − statutory deductions. The protection share is an exact fraction
// (Policy.ShareNumerator / ShareDenominator, default 1/3, Labour Proclamation 1156/2019 art. 59),
// and its cap is rounded down: cap = ⌊disposable × numerator ÷ denominator⌋ (money.MulDivFloor),
// so it never allows a fraction of a santim more than the share. The court orders use the share
// first: the protected tier takes at most cap − court orders, and at most disposable − minimum net
// − court orders (never below 0). So the total beyond the statutory deductions is at most the
// larger of the cap and the court orders, and the net stays at or above the minimum net.
//
// When the statutory deductions alone leave less than the minimum net (disposable < MinNetSantim),
// they are still taken in full — tax and pension are owed on the wage whatever the employer's
// policy — and nothing else is taken: the net is gross − statutory (never below 0: the employee
// pension is at most 50% and PAYE at most 35%), Entry.BelowMinimumNet is set, and every other
// deduction due is carried forward.
//
// # Pre-tax deductions
//
// A catalog deduction with PreTax (and a deduction adjustment marked Taxable, which corrects
// taxable pay) lowers the income PAYE is computed on by the amount actually taken. The limits of
// the court orders and the protected tier are computed with PAYE on the whole taxable income;
// then PAYE is computed again on taxable − pre-tax taken. The relief can only lower PAYE, so it
// goes to the employee's net and every limit still holds. A pre-tax deduction carried forward
// gives its relief in the period it is taken.
//
// # Rounding
//
// One rule, the money package's: an amount with a fraction of a santim is rounded once to the
// nearest santim, an exact half to the even santim (money.MulDiv, money.ApplyBasisPoints). Each
// computed amount is rounded once from exact integers: the pro-rated basic, each allowance, each
// overtime entry, each percentage deduction, each pension contribution, and PAYE (the exact tax of
// all bands summed, then divided once). Limits (the protection cap) are not amounts and are
// rounded down. Amounts taken are whole santim already (a part of a due amount), never rounded.
//
// # Carried forward
//
// Each deduction source has a key (kind, reference). Its due amount this period is its amount for
// the period plus what was carried forward for the same key, capped by what the source says is
// owed when it says so (an EWA request's outstanding principal + fee, a loan instalment's unpaid
// amount, a mandate's RemainingSantim, an adjustment's amount). What is due and not taken is
// recorded on the entry (Entry.CarriedForward: kind, reference, amount, priority, pre-tax) and is
// an input of the next period (Input.CarriedForward), never dropped and never taken twice: a
// source that states what is owed already includes its earlier shortfalls, so the cap stops the
// carry from being counted again. A carry whose source is no longer in the input is still owed and
// is taken in its kind's place; the caller drops a carry only when the debt was settled outside
// payroll. Statutory deductions are never carried: they are always taken.
//
// # Tax tables
//
// PAYE comes from effective-dated, versioned tables (TaxTables, TableFor): TaxTable2016 (Income
// Tax Proclamation 979/2016: 0–600 ETB 0%, to 1,650 10%, to 3,200 15%, to 5,250 20%, to 7,800 25%,
// to 10,900 30%, above 35%) for periods before 2025-07, and TaxTable2025 (0–2,000 0%, to 4,000
// 15%, to 7,000 20%, to 10,000 25%, to 14,000 30%, above 35%) from 2025-07. The period chooses
// the table; Entry.TaxTableVersion (and the PAYE line's reference) names it, so a report can say
// which applied. A table that has applied is never edited: a change is a new version.
// TaxTable2016 answers every accepted period before 2025-07, back to 2000-01; the schedule it
// replaced in July 2016 (Proclamation 286/2002) is not included, since Wagerail runs no payroll
// for periods that old: a version for it would be added before such a period is calculated.
//
// # Projection
//
// Project runs the same calculation on the current inputs and reports the net the next run will
// pay and RecoverableSantim, what the protected tier could still take without displacing anything:
// the limit early wage access puts on an advance.
package paycalc
