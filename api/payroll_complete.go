package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/workflows"
)

// payrollCompleteJSON answers complete: the run's state, the completion's workflow, and once it
// has finished what it applied.
type payrollCompleteJSON struct {
	ID         string                      `json:"id"`
	Status     string                      `json:"status"`
	WorkflowID string                      `json:"workflowId"`
	Outcome    *payrollCompleteOutcomeJSON `json:"outcome"`
}

type payrollCompleteOutcomeJSON struct {
	EWARecovered   payroll.Tally              `json:"ewaRecovered"`
	LoansRecovered payroll.Tally              `json:"loanInstalmentsRecovered"`
	Refused        payroll.Tally              `json:"refused"`
	RefusedLines   []payroll.RefusedDeduction `json:"refusedLines"`
	Remittances    int                        `json:"remittancesStarted"`
	// ProductsCollected: the product mandates' collections, by kind (every product kind).
	ProductsCollected map[string]payroll.Tally `json:"productsCollected"`
}

// completePayrollRun is the operator's completion of a DISBURSED run whose FAILED entries are
// final (the run's own saga completes a run only when every entry is PAID: a FAILED entry may
// still be retried). It starts the run's one completion workflow (workflows.StartPayrollComplete:
// attached to when it runs or has completed) and answers its result (200), or 202 while it works
// on. The pre-check refuses a run that is not DISBURSED or COMPLETED (409
// PAYROLL_RUN_INVALID_STATE) and one with an entry being sent again (409
// PAYROLL_RUN_ENTRIES_UNSETTLED), audited DENIED; an accepted request is audited
// RequestPayrollRunCompletion with the operator, the completion itself CompletePayrollRun.
func (s *Server) completePayrollRun(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "this route needs Temporal"))
		return
	}
	caller := callerOf(c)
	_, ok = inTenantAudited(s, c, payroll.ActionRequestCompletion, payroll.TargetRun, id, func(ctx context.Context, tx db.BunTx) (struct{}, error) {
		r, err := payroll.CheckCompletable(ctx, tx, id)
		if err != nil || r.Status == payroll.RunCompleted {
			return struct{}{}, err
		}
		if err := payroll.CheckEntriesSettled(ctx, tx, id); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, audit.Write(ctx, tx, audit.Entry{Action: payroll.ActionRequestCompletion, Outcome: audit.Success,
			TargetType: payroll.TargetRun, TargetID: id, Details: map[string]string{"status": r.Status}})
	})
	if !ok {
		return
	}
	started, err := workflows.StartPayrollComplete(c.Request.Context(), s.deps.Temporal, s.taskQueue(), caller.Tenant, id)
	if err != nil {
		writeError(c, err)
		return
	}
	out := payrollCompleteJSON{ID: id, Status: payroll.RunDisbursed, WorkflowID: started.GetID()}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.sagaWait(0))
	defer cancel()
	var res workflows.PayrollCompleteResult
	if err := started.Get(ctx, &res); err != nil {
		var refused *temporal.ApplicationError
		if errors.Is(err, context.DeadlineExceeded) && c.Request.Context().Err() == nil {
			c.JSON(http.StatusAccepted, out) // still applying: GET /api/payroll/<id> shows COMPLETED
			return
		}
		if errors.As(err, &refused) {
			if rf, ok := payroll.CompleteRefusalOf(refused.Type()); ok {
				writeError(c, payrollError(&rf)) // the workflow refused (a retry raced the pre-check)
				return
			}
		}
		writeError(c, err)
		return
	}
	if res.Status == workflows.PayrollCompleteRefused { // a completion before a refusal failed its run
		rf, ok := payroll.CompleteRefusalOf(res.Code)
		if !ok {
			writeError(c, errors.New("payroll complete: the completion was refused with an unknown code "+res.Code))
			return
		}
		writeError(c, payrollError(&rf))
		return
	}
	out.Status = res.Run.Status
	if res.Status == workflows.PayrollAlreadyCompleted && res.Run.CompletionOutcome == nil {
		// Completed before the run recorded its completion (app migration 0087), by a workflow
		// whose history is gone: what it applied is not known here, and nothing was applied now.
		c.JSON(http.StatusOK, out)
		return
	}
	o := res.Outcome
	out.Outcome = &payrollCompleteOutcomeJSON{EWARecovered: o.EWA, LoansRecovered: o.Loans, Refused: o.Refused,
		RefusedLines: o.RefusedLines, Remittances: o.Remittances, ProductsCollected: map[string]payroll.Tally{}}
	for _, k := range payroll.ProductKinds {
		out.Outcome.ProductsCollected[k] = o.Products[k]
	}
	if out.Outcome.RefusedLines == nil {
		out.Outcome.RefusedLines = []payroll.RefusedDeduction{}
	}
	c.JSON(http.StatusOK, out)
}
