package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
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
	Items      []payrollOvertimePolicyJSON  `json:"items"`
	NextCursor *string                      `json:"nextCursor"`
	Effective  payrollEffectiveOvertimeJSON `json:"effective"`
}

type payrollOvertimePolicyRequest struct {
	Name                     *string `json:"name"`
	WorkingDayBasisPoints    *int64  `json:"workingDayBasisPoints"`
	NightBasisPoints         *int64  `json:"nightBasisPoints"`
	WeeklyRestDayBasisPoints *int64  `json:"weeklyRestDayBasisPoints"`
	PublicHolidayBasisPoints *int64  `json:"publicHolidayBasisPoints"`
}

func (r payrollOvertimePolicyRequest) input() (payroll.NewOvertimePolicy, error) {
	if err := payrollRequired(payrollField{"name", r.Name == nil}, payrollField{"workingDayBasisPoints", r.WorkingDayBasisPoints == nil},
		payrollField{"nightBasisPoints", r.NightBasisPoints == nil}, payrollField{"weeklyRestDayBasisPoints", r.WeeklyRestDayBasisPoints == nil},
		payrollField{"publicHolidayBasisPoints", r.PublicHolidayBasisPoints == nil}); err != nil {
		return payroll.NewOvertimePolicy{}, err
	}
	n := payroll.NewOvertimePolicy{Name: strings.TrimSpace(*r.Name), Multipliers: payroll.Multipliers{WorkingDayBasisPoints: *r.WorkingDayBasisPoints,
		NightBasisPoints: *r.NightBasisPoints, WeeklyRestDayBasisPoints: *r.WeeklyRestDayBasisPoints,
		PublicHolidayBasisPoints: *r.PublicHolidayBasisPoints}}
	return n, n.Validate()
}

func (s *Server) createOvertimePolicy(c *gin.Context) {
	var req payrollOvertimePolicyRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in, err := req.input()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
		return payroll.CreateOvertimePolicy(ctx, tx, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, payroll.ActionCreateOvertimePolicy, payroll.TargetOvertimePolicy, "", err)
		return
	}
	c.JSON(http.StatusCreated, toPayrollOvertimePolicyJSON(out))
}

func (s *Server) listOvertimePolicies(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	status, ok := singleQuery(c, "status", false, func(v string) error {
		if v != payroll.PolicyDraft && v != payroll.PolicyActive && v != payroll.PolicySuperseded {
			return fieldProblem("status", "must be one of DRAFT, ACTIVE, SUPERSEDED")
		}
		return nil
	})
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
	out := payrollOvertimePolicyListJSON{Items: []payrollOvertimePolicyJSON{},
		Effective: payrollEffectiveOvertimeJSON{Source: "POLICY", PolicyID: optionalString(p.effective.ID), Name: p.effective.Name,
			payrollMultipliersJSON: toPayrollMultipliersJSON(p.effective.Multipliers)}}
	if p.effective.ID == "" {
		out.Effective.Source = "DEFAULT"
	}
	rows, next := pageOf(p.rows, limit, func(p payroll.OvertimePolicy) string { return p.ID })
	out.NextCursor = next
	for _, r := range rows {
		out.Items = append(out.Items, toPayrollOvertimePolicyJSON(r))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) activateOvertimePolicy(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
		return payroll.ActivateOvertimePolicy(ctx, tx, id, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, payroll.ActionActivateOvertimePolicy, payroll.TargetOvertimePolicy, id, err)
		return
	}
	c.JSON(http.StatusOK, toPayrollOvertimePolicyJSON(out))
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

// monthlyHours is the organization's monthly working hours, the divisor of the estimate's hourly
// rate.
func monthlyHours(ctx context.Context, tx db.BunTx) (int64, error) {
	st, err := payroll.EffectiveSettings(ctx, tx)
	return st.MonthlyWorkingHours, err
}

// overtimeRead is entries read with the monthly hours of their estimates.
type overtimeRead[T any] struct {
	value T
	hours int64
}

// readOvertime runs read in the tenant's transaction and reads the monthly hours with it.
func readOvertime[T any](s *Server, c *gin.Context, read func(ctx context.Context, tx db.BunTx) (T, error)) (overtimeRead[T], error) {
	return inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (overtimeRead[T], error) {
		v, err := read(ctx, tx)
		if err != nil {
			return overtimeRead[T]{}, err
		}
		h, err := monthlyHours(ctx, tx)
		return overtimeRead[T]{v, h}, err
	})
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

type payrollOvertimeEntryListJSON struct {
	Items      []payrollOvertimeEntryJSON `json:"items"`
	NextCursor *string                    `json:"nextCursor"`
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
	if err := payrollRequired(payrollField{"employeeId", r.EmployeeID == nil}, payrollField{"workDate", r.WorkDate == nil},
		payrollField{"category", r.Category == nil}, payrollField{"minutes", r.Minutes == nil}); err != nil {
		return payroll.NewOvertimeEntry{}, err
	}
	n := payroll.NewOvertimeEntry{EmployeeID: *r.EmployeeID, WorkDate: *r.WorkDate, Category: payroll.OvertimeCategory(*r.Category),
		Minutes: *r.Minutes}
	if r.Period != nil {
		if *r.Period == "" {
			return n, fieldProblem("period", "must not be empty (leave it out for the work date's month)")
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
	var req payrollOvertimeEntryRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in, err := req.input()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, err := readOvertime(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.CreateOvertimeEntry(ctx, tx, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, payroll.ActionCreateOvertimeEntry, "Employee", in.EmployeeID, err)
		return
	}
	answerOvertimeEntry(c, http.StatusCreated, out)
}

func (s *Server) listOvertimeEntries(c *gin.Context) {
	limit, cursor, status, employee, period, ok := payrollListQuery(c, payroll.OvertimePending, payroll.OvertimeApproved)
	if !ok {
		return
	}
	read, err := readOvertime(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.OvertimeEntry, error) {
		return payroll.ListOvertimeEntries(ctx, tx, payroll.OvertimeFilter{Status: status, EmployeeID: employee, Period: period,
			After: cursor, Limit: limit + 1})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := payrollOvertimeEntryListJSON{Items: []payrollOvertimeEntryJSON{}}
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
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := readOvertime(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.GetOvertimeEntry(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	answerOvertimeEntry(c, http.StatusOK, out)
}

func (s *Server) approveOvertimeEntry(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := readOvertime(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.ApproveOvertimeEntry(ctx, tx, id, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, payroll.ActionApproveOvertimeEntry, payroll.TargetOvertimeEntry, id, err)
		return
	}
	answerOvertimeEntry(c, http.StatusOK, out)
}
