package employeetransfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Kind is a kind of obligation an employee can have towards (or through) their employer.
type Kind string

// The obligation kinds (doc.go has the table of what counts and what each allows).
const (
	EwaAdvance       Kind = "EWA_ADVANCE"
	Loan             Kind = "LOAN"
	DeductionMandate Kind = "DEDUCTION_MANDATE"
	BnplAgreement    Kind = "BNPL_AGREEMENT"
	EqubMembership   Kind = "EQUB_MEMBERSHIP"
	// Kinds that only ever appear in flight (a money move under way).
	SavingsMovement  Kind = "SAVINGS_MOVEMENT"
	EqubContribution Kind = "EQUB_CONTRIBUTION"
	EqubPayout       Kind = "EQUB_PAYOUT"
	// SavingsGoal is a goal that holds money. Obligations does not list it: the money is the
	// saver's, who reaches it as long as their record exists (a terminated or transferred
	// saver withdraws it); only deleting the record, which ends that, is refused over it.
	SavingsGoal Kind = "SAVINGS_GOAL"
)

// Handling is what the caller states happens to the obligations of one kind.
type Handling string

// The handlings.
const (
	// RetainWithSource leaves the obligation on the old record in the source business.
	RetainWithSource Handling = "RETAIN_WITH_SOURCE"
	// CarryOver cancels a mandate in the source and re-creates what is left of it, PENDING, for
	// the new record in the target.
	CarryOver Handling = "CARRY_OVER"
	// Cancel cancels a mandate in the source for good (never a court order).
	Cancel Handling = "CANCEL"
)

// Problems of a blocking obligation.
const (
	// ProblemInFlight: a money move of it is under way; no handling can be stated.
	ProblemInFlight = "IN_FLIGHT"
	// ProblemUnhandled: the plan states no handling for its kind.
	ProblemUnhandled = "UNHANDLED"
	// ProblemNotAllowed: the plan's handling for its kind is not allowed for it.
	ProblemNotAllowed = "HANDLING_NOT_ALLOWED"
)

// Allowed lists, per kind, the handlings a plan may state (the openapi enums say the same).
var Allowed = map[Kind][]Handling{
	EwaAdvance:       {RetainWithSource},
	Loan:             {RetainWithSource},
	DeductionMandate: {CarryOver, Cancel},
	BnplAgreement:    {RetainWithSource},
	EqubMembership:   {RetainWithSource},
}

// Plan is the caller's handling per kind ("" states none: an obligation of that kind blocks).
type Plan map[Kind]Handling

// Check reports a handling that no obligation of its kind could take (the caller's 400).
func (p Plan) Check() error {
	for k, h := range p {
		allowed, ok := Allowed[k]
		if !ok {
			return fmt.Errorf("%w: %s is no obligation kind a plan can name", ErrInvalidPlan, k)
		}
		if h != "" && !slices.Contains(allowed, h) {
			return fmt.Errorf("%w: %s cannot be %s", ErrInvalidPlan, k, h)
		}
	}
	return nil
}

// Obligation is one thing the employee owes (or is part of), and what the transfer did with it
// or why it blocks.
type Obligation struct {
	Kind   Kind   `json:"kind"`
	ID     string `json:"id"`
	Status string `json:"status"`
	// MandateKind is a deduction mandate's kind (COURT_ORDER, LOAN_INSTALLMENT, …).
	MandateKind string   `json:"mandateKind,omitempty"`
	Handling    Handling `json:"handling,omitempty"`
	// CarriedOverTo is the mandate created in the target for a carried-over one.
	CarriedOverTo string `json:"carriedOverTo,omitempty"`
	// Note says why a carried-over mandate had nothing left to carry (it was cancelled only).
	Note string `json:"note,omitempty"`
	// Problem is set on a blocking obligation (ProblemInFlight, ProblemUnhandled, ProblemNotAllowed).
	Problem string `json:"problem,omitempty"`
}

// Errors of Transfer.
var (
	// ErrInvalidPlan: a handling no obligation of its kind could take.
	ErrInvalidPlan = errors.New("employeetransfer: invalid plan")
	// ErrSameBusiness: the target is the source.
	ErrSameBusiness = errors.New("employeetransfer: the target business is the employee's own")
	// ErrNotTransferable: the record is TERMINATED (transferred already, or the employment ended).
	ErrNotTransferable = errors.New("employeetransfer: the employee's employment has ended")
	// ErrBeforeHire: the effective date is before the employee's hire date.
	ErrBeforeHire = errors.New("employeetransfer: the effective date is before the employee's hire date")
	// ErrTooLate: the effective date is in a later month than the transfer's. The mandates move at
	// once, so the source's runs of the months until then would withhold nothing under them.
	ErrTooLate = errors.New("employeetransfer: the effective date is in a later month than today")
)

// PaidThrough is Transfer's refusal of an effective date before Day, the last day the source's
// payroll has fixed pay for (payroll.PaidThrough): the next employer's run would pay the days
// after the effective date a second time. Nothing was written.
type PaidThrough struct{ Day time.Time }

func (p *PaidThrough) Error() string {
	return "employeetransfer: the source's payroll pays the employee through " + p.Day.Format(time.DateOnly)
}

// Blocked is Transfer's refusal when obligations block it: every blocking one, in kind and id
// order. Nothing was written.
type Blocked struct{ Obligations []Obligation }

func (b *Blocked) Error() string {
	return fmt.Sprintf("employeetransfer: %d obligation(s) block the transfer", len(b.Obligations))
}

// Request is one transfer.
type Request struct {
	SourceTenant, EmployeeID, TargetTenant string
	// EffectiveDate is the last day with the source and the first with the target.
	EffectiveDate time.Time
	// GrossMonthlySalarySantim is the new salary (nil: the old one).
	GrossMonthlySalarySantim *int64
	Reason                   string
	Plan                     Plan
	Now                      time.Time
}

// Result is a transfer done.
type Result struct {
	ID             string
	Source, Target employees.Employee
	EffectiveDate  time.Time
	Obligations    []Obligation
}

// Audit actions, target type and event of a transfer.
const (
	ActionTransferOut = "TransferEmployeeOut"
	ActionTransferIn  = "TransferEmployeeIn"
	TargetTransfer    = "EmployeeTransfer"
	EventTransferred  = "employee.transferred.v1"
)

// Transfer runs r in tx, a transaction of the platform role on the cross-tenant path
// (crosstenant.BunTx); ctx carries the actor. Every statement names its tenant. Errors:
// employees.ErrNotFound (no such employee in the source), ErrSameBusiness, ErrInvalidPlan,
// ErrNotTransferable, ErrBeforeHire, ErrTooLate, *PaidThrough, *Blocked, employees.ErrDuplicateNationalID or
// ErrDuplicateTIN (the target already employs that person), employees.ErrInvalid; the caller
// rolls back on any of them.
func Transfer(ctx context.Context, tx db.BunTx, r Request) (Result, error) {
	if r.TargetTenant == r.SourceTenant {
		return Result{}, ErrSameBusiness
	}
	if err := r.Plan.Check(); err != nil {
		return Result{}, err
	}
	src := tenancy.WithTenant(ctx, r.SourceTenant)
	dst := tenancy.WithTenant(ctx, r.TargetTenant)

	old, err := employees.Lock(src, tx, r.SourceTenant, r.EmployeeID)
	if err != nil {
		return Result{}, err
	}
	if old.Status == employees.Terminated {
		return Result{}, ErrNotTransferable
	}
	day := dateOf(r.EffectiveDate)
	if day.IsZero() {
		day = dateOf(r.Now)
	}
	if err := employees.ValidHireDate("effectiveDate", day); err != nil {
		return Result{}, err
	}
	if day.Before(dateOf(old.HireDate)) {
		return Result{}, ErrBeforeHire
	}
	if day.Format("2006-01") > dateOf(r.Now).Format("2006-01") {
		return Result{}, ErrTooLate
	}
	paid, err := payroll.PaidThrough(src, tx, r.SourceTenant, r.EmployeeID)
	if err != nil {
		return Result{}, err
	}
	if day.Before(paid) {
		return Result{}, &PaidThrough{Day: paid}
	}

	found, err := Obligations(src, tx, r.SourceTenant, r.EmployeeID)
	if err != nil {
		return Result{}, err
	}
	if blocking := decide(found, r.Plan); len(blocking) > 0 {
		return Result{}, &Blocked{Obligations: blocking}
	}

	id := "etr_" + identity.NewID()
	// The new record first: a duplicate national id or TIN in the target refuses before anything
	// in the source changes (the transaction would roll it back anyway).
	// The day is the last with the source (its termination date, a day worked there); the
	// target's employment starts the next day, so the two payrolls never pay one day twice.
	hire := day.AddDate(0, 0, 1)
	next := old
	next.HireDate, next.TerminationDate, next.Status = hire, time.Time{}, employees.Active
	next.Department, next.Position, next.EmploymentType, next.PaymentFrequency = "", "", "", ""
	if r.GrossMonthlySalarySantim != nil {
		next.GrossMonthlySalarySantim = *r.GrossMonthlySalarySantim
	}
	created, err := employees.Create(dst, tx, r.TargetTenant, next)
	if err != nil {
		return Result{}, err
	}
	closed, err := employees.Update(src, tx, r.SourceTenant, old.ID, func(e *employees.Employee) error {
		e.Status, e.TerminationDate = employees.Terminated, day
		return nil
	})
	if err != nil {
		return Result{}, err
	}

	for i := range found {
		if found[i].Kind == DeductionMandate {
			if err := moveMandate(src, dst, tx, &found[i], created.ID, id, r.TargetTenant, hire, r.Now); err != nil {
				return Result{}, err
			}
		}
	}

	res := Result{ID: id, Source: closed, Target: created, EffectiveDate: day, Obligations: found}
	if err := record(src, tx, res, "OUT", closed.ID, r.TargetTenant, created.ID, r.Reason, r.Now); err != nil {
		return Result{}, err
	}
	if err := record(dst, tx, res, "IN", created.ID, r.SourceTenant, closed.ID, r.Reason, r.Now); err != nil {
		return Result{}, err
	}
	return res, nil
}

// decide sets each obligation's handling from plan and returns the blocking ones.
func decide(found []Obligation, plan Plan) []Obligation {
	var blocking []Obligation
	for i := range found {
		o := &found[i]
		if o.Problem == ProblemInFlight {
			blocking = append(blocking, *o)
			continue
		}
		h := plan[o.Kind]
		switch {
		case h == "":
			o.Problem = ProblemUnhandled
		case !slices.Contains(Allowed[o.Kind], h) || o.MandateKind == payroll.KindCourtOrder && h == Cancel ||
			payroll.ProductKind(o.MandateKind) && h == CarryOver:
			// A court order binds the person; a product mandate (savings auto-save, BNPL, equb)
			// names an object of the source business, which the target cannot collect for.
			o.Problem = ProblemNotAllowed
		default:
			o.Handling = h
			continue
		}
		blocking = append(blocking, *o)
	}
	return blocking
}

// Obligations lists tenant's employee's obligations, in kind and id order; those in flight carry
// ProblemInFlight. A deduction mandate is in flight while a payroll run that has not ended may
// still take it (payroll.MandateInOpenRun): its completion adds what the run withheld to the
// mandate, so what is left of it is not known before. ctx is scoped to tenant; tx is the
// caller's transaction (pgx or bun), in which the employee's row should be locked.
func Obligations(ctx context.Context, tx db.Writer, tenant, employee string) ([]Obligation, error) {
	rows, err := db.Select[struct {
		Kind     Kind   `bun:"kind" db:"kind"`
		ID       string `bun:"id" db:"id"`
		Status   string `bun:"status" db:"status"`
		Detail   string `bun:"detail" db:"detail"`
		InFlight bool   `bun:"in_flight" db:"in_flight"`
	}](ctx, tx, `SELECT kind, id, status, detail, in_flight FROM (
		SELECT 'EWA_ADVANCE' AS kind, id, status, '' AS detail, status <> 'DISBURSED' AS in_flight
			FROM app.ewa_requests WHERE tenant_id = ?0 AND employee_id = ?1 AND status IN ('REQUESTED', 'DISBURSING', 'DISBURSED')
		UNION ALL
		SELECT 'LOAN', id, status, '', status NOT IN ('ACTIVE', 'DEFAULTED')
			FROM app.loans WHERE tenant_id = ?0 AND borrower_id = ?1 AND status IN ('REQUESTED', 'APPROVED', 'DISBURSING', 'ACTIVE', 'DEFAULTED')
		UNION ALL
		SELECT 'DEDUCTION_MANDATE', id, status, kind, false
			FROM app.payroll_deduction_mandates WHERE tenant_id = ?0 AND employee_id = ?1 AND status IN ('PENDING', 'ACTIVE', 'SUSPENDED')
		UNION ALL
		SELECT 'BNPL_AGREEMENT', id, status, '', status = 'ACCEPTED'
			FROM app.bnpl_agreements WHERE tenant_id = ?0 AND employee_id = ?1 AND status IN ('ACCEPTED', 'ACTIVE', 'DEFAULTED')
		UNION ALL
		SELECT 'EQUB_MEMBERSHIP', m.id, m.status, '', false
			FROM app.equb_memberships m JOIN app.equb_groups g ON g.tenant_id = m.tenant_id AND g.id = m.group_id
			WHERE m.tenant_id = ?0 AND m.employee_id = ?1 AND m.status = 'ACTIVE' AND g.status IN ('FORMING', 'RUNNING')
		UNION ALL
		SELECT 'SAVINGS_MOVEMENT', sm.id, sm.status, '', true
			FROM app.savings_movements sm JOIN app.savings_goals g ON g.tenant_id = sm.tenant_id AND g.id = sm.goal_id
			WHERE sm.tenant_id = ?0 AND g.employee_id = ?1 AND sm.status = 'PENDING'
		UNION ALL
		SELECT 'EQUB_CONTRIBUTION', c.id, c.status, '', true
			FROM app.equb_contributions c JOIN app.equb_memberships m ON m.tenant_id = c.tenant_id AND m.id = c.membership_id
			WHERE c.tenant_id = ?0 AND m.employee_id = ?1 AND c.status = 'PENDING'
		UNION ALL
		SELECT 'EQUB_PAYOUT', p.id, p.status, '', true
			FROM app.equb_payouts p JOIN app.equb_memberships m ON m.tenant_id = p.tenant_id AND m.id = p.membership_id
			WHERE p.tenant_id = ?0 AND m.employee_id = ?1 AND p.status = 'PENDING'
		) o ORDER BY kind, id`, tenant, employee)
	if err != nil {
		return nil, fmt.Errorf("employeetransfer.obligations: %w", err)
	}
	out := make([]Obligation, 0, len(rows))
	for _, r := range rows {
		o := Obligation{Kind: r.Kind, ID: r.ID, Status: r.Status, MandateKind: r.Detail}
		inFlight := r.InFlight
		if o.Kind == DeductionMandate {
			if inFlight, err = payroll.MandateInOpenRun(ctx, tx, employee, o.ID); err != nil {
				return nil, err
			}
		}
		if inFlight {
			o.Problem = ProblemInFlight
		}
		out = append(out, o)
	}
	return out, nil
}

// InFlight is the obligations of found with money moving (ProblemInFlight).
func InFlight(found []Obligation) []Obligation {
	var out []Obligation
	for _, o := range found {
		if o.Problem == ProblemInFlight {
			out = append(out, o)
		}
	}
	return out
}

// moveMandate cancels the source mandate o and, for CarryOver, re-creates what is left of it
// PENDING for the new record (payroll writes both audit rows and events, each in its tenant).
// What is left (total − taken) includes what the source's runs carried forward of it and did not
// take: the source's runs no longer take the carry of a cancelled mandate (payroll's
// loadCarriedForward), so it is collected once, by the target.
func moveMandate(src, dst context.Context, tx db.BunTx, o *Obligation, newEmployee, transfer, target string, hired, now time.Time) error {
	m, err := payroll.GetMandate(src, tx, o.ID)
	if err != nil {
		return err
	}
	var next *payroll.NewMandate
	if o.Handling == CarryOver {
		start := max(m.StartPeriod, hired.Format("2006-01"))
		left := m.RemainingSantim()
		switch {
		case m.EndPeriod != nil && *m.EndPeriod < start:
			o.Note = "its end period is before the transfer: nothing left to carry over"
		case left != nil && *left < 1:
			o.Note = "its total has been taken: nothing left to carry over"
		default:
			next = &payroll.NewMandate{EmployeeID: newEmployee, Kind: m.Kind, AmountSantim: m.AmountSantim, BasisPoints: m.BasisPoints,
				TotalSantim: left, StartPeriod: start, Priority: m.Priority, Description: m.Description}
			if m.EndPeriod != nil {
				next.EndPeriod = *m.EndPeriod
			}
			if m.Reference != nil {
				next.Reference = *m.Reference
			}
			if m.PayeePartner != nil && m.PayeeAccountNumber != nil && m.PayeeHolderName != nil {
				next.Payee = &payroll.Payee{Partner: *m.PayeePartner, AccountNumber: *m.PayeeAccountNumber, HolderName: *m.PayeeHolderName}
			}
		}
	}
	if _, err := payroll.CancelMandate(src, tx, m.ID, "employee transferred to business "+target+" ("+transfer+")", now); err != nil {
		return err
	}
	if next == nil {
		return nil
	}
	created, err := payroll.CreateMandate(dst, tx, *next, now)
	if err != nil {
		return err
	}
	o.CarriedOverTo = created.ID
	return nil
}

// record writes one side's transfer row, its audit row and its event, in ctx's tenant.
func record(ctx context.Context, tx db.BunTx, r Result, side, employee, counterpartTenant, counterpartEmployee, reason string, now time.Time) error {
	obligations := r.Obligations
	var why *string
	if reason != "" {
		why = &reason
	}
	raw, err := jsonOf(obligations)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO app.employee_transfers (id, tenant_id, side, employee_id, counterpart_tenant_id,
			counterpart_employee_id, effective_date, reason, obligations, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		r.ID, tenancy.TenantID(ctx), side, employee, counterpartTenant, counterpartEmployee, r.EffectiveDate, why, raw,
		tenancy.Actor(ctx), now); err != nil {
		return fmt.Errorf("employeetransfer.record: %w", err)
	}
	action := ActionTransferOut
	if side == "IN" {
		action = ActionTransferIn
	}
	payload := map[string]any{"transferId": r.ID, "side": side, "employeeId": employee, "counterpartBusinessId": counterpartTenant,
		"counterpartEmployeeId": counterpartEmployee, "effectiveDate": r.EffectiveDate.Format("2006-01-02"), "obligations": obligations}
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: TargetTransfer, TargetID: r.ID,
		Details: payload}); err != nil {
		return err
	}
	_, err = outbox.Write(ctx, tx, EventTransferred, payload)
	return err
}

func dateOf(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func jsonOf(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("employeetransfer.record: %w", err)
	}
	return raw, nil
}
