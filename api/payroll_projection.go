package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// The projected net pay (GET /api/payroll/projection): what the next run will pay an employee on
// the inputs stored now, and how much more it could recover within the protection policy.
func (s *Server) payrollProjectionRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/payroll/projection", Auth: Org, Role: orgs.PlainMember, Permission: payrollView,
			Summary: "An employee's projected pay for a period on the inputs stored now", Handler: s.payrollProjection},
	}
}

type projectionLineJSON struct {
	Kind         string `json:"kind"`
	Reference    string `json:"reference"`
	AmountSantim int64  `json:"amountSantim"`
}

type projectionEarningJSON struct {
	projectionLineJSON
	Taxable bool `json:"taxable"`
}

type projectionDeductionJSON struct {
	projectionLineJSON
	PreTax bool `json:"preTax"`
}

type projectionContributionJSON struct {
	Kind         string `json:"kind"`
	AmountSantim int64  `json:"amountSantim"`
}

type projectionJSON struct {
	EmployeeID            string                       `json:"employeeId"`
	Period                string                       `json:"period"`
	Paid                  bool                         `json:"paid"`
	TaxTableVersion       string                       `json:"taxTableVersion,omitempty"`
	DaysInPeriod          int                          `json:"daysInPeriod"`
	DaysEmployed          int                          `json:"daysEmployed"`
	BasicSantim           int64                        `json:"basicSantim"`
	Earnings              []projectionEarningJSON      `json:"earnings"`
	GrossSantim           int64                        `json:"grossSantim"`
	TaxableSantim         int64                        `json:"taxableSantim"`
	TaxBaseSantim         int64                        `json:"taxBaseSantim"`
	Deductions            []projectionDeductionJSON    `json:"deductions"`
	DeductionsSantim      int64                        `json:"deductionsSantim"`
	EmployerContributions []projectionContributionJSON `json:"employerContributions"`
	NetSantim             int64                        `json:"netSantim"`
	ShareCapSantim        int64                        `json:"shareCapSantim"`
	RecoverableSantim     int64                        `json:"recoverableSantim"`
	BelowMinimumNet       bool                         `json:"belowMinimumNet"`
	CarriedForward        []projectionLineJSON         `json:"carriedForward"`
}

func (s *Server) payrollProjection(c *gin.Context) {
	emp, ok := singleQuery(c, "employeeId", true, identifierCheck("employeeId"))
	if !ok {
		return
	}
	period, ok := singleQuery(c, "period", false, func(v string) error { return payroll.CheckPeriod("period", v) })
	if !ok {
		return
	}
	if period == "" {
		period = payroll.PeriodOf(s.now())
	}
	p, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Projection, error) {
		return payroll.Project(ctx, tx, emp, period)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, projectionOf(p))
}

// loanProjection is the projection a loan quote and origination are limited by
// (Deps.LoanProjection's default): the run of the clock's month on the inputs stored now.
func (s *Server) loanProjection(ctx context.Context, tx db.BunTx, employeeID string) (lending.Projection, error) {
	p, err := payroll.Project(ctx, tx, employeeID, payroll.PeriodOf(s.now()))
	if err != nil {
		return lending.Projection{}, err
	}
	if !p.Paid {
		return lending.Projection{}, payroll.ErrEmployeeNotPaid
	}
	return lending.ProjectionOf(p.Projection), nil
}

func projectionOf(p payroll.Projection) projectionJSON {
	e := p.Entry
	out := projectionJSON{EmployeeID: p.EmployeeID, Period: p.Period, Paid: p.Paid, TaxTableVersion: e.TaxTableVersion,
		DaysInPeriod: e.DaysInPeriod, DaysEmployed: e.DaysEmployed, BasicSantim: e.BasicSantim,
		GrossSantim: e.GrossSantim, TaxableSantim: e.TaxableSantim, TaxBaseSantim: e.TaxBaseSantim,
		DeductionsSantim: e.DeductionsSantim, NetSantim: e.NetSantim, ShareCapSantim: e.ShareCapSantim,
		RecoverableSantim: p.RecoverableSantim, BelowMinimumNet: e.BelowMinimumNet,
		Earnings: []projectionEarningJSON{}, Deductions: []projectionDeductionJSON{},
		EmployerContributions: []projectionContributionJSON{}, CarriedForward: []projectionLineJSON{}}
	for _, l := range e.Earnings {
		out.Earnings = append(out.Earnings, projectionEarningJSON{projectionLineJSON{string(l.Kind), l.Reference, l.AmountSantim}, l.Taxable})
	}
	for _, l := range e.Deductions {
		out.Deductions = append(out.Deductions, projectionDeductionJSON{projectionLineJSON{string(l.Kind), l.Reference, l.AmountSantim}, l.PreTax})
	}
	for _, l := range e.EmployerContributions {
		out.EmployerContributions = append(out.EmployerContributions, projectionContributionJSON{string(l.Kind), l.AmountSantim})
	}
	for _, l := range e.CarriedForward {
		out.CarriedForward = append(out.CarriedForward, projectionLineJSON{string(l.Kind), l.Reference, l.AmountSantim})
	}
	return out
}
