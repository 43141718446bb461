package paycalc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Every bound refuses with a *field.Error naming the field; Calculate and Project refuse the same.
func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	base := emp("2025-07", 1000000)
	cases := []struct {
		field string
		edit  func(*Input)
	}{
		{"period", func(in *Input) { in.Period = "" }},
		{"period", func(in *Input) { in.Period = "2025-7" }},
		{"period", func(in *Input) { in.Period = "2025-13" }},
		{"period", func(in *Input) { in.Period = "2025-00" }},
		{"period", func(in *Input) { in.Period = "1999-12" }},
		{"period", func(in *Input) { in.Period = "2101-01" }},
		{"period", func(in *Input) { in.Period = "２０25-07" }},
		{"period", func(in *Input) { in.Period = "2025/07" }},
		{"monthlySalarySantim", func(in *Input) { in.MonthlySalarySantim = -1 }},
		{"monthlySalarySantim", func(in *Input) { in.MonthlySalarySantim = money.MaxAmountSantim + 1 }},
		{"hireDate", func(in *Input) { in.HireDate = Date{} }},
		{"hireDate", func(in *Input) { in.HireDate = Date{2025, 2, 29} }},
		{"hireDate", func(in *Input) { in.HireDate = Date{2025, 4, 31} }},
		{"hireDate", func(in *Input) { in.HireDate = Date{2025, 13, 1} }},
		{"hireDate", func(in *Input) { in.HireDate = Date{1899, 12, 31} }},
		{"terminationDate", func(in *Input) { in.TerminationDate = &Date{2019, 12, 31} }},
		{"terminationDate", func(in *Input) { in.TerminationDate = &Date{2023, 2, 29} }},
		{"policy.employeePensionBasisPoints", func(in *Input) { in.Policy.EmployeePensionBasisPoints = MaxEmployeePensionBasisPoints + 1 }},
		{"policy.employeePensionBasisPoints", func(in *Input) { in.Policy.EmployeePensionBasisPoints = -1 }},
		{"policy.employerPensionBasisPoints", func(in *Input) { in.Policy.EmployerPensionBasisPoints = 10_001 }},
		{"policy.monthlyHours", func(in *Input) { in.Policy.MonthlyHours = 0 }},
		{"policy.monthlyHours", func(in *Input) { in.Policy.MonthlyHours = MaxMonthlyHours + 1 }},
		{"policy.shareDenominator", func(in *Input) { in.Policy.ShareDenominator = 0 }},
		{"policy.shareNumerator", func(in *Input) { in.Policy.ShareNumerator = 4 }},
		{"policy.shareNumerator", func(in *Input) { in.Policy.ShareNumerator = -1 }},
		{"policy.minNetSantim", func(in *Input) { in.Policy.MinNetSantim = -1 }},
		{"allowances[0].reference", func(in *Input) { in.Allowances = []Allowance{{Reference: "", Method: Fixed}} }},
		{"allowances[0].reference", func(in *Input) { in.Allowances = []Allowance{{Reference: "a b", Method: Fixed}} }},
		{"allowances[1].reference", func(in *Input) {
			in.Allowances = []Allowance{{Reference: "a", Method: Fixed}, {Reference: "a", Method: Fixed}}
		}},
		{"allowances[0].method", func(in *Input) { in.Allowances = []Allowance{{Reference: "a", Method: "PERCENT"}} }},
		{"allowances[0].amount", func(in *Input) { in.Allowances = []Allowance{{Reference: "a", Method: Percent, Amount: 10_001}} }},
		{"allowances[0].amount", func(in *Input) { in.Allowances = []Allowance{{Reference: "a", Method: Fixed, Amount: -1}} }},
		{"allowances", func(in *Input) { in.Allowances = make([]Allowance, MaxItems+1) }},
		{"deductions[0].amount", func(in *Input) {
			in.Deductions = []CatalogDeduction{{Reference: "d", Method: Fixed, Amount: money.MaxAmountSantim + 1}}
		}},
		{"earnings[0].kind", func(in *Input) {
			in.Earnings = []OneTimeEarning{{Reference: "e", Kind: EarningOvertime, AmountSantim: 1}}
		}},
		{"earnings[0].amountSantim", func(in *Input) { in.Earnings = []OneTimeEarning{{Reference: "e", Kind: EarningBonus}} }},
		{"overtime[0].minutes", func(in *Input) { in.Overtime = []Overtime{{Reference: "o", Minutes: 0, MultiplierBasisPoints: 15_000}} }},
		{"overtime[0].minutes", func(in *Input) {
			in.Overtime = []Overtime{{Reference: "o", Minutes: MaxOvertimeMinutesPerEntry + 1, MultiplierBasisPoints: 15_000}}
		}},
		{"overtime[0].multiplierBasisPoints", func(in *Input) { in.Overtime = []Overtime{{Reference: "o", Minutes: 1, MultiplierBasisPoints: 9_999}} }},
		{"overtime[0].multiplierBasisPoints", func(in *Input) { in.Overtime = []Overtime{{Reference: "o", Minutes: 1, MultiplierBasisPoints: 40_001}} }},
		{"overtime", func(in *Input) {
			for i := range 32 {
				in.Overtime = append(in.Overtime, Overtime{Reference: fmt.Sprint("o", i), Minutes: MaxOvertimeMinutesPerEntry, MultiplierBasisPoints: 15_000})
			}
		}},
		{"adjustments[0].direction", func(in *Input) { in.Adjustments = []Adjustment{{Reference: "a", Direction: "CREDIT", AmountSantim: 1}} }},
		{"adjustments[0].amountSantim", func(in *Input) { in.Adjustments = []Adjustment{{Reference: "a", Direction: AdjustDeduction}} }},
		{"mandates[0].kind", func(in *Input) { in.Mandates = []Mandate{{Reference: "m", Kind: KindPAYE, Method: Fixed, Amount: 1}} }},
		{"mandates[0].kind", func(in *Input) {
			in.Mandates = []Mandate{{Reference: "m", Kind: KindEWARecovery, Method: Fixed, Amount: 1}}
		}},
		{"mandates[0].amount", func(in *Input) { in.Mandates = []Mandate{{Reference: "m", Kind: KindOther, Method: Percent}} }},
		{"mandates[0].priority", func(in *Input) {
			in.Mandates = []Mandate{{Reference: "m", Kind: KindOther, Method: Fixed, Amount: 1, Priority: -1}}
		}},
		{"mandates[0].remainingSantim", func(in *Input) {
			in.Mandates = []Mandate{{Reference: "m", Kind: KindOther, Method: Fixed, Amount: 1, RemainingSantim: ptr(int64(-1))}}
		}},
		{"mandates[1].reference", func(in *Input) {
			in.Loans = []LoanInstalment{{Reference: "x", AmountSantim: 1}}
			in.Mandates = []Mandate{{Reference: "y", Kind: KindLoanInstallment, Method: Fixed, Amount: 1}, {Reference: "y", Kind: KindLoanInstallment, Method: Fixed, Amount: 1}}
		}},
		{"loans[0].reference", func(in *Input) {
			in.Mandates = []Mandate{{Reference: "x", Kind: KindLoanInstallment, Method: Fixed, Amount: 1}}
			in.Loans = []LoanInstalment{{Reference: "x", AmountSantim: 1}}
		}},
		{"ewa[0].outstandingSantim", func(in *Input) { in.EWA = []EWARecovery{{Reference: "e"}} }},
		{"ewa[0].priority", func(in *Input) {
			in.EWA = []EWARecovery{{Reference: "e", OutstandingSantim: 1, Priority: MaxPriority + 1}}
		}},
		{"loans[0].amountSantim", func(in *Input) { in.Loans = []LoanInstalment{{Reference: "l", AmountSantim: -5}} }},
		{"carriedForward[0].kind", func(in *Input) { in.CarriedForward = []Carry{{Kind: KindPAYE, Reference: "c", AmountSantim: 1}} }},
		{"carriedForward[0].kind", func(in *Input) { in.CarriedForward = []Carry{{Kind: "LOAN", Reference: "c", AmountSantim: 1}} }},
		{"carriedForward[0].amountSantim", func(in *Input) { in.CarriedForward = []Carry{{Kind: KindOther, Reference: "c"}} }},
		{"carriedForward[1].reference", func(in *Input) {
			in.CarriedForward = []Carry{{Kind: KindOther, Reference: "c", AmountSantim: 1}, {Kind: KindOther, Reference: "c", AmountSantim: 2}}
		}},
		{"gross", func(in *Input) {
			in.MonthlySalarySantim = money.MaxAmountSantim
			in.Earnings = []OneTimeEarning{{Reference: "e", Kind: EarningBonus, AmountSantim: 1}}
		}},
	}
	for _, c := range cases {
		in := base
		c.edit(&in)
		var fe *field.Error
		err := in.Validate()
		if c.field == "gross" { // a sum, found while calculating
			require.NoError(t, err)
		} else {
			require.True(t, errors.As(err, &fe), "%s: %v", c.field, err)
			require.Equal(t, c.field, fe.Field, "%v", err)
		}
		_, err = Calculate(in)
		require.True(t, errors.As(err, &fe), "%s: %v", c.field, err)
		require.Equal(t, c.field, fe.Field, "%v", err)
		require.False(t, strings.HasPrefix(fe.Problem, " "))
		_, err = Project(in)
		require.True(t, errors.As(err, &fe), "%s: %v", c.field, err)
	}
}

// The bounds themselves are accepted.
func TestValidateAcceptsBounds(t *testing.T) {
	t.Parallel()
	in := emp(MaxPeriod, money.MaxAmountSantim)
	in.HireDate = Date{1900, 1, 1}
	in.TerminationDate = &Date{2100, 12, 31}
	in.Policy = Policy{EmployeePensionBasisPoints: MaxEmployeePensionBasisPoints, EmployerPensionBasisPoints: money.HundredPercent,
		MonthlyHours: 1, ShareNumerator: MaxShareDenominator, ShareDenominator: MaxShareDenominator, MinNetSantim: money.MaxAmountSantim}
	in.Overtime = []Overtime{{Reference: "o", Minutes: MaxOvertimeMinutesPerEntry, MultiplierBasisPoints: MaxMultiplierBasisPoints}}
	in.MonthlySalarySantim = money.MaxAmountSantim / 100 // leaves room for the overtime within the gross bound
	in.Mandates = []Mandate{{Reference: "m", Kind: KindCourtOrder, Method: Percent, Amount: money.HundredPercent, Priority: MaxPriority, RemainingSantim: ptr(money.MaxAmountSantim)}}
	e, err := Calculate(in)
	require.NoError(t, err)
	checkEntry(t, in, e)

	in = emp(MinPeriod, 0)
	in.HireDate = Date{1999, 1, 1}
	in.TerminationDate = &Date{1999, 1, 1}
	e, err = Calculate(in)
	require.NoError(t, err)
	require.Zero(t, e.GrossSantim)
	require.Zero(t, e.NetSantim)
	require.Equal(t, 0, e.DaysEmployed)
}

func TestDates(t *testing.T) {
	t.Parallel()
	d, err := ParseDate("2024-02-29")
	require.NoError(t, err)
	require.Equal(t, Date{2024, 2, 29}, d)
	require.Equal(t, "2024-02-29", d.String())
	for _, s := range []string{"2025-02-29", "2025-13-01", "25-01-01", "2025-01-01T00:00:00Z", ""} {
		_, err := ParseDate(s)
		require.Error(t, err, s)
	}
}

// FuzzCalculate: any values in any field give a *field.Error or an entry that keeps every
// invariant; never a panic, never another error.
func FuzzCalculate(f *testing.F) {
	f.Add("2025-07", int64(1_000_000), 20, 0, int64(120), int64(15_000), int64(60_000), int64(2_000), int64(50_000), int64(100_000), int64(208), int64(1), int64(3), int64(0), int64(700))
	f.Add("2025-06", int64(0), 1, 31, int64(1), int64(40_000), int64(-1), int64(10_000), int64(0), int64(-1), int64(1), int64(0), int64(1), int64(1_000), int64(5_000))
	f.Fuzz(func(t *testing.T, period string, salary int64, hireDay, termDay int, minutes, mult, allowance, mandateBp, loan, remaining, hours, num, den, minNet, pension int64) {
		in := emp(period, salary)
		in.HireDate = Date{2025, 6, hireDay}
		if termDay != 0 {
			in.TerminationDate = &Date{2025, 7, termDay}
		}
		in.Overtime = []Overtime{{Reference: "ot", Minutes: minutes, MultiplierBasisPoints: mult}}
		in.Allowances = []Allowance{{Reference: "al", Method: Fixed, Amount: allowance}}
		in.Mandates = []Mandate{{Reference: "co", Kind: KindCourtOrder, Method: Percent, Amount: mandateBp}}
		if remaining >= 0 {
			in.Mandates[0].RemainingSantim = &remaining
		}
		in.Loans = []LoanInstalment{{Reference: "l", AmountSantim: loan}}
		in.CarriedForward = []Carry{{Kind: KindLoanInstallment, Reference: "l", AmountSantim: loan}}
		in.Policy = Policy{EmployeePensionBasisPoints: pension, EmployerPensionBasisPoints: 1_100, MonthlyHours: hours,
			ShareNumerator: num, ShareDenominator: den, MinNetSantim: minNet}
		e, err := Calculate(in)
		if err != nil {
			var fe *field.Error
			require.True(t, errors.As(err, &fe), "%v", err)
			return
		}
		checkEntry(t, in, e)
	})
}
