package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Payroll inputs: one-time earnings (this file) and overtime policies and entries
// (payroll_overtime.go), under /api/payroll. Every route needs an admin or owner of the active
// organization with the payroll permission of its row: view to read, edit to record, approve to
// approve, reverse or activate (voiding an APPROVED earning also needs approve; the store checks
// it, as it depends on the earning's state). The rules and states live in internal/payroll; a
// refusal by a rule is audited DENIED (payrollAnswer). None of these routes moves money (a
// payroll run pays them), so none takes an Idempotency-Key: a create retried after a lost answer
// records a second PENDING input, which its approver sees and voids.

// payrollEarningRoutes serves one-time earnings, overtime policies and overtime entries.
func (s *Server) payrollEarningRoutes() []Route {
	org := payrollOrgRoute
	const earnings, policies, entries = "/api/payroll/one-time-earnings", "/api/payroll/overtime-policies", "/api/payroll/overtime-entries"
	return []Route{
		org(http.MethodPost, earnings, "Record a one-time earning (bonus, arrears, commission, other)", payrollEdit, s.createOneTimeEarning, BodyJSON),
		org(http.MethodGet, earnings, "The organization's one-time earnings (paged, filtered)", payrollView, s.listOneTimeEarnings, BodyNone),
		org(http.MethodGet, earnings+"/:id", "One one-time earning", payrollView, s.getOneTimeEarning, BodyNone),
		org(http.MethodPost, earnings+"/:id/approve", "Approve a one-time earning (not its creator)", payrollApprove, s.approveOneTimeEarning, BodyNone),
		org(http.MethodPost, earnings+"/:id/void", "Void a one-time earning that has not been paid", payrollEdit, s.voidOneTimeEarning, BodyOptionalJSON),
		org(http.MethodPost, earnings+"/:id/reverse", "Reverse a paid one-time earning (taken back in the current period)", payrollApprove, s.reverseOneTimeEarning, BodyJSON),
		org(http.MethodPost, policies, "Record an overtime policy (DRAFT)", payrollEdit, s.createOvertimePolicy, BodyJSON),
		org(http.MethodGet, policies, "The organization's overtime policies and the effective one", payrollView, s.listOvertimePolicies, BodyNone),
		org(http.MethodPost, policies+"/:id/activate", "Make an overtime policy the active one", payrollApprove, s.activateOvertimePolicy, BodyNone),
		org(http.MethodPost, entries, "Record overtime worked", payrollEdit, s.createOvertimeEntry, BodyJSON),
		org(http.MethodGet, entries, "The organization's overtime entries (paged, filtered)", payrollView, s.listOvertimeEntries, BodyNone),
		org(http.MethodGet, entries+"/:id", "One overtime entry", payrollView, s.getOvertimeEntry, BodyNone),
		org(http.MethodPost, entries+"/:id/approve", "Approve an overtime entry (not its creator)", payrollApprove, s.approveOvertimeEntry, BodyNone),
	}
}

// payrollEarningJSON is a one-time earning as every response shows it (absent values null).
type payrollEarningJSON struct {
	ID             string              `json:"id"`
	EmployeeID     string              `json:"employeeId"`
	Period         string              `json:"period"`
	Kind           payroll.EarningKind `json:"kind"`
	AmountSantim   int64               `json:"amountSantim"`
	Taxable        bool                `json:"taxable"`
	Description    string              `json:"description"`
	Reference      *string             `json:"reference"`
	Status         string              `json:"status"`
	CreatedBy      string              `json:"createdBy"`
	CreatedAt      time.Time           `json:"createdAt"`
	ApprovedBy     *string             `json:"approvedBy"`
	ApprovedAt     *time.Time          `json:"approvedAt"`
	VoidedBy       *string             `json:"voidedBy"`
	VoidedAt       *time.Time          `json:"voidedAt"`
	VoidReason     *string             `json:"voidReason"`
	ReversedBy     *string             `json:"reversedBy"`
	ReversedAt     *time.Time          `json:"reversedAt"`
	ReversalReason *string             `json:"reversalReason"`
	ReversalPeriod *string             `json:"reversalPeriod"`
	UpdatedAt      time.Time           `json:"updatedAt"`
}

func toPayrollEarningJSON(e payroll.OneTimeEarning) payrollEarningJSON {
	return payrollEarningJSON{ID: e.ID, EmployeeID: e.EmployeeID, Period: e.Period, Kind: e.Kind, AmountSantim: e.AmountSantim,
		Taxable: e.Taxable, Description: e.Description, Reference: optionalString(e.Reference), Status: e.Status,
		CreatedBy: e.CreatedBy, CreatedAt: e.CreatedAt.UTC(), ApprovedBy: optionalString(e.ApprovedBy), ApprovedAt: optionalTime(e.ApprovedAt),
		VoidedBy: optionalString(e.VoidedBy), VoidedAt: optionalTime(e.VoidedAt), VoidReason: optionalString(e.VoidReason),
		ReversedBy: optionalString(e.ReversedBy), ReversedAt: optionalTime(e.ReversedAt), ReversalReason: optionalString(e.ReversalReason),
		ReversalPeriod: optionalString(e.ReversalPeriod), UpdatedAt: e.UpdatedAt.UTC()}
}

type payrollEarningRequest struct {
	EmployeeID   *string `json:"employeeId"`
	Period       *string `json:"period"`
	Kind         *string `json:"kind"`
	AmountSantim *int64  `json:"amountSantim"`
	Taxable      *bool   `json:"taxable"`
	Description  *string `json:"description"`
	Reference    *string `json:"reference"`
}

// payrollRequest is a create's body; input checks it into the store's input (a *field.Error when
// it is refused).
type payrollRequest[N any] interface {
	input() (N, error)
}

// bindPayrollInput binds a create's body (R) and checks it (input: a rule's refusal answered as
// itself, any other error as the 400 of its field); it has answered when ok is false.
func bindPayrollInput[R payrollRequest[N], N any](c *gin.Context) (N, bool) {
	var req R
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		var zero N
		return zero, false
	}
	in, err := req.input()
	if err != nil {
		var r *payroll.Refusal
		if errors.As(err, &r) {
			writeError(c, payrollError(err))
		} else {
			writeError(c, fieldError(err))
		}
		return in, false
	}
	return in, true
}

func (r payrollEarningRequest) input() (payroll.NewOneTimeEarning, error) {
	if err := pmRequired("employeeId", r.EmployeeID == nil, "period", r.Period == nil, "kind", r.Kind == nil,
		"amountSantim", r.AmountSantim == nil, "taxable", r.Taxable == nil); err != nil {
		return payroll.NewOneTimeEarning{}, err
	}
	n := payroll.NewOneTimeEarning{EmployeeID: *r.EmployeeID, Period: *r.Period, Kind: payroll.EarningKind(*r.Kind),
		AmountSantim: *r.AmountSantim, Taxable: *r.Taxable}
	if r.Description != nil {
		n.Description = *r.Description
	}
	if r.Reference != nil {
		n.Reference = *r.Reference
		if n.Reference == "" {
			return n, &field.Error{Field: "reference", Problem: "must not be empty (leave it out instead)"}
		}
	}
	return n, n.Validate()
}

func (s *Server) createOneTimeEarning(c *gin.Context) {
	in, ok := bindPayrollInput[payrollEarningRequest](c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, payroll.ActionCreateEarning, "Employee", in.EmployeeID, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.CreateOneTimeEarning(ctx, tx, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toPayrollEarningJSON(out))
	}
}

func (s *Server) listOneTimeEarnings(c *gin.Context) {
	var status, employee, period string
	limit, cursor, ok := pagedFilters(c, statusParam(&status, payroll.EarningPending, payroll.EarningApproved, payroll.EarningVoided,
		payroll.EarningReversed), idParam("employeeId", &employee), periodParam("period", &period))
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.OneTimeEarning, error) {
		return payroll.ListOneTimeEarnings(ctx, tx, payroll.EarningFilter{Status: status, EmployeeID: employee, Period: period,
			After: cursor, Limit: limit + 1})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(e payroll.OneTimeEarning) string { return e.ID }, toPayrollEarningJSON))
}

func (s *Server) getOneTimeEarning(c *gin.Context) {
	if out, ok := readPathRow(s, c, payroll.GetOneTimeEarning); ok {
		c.JSON(http.StatusOK, toPayrollEarningJSON(out))
	}
}

// earningMove serves an action on one earning: move runs it in the tenant's transaction.
func (s *Server) earningMove(c *gin.Context, action string, move func(ctx context.Context, tx db.BunTx, id string) (payroll.OneTimeEarning, error)) {
	if out, ok := onPathRow(s, c, action, payroll.TargetEarning, move); ok {
		c.JSON(http.StatusOK, toPayrollEarningJSON(out))
	}
}

func (s *Server) approveOneTimeEarning(c *gin.Context) {
	s.earningMove(c, payroll.ActionApproveEarning, func(ctx context.Context, tx db.BunTx, id string) (payroll.OneTimeEarning, error) {
		return payroll.ApproveOneTimeEarning(ctx, tx, id, s.now())
	})
}

// payrollReasonRequest is the body of void (optional) and reverse (required).
type payrollReasonRequest struct {
	Reason *string `json:"reason"`
}

// bindReason reads an optional body's reason ("" when the body or the field is absent).
func bindReason(c *gin.Context, bodyRequired bool) (string, bool) {
	has, e := hasBody(c)
	if e != nil {
		writeError(c, e)
		return "", false
	}
	if !has && !bodyRequired {
		return "", true
	}
	var req payrollReasonRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return "", false
	}
	if req.Reason == nil {
		if bodyRequired {
			writeError(c, fieldError(&field.Error{Field: "reason", Problem: "is required"}))
			return "", false
		}
		return "", true
	}
	if err := payroll.CheckReason("reason", *req.Reason, bodyRequired); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	return *req.Reason, true
}

func (s *Server) voidOneTimeEarning(c *gin.Context) {
	reason, ok := bindReason(c, false)
	if !ok {
		return
	}
	undo := mayUndoApproval(c)
	s.earningMove(c, payroll.ActionVoidEarning, func(ctx context.Context, tx db.BunTx, id string) (payroll.OneTimeEarning, error) {
		return payroll.VoidOneTimeEarning(ctx, tx, id, reason, undo, s.now())
	})
}

func (s *Server) reverseOneTimeEarning(c *gin.Context) {
	reason, ok := bindReason(c, true)
	if !ok {
		return
	}
	s.earningMove(c, payroll.ActionReverseEarning, func(ctx context.Context, tx db.BunTx, id string) (payroll.OneTimeEarning, error) {
		return payroll.ReverseOneTimeEarning(ctx, tx, id, reason, s.now())
	})
}
