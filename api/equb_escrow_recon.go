package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/workflows"
)

// The equb escrow reconciliation's operator route (EQUB_ESCROW_RECON_ENABLED): a platform admin
// runs the EqubEscrowReconcile workflow over every tenant with escrow bindings now (the schedule
// runs it daily) and gets the drift per escrow account back. With the switch off it answers 503
// EQUB_ESCROW_RECON_DISABLED and starts nothing.

func (s *Server) equbEscrowReconRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/admin/equb/escrow-reconciliations", Auth: Platform, Body: BodyOptionalJSON,
			Summary: "Reconcile every equb escrow account's statement with the ledger's pool mirror now", Handler: s.reconcileEqubEscrow},
	}
}

// equbEscrowReconWait bounds how long the route waits for the run before answering 202 with its
// workflow id (the run goes on; its checks are stored per escrow account).
const equbEscrowReconWait = 60 * time.Second

// maxEscrowReconPartners bounds the partners one run may be restricted to.
const maxEscrowReconPartners = 10

type equbEscrowReconRequest struct {
	Partners []string `json:"partners"`
}

type equbEscrowCheckJSON struct {
	TenantID             string `json:"tenantId"`
	Partner              string `json:"partner"`
	EscrowAccount        string `json:"escrowAccount"`
	PeriodFrom           string `json:"periodFrom"`
	PeriodTo             string `json:"periodTo"`
	Cycles               int    `json:"cycles"`
	StatementLines       int    `json:"statementLines"`
	StatementNetSantim   int64  `json:"statementNetSantim"`
	PoolPostedSantim     int64  `json:"poolPostedSantim"`
	PoolPendingInSantim  int64  `json:"poolPendingInSantim"`
	PoolPendingOutSantim int64  `json:"poolPendingOutSantim"`
	DriftSantim          int64  `json:"driftSantim"`
	Status               string `json:"status"`
}

type equbEscrowPartnerJSON struct {
	Partner        string `json:"partner"`
	Accounts       int    `json:"accounts"`
	Drifted        int    `json:"drifted"`
	AbsDriftSantim int64  `json:"absDriftSantim"`
}

type equbEscrowReconJSON struct {
	WorkflowID string                  `json:"workflowId"`
	Status     string                  `json:"status"` // CLEAN, DRIFT, ERRORS, or RUNNING (202)
	Accounts   int                     `json:"accounts"`
	Drifted    int                     `json:"drifted"`
	Errors     int                     `json:"errors"`
	Checks     []equbEscrowCheckJSON   `json:"checks"`
	Partners   []equbEscrowPartnerJSON `json:"partners"`
}

func toEqubEscrowReconJSON(wfID string, rep workflows.EqubEscrowReconcileResult) equbEscrowReconJSON {
	out := equbEscrowReconJSON{WorkflowID: wfID, Status: "CLEAN", Accounts: rep.Accounts, Drifted: rep.Drifted, Errors: rep.Errors,
		Checks: []equbEscrowCheckJSON{}, Partners: []equbEscrowPartnerJSON{}}
	switch {
	case rep.Errors > 0:
		out.Status = "ERRORS"
	case rep.Drifted > 0:
		out.Status = "DRIFT"
	}
	for _, c := range rep.Checks {
		out.Checks = append(out.Checks, equbEscrowCheckJSON{TenantID: c.TenantID, Partner: c.Partner, EscrowAccount: c.EscrowAccount,
			PeriodFrom: c.PeriodFrom, PeriodTo: c.PeriodTo, Cycles: c.Cycles, StatementLines: c.StatementLines,
			StatementNetSantim: c.StatementNetSantim, PoolPostedSantim: c.PoolPostedSantim, PoolPendingInSantim: c.PoolPendingInSantim,
			PoolPendingOutSantim: c.PoolPendingOutSantim, DriftSantim: c.DriftSantim, Status: c.Status})
	}
	for _, p := range rep.Partners {
		out.Partners = append(out.Partners, equbEscrowPartnerJSON{Partner: p.Partner, Accounts: p.Accounts, Drifted: p.Drifted,
			AbsDriftSantim: p.AbsDriftSantim})
	}
	return out
}

// reconcileEqubEscrow validates the body, then (switch on) starts the run under an id of its
// own, audits the start (EqubEscrowReconciliationRun under the platform tenant) and answers the
// report: 200 with every escrow account's check, or 202 RUNNING when the run takes longer than
// equbEscrowReconWait.
func (s *Server) reconcileEqubEscrow(c *gin.Context) {
	var req equbEscrowReconRequest
	has, e := hasBody(c)
	if e == nil && has {
		e = bindJSON(c, &req)
	}
	if e != nil {
		writeError(c, e)
		return
	}
	if len(req.Partners) > maxEscrowReconPartners {
		writeError(c, fieldError(&field.Error{Field: "partners", Problem: "may name at most 10 partners"}))
		return
	}
	for _, p := range req.Partners {
		if err := field.Identifier("partners", p, 64); err != nil || !partnerName(p) {
			writeError(c, fieldError(&field.Error{Field: "partners", Problem: "must be partner names ([a-z0-9_-], 1 to 64 characters)"}))
			return
		}
	}
	if !s.deps.EqubEscrowRecon {
		writeError(c, equbRefusal(equb.CodeEscrowReconOff))
		return
	}
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "no Temporal client is configured"))
		return
	}
	ctx := c.Request.Context()
	cl := callerOf(c)
	// A new run each time: the request id may be the caller's, and a repeated one would name an
	// earlier run (its report answered as this request's).
	wfID := "equb-escrow-reconcile-manual-" + uuid.NewString()
	run, err := s.deps.Temporal.ExecuteWorkflow(ctx, workflows.StartOptions(wfID, s.taskQueue(), "", workflows.EqubEscrowReconcileScheduleID),
		workflows.EqubEscrowReconcileWorkflowName, workflows.EqubEscrowReconcileInput{Partners: req.Partners})
	if err != nil {
		s.deps.Log.Warn("equb escrow reconciliation not started", "request_id", requestID(c), "error", err)
		writeError(c, NewError(http.StatusServiceUnavailable, "TEMPORAL_UNAVAILABLE", "the reconciliation could not be started; try again"))
		return
	}
	if err := s.auditIn(ctx, crosstenant.PlatformTenant, cl.User.ID, audit.Entry{Action: "EqubEscrowReconciliationRun", Outcome: audit.Success,
		TargetType: "EqubEscrowReconciliation", TargetID: wfID, Details: map[string]any{"partners": req.Partners}}); err != nil {
		s.deps.Log.Warn("equb escrow reconciliation: audit row not written", "request_id", requestID(c), "error", err)
	}
	wctx, cancel := context.WithTimeout(ctx, equbEscrowReconWait)
	defer cancel()
	var rep workflows.EqubEscrowReconcileResult
	err = run.Get(wctx, &rep)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
	case wctx.Err() != nil && ctx.Err() == nil:
		c.JSON(http.StatusAccepted, equbEscrowReconJSON{WorkflowID: wfID, Status: "RUNNING", Checks: []equbEscrowCheckJSON{}, Partners: []equbEscrowPartnerJSON{}})
		return
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeEqubEscrowReconErrors && appErr.HasDetails():
		if derr := appErr.Details(&rep); derr != nil {
			writeError(c, NewError(http.StatusServiceUnavailable, "EQUB_ESCROW_RECON_FAILED", "the reconciliation failed; see its workflow "+wfID))
			return
		}
	case errors.As(err, &appErr) && appErr.Type() == equb.CodeEscrowReconOff:
		// The worker's switch is off while the API's is on.
		writeError(c, equbRefusal(equb.CodeEscrowReconOff))
		return
	default:
		s.deps.Log.Warn("equb escrow reconciliation failed", "workflow_id", wfID, "error", err)
		writeError(c, NewError(http.StatusServiceUnavailable, "EQUB_ESCROW_RECON_FAILED", "the reconciliation failed; see its workflow "+wfID))
		return
	}
	c.JSON(http.StatusOK, toEqubEscrowReconJSON(wfID, rep))
}

// partnerName reports whether p is a partner name as the bindings store them.
func partnerName(p string) bool {
	if p == "" || len(p) > 64 {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
