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

// The payroll inputs that limit and correct pay (spec: Payroll > Earnings, overtime, protection;
// Adjustments; Deduction mandates): protection policies, adjustments and deduction mandates of
// the active organization. Reads need payroll.view, creating and the moves that stop something
// (void, suspend, resume, cancel) payroll.edit, the moves that make an input count (activate,
// approve, post, reverse) payroll.approve and another user than the creator (403
// PAYROLL_SELF_APPROVAL). The stores (internal/payroll) write each change's audit row and event in
// its transaction; a refusal by a rule (403, 409) is audited DENIED in a transaction of its own
// (payrollAnswer).

// payrollMandateRoutes serves /api/payroll/protection-policies, /adjustments and /deduction-mandates.
func (s *Server) payrollMandateRoutes() []Route {
	org := func(method, path, summary string, perm orgs.Permission, h gin.HandlerFunc, body ...Body) Route {
		r := Route{Method: method, Path: path, Auth: Org, Role: orgs.Admin, Permission: perm, Summary: summary, Handler: h}
		if len(body) > 0 {
			r.Body = body[0]
		}
		return r
	}
	const pp, adj, md = "/api/payroll/protection-policies", "/api/payroll/adjustments", "/api/payroll/deduction-mandates"
	return []Route{
		org(http.MethodPost, pp, "Draft a protection policy", payrollEdit, s.createProtectionPolicy),
		org(http.MethodGet, pp, "List the protection policies", payrollView, s.listProtectionPolicies),
		org(http.MethodGet, pp+"/:id", "One protection policy", payrollView, s.getProtectionPolicy),
		org(http.MethodPost, pp+"/:id/activate", "Activate a protection policy (supersedes the active one)", payrollApprove, s.activateProtectionPolicy, BodyNone),

		org(http.MethodPost, adj, "Record a payroll adjustment", payrollEdit, s.createAdjustment),
		org(http.MethodGet, adj, "List the payroll adjustments", payrollView, s.listAdjustments),
		org(http.MethodGet, adj+"/:id", "One payroll adjustment", payrollView, s.getAdjustment),
		org(http.MethodPost, adj+"/:id/approve", "Approve a payroll adjustment", payrollApprove, s.adjustmentMove("approved"), BodyNone),
		org(http.MethodPost, adj+"/:id/post", "Post an approved payroll adjustment to its period", payrollApprove, s.adjustmentMove("posted"), BodyNone),
		org(http.MethodPost, adj+"/:id/reverse", "Reverse a posted payroll adjustment", payrollApprove, s.reverseAdjustment),
		org(http.MethodPost, adj+"/:id/void", "Void a payroll adjustment not yet posted", payrollEdit, s.adjustmentMove("voided"), BodyOptionalJSON),

		org(http.MethodPost, md, "Record a deduction mandate", payrollEdit, s.createMandate),
		org(http.MethodGet, md, "List the deduction mandates", payrollView, s.listMandates),
		org(http.MethodGet, md+"/:id", "One deduction mandate", payrollView, s.getMandate),
		org(http.MethodPost, md+"/:id/activate", "Activate a deduction mandate", payrollApprove, s.mandateMove("activated"), BodyNone),
		org(http.MethodPost, md+"/:id/suspend", "Suspend an active deduction mandate", payrollEdit, s.mandateMove("suspended"), BodyOptionalJSON),
		org(http.MethodPost, md+"/:id/resume", "Resume a suspended deduction mandate", payrollEdit, s.mandateMove("resumed"), BodyOptionalJSON),
		org(http.MethodPost, md+"/:id/cancel", "Cancel a deduction mandate", payrollEdit, s.mandateMove("cancelled"), BodyOptionalJSON),
	}
}

// mandatesList reads limit, cursor and the route's filters (each at most once, each checked);
// it has answered when ok is false.
func mandatesList(c *gin.Context, filters map[string]func(string) error) (db.Page, map[string]string, bool) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return db.Page{}, nil, false
	}
	got := map[string]string{}
	for name, check := range filters {
		v, ok := singleQuery(c, name, false, check)
		if !ok {
			return db.Page{}, nil, false
		}
		got[name] = v
	}
	return db.Page{After: cursor, Limit: limit + 1}, got, true
}

func pmOneOf(name string, values ...string) func(string) error {
	return func(v string) error {
		for _, a := range values {
			if v == a {
				return nil
			}
		}
		return &field.Error{Field: name, Problem: "must be one of " + strings.Join(values, ", ")}
	}
}

// pmReason reads an optional {"reason": "…"} body; it has answered when ok is false.
func pmReason(c *gin.Context) (string, bool) {
	var req struct {
		Reason *string `json:"reason"`
	}
	has, e := hasBody(c)
	if e == nil && has {
		e = bindJSON(c, &req)
	}
	if e != nil {
		writeError(c, e)
		return "", false
	}
	if req.Reason == nil {
		return "", true
	}
	r := strings.TrimSpace(*req.Reason)
	if r == "" {
		writeError(c, fieldError(&field.Error{Field: "reason", Problem: "must not be blank (leave it out instead)"}))
		return "", false
	}
	return r, true
}

func pmRequired(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			return &field.Error{Field: pairs[i].(string), Problem: "is required"}
		}
	}
	return nil
}

func pmTrimmed(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// --- protection policies ---

type protectionPolicyJSON struct {
	ID                        string     `json:"id"`
	Description               string     `json:"description"`
	VoluntaryShareNumerator   int64      `json:"voluntaryShareNumerator"`
	VoluntaryShareDenominator int64      `json:"voluntaryShareDenominator"`
	MinimumNetSantim          int64      `json:"minimumNetSantim"`
	EffectiveFrom             string     `json:"effectiveFrom"`
	Status                    string     `json:"status"`
	CreatedBy                 string     `json:"createdBy"`
	CreatedAt                 time.Time  `json:"createdAt"`
	ActivatedBy               *string    `json:"activatedBy"`
	ActivatedAt               *time.Time `json:"activatedAt"`
	SupersededBy              *string    `json:"supersededBy"`
	SupersededAt              *time.Time `json:"supersededAt"`
	UpdatedAt                 time.Time  `json:"updatedAt"`
}

func toProtectionPolicyJSON(p payroll.ProtectionPolicy) protectionPolicyJSON {
	return protectionPolicyJSON{ID: p.ID, Description: p.Description, VoluntaryShareNumerator: p.ShareNumerator,
		VoluntaryShareDenominator: p.ShareDenominator, MinimumNetSantim: p.MinimumNetSantim, EffectiveFrom: p.EffectiveFrom,
		Status: p.Status, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt.UTC(), ActivatedBy: p.ActivatedBy,
		ActivatedAt: utcPtr(p.ActivatedAt), SupersededBy: p.SupersededBy, SupersededAt: utcPtr(p.SupersededAt), UpdatedAt: p.UpdatedAt.UTC()}
}

type protectionPolicyRequest struct {
	Description               *string `json:"description"`
	VoluntaryShareNumerator   *int64  `json:"voluntaryShareNumerator"`
	VoluntaryShareDenominator *int64  `json:"voluntaryShareDenominator"`
	MinimumNetSantim          *int64  `json:"minimumNetSantim"`
	EffectiveFrom             *string `json:"effectiveFrom"`
}

func (s *Server) createProtectionPolicy(c *gin.Context) {
	var req protectionPolicyRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := pmRequired("voluntaryShareNumerator", req.VoluntaryShareNumerator == nil, "voluntaryShareDenominator",
		req.VoluntaryShareDenominator == nil, "effectiveFrom", req.EffectiveFrom == nil); err != nil {
		writeError(c, payrollError(err))
		return
	}
	in := payroll.NewProtectionPolicy{Description: pmTrimmed(req.Description), ShareNumerator: *req.VoluntaryShareNumerator,
		ShareDenominator: *req.VoluntaryShareDenominator, EffectiveFrom: *req.EffectiveFrom}
	if req.MinimumNetSantim != nil {
		in.MinimumNetSantim = *req.MinimumNetSantim
	}
	if err := in.Check(); err != nil {
		writeError(c, payrollError(err))
		return
	}
	p, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.CreateProtectionPolicy(ctx, tx, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CreateProtectionPolicy", "ProtectionPolicy", "", err)
		return
	}
	c.JSON(http.StatusCreated, toProtectionPolicyJSON(p))
}

func (s *Server) listProtectionPolicies(c *gin.Context) {
	page, q, ok := mandatesList(c, map[string]func(string) error{
		"status": pmOneOf("status", payroll.ProtectionDraft, payroll.ProtectionActive, payroll.ProtectionSuperseded)})
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.ProtectionPolicy, error) {
		return payroll.ListProtectionPolicies(ctx, tx, payroll.ProtectionFilter{Status: q["status"], Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := struct {
		Items      []protectionPolicyJSON `json:"items"`
		NextCursor *string                `json:"nextCursor"`
	}{Items: []protectionPolicyJSON{}}
	rows, out.NextCursor = pageOf(rows, page.Limit-1, func(p payroll.ProtectionPolicy) string { return p.ID })
	for _, p := range rows {
		out.Items = append(out.Items, toProtectionPolicyJSON(p))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getProtectionPolicy(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	p, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.GetProtectionPolicy(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toProtectionPolicyJSON(p))
}

func (s *Server) activateProtectionPolicy(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	p, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.ActivateProtectionPolicy(ctx, tx, id, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "ActivateProtectionPolicy", "ProtectionPolicy", id, err)
		return
	}
	c.JSON(http.StatusOK, toProtectionPolicyJSON(p))
}

// --- adjustments ---

type adjustmentJSON struct {
	ID             string     `json:"id"`
	EmployeeID     string     `json:"employeeId"`
	Period         string     `json:"period"`
	Direction      string     `json:"direction"`
	AmountSantim   int64      `json:"amountSantim"`
	Taxable        bool       `json:"taxable"`
	Reason         string     `json:"reason"`
	Reference      *string    `json:"reference"`
	Status         string     `json:"status"`
	CreatedBy      string     `json:"createdBy"`
	CreatedAt      time.Time  `json:"createdAt"`
	ApprovedBy     *string    `json:"approvedBy"`
	ApprovedAt     *time.Time `json:"approvedAt"`
	PostedBy       *string    `json:"postedBy"`
	PostedAt       *time.Time `json:"postedAt"`
	VoidedBy       *string    `json:"voidedBy"`
	VoidedAt       *time.Time `json:"voidedAt"`
	VoidReason     *string    `json:"voidReason"`
	ReversedBy     *string    `json:"reversedBy"`
	ReversedAt     *time.Time `json:"reversedAt"`
	ReversalReason *string    `json:"reversalReason"`
	ReversalPeriod *string    `json:"reversalPeriod"`
	UpdatedAt      time.Time  `json:"updatedAt"`
}

func toAdjustmentJSON(a payroll.Adjustment) adjustmentJSON {
	return adjustmentJSON{ID: a.ID, EmployeeID: a.EmployeeID, Period: a.Period, Direction: a.Direction, AmountSantim: a.AmountSantim,
		Taxable: a.Taxable, Reason: a.Reason, Reference: a.Reference, Status: a.Status, CreatedBy: a.CreatedBy, CreatedAt: a.CreatedAt.UTC(),
		ApprovedBy: a.ApprovedBy, ApprovedAt: utcPtr(a.ApprovedAt), PostedBy: a.PostedBy, PostedAt: utcPtr(a.PostedAt),
		VoidedBy: a.VoidedBy, VoidedAt: utcPtr(a.VoidedAt), VoidReason: a.VoidReason, ReversedBy: a.ReversedBy,
		ReversedAt: utcPtr(a.ReversedAt), ReversalReason: a.ReversalReason, ReversalPeriod: a.ReversalPeriod, UpdatedAt: a.UpdatedAt.UTC()}
}

type adjustmentRequest struct {
	EmployeeID   *string `json:"employeeId"`
	Period       *string `json:"period"`
	Direction    *string `json:"direction"`
	AmountSantim *int64  `json:"amountSantim"`
	Taxable      *bool   `json:"taxable"`
	Reason       *string `json:"reason"`
	Reference    *string `json:"reference"`
}

func (s *Server) createAdjustment(c *gin.Context) {
	var req adjustmentRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := pmRequired("employeeId", req.EmployeeID == nil, "period", req.Period == nil, "direction", req.Direction == nil,
		"amountSantim", req.AmountSantim == nil, "reason", req.Reason == nil); err != nil {
		writeError(c, payrollError(err))
		return
	}
	in := payroll.NewAdjustment{EmployeeID: *req.EmployeeID, Period: *req.Period, Direction: *req.Direction, AmountSantim: *req.AmountSantim,
		Taxable: req.Taxable, Reason: strings.TrimSpace(*req.Reason), Reference: pmTrimmed(req.Reference)}
	if req.Reference != nil && in.Reference == "" {
		writeError(c, fieldError(&field.Error{Field: "reference", Problem: "must not be blank (leave it out instead)"}))
		return
	}
	if err := in.Check(); err != nil {
		writeError(c, payrollError(err))
		return
	}
	a, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.CreateAdjustment(ctx, tx, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CreatePayrollAdjustment", "PayrollAdjustment", "", err)
		return
	}
	c.JSON(http.StatusCreated, toAdjustmentJSON(a))
}

func (s *Server) listAdjustments(c *gin.Context) {
	page, q, ok := mandatesList(c, map[string]func(string) error{
		"status": pmOneOf("status", payroll.AdjustmentPending, payroll.AdjustmentApproved, payroll.AdjustmentPosted,
			payroll.AdjustmentVoided, payroll.AdjustmentReversed),
		"employeeId": identifierCheck("employeeId"),
		"period":     func(v string) error { return payroll.CheckPeriod("period", v) },
		"direction":  pmOneOf("direction", payroll.Earning, payroll.Deduction),
	})
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Adjustment, error) {
		return payroll.ListAdjustments(ctx, tx, payroll.AdjustmentFilter{Status: q["status"], EmployeeID: q["employeeId"],
			Period: q["period"], Direction: q["direction"], Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := struct {
		Items      []adjustmentJSON `json:"items"`
		NextCursor *string          `json:"nextCursor"`
	}{Items: []adjustmentJSON{}}
	rows, out.NextCursor = pageOf(rows, page.Limit-1, func(a payroll.Adjustment) string { return a.ID })
	for _, a := range rows {
		out.Items = append(out.Items, toAdjustmentJSON(a))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getAdjustment(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	a, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.GetAdjustment(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toAdjustmentJSON(a))
}

var adjustmentAuditActions = map[string]string{"approved": "ApprovePayrollAdjustment", "posted": "PostPayrollAdjustment",
	"voided": "VoidPayrollAdjustment", "reversed": "ReversePayrollAdjustment"}

// adjustmentMove serves approve and post (no body) and void (an optional reason).
func (s *Server) adjustmentMove(action string) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		reason := ""
		if action == "voided" {
			if reason, ok = pmReason(c); !ok {
				return
			}
		}
		a, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
			switch action {
			case "approved":
				return payroll.ApproveAdjustment(ctx, tx, id, s.now())
			case "posted":
				return payroll.ApplyAdjustment(ctx, tx, id, s.now())
			}
			return payroll.VoidAdjustment(ctx, tx, id, reason, s.now())
		})
		if err != nil {
			s.payrollAnswer(c, adjustmentAuditActions[action], "PayrollAdjustment", id, err)
			return
		}
		c.JSON(http.StatusOK, toAdjustmentJSON(a))
	}
}

func (s *Server) reverseAdjustment(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req struct {
		Reason          *string `json:"reason"`
		EffectivePeriod *string `json:"effectivePeriod"`
	}
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := pmRequired("reason", req.Reason == nil, "effectivePeriod", req.EffectivePeriod == nil); err != nil {
		writeError(c, payrollError(err))
		return
	}
	a, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.ReverseAdjustment(ctx, tx, id, strings.TrimSpace(*req.Reason), *req.EffectivePeriod, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "ReversePayrollAdjustment", "PayrollAdjustment", id, err)
		return
	}
	c.JSON(http.StatusOK, toAdjustmentJSON(a))
}

// --- deduction mandates ---

type mandatePayeeJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

type mandateJSON struct {
	ID              string            `json:"id"`
	EmployeeID      string            `json:"employeeId"`
	Kind            string            `json:"kind"`
	AmountSantim    *int64            `json:"amountSantim"`
	BasisPoints     *int64            `json:"basisPoints"`
	TotalSantim     *int64            `json:"totalSantim"`
	TakenSantim     int64             `json:"takenSantim"`
	RemainingSantim *int64            `json:"remainingSantim"`
	StartPeriod     string            `json:"startPeriod"`
	EndPeriod       *string           `json:"endPeriod"`
	Priority        int64             `json:"priority"`
	Reference       *string           `json:"reference"`
	Payee           *mandatePayeeJSON `json:"payee"`
	Description     string            `json:"description"`
	Status          string            `json:"status"`
	StatusReason    *string           `json:"statusReason"`
	CreatedBy       string            `json:"createdBy"`
	CreatedAt       time.Time         `json:"createdAt"`
	ActivatedBy     *string           `json:"activatedBy"`
	ActivatedAt     *time.Time        `json:"activatedAt"`
	SuspendedAt     *time.Time        `json:"suspendedAt"`
	CancelledAt     *time.Time        `json:"cancelledAt"`
	CompletedAt     *time.Time        `json:"completedAt"`
	UpdatedAt       time.Time         `json:"updatedAt"`
}

func toMandateJSON(m payroll.Mandate) mandateJSON {
	out := mandateJSON{ID: m.ID, EmployeeID: m.EmployeeID, Kind: m.Kind, AmountSantim: m.AmountSantim, BasisPoints: m.BasisPoints,
		TotalSantim: m.TotalSantim, TakenSantim: m.TakenSantim, RemainingSantim: m.RemainingSantim(), StartPeriod: m.StartPeriod,
		EndPeriod: m.EndPeriod, Priority: m.Priority, Reference: m.Reference, Description: m.Description, Status: m.Status,
		StatusReason: m.StatusReason, CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt.UTC(), ActivatedBy: m.ActivatedBy,
		ActivatedAt: utcPtr(m.ActivatedAt), SuspendedAt: utcPtr(m.SuspendedAt), CancelledAt: utcPtr(m.CancelledAt),
		CompletedAt: utcPtr(m.CompletedAt), UpdatedAt: m.UpdatedAt.UTC()}
	if m.PayeePartner != nil && m.PayeeAccountNumber != nil && m.PayeeHolderName != nil {
		out.Payee = &mandatePayeeJSON{Partner: *m.PayeePartner, AccountNumber: *m.PayeeAccountNumber, HolderName: *m.PayeeHolderName}
	}
	return out
}

type mandateRequest struct {
	EmployeeID   *string           `json:"employeeId"`
	Kind         *string           `json:"kind"`
	AmountSantim *int64            `json:"amountSantim"`
	BasisPoints  *int64            `json:"basisPoints"`
	TotalSantim  *int64            `json:"totalSantim"`
	StartPeriod  *string           `json:"startPeriod"`
	EndPeriod    *string           `json:"endPeriod"`
	Priority     *int64            `json:"priority"`
	Reference    *string           `json:"reference"`
	Payee        *mandatePayeeJSON `json:"payee"`
	Description  *string           `json:"description"`
}

func (s *Server) createMandate(c *gin.Context) {
	var req mandateRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := pmRequired("employeeId", req.EmployeeID == nil, "kind", req.Kind == nil, "startPeriod", req.StartPeriod == nil); err != nil {
		writeError(c, payrollError(err))
		return
	}
	in := payroll.NewMandate{EmployeeID: *req.EmployeeID, Kind: *req.Kind, AmountSantim: req.AmountSantim, BasisPoints: req.BasisPoints,
		TotalSantim: req.TotalSantim, StartPeriod: *req.StartPeriod, Reference: pmTrimmed(req.Reference), Description: pmTrimmed(req.Description)}
	if req.Reference != nil && in.Reference == "" {
		writeError(c, fieldError(&field.Error{Field: "reference", Problem: "must not be blank (leave it out instead)"}))
		return
	}
	if req.EndPeriod != nil {
		in.EndPeriod = *req.EndPeriod
		if in.EndPeriod == "" {
			writeError(c, fieldError(&field.Error{Field: "endPeriod", Problem: "must be a month written YYYY-MM (leave it out for none)"}))
			return
		}
	}
	if req.Priority != nil {
		in.Priority = *req.Priority
	}
	if req.Payee != nil {
		in.Payee = &payroll.Payee{Partner: req.Payee.Partner, AccountNumber: req.Payee.AccountNumber, HolderName: req.Payee.HolderName}
	}
	if err := in.Check(); err != nil {
		writeError(c, payrollError(err))
		return
	}
	m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return payroll.CreateMandate(ctx, tx, in, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CreateDeductionMandate", "DeductionMandate", "", err)
		return
	}
	c.JSON(http.StatusCreated, toMandateJSON(m))
}

func (s *Server) listMandates(c *gin.Context) {
	page, q, ok := mandatesList(c, map[string]func(string) error{
		"status": pmOneOf("status", payroll.MandatePending, payroll.MandateActive, payroll.MandateSuspended,
			payroll.MandateCancelled, payroll.MandateCompleted),
		"employeeId": identifierCheck("employeeId"),
		"kind":       pmOneOf("kind", payroll.MandateKinds...),
	})
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Mandate, error) {
		return payroll.ListMandates(ctx, tx, payroll.MandateFilter{Status: q["status"], EmployeeID: q["employeeId"], Kind: q["kind"], Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := struct {
		Items      []mandateJSON `json:"items"`
		NextCursor *string       `json:"nextCursor"`
	}{Items: []mandateJSON{}}
	rows, out.NextCursor = pageOf(rows, page.Limit-1, func(m payroll.Mandate) string { return m.ID })
	for _, m := range rows {
		out.Items = append(out.Items, toMandateJSON(m))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getMandate(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return payroll.GetMandate(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toMandateJSON(m))
}

var mandateAuditActions = map[string]string{"activated": "ActivateDeductionMandate", "suspended": "SuspendDeductionMandate",
	"resumed": "ResumeDeductionMandate", "cancelled": "CancelDeductionMandate"}

// mandateMove serves activate (no body) and suspend, resume and cancel (an optional reason).
func (s *Server) mandateMove(action string) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		reason := ""
		if action != "activated" {
			if reason, ok = pmReason(c); !ok {
				return
			}
		}
		m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			switch action {
			case "activated":
				return payroll.ActivateMandate(ctx, tx, id, s.now())
			case "suspended":
				return payroll.SuspendMandate(ctx, tx, id, reason, s.now())
			case "resumed":
				return payroll.ResumeMandate(ctx, tx, id, reason, s.now())
			}
			return payroll.CancelMandate(ctx, tx, id, reason, s.now())
		})
		if err != nil {
			s.payrollAnswer(c, mandateAuditActions[action], "DeductionMandate", id, err)
			return
		}
		c.JSON(http.StatusOK, toMandateJSON(m))
	}
}
