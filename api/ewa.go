package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Early wage access: the organization's settings, eligibility, requests (create, list, read,
// cancel), the repayment record and the employee's own view. The tenant is always the route's;
// another organization's employee or request is 404 like one that does not exist. Amounts are
// integer santim; the rules live in internal/ewa.

// ewaRoutes serves early wage access (/api/ewa/*, /api/me/ewa/requests). The disburse route's
// handler is in ewa_disburse.go.
func (s *Server) ewaRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/ewa/settings", Auth: Org, Role: orgs.Admin, Summary: "The organization's EWA settings (funding account, access cap, fees)", Handler: s.getEwaSettings},
		{Method: http.MethodPut, Path: "/api/ewa/settings", Auth: Org, Role: orgs.Admin, Summary: "Set the organization's EWA settings", Handler: s.putEwaSettings},
		{Method: http.MethodGet, Path: "/api/ewa/eligibility", Auth: Org, Role: orgs.Admin, Summary: "How much an employee may draw now", Handler: s.ewaEligibility},
		{Method: http.MethodPost, Path: "/api/ewa/requests", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Request an advance for an employee", Handler: s.createEwaRequest},
		{Method: http.MethodGet, Path: "/api/ewa/requests", Auth: Org, Role: orgs.Admin, Summary: "The organization's EWA requests (paged, filtered)", Handler: s.listEwaRequests},
		{Method: http.MethodGet, Path: "/api/ewa/requests/:id", Auth: Org, Role: orgs.Admin, Summary: "One EWA request", Handler: s.getEwaRequest},
		{Method: http.MethodPost, Path: "/api/ewa/requests/:id/disburse", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Disburse a request (gates, ledger, partner transfer)", Handler: s.disburseEwa, Body: BodyNone},
		{Method: http.MethodPost, Path: "/api/ewa/requests/:id/record-repayment", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Record the repayment of a disbursed request", Handler: s.recordEwaRepayment},
		{Method: http.MethodPost, Path: "/api/ewa/requests/:id/cancel", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Cancel a request before disbursement", Handler: s.cancelEwaRequest, Body: BodyNone},
		{Method: http.MethodGet, Path: "/api/me/ewa/requests", Auth: Session, Summary: "The caller's own EWA requests", Handler: s.myEwaRequests},
	}
}

// ewaError maps the EWA store's errors to the API's through internal/ewa's table of codes;
// refusals of a rule are audited DENIED (action on the request, or the employee for a create)
// when answered with s.answer.
func ewaError(action, targetID string, err error) error {
	var fe *field.Error
	if errors.Is(err, ewa.ErrInvalid) && errors.As(err, &fe) {
		return fieldError(fe)
	}
	code := ewa.CodeOf(err)
	r, ok := ewa.RefusalOf(code)
	if !ok {
		return err
	}
	target := ewa.TargetRequest
	switch code {
	case ewa.CodeRequestNotFound, ewa.CodeEmployeeNotFound, ewa.CodeFundingAccountNotSet:
		return NewError(r.Status, r.Code, r.Message) // nothing refused by a rule: not audited
	case ewa.CodeLimitExceeded, ewa.CodeEmployeeNotActive:
		target = "Employee"
	}
	ref := refuse(r.Status, r.Code, r.Message, action, target, targetID)
	var le *ewa.LimitError
	var over *ewa.OverpaymentError
	switch {
	case errors.As(err, &le):
		ref.err.Details = map[string]any{"availableSantim": le.AvailableSantim, "maxPrincipalSantim": le.MaxPrincipalSantim,
			"limitingFactor": le.LimitingFactor}
	case errors.As(err, &over):
		ref.err.Details = map[string]int64{"outstandingSantim": over.OutstandingSantim}
	}
	return ref
}

// --- JSON ---

type ewaAccountJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
}

// ewaCapsJSON are the settings' caps besides the access cap (null: not set), in the settings,
// their input and the eligibility's settings alike.
type ewaCapsJSON struct {
	MaxPerDaySantim      *int64 `json:"maxPerDaySantim"`
	MaxPerPeriodSantim   *int64 `json:"maxPerPeriodSantim"`
	MaxRequestsPerDay    *int64 `json:"maxRequestsPerDay"`
	MaxRequestsPerPeriod *int64 `json:"maxRequestsPerPeriod"`
}

func toEwaCapsJSON(s ewa.Settings) ewaCapsJSON {
	return ewaCapsJSON{MaxPerDaySantim: s.MaxPerDaySantim, MaxPerPeriodSantim: s.MaxPerPeriodSantim,
		MaxRequestsPerDay: s.MaxRequestsPerDay, MaxRequestsPerPeriod: s.MaxRequestsPerPeriod}
}

type ewaSettingsJSON struct {
	FundingAccount   *ewaAccountJSON `json:"fundingAccount"`
	AccessCapPercent int64           `json:"accessCapPercent"`
	FeeFlatSantim    int64           `json:"feeFlatSantim"`
	FeeBasisPoints   int64           `json:"feeBasisPoints"`
	AccountNameMatch bool            `json:"accountNameMatch"`
	ewaCapsJSON
	UpdatedAt *time.Time `json:"updatedAt"`
}

func toEwaSettingsJSON(s ewa.Settings) ewaSettingsJSON {
	out := ewaSettingsJSON{AccessCapPercent: s.AccessCapPercent, FeeFlatSantim: s.FeeFlatSantim, FeeBasisPoints: s.FeeBasisPoints,
		AccountNameMatch: s.AccountNameMatch, ewaCapsJSON: toEwaCapsJSON(s)}
	if s.Funding != (ewa.Account{}) {
		out.FundingAccount = &ewaAccountJSON{Partner: s.Funding.Partner, AccountNumber: s.Funding.AccountNumber}
	}
	if !s.UpdatedAt.IsZero() {
		t := s.UpdatedAt.UTC()
		out.UpdatedAt = &t
	}
	return out
}

// ewaRequestJSON is a request as every response shows it (absent values null).
type ewaRequestJSON struct {
	ID                  string     `json:"id"`
	EmployeeID          string     `json:"employeeId"`
	PrincipalSantim     int64      `json:"principalSantim"`
	FeeSantim           int64      `json:"feeSantim"`
	TotalSantim         int64      `json:"totalSantim"`
	Status              ewa.Status `json:"status"`
	WorkflowID          *string    `json:"workflowId"`
	LedgerTxID          *string    `json:"ledgerTxId"`
	TransferID          *string    `json:"transferId"`
	FailureReason       *string    `json:"failureReason"`
	RepaidAmountSantim  *int64     `json:"repaidAmountSantim"`
	RepaymentSource     *string    `json:"repaymentSource"`
	RepaymentLedgerTxID *string    `json:"repaymentLedgerTxId"`
	RequestedAt         time.Time  `json:"requestedAt"`
	DisbursedAt         *time.Time `json:"disbursedAt"`
	RepaidAt            *time.Time `json:"repaidAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func toEwaRequestJSON(r ewa.Request) ewaRequestJSON {
	out := ewaRequestJSON{ID: r.ID, EmployeeID: r.EmployeeID, PrincipalSantim: r.PrincipalSantim, FeeSantim: r.FeeSantim,
		TotalSantim: r.PrincipalSantim + r.FeeSantim, Status: r.Status, WorkflowID: optionalString(r.WorkflowID),
		LedgerTxID: optionalString(r.LedgerTxID), TransferID: optionalString(r.TransferID), FailureReason: optionalString(r.FailureReason),
		RepaymentSource: optionalString(r.RepaymentSource), RepaymentLedgerTxID: optionalString(r.RepaymentLedgerTxID),
		RequestedAt: r.RequestedAt.UTC(), DisbursedAt: optionalTime(r.DisbursedAt), RepaidAt: optionalTime(r.RepaidAt),
		UpdatedAt: r.UpdatedAt.UTC()}
	if r.RepaidAmountSantim > 0 {
		v := r.RepaidAmountSantim
		out.RepaidAmountSantim = &v
	}
	return out
}

type ewaRequestListJSON struct {
	Items      []ewaRequestJSON `json:"items"`
	NextCursor *string          `json:"nextCursor"`
}

// --- settings ---

func (s *Server) getEwaSettings(c *gin.Context) {
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Settings, error) {
		return ewa.GetSettings(ctx, tx, tenant)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toEwaSettingsJSON(out))
}

// ewaSettingsRequest is PUT's body; a cap that is absent or null is not set (the PUT replaces
// the settings as a whole). The caps are spelled out rather than embedded (ewaCapsJSON) so a
// wrong type's error names the field as the caller wrote it.
type ewaSettingsRequest struct {
	FundingAccount       *ewaAccountJSON `json:"fundingAccount"`
	AccessCapPercent     *int64          `json:"accessCapPercent"`
	FeeFlatSantim        *int64          `json:"feeFlatSantim"`
	FeeBasisPoints       *int64          `json:"feeBasisPoints"`
	AccountNameMatch     *bool           `json:"accountNameMatch"`
	MaxPerDaySantim      *int64          `json:"maxPerDaySantim"`
	MaxPerPeriodSantim   *int64          `json:"maxPerPeriodSantim"`
	MaxRequestsPerDay    *int64          `json:"maxRequestsPerDay"`
	MaxRequestsPerPeriod *int64          `json:"maxRequestsPerPeriod"`
}

func (r ewaSettingsRequest) settings(tenant string) (ewa.Settings, error) {
	required := func(name string, v *int64) error {
		if v == nil {
			return &field.Error{Field: name, Problem: "is required"}
		}
		return nil
	}
	if r.FundingAccount == nil {
		return ewa.Settings{}, &field.Error{Field: "fundingAccount", Problem: "is required"}
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"accessCapPercent", r.AccessCapPercent}, {"feeFlatSantim", r.FeeFlatSantim}, {"feeBasisPoints", r.FeeBasisPoints}} {
		if err := required(f.name, f.v); err != nil {
			return ewa.Settings{}, err
		}
	}
	out := ewa.Settings{TenantID: tenant, Funding: ewa.Account{Partner: r.FundingAccount.Partner, AccountNumber: r.FundingAccount.AccountNumber},
		AccessCapPercent: *r.AccessCapPercent, FeeFlatSantim: *r.FeeFlatSantim, FeeBasisPoints: *r.FeeBasisPoints,
		MaxPerDaySantim: r.MaxPerDaySantim, MaxPerPeriodSantim: r.MaxPerPeriodSantim, MaxRequestsPerDay: r.MaxRequestsPerDay,
		MaxRequestsPerPeriod: r.MaxRequestsPerPeriod}
	if r.AccountNameMatch != nil {
		out.AccountNameMatch = *r.AccountNameMatch
	}
	// Both parts of the account are required (an empty one would read as "not set").
	if out.Funding.Partner == "" {
		return ewa.Settings{}, &field.Error{Field: "fundingAccount.partner", Problem: "is required"}
	}
	if out.Funding.AccountNumber == "" {
		return ewa.Settings{}, &field.Error{Field: "fundingAccount.accountNumber", Problem: "is required"}
	}
	return out, out.Validate()
}

func (s *Server) putEwaSettings(c *gin.Context) {
	var req ewaSettingsRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	tenant := callerOf(c).Tenant
	in, err := req.settings(tenant)
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	// The partner is asked about the funding account when it is set or changed, not when only
	// the fees or the cap change: an account the partner does not have would otherwise be
	// stored, and every disbursement after it would fail.
	current, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Settings, error) {
		return ewa.GetSettings(ctx, tx, tenant)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	if current.Funding != in.Funding {
		if e := s.checkFundingAccount(c, in.Funding); e != nil {
			writeError(c, e)
			return
		}
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Settings, error) {
		out, err := ewa.PutSettings(ctx, tx, tenant, in)
		return out, ewaError(ewa.ActionUpdateSettings, tenant, err)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, toEwaSettingsJSON(out))
}

// checkFundingAccount asks the partner, through the gateway's account lookup, whether the
// funding account exists and is active (checkPartnerAccount).
func (s *Server) checkFundingAccount(c *gin.Context, acct ewa.Account) *Error {
	return s.checkPartnerAccount(c, accountCheck{Partner: acct.Partner, AccountNumber: acct.AccountNumber,
		Field: "fundingAccount", What: "the funding account",
		PartnerUnknown: "EWA_FUNDING_PARTNER_UNKNOWN", NotFound: "EWA_FUNDING_ACCOUNT_NOT_FOUND"})
}

// --- eligibility ---

// advances applies the EWA settings' limits and, when wired, the projected net pay's.
func (s *Server) advances() ewa.Advances {
	return ewa.Advances{Recoverable: s.deps.EwaRecoverable}
}

// EwaRecoverableFromPayroll is Deps.EwaRecoverable on the payroll calculator: the projection of
// the current month's run (payroll.Project, which counts the employee's advances drawn or on
// their way) read in the eligibility's own transaction, after the employee's row lock. A run
// that will not pay the employee can recover nothing (0).
func EwaRecoverableFromPayroll(ctx context.Context, q db.Querier, _ string, employeeID string, now time.Time) (int64, bool, error) {
	p, err := payroll.Project(ctx, q, employeeID, now.UTC().Format("2006-01"))
	if err != nil {
		return 0, false, err
	}
	if !p.Paid {
		return 0, true, nil
	}
	return p.RecoverableSantim, true, nil
}

type ewaEligibilityJSON struct {
	EmployeeID string `json:"employeeId"`
	Period     struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"period"`
	EarnedSantim      int64 `json:"earnedSantim"`
	CapSantim         int64 `json:"capSantim"`
	OutstandingSantim int64 `json:"outstandingSantim"`
	Usage             struct {
		DrawnInPeriodSantim int64 `json:"drawnInPeriodSantim"`
		DrawnTodaySantim    int64 `json:"drawnTodaySantim"`
		RequestsInPeriod    int64 `json:"requestsInPeriod"`
		RequestsToday       int64 `json:"requestsToday"`
	} `json:"usage"`
	RecoverableSantim *int64 `json:"recoverableSantim"`
	Limits            struct {
		AccessCapSantim       int64  `json:"accessCapSantim"`
		ProjectedNetPaySantim *int64 `json:"projectedNetPaySantim"`
		PeriodAmountSantim    *int64 `json:"periodAmountSantim"`
		DayAmountSantim       *int64 `json:"dayAmountSantim"`
		PeriodRequestsLeft    *int64 `json:"periodRequestsLeft"`
		DayRequestsLeft       *int64 `json:"dayRequestsLeft"`
	} `json:"limits"`
	AvailableSantim    int64      `json:"availableSantim"`
	LimitingFactor     ewa.Factor `json:"limitingFactor"`
	MaxPrincipalSantim int64      `json:"maxPrincipalSantim"`
	EmployeeActive     bool       `json:"employeeActive"`
	Eligible           bool       `json:"eligible"`
	Settings           struct {
		AccessCapPercent int64 `json:"accessCapPercent"`
		FeeFlatSantim    int64 `json:"feeFlatSantim"`
		FeeBasisPoints   int64 `json:"feeBasisPoints"`
		ewaCapsJSON
	} `json:"settings"`
}

// singleQuery reads query parameter name given at most once; required makes it mandatory, check
// validates a present value. It has answered when ok is false.
func singleQuery(c *gin.Context, name string, required bool, check func(string) error) (string, bool) {
	q := c.Request.URL.Query()
	if len(q[name]) > 1 {
		writeError(c, fieldError(&field.Error{Field: name, Problem: "must be given at most once"}))
		return "", false
	}
	v := q.Get(name)
	if v == "" {
		if required {
			writeError(c, fieldError(&field.Error{Field: name, Problem: "is required"}))
			return "", false
		}
		return "", true
	}
	if err := check(v); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	return v, true
}

func identifierCheck(name string) func(string) error {
	return func(v string) error { return field.Identifier(name, v, 0) }
}

func (s *Server) ewaEligibility(c *gin.Context) {
	emp, ok := singleQuery(c, "employeeId", true, identifierCheck("employeeId"))
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	e, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Eligibility, error) {
		return s.advances().Eligibility(ctx, tx, tenant, emp, s.now())
	})
	if err != nil {
		writeError(c, ewaError("", emp, err))
		return
	}
	var out ewaEligibilityJSON
	out.EmployeeID = emp
	out.Period.Start, out.Period.End = e.PeriodStart.Format(time.DateOnly), e.PeriodEnd.Format(time.DateOnly)
	out.EarnedSantim, out.CapSantim, out.OutstandingSantim = e.EarnedSantim, e.CapSantim, e.OutstandingSantim
	u, l := e.Usage, e.Limits
	out.Usage.DrawnInPeriodSantim, out.Usage.DrawnTodaySantim = u.DrawnInPeriodSantim, u.DrawnTodaySantim
	out.Usage.RequestsInPeriod, out.Usage.RequestsToday = u.RequestsInPeriod, u.RequestsToday
	out.RecoverableSantim = e.RecoverableSantim
	out.Limits.AccessCapSantim, out.Limits.ProjectedNetPaySantim = l.AccessCapSantim, l.ProjectedNetPaySantim
	out.Limits.PeriodAmountSantim, out.Limits.DayAmountSantim = l.PeriodAmountSantim, l.DayAmountSantim
	out.Limits.PeriodRequestsLeft, out.Limits.DayRequestsLeft = l.PeriodRequestsLeft, l.DayRequestsLeft
	out.AvailableSantim, out.LimitingFactor, out.MaxPrincipalSantim = e.AvailableSantim, e.LimitingFactor, e.MaxPrincipalSantim
	out.EmployeeActive, out.Eligible = e.EmployeeActive, e.EmployeeActive && e.MaxPrincipalSantim > 0
	out.Settings.AccessCapPercent, out.Settings.FeeFlatSantim, out.Settings.FeeBasisPoints =
		e.Settings.AccessCapPercent, e.Settings.FeeFlatSantim, e.Settings.FeeBasisPoints
	out.Settings.ewaCapsJSON = toEwaCapsJSON(e.Settings)
	c.JSON(http.StatusOK, out)
}

// --- requests ---

type ewaCreateRequest struct {
	EmployeeID   string `json:"employeeId"`
	AmountSantim *int64 `json:"amountSantim"`
}

func validAmount(name string, v *int64, max int64) error {
	if v == nil {
		return &field.Error{Field: name, Problem: "is required"}
	}
	if *v < 1 || *v > max {
		return &field.Error{Field: name, Problem: "must be a whole number of santim from 1 to " + strconv.FormatInt(max, 10)}
	}
	return nil
}

func (s *Server) createEwaRequest(c *gin.Context) {
	var req ewaCreateRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("employeeId", req.EmployeeID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := validAmount("amountSantim", req.AmountSantim, money.MaxAmountSantim); err != nil {
		writeError(c, fieldError(err))
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Request, error) {
		out, err := s.advances().Create(ctx, tx, tenant, req.EmployeeID, *req.AmountSantim, s.now())
		return out, ewaError(ewa.ActionRequest, req.EmployeeID, err)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusCreated, toEwaRequestJSON(out))
}

// ewaPage reads limit and cursor; it has answered when ok is false.
func ewaPage(c *gin.Context) (limit int, cursor string, ok bool) {
	for _, k := range []string{"limit", "cursor"} {
		if len(c.Request.URL.Query()[k]) > 1 {
			writeError(c, fieldError(&field.Error{Field: k, Problem: "must be given at most once"}))
			return 0, "", false
		}
	}
	limit, cursor, e := pageParams(c.Query("limit"), c.Query("cursor"))
	if e != nil {
		writeError(c, e)
		return 0, "", false
	}
	return limit, cursor, true
}

// answerEwaPage answers rows read with limit+1 as one page.
func answerEwaPage(c *gin.Context, rows []ewa.Request, limit int) {
	out := ewaRequestListJSON{Items: []ewaRequestJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(r ewa.Request) string { return r.ID })
	for _, r := range rows {
		out.Items = append(out.Items, toEwaRequestJSON(r))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) listEwaRequests(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	status, ok := singleQuery(c, "status", false, func(v string) error {
		if !ewa.Status(v).Valid() {
			return &field.Error{Field: "status", Problem: "must be REQUESTED, DISBURSING, DISBURSED, FAILED, CANCELLED or REPAID"}
		}
		return nil
	})
	if !ok {
		return
	}
	emp, ok := singleQuery(c, "employeeId", false, identifierCheck("employeeId"))
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	rows, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]ewa.Request, error) {
		return ewa.List(ctx, tx, tenant, ewa.Filter{Status: ewa.Status(status), EmployeeID: emp, After: cursor, Limit: limit + 1})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	answerEwaPage(c, rows, limit)
}

func (s *Server) getEwaRequest(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Request, error) {
		return ewa.Get(ctx, tx, tenant, id)
	})
	if err != nil {
		writeError(c, ewaError("", id, err))
		return
	}
	c.JSON(http.StatusOK, toEwaRequestJSON(out))
}

func (s *Server) cancelEwaRequest(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (ewa.Request, error) {
		out, err := ewa.Cancel(ctx, tx, tenant, id, s.now())
		return out, ewaError(ewa.ActionCancel, id, err)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, toEwaRequestJSON(out))
}

// --- the employee's own view ---

// myEwaRequests answers the caller's own requests: as the employee linked to them in the
// session's active organization, else in the one organization they are linked in.
func (s *Server) myEwaRequests(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	ctx := c.Request.Context()
	linked, ok := s.linkedEmployees(c)
	if !ok {
		return
	}
	tenant := ""
	for _, e := range linked {
		if e.TenantID == cl.Session.ActiveOrganizationID {
			tenant = e.TenantID
		}
	}
	if tenant == "" && len(linked) == 1 {
		tenant = linked[0].TenantID
	}
	if tenant == "" {
		writeError(c, errEmployeeNotLinked)
		return
	}
	tctx := tenancy.WithTenant(ctx, tenant)
	var rows []ewa.Request
	err := tenancy.InTx(tctx, s.deps.DB, func(tx pgx.Tx) error {
		e, err := employees.ByUser(tctx, tx, tenant, cl.User.ID)
		if errors.Is(err, employees.ErrNotFound) {
			return errEmployeeNotLinked
		}
		if err != nil {
			return err
		}
		rows, err = ewa.ListForEmployee(tctx, tx, tenant, e.ID, cursor, limit+1)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	answerEwaPage(c, rows, limit)
}
