package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/temporalerr"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/workflows"
)

// Payroll runs (the run lifecycle; internal/payroll/run.go has the states and rules): create
// (idempotent on the period: 201 for a new run, 200 with the period's live run), list, read with
// totals, entry counts and staleness, the entries paged, calculate, approve, cancel and lock. Every
// route needs an admin or owner of the active organization with the payroll permission of its row:
// view to read, edit to create, calculate and cancel (cancelling an APPROVED run also needs
// approve; the store checks it, as it depends on the run's state), approve to approve and lock.
// A refusal by a rule is audited DENIED (payrollAnswer). None of these routes moves money (the
// disbursement does), and each is safe to retry: a create answers the same run, a repeated move
// is refused by the state machine and changes nothing, so none takes an Idempotency-Key.

// payrollRunRoutes serves the run lifecycle.
func (s *Server) payrollRunRoutes() []Route {
	org := payrollOrgRoute
	const runs = "/api/payroll"
	return []Route{
		org(http.MethodPost, runs, "Create the payroll run of a period (DRAFT; idempotent on the period)", payrollEdit, s.createPayrollRun, BodyJSON),
		org(http.MethodGet, runs, "The organization's payroll runs (paged, filtered)", payrollView, s.listPayrollRuns, BodyNone),
		org(http.MethodGet, runs+"/:id", "One payroll run: totals, entry counts, staleness", payrollView, s.getPayrollRun, BodyNone),
		org(http.MethodGet, runs+"/:id/entries", "A payroll run's entries (paged, filtered)", payrollView, s.listPayrollEntries, BodyNone),
		org(http.MethodGet, runs+"/:id/audit", "A payroll run's audit trail (the run and its entries, paged)", payrollView, s.payrollRunAudit, BodyNone),
		org(http.MethodPost, runs+"/:id/calculate", "Calculate (or recalculate) a payroll run", payrollEdit, s.calculatePayrollRun, BodyNone),
		org(http.MethodPost, runs+"/:id/approve", "Approve a calculated payroll run (not its calculator)", payrollApprove, s.approvePayrollRun, BodyNone),
		org(http.MethodPost, runs+"/:id/cancel", "Cancel a payroll run before any money moves", payrollEdit, s.cancelPayrollRun, BodyOptionalJSON),
		org(http.MethodPost, runs+"/:id/lock", "Lock a payroll run against changes", payrollApprove, s.lockPayrollRun, BodyNone),
	}
}

// --- what the payroll handlers share ---

// payrollOrgRoute is a route of an admin or owner of the active organization who also holds the
// payroll permission perm: every route of these files but the platform's overrides and the
// projection (a plain member's).
func payrollOrgRoute(method, path, summary string, perm orgs.Permission, h gin.HandlerFunc, body Body) Route {
	return Route{Method: method, Path: path, Auth: Org, Role: orgs.Admin, Permission: perm, Summary: summary, Handler: h, Body: body}
}

// statusParam is the status parameter of a list, one of statuses.
func statusParam(dst *string, statuses ...string) filterParam {
	return filterParam{"status", dst, oneOfCheck("status", statuses)}
}

// periodParam is a period parameter of a list (YYYY-MM) called name.
func periodParam(name string, dst *string) filterParam {
	return filterParam{name, dst, func(v string) error { return payroll.CheckPeriod(name, v) }}
}

// mayUndoApproval tells whether the caller may void or cancel what is already APPROVED: that
// takes payroll.approve (the store checks it, as it depends on the row's state).
func mayUndoApproval(c *gin.Context) bool {
	cl := callerOf(c)
	return cl.Platform || cl.Access.Permissions.Allows(payrollApprove)
}

// payrollRunJSON is a run as every response shows it (absent values null).
type payrollRunJSON struct {
	ID                          string     `json:"id"`
	Period                      string     `json:"period"`
	Status                      string     `json:"status"`
	Locked                      bool       `json:"locked"`
	EmployeeCount               int        `json:"employeeCount"`
	GrossSantim                 int64      `json:"grossSantim"`
	DeductionsSantim            int64      `json:"deductionsSantim"`
	NetSantim                   int64      `json:"netSantim"`
	EmployerContributionsSantim int64      `json:"employerContributionsSantim"`
	CarriedForwardSantim        int64      `json:"carriedForwardSantim"`
	CreatedBy                   string     `json:"createdBy"`
	CreatedAt                   time.Time  `json:"createdAt"`
	CalculatedBy                *string    `json:"calculatedBy"`
	CalculatedAt                *time.Time `json:"calculatedAt"`
	ApprovedBy                  *string    `json:"approvedBy"`
	ApprovedAt                  *time.Time `json:"approvedAt"`
	CancelledBy                 *string    `json:"cancelledBy"`
	CancelledAt                 *time.Time `json:"cancelledAt"`
	CancelReason                *string    `json:"cancelReason"`
	LockedBy                    *string    `json:"lockedBy"`
	LockedAt                    *time.Time `json:"lockedAt"`
	// Calculating: a calculation was asked for (by CalculatingBy, at CalculatingAt) and has not
	// ended; the status is the run's until it does.
	Calculating   bool       `json:"calculating"`
	CalculatingBy *string    `json:"calculatingBy"`
	CalculatingAt *time.Time `json:"calculatingAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

func toPayrollRunJSON(r payroll.Run) payrollRunJSON {
	return payrollRunJSON{ID: r.ID, Period: r.Period, Status: r.Status, Locked: r.Locked(), EmployeeCount: r.EmployeeCount,
		GrossSantim: r.GrossSantim, DeductionsSantim: r.DeductionsSantim, NetSantim: r.NetSantim,
		EmployerContributionsSantim: r.EmployerContributionsSantim, CarriedForwardSantim: r.CarriedForwardSantim,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), CalculatedBy: optionalString(r.CalculatedBy),
		CalculatedAt: optionalTime(r.CalculatedAt), ApprovedBy: optionalString(r.ApprovedBy), ApprovedAt: optionalTime(r.ApprovedAt),
		CancelledBy: optionalString(r.CancelledBy), CancelledAt: optionalTime(r.CancelledAt), CancelReason: optionalString(r.CancelReason),
		LockedBy: optionalString(r.LockedBy), LockedAt: optionalTime(r.LockedAt), Calculating: r.Calculating(),
		CalculatingBy: optionalString(r.CalculatingBy), CalculatingAt: optionalTime(r.CalculatingAt), UpdatedAt: r.UpdatedAt.UTC()}
}

// maxStaleIDs bounds each list of employee ids a run's staleness names (the counts are whole).
const maxStaleIDs = 100

// payrollStalenessJSON is how a CALCULATED run's entries compare with the inputs stored now.
type payrollStalenessJSON struct {
	Stale              bool     `json:"stale"`
	ChangedEntries     int      `json:"changedEntries"`
	AddedEmployees     int      `json:"addedEmployees"`
	RemovedEmployees   int      `json:"removedEmployees"`
	ChangedEmployeeIDs []string `json:"changedEmployeeIds"`
	AddedEmployeeIDs   []string `json:"addedEmployeeIds"`
	RemovedEmployeeIDs []string `json:"removedEmployeeIds"`
}

// payrollRunDetailJSON is GET /api/payroll/<id>: the run, its entries counted by status, and
// (CALCULATED only, else null) its staleness. The entries themselves are paged by
// GET /api/payroll/<id>/entries.
type payrollRunDetailJSON struct {
	payrollRunJSON
	EntryCounts map[string]int        `json:"entryCounts"`
	Staleness   *payrollStalenessJSON `json:"staleness"`
	// Disbursement is null until the run is disbursed (api/payroll_disburse.go).
	Disbursement *payrollDisbursementJSON `json:"disbursement"`
	run          payroll.Run
}

// payrollEntryJSON is an entry with every figure of the calculator.
type payrollEntryJSON struct {
	ID                          string                  `json:"id"`
	RunID                       string                  `json:"runId"`
	EmployeeID                  string                  `json:"employeeId"`
	Period                      string                  `json:"period"`
	Status                      string                  `json:"status"`
	TaxTableVersion             string                  `json:"taxTableVersion"`
	DaysInPeriod                int                     `json:"daysInPeriod"`
	DaysEmployed                int                     `json:"daysEmployed"`
	BasicSantim                 int64                   `json:"basicSantim"`
	GrossSantim                 int64                   `json:"grossSantim"`
	TaxableSantim               int64                   `json:"taxableSantim"`
	ExemptSantim                int64                   `json:"exemptSantim"`
	TaxBaseSantim               int64                   `json:"taxBaseSantim"`
	PAYESantim                  int64                   `json:"payeSantim"`
	PensionEmployeeSantim       int64                   `json:"pensionEmployeeSantim"`
	StatutorySantim             int64                   `json:"statutorySantim"`
	CourtOrdersSantim           int64                   `json:"courtOrdersSantim"`
	ProtectedSantim             int64                   `json:"protectedSantim"`
	DeductionsSantim            int64                   `json:"deductionsSantim"`
	NetSantim                   int64                   `json:"netSantim"`
	EmployerContributionsSantim int64                   `json:"employerContributionsSantim"`
	ShareCapSantim              int64                   `json:"shareCapSantim"`
	RecoverableSantim           int64                   `json:"recoverableSantim"`
	CarriedForwardSantim        int64                   `json:"carriedForwardSantim"`
	BelowMinimumNet             bool                    `json:"belowMinimumNet"`
	Earnings                    []payroll.EarningLine   `json:"earnings"`
	Deductions                  []payroll.DeductionLine `json:"deductions"`
	EmployerContributions       []payroll.Contribution  `json:"employerContributions"`
	CarriedForward              []payroll.Carry         `json:"carriedForward"`
	InputsFingerprint           string                  `json:"inputsFingerprint"`
	PayoutAccount               *payoutAccountJSON      `json:"payoutAccount"`
	FailureReason               *string                 `json:"failureReason"`
	UpdatedAt                   time.Time               `json:"updatedAt"`
}

func toPayrollEntryJSON(e payroll.Entry) payrollEntryJSON {
	out := payrollEntryJSON{ID: e.ID, RunID: e.RunID, EmployeeID: e.EmployeeID, Period: e.Period, Status: e.Status,
		TaxTableVersion: e.TaxTableVersion, DaysInPeriod: e.DaysInPeriod, DaysEmployed: e.DaysEmployed, BasicSantim: e.BasicSantim,
		GrossSantim: e.GrossSantim, TaxableSantim: e.TaxableSantim, ExemptSantim: e.ExemptSantim, TaxBaseSantim: e.TaxBaseSantim,
		PAYESantim: e.PAYESantim, PensionEmployeeSantim: e.PensionEmployeeSantim, StatutorySantim: e.StatutorySantim,
		CourtOrdersSantim: e.CourtOrdersSantim, ProtectedSantim: e.ProtectedSantim, DeductionsSantim: e.DeductionsSantim,
		NetSantim: e.NetSantim, EmployerContributionsSantim: e.EmployerContributionsSantim, ShareCapSantim: e.ShareCapSantim,
		RecoverableSantim: e.RecoverableSantim, CarriedForwardSantim: e.CarriedForwardSantim, BelowMinimumNet: e.BelowMinimumNet,
		Earnings: e.Earnings, Deductions: e.Deductions, EmployerContributions: e.EmployerContributions, CarriedForward: e.CarriedForward,
		InputsFingerprint: e.InputsFingerprint, FailureReason: optionalString(e.FailureReason), UpdatedAt: e.UpdatedAt.UTC()}
	if e.PayoutPartner != "" && e.PayoutAccount != "" && e.PayoutHolderName != "" {
		out.PayoutAccount = &payoutAccountJSON{Partner: e.PayoutPartner, AccountNumber: e.PayoutAccount, HolderName: e.PayoutHolderName}
	}
	if out.Earnings == nil {
		out.Earnings = []payroll.EarningLine{}
	}
	if out.Deductions == nil {
		out.Deductions = []payroll.DeductionLine{}
	}
	if out.EmployerContributions == nil {
		out.EmployerContributions = []payroll.Contribution{}
	}
	if out.CarriedForward == nil {
		out.CarriedForward = []payroll.Carry{}
	}
	return out
}

type payrollRunRequest struct {
	Period *string `json:"period"`
}

func (s *Server) createPayrollRun(c *gin.Context) {
	var req payrollRunRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := pmRequired("period", req.Period == nil); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := payroll.CheckPeriod("period", *req.Period); err != nil {
		writeError(c, fieldError(err))
		return
	}
	type created struct {
		run payroll.Run
		new bool
	}
	out, ok := inTenantAudited(s, c, payroll.ActionCreateRun, "PayrollPeriod", *req.Period, func(ctx context.Context, tx db.BunTx) (created, error) {
		r, isNew, err := payroll.CreateRun(ctx, tx, *req.Period, s.now())
		return created{r, isNew}, err
	})
	if !ok {
		return
	}
	status := http.StatusOK
	if out.new {
		status = http.StatusCreated
	}
	c.JSON(status, toPayrollRunJSON(out.run))
}

func (s *Server) listPayrollRuns(c *gin.Context) {
	var status, from, to string
	limit, cursor, ok := pagedFilters(c, statusParam(&status, payroll.RunStatuses...), periodParam("periodFrom", &from),
		periodParam("periodTo", &to))
	if !ok {
		return
	}
	if from != "" && to != "" && from > to {
		writeError(c, fieldError(&field.Error{Field: "periodTo", Problem: "must not be before periodFrom"}))
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Run, error) {
		return payroll.ListRuns(ctx, tx, payroll.RunFilter{Status: status, PeriodFrom: from, PeriodTo: to, After: cursor, Limit: limit + 1})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(r payroll.Run) string { return r.ID }, toPayrollRunJSON))
}

// oneOfCheck accepts one of values.
func oneOfCheck(name string, values []string) func(string) error {
	return func(v string) error {
		for _, s := range values {
			if v == s {
				return nil
			}
		}
		return &field.Error{Field: name, Problem: "must be one of " + strings.Join(values, ", ")}
	}
}

func (s *Server) getPayrollRun(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := s.readPayrollRun(c, id)
	if err == nil && out.run.CalculationOverdue(s.now()) {
		// A mark no calculation will clear is cleared (internal/payroll/run.go), and the run read
		// again as it is then.
		if r := s.settleCalculation(c, out.run); !r.Calculating() {
			out, err = s.readPayrollRun(c, id)
		}
	}
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, out)
}

// readPayrollRun reads GET /api/payroll/<id>'s answer in one tenant transaction: the run, its
// entries counted, its staleness (CALCULATED) and its disbursement (the progress counted from the
// entries while DISBURSING: payroll.ReadDisbursementProgress).
func (s *Server) readPayrollRun(c *gin.Context, id string) (payrollRunDetailJSON, error) {
	return inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payrollRunDetailJSON, error) {
		r, err := payroll.GetRun(ctx, tx, id)
		if err != nil {
			return payrollRunDetailJSON{}, err
		}
		d := payrollRunDetailJSON{payrollRunJSON: toPayrollRunJSON(r), run: r}
		var progress *payroll.DisbursementProgress
		if r.Status == payroll.RunDisbursing {
			// The saga pays the entries in the fan-out's batches (it sends it no batch size).
			p, err := payroll.ReadDisbursementProgress(ctx, tx, r.ID, workflows.DefaultFanoutBatch)
			if err != nil {
				return d, err
			}
			progress, d.EntryCounts = &p, p.Entries // one scan counts both
		} else if d.EntryCounts, err = payroll.EntryCounts(ctx, tx, r.ID); err != nil {
			return d, err
		}
		if r.Status == payroll.RunCalculated && !r.Calculating() { // a calculation under way replaces the entries
			st, err := payroll.RunStaleness(ctx, tx, r)
			if err != nil {
				return d, err
			}
			d.Staleness = &payrollStalenessJSON{Stale: st.Stale(), ChangedEntries: len(st.Changed), AddedEmployees: len(st.Added),
				RemovedEmployees: len(st.Removed), ChangedEmployeeIDs: firstIDs(st.Changed), AddedEmployeeIDs: firstIDs(st.Added),
				RemovedEmployeeIDs: firstIDs(st.Removed)}
		}
		d.Disbursement = payrollDisbursement(r, progress)
		return d, nil
	})
}

// firstIDs is ids cut to maxStaleIDs, never null.
func firstIDs(ids []string) []string {
	if len(ids) > maxStaleIDs {
		ids = ids[:maxStaleIDs]
	}
	if ids == nil {
		return []string{}
	}
	return ids
}

func (s *Server) listPayrollEntries(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var status, employee string
	limit, cursor, ok := pagedFilters(c, statusParam(&status, payroll.EntryStatuses...), idParam("employeeId", &employee))
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Entry, error) {
		return payroll.ListEntries(ctx, tx, id, payroll.EntryFilter{Status: status, EmployeeID: employee, After: cursor, Limit: limit + 1})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(e payroll.Entry) string { return e.ID }, toPayrollEntryJSON))
}

// runMove serves an action on one run: move runs it in the tenant's transaction.
func (s *Server) runMove(c *gin.Context, action string, move func(ctx context.Context, tx db.BunTx, id string) (payroll.Run, error)) {
	if out, ok := onPathRow(s, c, action, payroll.TargetRun, move); ok {
		c.JSON(http.StatusOK, toPayrollRunJSON(out))
	}
}

// calculatePayrollRun calculates the run off the request (internal/payroll/run.go): it checks
// and marks the run (payroll.RequestCalculation: a refusal is audited DENIED, as before), starts
// the run's calculation workflow or attaches to the one under way
// (workflows.StartPayrollCalculate), and waits for it as long as a saga call waits
// (Server.sagaWait): 200 with the CALCULATED run when it ends in time, its refusal (audited
// DENIED by the calculation itself) when it is refused, else 202 with the run as it is now (calculating: true; GET
// /api/payroll/<id> shows when it is CALCULATED).
func (s *Server) calculatePayrollRun(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "this route needs Temporal"))
		return
	}
	s.settleCalculationOf(c, id) // an abandoned mark is cleared: this request marks the run as its own
	now := s.now().UTC()
	type requested struct {
		actor  string
		marked bool
		mark   time.Time // the run's calculating mark: this request's, or the one it found
	}
	req, ok := inTenantAudited(s, c, payroll.ActionCalculateRun, payroll.TargetRun, id, func(ctx context.Context, tx db.BunTx) (requested, error) {
		r, marked, err := payroll.RequestCalculation(ctx, tx, id, now)
		return requested{tenancy.Actor(ctx), marked, r.CalculatingAt}, err
	})
	if !ok {
		return
	}
	started, err := workflows.StartPayrollCalculate(c.Request.Context(), s.deps.Temporal, s.taskQueue(), workflows.PayrollCalculateInput{
		TenantID: callerOf(c).Tenant, RunID: id, ActorID: req.actor, At: now, Mark: req.mark, CorrelationID: requestID(c)})
	if err != nil {
		if req.marked { // nothing will calculate the run: its approval must not wait for it
			if _, uerr := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (struct{}, error) {
				return struct{}{}, payroll.EndCalculation(ctx, tx, id, nil)
			}); uerr != nil {
				s.deps.Log.Error("payroll calculate: the mark of a calculation that did not start stays", "payroll_run_id", id, "error", uerr)
			}
		}
		writeError(c, err)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.sagaWait(0))
	defer cancel()
	var res workflows.PayrollCalculateResult
	if err := waitForRun(ctx, started, &res); err != nil {
		if ctx.Err() == nil || c.Request.Context().Err() != nil {
			writeError(c, err)
			return
		}
		// Still calculating: the run as it is now.
		r, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.GetRun(ctx, tx, id)
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		status := http.StatusAccepted
		if !r.Calculating() && r.Status == payroll.RunCalculated && r.CalculatedAt.Equal(now.Truncate(time.Microsecond)) { // stored to the µs
			status = http.StatusOK // it ended while the wait ran out: this request's calculation
		}
		c.JSON(status, toPayrollRunJSON(r))
		return
	}
	if res.Refusal != nil {
		writeError(c, payrollError(res.Refusal)) // audited DENIED by the calculation (payroll.EndCalculation)
		return
	}
	c.JSON(http.StatusOK, toPayrollRunJSON(res.Run))
}

func (s *Server) approvePayrollRun(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	s.settleCalculationOf(c, id) // an abandoned mark would refuse the approval
	s.runMove(c, payroll.ActionApproveRun, func(ctx context.Context, tx db.BunTx, id string) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, id, s.now())
	})
}

// calculationCheckWait bounds the question to Temporal about an overdue calculating mark.
const calculationCheckWait = 2 * time.Second

// settleCalculation clears r's calculating mark when it is overdue (payroll.CalculationOverdue)
// and the run's calculation workflow is not running (internal/payroll/run.go: a mark no
// calculation will clear), and answers the run as it is then (r unchanged otherwise; when
// Temporal or the database does not answer, the mark stays and is logged).
func (s *Server) settleCalculation(c *gin.Context, r payroll.Run) payroll.Run {
	if !r.CalculationOverdue(s.now()) || s.deps.Temporal == nil {
		return r
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), calculationCheckWait)
	defer cancel()
	running, err := workflows.PayrollCalculationRunning(ctx, s.deps.Temporal, callerOf(c).Tenant, r.ID)
	if err != nil {
		s.deps.Log.Warn("payroll run: an overdue calculating mark could not be checked", "payroll_run_id", r.ID, "error", err)
		return r
	}
	if running {
		return r
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		cur, cleared, err := payroll.ClearAbandonedCalculation(ctx, tx, r.ID, r.CalculatingAt)
		if cleared {
			s.deps.Log.Warn("payroll run: the calculating mark of a calculation that ended without clearing it is cleared",
				"payroll_run_id", r.ID, "calculating_since", r.CalculatingAt)
		}
		return cur, err
	})
	if err != nil {
		s.deps.Log.Error("payroll run: an abandoned calculating mark stays", "payroll_run_id", r.ID, "error", err)
		return r
	}
	return out
}

// settleCalculationOf is settleCalculation of the run with id (nothing when it cannot be read:
// the route's own read answers that).
func (s *Server) settleCalculationOf(c *gin.Context, id string) {
	r, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.GetRun(ctx, tx, id)
	})
	if err == nil {
		s.settleCalculation(c, r)
	}
}

func (s *Server) cancelPayrollRun(c *gin.Context) {
	reason, ok := bindReason(c, false)
	if !ok {
		return
	}
	undo := mayUndoApproval(c)
	s.runMove(c, payroll.ActionCancelRun, func(ctx context.Context, tx db.BunTx, id string) (payroll.Run, error) {
		return payroll.CancelRun(ctx, tx, id, reason, undo, s.now())
	})
}

func (s *Server) lockPayrollRun(c *gin.Context) {
	s.runMove(c, payroll.ActionLockRun, func(ctx context.Context, tx db.BunTx, id string) (payroll.Run, error) {
		return payroll.LockRun(ctx, tx, id, s.now())
	})
}

// waitForRun waits for the workflow run's result while ctx lasts. The SDK's long poll for the
// result can end with its own deadline (or a transient answer of a loaded server) a moment before
// ctx does: that is no answer about the workflow, so it is asked again until the result comes
// or ctx ends (the caller then answers 202 with the run as it is).
func waitForRun(ctx context.Context, run client.WorkflowRun, out any) error {
	for {
		err := run.Get(ctx, out)
		if err == nil || ctx.Err() != nil {
			return err
		}
		var canceled *serviceerror.Canceled
		if !temporalerr.Transient(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) &&
			!errors.As(err, &canceled) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}
