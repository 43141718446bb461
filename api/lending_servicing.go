package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/workflows"
)

// Servicing a paid-out loan (issue 24): a platform operator restructures it (POST
// /api/loans/<id>/restructure, Idem) or writes it off once DEFAULTED and approved by its FI (POST
// /api/loans/<id>/write-off, Idem: the write-off saga, workflows.LoanWriteOff); the FI approves
// the write-off (POST /api/fi/loans/<id>/write-off-approval, loans.approve); the business and the
// FI read the loan's servicing record — its delinquency, its schedule versions, its write-off
// (GET /api/loans/<id>/servicing, /api/fi/loans/<id>/servicing). Rules:
// internal/lending/delinquency.go, restructure.go, writeoff.go.
//
// An operator is platform staff, a member of no business: the operator routes find the loan's
// business from the loan id on the audited cross-tenant path (resolveLoanTenant: one
// CrossTenantAccess row per call) and then act in that business's scope as the operator, so the
// idempotency key, the audit rows (RestructureLoan, WriteOffLoan, DENIED ones included) and the
// saga's TenantId are the business's. A caller who is neither an operator nor a platform admin is
// refused by the route's guard (403 OPERATOR_REQUIRED, audited AccessRoute DENIED).

func (s *Server) loanServicingRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/loans/:id/restructure", Auth: Operator, Idem: true, Resolve: s.resolveLoanTenant,
			Summary: "Restructure an ACTIVE or DEFAULTED loan: a new schedule for its principal outstanding (operator)", Handler: s.restructureLoan},
		{Method: http.MethodPost, Path: "/api/loans/:id/write-off", Auth: Operator, Idem: true, Resolve: s.resolveLoanTenant,
			Summary: "Write off a DEFAULTED loan its FI approved the write-off of (operator; the write-off saga)", Handler: s.writeOffLoan},
		s.bizRoute(http.MethodGet, "/api/loans/:id/servicing", "A loan's delinquency, schedule versions and write-off", orgs.PlainMember, s.loanServicing, BodyByMethod),
		s.fiRoute(http.MethodGet, "/api/fi/loans/:id/servicing", "The delinquency, schedule versions and write-off of a loan the financial institution funds", orgs.LoansView, s.fiLoanServicing, BodyByMethod),
		s.fiRoute(http.MethodPost, "/api/fi/loans/:id/write-off-approval", "Approve the write-off of a DEFAULTED loan the financial institution funds", orgs.LoansApprove, s.approveLoanWriteOff, BodyByMethod),
	}
}

// resolveLoanTenant puts the business of the path's loan into the request (the Resolve step of
// the operator loan routes): 400 for an id that is no identifier, 404 LOAN_NOT_FOUND for a loan
// that is nowhere.
func (s *Server) resolveLoanTenant(c *gin.Context) {
	s.resolveTenantOf(c, `SELECT tenant_id FROM app.loans WHERE id = $1`, payrollError(lending.ErrLoanNotFound))
}

// inLoanTenant runs fn in the resolved business's scope as the operator, through row-level
// security (the operator's authority is the route's guard; the business was found on the audited
// cross-tenant path).
func inLoanTenant[T any](s *Server, c *gin.Context, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	var out T
	ctx := c.Request.Context()
	err := tenancy.InBunTx(ctx, s.bun, func(tx db.BunTx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// --- JSON ---

type loanDelinquencyJSON struct {
	DaysPastDue       int        `json:"daysPastDue"`
	Bucket            string     `json:"bucket"`
	OldestUnpaidIndex *int       `json:"oldestUnpaidIndex"`
	OldestOverdueAt   *time.Time `json:"oldestOverdueAt"`
	ChangedAt         *time.Time `json:"changedAt"`
}

type scheduleVersionJSON struct {
	Version                    int               `json:"version"`
	FromStatus                 string            `json:"fromStatus"`
	PrincipalOutstandingSantim int64             `json:"principalOutstandingSantim"`
	AnnualRateBasisPoints      int64             `json:"annualRateBasisPoints"`
	TermMonths                 int               `json:"termMonths"`
	FirstDuePeriod             string            `json:"firstDuePeriod"`
	CarriedFeeSantim           int64             `json:"carriedFeeSantim"`
	WaivedInterestSantim       int64             `json:"waivedInterestSantim"`
	Reason                     string            `json:"reason"`
	RestructuredBy             string            `json:"restructuredBy"`
	RestructuredAt             time.Time         `json:"restructuredAt"`
	Previous                   []json.RawMessage `json:"previous"`
	Instalments                []json.RawMessage `json:"instalments"`
}

func toScheduleVersionJSON(v lending.ScheduleVersion) scheduleVersionJSON {
	out := scheduleVersionJSON{Version: v.Version, FromStatus: v.FromStatus, PrincipalOutstandingSantim: v.PrincipalOutstandingSantim,
		AnnualRateBasisPoints: v.AnnualRateBasisPoints, TermMonths: v.TermMonths, FirstDuePeriod: v.FirstDuePeriod,
		CarriedFeeSantim: v.CarriedFeeSantim, WaivedInterestSantim: v.WaivedInterestSantim, Reason: v.Reason,
		RestructuredBy: v.RestructuredBy, RestructuredAt: v.RestructuredAt.UTC(), Previous: []json.RawMessage{}, Instalments: []json.RawMessage{}}
	_ = json.Unmarshal(v.Previous, &out.Previous)
	_ = json.Unmarshal(v.Instalments, &out.Instalments)
	return out
}

type writeOffApprovalJSON struct {
	LoanID          string    `json:"loanId"`
	ScheduleVersion int       `json:"scheduleVersion"`
	Reason          string    `json:"reason"`
	ApprovedBy      string    `json:"approvedBy"`
	ApprovedAt      time.Time `json:"approvedAt"`
}

func toWriteOffApprovalJSON(a lending.WriteOffApproval) writeOffApprovalJSON {
	return writeOffApprovalJSON{LoanID: a.LoanID, ScheduleVersion: a.ScheduleVersion, Reason: a.Reason, ApprovedBy: a.ApprovedBy,
		ApprovedAt: a.ApprovedAt.UTC()}
}

type writeOffJSON struct {
	Status          string     `json:"status"`
	AmountSantim    int64      `json:"amountSantim"`
	ScheduleVersion int        `json:"scheduleVersion"`
	Reason          string     `json:"reason"`
	LedgerTxID      *string    `json:"ledgerTxId"`
	FailureReason   *string    `json:"failureReason"`
	WorkflowID      string     `json:"workflowId"`
	RequestedBy     string     `json:"requestedBy"`
	RequestedAt     time.Time  `json:"requestedAt"`
	CompletedAt     *time.Time `json:"completedAt"`
}

func toWriteOffJSON(w lending.WriteOff) *writeOffJSON {
	return &writeOffJSON{Status: w.Status, AmountSantim: w.AmountSantim, ScheduleVersion: w.ScheduleVersion, Reason: w.Reason,
		LedgerTxID: w.LedgerTxID, FailureReason: w.FailureReason, WorkflowID: w.WorkflowID, RequestedBy: w.RequestedBy,
		RequestedAt: w.RequestedAt.UTC(), CompletedAt: utcPtr(w.CompletedAt)}
}

type loanServicingJSON struct {
	LoanID            string                 `json:"loanId"`
	Status            string                 `json:"status"`
	ScheduleVersion   int                    `json:"scheduleVersion"`
	Delinquency       loanDelinquencyJSON    `json:"delinquency"`
	ScheduleVersions  []scheduleVersionJSON  `json:"scheduleVersions"`
	WriteOffApprovals []writeOffApprovalJSON `json:"writeOffApprovals"`
	WriteOff          *writeOffJSON          `json:"writeOff"`
}

func loanServicingOf(ctx context.Context, tx db.BunTx, l lending.Loan) (loanServicingJSON, error) {
	out := loanServicingJSON{LoanID: l.ID, Status: l.Status, ScheduleVersions: []scheduleVersionJSON{}, WriteOffApprovals: []writeOffApprovalJSON{}}
	d, err := lending.GetDelinquency(ctx, tx, l)
	if err != nil {
		return out, err
	}
	out.Delinquency = loanDelinquencyJSON{DaysPastDue: d.DaysPastDue, Bucket: d.Bucket, OldestUnpaidIndex: d.OldestUnpaidIdx,
		OldestOverdueAt: d.OldestOverdueAt, ChangedAt: d.ChangedAt}
	vs, err := lending.ScheduleVersions(ctx, tx, l)
	if err != nil {
		return out, err
	}
	out.ScheduleVersion = 1
	for _, v := range vs {
		out.ScheduleVersions = append(out.ScheduleVersions, toScheduleVersionJSON(v))
		out.ScheduleVersion = v.Version
	}
	as, err := lending.WriteOffApprovals(ctx, tx, l)
	if err != nil {
		return out, err
	}
	for _, a := range as {
		out.WriteOffApprovals = append(out.WriteOffApprovals, toWriteOffApprovalJSON(a))
	}
	w, ok, err := lending.GetWriteOff(ctx, tx, l)
	if err != nil {
		return out, err
	}
	if ok {
		out.WriteOff = toWriteOffJSON(w)
	}
	return out, nil
}

// --- reads ---

func (s *Server) loanServicingAs(c *gin.Context, p lending.Party) {
	answerPathRow(s, c, "", "", func(ctx context.Context, tx db.BunTx, id string) (loanServicingJSON, error) {
		l, err := lending.GetLoan(ctx, tx, p, id)
		if err != nil {
			return loanServicingJSON{}, err
		}
		return loanServicingOf(ctx, tx, l)
	}, func(out loanServicingJSON) loanServicingJSON { return out })
}

func (s *Server) loanServicing(c *gin.Context)   { s.loanServicingAs(c, lending.Business) }
func (s *Server) fiLoanServicing(c *gin.Context) { s.loanServicingAs(c, lending.Lender) }

// --- restructure ---

type restructureRequest struct {
	TermMonths            *int    `json:"termMonths"`
	AnnualRateBasisPoints *int64  `json:"annualRateBasisPoints"`
	Reason                *string `json:"reason"`
}

type restructuredJSON struct {
	Loan            loanJSON            `json:"loan"`
	ScheduleVersion scheduleVersionJSON `json:"scheduleVersion"`
}

// restructureLoan restructures the loan (200 with the loan, its instalments the new schedule,
// and the version record) and nudges its delinquency watch (signal-with-start), so the new
// schedule's bucket is recorded at once.
func (s *Server) restructureLoan(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req restructureRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"termMonths", req.TermMonths != nil}, required{"reason", req.Reason != nil}); e != nil {
		writeError(c, e)
		return
	}
	in := lending.RestructureRequest{TermMonths: *req.TermMonths, AnnualRateBasisPoints: req.AnnualRateBasisPoints, Reason: *req.Reason}
	if err := in.Check(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, err := inLoanTenant(s, c, func(ctx context.Context, tx db.BunTx) (lending.Restructured, error) {
		return lending.Restructure(ctx, tx, id, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "RestructureLoan", "Loan", id, err)
		return
	}
	s.nudgeDelinquency(c, out.Loan)
	c.JSON(http.StatusOK, restructuredJSON{Loan: toLoanJSON(out.Loan), ScheduleVersion: toScheduleVersionJSON(out.Version)})
}

// nudgeDelinquency asks the loan's delinquency watch to check now (starting it if it is not
// running). Best effort: the restructure is committed, and the watch's next timer sees it anyway.
func (s *Server) nudgeDelinquency(c *gin.Context, l lending.Loan) {
	if s.deps.Temporal == nil {
		return
	}
	in := workflows.LoanDelinquencyInput{TenantID: l.TenantID, LoanID: l.ID, CorrelationID: requestID(c)}
	if err := workflows.NudgeLoanDelinquency(c.Request.Context(), s.deps.Temporal, s.taskQueue(), in); err != nil {
		s.deps.Log.Warn("loan delinquency watch not nudged", "loan_id", l.ID, "request_id", requestID(c), "error", err)
	}
}

// --- write-off ---

type writtenOffJSON struct {
	Loan     loanJSON      `json:"loan"`
	WriteOff *writeOffJSON `json:"writeOff"`
}

// writeOffPendingJSON is the 202 answer: the write-off is claimed and its journal not yet in the
// ledger; the saga goes on, and the loan shows WRITTEN_OFF once it is recorded.
type writeOffPendingJSON struct {
	ID         string `json:"id"`
	Status     string `json:"status"` // PENDING
	WorkflowID string `json:"workflowId"`
}

func servicingRefusal(code string) (*Error, bool) {
	r, ok := lending.ServicingRefusal(code)
	if !ok {
		return nil, false
	}
	return NewError(r.Status, r.Code, r.Message), true
}

// writeOffLoan writes the loan off through the write-off saga, started by runSaga under the
// workflow id the Idempotency-Key names: 200 with the loan WRITTEN_OFF and its write-off, 202
// while the ledger has not taken the journal.
func (s *Server) writeOffLoan(c *gin.Context) {
	id, reason, ok := pathReason(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	pending := func(wfID string) any {
		return writeOffPendingJSON{ID: id, Status: workflows.WriteOffPending, WorkflowID: wfID}
	}
	runSaga(s, c, sagaCall[workflows.WriteOffAccepted, workflows.LoanWriteOffResult]{
		Workflow: workflows.LoanWriteOffWorkflowName,
		Input: workflows.LoanWriteOffInput{TenantID: cl.Tenant, LoanID: id, Reason: reason, ActorID: cl.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.WriteOffAcceptedUpdate, UpdateID: workflows.WriteOffAcceptedUpdateID,
		// Refuse what the saga would refuse before starting one — unless this key's saga holds the
		// loan's write-off: then its answer is the answer.
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			owner, err := lending.CheckWriteOff(ctx, tx, cl.Tenant, id, wfID)
			var e *Error
			if err != nil {
				if code := refusalCode(err); code != "" && code != lending.CodeLoanNotFound {
					e, _ = servicingRefusal(code)
					return sagaPrecheck{Owner: owner}, refuse(e.Status, e.Code, e.Message, "WriteOffLoan", "Loan", id)
				}
				return sagaPrecheck{Owner: owner}, payrollError(err)
			}
			return sagaPrecheck{Owner: owner}, nil
		},
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return servicingRefusal(app.Type()) },
		Accepted: func(wfID string, a workflows.WriteOffAccepted) (int, any) {
			if a.Status == workflows.WriteOffWrittenOff {
				return http.StatusOK, writtenOffJSON{Loan: toLoanJSON(a.Loan), WriteOff: toWriteOffJSON(a.WriteOff)}
			}
			return http.StatusAccepted, pending(wfID)
		},
		Pending: pending,
		Closed: func(_ string, res workflows.LoanWriteOffResult) (int, any, error) {
			if res.LoanID != id {
				return 0, nil, errIdemKeyOtherWriteOff
			}
			switch res.Status {
			case workflows.WriteOffWrittenOff:
				return http.StatusOK, writtenOffJSON{Loan: toLoanJSON(res.Loan), WriteOff: toWriteOffJSON(res.WriteOff)}, nil
			case workflows.WriteOffRefused:
				if e, ok := servicingRefusal(res.Code); ok {
					return 0, nil, e
				}
			}
			return 0, nil, errors.New("loan write-off: the saga ended " + res.Status + " " + res.Code)
		},
		LogAttrs: []any{"loan_id", id},
	})
}

var errIdemKeyOtherWriteOff = keyReused("wrote off another loan")

// refusalCode is the code of a lending refusal, "" for another error.
func refusalCode(err error) string {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return ""
}

// --- the FI's approval ---

// approveLoanWriteOff records the FI's approval: 201, or 200 with the approval already recorded
// for the loan's schedule version (nothing written).
func (s *Server) approveLoanWriteOff(c *gin.Context) {
	id, reason, ok := pathReason(c)
	if !ok {
		return
	}
	type approved struct {
		a       lending.WriteOffApproval
		created bool
	}
	out, ok := inTenantAudited(s, c, "ApproveLoanWriteOff", "Loan", id, func(ctx context.Context, tx db.BunTx) (approved, error) {
		a, created, err := lending.ApproveWriteOff(ctx, tx, id, reason, s.now())
		return approved{a, created}, err
	})
	if !ok {
		return
	}
	status := http.StatusOK
	if out.created {
		status = http.StatusCreated
	}
	c.JSON(status, toWriteOffApprovalJSON(out.a))
}
