package payroll

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A deduction mandate is a standing instruction to deduct from one employee's pay every period
// from StartPeriod to EndPeriod (none: until cancelled or taken in full): a court order (with the
// court's reference and the payee account the employer remits to), a loan instalment (with the
// loan's reference), union dues, cost sharing, or another deduction. It takes a fixed amount per
// period (AmountSantim) or a share of the entry's gross pay (BasisPoints), exactly one of them;
// TotalSantim, when set, is the whole owed, and nothing beyond it is ever taken (TakenSantim is
// what the runs have taken so far; RemainingSantim = total − taken).
//
// Lifecycle: PENDING → ACTIVE (activate: payroll.approve, another user than the creator) ⇄
// SUSPENDED (suspend / resume: payroll.edit; a suspended mandate takes nothing) → CANCELLED
// (cancel: payroll.edit, from PENDING, ACTIVE or SUSPENDED). Only an ACTIVE mandate's
// carried-forward amount is taken (loadCarriedForward): a suspended or cancelled one takes
// nothing, what an earlier period carried of it included. COMPLETED is the runs' (taken in
// full); no route moves a mandate there. A mandate is never edited: cancel it and create another.
// Resuming needs no second approval: it restores what was approved.

// Mandate states and kinds.
const (
	MandatePending   = "PENDING"
	MandateActive    = "ACTIVE"
	MandateSuspended = "SUSPENDED"
	MandateCancelled = "CANCELLED"
	MandateCompleted = "COMPLETED"

	KindCourtOrder      = "COURT_ORDER"
	KindLoanInstallment = "LOAN_INSTALLMENT"
	KindUnionDues       = "UNION_DUES"
	KindCostSharing     = "COST_SHARING"
	KindOther           = "OTHER"
	// The product kinds (product_mandate.go): created by a product's opt-in route only.
	KindEqubContribution = "EQUB_CONTRIBUTION"
	KindBnplInstallment  = "BNPL_INSTALLMENT"
	KindSavingsAutosave  = "SAVINGS_AUTOSAVE"
)

// Mandate bounds: a fixed amount and a total are at most money.MaxAmountSantim; a share of gross
// is 1 to 10,000 basis points; a priority orders mandates of one kind, lower first.
const (
	MaxMandateSantim   = money.MaxAmountSantim
	MaxBasisPoints     = 10_000
	MaxMandatePriority = 10_000
)

// LiveMandateStatuses are the states of a live mandate: one that deducts, or may once activated
// or resumed (the states cancel moves from).
var LiveMandateStatuses = []string{MandatePending, MandateActive, MandateSuspended}

// MandateKinds are the kinds in the calculator's order among the mandates.
var MandateKinds = []string{KindCourtOrder, KindLoanInstallment, KindUnionDues, KindCostSharing, KindOther,
	KindEqubContribution, KindBnplInstallment, KindSavingsAutosave}

// PayrollMandateKinds are the kinds the payroll's own mandate route creates (the product kinds
// are their products' opt-in routes').
var PayrollMandateKinds = MandateKinds[:5]

// MandateMachine is the mandate lifecycle.
var MandateMachine = &Machine{Noun: "deduction mandate", Code: "PAYROLL_MANDATE_INVALID_STATE", Moves: map[string]Move{
	"activated": {From: []string{MandatePending}, To: MandateActive},
	"suspended": {From: []string{MandateActive}, To: MandateSuspended},
	"resumed":   {From: []string{MandateSuspended}, To: MandateActive},
	"cancelled": {From: LiveMandateStatuses, To: MandateCancelled},
}}

// mandateIDPrefix begins every mandate id, the reference of its deduction lines and carries.
const mandateIDPrefix = "mdt_"

// ErrMandateNotFound: no such mandate in the tenant (another tenant's included).
var ErrMandateNotFound = NotFound("PAYROLL_MANDATE_NOT_FOUND", "deduction mandate")

// Mandate is one stored mandate.
type Mandate struct {
	bun.BaseModel `bun:"table:app.payroll_deduction_mandates,alias:md"`

	ID                 string     `bun:"id,pk"`
	TenantID           string     `bun:"tenant_id"`
	EmployeeID         string     `bun:"employee_id"`
	Kind               string     `bun:"kind"`
	AmountSantim       *int64     `bun:"amount_santim"`
	BasisPoints        *int64     `bun:"basis_points"`
	TotalSantim        *int64     `bun:"total_santim"`
	TakenSantim        int64      `bun:"taken_santim"`
	StartPeriod        string     `bun:"start_period"`
	EndPeriod          *string    `bun:"end_period"`
	Priority           int64      `bun:"priority"`
	Reference          *string    `bun:"reference"`
	PayeePartner       *string    `bun:"payee_partner"`
	PayeeAccountNumber *string    `bun:"payee_account_number"`
	PayeeHolderName    *string    `bun:"payee_holder_name"`
	Description        string     `bun:"description"`
	Status             string     `bun:"status"`
	CreatedBy          string     `bun:"created_by"`
	CreatedAt          time.Time  `bun:"created_at"`
	ActivatedBy        *string    `bun:"activated_by"`
	ActivatedAt        *time.Time `bun:"activated_at"`
	SuspendedBy        *string    `bun:"suspended_by"`
	SuspendedAt        *time.Time `bun:"suspended_at"`
	CancelledBy        *string    `bun:"cancelled_by"`
	CancelledAt        *time.Time `bun:"cancelled_at"`
	StatusReason       *string    `bun:"status_reason"`
	CompletedAt        *time.Time `bun:"completed_at"`
	UpdatedAt          time.Time  `bun:"updated_at"`
}

// RemainingSantim is what is still owed (nil: no total).
func (m Mandate) RemainingSantim() *int64 {
	if m.TotalSantim == nil {
		return nil
	}
	r := *m.TotalSantim - m.TakenSantim
	return &r
}

// Payee is the account a court order's deductions are remitted to.
type Payee struct {
	Partner, AccountNumber, HolderName string
}

// NewMandate is what a caller records.
type NewMandate struct {
	EmployeeID   string
	Kind         string
	AmountSantim *int64 // exactly one of AmountSantim and BasisPoints
	BasisPoints  *int64
	TotalSantim  *int64
	StartPeriod  string
	EndPeriod    string // "" open-ended
	Priority     int64
	Reference    string // the court's reference (COURT_ORDER), the loan's (LOAN_INSTALLMENT); else optional
	Payee        *Payee // required for COURT_ORDER, optional otherwise
	Description  string
}

// Check validates the input (field errors: the caller's 400).
func (m NewMandate) Check() error {
	return m.check(false)
}

// check is Check; product lets the product kinds through (CreateProductMandate).
func (m NewMandate) check(product bool) error {
	if err := field.Identifier("employeeId", m.EmployeeID, 0); err != nil {
		return err
	}
	known := false
	for _, k := range PayrollMandateKinds {
		known = known || k == m.Kind
	}
	if !known && !(product && ProductKind(m.Kind)) {
		return &field.Error{Field: "kind", Problem: "must be COURT_ORDER, LOAN_INSTALLMENT, UNION_DUES, COST_SHARING or OTHER"}
	}
	switch {
	case (m.AmountSantim == nil) == (m.BasisPoints == nil):
		return &field.Error{Field: "amountSantim", Problem: "exactly one of amountSantim and basisPoints is required"}
	case m.AmountSantim != nil && (*m.AmountSantim < 1 || *m.AmountSantim > MaxMandateSantim):
		return &field.Error{Field: "amountSantim", Problem: "must be from 1 to 1000000000000"}
	case m.BasisPoints != nil && (*m.BasisPoints < 1 || *m.BasisPoints > MaxBasisPoints):
		return &field.Error{Field: "basisPoints", Problem: "must be from 1 to 10000"}
	case m.TotalSantim != nil && (*m.TotalSantim < 1 || *m.TotalSantim > MaxMandateSantim):
		return &field.Error{Field: "totalSantim", Problem: "must be from 1 to 1000000000000"}
	case m.Priority < 0 || m.Priority > MaxMandatePriority:
		return &field.Error{Field: "priority", Problem: "must be from 0 to 10000"}
	}
	if err := CheckPeriod("startPeriod", m.StartPeriod); err != nil {
		return err
	}
	if m.EndPeriod != "" {
		if err := CheckPeriod("endPeriod", m.EndPeriod); err != nil {
			return err
		}
		if m.EndPeriod < m.StartPeriod {
			return &field.Error{Field: "endPeriod", Problem: "must not be before startPeriod"}
		}
	}
	if m.Reference != "" {
		if err := checkLabel("reference", m.Reference); err != nil {
			return err
		}
	} else if m.Kind == KindCourtOrder || m.Kind == KindLoanInstallment || ProductKind(m.Kind) {
		return &field.Error{Field: "reference", Problem: "is required for " + m.Kind + " (the court's or the loan's reference)"}
	}
	if m.Payee != nil {
		if err := field.Identifier("payee.partner", m.Payee.Partner, employees.MaxPartner); err != nil {
			return err
		}
		if err := field.Identifier("payee.accountNumber", m.Payee.AccountNumber, employees.MaxAccountNumber); err != nil {
			return err
		}
		if err := field.Name("payee.holderName", m.Payee.HolderName); err != nil {
			return err
		}
	} else if m.Kind == KindCourtOrder {
		return &field.Error{Field: "payee", Problem: "is required for COURT_ORDER (the account the deductions are remitted to)"}
	}
	return field.Text("description", m.Description, MaxDescription)
}

// CreateMandate records a PENDING mandate for an employee of the tenant who is not TERMINATED
// (audited CreateDeductionMandate, event payroll.deduction_mandate_created.v1). Errors: field
// errors, ErrEmployeeNotFound, PAYROLL_EMPLOYEE_TERMINATED (422).
func CreateMandate(ctx context.Context, tx db.BunTx, in NewMandate, now time.Time) (Mandate, error) {
	if err := in.Check(); err != nil {
		return Mandate{}, err
	}
	return createMandate(ctx, tx, in, now)
}

func createMandate(ctx context.Context, tx db.BunTx, in NewMandate, now time.Time) (Mandate, error) {
	if err := PayableEmployee(ctx, tx, in.EmployeeID); err != nil {
		return Mandate{}, err
	}
	m := Mandate{ID: mandateIDPrefix + identity.NewID(), TenantID: tenancy.TenantID(ctx), EmployeeID: in.EmployeeID, Kind: in.Kind,
		AmountSantim: in.AmountSantim, BasisPoints: in.BasisPoints, TotalSantim: in.TotalSantim, StartPeriod: in.StartPeriod,
		Priority: in.Priority, Description: in.Description, Status: MandatePending, CreatedBy: actor(ctx), CreatedAt: now, UpdatedAt: now}
	if in.EndPeriod != "" {
		m.EndPeriod = &in.EndPeriod
	}
	if in.Reference != "" {
		m.Reference = &in.Reference
	}
	if in.Payee != nil {
		m.PayeePartner, m.PayeeAccountNumber, m.PayeeHolderName = &in.Payee.Partner, &in.Payee.AccountNumber, &in.Payee.HolderName
	}
	if _, err := tx.NewInsert().Model(&m).Exec(ctx); err != nil {
		return Mandate{}, fmt.Errorf("payroll.create_mandate: %w", err)
	}
	return m, record(ctx, tx, "CreateDeductionMandate", "DeductionMandate", m.ID, "payroll.deduction_mandate_created.v1", mandateEvent(m))
}

// GetMandate reads one mandate of the tenant.
func GetMandate(ctx context.Context, tx db.BunTx, id string) (Mandate, error) {
	return getMandate(ctx, tx, id, false)
}

func getMandate(ctx context.Context, tx db.BunTx, id string, lock bool) (Mandate, error) {
	return getByID[Mandate](ctx, tx, "md", id, lock, ErrMandateNotFound)
}

// MandateFilter narrows ListMandates ("" any).
type MandateFilter struct {
	Status, EmployeeID, Kind string
	// Statuses, when set, narrows to any of them (beside Status).
	Statuses []string
	db.Page
}

// ListMandates lists the tenant's mandates by id (oldest first).
func ListMandates(ctx context.Context, tx db.BunTx, f MandateFilter) ([]Mandate, error) {
	var out []Mandate
	q := tx.NewSelect().Model(&out).Where("md.tenant_id = ?", tenancy.TenantID(ctx))
	if len(f.Statuses) > 0 {
		q = q.Where("md.status IN (?)", bun.List(f.Statuses))
	}
	eq := map[string]string{"status": f.Status, "employee_id": f.EmployeeID, "kind": f.Kind}
	if err := listPage(ctx, q, "md", eq, f.After, f.Rows()); err != nil {
		return nil, fmt.Errorf("payroll.list_mandates: %w", err)
	}
	return out, nil
}

// ActivateMandate: PENDING → ACTIVE, by another user than the creator, for an employee who is
// not TERMINATED (audited ActivateDeductionMandate, event payroll.deduction_mandate_activated.v1).
func ActivateMandate(ctx context.Context, tx db.BunTx, id string, now time.Time) (Mandate, error) {
	return moveMandate(ctx, tx, id, "activated", "", now, func(m *Mandate, who string) error {
		if err := CheckMakerChecker(ctx, "deduction mandate", m.CreatedBy); err != nil {
			return err
		}
		if err := PayableEmployee(ctx, tx, m.EmployeeID); err != nil {
			return err
		}
		m.ActivatedBy, m.ActivatedAt = &who, &now
		return nil
	}, "activated_by", "activated_at")
}

// SuspendMandate: ACTIVE → SUSPENDED; it takes nothing until resumed (audited
// SuspendDeductionMandate, event payroll.deduction_mandate_suspended.v1).
func SuspendMandate(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (Mandate, error) {
	return moveMandate(ctx, tx, id, "suspended", reason, now, func(m *Mandate, who string) error {
		m.SuspendedBy, m.SuspendedAt = &who, &now
		return nil
	}, "suspended_by", "suspended_at")
}

// ResumeMandate: SUSPENDED → ACTIVE, for an employee who is not TERMINATED (audited
// ResumeDeductionMandate, event payroll.deduction_mandate_resumed.v1).
func ResumeMandate(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (Mandate, error) {
	return moveMandate(ctx, tx, id, "resumed", reason, now, func(m *Mandate, _ string) error {
		m.SuspendedBy, m.SuspendedAt = nil, nil
		return PayableEmployee(ctx, tx, m.EmployeeID)
	}, "suspended_by", "suspended_at")
}

// CancelMandate: PENDING, ACTIVE or SUSPENDED → CANCELLED, for good (audited
// CancelDeductionMandate, event payroll.deduction_mandate_cancelled.v1).
func CancelMandate(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (Mandate, error) {
	return moveMandate(ctx, tx, id, "cancelled", reason, now, func(m *Mandate, who string) error {
		m.CancelledBy, m.CancelledAt = &who, &now
		return nil
	}, "cancelled_by", "cancelled_at")
}

var mandateActions = map[string]string{"activated": "ActivateDeductionMandate", "suspended": "SuspendDeductionMandate",
	"resumed": "ResumeDeductionMandate", "cancelled": "CancelDeductionMandate"}

// moveMandate locks the mandate, checks the move, lets set fill the move's columns, records the
// reason ("" keeps none) and writes them with the audit row and the event.
func moveMandate(ctx context.Context, tx db.BunTx, id, action, reason string, now time.Time, set func(*Mandate, string) error, cols ...string) (Mandate, error) {
	if reason != "" {
		if err := checkReason("reason", reason); err != nil {
			return Mandate{}, err
		}
	}
	m, err := getMandate(ctx, tx, id, true)
	if err != nil {
		return Mandate{}, err
	}
	to, err := MandateMachine.Next(action, m.Status)
	if err != nil {
		return Mandate{}, err
	}
	if err := set(&m, actor(ctx)); err != nil {
		return Mandate{}, err
	}
	m.Status, m.UpdatedAt = to, now
	m.StatusReason = nil
	if reason != "" {
		m.StatusReason = &reason
	}
	if err := updateRow(ctx, tx, &m, "md", m.TenantID, append([]string{"status", "updated_at", "status_reason"}, cols...)...); err != nil {
		return Mandate{}, fmt.Errorf("payroll.mandate_%s: %w", action, err)
	}
	ev := mandateEvent(m)
	if reason != "" {
		ev["reason"] = reason
	}
	return m, record(ctx, tx, mandateActions[action], "DeductionMandate", m.ID, "payroll.deduction_mandate_"+action+".v1", ev)
}

func mandateEvent(m Mandate) map[string]any {
	ev := map[string]any{"mandateId": m.ID, "employeeId": m.EmployeeID, "kind": m.Kind, "status": m.Status,
		"startPeriod": m.StartPeriod, "priority": m.Priority}
	if m.AmountSantim != nil {
		ev["amountSantim"] = *m.AmountSantim
	} else if m.BasisPoints != nil {
		ev["basisPoints"] = *m.BasisPoints
	}
	if m.TotalSantim != nil {
		ev["totalSantim"] = *m.TotalSantim
	}
	if m.EndPeriod != nil {
		ev["endPeriod"] = *m.EndPeriod
	}
	return ev
}

// PeriodMandate is a mandate as a period's calculation reads it.
type PeriodMandate struct {
	MandateID    string `bun:"id" db:"id"`
	EmployeeID   string `bun:"employee_id" db:"employee_id"`
	Kind         string `bun:"kind" db:"kind"`
	AmountSantim *int64 `bun:"amount_santim" db:"amount_santim"` // exactly one of AmountSantim and BasisPoints
	BasisPoints  *int64 `bun:"basis_points" db:"basis_points"`
	Priority     int64  `bun:"priority" db:"priority"`
	// RemainingSantim is the total still owed (nil: no total), always more than 0.
	RemainingSantim *int64 `bun:"remaining_santim" db:"remaining_santim"`
	// Reference is the court's or the loan's reference (nil when none was given).
	Reference *string `bun:"reference" db:"reference"`
}

// employee is the employee the mandate takes from (employeeInput).
func (m PeriodMandate) employee() string { return m.EmployeeID }

// ForCalc is the mandate as the calculator takes it: its kind, a fixed amount or basis points of
// gross, its priority and what is still owed.
func (m PeriodMandate) ForCalc() paycalc.Mandate {
	out := paycalc.Mandate{Reference: m.MandateID, Kind: paycalc.DeductionKind(m.Kind), Priority: m.Priority, RemainingSantim: m.RemainingSantim}
	if m.AmountSantim != nil {
		out.Method, out.Amount = paycalc.Fixed, *m.AmountSantim
	} else if m.BasisPoints != nil {
		out.Method, out.Amount = paycalc.Percent, *m.BasisPoints
	}
	return out
}

// MandatesForPeriod is every mandate that takes in period, for all the tenant's employees, keyed
// by employee id, each employee's by kind order then priority then id: ACTIVE, started
// (startPeriod ≤ period), not ended (no endPeriod, or endPeriod ≥ period) and not taken in full
// (no total, or taken < total). Suspended, pending, cancelled and completed mandates take
// nothing. One query, in a bun or a pgx transaction.
func MandatesForPeriod(ctx context.Context, tx db.Writer, period string) (map[string][]PeriodMandate, error) {
	rows, err := periodMandates(ctx, tx, period, "")
	if err != nil {
		return nil, err
	}
	return byEmployee(rows), nil
}

// EmployeeMandatesForPeriod is MandatesForPeriod for one employee.
func EmployeeMandatesForPeriod(ctx context.Context, tx db.Writer, employeeID, period string) ([]PeriodMandate, error) {
	if err := field.Identifier("employeeId", employeeID, 0); err != nil {
		return nil, err
	}
	return periodMandates(ctx, tx, period, employeeID)
}

func periodMandates(ctx context.Context, tx db.Writer, period, employeeID string) ([]PeriodMandate, error) {
	if err := CheckPeriod("period", period); err != nil {
		return nil, err
	}
	// A BNPL_INSTALLMENT mandate takes its agreement's earliest DUE instalment, never more than
	// the amount the employer activated, and nothing once none is DUE (product_mandate.go) — nor
	// while the agreement cannot be collected (bnpl's collectable: not ACTIVE, the merchant
	// refunded or cancelled the order, a write-off under way), since its collection would refuse
	// the line and leave the withheld pay to be refunded by hand. A CALCULATED run that withheld
	// one goes stale when that changes (RunStaleness reads this too).
	rows, err := db.Select[PeriodMandate](ctx, tx, `SELECT m.id, m.employee_id, m.kind,
			(CASE WHEN m.kind = ? THEN LEAST(m.amount_santim, due.amount_santim) ELSE m.amount_santim END)::bigint AS amount_santim,
			m.basis_points::bigint AS basis_points, m.priority::bigint AS priority,
			(m.total_santim - m.taken_santim)::bigint AS remaining_santim, m.reference
		FROM app.payroll_deduction_mandates m
		LEFT JOIN LATERAL (SELECT i.amount_santim FROM app.bnpl_instalments i
			JOIN app.bnpl_agreements a ON a.tenant_id = i.tenant_id AND a.id = i.agreement_id
			WHERE i.tenant_id = m.tenant_id AND i.agreement_id = m.reference AND i.status = 'DUE'
				AND a.status = 'ACTIVE' AND a.merchant_status IS DISTINCT FROM 'REFUNDED' AND a.merchant_status IS DISTINCT FROM 'CANCELLED'
				AND NOT EXISTS (SELECT 1 FROM app.bnpl_write_offs w WHERE w.tenant_id = a.tenant_id AND w.agreement_id = a.id AND w.status = 'PENDING')
			ORDER BY i.due_date, i.idx LIMIT 1) due ON m.kind = ?
		WHERE m.tenant_id = ? AND (? = '' OR m.employee_id = ?) AND m.status = 'ACTIVE'
			AND m.start_period <= ? AND (m.end_period IS NULL OR m.end_period >= ?)
			AND (m.total_santim IS NULL OR m.taken_santim < m.total_santim)
			AND (m.kind <> ? OR due.amount_santim IS NOT NULL)
		ORDER BY m.employee_id, array_position(?::text[], m.kind), m.priority, m.id`,
		KindBnplInstallment, KindBnplInstallment, tenancy.TenantID(ctx), employeeID, employeeID, period, period, KindBnplInstallment,
		pgTextArray(MandateKinds))
	if err != nil {
		return nil, fmt.Errorf("payroll.period_mandates: %w", err)
	}
	return rows, nil
}

// pgTextArray is a text[] literal of ss (plain upper-case words only).
func pgTextArray(ss []string) string {
	s := "{"
	for i, v := range ss {
		if i > 0 {
			s += ","
		}
		s += v
	}
	return s + "}"
}

// loadMandates is the loader's mandates family (LoadInputs).
func loadMandates(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	rows, err := periodMandates(ctx, tx, period, opt.EmployeeID)
	if err != nil {
		return err
	}
	for _, m := range rows {
		if in := byID[m.EmployeeID]; in != nil {
			in.Mandates = append(in.Mandates, m.ForCalc())
		}
	}
	return nil
}
