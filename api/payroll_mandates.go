package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

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
	org := payrollOrgRoute
	const pp, adj, md = "/api/payroll/protection-policies", "/api/payroll/adjustments", "/api/payroll/deduction-mandates"
	return []Route{
		org(http.MethodPost, pp, "Draft a protection policy", payrollEdit, s.createProtectionPolicy, BodyByMethod),
		org(http.MethodGet, pp, "List the protection policies", payrollView, s.listProtectionPolicies, BodyByMethod),
		org(http.MethodGet, pp+"/:id", "One protection policy", payrollView, s.getProtectionPolicy, BodyByMethod),
		org(http.MethodPost, pp+"/:id/activate", "Activate a protection policy (supersedes the active one)", payrollApprove, s.activateProtectionPolicy, BodyNone),

		org(http.MethodPost, adj, "Record a payroll adjustment", payrollEdit, s.createAdjustment, BodyByMethod),
		org(http.MethodGet, adj, "List the payroll adjustments", payrollView, s.listAdjustments, BodyByMethod),
		org(http.MethodGet, adj+"/:id", "One payroll adjustment", payrollView, s.getAdjustment, BodyByMethod),
		org(http.MethodPost, adj+"/:id/approve", "Approve a payroll adjustment", payrollApprove, s.adjustmentMove("approved"), BodyNone),
		org(http.MethodPost, adj+"/:id/post", "Post an approved payroll adjustment to its period", payrollApprove, s.adjustmentMove("posted"), BodyNone),
		org(http.MethodPost, adj+"/:id/reverse", "Reverse a posted payroll adjustment", payrollApprove, s.reverseAdjustment, BodyByMethod),
		org(http.MethodPost, adj+"/:id/void", "Void a payroll adjustment not yet posted", payrollEdit, s.adjustmentMove("voided"), BodyOptionalJSON),

		org(http.MethodPost, md, "Record a deduction mandate", payrollEdit, s.createMandate, BodyByMethod),
		org(http.MethodGet, md, "List the deduction mandates", payrollView, s.listMandates, BodyByMethod),
		org(http.MethodGet, md+"/:id", "One deduction mandate", payrollView, s.getMandate, BodyByMethod),
		org(http.MethodPost, md+"/:id/activate", "Activate a deduction mandate", payrollApprove, s.mandateMove("activated"), BodyNone),
		org(http.MethodPost, md+"/:id/suspend", "Suspend an active deduction mandate", payrollEdit, s.mandateMove("suspended"), BodyOptionalJSON),
		org(http.MethodPost, md+"/:id/resume", "Resume a suspended deduction mandate", payrollEdit, s.mandateMove("resumed"), BodyOptionalJSON),
		org(http.MethodPost, md+"/:id/cancel", "Cancel a deduction mandate", payrollEdit, s.mandateMove("cancelled"), BodyOptionalJSON),
	}
}

// mandatesList is pagedFilters with the filters named by a map (read in no set order), as the
// page to read (limit+1 rows) and the filters' values by name; it has answered when ok is false.
func mandatesList(c *gin.Context, filters map[string]func(string) error) (db.Page, map[string]string, bool) {
	values := make([]string, len(filters))
	params := make([]filterParam, 0, len(filters))
	for name, check := range filters {
		params = append(params, filterParam{name, &values[len(params)], check})
	}
	page, ok := pmPage(c, params...)
	if !ok {
		return db.Page{}, nil, false
	}
	got := map[string]string{}
	for i, p := range params {
		got[p.name] = values[i]
	}
	return page, got, true
}

// pmPage is pagedFilters as the page to read: limit+1 rows after the cursor.
func pmPage(c *gin.Context, params ...filterParam) (db.Page, bool) {
	limit, cursor, ok := pagedFilters(c, params...)
	return db.Page{After: cursor, Limit: limit + 1}, ok
}

// pmOneOf is oneOfCheck with the values as arguments.
func pmOneOf(name string, values ...string) func(string) error { return oneOfCheck(name, values) }

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

// pmRequired is the refusal of the first field a body left out (nil when all are there); pairs are
// each field's name and whether it is missing.
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

func (r protectionPolicyRequest) input() (payroll.NewProtectionPolicy, error) {
	if err := pmRequired("voluntaryShareNumerator", r.VoluntaryShareNumerator == nil, "voluntaryShareDenominator",
		r.VoluntaryShareDenominator == nil, "effectiveFrom", r.EffectiveFrom == nil); err != nil {
		return payroll.NewProtectionPolicy{}, err
	}
	in := payroll.NewProtectionPolicy{Description: pmTrimmed(r.Description), ShareNumerator: *r.VoluntaryShareNumerator,
		ShareDenominator: *r.VoluntaryShareDenominator, EffectiveFrom: *r.EffectiveFrom}
	if r.MinimumNetSantim != nil {
		in.MinimumNetSantim = *r.MinimumNetSantim
	}
	return in, in.Check()
}

func (s *Server) createProtectionPolicy(c *gin.Context) {
	in, ok := bindPayrollInput[protectionPolicyRequest](c)
	if !ok {
		return
	}
	p, ok := inTenantAudited(s, c, "CreateProtectionPolicy", "ProtectionPolicy", "", func(ctx context.Context, tx db.BunTx) (payroll.ProtectionPolicy, error) {
		return payroll.CreateProtectionPolicy(ctx, tx, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toProtectionPolicyJSON(p))
	}
}

func (s *Server) listProtectionPolicies(c *gin.Context) {
	var status string
	page, ok := pmPage(c, statusParam(&status, payroll.ProtectionDraft, payroll.ProtectionActive, payroll.ProtectionSuperseded))
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.ProtectionPolicy, error) {
		return payroll.ListProtectionPolicies(ctx, tx, payroll.ProtectionFilter{Status: status, Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, page.Limit-1, func(p payroll.ProtectionPolicy) string { return p.ID }, toProtectionPolicyJSON))
}

func (s *Server) getProtectionPolicy(c *gin.Context) {
	if p, ok := readPathRow(s, c, payroll.GetProtectionPolicy); ok {
		c.JSON(http.StatusOK, toProtectionPolicyJSON(p))
	}
}

func (s *Server) activateProtectionPolicy(c *gin.Context) {
	p, ok := onPathRow(s, c, "ActivateProtectionPolicy", "ProtectionPolicy", func(ctx context.Context, tx db.BunTx, id string) (payroll.ProtectionPolicy, error) {
		return payroll.ActivateProtectionPolicy(ctx, tx, id, s.now())
	})
	if ok {
		c.JSON(http.StatusOK, toProtectionPolicyJSON(p))
	}
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

func (r adjustmentRequest) input() (payroll.NewAdjustment, error) {
	if err := pmRequired("employeeId", r.EmployeeID == nil, "period", r.Period == nil, "direction", r.Direction == nil,
		"amountSantim", r.AmountSantim == nil, "reason", r.Reason == nil); err != nil {
		return payroll.NewAdjustment{}, err
	}
	in := payroll.NewAdjustment{EmployeeID: *r.EmployeeID, Period: *r.Period, Direction: *r.Direction, AmountSantim: *r.AmountSantim,
		Taxable: r.Taxable, Reason: strings.TrimSpace(*r.Reason), Reference: pmTrimmed(r.Reference)}
	if r.Reference != nil && in.Reference == "" {
		return in, &field.Error{Field: "reference", Problem: "must not be blank (leave it out instead)"}
	}
	return in, in.Check()
}

func (s *Server) createAdjustment(c *gin.Context) {
	in, ok := bindPayrollInput[adjustmentRequest](c)
	if !ok {
		return
	}
	a, ok := inTenantAudited(s, c, "CreatePayrollAdjustment", "PayrollAdjustment", "", func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.CreateAdjustment(ctx, tx, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toAdjustmentJSON(a))
	}
}

func (s *Server) listAdjustments(c *gin.Context) {
	var status, employee, period, direction string
	page, ok := pmPage(c, statusParam(&status, payroll.AdjustmentPending, payroll.AdjustmentApproved, payroll.AdjustmentPosted,
		payroll.AdjustmentVoided, payroll.AdjustmentReversed), idParam("employeeId", &employee), periodParam("period", &period),
		filterParam{"direction", &direction, pmOneOf("direction", payroll.Earning, payroll.Deduction)})
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Adjustment, error) {
		return payroll.ListAdjustments(ctx, tx, payroll.AdjustmentFilter{Status: status, EmployeeID: employee,
			Period: period, Direction: direction, Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, page.Limit-1, func(a payroll.Adjustment) string { return a.ID }, toAdjustmentJSON))
}

func (s *Server) getAdjustment(c *gin.Context) {
	if a, ok := readPathRow(s, c, payroll.GetAdjustment); ok {
		c.JSON(http.StatusOK, toAdjustmentJSON(a))
	}
}

var adjustmentAuditActions = map[string]string{"approved": "ApprovePayrollAdjustment", "posted": "PostPayrollAdjustment",
	"voided": "VoidPayrollAdjustment", "reversed": "ReversePayrollAdjustment"}

// pmMove serves a move of the path's row (:id) that takes an optional reason when withReason is
// set (pmReason, read after the id); a refusal by a rule is audited DENIED as action on target.
func pmMove[T, J any](s *Server, action, target string, withReason bool, move func(ctx context.Context, tx db.BunTx, id, reason string) (T, error),
	toJSON func(T) J) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		reason := ""
		if withReason {
			if reason, ok = pmReason(c); !ok {
				return
			}
		}
		out, ok := inTenantAudited(s, c, action, target, id, func(ctx context.Context, tx db.BunTx) (T, error) { return move(ctx, tx, id, reason) })
		if ok {
			c.JSON(http.StatusOK, toJSON(out))
		}
	}
}

// adjustmentMove serves approve and post (no body) and void (an optional reason).
func (s *Server) adjustmentMove(action string) gin.HandlerFunc {
	return pmMove(s, adjustmentAuditActions[action], "PayrollAdjustment", action == "voided",
		func(ctx context.Context, tx db.BunTx, id, reason string) (payroll.Adjustment, error) {
			switch action {
			case "approved":
				return payroll.ApproveAdjustment(ctx, tx, id, s.now())
			case "posted":
				return payroll.ApplyAdjustment(ctx, tx, id, s.now())
			}
			return payroll.VoidAdjustment(ctx, tx, id, reason, s.now())
		}, toAdjustmentJSON)
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
	a, ok := inTenantAudited(s, c, "ReversePayrollAdjustment", "PayrollAdjustment", id, func(ctx context.Context, tx db.BunTx) (payroll.Adjustment, error) {
		return payroll.ReverseAdjustment(ctx, tx, id, strings.TrimSpace(*req.Reason), *req.EffectivePeriod, s.now())
	})
	if ok {
		c.JSON(http.StatusOK, toAdjustmentJSON(a))
	}
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

func (r mandateRequest) input() (payroll.NewMandate, error) {
	if err := pmRequired("employeeId", r.EmployeeID == nil, "kind", r.Kind == nil, "startPeriod", r.StartPeriod == nil); err != nil {
		return payroll.NewMandate{}, err
	}
	in := payroll.NewMandate{EmployeeID: *r.EmployeeID, Kind: *r.Kind, AmountSantim: r.AmountSantim, BasisPoints: r.BasisPoints,
		TotalSantim: r.TotalSantim, StartPeriod: *r.StartPeriod, Reference: pmTrimmed(r.Reference), Description: pmTrimmed(r.Description)}
	if r.Reference != nil && in.Reference == "" {
		return in, &field.Error{Field: "reference", Problem: "must not be blank (leave it out instead)"}
	}
	if r.EndPeriod != nil {
		in.EndPeriod = *r.EndPeriod
		if in.EndPeriod == "" {
			return in, &field.Error{Field: "endPeriod", Problem: "must be a month written YYYY-MM (leave it out for none)"}
		}
	}
	if r.Priority != nil {
		in.Priority = *r.Priority
	}
	if r.Payee != nil {
		in.Payee = &payroll.Payee{Partner: r.Payee.Partner, AccountNumber: r.Payee.AccountNumber, HolderName: r.Payee.HolderName}
	}
	return in, in.Check()
}

func (s *Server) createMandate(c *gin.Context) {
	in, ok := bindPayrollInput[mandateRequest](c)
	if !ok {
		return
	}
	m, ok := inTenantAudited(s, c, "CreateDeductionMandate", "DeductionMandate", "", func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return payroll.CreateMandate(ctx, tx, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toMandateJSON(m))
	}
}

func (s *Server) listMandates(c *gin.Context) {
	var status, employee, kind string
	page, ok := pmPage(c, statusParam(&status, payroll.MandatePending, payroll.MandateActive, payroll.MandateSuspended,
		payroll.MandateCancelled, payroll.MandateCompleted), idParam("employeeId", &employee),
		filterParam{"kind", &kind, pmOneOf("kind", payroll.MandateKinds...)})
	if !ok {
		return
	}
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Mandate, error) {
		return payroll.ListMandates(ctx, tx, payroll.MandateFilter{Status: status, EmployeeID: employee, Kind: kind, Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, itemsPageOf(rows, page.Limit-1, func(m payroll.Mandate) string { return m.ID }, toMandateJSON))
}

func (s *Server) getMandate(c *gin.Context) {
	if m, ok := readPathRow(s, c, payroll.GetMandate); ok {
		c.JSON(http.StatusOK, toMandateJSON(m))
	}
}

var mandateAuditActions = map[string]string{"activated": "ActivateDeductionMandate", "suspended": "SuspendDeductionMandate",
	"resumed": "ResumeDeductionMandate", "cancelled": "CancelDeductionMandate"}

// mandateMove serves activate (no body) and suspend, resume and cancel (an optional reason).
func (s *Server) mandateMove(action string) gin.HandlerFunc {
	return pmMove(s, mandateAuditActions[action], "DeductionMandate", action != "activated",
		func(ctx context.Context, tx db.BunTx, id, reason string) (payroll.Mandate, error) {
			switch action {
			case "activated":
				return payroll.ActivateMandate(ctx, tx, id, s.now())
			case "suspended":
				return payroll.SuspendMandate(ctx, tx, id, reason, s.now())
			case "resumed":
				return payroll.ResumeMandate(ctx, tx, id, reason, s.now())
			}
			return payroll.CancelMandate(ctx, tx, id, reason, s.now())
		}, toMandateJSON)
}
