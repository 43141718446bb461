package paycalc

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Date and period bounds.
const (
	MinPeriod = "2000-01"
	MaxPeriod = "2100-12"
	minYear   = 1900 // hire dates may be long before the first period
	maxYear   = 2100
)

func refuse(name, format string, args ...any) *field.Error {
	return &field.Error{Field: name, Problem: fmt.Sprintf(format, args...)}
}

// parsePeriod reads "YYYY-MM" within MinPeriod..MaxPeriod.
func parsePeriod(p string) (int, time.Month, error) {
	if len(p) != 7 || p[4] != '-' || !digits(p[:4]) || !digits(p[5:]) {
		return 0, 0, refuse("period", "must be YYYY-MM")
	}
	y, _ := strconv.Atoi(p[:4])
	m, _ := strconv.Atoi(p[5:])
	if m < 1 || m > 12 {
		return 0, 0, refuse("period", "must be YYYY-MM with a month from 01 to 12")
	}
	if p < MinPeriod || p > MaxPeriod {
		return 0, 0, refuse("period", "must be from %s to %s", MinPeriod, MaxPeriod)
	}
	return y, time.Month(m), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func checkDate(name string, d Date) error {
	if !d.exists() {
		return refuse(name, "must be a calendar date that exists")
	}
	if d.Year < minYear || d.Year > maxYear {
		return refuse(name, "must be from %d-01-01 to %d-12-31", minYear, maxYear)
	}
	return nil
}

// amount checks 0 ≤ v ≤ money.MaxAmountSantim (positive when positive is set).
func amount(name string, v int64, positive bool) error {
	if positive && v <= 0 {
		return refuse(name, "must be positive")
	}
	if v < 0 {
		return refuse(name, "must not be negative")
	}
	if v > money.MaxAmountSantim {
		return refuse(name, "must be at most %d santim", money.MaxAmountSantim)
	}
	return nil
}

func basisPoints(name string, v, max int64) error {
	if v < 0 || v > max {
		return refuse(name, "must be from 0 to %d basis points", max)
	}
	return nil
}

func priority(name string, v int64) error {
	if v < 0 || v > MaxPriority {
		return refuse(name, "must be from 0 to %d", MaxPriority)
	}
	return nil
}

// methodAmount checks a catalog or mandate amount: santim (Fixed) or basis points up to 100%
// (Percent).
func methodAmount(name string, m Method, v int64, positive bool) error {
	switch m {
	case Fixed:
		return amount(name+".amount", v, positive)
	case Percent:
		if positive && v == 0 {
			return refuse(name+".amount", "must be positive")
		}
		return basisPoints(name+".amount", v, money.HundredPercent)
	}
	return refuse(name+".method", "must be %s or %s", Fixed, Percent)
}

func count(name string, n int) error {
	if n > MaxItems {
		return refuse(name, "must have at most %d items", MaxItems)
	}
	return nil
}

// Validate checks every field of the input and returns the first problem as a *field.Error
// (Field names the item, e.g. "mandates[2].amount"), or nil. Calculate validates first, so a
// caller need not.
func (in *Input) Validate() error {
	if _, _, err := parsePeriod(in.Period); err != nil {
		return err
	}
	if err := amount("monthlySalarySantim", in.MonthlySalarySantim, false); err != nil {
		return err
	}
	if err := checkDate("hireDate", in.HireDate); err != nil {
		return err
	}
	if in.TerminationDate != nil {
		if err := checkDate("terminationDate", *in.TerminationDate); err != nil {
			return err
		}
		if in.TerminationDate.before(in.HireDate) {
			return refuse("terminationDate", "must not be before hireDate")
		}
	}
	if err := in.Policy.validate(); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"allowances", len(in.Allowances)}, {"deductions", len(in.Deductions)}, {"earnings", len(in.Earnings)},
		{"overtime", len(in.Overtime)}, {"adjustments", len(in.Adjustments)}, {"mandates", len(in.Mandates)},
		{"ewa", len(in.EWA)}, {"loans", len(in.Loans)}, {"carriedForward", len(in.CarriedForward)}} {
		if err := count(c.name, c.n); err != nil {
			return err
		}
	}
	unique := map[string]bool{}
	ref := func(list, name, kind, r string) error {
		if err := field.Reference(name+".reference", r, 0); err != nil {
			return err
		}
		k := list + "\x00" + kind + "\x00" + r
		if unique[k] {
			return refuse(name+".reference", "repeats an earlier item's reference")
		}
		unique[k] = true
		return nil
	}
	for i, a := range in.Allowances {
		name := fmt.Sprintf("allowances[%d]", i)
		if err := ref("allowances", name, "", a.Reference); err != nil {
			return err
		}
		if err := methodAmount(name, a.Method, a.Amount, false); err != nil {
			return err
		}
	}
	for i, o := range in.Earnings {
		name := fmt.Sprintf("earnings[%d]", i)
		if err := ref("earnings", name, "", o.Reference); err != nil {
			return err
		}
		if o.Kind != EarningBonus && o.Kind != EarningArrears && o.Kind != EarningCommission {
			return refuse(name+".kind", "must be %s, %s or %s", EarningBonus, EarningArrears, EarningCommission)
		}
		if err := amount(name+".amountSantim", o.AmountSantim, true); err != nil {
			return err
		}
	}
	var minutes int64
	for i, o := range in.Overtime {
		name := fmt.Sprintf("overtime[%d]", i)
		if err := ref("overtime", name, "", o.Reference); err != nil {
			return err
		}
		if o.Minutes < 1 || o.Minutes > MaxOvertimeMinutesPerEntry {
			return refuse(name+".minutes", "must be from 1 to %d", MaxOvertimeMinutesPerEntry)
		}
		if o.MultiplierBasisPoints < MinMultiplierBasisPoints || o.MultiplierBasisPoints > MaxMultiplierBasisPoints {
			return refuse(name+".multiplierBasisPoints", "must be from %d to %d", MinMultiplierBasisPoints, MaxMultiplierBasisPoints)
		}
		minutes += o.Minutes
	}
	if minutes > MaxOvertimeMinutesPerPeriod {
		return refuse("overtime", "must add up to at most %d minutes in a period", MaxOvertimeMinutesPerPeriod)
	}
	// Deduction sources: a reference is unique within its kind, across the lists that share it.
	for i, d := range in.Deductions {
		name := fmt.Sprintf("deductions[%d]", i)
		if err := ref("sources", name, string(KindCatalog), d.Reference); err != nil {
			return err
		}
		if err := methodAmount(name, d.Method, d.Amount, false); err != nil {
			return err
		}
	}
	for i, a := range in.Adjustments {
		name := fmt.Sprintf("adjustments[%d]", i)
		if err := ref("adjustments", name, "", a.Reference); err != nil {
			return err
		}
		if a.Direction != AdjustEarning && a.Direction != AdjustDeduction {
			return refuse(name+".direction", "must be %s or %s", AdjustEarning, AdjustDeduction)
		}
		if err := amount(name+".amountSantim", a.AmountSantim, true); err != nil {
			return err
		}
	}
	for i, m := range in.Mandates {
		name := fmt.Sprintf("mandates[%d]", i)
		if !mandateKind(m.Kind) {
			return refuse(name+".kind", "must be %s, %s, %s, %s, %s, %s, %s or %s", KindCourtOrder, KindLoanInstallment, KindUnionDues,
				KindCostSharing, KindOther, KindEqubContribution, KindBnplInstallment, KindSavingsAutosave)
		}
		if err := ref("sources", name, string(m.Kind), m.Reference); err != nil {
			return err
		}
		if err := methodAmount(name, m.Method, m.Amount, true); err != nil {
			return err
		}
		if Whole(m.Kind) && m.Method != Fixed {
			return refuse(name+".method", "must be %s for %s (a product's obligation is a fixed amount)", Fixed, m.Kind)
		}
		if err := priority(name+".priority", m.Priority); err != nil {
			return err
		}
		if m.RemainingSantim != nil {
			if err := amount(name+".remainingSantim", *m.RemainingSantim, false); err != nil {
				return err
			}
		}
	}
	for i, e := range in.EWA {
		name := fmt.Sprintf("ewa[%d]", i)
		if err := ref("sources", name, string(KindEWARecovery), e.Reference); err != nil {
			return err
		}
		if err := amount(name+".outstandingSantim", e.OutstandingSantim, true); err != nil {
			return err
		}
		if err := priority(name+".priority", e.Priority); err != nil {
			return err
		}
	}
	for i, l := range in.Loans {
		name := fmt.Sprintf("loans[%d]", i)
		if err := ref("sources", name, string(KindLoanInstallment), l.Reference); err != nil {
			return err
		}
		if err := amount(name+".amountSantim", l.AmountSantim, true); err != nil {
			return err
		}
		if err := priority(name+".priority", l.Priority); err != nil {
			return err
		}
	}
	for i, c := range in.CarriedForward {
		name := fmt.Sprintf("carriedForward[%d]", i)
		if groupOf(c.Kind) == 0 {
			return refuse(name+".kind", "must be a kind that can be carried forward (not %s or %s)", KindPAYE, KindPension)
		}
		if err := ref("carried", name, string(c.Kind), c.Reference); err != nil {
			return err
		}
		if err := amount(name+".amountSantim", c.AmountSantim, true); err != nil {
			return err
		}
		if err := priority(name+".priority", c.Priority); err != nil {
			return err
		}
	}
	return nil
}

func (p Policy) validate() error {
	if err := basisPoints("policy.employeePensionBasisPoints", p.EmployeePensionBasisPoints, MaxEmployeePensionBasisPoints); err != nil {
		return err
	}
	if err := basisPoints("policy.employerPensionBasisPoints", p.EmployerPensionBasisPoints, money.HundredPercent); err != nil {
		return err
	}
	if p.MonthlyHours < 1 || p.MonthlyHours > MaxMonthlyHours {
		return refuse("policy.monthlyHours", "must be from 1 to %d", MaxMonthlyHours)
	}
	if p.ShareDenominator < 1 || p.ShareDenominator > MaxShareDenominator {
		return refuse("policy.shareDenominator", "must be from 1 to %d", MaxShareDenominator)
	}
	if p.ShareNumerator < 0 || p.ShareNumerator > p.ShareDenominator {
		return refuse("policy.shareNumerator", "must be from 0 to the denominator (a share of at most 100%%)")
	}
	return amount("policy.minNetSantim", p.MinNetSantim, false)
}

func mandateKind(k DeductionKind) bool {
	switch k {
	case KindCourtOrder, KindLoanInstallment, KindUnionDues, KindCostSharing, KindOther, KindEqubContribution, KindBnplInstallment,
		KindSavingsAutosave:
		return true
	}
	return false
}
