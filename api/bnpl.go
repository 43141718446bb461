package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/workflows"
)

// BNPL routes (internal/bnpl): a merchant's settlement account and discount (merchants), the
// quote of a purchase for an employee, the agreement (the activation saga,
// workflows/bnpl_activate.go), its reads, the collection of an instalment (the collection saga,
// workflows/bnpl_collect.go) and the employee's own agreements.
func (s *Server) bnplRoutes() []Route {
	biz := func(r Route) Route { r.Handler = s.forKind(orgs.Business, r.Handler); return r }
	merchant := func(r Route) Route { r.Handler = s.forKind(orgs.Merchant, r.Handler); return r }
	return []Route{
		merchant(Route{Method: http.MethodGet, Path: "/api/bnpl/merchant", Auth: Org, Role: orgs.PlainMember, Permission: orgs.BnplView, Summary: "The merchant's BNPL settlement account and discount", Handler: s.getBnplMerchant}),
		merchant(Route{Method: http.MethodPut, Path: "/api/bnpl/merchant", Auth: Org, Role: orgs.Admin, Summary: "Set the merchant's BNPL settlement account and discount", Handler: s.putBnplMerchant}),
		biz(Route{Method: http.MethodGet, Path: "/api/bnpl/merchants", Auth: Org, Role: orgs.PlainMember,
			Summary: "The merchants the business may sell through now (by id; part of the name; paged)", Handler: s.listBnplMerchants}),
		biz(Route{Method: http.MethodPost, Path: "/api/bnpl/quotes", Auth: Org, Role: orgs.Admin, Summary: "Quote a purchase for an employee (plan offer and affordability; no state change)", Handler: s.quoteBnpl}),
		biz(Route{Method: http.MethodPost, Path: "/api/bnpl/agreements", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Create a BNPL agreement (gates, the merchant's settlement, instalments)", Handler: s.createBnplAgreement}),
		biz(Route{Method: http.MethodGet, Path: "/api/bnpl/agreements", Auth: Org, Role: orgs.PlainMember, Summary: "The organization's BNPL agreements (paged)", Handler: s.listBnplAgreements}),
		biz(Route{Method: http.MethodGet, Path: "/api/bnpl/repayments", Auth: Org, Role: orgs.PlainMember,
			Summary: "The business's BNPL repayments: every instalment its employees repaid, newest first, with the filter's totals by source (paged)",
			Handler: snapshot(s.bnplRepayments)}),
		biz(Route{Method: http.MethodGet, Path: "/api/bnpl/risk", Auth: Org, Role: orgs.PlainMember,
			Summary: "The business's BNPL exposure: what its employees' plans owe, by lateness, merchant and employee, and what it wrote off",
			Handler: snapshot(s.bnplRisk)}),
		// One path for a business and a merchant: the handler answers by the organization's kind
		// (a merchant also needs bnpl.view; api/bnpl_transactions.go).
		{Method: http.MethodGet, Path: "/api/bnpl/transactions", Auth: Org, Role: orgs.PlainMember,
			Summary: "Every BNPL money movement of the organization, newest first, with the filter's totals by type and state: a business's payments to merchants, repayments and write-offs; a merchant's payments received (paged)",
			Handler: snapshot(s.bnplTransactions)},
		biz(Route{Method: http.MethodGet, Path: "/api/bnpl/agreements/:id", Auth: Org, Role: orgs.PlainMember, Summary: "One BNPL agreement with its instalments", Handler: s.getBnplAgreement}),
		biz(Route{Method: http.MethodPost, Path: "/api/bnpl/agreements/:id/cancel", Auth: Org, Role: orgs.Admin, Summary: "Cancel a BNPL agreement before activation (refused once the merchant's settlement was sent)", Handler: s.cancelBnplAgreement, Body: BodyNone}),
		biz(Route{Method: http.MethodPost, Path: "/api/bnpl/agreements/:id/installments/:idx/collect", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Collect one instalment of an ACTIVE agreement", Handler: s.collectBnplInstalment, Body: BodyNone}),
		{Method: http.MethodPost, Path: "/api/bnpl/agreements/:id/restructure", Auth: Operator, Idem: true, Resolve: s.resolveBnplTenant,
			Summary: "Restructure an ACTIVE or DEFAULTED BNPL agreement: a new schedule for what is still due (operator)", Handler: s.restructureBnplAgreement},
		{Method: http.MethodGet, Path: "/api/me/bnpl/agreements", Auth: Session, Summary: "The caller's own BNPL agreements (paged)", Handler: s.myBnplAgreements},
		// Signed by the merchant's partner; checks its own body after the signature
		// (api/merchant_callback.go), as the bank callback does.
		{Method: http.MethodPost, Path: "/api/integration/merchant-callback/:partner", Auth: PublicSigned, Summary: "A merchant's word on a BNPL order (delivered, refunded, cancelled), signed by its partner", Handler: s.merchantCallback, Body: BodyOwn},
		// The customer's own opt-in: the tenant is the caller's employee's (resolveSaver).
		{Method: http.MethodPost, Path: "/api/bnpl/agreements/:id/installment-mandate", Auth: Session, Resolve: s.resolveSaver,
			Summary: "Opt in to pay the caller's own agreement's instalments by payroll deduction (a PENDING deduction mandate)", Handler: s.createBnplInstalmentMandate},
		{Method: http.MethodPost, Path: "/api/bnpl/agreements/:id/write-off", Auth: Operator, Idem: true, Resolve: s.resolveBnplTenant,
			Summary: "Write off what the customer owes on an agreement whose merchant refunded or cancelled the order (operator; the write-off saga)",
			Handler: s.writeOffBnplAgreement},
		// The merchant's side of its agreements (api/bnpl_orders.go).
		merchant(Route{Method: http.MethodGet, Path: "/api/bnpl/merchant/orders", Auth: Org, Role: orgs.PlainMember, Permission: orgs.BnplView,
			Summary: "The orders bought from the merchant on BNPL: whether and when it was paid (paged, filtered)", Handler: s.listBnplOrders}),
		merchant(Route{Method: http.MethodGet, Path: "/api/bnpl/merchant/orders/:id", Auth: Org, Role: orgs.PlainMember, Permission: orgs.BnplView,
			Summary: "One order bought from the merchant on BNPL", Handler: s.getBnplOrder}),
		merchant(Route{Method: http.MethodPost, Path: "/api/bnpl/merchant/orders/:id/reports", Auth: Org, Role: orgs.PlainMember, Permission: orgs.BnplApprove, Idem: true,
			Summary: "The merchant's word on an order (delivered, refunded, cancelled), from one of its members", Handler: s.reportBnplOrder}),
		// The merchant's settlement statement (api/bnpl_settlements.go).
		merchant(Route{Method: http.MethodGet, Path: "/api/bnpl/merchant/settlements", Auth: Org, Role: orgs.PlainMember, Permission: orgs.BnplView,
			Summary: "The merchant's settlement statement: what it was paid for its BNPL orders, by day, with what is in flight or failed", Handler: s.getBnplSettlements}),
	}
}

// --- JSON ---

type bnplAccountJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
}

type bnplMerchantJSON struct {
	MerchantID          string          `json:"merchantId"`
	SettlementAccount   bnplAccountJSON `json:"settlementAccount"`
	DiscountBasisPoints int64           `json:"discountBasisPoints"`
	UpdatedAt           time.Time       `json:"updatedAt"`
}

type bnplMerchantRequest struct {
	SettlementAccount   *bnplAccountJSON `json:"settlementAccount"`
	DiscountBasisPoints *int64           `json:"discountBasisPoints"`
}

type bnplQuoteRequest struct {
	EmployeeID     string `json:"employeeId"`
	MerchantID     string `json:"merchantId"`
	PurchaseSantim *int64 `json:"purchaseSantim"`
	Instalments    *int   `json:"instalments"`
}

type bnplAgreementRequest struct {
	bnplQuoteRequest
	MerchantReference string `json:"merchantReference"`
}

type bnplScheduledJSON struct {
	Index        int    `json:"index"`
	DueDate      string `json:"dueDate"`
	AmountSantim int64  `json:"amountSantim"`
}

type bnplAffordabilityJSON struct {
	Affordable                bool   `json:"affordable"`
	MaxInstalmentSantim       int64  `json:"maxInstalmentSantim"`
	LimitSantim               int64  `json:"limitSantim"`
	BindingLimit              string `json:"bindingLimit"`
	ProjectedNetSantim        int64  `json:"projectedNetSantim"`
	ExistingInstalmentsSantim int64  `json:"existingInstalmentsSantim"`
	ExistingBnplSantim        int64  `json:"existingBnplSantim"`
	RecoverableSantim         int64  `json:"recoverableSantim"`
	MaxDebtServiceBasisPoints int64  `json:"maxDebtServiceBasisPoints"`
	HeadroomSantim            int64  `json:"headroomSantim"`
}

type bnplQuoteJSON struct {
	EmployeeID             string                `json:"employeeId"`
	MerchantID             string                `json:"merchantId"`
	PurchaseSantim         int64                 `json:"purchaseSantim"`
	DiscountBasisPoints    int64                 `json:"discountBasisPoints"`
	DiscountSantim         int64                 `json:"discountSantim"`
	MerchantReceivesSantim int64                 `json:"merchantReceivesSantim"`
	Period                 string                `json:"period"`
	Instalments            []bnplScheduledJSON   `json:"instalments"`
	Affordability          bnplAffordabilityJSON `json:"affordability"`
}

type bnplInstalmentJSON struct {
	Index        int        `json:"index"`
	DueDate      string     `json:"dueDate"`
	AmountSantim int64      `json:"amountSantim"`
	Status       string     `json:"status"`
	Source       *string    `json:"source"`
	MandateID    *string    `json:"mandateId"`
	LedgerTxID   *string    `json:"ledgerTxId"`
	CollectedAt  *time.Time `json:"collectedAt"`
	// ScheduleVersion is 1 for the agreement's schedule, 2.. for a restructure's.
	ScheduleVersion int `json:"scheduleVersion"`
}

type bnplAgreementJSON struct {
	ID                     string     `json:"id"`
	EmployeeID             string     `json:"employeeId"`
	MerchantID             string     `json:"merchantId"`
	MerchantReference      string     `json:"merchantReference"`
	PurchaseSantim         int64      `json:"purchaseSantim"`
	DiscountSantim         int64      `json:"discountSantim"`
	MerchantReceivesSantim int64      `json:"merchantReceivesSantim"`
	OutstandingSantim      int64      `json:"outstandingSantim"`
	Status                 string     `json:"status"`
	WorkflowID             string     `json:"workflowId"`
	LedgerTxID             string     `json:"ledgerTxId"`
	TransferID             *string    `json:"transferId"`
	Failure                *string    `json:"failure"`
	CreatedAt              time.Time  `json:"createdAt"`
	ActivatedAt            *time.Time `json:"activatedAt"`
	UpdatedAt              time.Time  `json:"updatedAt"`
	// MerchantStatus is the merchant's latest word on the order (its callbacks), nil before any.
	MerchantStatus   *string              `json:"merchantStatus"`
	MerchantStatusAt *time.Time           `json:"merchantStatusAt"`
	Instalments      []bnplInstalmentJSON `json:"instalments"`
}

type bnplAgreementPageJSON struct {
	Items      []bnplAgreementJSON `json:"items"`
	NextCursor *string             `json:"nextCursor"`
}

type bnplActivateJSON struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	WorkflowID string `json:"workflowId"`
}

type bnplCollectJSON struct {
	AgreementID     string     `json:"agreementId"`
	Index           int        `json:"index"`
	AmountSantim    int64      `json:"amountSantim"`
	Status          string     `json:"status"`
	AgreementStatus string     `json:"agreementStatus"`
	LedgerTxID      string     `json:"ledgerTxId"`
	CollectedAt     *time.Time `json:"collectedAt"`
	WorkflowID      string     `json:"workflowId"`
}

func bnplOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toBnplAgreementJSON(a bnpl.Agreement) bnplAgreementJSON {
	out := bnplAgreementJSON{ID: a.ID, EmployeeID: a.EmployeeID, MerchantID: a.MerchantID, MerchantReference: a.MerchantReference,
		PurchaseSantim: a.PurchaseSantim, DiscountSantim: a.DiscountSantim, MerchantReceivesSantim: a.PurchaseSantim - a.DiscountSantim,
		OutstandingSantim: a.OutstandingSantim(), Status: a.Status, WorkflowID: a.WorkflowID, LedgerTxID: a.LedgerTxID,
		TransferID: bnplOptional(a.TransferID), Failure: bnplOptional(a.Failure), CreatedAt: a.CreatedAt, ActivatedAt: a.ActivatedAt,
		UpdatedAt: a.UpdatedAt, MerchantStatus: bnplOptional(a.MerchantStatus), MerchantStatusAt: a.MerchantStatusAt,
		Instalments: []bnplInstalmentJSON{}}
	for _, i := range a.Instalments {
		out.Instalments = append(out.Instalments, bnplInstalmentJSON{Index: i.Index, DueDate: i.DueDate.Format("2006-01-02"),
			AmountSantim: i.AmountSantim, Status: i.Status, Source: bnplOptional(i.Source), MandateID: bnplOptional(i.MandateID), LedgerTxID: bnplOptional(i.LedgerTxID),
			CollectedAt: i.CollectedAt, ScheduleVersion: i.ScheduleVersion})
	}
	return out
}

func toBnplQuoteJSON(q bnpl.Quote) bnplQuoteJSON {
	p, a := q.Plan, q.Affordability
	out := bnplQuoteJSON{EmployeeID: q.Request.EmployeeID, MerchantID: p.MerchantID, PurchaseSantim: p.PurchaseSantim,
		DiscountBasisPoints: p.DiscountBasisPoints, DiscountSantim: p.DiscountSantim, MerchantReceivesSantim: p.MerchantReceivesSantim,
		Period: q.Period, Instalments: []bnplScheduledJSON{},
		Affordability: bnplAffordabilityJSON{Affordable: a.Affordable, MaxInstalmentSantim: p.MaxInstalmentSantim, LimitSantim: a.LimitSantim,
			BindingLimit: a.Binding, ProjectedNetSantim: a.ProjectedNetSantim, ExistingInstalmentsSantim: a.ExistingInstalmentsSantim,
			ExistingBnplSantim: q.ExistingBnplSantim, RecoverableSantim: a.RecoverableSantim,
			MaxDebtServiceBasisPoints: a.MaxDebtServiceBasisPoints, HeadroomSantim: a.HeadroomSantim}}
	for _, i := range p.Instalments {
		out.Instalments = append(out.Instalments, bnplScheduledJSON{Index: i.Index, DueDate: i.DueDate, AmountSantim: i.AmountSantim})
	}
	return out
}

// --- merchants ---

func (s *Server) getBnplMerchant(c *gin.Context) {
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (bnpl.Merchant, error) {
		return bnpl.GetMerchant(ctx, tx, tenancy.TenantID(ctx))
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toBnplMerchantJSON(out))
}

// listedMerchantJSON is a merchant a business may sell through: never its account number.
type listedMerchantJSON struct {
	MerchantID          string `json:"merchantId"`
	Name                string `json:"name"`
	SettlementPartner   string `json:"settlementPartner"`
	DiscountBasisPoints int64  `json:"discountBasisPoints"`
}

var bnplMerchantListParams = map[string]bool{"name": true, "limit": true, "cursor": true}

// listBnplMerchants answers GET /api/bnpl/merchants: the merchants in good standing with a
// settlement account, by id, narrowed by a part of the name (directoryName's rule).
func (s *Server) listBnplMerchants(c *gin.Context) {
	q := c.Request.URL.Query()
	limit, cursor, e := idListQuery(q, bnplMerchantListParams)
	if e != nil {
		writeError(c, e)
		return
	}
	f := bnpl.MerchantQuery{After: cursor, Limit: limit + 1}
	if q.Has("name") {
		if f.Name, e = directoryName(q.Get("name")); e != nil {
			writeError(c, e)
			return
		}
	}
	rows, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]bnpl.ListedMerchant, error) {
		return bnpl.ListMerchants(ctx, tx, f)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	rows, next := pageOf(rows, limit, func(m bnpl.ListedMerchant) string { return m.ID })
	items := make([]listedMerchantJSON, 0, len(rows))
	for _, m := range rows {
		items = append(items, listedMerchantJSON{MerchantID: m.ID, Name: m.Name, SettlementPartner: m.SettlementPartner,
			DiscountBasisPoints: m.DiscountBasisPoints})
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "nextCursor": next})
}

func toBnplMerchantJSON(m bnpl.Merchant) bnplMerchantJSON {
	return bnplMerchantJSON{MerchantID: m.ID, SettlementAccount: bnplAccountJSON{Partner: m.Settlement.Partner,
		AccountNumber: m.Settlement.AccountNumber}, DiscountBasisPoints: m.DiscountBasisPoints, UpdatedAt: m.UpdatedAt}
}

// putBnplMerchant sets the merchant's settlement account (asked about at the partner first: an
// account the partner does not have is refused now, not at the first settlement) and discount.
func (s *Server) putBnplMerchant(c *gin.Context) {
	var req bnplMerchantRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req.SettlementAccount == nil {
		writeError(c, fieldError(&field.Error{Field: "settlementAccount", Problem: "is required"}))
		return
	}
	if req.DiscountBasisPoints == nil {
		writeError(c, fieldError(&field.Error{Field: "discountBasisPoints", Problem: "is required"}))
		return
	}
	m := bnpl.Merchant{Settlement: bnpl.Account{Partner: req.SettlementAccount.Partner, AccountNumber: req.SettlementAccount.AccountNumber},
		DiscountBasisPoints: *req.DiscountBasisPoints}
	if err := m.Check(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if e := s.checkPartnerAccount(c, accountCheck{Partner: m.Settlement.Partner, AccountNumber: m.Settlement.AccountNumber,
		Field: "settlementAccount", What: "the settlement account",
		PartnerUnknown: "BNPL_SETTLEMENT_PARTNER_UNKNOWN", NotFound: "BNPL_SETTLEMENT_ACCOUNT_NOT_FOUND"}); e != nil {
		writeError(c, e)
		return
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (bnpl.Merchant, error) {
		return bnpl.PutMerchant(ctx, tx, m, s.now())
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toBnplMerchantJSON(out))
}

// --- quotes and agreements ---

// bindBnplQuote reads a quote's fields (every one required).
func bindBnplQuote(r bnplQuoteRequest) (bnpl.QuoteRequest, *Error) {
	if e := missingField(required{"employeeId", r.EmployeeID != ""}, required{"merchantId", r.MerchantID != ""},
		required{"purchaseSantim", r.PurchaseSantim != nil}, required{"instalments", r.Instalments != nil}); e != nil {
		return bnpl.QuoteRequest{}, e
	}
	q := bnpl.QuoteRequest{EmployeeID: r.EmployeeID, MerchantID: r.MerchantID, PurchaseSantim: *r.PurchaseSantim, Instalments: *r.Instalments}
	if err := q.Check(); err != nil {
		return q, fieldError(err)
	}
	return q, nil
}

// quoteBnpl answers the plan offer and its affordability; it changes nothing (a refusal is
// answered, not audited).
func (s *Server) quoteBnpl(c *gin.Context) {
	var req bnplQuoteRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in, e := bindBnplQuote(req)
	if e != nil {
		writeError(c, e)
		return
	}
	if s.deps.LoanProjection == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the payroll projection that BNPL is quoted on is not configured"))
		return
	}
	out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (bnpl.Quote, error) {
		return bnpl.QuoteFor(ctx, tx, s.deps.LoanProjection, in)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toBnplQuoteJSON(out))
}

// createBnplAgreement quotes the purchase again (a plan the employee cannot afford is refused,
// audited DENIED CreateBnplAgreement) and starts the activation saga, answering once the gates
// have passed, the agreement is recorded and the merchant's settlement initiated (202
// DISBURSING, or ACTIVE/FAILED when the partner answered at once), or with the refusal. A retry
// of a key whose saga already recorded its agreement is answered by that saga — when it is the
// same request (bnpl.Agreement.Answers); another request under that key (its idempotency record
// expired) is 422 IDEMPOTENCY_KEY_REUSED.
func (s *Server) createBnplAgreement(c *gin.Context) {
	var req bnplAgreementRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	q, e := bindBnplQuote(req.bnplQuoteRequest)
	if e != nil {
		writeError(c, e)
		return
	}
	if req.MerchantReference == "" {
		writeError(c, fieldError(&field.Error{Field: "merchantReference", Problem: "is required"}))
		return
	}
	if err := bnpl.CheckMerchantReference(req.MerchantReference); err != nil {
		writeError(c, fieldError(err))
		return
	}
	in := bnpl.ActivateRequest{QuoteRequest: q, MerchantReference: req.MerchantReference, FirstPeriod: payroll.PeriodOf(s.now())}
	if s.deps.LoanProjection == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the payroll projection that BNPL is quoted on is not configured"))
		return
	}
	wfID, _ := idempotency.WorkflowIDFrom(c.Request.Context())
	quote, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (bnpl.Quote, error) {
		if a, ok, err := bnpl.ByWorkflow(ctx, tx, wfID); err != nil || ok {
			if ok && !a.Answers(in) {
				// The key's saga made another agreement (its idempotency record has expired
				// since): that agreement is no answer to this request.
				return bnpl.Quote{}, errIdemKeyOtherBnplAgreement
			}
			return bnpl.Quote{}, err // this key's saga holds its agreement: its answer is the answer
		}
		return bnpl.QuoteFor(ctx, tx, s.deps.LoanProjection, q)
	})
	if err != nil {
		s.payrollAnswer(c, bnpl.ActionCreateAgreement, "BnplAgreement", "", err)
		return
	}
	if quote.Period != "" {
		in.FirstPeriod, in.CapacitySantim = quote.Period, quote.Capacity()
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.BnplActivateAccepted, workflows.BnplActivateResult]{
		Workflow:    workflows.BnplActivateWorkflowName,
		Input:       workflows.BnplActivateInput{TenantID: caller.Tenant, Request: in, ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: bnpl.AgreementIDOf(wfID),
		Update:      workflows.BnplActivateAcceptedUpdate, UpdateID: workflows.BnplActivateAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return bnplRefusal(app.Type()) },
		Accepted: func(wfID string, a workflows.BnplActivateAccepted) (int, any) {
			return http.StatusAccepted, bnplActivateJSON{ID: bnpl.AgreementIDOf(wfID), Status: a.Status, WorkflowID: wfID}
		},
		Pending: func(wfID string) any {
			return bnplActivateJSON{ID: bnpl.AgreementIDOf(wfID), Status: workflows.StageDisbursing, WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.BnplActivateResult) (int, any, error) {
			if r.Status != workflows.BnplActivateRefused {
				return http.StatusAccepted, bnplActivateJSON{ID: bnpl.AgreementIDOf(wfID), Status: r.Status, WorkflowID: wfID}, nil
			}
			if e, ok := bnplRefusal(r.Code); ok {
				return 0, nil, e
			}
			return 0, nil, errors.New("bnpl activate: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"agreement_id", bnpl.AgreementIDOf(wfID)},
	})
}

var errIdemKeyOtherBnplAgreement = keyReused("made another agreement")

// bnplRefusal is the answer to a BNPL saga's refusal code; ok is false for another code.
func bnplRefusal(code string) (*Error, bool) {
	r, ok := bnpl.RefusalOf(code)
	if !ok {
		return nil, false
	}
	return NewError(r.Status, r.Code, r.Message), true
}

// bnplFilter reads the list's query: limit, cursor, status (and employeeId when byEmployee).
func bnplFilter(c *gin.Context, byEmployee bool) (bnpl.Filter, int, string, bool) {
	q := c.Request.URL.Query()
	limit, cursor, e := pageParams(q.Get("limit"), q.Get("cursor"))
	if e != nil {
		writeError(c, e)
		return bnpl.Filter{}, 0, "", false
	}
	f := bnpl.Filter{Status: q.Get("status")}
	switch f.Status {
	case "", bnpl.StatusAccepted, bnpl.StatusActive, bnpl.StatusSettled, bnpl.StatusFailed, bnpl.StatusDefaulted, bnpl.StatusWrittenOff:
	default:
		writeError(c, fieldError(&field.Error{Field: "status", Problem: "must be ACCEPTED, ACTIVE, SETTLED, FAILED, DEFAULTED or WRITTEN_OFF"}))
		return bnpl.Filter{}, 0, "", false
	}
	if byEmployee && q.Has("employeeId") {
		f.EmployeeID = q.Get("employeeId")
		if err := field.Identifier("employeeId", f.EmployeeID, 0); err != nil {
			writeError(c, fieldError(err))
			return bnpl.Filter{}, 0, "", false
		}
	}
	return f, limit, cursor, true
}

func answerBnplPage(c *gin.Context, rows []bnpl.Agreement, limit int) {
	rows, next := pageOf(rows, limit, func(a bnpl.Agreement) string { return a.ID })
	out := bnplAgreementPageJSON{Items: []bnplAgreementJSON{}, NextCursor: next}
	for _, a := range rows {
		out.Items = append(out.Items, toBnplAgreementJSON(a))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) listBnplAgreements(c *gin.Context) {
	f, limit, cursor, ok := bnplFilter(c, true)
	if !ok {
		return
	}
	rows, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]bnpl.Agreement, error) {
		return bnpl.List(ctx, tx, f, limit+1, cursor)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	answerBnplPage(c, rows, limit)
}

func bnplID(c *gin.Context) (string, bool) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 64); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	return id, true
}

func (s *Server) getBnplAgreement(c *gin.Context) {
	id, ok := bnplID(c)
	if !ok {
		return
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (bnpl.Agreement, error) {
		return bnpl.Get(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toBnplAgreementJSON(out))
}

func (s *Server) myBnplAgreements(c *gin.Context) {
	f, limit, cursor, ok := bnplFilter(c, false)
	if !ok {
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	f.EmployeeID = emp
	var rows []bnpl.Agreement
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) (err error) {
		rows, err = bnpl.List(ctx, tx, f, limit+1, cursor)
		return err
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	answerBnplPage(c, rows, limit)
}

// cancelBnplAgreement answers a cancellation: 404 for an agreement this organization does not
// have, else the refusal bnpl.CancelRefusal gives (409, audited DENIED CancelBnplAgreement; nothing
// else written), since every agreement's merchant settlement is sent when it is made.
func (s *Server) cancelBnplAgreement(c *gin.Context) {
	id, ok := bnplID(c)
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		a, err := bnpl.Get(ctx, tx, id)
		if err != nil {
			return s.bnplStateRefusal(bnpl.ActionCancelAgreement, id, err)
		}
		return s.bnplStateRefusal(bnpl.ActionCancelAgreement, id, bnpl.CancelRefusal(a))
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	writeError(c, errors.New("bnpl cancel: no refusal for an agreement"))
}

// --- payroll deduction ---

// createBnplInstalmentMandate records the customer's opt-in to pay their own ACTIVE agreement's
// instalments by payroll deduction: a PENDING BNPL_INSTALLMENT deduction mandate
// (bnpl.CreateInstalmentMandate; internal/payroll/product_mandate.go), answered as the payroll
// mandate routes answer a mandate (201). Another organization's or another customer's agreement
// is 404; a payroll approver activates the mandate.
func (s *Server) createBnplInstalmentMandate(c *gin.Context) {
	id, ok := bnplID(c)
	if !ok {
		return
	}
	start, end, ok := bindProductMandate(c)
	if !ok {
		return
	}
	emp := c.GetString(saverKey)
	m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return bnpl.CreateInstalmentMandate(ctx, tx, id, emp, start, end, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CreateDeductionMandate", "BnplAgreement", id, err)
		return
	}
	c.JSON(http.StatusCreated, toMandateJSON(m))
}

// --- collection ---

// collectBnplInstalment starts the instalment's one collection saga, or attaches to it
// (workflows.BnplCollectWorkflowID: every key and caller collecting one instalment reaches the
// same run, so racing collections are one), and answers once it is recorded (200), or with the
// refusal. The pre-check answers an unknown agreement or instalment (404), and an instalment
// collected already or held by another saga, an agreement that is not ACTIVE, or one whose
// merchant refunded or cancelled the order (409 BNPL_MERCHANT_ORDER_REVERSED; the saga's reserve
// step refuses it too), audited DENIED CollectBnplInstalment; an instalment its own saga holds is
// attached to.
func (s *Server) collectBnplInstalment(c *gin.Context) {
	id, ok := bnplID(c)
	if !ok {
		return
	}
	idx, err := strconv.Atoi(c.Param("idx"))
	if err != nil || idx < 0 || idx > bnpl.MaxInstalmentIndex || c.Param("idx") != strconv.Itoa(idx) {
		writeError(c, fieldError(&field.Error{Field: "idx", Problem: "must be a whole number from 0 to 59"}))
		return
	}
	caller := callerOf(c)
	runSaga(s, c, sagaCall[workflows.BnplCollectAccepted, workflows.BnplCollectResult]{
		Workflow: workflows.BnplCollectWorkflowName,
		Input: workflows.BnplCollectInput{TenantID: caller.Tenant, AgreementID: id, Index: idx, Source: bnpl.SourceManual,
			ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id, WorkflowID: workflows.BnplCollectWorkflowID(caller.Tenant, id, idx), RestartClosed: true,
		Update: workflows.BnplCollectAcceptedUpdate, UpdateID: workflows.BnplCollectAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return bnplRefusal(app.Type()) },
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			a, err := bnpl.Get(ctx, tx, id)
			if err != nil {
				return sagaPrecheck{}, s.bnplCollectRefusal(id, err)
			}
			i, found := bnplInstalment(a, idx)
			if !found {
				return sagaPrecheck{}, s.bnplCollectRefusal(id, bnpl.RefusalError(bnpl.CodeInstalmentNotFound))
			}
			switch {
			case i.Status == bnpl.InstalmentCollecting && i.CollectWorkflowID == wfID:
				return sagaPrecheck{Owner: wfID}, nil
			case i.Status == bnpl.InstalmentCollected && i.CollectWorkflowID == wfID:
				// The instalment's one saga recorded it. A call that arrives now is a new request
				// for a collected instalment: 409 (the error). A call that was waiting on the saga
				// when its wait ran out reads this again (ownsTarget, which takes Done and not the
				// error) and is answered the collection it was attached to.
				return sagaPrecheck{Done: &sagaAnswer{Status: http.StatusOK, Body: toBnplCollectJSON(wfID, bnpl.Collection{
						AgreementID: a.ID, EmployeeID: a.EmployeeID, Index: i.Index, AmountSantim: i.AmountSantim, Status: i.Status,
						AgreementStatus: a.Status, LedgerTxID: i.LedgerTxID, CollectedAt: i.CollectedAt})}},
					s.bnplCollectRefusal(id, bnpl.RefusalError(bnpl.CodeInstalmentNotDue))
			case i.Status != bnpl.InstalmentDue:
				return sagaPrecheck{}, s.bnplCollectRefusal(id, bnpl.RefusalError(bnpl.CodeInstalmentNotDue))
			case a.Status != bnpl.StatusActive:
				return sagaPrecheck{}, s.bnplCollectRefusal(id, bnpl.RefusalError(bnpl.CodeInvalidState))
			case a.CollectionStopped():
				return sagaPrecheck{}, s.bnplCollectRefusal(id, bnpl.RefusalError(bnpl.CodeOrderReversed))
			}
			if err := bnpl.CheckNoOpenRun(ctx, tx, a); err != nil {
				return sagaPrecheck{}, s.bnplCollectRefusal(id, err)
			}
			return sagaPrecheck{}, nil
		},
		Accepted: func(wfID string, a workflows.BnplCollectAccepted) (int, any) {
			return http.StatusOK, toBnplCollectJSON(wfID, a.Collection)
		},
		Pending: func(wfID string) any {
			return bnplCollectJSON{AgreementID: id, Index: idx, Status: bnpl.InstalmentCollecting, WorkflowID: wfID}
		},
		Closed: func(wfID string, r workflows.BnplCollectResult) (int, any, error) {
			switch {
			case r.Status == workflows.BnplCollectRecorded:
				return http.StatusOK, toBnplCollectJSON(wfID, r.Collection), nil
			case r.Status == workflows.BnplCollectFailed:
				e, _ := bnplRefusal(bnpl.CodeCollectionRefused)
				return 0, nil, e
			}
			if e, ok := bnplRefusal(r.Code); ok {
				return 0, nil, e
			}
			return 0, nil, errors.New("bnpl collect: the saga ended " + r.Status + " " + r.Code)
		},
		LogAttrs: []any{"agreement_id", id, "index", idx},
	})
}

// bnplInstalment is instalment idx of a (indexes pass the first schedule's after a restructure).
func bnplInstalment(a bnpl.Agreement, idx int) (bnpl.Instalment, bool) {
	for _, i := range a.Instalments {
		if i.Index == idx {
			return i, true
		}
	}
	return bnpl.Instalment{}, false
}

func toBnplCollectJSON(wfID string, c bnpl.Collection) bnplCollectJSON {
	return bnplCollectJSON{AgreementID: c.AgreementID, Index: c.Index, AmountSantim: c.AmountSantim, Status: c.Status,
		AgreementStatus: c.AgreementStatus, LedgerTxID: c.LedgerTxID, CollectedAt: c.CollectedAt, WorkflowID: wfID}
}

// bnplCollectRefusal is the pre-check's refusal: a state refusal audited DENIED
// CollectBnplInstalment (a not-found is not audited).
func (s *Server) bnplCollectRefusal(id string, err error) error {
	return s.bnplStateRefusal(bnpl.ActionCollectInstalment, id, err)
}

// bnplStateRefusal is err as the API's answer: a BNPL state refusal audited DENIED action on the
// agreement (a not-found is not audited); another error is returned as it is.
func (s *Server) bnplStateRefusal(action, id string, err error) error {
	r, ok := bnpl.RefusalOf(bnpl.CodeOf(err))
	if !ok {
		return err
	}
	e := NewError(r.Status, r.Code, r.Message)
	if r.Status == http.StatusNotFound {
		return e
	}
	return &refusal{err: e, entry: audit.Entry{Action: action, Outcome: audit.Denied, TargetType: "BnplAgreement",
		TargetID: id, Details: map[string]string{"code": r.Code}}}
}
