package paycalc

import (
	"fmt"
	"time"
)

// Input is everything the calculator needs for one employee and one period. The caller (the
// payroll run) maps its stores' rows into it; the calculator reads nothing else. Every amount is
// integer santim; every rate is basis points (10,000 = 100%). The order of the slices does not
// matter: items are sorted by their documented keys, so the same items in any order give the same
// Entry.
type Input struct {
	// Period is the pay period, a calendar month "YYYY-MM" from 2000-01 to 2100-12. It chooses the
	// PAYE table (TableFor) and the days basic salary is pro-rated over.
	Period string
	// MonthlySalarySantim is the employee's gross monthly basic salary (0 to
	// money.MaxAmountSantim). The hourly rate for overtime is this ÷ Policy.MonthlyHours.
	MonthlySalarySantim int64
	// HireDate is the first day of employment; TerminationDate, when set, the last day worked
	// (inclusive; not before HireDate).
	HireDate        Date
	TerminationDate *Date

	// Allowances are the employee's assigned allowance definitions (catalog).
	Allowances []Allowance
	// Deductions are the employee's assigned deduction definitions (catalog).
	Deductions []CatalogDeduction
	// Earnings are the approved one-time earnings paid in this period.
	Earnings []OneTimeEarning
	// Overtime are the approved overtime entries paid in this period.
	Overtime []Overtime
	// Adjustments are the posted adjustments applied in this period (each in one period only; what
	// a deduction adjustment could not take continues as a Carry).
	Adjustments []Adjustment
	// Mandates are the employee's active deduction mandates.
	Mandates []Mandate
	// EWA are the employee's early wage access requests with principal + fee still owed.
	EWA []EWARecovery
	// Loans are the loan instalments due (or overdue and unpaid) in this period.
	Loans []LoanInstalment
	// CarriedForward is what earlier periods could not take: the previous entry's CarriedForward,
	// fed back unchanged.
	CarriedForward []Carry

	// Policy is the tenant's settings and protection policy.
	Policy Policy
}

// Policy is a tenant's payroll settings that the calculator applies. DefaultPolicy gives the
// statutory and labour-law defaults; a zero Policy is not valid (MonthlyHours and the share's
// denominator must be positive).
type Policy struct {
	// EmployeePensionBasisPoints is the employee's pension contribution, a share of the pro-rated
	// basic salary, deducted (0 to MaxEmployeePensionBasisPoints). Default 700 (7%).
	EmployeePensionBasisPoints int64
	// EmployerPensionBasisPoints is the employer's pension contribution, a share of the pro-rated
	// basic salary, reported and not deducted (0 to 10,000). Default 1,100 (11%).
	EmployerPensionBasisPoints int64
	// MonthlyHours is the number of working hours in a month, the divisor of the hourly rate
	// (1 to MaxMonthlyHours). Default DefaultMonthlyHours (208).
	MonthlyHours int64
	// ShareNumerator / ShareDenominator is the protection share: the most that the deductions after
	// the statutory ones may take, as a fraction of gross − statutory deductions (see the package
	// doc). An exact fraction, so one third is exactly 1/3. 0 ≤ numerator ≤ denominator ≤
	// MaxShareDenominator. Default 1/3.
	ShareNumerator, ShareDenominator int64
	// MinNetSantim is the minimum net pay: no deduction after the statutory ones takes the net
	// below it (0 to money.MaxAmountSantim). Default 0.
	MinNetSantim int64
}

// Labour-law and statutory defaults.
const (
	// DefaultMonthlyHours is 48 hours a week (Labour Proclamation 1156/2019, art. 61: 8 hours a
	// day, 48 a week) × 52 weeks ÷ 12 months = 208 hours.
	DefaultMonthlyHours int64 = 208
	// DefaultEmployeePensionBasisPoints and DefaultEmployerPensionBasisPoints are the private
	// organisation employees' pension rates (Proclamation 715/2011 as amended): 7% and 11% of
	// basic salary.
	DefaultEmployeePensionBasisPoints int64 = 700
	DefaultEmployerPensionBasisPoints int64 = 1_100
	// DefaultShareNumerator / DefaultShareDenominator: deductions beyond the statutory ones take
	// at most one third of the wage (Labour Proclamation 1156/2019, art. 59).
	DefaultShareNumerator   int64 = 1
	DefaultShareDenominator int64 = 3
)

// DefaultPolicy is the policy a tenant has until it sets its own.
func DefaultPolicy() Policy {
	return Policy{
		EmployeePensionBasisPoints: DefaultEmployeePensionBasisPoints,
		EmployerPensionBasisPoints: DefaultEmployerPensionBasisPoints,
		MonthlyHours:               DefaultMonthlyHours,
		ShareNumerator:             DefaultShareNumerator,
		ShareDenominator:           DefaultShareDenominator,
	}
}

// Method is how a catalog definition's or a mandate's amount is read. The values are the
// catalogs' (internal/catalogs.Kind), so a definition's kind converts directly.
type Method string

const (
	// Fixed: the amount is santim per period.
	Fixed Method = "FIXED_SANTIM"
	// Percent: the amount is basis points (see each type for the base).
	Percent Method = "PERCENT_OF_GROSS_BASIS_POINTS"
)

// Allowance is an assigned allowance definition. A Fixed allowance is santim per month,
// pro-rated like basic salary for a joiner or a leaver; a Percent allowance is basis points of
// the pro-rated basic salary (the employee's salary for the period, before deductions).
type Allowance struct {
	Reference string // the assignment or definition id; unique among Allowances
	Method    Method
	Amount    int64 // santim or basis points, by Method
	Taxable   bool
}

// CatalogDeduction is an assigned deduction definition. A Fixed deduction is santim per period
// (not pro-rated: it is what the employee owes for the period); a Percent deduction is basis
// points of the entry's gross pay. PreTax: what is taken lowers the income PAYE is computed on
// (see the package doc).
type CatalogDeduction struct {
	Reference string // unique among Deductions
	Method    Method
	Amount    int64
	PreTax    bool
}

// EarningKind names an earning line.
type EarningKind string

const (
	EarningBasic      EarningKind = "BASIC"
	EarningAllowance  EarningKind = "ALLOWANCE"
	EarningOvertime   EarningKind = "OVERTIME"
	EarningBonus      EarningKind = "BONUS"
	EarningArrears    EarningKind = "ARREARS"
	EarningCommission EarningKind = "COMMISSION"
	EarningAdjustment EarningKind = "ADJUSTMENT"
)

// OneTimeEarning is an approved one-time earning: Kind is EarningBonus, EarningArrears or
// EarningCommission.
type OneTimeEarning struct {
	Reference    string // unique among Earnings
	Kind         EarningKind
	AmountSantim int64 // positive
	Taxable      bool
}

// Overtime multipliers, basis points of the hourly rate (Labour Proclamation 1156/2019, art. 68).
const (
	MultiplierWorkdayBasisPoints    int64 = 15_000 // a working day, 06:00–22:00
	MultiplierNightBasisPoints      int64 = 17_500 // night, 22:00–06:00
	MultiplierRestDayBasisPoints    int64 = 20_000 // the weekly rest day
	MultiplierHolidayBasisPoints    int64 = 25_000 // a public holiday
	MinMultiplierBasisPoints        int64 = 10_000
	MaxMultiplierBasisPoints        int64 = 40_000
	MaxOvertimeMinutesPerEntry      int64 = 24 * 60      // one entry is at most one day
	MaxOvertimeMinutesPerPeriod     int64 = 31 * 24 * 60 // all entries of a period: at most a month's hours
	MaxMonthlyHours                 int64 = 31 * 24
	MaxEmployeePensionBasisPoints   int64 = 5_000 // with PAYE at most 35%, statutory stays below gross
	MaxShareDenominator             int64 = 1_000_000
	MaxPriority                     int64 = 1_000_000_000
	MaxItems                              = 1_000 // per slice of Input
	overtimeDenominatorPerHourBasis       = 60 * 10_000
)

// Overtime is an approved overtime entry: Minutes worked at MultiplierBasisPoints of the hourly
// rate. Amount = Minutes × MonthlySalary × Multiplier ÷ (MonthlyHours × 60 × 10,000), rounded once.
// Overtime is taxable and is not part of the pension base.
type Overtime struct {
	Reference             string // unique among Overtime
	Minutes               int64  // 1 to MaxOvertimeMinutesPerEntry
	MultiplierBasisPoints int64  // MinMultiplierBasisPoints to MaxMultiplierBasisPoints
}

// Direction says whether an adjustment pays or takes.
type Direction string

const (
	AdjustEarning   Direction = "EARNING"
	AdjustDeduction Direction = "DEDUCTION"
)

// Adjustment is a posted adjustment. An EARNING is added to gross (taxable or exempt by
// Taxable). A DEDUCTION is taken in the protected order (kind ADJUSTMENT); Taxable on a deduction
// means it corrects taxable pay, so it is pre-tax: what is taken lowers the income PAYE is
// computed on.
type Adjustment struct {
	Reference    string // unique among Adjustments
	Direction    Direction
	AmountSantim int64 // positive
	Taxable      bool
}

// DeductionKind names a deduction line and a carried-forward amount.
type DeductionKind string

const (
	KindPAYE            DeductionKind = "PAYE"
	KindPension         DeductionKind = "PENSION_EMPLOYEE"
	KindCourtOrder      DeductionKind = "COURT_ORDER"
	KindLoanInstallment DeductionKind = "LOAN_INSTALLMENT"
	KindEWARecovery     DeductionKind = "EWA_RECOVERY"
	KindUnionDues       DeductionKind = "UNION_DUES"
	KindCostSharing     DeductionKind = "COST_SHARING"
	KindOther           DeductionKind = "OTHER"
	// The product mandates (internal/payroll/product_mandate.go): an obligation of another
	// product collected by payroll deduction. Each is taken whole or not at all (Whole).
	KindEqubContribution DeductionKind = "EQUB_CONTRIBUTION"
	KindBnplInstallment  DeductionKind = "BNPL_INSTALLMENT"
	KindSavingsAutosave  DeductionKind = "SAVINGS_AUTOSAVE"
	KindCatalog          DeductionKind = "CATALOG_DEDUCTION"
	KindAdjustment       DeductionKind = "ADJUSTMENT"
)

// Mandate is an active deduction mandate. Kind is one of KindCourtOrder, KindLoanInstallment,
// KindUnionDues, KindCostSharing, KindOther, or a product kind (Whole). A Fixed mandate takes Amount santim a period; a
// Percent mandate takes Amount basis points of the entry's gross pay. RemainingSantim, when set,
// is the total still owed (earlier shortfalls included): nothing beyond it is ever taken.
// Whole reports whether a deduction of kind k is taken in full or not at all: a product
// mandate's (an equb contribution, a BNPL instalment, a savings auto-save), which its product
// records only as the whole amount. One the protected room cannot cover is not taken and not
// carried forward: the obligation stays owed at its product (the member contributes, the
// instalment is collected, by the product's own route), and the next period asks again.
func Whole(k DeductionKind) bool {
	return k == KindEqubContribution || k == KindBnplInstallment || k == KindSavingsAutosave
}

type Mandate struct {
	Reference       string // the mandate id; unique within its kind
	Kind            DeductionKind
	Method          Method
	Amount          int64
	Priority        int64 // lower first, within its kind's place in the order; 0 to MaxPriority
	RemainingSantim *int64
}

// EWARecovery is an early wage access request with principal + fee still owed: all of it is due.
type EWARecovery struct {
	Reference         string // the request id; unique among EWA
	OutstandingSantim int64  // principal + fee still owed, positive
	Priority          int64  // lower first (e.g. the order of disbursement)
}

// LoanInstalment is a loan instalment due: AmountSantim is what is still owed on it.
type LoanInstalment struct {
	Reference    string // loan id and instalment index; unique among LOAN_INSTALLMENT items
	AmountSantim int64  // positive
	Priority     int64  // lower first (e.g. the due date's order)
}

// Carry is an amount an earlier period could not take (an Entry's CarriedForward), fed back into
// the next period's Input unchanged. Priority and PreTax are the source's, so a carry whose source
// is gone is still taken in its place.
type Carry struct {
	Kind         DeductionKind
	Reference    string
	AmountSantim int64
	Priority     int64
	PreTax       bool
}

// Date is a calendar date without a time or a zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf is the calendar date of t in t's own location (a Postgres DATE read by pgx is midnight
// UTC, so its date is the stored one).
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// ParseDate reads "YYYY-MM-DD". The date must exist.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("paycalc: date %q is not YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// exists reports whether d is a real calendar date (2025-02-29 is not).
func (d Date) exists() bool {
	if d.Month < time.January || d.Month > time.December || d.Day < 1 {
		return false
	}
	return d.Day <= daysIn(d.Year, d.Month)
}

// before reports whether d is earlier than e.
func (d Date) before(e Date) bool {
	if d.Year != e.Year {
		return d.Year < e.Year
	}
	if d.Month != e.Month {
		return d.Month < e.Month
	}
	return d.Day < e.Day
}

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
