package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// GET /api/employee/budget: the signed-in employee's next pay as the run will calculate it on the
// inputs stored now — gross, each deduction in its group (what the law takes, what a court
// ordered, what they committed to, what the employer deducts), the net, what is carried to the
// next period, and the room left for another advance or instalment. Rules:
// internal/payroll/budget.go; the figures are the projection's (GET /api/payroll/projection, the
// employer's view of the same run).

func (s *Server) employeeBudgetRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/employee/budget", Auth: Session,
		Summary: "The caller's next pay as an employee: gross, deductions by group, net, room for more", Handler: s.employeeBudget}}
}

type budgetDeductionJSON struct {
	Group        string `json:"group"`
	Kind         string `json:"kind"`
	Reference    string `json:"reference"`
	AmountSantim int64  `json:"amountSantim"`
}

type employeeBudgetJSON struct {
	EmployeeID string `json:"employeeId"`
	BusinessID string `json:"businessId"`
	Period     string `json:"period"`
	// Paid is false when the period pays the employee nothing (suspended, or gone before it):
	// every figure is then 0.
	Paid                 bool                  `json:"paid"`
	GrossSantim          int64                 `json:"grossSantim"`
	Deductions           []budgetDeductionJSON `json:"deductions"`
	Totals               map[string]int64      `json:"totals"`
	NetSantim            int64                 `json:"netSantim"`
	CarriedForwardSantim int64                 `json:"carriedForwardSantim"`
	RecoverableSantim    int64                 `json:"recoverableSantim"`
}

func toEmployeeBudgetJSON(tenant string, p payroll.Projection) employeeBudgetJSON {
	e := p.Entry
	out := employeeBudgetJSON{EmployeeID: p.EmployeeID, BusinessID: tenant, Period: p.Period, Paid: p.Paid,
		GrossSantim: e.GrossSantim, NetSantim: e.NetSantim, RecoverableSantim: p.RecoverableSantim,
		Deductions: []budgetDeductionJSON{}, Totals: make(map[string]int64, len(payroll.BudgetGroups))}
	for _, g := range payroll.BudgetGroups {
		out.Totals[g] = 0
	}
	for _, d := range e.Deductions {
		g := payroll.BudgetGroup(d.Kind)
		out.Deductions = append(out.Deductions, budgetDeductionJSON{Group: g, Kind: string(d.Kind), Reference: d.Reference, AmountSantim: d.AmountSantim})
		out.Totals[g] += d.AmountSantim
	}
	for _, cf := range e.CarriedForward {
		out.CarriedForwardSantim += cf.AmountSantim
	}
	return out
}

func (s *Server) employeeBudget(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var p payroll.Projection
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		p, err = payroll.NextPay(ctx, tx, emp, s.now())
		return err
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toEmployeeBudgetJSON(tenant, p))
}
