package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Overtime policies and entries (routes in payrollEarningRoutes). A tenant without an ACTIVE
// policy is paid the labour law's multipliers; the policy list shows what is in force as
// "effective". An entry shows an estimated amount at the employee's current salary and 208
// monthly hours (payroll.OvertimeEntry.EstimatedAmountSantim); the run computes the amount paid.

type payrollMultipliersJSON struct {
	WorkingDayBasisPoints    int64 `json:"workingDayBasisPoints"`
	NightBasisPoints         int64 `json:"nightBasisPoints"`
	WeeklyRestDayBasisPoints int64 `json:"weeklyRestDayBasisPoints"`
	PublicHolidayBasisPoints int64 `json:"publicHolidayBasisPoints"`
}

func toPayrollMultipliersJSON(m payroll.Multipliers) payrollMultipliersJSON {
	return payrollMultipliersJSON{WorkingDayBasisPoints: m.WorkingDayBasisPoints, NightBasisPoints: m.NightBasisPoints,
		WeeklyRestDayBasisPoints: m.WeeklyRestDayBasisPoints, PublicHolidayBasisPoints: m.PublicHolidayBasisPoints}
}

type payrollOvertimePolicyJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	payrollMultipliersJSON
	Status       string     `json:"status"`
	CreatedBy    string     `json:"createdBy"`
	CreatedAt    time.Time  `json:"createdAt"`
	ActivatedBy  *string    `json:"activatedBy"`
	ActivatedAt  *time.Time `json:"activatedAt"`
	SupersededAt *time.Time `json:"supersededAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
}

func toPayrollOvertimePolicyJSON(p payroll.OvertimePolicy) payrollOvertimePolicyJSON {
	return payrollOvertimePolicyJSON{ID: p.ID, Name: p.Name, payrollMultipliersJSON: toPayrollMultipliersJSON(p.Multipliers),
		Status: p.Status, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt.UTC(), ActivatedBy: optionalString(p.ActivatedBy),
		ActivatedAt: optionalTime(p.ActivatedAt), SupersededAt: optionalTime(p.SupersededAt), UpdatedAt: p.UpdatedAt.UTC()}
}

// payrollEffectiveOvertimeJSON is the policy in force: the ACTIVE one (source POLICY) or the
// labour law's (source DEFAULT, policyId null).
type payrollEffectiveOvertimeJSON struct {
	Source   string  `json:"source"`
	PolicyID *string `json:"policyId"`
	Name     string  `json:"name"`
	payrollMultipliersJSON
}

type payrollOvertimePolicyListJSON struct {
	itemsPage[payrollOvertimePolicyJSON]
	Effective payrollEffectiveOvertimeJSON `json:"effective"`
}

type payrollOvertimePolicyRequest struct {
	Name                     *string `json:"name"`
	WorkingDayBasisPoints    *int64  `json:"workingDayBasisPoints"`
	NightBasisPoints         *int64  `json:"nightBasisPoints"`
	WeeklyRestDayBasisPoints *int64  `json:"weeklyRestDayBasisPoints"`
	PublicHolidayBasisPoints *int64  `json:"publicHolidayBasisPoints"`
}

func (r payrollOvertimePolicyRequest) input() (payroll.NewOvertimePolicy, error) {
	if err := pmRequired("name", r.Name == nil, "workingDayBasisPoints", r.WorkingDayBasisPoints == nil,
		"nightBasisPoints", r.NightBasisPoints == nil, "weeklyRestDayBasisPoints", r.WeeklyRestDayBasisPoints == nil,
		"publicHolidayBasisPoints", r.PublicHolidayBasisPoints == nil); err != nil {
		return payroll.NewOvertimePolicy{}, err
	}
	n := payroll.NewOvertimePolicy{Name: strings.TrimSpace(*r.Name), Multipliers: payroll.Multipliers{WorkingDayBasisPoints: *r.WorkingDayBasisPoints,
		NightBasisPoints: *r.NightBasisPoints, WeeklyRestDayBasisPoints: *r.WeeklyRestDayBasisPoints,
		PublicHolidayBasisPoints: *r.PublicHolidayBasisPoints}}
	return n, n.Validate()
}

func (s *Server) createOvertimePolicy(c *gin.Context) {
	in, ok := bindPayrollInput[payrollOvertimePolicyRequest](c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, payroll.ActionCreateOvertimePolicy, payroll.TargetOvertimePolicy, "", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
		return payroll.CreateOvertimePolicy(ctx, tx, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toPayrollOvertimePolicyJSON(out))
	}
}

func (s *Server) listOvertimePolicies(c *gin.Context) {
	var status string
	limit, cursor, ok := pagedFilters(c, statusParam(&status, payroll.PolicyDraft, payroll.PolicyActive, payroll.PolicySuperseded))
	if !ok {
		return
	}
	type page struct {
		rows      []payroll.OvertimePolicy
		effective payroll.OvertimePolicy
	}
	p, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (page, error) {
		rows, err := payroll.ListOvertimePolicies(ctx, tx, payroll.PolicyFilter{Status: status, After: cursor, Limit: limit + 1})
		if err != nil {
			return page{}, err
		}
		eff, err := payroll.EffectiveOvertimePolicy(ctx, tx)
		return page{rows, eff}, err
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := payrollOvertimePolicyListJSON{
		itemsPage: itemsPageOf(p.rows, limit, func(p payroll.OvertimePolicy) string { return p.ID }, toPayrollOvertimePolicyJSON),
		Effective: payrollEffectiveOvertimeJSON{Source: "POLICY", PolicyID: optionalString(p.effective.ID), Name: p.effective.Name,
			payrollMultipliersJSON: toPayrollMultipliersJSON(p.effective.Multipliers)}}
	if p.effective.ID == "" {
		out.Effective.Source = "DEFAULT"
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) activateOvertimePolicy(c *gin.Context) {
	out, ok := onPathRow(s, c, payroll.ActionActivateOvertimePolicy, payroll.TargetOvertimePolicy,
		func(ctx context.Context, tx db.BunTx, id string) (payroll.OvertimePolicy, error) {
			return payroll.ActivateOvertimePolicy(ctx, tx, id, s.now())
		})
	if ok {
		c.JSON(http.StatusOK, toPayrollOvertimePolicyJSON(out))
	}
}

type payrollOvertimeEntryJSON struct {
	ID                    string                   `json:"id"`
	EmployeeID            string                   `json:"employeeId"`
	WorkDate              string                   `json:"workDate"`
	Period                string                   `json:"period"`
	Category              payroll.OvertimeCategory `json:"category"`
	Minutes               int64                    `json:"minutes"`
	MultiplierBasisPoints int64                    `json:"multiplierBasisPoints"`
	PolicyID              *string                  `json:"policyId"`
	EstimatedAmountSantim int64                    `json:"estimatedAmountSantim"`
	Description           string                   `json:"description"`
	Status                string                   `json:"status"`
	CreatedBy             string                   `json:"createdBy"`
	CreatedAt             time.Time                `json:"createdAt"`
	ApprovedBy            *string                  `json:"approvedBy"`
	ApprovedAt            *time.Time               `json:"approvedAt"`
	UpdatedAt             time.Time                `json:"updatedAt"`
}

// overtimeRead is entries read with the monthly hours of their estimates.
type overtimeRead[T any] struct {
	value T
	hours int64
}

// withHours is v (read in tx, unless err) with the organization's monthly working hours, the
// divisor of its estimates' hourly rate, read in the same transaction.
func withHours[T any](ctx context.Context, tx db.BunTx, v T, err error) (overtimeRead[T], error) {
	if err != nil {
		return overtimeRead[T]{}, err
	}
	st, err := payroll.EffectiveSettings(ctx, tx)
	return overtimeRead[T]{v, st.MonthlyWorkingHours}, err
}

func toPayrollOvertimeEntryJSON(e payroll.OvertimeEntry, hours int64) (payrollOvertimeEntryJSON, error) {
	est, err := e.EstimatedAmountSantim(e.SalarySantim, hours)
	if err != nil {
		return payrollOvertimeEntryJSON{}, err
	}
	return payrollOvertimeEntryJSON{ID: e.ID, EmployeeID: e.EmployeeID, WorkDate: e.WorkDate.Format(time.DateOnly), Period: e.Period,
		Category: e.Category, Minutes: e.Minutes, MultiplierBasisPoints: e.MultiplierBasisPoints, PolicyID: optionalString(e.PolicyID),
		EstimatedAmountSantim: est, Description: e.Description, Status: e.Status, CreatedBy: e.CreatedBy, CreatedAt: e.CreatedAt.UTC(),
		ApprovedBy: optionalString(e.ApprovedBy), ApprovedAt: optionalTime(e.ApprovedAt), UpdatedAt: e.UpdatedAt.UTC()}, nil
}

type payrollOvertimeEntryRequest struct {
	EmployeeID  *string `json:"employeeId"`
	WorkDate    *string `json:"workDate"`
	Period      *string `json:"period"`
	Category    *string `json:"category"`
	Minutes     *int64  `json:"minutes"`
	Description *string `json:"description"`
}

func (r payrollOvertimeEntryRequest) input() (payroll.NewOvertimeEntry, error) {
	if err := pmRequired("employeeId", r.EmployeeID == nil, "workDate", r.WorkDate == nil, "category", r.Category == nil,
		"minutes", r.Minutes == nil); err != nil {
		return payroll.NewOvertimeEntry{}, err
	}
	n := payroll.NewOvertimeEntry{EmployeeID: *r.EmployeeID, WorkDate: *r.WorkDate, Category: payroll.OvertimeCategory(*r.Category),
		Minutes: *r.Minutes}
	if r.Period != nil {
		if *r.Period == "" {
			return n, &field.Error{Field: "period", Problem: "must not be empty (leave it out for the work date's month)"}
		}
		n.Period = *r.Period
	}
	if r.Description != nil {
		n.Description = *r.Description
	}
	_, _, err := n.Validate()
	return n, err
}

// answerOvertimeEntry answers one entry with its estimate.
func answerOvertimeEntry(c *gin.Context, status int, r overtimeRead[payroll.OvertimeEntry]) {
	out, err := toPayrollOvertimeEntryJSON(r.value, r.hours)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(status, out)
}

func (s *Server) createOvertimeEntry(c *gin.Context) {
	in, ok := bindPayrollInput[payrollOvertimeEntryRequest](c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, payroll.ActionCreateOvertimeEntry, "Employee", in.EmployeeID,
		func(ctx context.Context, tx db.BunTx) (overtimeRead[payroll.OvertimeEntry], error) {
			e, err := payroll.CreateOvertimeEntry(ctx, tx, in, s.now())
			return withHours(ctx, tx, e, err)
		})
	if ok {
		answerOvertimeEntry(c, http.StatusCreated, out)
	}
}

func (s *Server) listOvertimeEntries(c *gin.Context) {
	var status, employee, period string
	limit, cursor, ok := pagedFilters(c, statusParam(&status, payroll.OvertimePending, payroll.OvertimeApproved),
		idParam("employeeId", &employee), periodParam("period", &period))
	if !ok {
		return
	}
	read, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (overtimeRead[[]payroll.OvertimeEntry], error) {
		rows, err := payroll.ListOvertimeEntries(ctx, tx, payroll.OvertimeFilter{Status: status, EmployeeID: employee, Period: period,
			After: cursor, Limit: limit + 1})
		return withHours(ctx, tx, rows, err)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	// Not itemsPageOf: an estimate's checked arithmetic can refuse an entry, which answers the
	// whole page.
	out := itemsPage[payrollOvertimeEntryJSON]{Items: []payrollOvertimeEntryJSON{}}
	rows, next := pageOf(read.value, limit, func(e payroll.OvertimeEntry) string { return e.ID })
	out.NextCursor = next
	for _, e := range rows {
		j, err := toPayrollOvertimeEntryJSON(e, read.hours)
		if err != nil {
			writeError(c, err)
			return
		}
		out.Items = append(out.Items, j)
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getOvertimeEntry(c *gin.Context) {
	out, ok := readPathRow(s, c, func(ctx context.Context, tx db.BunTx, id string) (overtimeRead[payroll.OvertimeEntry], error) {
		e, err := payroll.GetOvertimeEntry(ctx, tx, id)
		return withHours(ctx, tx, e, err)
	})
	if ok {
		answerOvertimeEntry(c, http.StatusOK, out)
	}
}

func (s *Server) approveOvertimeEntry(c *gin.Context) {
	out, ok := onPathRow(s, c, payroll.ActionApproveOvertimeEntry, payroll.TargetOvertimeEntry,
		func(ctx context.Context, tx db.BunTx, id string) (overtimeRead[payroll.OvertimeEntry], error) {
			e, err := payroll.ApproveOvertimeEntry(ctx, tx, id, s.now())
			return withHours(ctx, tx, e, err)
		})
	if ok {
		answerOvertimeEntry(c, http.StatusOK, out)
	}
}
