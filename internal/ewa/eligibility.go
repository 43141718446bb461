package ewa

import (
	"fmt"
	"time"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// Eligibility is how much an employee may draw now, with the figures it comes from. Every
// figure is integer santim.
type Eligibility struct {
	EmployeeID string
	// PeriodStart and PeriodEnd are the first and last day (inclusive) of the pay period: the
	// calendar month (UTC) of now. Salaries are monthly.
	PeriodStart, PeriodEnd time.Time
	// EarnedSantim = gross monthly salary × day of month ÷ days in month, rounded down (never
	// advance pay that is not earned yet).
	EarnedSantim int64
	// CapSantim = earned × access cap % ÷ 100, rounded down.
	CapSantim int64
	// OutstandingSantim is principal + fee of the employee's requests of this period that are
	// REQUESTED, DISBURSING or DISBURSED, less what is repaid of them.
	OutstandingSantim int64
	// Usage is what the employee has drawn in the period and in the day (the caps' counters).
	Usage Usage
	// RecoverableSantim is how much more the next payroll can recover within the protection
	// policy (the RecoverableFunc's answer); nil when no projection applies.
	RecoverableSantim *int64
	// Limits is what each limit alone still allows; AvailableSantim is the smallest of them.
	Limits Limits
	// AvailableSantim = the smallest room of Limits (at least 0; 0 when a count cap is reached
	// or the employee is not ACTIVE). Before the caps it was cap − outstanding, and it still is
	// when no other limit is set.
	AvailableSantim int64
	// LimitingFactor is the limit that sets AvailableSantim (the first in factorOrder among the
	// smallest rooms).
	LimitingFactor Factor
	// MaxPrincipalSantim is the largest principal whose principal + fee fits in available (0:
	// none does).
	MaxPrincipalSantim int64
	// EmployeeActive: only an ACTIVE employee may draw (else available and max are 0).
	EmployeeActive bool
	Settings       Settings
}

// Usage is what an employee has drawn, from their requests. Drawn amounts are principal + fee
// of the requests that are not CANCELLED or FAILED (REPAID ones count: the caps bound what is
// drawn, not what is owed); the day is the UTC calendar day of now, within the period.
type Usage struct {
	DrawnInPeriodSantim int64
	DrawnTodaySantim    int64
	RequestsInPeriod    int64
	RequestsToday       int64
}

// Limits is what each limit alone still allows (principal + fee, at least 0), nil for a limit
// that is not set. A count limit allows no amount once reached and any amount before.
type Limits struct {
	AccessCapSantim       int64  // cap − outstanding
	ProjectedNetPaySantim *int64 // RecoverableSantim
	PeriodAmountSantim    *int64 // MaxPerPeriodSantim − drawn in the period
	DayAmountSantim       *int64 // MaxPerDaySantim − drawn today
	PeriodRequestsLeft    *int64 // MaxRequestsPerPeriod − requests in the period
	DayRequestsLeft       *int64 // MaxRequestsPerDay − requests today
}

// Factor names the limit that binds (Eligibility.LimitingFactor, the EWA_LIMIT_EXCEEDED
// refusal's details.limitingFactor).
type Factor string

const (
	FactorEmployeeNotActive Factor = "EMPLOYEE_NOT_ACTIVE"
	FactorPeriodCount       Factor = "PERIOD_COUNT"
	FactorDayCount          Factor = "DAILY_COUNT"
	FactorAccessCap         Factor = "ACCESS_CAP"
	FactorProjectedNetPay   Factor = "PROJECTED_NET_PAY"
	FactorPeriodAmount      Factor = "PERIOD_AMOUNT"
	FactorDayAmount         Factor = "DAILY_AMOUNT"
)

// Factors are the factors in the order that breaks a tie between equal rooms: a reached count
// before any amount, the access cap before the caps a tenant adds.
var Factors = []Factor{FactorEmployeeNotActive, FactorPeriodCount, FactorDayCount, FactorAccessCap,
	FactorProjectedNetPay, FactorPeriodAmount, FactorDayAmount}

// Inputs is what the eligibility arithmetic reads about an employee.
type Inputs struct {
	SalarySantim      int64 // gross monthly salary
	Active            bool
	OutstandingSantim int64 // the period's outstanding principal + fee (Eligibility.OutstandingSantim)
	Usage             Usage
	// RecoverableSantim limits an advance to what the next payroll can recover (nil: no
	// projection, today's rules; a negative value allows nothing).
	RecoverableSantim *int64
}

// Period is the pay period containing now: the first and last day of its calendar month (UTC).
func Period(now time.Time) (start, end time.Time) {
	y, m, _ := now.UTC().Date()
	start = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, -1)
}

// Fee is the fee of a principal: the flat fee plus feeBasisPoints of it, the percentage rounded
// by the money package's one rule (nearest santim, half to even).
func Fee(principal int64, s Settings) (int64, error) {
	pct, err := money.ApplyBasisPoints(principal, s.FeeBasisPoints)
	if err != nil {
		return 0, fmt.Errorf("ewa: fee: %w", err)
	}
	fee, ok := money.Add(s.FeeFlatSantim, pct)
	if !ok {
		return 0, fmt.Errorf("ewa: fee: %w", money.ErrOverflow)
	}
	return fee, nil
}

// Allowed reports whether principal (with its fee) fits in available.
func Allowed(principal, available int64, s Settings) (fee int64, ok bool, err error) {
	fee, err = Fee(principal, s)
	if err != nil {
		return 0, false, err
	}
	total, fits := money.Add(principal, fee)
	return fee, fits && total <= available, nil
}

// Compute is Evaluate of an employee with no usage but outstanding and no projection.
func Compute(salary, outstanding int64, active bool, s Settings, now time.Time) (Eligibility, error) {
	return Evaluate(Inputs{SalarySantim: salary, Active: active, OutstandingSantim: outstanding}, s, now)
}

// Evaluate is the eligibility arithmetic, without the database. Settings must be valid.
func Evaluate(in Inputs, s Settings, now time.Time) (Eligibility, error) {
	start, end := Period(now)
	e := Eligibility{PeriodStart: start, PeriodEnd: end, OutstandingSantim: in.OutstandingSantim, Usage: in.Usage,
		EmployeeActive: in.Active, Settings: s}
	u := in.Usage
	if in.SalarySantim < 0 || in.OutstandingSantim < 0 || u.DrawnInPeriodSantim < 0 || u.DrawnTodaySantim < 0 ||
		u.RequestsInPeriod < 0 || u.RequestsToday < 0 {
		return Eligibility{}, fmt.Errorf("ewa: eligibility: %w", money.ErrInvalid)
	}
	day, days := int64(now.UTC().Day()), int64(end.Day())
	// Exact products (salary ≤ 1e12, so × 31 and × 100 stay far inside int64), divided down.
	earned, err := money.Mul(in.SalarySantim, day)
	if err != nil {
		return Eligibility{}, fmt.Errorf("ewa: eligibility: %w", err)
	}
	e.EarnedSantim = earned / days
	capped, err := money.Mul(e.EarnedSantim, s.AccessCapPercent)
	if err != nil {
		return Eligibility{}, fmt.Errorf("ewa: eligibility: %w", err)
	}
	e.CapSantim = capped / 100
	e.Limits.AccessCapSantim = room(e.CapSantim, in.OutstandingSantim)
	if in.RecoverableSantim != nil {
		r := max(*in.RecoverableSantim, 0)
		e.RecoverableSantim = &r
		e.Limits.ProjectedNetPaySantim = &r
	}
	e.Limits.PeriodAmountSantim = roomOf(s.MaxPerPeriodSantim, u.DrawnInPeriodSantim)
	e.Limits.DayAmountSantim = roomOf(s.MaxPerDaySantim, u.DrawnTodaySantim)
	e.Limits.PeriodRequestsLeft = roomOf(s.MaxRequestsPerPeriod, u.RequestsInPeriod)
	e.Limits.DayRequestsLeft = roomOf(s.MaxRequestsPerDay, u.RequestsToday)
	e.AvailableSantim, e.LimitingFactor = e.Limits.smallest(in.Active)
	e.MaxPrincipalSantim, err = maxPrincipal(e.AvailableSantim, s)
	if err != nil {
		return Eligibility{}, err
	}
	return e, nil
}

// room is what a limit of limit leaves after used: at least 0.
func room(limit, used int64) int64 {
	if limit > used {
		return limit - used
	}
	return 0
}

// roomOf is room of an optional limit (nil: not set).
func roomOf(limit *int64, used int64) *int64 {
	if limit == nil {
		return nil
	}
	r := room(*limit, used)
	return &r
}

// smallest is the smallest room of the limits and the factor that sets it (the first of
// Factors among equal rooms). A reached count allows nothing; one not reached allows any amount.
func (l Limits) smallest(active bool) (int64, Factor) {
	if !active {
		return 0, FactorEmployeeNotActive
	}
	rooms := map[Factor]*int64{FactorAccessCap: &l.AccessCapSantim, FactorProjectedNetPay: l.ProjectedNetPaySantim,
		FactorPeriodAmount: l.PeriodAmountSantim, FactorDayAmount: l.DayAmountSantim}
	zero := int64(0)
	if l.PeriodRequestsLeft != nil && *l.PeriodRequestsLeft == 0 {
		rooms[FactorPeriodCount] = &zero
	}
	if l.DayRequestsLeft != nil && *l.DayRequestsLeft == 0 {
		rooms[FactorDayCount] = &zero
	}
	best, factor := int64(-1), FactorAccessCap
	for _, f := range Factors {
		if r := rooms[f]; r != nil && (best < 0 || *r < best) {
			best, factor = *r, f
		}
	}
	return best, factor
}

// maxPrincipal is the largest p in 0..min(available, MaxAmountSantim) with p + Fee(p) ≤
// available. p + Fee(p) grows strictly with p (the fee never falls as p grows), so a binary
// search finds it.
func maxPrincipal(available int64, s Settings) (int64, error) {
	lo, hi := int64(0), min(available, money.MaxAmountSantim) // lo always fits (or is 0)
	if hi <= 0 {
		return 0, nil
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		_, ok, err := Allowed(mid, available, s)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}
