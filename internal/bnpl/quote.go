package bnpl

import (
	"context"
	"fmt"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The plan's bounds and the affordability share.
const (
	MinInstalments = 2
	MaxInstalments = 12
	// MinPurchaseSantim and MaxPurchaseSantim bound a purchase (10 ETB to 1,000,000 ETB).
	MinPurchaseSantim int64 = 1_000
	MaxPurchaseSantim int64 = 100_000_000
	// MaxDebtServiceBasisPoints: all the employee's instalments (loans and BNPL) together take at
	// most 30% of the net pay they are taken from.
	MaxDebtServiceBasisPoints int64 = 3000
)

// QuoteRequest is a purchase to quote: an employee buys PurchaseSantim from a merchant in
// Instalments monthly instalments.
type QuoteRequest struct {
	EmployeeID     string
	MerchantID     string
	PurchaseSantim int64
	Instalments    int
}

// Check validates the request's fields.
func (r QuoteRequest) Check() error {
	if err := field.Identifier("employeeId", r.EmployeeID, 0); err != nil {
		return err
	}
	if err := field.Identifier("merchantId", r.MerchantID, 0); err != nil {
		return err
	}
	switch {
	case r.PurchaseSantim < MinPurchaseSantim || r.PurchaseSantim > MaxPurchaseSantim:
		return &field.Error{Field: "purchaseSantim", Problem: fmt.Sprintf("must be from %d to %d", MinPurchaseSantim, MaxPurchaseSantim)}
	case r.Instalments < MinInstalments || r.Instalments > MaxInstalments:
		return &field.Error{Field: "instalments", Problem: fmt.Sprintf("must be from %d to %d", MinInstalments, MaxInstalments)}
	}
	return nil
}

// ScheduledInstalment is one instalment of a plan: due on the last day of its period.
type ScheduledInstalment struct {
	Index        int
	DueDate      string // YYYY-MM-DD
	AmountSantim int64
}

// Plan is the offer: what the merchant receives, what the customer pays and when.
type Plan struct {
	MerchantID             string
	PurchaseSantim         int64
	DiscountBasisPoints    int64
	DiscountSantim         int64 // ⌊purchase × discount ÷ 10,000⌋, the business's fee income
	MerchantReceivesSantim int64
	Instalments            []ScheduledInstalment
	MaxInstalmentSantim    int64
}

// Offer is the plan of a purchase in n equal monthly instalments (the santim left over go to the
// earliest ones, money.Allocate), the first due at the end of firstPeriod, interest-free for the
// customer; the merchant gives up discountBps of the purchase.
func Offer(merchantID string, purchase int64, n int, discountBps int64, firstPeriod string) (Plan, error) {
	if err := payroll.CheckPeriod("period", firstPeriod); err != nil {
		return Plan{}, err
	}
	weights := make([]int64, n)
	for i := range weights {
		weights[i] = 1
	}
	parts, err := money.Allocate(purchase, weights)
	if err != nil {
		return Plan{}, fmt.Errorf("bnpl: split the purchase: %w", err)
	}
	d, err := money.MulDivFloor(purchase, discountBps, money.HundredPercent)
	if err != nil {
		return Plan{}, fmt.Errorf("bnpl: the discount: %w", err)
	}
	p := Plan{MerchantID: merchantID, PurchaseSantim: purchase, DiscountBasisPoints: discountBps, DiscountSantim: d,
		MerchantReceivesSantim: purchase - d}
	start := payroll.PeriodStart(firstPeriod)
	for i, a := range parts {
		due := start.AddDate(0, i+1, -1)
		p.Instalments = append(p.Instalments, ScheduledInstalment{Index: i, DueDate: due.Format("2006-01-02"), AmountSantim: a})
		p.MaxInstalmentSantim = max(p.MaxInstalmentSantim, a)
	}
	return p, nil
}

// Quote is a plan offer with its affordability.
type Quote struct {
	Request QuoteRequest
	Plan    Plan
	Period  string // the projected period (the first instalment's)
	// ExistingBnplSantim is the employee's BNPL instalments already due in Period; DebtSantim
	// all their debt weighing on it (lending.Debt.Total: loans and BNPL).
	ExistingBnplSantim int64
	DebtSantim         int64
	Affordability      lending.Affordability
}

// Capacity is what the employee's debt in the quote's period (lending.Debt: loans and BNPL)
// may come to with this plan's largest instalment: the limit the quote found plus the debt it
// counted (the limit is the capacity less that debt). An activation holds its plan to it
// (ActivateRequest.CapacitySantim) against loans and agreements made after the quote.
func (q Quote) Capacity() int64 {
	return q.Affordability.LimitSantim + q.DebtSantim
}

// QuoteFor quotes r for the context's business on the employee's projected pay; it changes
// nothing. Refusals: BNPL_MERCHANT_NOT_FOUND, BNPL_MERCHANT_NOT_AVAILABLE, BNPL_EMPLOYEE_NOT_ACTIVE (and the payroll's
// employee-not-found / not-paid), BNPL_NOT_AFFORDABLE with the limits in its details.
func QuoteFor(ctx context.Context, tx db.BunTx, project lending.ProjectFunc, r QuoteRequest) (Quote, error) {
	if err := r.Check(); err != nil {
		return Quote{}, err
	}
	m, err := GetMerchant(ctx, tx, r.MerchantID)
	if err != nil {
		return Quote{}, err
	}
	if err := merchantAvailable(ctx, tx, m.ID); err != nil {
		return Quote{}, err
	}
	status, err := payroll.EmployeeStatus(ctx, tx, r.EmployeeID)
	if err != nil {
		return Quote{}, err
	}
	if status != "ACTIVE" {
		return Quote{}, RefusalError(CodeEmployeeNotActive)
	}
	proj, err := project(ctx, tx, r.EmployeeID)
	if err != nil {
		return Quote{}, err
	}
	// The employee's loans at their scheduled instalments and the BNPL instalments already due:
	// obligations the projection does not (fully) hold; they share the one limit.
	proj, debt, err := lending.WithScheduledDebt(ctx, tx, proj, r.EmployeeID)
	if err != nil {
		return Quote{}, err
	}
	plan, err := Offer(m.ID, r.PurchaseSantim, r.Instalments, m.DiscountBasisPoints, proj.Period)
	if err != nil {
		return Quote{}, fmt.Errorf("bnpl: the projection's period: %w", err)
	}
	a, err := lending.Afford(proj, MaxDebtServiceBasisPoints, plan.MaxInstalmentSantim)
	if err != nil {
		return Quote{}, fmt.Errorf("bnpl: affordability: %w", err)
	}
	existing := debt.BnplSantim
	q := Quote{Request: r, Plan: plan, Period: proj.Period, ExistingBnplSantim: existing, DebtSantim: debt.Total(), Affordability: a}
	if !a.Affordable {
		ref := RefusalError(CodeNotAffordable)
		ref.Details = map[string]any{"maxInstalmentSantim": plan.MaxInstalmentSantim, "limitSantim": a.LimitSantim,
			"bindingLimit": a.Binding, "existingBnplSantim": existing}
		return q, ref
	}
	return q, nil
}
