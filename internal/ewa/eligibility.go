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
	// REQUESTED, DISBURSING or DISBURSED.
	OutstandingSantim int64
	// AvailableSantim = cap − outstanding, at least 0.
	AvailableSantim int64
	// MaxPrincipalSantim is the largest principal whose principal + fee fits in available (0:
	// none does).
	MaxPrincipalSantim int64
	// EmployeeActive: only an ACTIVE employee may draw (else available and max are 0).
	EmployeeActive bool
	Settings       Settings
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

// Compute is the eligibility arithmetic, without the database: salary is the gross monthly
// salary, outstanding the period's outstanding principal + fee. Settings must be valid.
func Compute(salary, outstanding int64, active bool, s Settings, now time.Time) (Eligibility, error) {
	start, end := Period(now)
	e := Eligibility{PeriodStart: start, PeriodEnd: end, OutstandingSantim: outstanding, EmployeeActive: active, Settings: s}
	if salary < 0 || outstanding < 0 {
		return Eligibility{}, fmt.Errorf("ewa: eligibility: %w", money.ErrInvalid)
	}
	day, days := int64(now.UTC().Day()), int64(end.Day())
	// Exact products (salary ≤ 1e12, so × 31 and × 100 stay far inside int64), divided down.
	earned, err := money.Mul(salary, day)
	if err != nil {
		return Eligibility{}, fmt.Errorf("ewa: eligibility: %w", err)
	}
	e.EarnedSantim = earned / days
	capped, err := money.Mul(e.EarnedSantim, s.AccessCapPercent)
	if err != nil {
		return Eligibility{}, fmt.Errorf("ewa: eligibility: %w", err)
	}
	e.CapSantim = capped / 100
	if active && e.CapSantim > outstanding {
		e.AvailableSantim = e.CapSantim - outstanding
	}
	e.MaxPrincipalSantim, err = maxPrincipal(e.AvailableSantim, s)
	if err != nil {
		return Eligibility{}, err
	}
	return e, nil
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
