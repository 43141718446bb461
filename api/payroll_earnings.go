package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/orgs"
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
	org := func(method, path, summary string, perm orgs.Permission, h gin.HandlerFunc, body Body) Route {
		return Route{Method: method, Path: path, Auth: Org, Role: orgs.Admin, Permission: perm, Summary: summary, Handler: h, Body: body}
	}
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

type payrollEarningListJSON struct {
	Items      []payrollEarningJSON `json:"items"`
	NextCursor *string              `json:"nextCursor"`
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

// payrollField is a body field a payroll create requires, and whether the body left it out.
type payrollField struct {
	name    string
	missing bool
}

// payrollRequired is the refusal of the first absent field of a body (nil when all are there).
func payrollRequired(fields ...payrollField) error {
	for _, f := range fields {
		if f.missing {
			return &field.Error{Field: f.name, Problem: "is required"}
		}
	}
	return nil
}

func (r payrollEarningRequest) input() (payroll.NewOneTimeEarning, error) {
	if err := payrollRequired(payrollField{"employeeId", r.EmployeeID == nil}, payrollField{"period", r.Period == nil}, payrollField{"kind", r.Kind == nil},
		payrollField{"amountSantim", r.AmountSantim == nil}, payrollField{"taxable", r.Taxable == nil}); err != nil {
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

// payrollListQuery reads a list's page and its status, employeeId and period filters; statuses
// are the status filter's allowed values. It has answered when ok is false.
func payrollListQuery(c *gin.Context, statuses ...string) (limit int, cursor, status, employee, period string, ok bool) {
	if limit, cursor, ok = ewaPage(c); !ok {
		return
	}
	if status, ok = singleQuery(c, "status", false, func(v string) error {
		for _, s := range statuses {
			if v == s {
				return nil
			}
		}
		return &field.Error{Field: "status", Problem: "must be one of " + strings.Join(statuses, ", ")}
	}); !ok {
		return
	}
	if employee, ok = singleQuery(c, "employeeId", false, identifierCheck("employeeId")); !ok {
		return
	}
	period, ok = singleQuery(c, "period", false, func(v string) error { return payroll.CheckPeriod("period", v) })
	return
}

func (s *Server) createOneTimeEarning(c *gin.Context) {
	var req payrollEarningRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in, err := req.input()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.CreateOneTimeEarning(ctx, tx, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, payroll.ActionCreateEarning, "Employee", in.EmployeeID, err)
		return
	}
	c.JSON(http.StatusCreated, toPayrollEarningJSON(out))
}

func (s *Server) listOneTimeEarnings(c *gin.Context) {
	limit, cursor, status, employee, period, ok := payrollListQuery(c,
		payroll.EarningPending, payroll.EarningApproved, payroll.EarningVoided, payroll.EarningReversed)
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
	out := payrollEarningListJSON{Items: []payrollEarningJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(e payroll.OneTimeEarning) string { return e.ID })
	for _, e := range rows {
		out.Items = append(out.Items, toPayrollEarningJSON(e))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getOneTimeEarning(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.GetOneTimeEarning(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toPayrollEarningJSON(out))
}

// earningMove serves an action on one earning: move runs it in the tenant's transaction.
func (s *Server) earningMove(c *gin.Context, action string, move func(ctx context.Context, tx db.BunTx, id string) (payroll.OneTimeEarning, error)) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return move(ctx, tx, id)
	})
	if err != nil {
		s.payrollAnswer(c, action, payroll.TargetEarning, id, err)
		return
	}
	c.JSON(http.StatusOK, toPayrollEarningJSON(out))
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
	cl := callerOf(c)
	mayUndoApproval := cl.Platform || cl.Access.Permissions.Allows(payrollApprove)
	s.earningMove(c, payroll.ActionVoidEarning, func(ctx context.Context, tx db.BunTx, id string) (payroll.OneTimeEarning, error) {
		return payroll.VoidOneTimeEarning(ctx, tx, id, reason, mayUndoApproval, s.now())
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

// fieldProblem is a *field.Error for name.
func fieldProblem(name, problem string) error { return &field.Error{Field: name, Problem: problem} }
