package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/workflows"
)

// The payroll disbursement routes: disburse (the run's saga, workflows/payroll_disburse.go, one
// per run), an operator's retry of a FAILED entry (workflows/payroll_disburse_retry.go), and the
// settlement view (each entry's transfer, totals by status). Both POSTs are Idem and move money,
// so they need payroll.approve; the settlement is read with payroll.view.

func (s *Server) payrollDisburseRoutes() []Route {
	const runs = "/api/payroll"
	return []Route{
		payrollMoneyRoute(runs+"/:id/disburse", "Pay an approved payroll run's net pay (the disbursement saga)", s.disbursePayrollRun),
		payrollMoneyRoute(runs+"/:id/entries/:entryId/retry", "Send a failed payroll entry's net pay again", s.retryPayrollEntry),
		payrollMoneyRoute(runs+"/:id/complete", "Complete a disbursed payroll run whose failed payments are final", s.completePayrollRun),
		payrollOrgRoute(http.MethodGet, runs+"/:id/settlement", "A payroll run's settlement: each entry's transfer and the totals by status", payrollView, s.payrollSettlement, BodyNone),
	}
}

// payrollMoneyRoute is a payroll route that moves money: a POST without a body that takes an
// Idempotency-Key (Idem) and needs payroll.approve.
func payrollMoneyRoute(path, summary string, h gin.HandlerFunc) Route {
	r := payrollOrgRoute(http.MethodPost, path, summary, payrollApprove, h, BodyNone)
	r.Idem = true
	return r
}

// payrollDisburseJSON answers disburse.
type payrollDisburseJSON struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	WorkflowID          string `json:"workflowId"`
	Sent                int    `json:"sent"`
	PaidWithoutTransfer int    `json:"paidWithoutTransfer"`
	FailedUnsent        int    `json:"failedUnsent"`
}

// disbursePayrollRun starts (or reaches) the run's disbursement saga and answers once the run is
// DISBURSING (202), or, when the saga has finished, with the run's state (200); a refusal comes
// from internal/payroll's table. The pre-check refuses in the database what the saga would: an
// unknown run (404), a run that is not APPROVED and not already the saga's (409, audited DENIED),
// an organization without a payroll account (409, audited DENIED).
func (s *Server) disbursePayrollRun(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	wfID := workflows.PayrollDisburseWorkflowID(id)
	_, ok = inTenantAudited(s, c, payroll.ActionDisburseRun, payroll.TargetRun, id, func(ctx context.Context, tx db.BunTx) (struct{}, error) {
		r, err := payroll.GetRun(ctx, tx, id)
		if err != nil || r.DisbursementWorkflowID == wfID {
			return struct{}{}, err
		}
		_, err = payroll.LoadDisbursePlan(ctx, tx, id, wfID)
		return struct{}{}, err
	})
	if !ok {
		return
	}
	// The update's id is the key's: a saga refused earlier under the run's id keeps its update's
	// answer, which the server would give again to the same id.
	keyID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		writeError(c, errors.New("payroll disburse: no idempotency scope on an Idem route"))
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.PayrollDisburseAccepted, workflows.PayrollDisburseResult]{
		Workflow:   workflows.PayrollDisburseWorkflowName,
		WorkflowID: wfID, RestartFailed: true,
		Input: workflows.PayrollDisburseInput{TenantID: caller.Tenant, RunID: id, ActorID: caller.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.PayrollDisburseAcceptedUpdate, UpdateID: keyID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return payrollDisburseRefusal(app.Type()) },
		Accepted: func(wfID string, a workflows.PayrollDisburseAccepted) (int, any) {
			return http.StatusAccepted, payrollDisburseJSON{ID: id, Status: a.Status, WorkflowID: wfID, Sent: a.Sent,
				PaidWithoutTransfer: a.PaidWithoutTransfer, FailedUnsent: a.FailedUnsent}
		},
		Pending: func(wfID string) any {
			return payrollDisburseJSON{ID: id, Status: payroll.RunDisbursing, WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.PayrollDisburseResult) (int, any, error) {
			return http.StatusOK, payrollDisburseJSON{ID: id, Status: r.Status, WorkflowID: wfID, Sent: r.Sent,
				PaidWithoutTransfer: r.PaidWithoutTransfer, FailedUnsent: r.FailedUnsent}, nil
		},
		LogAttrs: []any{"payroll_run_id", id},
	})
}

// payrollDisburseRefusal is the answer to a payroll saga's refusal code; ok is false for a code
// that is not one of the disbursement's.
func payrollDisburseRefusal(code string) (*Error, bool) {
	return sagaRefusal(payroll.DisburseRefusalOf(code))
}

// sagaRefusal is the answer to a refusal a saga's code names in internal/payroll's table (r, found
// there when ok; nothing when it is not).
func sagaRefusal(r payroll.Refusal, ok bool) (*Error, bool) {
	if !ok {
		return nil, false
	}
	return NewError(r.Status, r.Code, r.Message), true
}

// payrollRetryJSON answers retry.
type payrollRetryJSON struct {
	RunID         string  `json:"runId"`
	EntryID       string  `json:"entryId"`
	Status        string  `json:"status"`
	Attempt       int     `json:"attempt"`
	FailureReason *string `json:"failureReason"`
	WorkflowID    string  `json:"workflowId"`
}

// retryPayrollEntry sends a FAILED entry again through its own saga (the key's) and answers once
// it is claimed (202 DISBURSING), or, when that saga has finished, with its outcome (200 PAID or
// FAILED). The pre-check answers an unknown run or entry (404), an entry that is not FAILED or
// a run that is not DISBURSING or DISBURSED (409), and a caller who set the new payout account
// it would go to (403 PAYROLL_SELF_APPROVAL), audited DENIED — unless this key's saga holds the
// entry.
func (s *Server) retryPayrollEntry(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	entryID := c.Param("entryId")
	if err := field.Identifier("entryId", entryID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	wfID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		writeError(c, errors.New("payroll retry: no idempotency scope on an Idem route"))
		return
	}
	_, ok = inTenantAudited(s, c, payroll.ActionRetryEntry, payroll.TargetEntry, entryID, func(ctx context.Context, tx db.BunTx) (struct{}, error) {
		r, err := payroll.GetRun(ctx, tx, id)
		if err != nil {
			return struct{}{}, err
		}
		e, err := payroll.GetEntry(ctx, tx, id, entryID)
		if err != nil || e.RetryWorkflowID == wfID {
			return struct{}{}, err
		}
		if r.Status != payroll.RunDisbursing && r.Status != payroll.RunDisbursed {
			return struct{}{}, &payroll.Refusal{Code: payroll.CodeRunInvalidState, Status: http.StatusConflict,
				Message: "a payroll run that is " + r.Status + " has no failed payment to send again",
				Details: map[string]any{"status": r.Status, "allowedFrom": []string{payroll.RunDisbursing, payroll.RunDisbursed}}}
		}
		if !r.CompletingAt.IsZero() {
			rf, _ := payroll.DisburseRefusalOf(payroll.CodeRunCompleting)
			rf.Details = map[string]any{"status": r.Status, "completingAt": r.CompletingAt.UTC()}
			return struct{}{}, &rf
		}
		if e.Status != payroll.EntryFailed {
			rf, _ := payroll.DisburseRefusalOf(payroll.CodeEntryInvalidState)
			rf.Details = map[string]any{"status": e.Status, "allowedFrom": []string{payroll.EntryFailed}}
			return struct{}{}, &rf
		}
		_, err = payroll.RetryPayout(ctx, tx, e)
		return struct{}{}, err
	})
	if !ok {
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.PayrollEntryRetryAccepted, workflows.PayrollEntryRetryResult]{
		Workflow: workflows.PayrollEntryRetryWorkflowName,
		Input: workflows.PayrollEntryRetryInput{TenantID: caller.Tenant, RunID: id, EntryID: entryID, ActorID: caller.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: entryID,
		Update:      workflows.PayrollEntryRetryAcceptedUpdate, UpdateID: workflows.PayrollEntryRetryAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return payrollDisburseRefusal(app.Type()) },
		Accepted: func(wfID string, a workflows.PayrollEntryRetryAccepted) (int, any) {
			return http.StatusAccepted, payrollRetryJSON{RunID: id, EntryID: entryID, Status: a.Status, Attempt: a.Attempt, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return payrollRetryJSON{RunID: id, EntryID: entryID, Status: payroll.EntryDisbursing, WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.PayrollEntryRetryResult) (int, any, error) {
			if r.Status == workflows.ResultRefused {
				if e, ok := payrollDisburseRefusal(r.Code); ok {
					return 0, nil, e
				}
				return 0, nil, errors.New("payroll retry: the saga was refused with an unknown code " + r.Code)
			}
			out := payrollRetryJSON{RunID: id, EntryID: entryID, Status: r.Status, Attempt: r.Attempt, WorkflowID: wfID}
			if r.Code != "" {
				out.FailureReason = &r.Code
			}
			return http.StatusOK, out, nil
		},
		LogAttrs: []any{"payroll_run_id", id, "payroll_entry_id", entryID},
	})
}

// payrollSettlementItemJSON is one entry's transfer.
type payrollSettlementItemJSON struct {
	EntryID           string     `json:"entryId"`
	EmployeeID        string     `json:"employeeId"`
	Status            string     `json:"status"`
	NetSantim         int64      `json:"netSantim"`
	Attempts          int        `json:"attempts"`
	TransferReference *string    `json:"transferReference"`
	TransferID        *string    `json:"transferId"`
	FailureReason     *string    `json:"failureReason"`
	PaidAt            *time.Time `json:"paidAt"`
	UpdatedAt         time.Time  `json:"updatedAt"`
}

type payrollSettlementTotalJSON struct {
	Status    string `json:"status"`
	Entries   int    `json:"entries"`
	NetSantim int64  `json:"netSantim"`
}

type payrollSettlementJSON struct {
	RunID  string                       `json:"runId"`
	Status string                       `json:"status"`
	Totals []payrollSettlementTotalJSON `json:"totals"`
	itemsPage[payrollSettlementItemJSON]
}

func toPayrollSettlementItemJSON(e payroll.Entry) payrollSettlementItemJSON {
	return payrollSettlementItemJSON{EntryID: e.ID, EmployeeID: e.EmployeeID, Status: e.Status, NetSantim: e.NetSantim,
		Attempts: e.Attempts, TransferReference: optionalString(e.TransferReference), TransferID: optionalString(e.TransferID),
		FailureReason: optionalString(e.FailureReason), PaidAt: optionalTime(e.PaidAt), UpdatedAt: e.UpdatedAt.UTC()}
}

// payrollSettlement answers the run's entries with their transfers (paged by entry id, filtered
// by status) and the totals by status over the whole run.
func (s *Server) payrollSettlement(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var status string
	limit, cursor, ok := pagedFilters(c, statusParam(&status, payroll.EntryStatuses...))
	if !ok {
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payrollSettlementJSON, error) {
		r, err := payroll.GetRun(ctx, tx, id)
		if err != nil {
			return payrollSettlementJSON{}, err
		}
		rows, err := payroll.ListEntries(ctx, tx, id, payroll.EntryFilter{Status: status, After: cursor, Limit: limit + 1})
		if err != nil {
			return payrollSettlementJSON{}, err
		}
		totals, err := payroll.SettlementTotals(ctx, tx, id)
		if err != nil {
			return payrollSettlementJSON{}, err
		}
		out := payrollSettlementJSON{RunID: r.ID, Status: r.Status,
			itemsPage: itemsPageOf(rows, limit, func(e payroll.Entry) string { return e.ID }, toPayrollSettlementItemJSON)}
		for _, t := range totals {
			out.Totals = append(out.Totals, payrollSettlementTotalJSON{Status: t.Status, Entries: t.Entries, NetSantim: t.NetSantim})
		}
		return out, nil
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, out)
}

// payrollDisbursementJSON is GET /api/payroll/<id>'s disbursement: the saga, and while the run is
// DISBURSING the progress of its payments.
type payrollDisbursementJSON struct {
	WorkflowID   string                           `json:"workflowId"`
	DisbursingBy string                           `json:"disbursingBy"`
	DisbursingAt time.Time                        `json:"disbursingAt"`
	DisbursedAt  *time.Time                       `json:"disbursedAt"`
	Progress     *payrollDisbursementProgressJSON `json:"progress"`
}

type payrollDisbursementProgressJSON struct {
	Items         int   `json:"items"`
	Batches       int   `json:"batches"`
	BatchesDone   int   `json:"batchesDone"`
	Settled       int   `json:"settled"`
	Failed        int   `json:"failed"`
	SettledSantim int64 `json:"settledSantim"`
	FailedSantim  int64 `json:"failedSantim"`
}

// payrollDisbursement is the run's disbursement (nil before it), with progress while the run is
// DISBURSING: counted from the entries the record steps write, in the read's transaction
// (payroll.ReadDisbursementProgress). It used to ask the fan-out (a workflow query), which
// counted a batch's items only once the whole batch was done and made every read of a paying run
// wait on a round trip through Temporal to the worker, busy paying: the slowest part of the read
// by far (see the payroll benchmark's GET latencies).
func payrollDisbursement(r payroll.Run, p *payroll.DisbursementProgress) *payrollDisbursementJSON {
	if r.DisbursementWorkflowID == "" {
		return nil
	}
	out := &payrollDisbursementJSON{WorkflowID: r.DisbursementWorkflowID, DisbursingBy: r.DisbursingBy,
		DisbursingAt: r.DisbursingAt.UTC(), DisbursedAt: optionalTime(r.DisbursedAt)}
	if r.Status == payroll.RunDisbursing && p != nil {
		out.Progress = &payrollDisbursementProgressJSON{Items: p.Items, Batches: p.Batches, BatchesDone: p.BatchesDone, Settled: p.Settled,
			Failed: p.Failed, SettledSantim: p.SettledSantim, FailedSantim: p.FailedSantim}
	}
	return out
}
