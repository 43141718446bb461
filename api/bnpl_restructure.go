package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/workflows"
)

// A platform operator restructures a BNPL agreement (POST /api/bnpl/agreements/<id>/restructure,
// Idem), as a loan is restructured (lending_servicing.go): the route's Resolve finds the
// agreement's business on the audited cross-tenant path (another id is 404), the change runs in
// that business's scope through row-level security, and the store (internal/bnpl/restructure.go)
// decides. It moves no money, so it is one transaction, not a saga. A write-off
// (POST /api/bnpl/agreements/<id>/write-off) moves money in the ledger, so it is a saga
// (workflows.BnplWriteOff; rules in internal/bnpl/writeoff.go).

// resolveBnplTenant scopes the request to the business whose agreement the path names (404
// BNPL_AGREEMENT_NOT_FOUND for no such agreement).
func (s *Server) resolveBnplTenant(c *gin.Context) {
	s.resolveTenantOf(c, `SELECT tenant_id FROM app.bnpl_agreements WHERE id = $1`,
		payrollError(bnpl.RefusalError(bnpl.CodeAgreementNotFound)))
}

type bnplRestructureRequest struct {
	Instalments *int    `json:"instalments"`
	FirstPeriod *string `json:"firstPeriod"`
	Reason      *string `json:"reason"`
}

type bnplRestructuredJSON struct {
	Agreement         bnplAgreementJSON `json:"agreement"`
	ScheduleVersion   int               `json:"scheduleVersion"`
	OutstandingSantim int64             `json:"outstandingSantim"`
	Superseded        []int             `json:"superseded"`
}

// restructureBnplAgreement replaces the agreement's DUE instalments by a new schedule of the same
// total (200 with the agreement, its whole schedule, superseded rows included), or answers the
// refusal (409, audited DENIED RestructureBnplAgreement; nothing else written).
func (s *Server) restructureBnplAgreement(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req bnplRestructureRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"instalments", req.Instalments != nil}, required{"firstPeriod", req.FirstPeriod != nil},
		required{"reason", req.Reason != nil}); e != nil {
		writeError(c, e)
		return
	}
	in := bnpl.RestructureRequest{Instalments: *req.Instalments, FirstPeriod: *req.FirstPeriod, Reason: *req.Reason}
	if err := in.Check(payroll.PeriodOf(s.now())); err != nil {
		writeError(c, fieldError(err))
		return
	}
	// In the resolved business's scope, through row-level security (as inLoanTenant): the
	// operator's authority is the route's guard.
	var out bnpl.Restructured
	ctx := c.Request.Context()
	err := tenancy.InBunTx(ctx, s.bun, func(tx db.BunTx) (err error) {
		out, err = bnpl.Restructure(ctx, tx, id, in, s.now())
		return err
	})
	if err != nil {
		s.payrollAnswer(c, bnpl.ActionRestructure, "BnplAgreement", id, err)
		return
	}
	superseded := out.Superseded
	if superseded == nil {
		superseded = []int{}
	}
	c.JSON(http.StatusOK, bnplRestructuredJSON{Agreement: toBnplAgreementJSON(out.Agreement), ScheduleVersion: out.Version,
		OutstandingSantim: out.OutstandingSantim, Superseded: superseded})
}

// --- write-off ---

type bnplWriteOffRequest struct {
	Reason *string `json:"reason"`
}

type bnplWriteOffJSON struct {
	Status         string     `json:"status"`
	AmountSantim   int64      `json:"amountSantim"`
	MerchantStatus string     `json:"merchantStatus"`
	Reason         string     `json:"reason"`
	LedgerTxID     *string    `json:"ledgerTxId"`
	RequestedBy    string     `json:"requestedBy"`
	RequestedAt    time.Time  `json:"requestedAt"`
	CompletedAt    *time.Time `json:"completedAt"`
	WorkflowID     string     `json:"workflowId"`
}

func toBnplWriteOffJSON(w bnpl.WriteOff) bnplWriteOffJSON {
	return bnplWriteOffJSON{Status: w.Status, AmountSantim: w.AmountSantim, MerchantStatus: w.MerchantStatus, Reason: w.Reason,
		LedgerTxID: bnplOptional(w.LedgerTxID), RequestedBy: w.RequestedBy, RequestedAt: w.RequestedAt, CompletedAt: w.CompletedAt,
		WorkflowID: w.WorkflowID}
}

type bnplWrittenOffJSON struct {
	Agreement bnplAgreementJSON `json:"agreement"`
	WriteOff  bnplWriteOffJSON  `json:"writeOff"`
}

// writeOffBnplAgreement writes off what the customer owes through the write-off saga
// (workflows.BnplWriteOff), started by runSaga under the workflow id the Idempotency-Key names:
// 200 with the agreement WRITTEN_OFF and its write-off, 202 while the ledger has not taken the
// journal, or the saga's refusal (409, audited DENIED WriteOffBnplAgreement; nothing else
// written). A run that failed is started again by its key (RestartFailed), taking its PENDING
// claim over; a key whose saga claimed another agreement is 422 IDEMPOTENCY_KEY_REUSED.
func (s *Server) writeOffBnplAgreement(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req bnplWriteOffRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"reason", req.Reason != nil}); e != nil {
		writeError(c, e)
		return
	}
	if err := bnpl.CheckWriteOffReason(*req.Reason); err != nil {
		writeError(c, fieldError(err))
		return
	}
	cl := callerOf(c)
	pending := func(wfID string) any {
		return writeOffPendingJSON{ID: id, Status: workflows.WriteOffPending, WorkflowID: wfID}
	}
	refused := func(code string) (*Error, bool) {
		r, ok := bnpl.RefusalOf(code)
		if !ok {
			return nil, false
		}
		return NewError(r.Status, code, r.Message), true
	}
	runSaga(s, c, sagaCall[workflows.BnplWriteOffAccepted, workflows.BnplWriteOffResult]{
		Workflow: workflows.BnplWriteOffWorkflowName,
		Input: workflows.BnplWriteOffInput{TenantID: cl.Tenant, AgreementID: id, Reason: *req.Reason, ActorID: cl.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: id,
		// A run that failed (the ledger unreachable for longer than its retries) leaves its claim
		// PENDING, which refuses every other run BNPL_WRITE_OFF_IN_PROGRESS: the same key starts
		// a new run, which BeginWriteOff hands that claim back to, and whose journal, keyed by the
		// agreement (bnpl.WriteOffLedgerKey), is posted once however many runs post it.
		RestartFailed: true,
		// A key whose saga claimed another agreement's write-off is no key for this one (a new run
		// under it would leave that claim to no one).
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			other, err := bnpl.ClaimedOtherWriteOff(ctx, tx, wfID, id)
			if err == nil && other {
				err = errIdemKeyOtherBnplWriteOff
			}
			return sagaPrecheck{}, err
		},
		// The update's id is the request's own: the server answers an update id a closed run
		// completed with that run's outcome instead of starting a new one, so under the fixed id
		// the failed run's 202 PENDING would be answered again for good. A running saga answers
		// every update alike, and a completed one is answered from its result (closedSaga).
		Update: workflows.BnplWriteOffAcceptedUpdate, UpdateID: workflows.BnplWriteOffAcceptedUpdateID + ":" + uuid.NewString(),
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return refused(app.Type()) },
		Accepted: func(wfID string, a workflows.BnplWriteOffAccepted) (int, any) {
			if a.Status == workflows.WriteOffWrittenOff {
				return http.StatusOK, bnplWrittenOffJSON{Agreement: toBnplAgreementJSON(a.Agreement), WriteOff: toBnplWriteOffJSON(a.WriteOff)}
			}
			return http.StatusAccepted, pending(wfID)
		},
		Pending: pending,
		Closed: func(_ string, res workflows.BnplWriteOffResult) (int, any, error) {
			if res.AgreementID != id {
				return 0, nil, errIdemKeyOtherBnplWriteOff
			}
			switch res.Status {
			case workflows.WriteOffWrittenOff:
				return http.StatusOK, bnplWrittenOffJSON{Agreement: toBnplAgreementJSON(res.Agreement), WriteOff: toBnplWriteOffJSON(res.WriteOff)}, nil
			case workflows.WriteOffRefused:
				if e, ok := refused(res.Code); ok {
					return 0, nil, e
				}
			}
			return 0, nil, errors.New("bnpl write-off: the saga ended " + res.Status + " " + res.Code)
		},
		LogAttrs: []any{"agreement_id", id},
	})
}

var errIdemKeyOtherBnplWriteOff = keyReused("wrote off another agreement")
