package payroll

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Overtime: the tenant's policy (a multiplier per category of hours) and the overtime worked.
//
// Policies: DRAFT ─activate─▶ ACTIVE (payroll.approve); activating one moves the tenant's ACTIVE
// policy to SUPERSEDED in the same transaction, and a SUPERSEDED policy may be activated again
// (going back to an earlier policy). At most one policy per tenant is ACTIVE (a partial unique
// index; activations of one tenant are serialized). A tenant without an ACTIVE policy is paid by
// the labour law's multipliers (DefaultOvertimePolicy, Labour Proclamation 1156/2019 art. 68): a
// code default rather than a row per tenant, so every organization has it from its first day,
// and a change of the law is one change here. The API shows it as the effective policy.
//
// Entries: PENDING ─approve─▶ APPROVED (payroll.approve; not by its creator; its period still
// open). An entry records minutes worked on a work date in a category, and the multiplier of the
// policy in force when it was recorded (with the policy's id, none for the default): the approver
// approves the amount they see, and a later activation does not change entries already recorded.
// The amount is computed by the calculator in the period's run (paycalc): minutes × monthly
// salary × multiplier ÷ (monthly hours × 60 × 10,000), the hourly rate being the monthly salary
// ÷ the tenant's monthly hours (default 208).
//
// Bounds of an entry: 1 to 1,440 minutes (24 hours); an employee's entries of one work date add
// up to at most 1,440 minutes, and of one period to at most MaxOvertimeMinutesPerPeriod (the
// calculator's bound; a month's hours). These are the physical bounds that catch mistakes (a
// duplicated day, minutes typed as seconds). The labour law's limits on overtime (art. 67: 2
// hours a day, 20 a month, 100 a year, save for emergencies the law lists) are the employer's to
// keep, since the law allows exceptions this service cannot judge. The work date must exist and
// not be after today (UTC): overtime is recorded once worked. The period that pays an entry is its
// work date's month by default; a later one may be named (overtime worked on the last day of a
// month recorded after that month's payroll), never an earlier one, and never a closed one.

// OvertimeCategory is the kind of hours an entry records.
type OvertimeCategory string

const (
	OvertimeWorkingDay    OvertimeCategory = "WORKING_DAY"     // a working day, 06:00–22:00
	OvertimeNight         OvertimeCategory = "NIGHT"           // 22:00–06:00
	OvertimeWeeklyRestDay OvertimeCategory = "WEEKLY_REST_DAY" // the weekly rest day
	OvertimePublicHoliday OvertimeCategory = "PUBLIC_HOLIDAY"  // a public holiday
)

// OvertimeCategories are the categories in the order the API lists them.
var OvertimeCategories = []OvertimeCategory{OvertimeWorkingDay, OvertimeNight, OvertimeWeeklyRestDay, OvertimePublicHoliday}

// Bounds of overtime (the tables check them again), the calculator's own (one constant each, so
// nothing this store accepts is refused by the calculator).
const (
	MinMultiplierBasisPoints    = paycalc.MinMultiplierBasisPoints // 1×: never less than the hourly rate
	MaxMultiplierBasisPoints    = paycalc.MaxMultiplierBasisPoints // 4×
	MaxOvertimeMinutesPerEntry  = paycalc.MaxOvertimeMinutesPerEntry
	MaxOvertimeMinutesPerDay    = 24 * 60
	MaxOvertimeMinutesPerPeriod = paycalc.MaxOvertimeMinutesPerPeriod
)

// The labour law's multipliers (Labour Proclamation 1156/2019 art. 68), basis points of the
// hourly rate: the calculator's constants.
const (
	DefaultWorkingDayBasisPoints    = paycalc.MultiplierWorkdayBasisPoints // 1.5×
	DefaultNightBasisPoints         = paycalc.MultiplierNightBasisPoints   // 1.75×
	DefaultWeeklyRestDayBasisPoints = paycalc.MultiplierRestDayBasisPoints // 2×
	DefaultPublicHolidayBasisPoints = paycalc.MultiplierHolidayBasisPoints // 2.5×
)

// The states of a policy and of an entry.
const (
	PolicyDraft      = "DRAFT"
	PolicyActive     = "ACTIVE"
	PolicySuperseded = "SUPERSEDED"
	OvertimePending  = "PENDING"
	OvertimeApproved = "APPROVED"
)

// Codes of the overtime refusals (besides CodeEmployeeNotFound, CodeSelfApproval,
// CodePeriodClosed and CodeEmployeeTerminated).
const (
	CodeOvertimePolicyNotFound     = "PAYROLL_OVERTIME_POLICY_NOT_FOUND"
	CodeOvertimePolicyInvalidState = "PAYROLL_OVERTIME_POLICY_INVALID_STATE"
	CodeOvertimeNotFound           = "PAYROLL_OVERTIME_NOT_FOUND"
	CodeOvertimeInvalidState       = "PAYROLL_OVERTIME_INVALID_STATE"
	// CodeOvertimeLimit: the entry would take the employee's minutes of its work date or of its
	// period past the bound (422; details say which and what is left).
	CodeOvertimeLimit = "PAYROLL_OVERTIME_LIMIT_EXCEEDED"
	// CodeOvertimeFutureDate: the work date is after today (422).
	CodeOvertimeFutureDate = "PAYROLL_OVERTIME_DATE_IN_FUTURE"
)

var (
	// ErrOvertimePolicyNotFound: no overtime policy with this id in the tenant.
	ErrOvertimePolicyNotFound = NotFound(CodeOvertimePolicyNotFound, "overtime policy")
	// ErrOvertimeNotFound: no overtime entry with this id in the tenant.
	ErrOvertimeNotFound = NotFound(CodeOvertimeNotFound, "overtime entry")
)

// OvertimePolicyMachine and OvertimeMachine are the lifecycles of policies and entries.
var (
	OvertimePolicyMachine = &Machine{Noun: "overtime policy", Code: CodeOvertimePolicyInvalidState, Moves: map[string]Move{
		"activated": {From: []string{PolicyDraft, PolicySuperseded}, To: PolicyActive},
	}}
	OvertimeMachine = &Machine{Noun: "overtime entry", Code: CodeOvertimeInvalidState, Moves: map[string]Move{
		"approved": {From: []string{OvertimePending}, To: OvertimeApproved},
	}}
)

// The audit actions and outbox event types of overtime.
const (
	ActionCreateOvertimePolicy   = "CreateOvertimePolicy"
	ActionActivateOvertimePolicy = "ActivateOvertimePolicy"
	ActionCreateOvertimeEntry    = "CreateOvertimeEntry"
	ActionApproveOvertimeEntry   = "ApproveOvertimeEntry"
	TargetOvertimePolicy         = "OvertimePolicy"
	TargetOvertimeEntry          = "OvertimeEntry"

	EventOvertimePolicyCreated   = "payroll.overtime_policy_created.v1"
	EventOvertimePolicyActivated = "payroll.overtime_policy_activated.v1"
	EventOvertimeEntryCreated    = "payroll.overtime_entry_created.v1"
	EventOvertimeEntryApproved   = "payroll.overtime_entry_approved.v1"
)

// Multipliers are basis points of the hourly rate per category.
type Multipliers struct {
	WorkingDayBasisPoints    int64 `bun:"working_day_basis_points"`
	NightBasisPoints         int64 `bun:"night_basis_points"`
	WeeklyRestDayBasisPoints int64 `bun:"weekly_rest_day_basis_points"`
	PublicHolidayBasisPoints int64 `bun:"public_holiday_basis_points"`
}

// For is the multiplier of category c (0 for an unknown category).
func (m Multipliers) For(c OvertimeCategory) int64 {
	switch c {
	case OvertimeWorkingDay:
		return m.WorkingDayBasisPoints
	case OvertimeNight:
		return m.NightBasisPoints
	case OvertimeWeeklyRestDay:
		return m.WeeklyRestDayBasisPoints
	case OvertimePublicHoliday:
		return m.PublicHolidayBasisPoints
	}
	return 0
}

// Validate checks every multiplier is within bounds; its error is a *field.Error.
func (m Multipliers) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"workingDayBasisPoints", m.WorkingDayBasisPoints}, {"nightBasisPoints", m.NightBasisPoints},
		{"weeklyRestDayBasisPoints", m.WeeklyRestDayBasisPoints}, {"publicHolidayBasisPoints", m.PublicHolidayBasisPoints}} {
		if f.v < MinMultiplierBasisPoints || f.v > MaxMultiplierBasisPoints {
			return &field.Error{Field: f.name, Problem: fmt.Sprintf("must be from %d to %d basis points", MinMultiplierBasisPoints, MaxMultiplierBasisPoints)}
		}
	}
	return nil
}

// OvertimePolicy is a tenant's overtime policy as stored.
type OvertimePolicy struct {
	bun.BaseModel `bun:"table:app.payroll_overtime_policies,alias:otp"`

	ID       string `bun:"id,pk"`
	TenantID string `bun:"tenant_id"`
	Name     string `bun:"name"`
	Multipliers
	Status       string    `bun:"status"`
	CreatedBy    string    `bun:"created_by"`
	CreatedAt    time.Time `bun:"created_at"`
	ActivatedBy  string    `bun:"activated_by,nullzero"`
	ActivatedAt  time.Time `bun:"activated_at,nullzero"`
	SupersededAt time.Time `bun:"superseded_at,nullzero"`
	UpdatedAt    time.Time `bun:"updated_at"`
}

// DefaultOvertimePolicyName names the labour-law default where a policy is shown.
const DefaultOvertimePolicyName = "Labour Proclamation 1156/2019 art. 68 (default)"

// DefaultOvertimePolicy is the policy of a tenant that has activated none: the labour law's
// multipliers. Its ID is "".
func DefaultOvertimePolicy() OvertimePolicy {
	return OvertimePolicy{Name: DefaultOvertimePolicyName, Status: PolicyActive, Multipliers: Multipliers{
		WorkingDayBasisPoints: DefaultWorkingDayBasisPoints, NightBasisPoints: DefaultNightBasisPoints,
		WeeklyRestDayBasisPoints: DefaultWeeklyRestDayBasisPoints, PublicHolidayBasisPoints: DefaultPublicHolidayBasisPoints}}
}

// NewOvertimePolicy is what CreateOvertimePolicy records.
type NewOvertimePolicy struct {
	Name string // a name (field.Name), trimmed
	Multipliers
}

// Validate checks every field; its error is a *field.Error.
func (n NewOvertimePolicy) Validate() error {
	if err := field.Name("name", n.Name); err != nil {
		return err
	}
	if n.Name != strings.TrimSpace(n.Name) {
		return &field.Error{Field: "name", Problem: "must not start or end with white space"}
	}
	return n.Multipliers.Validate()
}

type policyEvent struct {
	ID                       string `json:"id"`
	Name                     string `json:"name"`
	Status                   string `json:"status"`
	WorkingDayBasisPoints    int64  `json:"workingDayBasisPoints"`
	NightBasisPoints         int64  `json:"nightBasisPoints"`
	WeeklyRestDayBasisPoints int64  `json:"weeklyRestDayBasisPoints"`
	PublicHolidayBasisPoints int64  `json:"publicHolidayBasisPoints"`
	SupersededPolicyID       string `json:"supersededPolicyId,omitempty"`
}

func recordPolicy(ctx context.Context, tx db.BunTx, action, event string, p OvertimePolicy, superseded string) error {
	details := map[string]any{"status": p.Status, "name": p.Name, "workingDayBasisPoints": p.WorkingDayBasisPoints,
		"nightBasisPoints": p.NightBasisPoints, "weeklyRestDayBasisPoints": p.WeeklyRestDayBasisPoints,
		"publicHolidayBasisPoints": p.PublicHolidayBasisPoints}
	if superseded != "" {
		details["supersededPolicyId"] = superseded
	}
	return recordChange(ctx, tx, action, TargetOvertimePolicy, p.ID, details, event, policyEvent{ID: p.ID, Name: p.Name,
		Status: p.Status, WorkingDayBasisPoints: p.WorkingDayBasisPoints, NightBasisPoints: p.NightBasisPoints,
		WeeklyRestDayBasisPoints: p.WeeklyRestDayBasisPoints, PublicHolidayBasisPoints: p.PublicHolidayBasisPoints,
		SupersededPolicyID: superseded})
}

// CreateOvertimePolicy records a DRAFT policy (audited CreateOvertimePolicy, event
// payroll.overtime_policy_created.v1). Errors: a *field.Error.
func CreateOvertimePolicy(ctx context.Context, tx db.BunTx, n NewOvertimePolicy, now time.Time) (OvertimePolicy, error) {
	if err := n.Validate(); err != nil {
		return OvertimePolicy{}, err
	}
	now = now.UTC()
	p := OvertimePolicy{ID: "otp_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), Name: n.Name, Multipliers: n.Multipliers,
		Status: PolicyDraft, CreatedBy: tenancy.Actor(ctx), CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(&p).Exec(ctx); err != nil {
		return OvertimePolicy{}, err
	}
	return p, recordPolicy(ctx, tx, ActionCreateOvertimePolicy, EventOvertimePolicyCreated, p, "")
}

// GetOvertimePolicy reads one policy of the tenant (ErrOvertimePolicyNotFound).
func GetOvertimePolicy(ctx context.Context, tx db.BunTx, id string) (OvertimePolicy, error) {
	return getPolicy(ctx, tx, id, false)
}

func getPolicy(ctx context.Context, tx db.BunTx, id string, lock bool) (OvertimePolicy, error) {
	return getByID[OvertimePolicy](ctx, tx, "otp", id, lock, ErrOvertimePolicyNotFound)
}

// PolicyFilter narrows ListOvertimePolicies; zero fields do not filter.
type PolicyFilter struct {
	Status string
	After  string
	Limit  int
}

// ListOvertimePolicies lists the tenant's stored policies by id (oldest first); the default
// policy is not a row and is not listed (EffectiveOvertimePolicy).
func ListOvertimePolicies(ctx context.Context, tx db.BunTx, f PolicyFilter) ([]OvertimePolicy, error) {
	out := []OvertimePolicy{}
	q := tx.NewSelect().Model(&out).Where("otp.tenant_id = ?", tenancy.TenantID(ctx))
	return out, listPage(ctx, q, "otp", map[string]string{"status": f.Status}, f.After, int64(f.Limit))
}

// EffectiveOvertimePolicy is the tenant's ACTIVE policy, or DefaultOvertimePolicy (ID "") when
// it has none.
func EffectiveOvertimePolicy(ctx context.Context, tx db.BunTx) (OvertimePolicy, error) {
	var p OvertimePolicy
	err := tx.NewSelect().Model(&p).Where("otp.tenant_id = ?", tenancy.TenantID(ctx)).Where("otp.status = ?", PolicyActive).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultOvertimePolicy(), nil
	}
	return p, err
}

// ActivateOvertimePolicy makes a DRAFT or SUPERSEDED policy the tenant's ACTIVE one, superseding
// the one that was (audited ActivateOvertimePolicy with supersededPolicyId, event
// payroll.overtime_policy_activated.v1). Entries recorded before keep their multipliers. Errors:
// ErrOvertimePolicyNotFound; PAYROLL_OVERTIME_POLICY_INVALID_STATE (409: it is ACTIVE).
func ActivateOvertimePolicy(ctx context.Context, tx db.BunTx, id string, now time.Time) (OvertimePolicy, error) {
	tenant := tenancy.TenantID(ctx)
	// One activation per tenant at a time: the second waits, then finds the first's policy ACTIVE
	// and supersedes it, instead of both superseding the same one and colliding on the index.
	if err := lockTenantKey(ctx, tx, "payroll_overtime_policy"); err != nil {
		return OvertimePolicy{}, err
	}
	p, err := getPolicy(ctx, tx, id, true)
	if err != nil {
		return p, err
	}
	to, err := OvertimePolicyMachine.Next("activated", p.Status)
	if err != nil {
		return p, err
	}
	now = now.UTC()
	var superseded []string
	if err := tx.NewUpdate().Model((*OvertimePolicy)(nil)).
		Set("status = ?", PolicySuperseded).Set("superseded_at = ?", now).Set("updated_at = ?", now).
		Where("otp.tenant_id = ?", tenant).Where("otp.status = ?", PolicyActive).
		Returning("otp.id").Scan(ctx, &superseded); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return p, err
	}
	p.Status, p.ActivatedBy, p.ActivatedAt, p.SupersededAt, p.UpdatedAt = to, tenancy.Actor(ctx), now, time.Time{}, now
	if err := updateRow(ctx, tx, &p, "otp", tenant, "status", "activated_by", "activated_at", "superseded_at", "updated_at"); err != nil {
		return p, err
	}
	prev := ""
	if len(superseded) > 0 {
		prev = superseded[0]
	}
	return p, recordPolicy(ctx, tx, ActionActivateOvertimePolicy, EventOvertimePolicyActivated, p, prev)
}

// OvertimeEntry is an overtime entry as stored.
type OvertimeEntry struct {
	bun.BaseModel `bun:"table:app.payroll_overtime_entries,alias:ovt"`

	ID                    string           `bun:"id,pk"`
	TenantID              string           `bun:"tenant_id"`
	EmployeeID            string           `bun:"employee_id"`
	WorkDate              time.Time        `bun:"work_date,type:date"`
	Period                string           `bun:"period"`
	Category              OvertimeCategory `bun:"category"`
	Minutes               int64            `bun:"minutes"`
	MultiplierBasisPoints int64            `bun:"multiplier_basis_points"`
	// PolicyID is the policy the multiplier came from; "" for the labour-law default.
	PolicyID    string    `bun:"policy_id,nullzero"`
	Description string    `bun:"description"`
	Status      string    `bun:"status"`
	CreatedBy   string    `bun:"created_by"`
	CreatedAt   time.Time `bun:"created_at"`
	ApprovedBy  string    `bun:"approved_by,nullzero"`
	ApprovedAt  time.Time `bun:"approved_at,nullzero"`
	UpdatedAt   time.Time `bun:"updated_at"`
	// SalarySantim is the employee's current monthly salary, read with the entry by
	// GetOvertimeEntry and ListOvertimeEntries for EstimatedAmountSantim (not stored).
	SalarySantim int64 `bun:"salary_santim,scanonly"`
}

// EstimatedAmountSantim is the entry's amount at monthlySalary and monthlyHours: minutes ×
// salary × multiplier ÷ (monthlyHours × 60 × 10,000), rounded once, half to even (the
// calculator's formula). It is an estimate where the API shows it (at the employee's current
// salary and the tenant's monthly working hours, EffectiveSettings): the run computes it with the
// period's salary.
func (e OvertimeEntry) EstimatedAmountSantim(monthlySalarySantim, monthlyHours int64) (int64, error) {
	return money.MulDiv(e.Minutes*monthlySalarySantim, e.MultiplierBasisPoints, monthlyHours*60*money.HundredPercent)
}

// NewOvertimeEntry is what CreateOvertimeEntry records.
type NewOvertimeEntry struct {
	EmployeeID string
	// WorkDate is "YYYY-MM-DD", a date that exists, 2000-01-01 to 2100-12-31.
	WorkDate string
	// Period pays the entry: "" means the work date's month; else that month or a later one.
	Period      string
	Category    OvertimeCategory
	Minutes     int64
	Description string
}

// Validate checks every field (not the ones that depend on today or the database); its error is
// a *field.Error. It returns the work date and the period.
func (n NewOvertimeEntry) Validate() (time.Time, string, error) {
	if err := field.Identifier("employeeId", n.EmployeeID, 0); err != nil {
		return time.Time{}, "", err
	}
	d, err := time.Parse(time.DateOnly, n.WorkDate)
	if err != nil || len(n.WorkDate) != len(time.DateOnly) {
		return time.Time{}, "", &field.Error{Field: "workDate", Problem: "must be a date that exists, written YYYY-MM-DD"}
	}
	if n.WorkDate < "2000-01-01" || n.WorkDate > "2100-12-31" {
		return time.Time{}, "", &field.Error{Field: "workDate", Problem: "must be from 2000-01-01 to 2100-12-31"}
	}
	period := PeriodOf(d)
	if n.Period != "" {
		if err := CheckPeriod("period", n.Period); err != nil {
			return time.Time{}, "", err
		}
		if n.Period < period {
			return time.Time{}, "", &field.Error{Field: "period", Problem: "must not be before the work date's month"}
		}
		period = n.Period
	}
	if !slices.Contains(OvertimeCategories, n.Category) {
		return time.Time{}, "", &field.Error{Field: "category", Problem: "must be one of WORKING_DAY, NIGHT, WEEKLY_REST_DAY, PUBLIC_HOLIDAY"}
	}
	if n.Minutes < 1 || n.Minutes > MaxOvertimeMinutesPerEntry {
		return time.Time{}, "", &field.Error{Field: "minutes", Problem: fmt.Sprintf("must be a whole number from 1 to %d", MaxOvertimeMinutesPerEntry)}
	}
	if err := field.Text("description", n.Description, MaxInputText); err != nil {
		return time.Time{}, "", err
	}
	return d, period, nil
}

type overtimeEvent struct {
	ID                    string           `json:"id"`
	EmployeeID            string           `json:"employeeId"`
	WorkDate              string           `json:"workDate"`
	Period                string           `json:"period"`
	Category              OvertimeCategory `json:"category"`
	Minutes               int64            `json:"minutes"`
	MultiplierBasisPoints int64            `json:"multiplierBasisPoints"`
	PolicyID              string           `json:"policyId,omitempty"`
	Status                string           `json:"status"`
}

func recordOvertime(ctx context.Context, tx db.BunTx, action, event string, e OvertimeEntry) error {
	return recordChange(ctx, tx, action, TargetOvertimeEntry, e.ID, map[string]any{"employeeId": e.EmployeeID, "period": e.Period,
		"status": e.Status, "minutes": e.Minutes, "category": e.Category, "multiplierBasisPoints": e.MultiplierBasisPoints},
		event, overtimeEvent{ID: e.ID, EmployeeID: e.EmployeeID, WorkDate: e.WorkDate.Format(time.DateOnly), Period: e.Period,
			Category: e.Category, Minutes: e.Minutes, MultiplierBasisPoints: e.MultiplierBasisPoints, PolicyID: e.PolicyID,
			Status: e.Status})
}

// readSalary sets e.SalarySantim to the employee's current monthly salary (for the estimate).
func readSalary(ctx context.Context, tx db.BunTx, e *OvertimeEntry) error {
	return tx.NewSelect().TableExpr("app.employees").Column("gross_monthly_salary_santim").
		Where("tenant_id = ?", e.TenantID).Where("id = ?", e.EmployeeID).Scan(ctx, &e.SalarySantim)
}

// CreateOvertimeEntry records a PENDING entry with the effective policy's multiplier for its
// category (audited CreateOvertimeEntry, event payroll.overtime_entry_created.v1). Errors: a
// *field.Error; ErrEmployeeNotFound; PAYROLL_OVERTIME_DATE_IN_FUTURE (422);
// PAYROLL_PERIOD_CLOSED (409); PAYROLL_EMPLOYEE_TERMINATED (422); PAYROLL_OVERTIME_LIMIT_EXCEEDED
// (422).
func CreateOvertimeEntry(ctx context.Context, tx db.BunTx, n NewOvertimeEntry, now time.Time) (OvertimeEntry, error) {
	day, period, err := n.Validate()
	if err != nil {
		return OvertimeEntry{}, err
	}
	now = now.UTC()
	if today := now.Format(time.DateOnly); n.WorkDate > today {
		return OvertimeEntry{}, &Refusal{Code: CodeOvertimeFutureDate, Status: http.StatusUnprocessableEntity,
			Message: "the work date is after today (" + today + "): overtime is recorded once worked",
			Details: map[string]any{"field": "workDate", "today": today}}
	}
	if err := CheckPeriodOpen(ctx, tx, period, now); err != nil {
		return OvertimeEntry{}, err
	}
	tenant := tenancy.TenantID(ctx)
	// The caps are sums over the employee's entries: entries for one employee are recorded one at
	// a time, so two at once cannot both fit under a cap that only one fits under.
	if err := lockKey(ctx, tx, "payroll_overtime_entry:"+tenant+":"+n.EmployeeID); err != nil {
		return OvertimeEntry{}, err
	}
	if err := PayableEmployee(ctx, tx, n.EmployeeID); err != nil {
		return OvertimeEntry{}, err
	}
	var sums struct {
		Day    int64 `bun:"day"`
		Period int64 `bun:"period"`
	}
	if err := tx.NewSelect().TableExpr("app.payroll_overtime_entries").
		ColumnExpr("coalesce(sum(minutes) FILTER (WHERE work_date = ?), 0) AS day", day.Format(time.DateOnly)).
		ColumnExpr("coalesce(sum(minutes) FILTER (WHERE period = ?), 0) AS period", period).
		Where("tenant_id = ?", tenant).Where("employee_id = ?", n.EmployeeID).Scan(ctx, &sums); err != nil {
		return OvertimeEntry{}, err
	}
	limit := func(scope string, used, max int64) error {
		return &Refusal{Code: CodeOvertimeLimit, Status: http.StatusUnprocessableEntity,
			Message: fmt.Sprintf("the employee's overtime of this %s would exceed %d minutes (%d recorded)", scope, max, used),
			Details: map[string]any{"scope": scope, "recordedMinutes": used, "maxMinutes": max, "availableMinutes": max - used}}
	}
	if sums.Day+n.Minutes > MaxOvertimeMinutesPerDay {
		return OvertimeEntry{}, limit("work date", sums.Day, MaxOvertimeMinutesPerDay)
	}
	if sums.Period+n.Minutes > MaxOvertimeMinutesPerPeriod {
		return OvertimeEntry{}, limit("period", sums.Period, MaxOvertimeMinutesPerPeriod)
	}
	pol, err := EffectiveOvertimePolicy(ctx, tx)
	if err != nil {
		return OvertimeEntry{}, err
	}
	e := OvertimeEntry{ID: "ovt_" + identity.NewID(), TenantID: tenant, EmployeeID: n.EmployeeID, WorkDate: day, Period: period,
		Category: n.Category, Minutes: n.Minutes, MultiplierBasisPoints: pol.For(n.Category), PolicyID: pol.ID,
		Description: n.Description, Status: OvertimePending, CreatedBy: tenancy.Actor(ctx), CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(&e).Exec(ctx); err != nil {
		return OvertimeEntry{}, err
	}
	if err := readSalary(ctx, tx, &e); err != nil {
		return OvertimeEntry{}, err
	}
	return e, recordOvertime(ctx, tx, ActionCreateOvertimeEntry, EventOvertimeEntryCreated, e)
}

// selectOvertime reads entries with the employee's current salary (for the estimate).
func selectOvertime(ctx context.Context, tx db.BunTx, model any) *bun.SelectQuery {
	return tx.NewSelect().Model(model).ColumnExpr("ovt.*").
		ColumnExpr(`(SELECT e.gross_monthly_salary_santim FROM app.employees e
			WHERE e.tenant_id = ovt.tenant_id AND e.id = ovt.employee_id) AS salary_santim`).
		Where("ovt.tenant_id = ?", tenancy.TenantID(ctx))
}

// GetOvertimeEntry reads one entry of the tenant (ErrOvertimeNotFound).
func GetOvertimeEntry(ctx context.Context, tx db.BunTx, id string) (OvertimeEntry, error) {
	var e OvertimeEntry
	err := selectOvertime(ctx, tx, &e).Where("ovt.id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return e, ErrOvertimeNotFound
	}
	return e, err
}

// OvertimeFilter narrows ListOvertimeEntries; zero fields do not filter.
type OvertimeFilter struct {
	Status, EmployeeID, Period string
	After                      string
	Limit                      int
}

// ListOvertimeEntries lists the tenant's entries by id (oldest first).
func ListOvertimeEntries(ctx context.Context, tx db.BunTx, f OvertimeFilter) ([]OvertimeEntry, error) {
	out := []OvertimeEntry{}
	eq := map[string]string{"status": f.Status, "employee_id": f.EmployeeID, "period": f.Period}
	return out, listPage(ctx, selectOvertime(ctx, tx, &out), "ovt", eq, f.After, int64(f.Limit))
}

// ApproveOvertimeEntry approves a PENDING entry (audited ApproveOvertimeEntry, event
// payroll.overtime_entry_approved.v1). Errors: ErrOvertimeNotFound;
// PAYROLL_OVERTIME_INVALID_STATE (409); PAYROLL_SELF_APPROVAL (403); PAYROLL_PERIOD_CLOSED (409);
// PAYROLL_EMPLOYEE_TERMINATED (422).
func ApproveOvertimeEntry(ctx context.Context, tx db.BunTx, id string, now time.Time) (OvertimeEntry, error) {
	e, err := getByID[OvertimeEntry](ctx, tx, "ovt", id, true, ErrOvertimeNotFound)
	if err != nil {
		return e, err
	}
	to, err := approvalOf(ctx, tx, OvertimeMachine, e.Status, e.CreatedBy, e.Period, e.EmployeeID, now)
	if err != nil {
		return e, err
	}
	now = now.UTC()
	e.Status, e.ApprovedBy, e.ApprovedAt, e.UpdatedAt = to, tenancy.Actor(ctx), now, now
	if err := updateRow(ctx, tx, &e, "ovt", e.TenantID, "status", "approved_by", "approved_at", "updated_at"); err != nil {
		return e, err
	}
	if err := readSalary(ctx, tx, &e); err != nil {
		return e, err
	}
	return e, recordOvertime(ctx, tx, ActionApproveOvertimeEntry, EventOvertimeEntryApproved, e)
}

// ApprovedOvertimeForPeriod is the overtime a period's calculation pays: every APPROVED entry of
// the period, of every employee of the tenant, in one query, keyed by employee id (each list by
// id). An employee with none has no key. Each maps to the calculator's Overtime (Reference: ID,
// Minutes, MultiplierBasisPoints).
func ApprovedOvertimeForPeriod(ctx context.Context, tx db.BunTx, period string) (map[string][]OvertimeEntry, error) {
	return inputsByEmployee[OvertimeEntry](ctx, tx, "ovt", "period", period, OvertimeApproved, "")
}

// ApprovedOvertimeOf is ApprovedOvertimeForPeriod for one employee.
func ApprovedOvertimeOf(ctx context.Context, tx db.BunTx, employeeID, period string) ([]OvertimeEntry, error) {
	return employeeInputsOf[OvertimeEntry](ctx, tx, "ovt", "period", period, OvertimeApproved, employeeID)
}

// employee is the employee the entry pays (employeeInput).
func (e OvertimeEntry) employee() string { return e.EmployeeID }
