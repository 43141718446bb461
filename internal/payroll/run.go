package payroll

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Payroll runs: one per tenant and period, paying every employee paid in the period (LoadInputs)
// what the calculator (paycalc) computes.
//
// States and moves (RunMachine):
//
//	(none)     ─create────▶ DRAFT        payroll.edit; idempotent on (tenant, period): a second
//	                                     create answers the live run of the period
//	DRAFT      ─calculate─▶ CALCULATED   payroll.edit; every employee paid in the period, one
//	CALCULATED ─calculate─▶ CALCULATED   entry each (recalculated whole: a draft until approved)
//	CALCULATED ─approve───▶ APPROVED     payroll.approve; not by the user who last calculated
//	                                     (CheckMakerChecker); not while stale; one
//	                                     payroll.deductions_taken.v1 per entry
//	DRAFT, CALCULATED,
//	APPROVED   ─cancel────▶ CANCELLED    payroll.edit (payroll.approve for an APPROVED run: it
//	                                     undoes an approval); not once locked
//	APPROVED   ─disburse──▶ DISBURSING   payroll.approve; the disbursement saga (disburse.go)
//	DISBURSING ────────────▶ DISBURSED    once every entry is PAID or finally FAILED (disburse.go)
//	DISBURSED  ─complete──▶ COMPLETED    the completion saga (workflows.PayrollComplete, started
//	                                     by the disbursement saga): the PAID entries' deductions
//	                                     applied (complete.go), payroll.run_completed.v1
//
// Cancel stops at APPROVED because that is the last state in which no money has moved: an
// approved run has only told the consumers of payroll.deductions_taken.v1 what it will take
// (payroll.run_cancelled.v1 with wasApproved tells them it will not); from DISBURSING on, net
// pay is on its way to employees and the run must be finished (failed entries retried), not
// undone. A CANCELLED run frees its period: a new create makes a new DRAFT.
//
// Calculation runs off the request: POST /api/payroll/<id>/calculate checks and marks the run
// (RequestCalculation: CalculatingBy, CalculatingAt) and starts the run's calculation workflow
// (workflows.PayrollCalculate, one at a time per run: its id is derived from the run's, so a
// retried request attaches to the calculation under way), which runs CalculateRun; the route
// answers 200 with the CALCULATED run when the workflow ends within the API's wait, else 202 with
// the run as it is (calculating: true). Being calculated is a mark, not a state, like the lock:
// the run stays DRAFT, or CALCULATED with its previous entries, until CalculateRun replaces them
// and clears the mark in the same transaction (a refused calculation clears it too,
// EndCalculation), so the spec's states are unchanged and every move keeps its meaning. While the
// mark is set approve is refused (PAYROLL_RUN_CALCULATING, 409): the figures an approver saw are
// about to be replaced. Cancel and lock are not refused: the calculation then finds the run
// CANCELLED or locked and is refused itself.
//
// A mark no calculation will clear heals itself. The workflow ends without running its step, or
// with its step's answer lost, when it is terminated, times out, or is cancelled or fails (and an
// API that died between marking and starting it leaves a mark with no workflow at all); no code
// of the workflow runs after a termination or a timeout, so the workflow cannot be the one to
// clear it. The API does: approve, calculate and GET /api/payroll/<id>, finding a mark older than
// CalculationCheckAfter, ask Temporal whether the run's calculation workflow (the latest of
// workflows.PayrollCalculateWorkflowID) is running; when it is not (or there is none), the mark
// is cleared (ClearAbandonedCalculation: only that mark, by its CalculatingAt, under the run's
// row lock; audited CalculatePayrollRun FAILED with PAYROLL_CALCULATION_ABANDONED), the run is
// what its last calculation left, and approve or calculate goes on. The age bound keeps the check
// off the path of every request and covers the moment between the mark's commit and the
// workflow's start (a mark younger than it may name a workflow not yet started); a calculation
// running longer than it is still running, so its mark stays. When Temporal does not answer the
// mark stays (fail closed: approve is refused as before). A calculate that finds the mark
// abandoned clears it first and marks the run anew as its own. What is left: a termination does
// not stop a step already executing in a worker. The step's transaction takes the run's row lock
// first (CalculateRun), as the clearing does, so a step holding it is waited for (and clears the
// mark itself); one that has not taken it yet when the mark is cleared still writes its
// calculation, with no mark to tell an approver that the figures are about to change — unless
// it names the mark it was started under (CalculateRunMarked: the request passes the mark's
// CalculatingAt through the workflow to the step): under the run's row lock the step then finds
// the mark cleared or another request's, and writes nothing (PAYROLL_CALCULATION_SUPERSEDED,
// not audited: the calculation asked for was already ended as abandoned, audited FAILED).
// Histories started before the token was passed carry none and are not checked.
//
// The lock is not a state but a mark on the run (LockedAt), because it is orthogonal to where the
// money is: the auto-lock policy locks the period's run at a fixed time after the period ends
// (default the 5th of the next month), whatever the disbursement is doing. lock is allowed from
// APPROVED, DISBURSING, DISBURSED and COMPLETED (a DRAFT or a CALCULATED run has no approved
// figures to freeze, a CANCELLED run nothing to protect) and only once. A locked run is frozen:
// it is not calculated again and not cancelled (PAYROLL_RUN_LOCKED; the schema holds the second:
// a CANCELLED run has no lock); the disbursement goes on, since it changes no figure. Its period
// is closed to input changes (PeriodClosed). A CALCULATED run is not locked (found by an audit):
// the lock closes only the period's own inputs, so a change it does not close (a salary, an
// advance, a mandate) would leave the run stale — approve refused (PAYROLL_RUN_STALE), calculate
// and cancel refused (PAYROLL_RUN_LOCKED), no unlock, and no second run of the period beside it —
// and jam the period for good. Its approver decides first, then the run is locked; the auto-lock
// skips it for the same reason (AutoLockSkipNotApproved).
//
// Calculation reads the carry of each employee's latest approved entry of an earlier period
// (loadCarriedForward) and the sources' amounts still owed (EWA outstanding, loan instalments,
// mandates' remaining); those are brought up to date when a run completes (its deductions
// applied: CompleteRun and the completion saga, complete.go). So a period is not calculated while an earlier period's run is APPROVED, DISBURSING
// or DISBURSED (PAYROLL_EARLIER_RUN_OPEN): its deductions would be counted again; and a run is not
// approved while another period's is (PAYROLL_EARLIER_RUN_OPEN, PAYROLL_LATER_RUN_OPEN): one run
// in flight at a time. Periods are paid in order: once a later period's run is COMPLETED, a run of
// an earlier period is neither calculated nor approved (PAYROLL_LATER_PERIOD_COMPLETED,
// checkLaterRuns). The later run took the carry of the latest fixed entry before it, the same
// one the earlier period would read, so the earlier run would take it a second time (found by an
// audit); what an unpaid earlier period owes is paid in an open period (arrears, an adjustment).
//
// A period after the current one (UTC) has no run yet (PAYROLL_PERIOD_IN_FUTURE); a period whose
// run is COMPLETED is paid (PAYROLL_PERIOD_COMPLETED).

// The states of a run.
const (
	RunDraft      = "DRAFT"
	RunCalculated = "CALCULATED"
	RunApproved   = "APPROVED"
	RunDisbursing = "DISBURSING"
	RunDisbursed  = "DISBURSED"
	RunCompleted  = "COMPLETED"
	RunCancelled  = "CANCELLED"
)

// RunStatuses are the run states in the order the API lists them.
var RunStatuses = []string{RunDraft, RunCalculated, RunApproved, RunDisbursing, RunDisbursed, RunCompleted, RunCancelled}

// Codes of the run refusals (besides CodeSelfApproval and CodePeriodClosed).
const (
	CodeRunNotFound        = "PAYROLL_RUN_NOT_FOUND"
	CodeRunInvalidState    = "PAYROLL_RUN_INVALID_STATE"
	CodeRunLocked          = "PAYROLL_RUN_LOCKED"
	CodeRunStale           = "PAYROLL_RUN_STALE"
	CodePeriodInFuture     = "PAYROLL_PERIOD_IN_FUTURE"
	CodePeriodCompleted    = "PAYROLL_PERIOD_COMPLETED"
	CodeEarlierRunOpen     = "PAYROLL_EARLIER_RUN_OPEN"
	CodeLaterRunOpen       = "PAYROLL_LATER_RUN_OPEN"
	CodeCalculationRefused = "PAYROLL_CALCULATION_REFUSED"
	CodeRunCalculating     = "PAYROLL_RUN_CALCULATING"
)

// CodeLaterPeriodCompleted refuses a calculation or an approval of a period once a later period's
// run is COMPLETED (checkLaterRuns).
const CodeLaterPeriodCompleted = "PAYROLL_LATER_PERIOD_COMPLETED"

// ErrRunNotFound: no run with this id in the tenant.
var ErrRunNotFound = NotFound(CodeRunNotFound, "payroll run")

// RunMachine is the run's lifecycle up to the disbursement (the lock is checked besides).
var RunMachine = &Machine{Noun: "payroll run", Code: CodeRunInvalidState, Moves: map[string]Move{
	"calculated": {From: []string{RunDraft, RunCalculated}, To: RunCalculated},
	"approved":   {From: []string{RunCalculated}, To: RunApproved},
	"cancelled":  {From: []string{RunDraft, RunCalculated, RunApproved}, To: RunCancelled},
	"completed":  {From: []string{RunDisbursed}, To: RunCompleted},
	// The disbursement saga (disburse.go): disburse starts it, the last entry to become final
	// ends it.
	"disbursing": {From: []string{RunApproved}, To: RunDisbursing},
	"disbursed":  {From: []string{RunDisbursing}, To: RunDisbursed},
	// locked leaves the status as it is (To is not used): the states a lock may be put on, the
	// approved ones only (see "The lock" above: a locked CALCULATED run could jam its period).
	"locked": {From: []string{RunApproved, RunDisbursing, RunDisbursed, RunCompleted}},
}}

// The audit actions and outbox event types of runs.
const (
	ActionCreateRun    = "CreatePayrollRun"
	ActionCalculateRun = "CalculatePayrollRun"
	ActionApproveRun   = "ApprovePayrollRun"
	ActionCancelRun    = "CancelPayrollRun"
	ActionLockRun      = "LockPayrollRun"
	TargetRun          = "PayrollRun"

	EventRunCreated      = "payroll.run_created.v1"
	EventRunCalculated   = "payroll.run_calculated.v1"
	EventRunApproved     = "payroll.run_approved.v1"
	EventDeductionsTaken = "payroll.deductions_taken.v1"
	EventRunCancelled    = "payroll.run_cancelled.v1"
	EventRunLocked       = "payroll.run_locked.v1"
	EventRunCompleted    = "payroll.run_completed.v1"
)

// Run is a payroll run as stored.
type Run struct {
	bun.BaseModel `bun:"table:app.payroll_runs,alias:pr"`

	ID                          string    `bun:"id,pk"`
	TenantID                    string    `bun:"tenant_id"`
	Period                      string    `bun:"period"`
	Status                      string    `bun:"status"`
	EmployeeCount               int       `bun:"employee_count"`
	GrossSantim                 int64     `bun:"gross_santim"`
	DeductionsSantim            int64     `bun:"deductions_santim"`
	NetSantim                   int64     `bun:"net_santim"`
	EmployerContributionsSantim int64     `bun:"employer_contributions_santim"`
	CarriedForwardSantim        int64     `bun:"carried_forward_santim"`
	CreatedBy                   string    `bun:"created_by"`
	CreatedAt                   time.Time `bun:"created_at"`
	CalculatedBy                string    `bun:"calculated_by,nullzero"`
	CalculatedAt                time.Time `bun:"calculated_at,nullzero"`
	ApprovedBy                  string    `bun:"approved_by,nullzero"`
	ApprovedAt                  time.Time `bun:"approved_at,nullzero"`
	CancelledBy                 string    `bun:"cancelled_by,nullzero"`
	CancelledAt                 time.Time `bun:"cancelled_at,nullzero"`
	CancelReason                string    `bun:"cancel_reason,nullzero"`
	LockedBy                    string    `bun:"locked_by,nullzero"`
	LockedAt                    time.Time `bun:"locked_at,nullzero"`
	// The disbursement (disburse.go): its workflow, who asked and when, and when every entry
	// was final.
	DisbursementWorkflowID string    `bun:"disbursement_workflow_id,nullzero"`
	DisbursingBy           string    `bun:"disbursing_by,nullzero"`
	DisbursingAt           time.Time `bun:"disbursing_at,nullzero"`
	DisbursedAt            time.Time `bun:"disbursed_at,nullzero"`
	// The calculation under way (RequestCalculation): who asked and when; cleared by the
	// calculation that writes the entries, or by a refused one (EndCalculation).
	CalculatingBy string    `bun:"calculating_by,nullzero"`
	CalculatingAt time.Time `bun:"calculating_at,nullzero"`
	// CompletingAt: when the completion began (BeginCompletion); no entry is sent again after.
	CompletingAt time.Time `bun:"completing_at,nullzero"`
	// The completion (CompleteRun): the saga's workflow id and the outcome it reported, so the
	// saga's step run again, or a new execution under its id, answers that completion (both ""
	// and nil on runs completed before app migration 0087).
	CompletionWorkflowID string             `bun:"completion_workflow_id,nullzero"`
	CompletionOutcome    *CompletionOutcome `bun:"completion_outcome,type:jsonb"`
	UpdatedAt            time.Time          `bun:"updated_at"`
}

// Locked reports whether the run is locked.
func (r Run) Locked() bool { return !r.LockedAt.IsZero() }

// Calculating reports whether a calculation of the run was asked for and has not ended.
func (r Run) Calculating() bool { return !r.CalculatingAt.IsZero() }

// CalculationCheckAfter is the age after which a calculating mark is checked against the
// calculation's workflow (a mark no workflow will clear is cleared: ClearAbandonedCalculation).
// It is far above the moment between marking a run and starting its workflow (one request), and
// a check costs one Temporal call per request that meets such a mark.
const CalculationCheckAfter = time.Minute

// CalculationOverdue reports whether the run is marked calculating since CalculationCheckAfter or
// longer at now: its calculation workflow is to be asked whether it still runs.
func (r Run) CalculationOverdue(now time.Time) bool {
	return r.Calculating() && now.Sub(r.CalculatingAt) >= CalculationCheckAfter
}

// runEvent is the payload of every run event but deductions_taken.
type runEvent struct {
	ID                          string `json:"id"`
	Period                      string `json:"period"`
	Status                      string `json:"status"`
	Locked                      bool   `json:"locked"`
	EmployeeCount               int    `json:"employeeCount"`
	GrossSantim                 int64  `json:"grossSantim"`
	DeductionsSantim            int64  `json:"deductionsSantim"`
	NetSantim                   int64  `json:"netSantim"`
	EmployerContributionsSantim int64  `json:"employerContributionsSantim"`
	// WasApproved: a cancel of an APPROVED run (consumers of payroll.deductions_taken.v1 learn
	// that those deductions will not be taken).
	WasApproved bool `json:"wasApproved,omitempty"`
}

// recordRun writes the audit row and the event of a change to r, in tx.
func recordRun(ctx context.Context, tx db.BunTx, action, event string, r Run, details map[string]any, wasApproved bool) error {
	if details == nil {
		details = map[string]any{}
	}
	details["period"], details["status"] = r.Period, r.Status
	return recordChange(ctx, tx, action, TargetRun, r.ID, details, event, r.event(wasApproved))
}

// event is r as its events carry it (wasApproved: see runEvent).
func (r Run) event(wasApproved bool) runEvent {
	return runEvent{ID: r.ID, Period: r.Period, Status: r.Status, Locked: r.Locked(), EmployeeCount: r.EmployeeCount,
		GrossSantim: r.GrossSantim, DeductionsSantim: r.DeductionsSantim, NetSantim: r.NetSantim,
		EmployerContributionsSantim: r.EmployerContributionsSantim, WasApproved: wasApproved}
}

// CreateRun answers the tenant's live run of period, creating it DRAFT when there is none
// (created reports which; audited CreatePayrollRun, event payroll.run_created.v1, only when
// created). Errors: a *field.Error (period); PAYROLL_PERIOD_IN_FUTURE (422);
// PAYROLL_PERIOD_COMPLETED (409: the period's run is COMPLETED).
func CreateRun(ctx context.Context, tx db.BunTx, period string, now time.Time) (r Run, created bool, err error) {
	if err := CheckPeriod("period", period); err != nil {
		return r, false, err
	}
	if current := PeriodOf(now); period > current {
		return r, false, &Refusal{Code: CodePeriodInFuture, Status: http.StatusUnprocessableEntity,
			Message: "period " + period + " has not begun (the current period is " + current + ")",
			Details: map[string]any{"period": period, "currentPeriod": current}}
	}
	now = now.UTC()
	r = Run{ID: "prun_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), Period: period, Status: RunDraft,
		CreatedBy: tenancy.Actor(ctx), CreatedAt: now, UpdatedAt: now}
	res, err := tx.NewInsert().Model(&r).On("CONFLICT (tenant_id, period) WHERE status <> 'CANCELLED' DO NOTHING").Exec(ctx)
	if err != nil {
		return r, false, fmt.Errorf("payroll: create run: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return r, false, err
	} else if n == 0 {
		// The period's live run (the conflict's row; it is visible to this transaction).
		var existing Run
		if err := tx.NewSelect().Model(&existing).Where("pr.tenant_id = ?", tenancy.TenantID(ctx)).
			Where("pr.period = ?", period).Where("pr.status <> ?", RunCancelled).Scan(ctx); err != nil {
			return r, false, fmt.Errorf("payroll: the period's run: %w", err)
		}
		if existing.Status == RunCompleted {
			return existing, false, &Refusal{Code: CodePeriodCompleted, Status: http.StatusConflict,
				Message: "period " + period + " has been paid: its run is COMPLETED",
				Details: map[string]any{"period": period, "runId": existing.ID}}
		}
		return existing, false, nil
	}
	return r, true, recordRun(ctx, tx, ActionCreateRun, EventRunCreated, r, nil, false)
}

// GetRun reads one run of the tenant (ErrRunNotFound).
func GetRun(ctx context.Context, tx db.BunTx, id string) (Run, error) {
	return getRun(ctx, tx, id, false)
}

func getRun(ctx context.Context, tx db.BunTx, id string, lock bool) (Run, error) {
	return getByID[Run](ctx, tx, "pr", id, lock, ErrRunNotFound)
}

// RunFilter narrows ListRuns; zero fields do not filter.
type RunFilter struct {
	Status string
	// PeriodFrom and PeriodTo bound the period, both inclusive.
	PeriodFrom, PeriodTo string
	// After is the previous page's last run id (the page goes on after it in the list's order);
	// Limit the page size.
	After string
	Limit int
}

// ListRuns lists the tenant's runs, the latest period first (then by id, descending).
func ListRuns(ctx context.Context, tx db.BunTx, f RunFilter) ([]Run, error) {
	out := []Run{}
	q := tx.NewSelect().Model(&out).Where("pr.tenant_id = ?", tenancy.TenantID(ctx)).
		OrderExpr("pr.period DESC, pr.id DESC").Limit(int64(f.Limit))
	if f.Status != "" {
		q = q.Where("pr.status = ?", f.Status)
	}
	if f.PeriodFrom != "" {
		q = q.Where("pr.period >= ?", f.PeriodFrom)
	}
	if f.PeriodTo != "" {
		q = q.Where("pr.period <= ?", f.PeriodTo)
	}
	if f.After != "" {
		q = q.Where("(pr.period, pr.id) < (SELECT c.period, c.id FROM app.payroll_runs AS c WHERE c.tenant_id = pr.tenant_id AND c.id = ?)", f.After)
	}
	return out, q.Scan(ctx)
}

// RequestCalculation checks that the run may be calculated now (what CalculateRun refuses before
// it reads any input) and marks it as being calculated by the actor (CalculatingBy, CalculatingAt;
// a mark already there is kept: the calculation it names is the one under way; marked reports
// whether this call set it). It writes no audit row and no event: the calculation itself does
// (CalculateRun), and a refusal is the caller's to audit. Errors: ErrRunNotFound; PAYROLL_RUN_INVALID_STATE (409); PAYROLL_RUN_LOCKED (409);
// PAYROLL_EARLIER_RUN_OPEN (409); PAYROLL_LATER_PERIOD_COMPLETED (409).
func RequestCalculation(ctx context.Context, tx db.BunTx, id string, now time.Time) (r Run, marked bool, err error) {
	if r, err = getRun(ctx, tx, id, true); err != nil {
		return r, false, err
	}
	if _, err := RunMachine.Next("calculated", r.Status); err != nil {
		return r, false, err
	}
	if r.Locked() {
		return r, false, errRunLocked(r, "calculated again")
	}
	if err := checkEarlierRuns(ctx, tx, r.Period); err != nil {
		return r, false, err
	}
	if err := checkLaterRuns(ctx, tx, r.Period); err != nil {
		return r, false, err
	}
	if r.Calculating() {
		return r, false, nil
	}
	r.CalculatingBy, r.CalculatingAt = tenancy.Actor(ctx), now.UTC().Truncate(time.Microsecond) // as stored: the mark's token
	return r, true, updateRun(ctx, tx, &r, "calculating_by", "calculating_at")
}

// EndCalculation clears the run's calculating mark after a calculation that did not write the
// entries (a calculation that does clears it itself; a run without the mark, or gone, is left as
// it is). refused, when set, is why: it is audited CalculatePayrollRun DENIED with its code, as
// the actor — whether or not a request is still waiting for the answer.
func EndCalculation(ctx context.Context, tx db.BunTx, id string, refused *Refusal) error {
	return EndCalculationMarked(ctx, tx, id, time.Time{}, refused)
}

// EndCalculationMarked is EndCalculation for the calculation started under the mark set at mark
// (CalculateRunMarked): only that mark is cleared, a newer request's stays. A zero mark clears
// whichever is there.
func EndCalculationMarked(ctx context.Context, tx db.BunTx, id string, mark time.Time, refused *Refusal) error {
	q := tx.NewUpdate().TableExpr("app.payroll_runs").Set("calculating_by = NULL").Set("calculating_at = NULL").
		Where("tenant_id = ?", tenancy.TenantID(ctx)).Where("id = ?", id).Where("calculating_at IS NOT NULL")
	if !mark.IsZero() {
		q = q.Where("calculating_at = ?", mark.UTC().Truncate(time.Microsecond))
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("payroll: end calculation: %w", err)
	}
	if refused == nil {
		return nil
	}
	return audit.Write(ctx, tx, audit.Entry{Action: ActionCalculateRun, Outcome: audit.Denied, TargetType: TargetRun, TargetID: id,
		Details: map[string]string{"code": refused.Code}})
}

// CodeCalculationAbandoned is the audit code of a calculating mark cleared because the
// calculation's workflow ended without clearing it (ClearAbandonedCalculation).
const CodeCalculationAbandoned = "PAYROLL_CALCULATION_ABANDONED"

// ClearAbandonedCalculation clears the run's calculating mark set at since, once the caller has
// found that no calculation workflow of the run is running (see "A mark no calculation will clear"
// above): under the run's row lock, so a calculation step still writing the entries is waited
// for (and clears the mark itself), and only when the mark is still the one set at since (a newer
// request's mark is its own). Audited CalculatePayrollRun FAILED (code
// PAYROLL_CALCULATION_ABANDONED, who asked and when). cleared reports whether it cleared it; r is
// the run as it is after. Errors: ErrRunNotFound.
func ClearAbandonedCalculation(ctx context.Context, tx db.BunTx, id string, since time.Time) (r Run, cleared bool, err error) {
	if r, err = getRun(ctx, tx, id, true); err != nil {
		return r, false, err
	}
	if !r.Calculating() || !r.CalculatingAt.Equal(since) {
		return r, false, nil
	}
	by, at := r.CalculatingBy, r.CalculatingAt.UTC()
	r.CalculatingBy, r.CalculatingAt = "", time.Time{}
	if err := updateRun(ctx, tx, &r, "calculating_by", "calculating_at"); err != nil {
		return r, false, err
	}
	return r, true, audit.Write(ctx, tx, audit.Entry{Action: ActionCalculateRun, Outcome: audit.Failed, TargetType: TargetRun, TargetID: id,
		Details: map[string]any{"code": CodeCalculationAbandoned, "calculatingBy": by, "calculatingSince": at, "status": r.Status}})
}

// errRunCalculating refuses to approve a run whose calculation is under way: the figures an
// approver saw are about to be replaced.
func errRunCalculating(r Run) error {
	return &Refusal{Code: CodeRunCalculating, Status: http.StatusConflict,
		Message: "the payroll run is being calculated: approve it once the calculation has ended",
		Details: map[string]any{"status": r.Status, "calculatingSince": r.CalculatingAt.UTC()}}
}

// CalculateRun computes an entry for every employee paid in the run's period and replaces the
// run's entries with them: DRAFT or CALCULATED → CALCULATED, the actor recorded as the calculator
// (audited CalculatePayrollRun, event payroll.run_calculated.v1), the calculating mark cleared
// (RequestCalculation; the calculation workflow runs this). Errors: ErrRunNotFound;
// PAYROLL_RUN_INVALID_STATE (409); PAYROLL_RUN_LOCKED (409); PAYROLL_EARLIER_RUN_OPEN (409);
// PAYROLL_LATER_PERIOD_COMPLETED (409); PAYROLL_CALCULATION_REFUSED (422: an employee's inputs the
// calculator refuses, named in the details).
func CalculateRun(ctx context.Context, tx db.BunTx, id string, now time.Time) (Run, error) {
	return CalculateRunMarked(ctx, tx, id, now, time.Time{})
}

// CodeCalculationSuperseded refuses a calculation whose calculating mark is no longer on the run
// (CalculateRunMarked).
const CodeCalculationSuperseded = "PAYROLL_CALCULATION_SUPERSEDED"

// CalculateRunMarked is CalculateRun for the calculation started under the calculating mark set
// at mark (the run's CalculatingAt when it was asked for; RequestCalculation): under the run's
// row lock, before anything is written, the mark must still be that one. A mark cleared
// (ClearAbandonedCalculation, EndCalculation) or replaced by a newer request's means this
// calculation was ended without it; it writes nothing and is refused with
// PAYROLL_CALCULATION_SUPERSEDED (409) — unless the run was calculated at now, by this very
// calculation (a retried step whose first attempt committed and cleared the mark): that answers
// the run as it is, writing nothing. A zero mark checks nothing (CalculateRun).
func CalculateRunMarked(ctx context.Context, tx db.BunTx, id string, now, mark time.Time) (Run, error) {
	r, err := getRun(ctx, tx, id, true)
	if err != nil {
		return r, err
	}
	if !mark.IsZero() && !(r.Calculating() && r.CalculatingAt.Equal(mark.UTC().Truncate(time.Microsecond))) { // stored to the µs
		if r.Status == RunCalculated && r.CalculatedAt.Equal(now.UTC().Truncate(time.Microsecond)) {
			return r, nil // this calculation's own write (a retried step whose first attempt committed): its answer again
		}
		return r, &Refusal{Code: CodeCalculationSuperseded, Status: http.StatusConflict,
			Message: "this calculation was ended before it ran (its calculating mark was cleared or replaced); the run is unchanged",
			Details: map[string]any{"status": r.Status}}
	}
	to, err := RunMachine.Next("calculated", r.Status)
	if err != nil {
		return r, err
	}
	if r.Locked() {
		return r, errRunLocked(r, "calculated again")
	}
	if err := checkEarlierRuns(ctx, tx, r.Period); err != nil {
		return r, err
	}
	if err := checkLaterRuns(ctx, tx, r.Period); err != nil {
		return r, err
	}
	ins, err := LoadInputs(ctx, tx, r.Period, LoadOptions{Lock: true})
	if err != nil {
		return r, err
	}
	now = now.UTC()
	entries := make([]Entry, 0, len(ins))
	var gross, deductions, net, employer, carried int64
	for _, in := range ins {
		e, err := paycalc.Calculate(in.Input)
		if err != nil {
			var fe *field.Error
			if errors.As(err, &fe) {
				return r, &Refusal{Code: CodeCalculationRefused, Status: http.StatusUnprocessableEntity,
					Message: "the calculator refused an employee's inputs: " + fe.Error(),
					Details: map[string]any{"employeeId": in.EmployeeID, "field": fe.Field}}
			}
			return r, fmt.Errorf("payroll: calculate %s: %w", in.EmployeeID, err)
		}
		entry, err := newEntry(ctx, &r, in, e, now)
		if err != nil {
			return r, err
		}
		entries = append(entries, entry)
		// Each figure ≤ 1e12 and at most a few hundred thousand entries: far inside int64.
		gross, deductions, net = gross+entry.GrossSantim, deductions+entry.DeductionsSantim, net+entry.NetSantim
		employer, carried = employer+entry.EmployerContributionsSantim, carried+entry.CarriedForwardSantim
	}
	if _, err := tx.NewDelete().TableExpr("app.payroll_entries").Where("tenant_id = ?", r.TenantID).Where("run_id = ?", r.ID).
		Exec(ctx); err != nil {
		return r, fmt.Errorf("payroll: replace entries: %w", err)
	}
	if err := insertEntries(ctx, tx, entries); err != nil {
		return r, err
	}
	recalculated := r.Status == RunCalculated
	r.Status, r.CalculatedBy, r.CalculatedAt, r.UpdatedAt = to, tenancy.Actor(ctx), now, now
	r.EmployeeCount, r.GrossSantim, r.DeductionsSantim, r.NetSantim = len(entries), gross, deductions, net
	r.EmployerContributionsSantim, r.CarriedForwardSantim = employer, carried
	r.CalculatingBy, r.CalculatingAt = "", time.Time{} // the calculation asked for has ended
	if err := updateRun(ctx, tx, &r, "status", "calculated_by", "calculated_at", "updated_at", "employee_count", "gross_santim",
		"deductions_santim", "net_santim", "employer_contributions_santim", "carried_forward_santim", "calculating_by",
		"calculating_at"); err != nil {
		return r, err
	}
	return r, recordRun(ctx, tx, ActionCalculateRun, EventRunCalculated, r, map[string]any{"recalculated": recalculated,
		"employeeCount": r.EmployeeCount, "grossSantim": r.GrossSantim, "netSantim": r.NetSantim}, false)
}

// inFlight are the states of a run whose deductions are taken but not yet applied to what the
// sources say is owed (CompleteRun applies them).
var inFlight = []string{RunApproved, RunDisbursing, RunDisbursed}

// checkEarlierRuns refuses a calculation of period while a run of an earlier period is approved
// but not completed (its deductions are not yet applied to what the sources say is owed).
func checkEarlierRuns(ctx context.Context, tx db.BunTx, period string) error {
	var open []Run
	if err := tx.NewSelect().Model(&open).Where("pr.tenant_id = ?", tenancy.TenantID(ctx)).Where("pr.period < ?", period).
		Where("pr.status IN (?)", bun.List(inFlight)).OrderExpr("pr.period").Limit(1).Scan(ctx); err != nil {
		return fmt.Errorf("payroll: earlier runs: %w", err)
	}
	if len(open) > 0 {
		return runInFlight(CodeEarlierRunOpen, open[0])
	}
	return nil
}

// checkRunsInFlight refuses the approval of r while a run of another period is approved but not
// completed. Both would take the same deductions — each read what is owed before either applied
// its own — and the second to complete could not apply them (a mandate's total, an advance's
// outstanding), so it would stay DISBURSED and hold every later period. A calculation of a later
// period is already refused while an earlier one is in flight; this is the approval's side of
// the rule, for a run calculated before: an earlier run in flight is PAYROLL_EARLIER_RUN_OPEN,
// a later one PAYROLL_LATER_RUN_OPEN (after it completes, r's inputs have changed and it is
// calculated again). Approvals of one organization take an advisory lock first, so two racing
// approvals of different periods see each other.
func checkRunsInFlight(ctx context.Context, tx db.BunTx, r Run) error {
	if err := lockKey(ctx, tx, "payroll_run_approval:"+r.TenantID); err != nil {
		return fmt.Errorf("payroll: approval lock: %w", err)
	}
	var open []Run
	if err := tx.NewSelect().Model(&open).Where("pr.tenant_id = ?", r.TenantID).Where("pr.id <> ?", r.ID).
		Where("pr.status IN (?)", bun.List(inFlight)).OrderExpr("pr.period").Limit(1).Scan(ctx); err != nil {
		return fmt.Errorf("payroll: runs in flight: %w", err)
	}
	switch {
	case len(open) == 0:
		return nil
	case open[0].Period < r.Period:
		return runInFlight(CodeEarlierRunOpen, open[0])
	default:
		return runInFlight(CodeLaterRunOpen, open[0])
	}
}

// checkLaterRuns refuses a calculation or an approval of period once a run of a later period is
// COMPLETED (PAYROLL_LATER_PERIOD_COMPLETED, 409, details naming the latest such run). Each
// calculation takes the carry of the employee's latest fixed entry of an earlier period
// (loadCarriedForward); the later run took it already, so this period would take it again — a
// catalog deduction, an adjustment or a mandate without a total has no figure of what is owed to
// cap it. A later run in flight is the approval's PAYROLL_LATER_RUN_OPEN (checkRunsInFlight); a
// calculation beside it goes on, since that run may still be cancelled, and its approval waits.
func checkLaterRuns(ctx context.Context, tx db.BunTx, period string) error {
	var done []Run
	if err := tx.NewSelect().Model(&done).Where("pr.tenant_id = ?", tenancy.TenantID(ctx)).Where("pr.period > ?", period).
		Where("pr.status = ?", RunCompleted).OrderExpr("pr.period DESC").Limit(1).Scan(ctx); err != nil {
		return fmt.Errorf("payroll: later runs: %w", err)
	}
	if len(done) == 0 {
		return nil
	}
	return &Refusal{Code: CodeLaterPeriodCompleted, Status: http.StatusConflict,
		Message: "the run of " + done[0].Period + " is COMPLETED: periods are paid in order, and a run of " + period +
			" would take again what earlier periods carried forward and that run took; pay what " + period +
			" owes in an open period (arrears, an adjustment)",
		Details: map[string]any{"runId": done[0].ID, "period": done[0].Period, "status": done[0].Status}}
}

func runInFlight(code string, open Run) error {
	return &Refusal{Code: code, Status: http.StatusConflict,
		Message: "the run of " + open.Period + " is " + open.Status + ": it must be completed (or cancelled) first, " +
			"so that what it deducts is not deducted again",
		Details: map[string]any{"runId": open.ID, "period": open.Period, "status": open.Status}}
}

func errRunLocked(r Run, what string) error {
	return &Refusal{Code: CodeRunLocked, Status: http.StatusConflict,
		Message: "the payroll run is locked: it cannot be " + what,
		Details: map[string]any{"status": r.Status, "lockedAt": r.LockedAt.UTC()}}
}

// deductionsTaken is the payload of payroll.deductions_taken.v1: what one entry of an approved
// run takes from the employee's pay, line by line, and what it carries forward.
type deductionsTaken struct {
	RunID            string          `json:"runId"`
	EntryID          string          `json:"entryId"`
	EmployeeID       string          `json:"employeeId"`
	Period           string          `json:"period"`
	GrossSantim      int64           `json:"grossSantim"`
	DeductionsSantim int64           `json:"deductionsSantim"`
	NetSantim        int64           `json:"netSantim"`
	Deductions       []DeductionLine `json:"deductions"`
	CarriedForward   []Carry         `json:"carriedForward"`
}

// ApproveRun approves a CALCULATED run whose entries match the inputs stored now: CALCULATED →
// APPROVED, every entry APPROVED, one payroll.deductions_taken.v1 per entry and
// payroll.run_approved.v1 (audited ApprovePayrollRun). The run's row lock and its state make the
// events exactly once: a retried or concurrent approve finds it APPROVED and is refused.
// Errors: ErrRunNotFound; PAYROLL_RUN_INVALID_STATE (409); PAYROLL_RUN_CALCULATING (409: a
// calculation is under way); PAYROLL_SELF_APPROVAL (403: the actor calculated it);
// PAYROLL_EARLIER_RUN_OPEN, PAYROLL_LATER_RUN_OPEN (409: another period's run is approved and
// not completed, checkRunsInFlight); PAYROLL_LATER_PERIOD_COMPLETED (409: a later period's run is
// COMPLETED, checkLaterRuns); PAYROLL_RUN_STALE (409: calculate again).
func ApproveRun(ctx context.Context, tx db.BunTx, id string, now time.Time) (Run, error) {
	read := func(lock bool) (Run, string, error) {
		r, err := getRun(ctx, tx, id, lock)
		if err != nil {
			return r, "", err
		}
		to, err := RunMachine.Next("approved", r.Status)
		if err == nil && r.Calculating() {
			err = errRunCalculating(r)
		}
		return r, to, err
	}
	// Read first without the row lock: a calculation writing the entries holds it, and the
	// request is refused at once rather than after that calculation (which clears the mark).
	if r, _, err := read(false); err != nil {
		return r, err
	}
	r, to, err := read(true)
	if err != nil {
		return r, err
	}
	if err := CheckMakerChecker(ctx, "payroll run", r.CalculatedBy); err != nil {
		return r, err
	}
	if err := checkRunsInFlight(ctx, tx, r); err != nil {
		return r, err
	}
	if err := checkLaterRuns(ctx, tx, r.Period); err != nil {
		return r, err
	}
	st, err := RunStaleness(ctx, tx, r)
	if err != nil {
		return r, err
	}
	if st.Stale() {
		return r, &Refusal{Code: CodeRunStale, Status: http.StatusConflict,
			Message: "the inputs of the period changed since the run was calculated: calculate it again, then approve",
			Details: map[string]any{"changedEntries": len(st.Changed), "addedEmployees": len(st.Added), "removedEmployees": len(st.Removed)}}
	}
	var entries []Entry
	if err := tx.NewSelect().Model(&entries).Where("pe.tenant_id = ?", r.TenantID).Where("pe.run_id = ?", r.ID).
		Order("pe.id").Scan(ctx); err != nil {
		return r, fmt.Errorf("payroll: entries: %w", err)
	}
	now = now.UTC()
	if _, err := tx.NewUpdate().TableExpr("app.payroll_entries").Set("status = ?", EntryApproved).Set("updated_at = ?", now).
		Where("tenant_id = ?", r.TenantID).Where("run_id = ?", r.ID).Exec(ctx); err != nil {
		return r, fmt.Errorf("payroll: approve entries: %w", err)
	}
	payloads := make([]any, len(entries))
	for i, e := range entries {
		payloads[i] = deductionsTaken{RunID: r.ID, EntryID: e.ID, EmployeeID: e.EmployeeID, Period: r.Period, GrossSantim: e.GrossSantim,
			DeductionsSantim: e.DeductionsSantim, NetSantim: e.NetSantim, Deductions: e.Deductions, CarriedForward: e.CarriedForward}
	}
	if err := outbox.WriteManyIn(ctx, tx, EventDeductionsTaken, payloads); err != nil {
		return r, err
	}
	r.Status, r.ApprovedBy, r.ApprovedAt, r.UpdatedAt = to, tenancy.Actor(ctx), now, now
	if err := updateRun(ctx, tx, &r, "status", "approved_by", "approved_at", "updated_at"); err != nil {
		return r, err
	}
	return r, recordRun(ctx, tx, ActionApproveRun, EventRunApproved, r, map[string]any{"employeeCount": r.EmployeeCount,
		"netSantim": r.NetSantim}, false)
}

// CancelRun cancels a DRAFT, CALCULATED or APPROVED run that is not locked; its entries are
// CANCELLED and its period is free for a new run (audited CancelPayrollRun, event
// payroll.run_cancelled.v1). An APPROVED run needs mayUndoApproval (the caller holds
// payroll.approve). reason is optional. Errors: ErrRunNotFound; a *field.Error (reason);
// PAYROLL_RUN_INVALID_STATE (409); PAYROLL_RUN_LOCKED (409); PERMISSION_DENIED (403).
func CancelRun(ctx context.Context, tx db.BunTx, id, reason string, mayUndoApproval bool, now time.Time) (Run, error) {
	if err := CheckReason("reason", reason, false); err != nil {
		return Run{}, err
	}
	r, err := getRun(ctx, tx, id, true)
	if err != nil {
		return r, err
	}
	to, err := RunMachine.Next("cancelled", r.Status)
	if err != nil {
		return r, err
	}
	if r.Locked() {
		return r, errRunLocked(r, "cancelled")
	}
	wasApproved := r.Status == RunApproved
	if wasApproved && !mayUndoApproval {
		return r, &Refusal{Code: CodeApprovalPermission, Status: http.StatusForbidden,
			Message: "cancelling an approved payroll run undoes its approval: it needs payroll.approve"}
	}
	now = now.UTC()
	if _, err := tx.NewUpdate().TableExpr("app.payroll_entries").Set("status = ?", EntryCancelled).Set("updated_at = ?", now).
		Where("tenant_id = ?", r.TenantID).Where("run_id = ?", r.ID).Exec(ctx); err != nil {
		return r, fmt.Errorf("payroll: cancel entries: %w", err)
	}
	r.Status, r.CancelledBy, r.CancelledAt, r.CancelReason, r.UpdatedAt = to, tenancy.Actor(ctx), now, reason, now
	if err := updateRun(ctx, tx, &r, "status", "cancelled_by", "cancelled_at", "cancel_reason", "updated_at"); err != nil {
		return r, err
	}
	return r, recordRun(ctx, tx, ActionCancelRun, EventRunCancelled, r, map[string]any{"wasApproved": wasApproved}, wasApproved)
}

// LockRun locks a run (APPROVED onwards, once): it is no longer cancelled and its period's inputs
// are closed (audited LockPayrollRun, event payroll.run_locked.v1). Errors: ErrRunNotFound;
// PAYROLL_RUN_INVALID_STATE (409: DRAFT, CALCULATED or CANCELLED); PAYROLL_RUN_LOCKED (409:
// already locked); PAYROLL_RUN_CALCULATING (409: a calculation is under way).
func LockRun(ctx context.Context, tx db.BunTx, id string, now time.Time) (Run, error) {
	r, err := getRun(ctx, tx, id, true)
	if err != nil {
		return r, err
	}
	if _, err := RunMachine.Next("locked", r.Status); err != nil {
		return r, err
	}
	if r.Locked() {
		return r, errRunLocked(r, "locked again")
	}
	if r.Calculating() {
		// The calculation under way would be refused on commit and the figures before it frozen.
		rf := errRunCalculating(r).(*Refusal)
		rf.Message = "the payroll run is being calculated: lock it once the calculation has ended"
		return r, rf
	}
	now = now.UTC()
	r.LockedBy, r.LockedAt, r.UpdatedAt = tenancy.Actor(ctx), now, now
	if err := updateRun(ctx, tx, &r, "locked_by", "locked_at", "updated_at"); err != nil {
		return r, err
	}
	return r, recordRun(ctx, tx, ActionLockRun, EventRunLocked, r, nil, false)
}

func updateRun(ctx context.Context, tx db.BunTx, r *Run, columns ...string) error {
	if err := updateRow(ctx, tx, r, "pr", r.TenantID, columns...); err != nil {
		return fmt.Errorf("payroll: update run: %w", err)
	}
	return nil
}

// PeriodClosed reports whether the tenant's run of period has fixed its figures: it is APPROVED
// or further on (not CANCELLED), or locked. An input of that period, or a change of one, would
// never be paid by it (CodePeriodClosed). It locks the period's runs for share until tx ends: a
// run's approval (which locks its row FOR UPDATE and then compares the period's inputs with
// what the run calculated) and an input's change take turns, so an input approved beside an
// approval is either seen by its staleness check or refused here.
func PeriodClosed(ctx context.Context, tx db.Writer, period string) (bool, error) {
	return periodClosed(ctx, tx, period, " FOR SHARE")
}

// PeriodFixed is PeriodClosed for a reader (the employee's budget): the same rule, taking no lock,
// so a read never makes an approval wait.
func PeriodFixed(ctx context.Context, tx db.Writer, period string) (bool, error) {
	return periodClosed(ctx, tx, period, "")
}

func periodClosed(ctx context.Context, tx db.Writer, period, lock string) (bool, error) {
	rows, err := db.Select[struct {
		Status string `bun:"status" db:"status"`
		Locked bool   `bun:"locked" db:"locked"`
	}](ctx, tx, `SELECT status, locked_at IS NOT NULL AS locked FROM app.payroll_runs WHERE tenant_id = ? AND period = ?`+lock,
		tenancy.TenantID(ctx), period)
	if err != nil {
		return false, fmt.Errorf("payroll: period closed: %w", err)
	}
	for _, r := range rows {
		switch {
		case r.Locked, r.Status == RunApproved, r.Status == RunDisbursing, r.Status == RunDisbursed, r.Status == RunCompleted:
			return true, nil
		}
	}
	return false, nil
}

// CheckPeriodOpen refuses (PAYROLL_PERIOD_CLOSED, 409) an input, or a move of one, in a period
// that has closed: one before the current calendar month (UTC), or one whose run has fixed its
// figures or is locked (PeriodClosed): an input changed now would never be paid by that run.
func CheckPeriodOpen(ctx context.Context, tx db.Writer, period string, now time.Time) error {
	current := PeriodOf(now)
	if period < current {
		return ErrPeriodClosed(period, current)
	}
	return CheckRunOpen(ctx, tx, period, now)
}

// CheckRunOpen refuses (PAYROLL_PERIOD_CLOSED, 409) an input, or a move of one, in a period whose
// run has fixed its figures or is locked (PeriodClosed), whatever the calendar says: an
// adjustment may correct a past month no run has paid yet, but never one whose run will not pay
// it.
func CheckRunOpen(ctx context.Context, tx db.Writer, period string, now time.Time) error {
	closed, err := PeriodClosed(ctx, tx, period)
	if err != nil {
		return err
	}
	if closed {
		return &Refusal{Code: CodePeriodClosed, Status: http.StatusConflict,
			Message: "period " + period + " has closed: its payroll run is approved or locked",
			Details: map[string]any{"period": period, "currentPeriod": PeriodOf(now)}}
	}
	return nil
}
