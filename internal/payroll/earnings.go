package payroll

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// One-time earnings: a bonus, arrears, a commission or another payment for one employee, paid in
// one period, taxable or not.
//
// States and moves (EarningMachine):
//
//	PENDING  ─approve─▶ APPROVED      payroll.approve; not by its creator (CheckMakerChecker);
//	                                  its period still open
//	PENDING  ─void────▶ VOIDED        payroll.edit (also once its period has closed: it was
//	                                  never approved, so never paid)
//	APPROVED ─void────▶ VOIDED        payroll.edit and payroll.approve (it undoes an approval);
//	                                  while its period is open: nothing has been paid
//	APPROVED ─reverse─▶ REVERSED      payroll.approve, a reason; once its period has closed
//
// A period is open from the day it begins being the current month until it ends: an earning for
// an earlier month is "closed" because that month's payroll has been paid. A period closes in two
// ways: when the period's run is approved (or further on) or locked
// (CheckPeriodOpen: its figures are fixed, so an input added now would never be paid), and, for
// periods no run has closed, when its calendar month (UTC) is over (an approved earning of such a
// period is taken as paid). Reverse still follows the calendar alone (its reversal period is the
// current month, which must be after the earning's), and the reversal period's run must still be
// open (CheckRunOpen: a reversal into a run that has fixed its figures would never be deducted).
// That is why the two ways out
// of APPROVED are split by the period: void while it is open (nothing was paid, the line just
// leaves the coming calculation), reverse once it has closed (it was paid, so it must be taken
// back). A reversal is recorded on the earning with its reason and the reversal period, the
// current month when it was reversed; the calculator takes it back in that period as a deduction
// of the same amount (ReversedOneTimeEarningsForPeriod), pre-tax when the earning was taxable.
// The reversed earning itself stays paid in its own period, like a reversed adjustment: a run of
// that period not yet approved (or not yet created: a month can close on the calendar before
// its run) still pays it, so what the reversal takes back was paid (loadOneTimeEarnings).
// The spec's "POSTED" is an APPROVED earning whose period has closed; its "reverse (alias of
// void)" is kept apart from void here so each route means one thing.
//
// An input for a closed period is refused (PAYROLL_PERIOD_CLOSED): creating or approving an
// earning for a month already paid would never be paid; pay it as ARREARS in an open period.
// A TERMINATED employee receives no new earnings and none is approved for them
// (PAYROLL_EMPLOYEE_TERMINATED): final pay is settled before the status changes.

// EarningKind is what a one-time earning pays.
type EarningKind string

const (
	EarningBonus      EarningKind = "BONUS"
	EarningArrears    EarningKind = "ARREARS"
	EarningCommission EarningKind = "COMMISSION"
	EarningOther      EarningKind = "OTHER"
)

// EarningKinds are the kinds, in the order the API lists them.
var EarningKinds = []EarningKind{EarningBonus, EarningArrears, EarningCommission, EarningOther}

// The states of a one-time earning.
const (
	EarningPending  = "PENDING"
	EarningApproved = "APPROVED"
	EarningVoided   = "VOIDED"
	EarningReversed = "REVERSED"
)

// Bounds of a one-time earning's fields (the table checks them again).
const (
	// MaxEarningSantim bounds one earning: the amount any ledger entry may carry.
	MaxEarningSantim = money.MaxAmountSantim
	// MaxInputText bounds a description or reason, in bytes.
	MaxInputText = 500
	// MaxInputReference bounds a caller's reference, in bytes.
	MaxInputReference = 64
)

// Codes of the one-time earning refusals (besides CodeEmployeeNotFound, CodeSelfApproval,
// CodePeriodClosed and CodeEmployeeTerminated).
const (
	CodeEarningNotFound     = "PAYROLL_EARNING_NOT_FOUND"
	CodeEarningInvalidState = "PAYROLL_EARNING_INVALID_STATE"
	// CodePeriodOpen: a reverse of an earning whose period is still open (void it instead).
	CodePeriodOpen = "PAYROLL_PERIOD_OPEN"
	// CodeApprovalPermission: voiding an APPROVED earning needs payroll.approve as well.
	CodeApprovalPermission = "PERMISSION_DENIED"
)

// ErrEarningNotFound: no one-time earning with this id in the tenant.
var ErrEarningNotFound = NotFound(CodeEarningNotFound, "one-time earning")

// EarningMachine is the one-time earning's lifecycle (the period rules are checked besides).
var EarningMachine = &Machine{Noun: "one-time earning", Code: CodeEarningInvalidState, Moves: map[string]Move{
	"approved": {From: []string{EarningPending}, To: EarningApproved},
	"voided":   {From: []string{EarningPending, EarningApproved}, To: EarningVoided},
	"reversed": {From: []string{EarningApproved}, To: EarningReversed},
}}

// The audit actions and outbox event types of one-time earnings.
const (
	ActionCreateEarning  = "CreateOneTimeEarning"
	ActionApproveEarning = "ApproveOneTimeEarning"
	ActionVoidEarning    = "VoidOneTimeEarning"
	ActionReverseEarning = "ReverseOneTimeEarning"
	TargetEarning        = "OneTimeEarning"

	EventEarningCreated  = "payroll.one_time_earning_created.v1"
	EventEarningApproved = "payroll.one_time_earning_approved.v1"
	EventEarningVoided   = "payroll.one_time_earning_voided.v1"
	EventEarningReversed = "payroll.one_time_earning_reversed.v1"
)

// OneTimeEarning is a one-time earning as stored.
type OneTimeEarning struct {
	bun.BaseModel `bun:"table:app.payroll_one_time_earnings,alias:ote"`

	ID           string      `bun:"id,pk"`
	TenantID     string      `bun:"tenant_id"`
	EmployeeID   string      `bun:"employee_id"`
	Period       string      `bun:"period"`
	Kind         EarningKind `bun:"kind"`
	AmountSantim int64       `bun:"amount_santim"`
	Taxable      bool        `bun:"taxable"`
	Description  string      `bun:"description"`
	Reference    string      `bun:"reference,nullzero"`
	Status       string      `bun:"status"`
	CreatedBy    string      `bun:"created_by"`
	CreatedAt    time.Time   `bun:"created_at"`
	ApprovedBy   string      `bun:"approved_by,nullzero"`
	ApprovedAt   time.Time   `bun:"approved_at,nullzero"`
	VoidedBy     string      `bun:"voided_by,nullzero"`
	VoidedAt     time.Time   `bun:"voided_at,nullzero"`
	VoidReason   string      `bun:"void_reason,nullzero"`
	ReversedBy   string      `bun:"reversed_by,nullzero"`
	ReversedAt   time.Time   `bun:"reversed_at,nullzero"`
	// ReversalReason and ReversalPeriod are set on a REVERSED earning: why, and the period whose
	// calculation takes the amount back.
	ReversalReason string    `bun:"reversal_reason,nullzero"`
	ReversalPeriod string    `bun:"reversal_period,nullzero"`
	UpdatedAt      time.Time `bun:"updated_at"`
}

// NewOneTimeEarning is what CreateOneTimeEarning records.
type NewOneTimeEarning struct {
	EmployeeID   string
	Period       string
	Kind         EarningKind
	AmountSantim int64
	Taxable      bool
	Description  string // optional, at most MaxInputText bytes
	Reference    string // optional: the caller's reference (a bonus letter, a commission statement)
}

// Validate checks every field; its error is a *field.Error.
func (n NewOneTimeEarning) Validate() error {
	if err := field.Identifier("employeeId", n.EmployeeID, 0); err != nil {
		return err
	}
	if err := CheckPeriod("period", n.Period); err != nil {
		return err
	}
	if !slices.Contains(EarningKinds, n.Kind) {
		return &field.Error{Field: "kind", Problem: "must be one of BONUS, ARREARS, COMMISSION, OTHER"}
	}
	if n.AmountSantim < 1 || n.AmountSantim > MaxEarningSantim {
		return &field.Error{Field: "amountSantim", Problem: "must be a whole number of santim from 1 to 1000000000000"}
	}
	if err := field.Text("description", n.Description, MaxInputText); err != nil {
		return err
	}
	if n.Reference != "" {
		if err := field.Reference("reference", n.Reference, MaxInputReference); err != nil {
			return err
		}
	}
	return nil
}

// CheckReason checks a void or reversal reason: optional text (required when required is set,
// then not blank) of at most MaxInputText bytes.
func CheckReason(name, v string, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return &field.Error{Field: name, Problem: "is required"}
	}
	return field.Text(name, v, MaxInputText)
}

// earningEvent is the payload of every one-time earning event.
type earningEvent struct {
	ID             string      `json:"id"`
	EmployeeID     string      `json:"employeeId"`
	Period         string      `json:"period"`
	Kind           EarningKind `json:"kind"`
	AmountSantim   int64       `json:"amountSantim"`
	Taxable        bool        `json:"taxable"`
	Status         string      `json:"status"`
	ReversalPeriod string      `json:"reversalPeriod,omitempty"`
}

// recordEarning writes the audit row and the event of a change to e, in tx.
func recordEarning(ctx context.Context, tx db.BunTx, action, event string, e OneTimeEarning, details map[string]any) error {
	if details == nil {
		details = map[string]any{}
	}
	details["employeeId"], details["period"], details["status"] = e.EmployeeID, e.Period, e.Status
	return recordChange(ctx, tx, action, TargetEarning, e.ID, details, event, earningEvent{ID: e.ID, EmployeeID: e.EmployeeID,
		Period: e.Period, Kind: e.Kind, AmountSantim: e.AmountSantim, Taxable: e.Taxable, Status: e.Status,
		ReversalPeriod: e.ReversalPeriod})
}

// CreateOneTimeEarning records a PENDING earning created by the context's actor (audited
// CreateOneTimeEarning, event payroll.one_time_earning_created.v1). Errors: a *field.Error;
// ErrEmployeeNotFound; PAYROLL_EMPLOYEE_TERMINATED; PAYROLL_PERIOD_CLOSED (a period before
// now's).
func CreateOneTimeEarning(ctx context.Context, tx db.BunTx, n NewOneTimeEarning, now time.Time) (OneTimeEarning, error) {
	if err := n.Validate(); err != nil {
		return OneTimeEarning{}, err
	}
	if err := CheckPeriodOpen(ctx, tx, n.Period, now); err != nil {
		return OneTimeEarning{}, err
	}
	if err := PayableEmployee(ctx, tx, n.EmployeeID); err != nil {
		return OneTimeEarning{}, err
	}
	now = now.UTC()
	e := OneTimeEarning{ID: "ote_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), EmployeeID: n.EmployeeID, Period: n.Period,
		Kind: n.Kind, AmountSantim: n.AmountSantim, Taxable: n.Taxable, Description: n.Description, Reference: n.Reference,
		Status: EarningPending, CreatedBy: tenancy.Actor(ctx), CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(&e).Exec(ctx); err != nil {
		return OneTimeEarning{}, err
	}
	return e, recordEarning(ctx, tx, ActionCreateEarning, EventEarningCreated, e,
		map[string]any{"kind": e.Kind, "amountSantim": e.AmountSantim, "taxable": e.Taxable})
}

// GetOneTimeEarning reads one earning of the tenant (ErrEarningNotFound).
func GetOneTimeEarning(ctx context.Context, tx db.BunTx, id string) (OneTimeEarning, error) {
	return getEarning(ctx, tx, id, false)
}

func getEarning(ctx context.Context, tx db.BunTx, id string, lock bool) (OneTimeEarning, error) {
	return getByID[OneTimeEarning](ctx, tx, "ote", id, lock, ErrEarningNotFound)
}

// EarningFilter narrows ListOneTimeEarnings; zero fields do not filter.
type EarningFilter struct {
	Status, EmployeeID, Period string
	// After is the previous page's last id; Limit the page size (rows read: Limit, so a caller
	// that wants to know whether another page follows asks for one more).
	After string
	Limit int
}

// ListOneTimeEarnings lists the tenant's earnings by id (oldest first).
func ListOneTimeEarnings(ctx context.Context, tx db.BunTx, f EarningFilter) ([]OneTimeEarning, error) {
	out := []OneTimeEarning{}
	q := tx.NewSelect().Model(&out).Where("ote.tenant_id = ?", tenancy.TenantID(ctx))
	eq := map[string]string{"status": f.Status, "employee_id": f.EmployeeID, "period": f.Period}
	return out, listPage(ctx, q, "ote", eq, f.After, int64(f.Limit))
}

// ApproveOneTimeEarning approves a PENDING earning (audited ApproveOneTimeEarning, event
// payroll.one_time_earning_approved.v1). Errors: ErrEarningNotFound; PAYROLL_EARNING_INVALID_STATE
// (409); PAYROLL_SELF_APPROVAL (403: the actor created it); PAYROLL_PERIOD_CLOSED (409);
// PAYROLL_EMPLOYEE_TERMINATED (422).
func ApproveOneTimeEarning(ctx context.Context, tx db.BunTx, id string, now time.Time) (OneTimeEarning, error) {
	e, err := getEarning(ctx, tx, id, true)
	if err != nil {
		return e, err
	}
	to, err := approvalOf(ctx, tx, EarningMachine, e.Status, e.CreatedBy, e.Period, e.EmployeeID, now)
	if err != nil {
		return e, err
	}
	e.Status, e.ApprovedBy, e.ApprovedAt, e.UpdatedAt = to, tenancy.Actor(ctx), now.UTC(), now.UTC()
	if err := updateEarning(ctx, tx, &e, "status", "approved_by", "approved_at", "updated_at"); err != nil {
		return e, err
	}
	return e, recordEarning(ctx, tx, ActionApproveEarning, EventEarningApproved, e, nil)
}

// VoidOneTimeEarning voids a PENDING earning, or an APPROVED one whose period is still open (audited
// VoidOneTimeEarning, event payroll.one_time_earning_voided.v1); reason is optional. An APPROVED
// one needs mayUndoApproval (the caller holds payroll.approve). Errors: ErrEarningNotFound;
// a *field.Error (reason); PAYROLL_EARNING_INVALID_STATE (409); PERMISSION_DENIED (403);
// PAYROLL_PERIOD_CLOSED (409: it has been paid; reverse it).
func VoidOneTimeEarning(ctx context.Context, tx db.BunTx, id, reason string, mayUndoApproval bool, now time.Time) (OneTimeEarning, error) {
	if err := CheckReason("reason", reason, false); err != nil {
		return OneTimeEarning{}, err
	}
	e, err := getEarning(ctx, tx, id, true)
	if err != nil {
		return e, err
	}
	to, err := EarningMachine.Next("voided", e.Status)
	if err != nil {
		return e, err
	}
	if e.Status == EarningApproved && !mayUndoApproval {
		return e, &Refusal{Code: CodeApprovalPermission, Status: http.StatusForbidden,
			Message: "voiding an approved one-time earning undoes its approval: it needs payroll.approve"}
	}
	if current := PeriodOf(now); e.Status == EarningApproved && e.Period < current {
		return e, &Refusal{Code: CodePeriodClosed, Status: http.StatusConflict,
			Message: "period " + e.Period + " has closed, so the earning has been paid: reverse it instead",
			Details: map[string]any{"period": e.Period, "currentPeriod": current}}
	}
	if e.Status == EarningApproved {
		// Its period's run has fixed its figures (approved) or is locked: the earning is in them.
		if err := CheckPeriodOpen(ctx, tx, e.Period, now); err != nil {
			return e, err
		}
	}
	e.Status, e.VoidedBy, e.VoidedAt, e.VoidReason, e.UpdatedAt = to, tenancy.Actor(ctx), now.UTC(), reason, now.UTC()
	if err := updateEarning(ctx, tx, &e, "status", "voided_by", "voided_at", "void_reason", "updated_at"); err != nil {
		return e, err
	}
	return e, recordEarning(ctx, tx, ActionVoidEarning, EventEarningVoided, e, nil)
}

// ReverseOneTimeEarning reverses an APPROVED earning whose period has closed (it was paid): the
// amount is taken back in the current period, its reversal period (audited
// ReverseOneTimeEarning, event payroll.one_time_earning_reversed.v1); the earning stays paid in
// its own period. reason is required. Errors: ErrEarningNotFound; a *field.Error (reason);
// PAYROLL_EARNING_INVALID_STATE (409); PAYROLL_PERIOD_OPEN (409: nothing was paid yet; void it);
// PAYROLL_PERIOD_CLOSED (409: the current period's run has fixed its figures or is locked, so
// the reversal would never be deducted).
func ReverseOneTimeEarning(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (OneTimeEarning, error) {
	if err := CheckReason("reason", reason, true); err != nil {
		return OneTimeEarning{}, err
	}
	e, err := getEarning(ctx, tx, id, true)
	if err != nil {
		return e, err
	}
	to, err := EarningMachine.Next("reversed", e.Status)
	if err != nil {
		return e, err
	}
	current := PeriodOf(now)
	if e.Period >= current {
		return e, &Refusal{Code: CodePeriodOpen, Status: http.StatusConflict,
			Message: "period " + e.Period + " is still open, so nothing has been paid: void the earning instead",
			Details: map[string]any{"period": e.Period, "currentPeriod": current}}
	}
	// The reversal period's run must still be able to deduct it (as ReverseAdjustment).
	if err := CheckRunOpen(ctx, tx, current, now); err != nil {
		return e, err
	}
	e.Status, e.ReversedBy, e.ReversedAt, e.ReversalReason, e.ReversalPeriod, e.UpdatedAt =
		to, tenancy.Actor(ctx), now.UTC(), reason, current, now.UTC()
	if err := updateEarning(ctx, tx, &e, "status", "reversed_by", "reversed_at", "reversal_reason", "reversal_period", "updated_at"); err != nil {
		return e, err
	}
	return e, recordEarning(ctx, tx, ActionReverseEarning, EventEarningReversed, e, map[string]any{"reversalPeriod": current})
}

func updateEarning(ctx context.Context, tx db.BunTx, e *OneTimeEarning, columns ...string) error {
	return updateRow(ctx, tx, e, "ote", e.TenantID, columns...)
}

// ApprovedOneTimeEarningsForPeriod is every APPROVED earning of the period, of every employee of
// the tenant, in one query, keyed by employee id (each list by id). An employee with none has no
// key. A period's calculation pays these and the period's REVERSED earnings, whose reversal is
// taken back in a later period (loadOneTimeEarnings).
func ApprovedOneTimeEarningsForPeriod(ctx context.Context, tx db.BunTx, period string) (map[string][]OneTimeEarning, error) {
	return inputsByEmployee[OneTimeEarning](ctx, tx, "ote", "period", period, EarningApproved, "")
}

// ApprovedOneTimeEarningsOf is ApprovedOneTimeEarningsForPeriod for one employee.
func ApprovedOneTimeEarningsOf(ctx context.Context, tx db.BunTx, employeeID, period string) ([]OneTimeEarning, error) {
	return employeeInputsOf[OneTimeEarning](ctx, tx, "ote", "period", period, EarningApproved, employeeID)
}

// ReversedOneTimeEarningsForPeriod is what a period's calculation takes back: every earning
// REVERSED into the period (ReversalPeriod = period), of every employee, keyed by employee id.
// Each is a deduction of AmountSantim in that period, pre-tax when Taxable (it corrects taxable
// pay already taxed).
func ReversedOneTimeEarningsForPeriod(ctx context.Context, tx db.BunTx, period string) (map[string][]OneTimeEarning, error) {
	return inputsByEmployee[OneTimeEarning](ctx, tx, "ote", "reversal_period", period, EarningReversed, "")
}

// ReversedOneTimeEarningsOf is ReversedOneTimeEarningsForPeriod for one employee.
func ReversedOneTimeEarningsOf(ctx context.Context, tx db.BunTx, employeeID, period string) ([]OneTimeEarning, error) {
	return employeeInputsOf[OneTimeEarning](ctx, tx, "ote", "reversal_period", period, EarningReversed, employeeID)
}

// employee is the employee the earning pays (employeeInput).
func (e OneTimeEarning) employee() string { return e.EmployeeID }
