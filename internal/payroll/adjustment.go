package payroll

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// An adjustment corrects one employee's pay in one period: an EARNING adds to gross (taxable or
// not), a DEDUCTION is taken in the protected order (paycalc kind ADJUSTMENT; taxable on a
// deduction means it corrects taxable pay, so it is taken before tax).
//
// Lifecycle: PENDING → APPROVED (approve: payroll.approve, another user than the creator) →
// POSTED (post: payroll.approve; from now on the period's calculation includes it); PENDING or
// APPROVED → VOIDED (void: payroll.edit); POSTED → REVERSED (reverse: payroll.approve, with a
// reason and the period the reversal takes effect in).
//
// What a reversal means for the calculation (PostedAdjustmentsForPeriod): a reversal effective in
// the adjustment's own period takes the adjustment out of that period — right while its run is not
// calculated and locked, and the runs must then recalculate it. A reversal effective in a later
// period leaves the adjustment in its own period (it was, or will be, paid there) and adds the
// opposite line to the later period: the same amount in the other direction with the same taxable
// flag (an earning's reversal is a pre-tax deduction, a deduction's reversal a refund earning). So
// nothing is undone twice and nothing is undone silently; choosing the period is the approver's
// (the runs refuse one whose period is locked).

// Adjustment states and directions.
const (
	AdjustmentPending  = "PENDING"
	AdjustmentApproved = "APPROVED"
	AdjustmentPosted   = "POSTED"
	AdjustmentVoided   = "VOIDED"
	AdjustmentReversed = "REVERSED"

	Earning   = "EARNING"
	Deduction = "DEDUCTION"
)

// MaxAdjustmentSantim bounds one adjustment (money.MaxAmountSantim, 10 billion ETB).
const MaxAdjustmentSantim = money.MaxAmountSantim

// AdjustmentMachine is the adjustment lifecycle.
var AdjustmentMachine = &Machine{Noun: "payroll adjustment", Code: "PAYROLL_ADJUSTMENT_INVALID_STATE", Moves: map[string]Move{
	"approved": {From: []string{AdjustmentPending}, To: AdjustmentApproved},
	"posted":   {From: []string{AdjustmentApproved}, To: AdjustmentPosted},
	"voided":   {From: []string{AdjustmentPending, AdjustmentApproved}, To: AdjustmentVoided},
	"reversed": {From: []string{AdjustmentPosted}, To: AdjustmentReversed},
}}

// ErrAdjustmentNotFound: no such adjustment in the tenant (another tenant's included).
var ErrAdjustmentNotFound = NotFound("PAYROLL_ADJUSTMENT_NOT_FOUND", "payroll adjustment")

// Adjustment is one stored adjustment.
type Adjustment struct {
	bun.BaseModel `bun:"table:app.payroll_adjustments,alias:adj"`

	ID             string     `bun:"id,pk"`
	TenantID       string     `bun:"tenant_id"`
	EmployeeID     string     `bun:"employee_id"`
	Period         string     `bun:"period"`
	Direction      string     `bun:"direction"`
	AmountSantim   int64      `bun:"amount_santim"`
	Taxable        bool       `bun:"taxable"`
	Reason         string     `bun:"reason"`
	Reference      *string    `bun:"reference"`
	Status         string     `bun:"status"`
	CreatedBy      string     `bun:"created_by"`
	CreatedAt      time.Time  `bun:"created_at"`
	ApprovedBy     *string    `bun:"approved_by"`
	ApprovedAt     *time.Time `bun:"approved_at"`
	PostedBy       *string    `bun:"posted_by"`
	PostedAt       *time.Time `bun:"posted_at"`
	VoidedBy       *string    `bun:"voided_by"`
	VoidedAt       *time.Time `bun:"voided_at"`
	VoidReason     *string    `bun:"void_reason"`
	ReversedBy     *string    `bun:"reversed_by"`
	ReversedAt     *time.Time `bun:"reversed_at"`
	ReversalReason *string    `bun:"reversal_reason"`
	ReversalPeriod *string    `bun:"reversal_period"`
	UpdatedAt      time.Time  `bun:"updated_at"`
}

// NewAdjustment is what a caller records. Taxable nil is the default: true for an EARNING, false
// for a DEDUCTION.
type NewAdjustment struct {
	EmployeeID   string
	Period       string
	Direction    string
	AmountSantim int64
	Taxable      *bool
	Reason       string
	Reference    string // "" none
}

// Check validates the input (field errors: the caller's 400).
func (a NewAdjustment) Check() error {
	if err := field.Identifier("employeeId", a.EmployeeID, 0); err != nil {
		return err
	}
	if err := CheckPeriod("period", a.Period); err != nil {
		return err
	}
	if a.Direction != Earning && a.Direction != Deduction {
		return &field.Error{Field: "direction", Problem: "must be EARNING or DEDUCTION"}
	}
	if a.AmountSantim < 1 || a.AmountSantim > MaxAdjustmentSantim {
		return &field.Error{Field: "amountSantim", Problem: "must be from 1 to 1000000000000"}
	}
	if err := checkReason("reason", a.Reason); err != nil {
		return err
	}
	if a.Reference != "" {
		return checkLabel("reference", a.Reference)
	}
	return nil
}

// CreateAdjustment records a PENDING adjustment for an employee of the tenant who is not
// TERMINATED (audited CreatePayrollAdjustment, event payroll.adjustment_created.v1). Errors:
// field errors, ErrEmployeeNotFound, PAYROLL_EMPLOYEE_TERMINATED (422), PAYROLL_PERIOD_CLOSED
// (409: the period's run is approved or locked, CheckRunOpen).
func CreateAdjustment(ctx context.Context, tx db.BunTx, in NewAdjustment, now time.Time) (Adjustment, error) {
	if err := in.Check(); err != nil {
		return Adjustment{}, err
	}
	if err := CheckRunOpen(ctx, tx, in.Period, now); err != nil {
		return Adjustment{}, err
	}
	if err := PayableEmployee(ctx, tx, in.EmployeeID); err != nil {
		return Adjustment{}, err
	}
	taxable := in.Direction == Earning
	if in.Taxable != nil {
		taxable = *in.Taxable
	}
	a := Adjustment{ID: "adj_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), EmployeeID: in.EmployeeID, Period: in.Period,
		Direction: in.Direction, AmountSantim: in.AmountSantim, Taxable: taxable, Reason: in.Reason, Status: AdjustmentPending,
		CreatedBy: actor(ctx), CreatedAt: now, UpdatedAt: now}
	if in.Reference != "" {
		a.Reference = &in.Reference
	}
	if _, err := tx.NewInsert().Model(&a).Exec(ctx); err != nil {
		return Adjustment{}, fmt.Errorf("payroll.create_adjustment: %w", err)
	}
	return a, record(ctx, tx, "CreatePayrollAdjustment", "PayrollAdjustment", a.ID, "payroll.adjustment_created.v1", adjustmentEvent(a))
}

// GetAdjustment reads one adjustment of the tenant.
func GetAdjustment(ctx context.Context, tx db.BunTx, id string) (Adjustment, error) {
	return getAdjustment(ctx, tx, id, false)
}

func getAdjustment(ctx context.Context, tx db.BunTx, id string, lock bool) (Adjustment, error) {
	return getByID[Adjustment](ctx, tx, "adj", id, lock, ErrAdjustmentNotFound)
}

// AdjustmentFilter narrows ListAdjustments ("" any).
type AdjustmentFilter struct {
	Status, EmployeeID, Period, Direction string
	db.Page
}

// ListAdjustments lists the tenant's adjustments by id (oldest first).
func ListAdjustments(ctx context.Context, tx db.BunTx, f AdjustmentFilter) ([]Adjustment, error) {
	var out []Adjustment
	q := tx.NewSelect().Model(&out).Where("adj.tenant_id = ?", tenancy.TenantID(ctx))
	eq := map[string]string{"status": f.Status, "employee_id": f.EmployeeID, "period": f.Period, "direction": f.Direction}
	if err := listPage(ctx, q, "adj", eq, f.After, f.Rows()); err != nil {
		return nil, fmt.Errorf("payroll.list_adjustments: %w", err)
	}
	return out, nil
}

// ApproveAdjustment: PENDING → APPROVED, by another user than the creator, while the period's
// run is open (audited ApprovePayrollAdjustment, event payroll.adjustment_approved.v1).
func ApproveAdjustment(ctx context.Context, tx db.BunTx, id string, now time.Time) (Adjustment, error) {
	return moveAdjustment(ctx, tx, id, "approved", now, func(a *Adjustment, who string) error {
		if err := CheckMakerChecker(ctx, "payroll adjustment", a.CreatedBy); err != nil {
			return err
		}
		if err := CheckRunOpen(ctx, tx, a.Period, now); err != nil {
			return err
		}
		a.ApprovedBy, a.ApprovedAt = &who, &now
		return nil
	}, "approved_by", "approved_at")
}

// ApplyAdjustment: APPROVED → POSTED, applying the adjustment to its period's payroll: the
// period's calculation includes it from now on (audited PostPayrollAdjustment, event
// payroll.adjustment_posted.v1). POSTED is the adjustment's status, not a ledger posting: this
// moves no money and writes no ledger entry. The creator may not post it either, nor anyone once
// the period's run is approved or locked (PAYROLL_PERIOD_CLOSED: that run would never pay it).
func ApplyAdjustment(ctx context.Context, tx db.BunTx, id string, now time.Time) (Adjustment, error) {
	return moveAdjustment(ctx, tx, id, "posted", now, func(a *Adjustment, who string) error {
		if err := CheckMakerChecker(ctx, "payroll adjustment", a.CreatedBy); err != nil {
			return err
		}
		if err := CheckRunOpen(ctx, tx, a.Period, now); err != nil {
			return err
		}
		a.PostedBy, a.PostedAt = &who, &now
		return nil
	}, "posted_by", "posted_at")
}

// VoidAdjustment: PENDING or APPROVED → VOIDED, with an optional reason (audited
// VoidPayrollAdjustment, event payroll.adjustment_voided.v1).
func VoidAdjustment(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (Adjustment, error) {
	if reason != "" {
		if err := checkReason("reason", reason); err != nil {
			return Adjustment{}, err
		}
	}
	return moveAdjustment(ctx, tx, id, "voided", now, func(a *Adjustment, who string) error {
		a.VoidedBy, a.VoidedAt = &who, &now
		if reason != "" {
			a.VoidReason = &reason
		}
		return nil
	}, "voided_by", "voided_at", "void_reason")
}

// ReverseAdjustment: POSTED → REVERSED, effective in period (the adjustment's own or a later one;
// see the file's comment for what each means), with a reason (audited ReversePayrollAdjustment,
// event payroll.adjustment_reversed.v1). The effective period's run must be open
// (PAYROLL_PERIOD_CLOSED otherwise): a reversal in a closed own period would take out what was
// paid without taking it back, one in a closed later period would never be deducted.
func ReverseAdjustment(ctx context.Context, tx db.BunTx, id, reason, period string, now time.Time) (Adjustment, error) {
	if err := checkReason("reason", reason); err != nil {
		return Adjustment{}, err
	}
	if err := CheckPeriod("effectivePeriod", period); err != nil {
		return Adjustment{}, err
	}
	return moveAdjustment(ctx, tx, id, "reversed", now, func(a *Adjustment, who string) error {
		if period < a.Period {
			return &field.Error{Field: "effectivePeriod", Problem: "must not be before the adjustment's period"}
		}
		if err := CheckRunOpen(ctx, tx, period, now); err != nil {
			return err
		}
		a.ReversedBy, a.ReversedAt, a.ReversalReason, a.ReversalPeriod = &who, &now, &reason, &period
		return nil
	}, "reversed_by", "reversed_at", "reversal_reason", "reversal_period")
}

var adjustmentActions = map[string]string{"approved": "ApprovePayrollAdjustment", "posted": "PostPayrollAdjustment",
	"voided": "VoidPayrollAdjustment", "reversed": "ReversePayrollAdjustment"}

// moveAdjustment locks the adjustment, checks the move, lets set fill the move's columns, and
// writes them with the audit row and the event.
func moveAdjustment(ctx context.Context, tx db.BunTx, id, action string, now time.Time, set func(*Adjustment, string) error, cols ...string) (Adjustment, error) {
	a, err := getAdjustment(ctx, tx, id, true)
	if err != nil {
		return Adjustment{}, err
	}
	to, err := AdjustmentMachine.Next(action, a.Status)
	if err != nil {
		return Adjustment{}, err
	}
	if err := set(&a, actor(ctx)); err != nil {
		return Adjustment{}, err
	}
	a.Status, a.UpdatedAt = to, now
	if err := updateRow(ctx, tx, &a, "adj", a.TenantID, append([]string{"status", "updated_at"}, cols...)...); err != nil {
		return Adjustment{}, fmt.Errorf("payroll.adjustment_%s: %w", action, err)
	}
	return a, record(ctx, tx, adjustmentActions[action], "PayrollAdjustment", a.ID, "payroll.adjustment_"+action+".v1", adjustmentEvent(a))
}

func adjustmentEvent(a Adjustment) map[string]any {
	ev := map[string]any{"adjustmentId": a.ID, "employeeId": a.EmployeeID, "period": a.Period, "direction": a.Direction,
		"amountSantim": a.AmountSantim, "taxable": a.Taxable, "status": a.Status}
	if a.ReversalPeriod != nil {
		ev["reversalPeriod"] = *a.ReversalPeriod
	}
	return ev
}

// PeriodAdjustment is one adjustment line of a period's calculation: Direction and Taxable as the
// calculator takes them (paycalc.Adjustment). Reversal marks the opposite line of an adjustment
// of an earlier period reversed in this one (Direction is already the opposite); the calculator's
// reference is then AdjustmentID + ":reversal", else AdjustmentID.
type PeriodAdjustment struct {
	AdjustmentID string
	EmployeeID   string
	Direction    string
	AmountSantim int64
	Taxable      bool
	Reversal     bool
}

// employee is the employee the line pays or takes from (employeeInput).
func (p PeriodAdjustment) employee() string { return p.EmployeeID }

// Reference is the line's reference, unique among a period's lines of one employee.
func (p PeriodAdjustment) Reference() string {
	if p.Reversal {
		return p.AdjustmentID + ":reversal"
	}
	return p.AdjustmentID
}

// ForCalc is the line as the calculator takes it.
func (p PeriodAdjustment) ForCalc() paycalc.Adjustment {
	return paycalc.Adjustment{Reference: p.Reference(), Direction: paycalc.Direction(p.Direction), AmountSantim: p.AmountSantim, Taxable: p.Taxable}
}

// PostedAdjustmentsForPeriod is every adjustment line of period for all the tenant's employees,
// keyed by employee id, each employee's lines by adjustment id (reversals after): the POSTED
// adjustments of the period, the REVERSED ones of the period whose reversal took effect later,
// and the opposite lines of earlier periods' adjustments reversed effective in this period. One
// query, in a bun or a pgx transaction.
func PostedAdjustmentsForPeriod(ctx context.Context, tx db.Writer, period string) (map[string][]PeriodAdjustment, error) {
	lines, err := periodAdjustments(ctx, tx, period, "")
	if err != nil {
		return nil, err
	}
	return byEmployee(lines), nil
}

// EmployeeAdjustmentsForPeriod is PostedAdjustmentsForPeriod for one employee.
func EmployeeAdjustmentsForPeriod(ctx context.Context, tx db.Writer, employeeID, period string) ([]PeriodAdjustment, error) {
	if err := field.Identifier("employeeId", employeeID, 0); err != nil {
		return nil, err
	}
	return periodAdjustments(ctx, tx, period, employeeID)
}

func periodAdjustments(ctx context.Context, tx db.Writer, period, employeeID string) ([]PeriodAdjustment, error) {
	if err := CheckPeriod("period", period); err != nil {
		return nil, err
	}
	rows, err := db.Select[periodAdjustmentRow](ctx, tx, `SELECT id, employee_id, period, direction,
			amount_santim::bigint AS amount_santim, taxable
		FROM app.payroll_adjustments
		WHERE tenant_id = ? AND (? = '' OR employee_id = ?)
			AND ((period = ? AND status = 'POSTED')
				OR (period = ? AND status = 'REVERSED' AND reversal_period > period)
				OR (reversal_period = ? AND status = 'REVERSED' AND reversal_period > period))
		ORDER BY employee_id, id`, tenancy.TenantID(ctx), employeeID, employeeID, period, period, period)
	if err != nil {
		return nil, fmt.Errorf("payroll.period_adjustments: %w", err)
	}
	var out, reversals []PeriodAdjustment
	flush := func() { out, reversals = append(out, reversals...), reversals[:0] }
	for i, a := range rows {
		if i > 0 && rows[i-1].EmployeeID != a.EmployeeID {
			flush()
		}
		l := PeriodAdjustment{AdjustmentID: a.ID, EmployeeID: a.EmployeeID, Direction: a.Direction, AmountSantim: a.AmountSantim, Taxable: a.Taxable}
		if a.Period == period {
			out = append(out, l)
			continue
		}
		l.Reversal = true
		if l.Direction == Earning {
			l.Direction = Deduction
		} else {
			l.Direction = Earning
		}
		reversals = append(reversals, l)
	}
	flush()
	return out, nil
}

type periodAdjustmentRow struct {
	ID           string `bun:"id" db:"id"`
	EmployeeID   string `bun:"employee_id" db:"employee_id"`
	Period       string `bun:"period" db:"period"`
	Direction    string `bun:"direction" db:"direction"`
	AmountSantim int64  `bun:"amount_santim" db:"amount_santim"`
	Taxable      bool   `bun:"taxable" db:"taxable"`
}

// loadAdjustments is the loader's adjustments family (LoadInputs).
func loadAdjustments(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	lines, err := periodAdjustments(ctx, tx, period, opt.EmployeeID)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if in := byID[l.EmployeeID]; in != nil {
			in.Adjustments = append(in.Adjustments, l.ForCalc())
		}
	}
	return nil
}
