package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Salary-backed lending, first part (issue 24): a financial institution's accounts and loan
// products (/api/fi/*, for the FI's own members with the loans permission module), the products a
// business may offer its employees and its opt-ins to them (/api/lending/*), and the quote of a
// loan (/api/loans/quote). The rules and the stores are internal/lending; the schedule's
// arithmetic internal/lending/schedule. An FI route answers 403 ORGANIZATION_NOT_FI in any other
// kind of organization, a business route 403 ORGANIZATION_NOT_BUSINESS (audited like every
// access refusal); another FI's product and another business's opt-in are 404.

// lendingRoutes serves the lending routes of this file.
func (s *Server) lendingRoutes() []Route {
	return []Route{
		s.fiRoute(http.MethodGet, "/api/fi/accounts", "The financial institution's funding and settlement accounts", orgs.LoansView, s.getFIAccounts, BodyByMethod),
		s.fiRoute(http.MethodPut, "/api/fi/accounts", "Set the financial institution's funding and settlement accounts", orgs.LoansEdit, s.putFIAccounts, BodyByMethod),
		s.fiRoute(http.MethodPost, "/api/fi/products", "Create a loan product", orgs.LoansEdit, s.createLoanProduct, BodyByMethod),
		s.fiRoute(http.MethodGet, "/api/fi/products", "The financial institution's loan products (paged)", orgs.LoansView, s.listLoanProducts, BodyByMethod),
		s.fiRoute(http.MethodGet, "/api/fi/products/:id", "One of the financial institution's loan products", orgs.LoansView, s.getLoanProduct, BodyByMethod),
		s.fiRoute(http.MethodPatch, "/api/fi/products/:id", "Change an ACTIVE loan product's terms", orgs.LoansEdit, s.updateLoanProduct, BodyByMethod),
		s.fiRoute(http.MethodPost, "/api/fi/products/:id/retire", "Retire a loan product", orgs.LoansEdit, s.retireLoanProduct, BodyNone),
		s.fiRoute(http.MethodGet, "/api/fi/product-opt-ins", "The businesses' opt-ins to the financial institution's products (paged)", orgs.LoansView, s.listFIOptIns, BodyByMethod),
		s.bizRoute(http.MethodGet, "/api/lending/products", "The loan products on offer (paged)", orgs.PlainMember, s.listOfferedProducts, BodyByMethod),
		s.bizRoute(http.MethodGet, "/api/lending/products/:id", "A loan product on offer or opted in to", orgs.PlainMember, s.getOfferedProduct, BodyByMethod),
		s.bizRoute(http.MethodPost, "/api/lending/product-opt-ins", "Opt in to a loan product", orgs.Admin, s.createOptIn, BodyByMethod),
		s.bizRoute(http.MethodGet, "/api/lending/product-opt-ins", "The organization's loan product opt-ins (paged)", orgs.PlainMember, s.listOptIns, BodyByMethod),
		s.bizRoute(http.MethodGet, "/api/lending/product-opt-ins/:id", "One loan product opt-in", orgs.PlainMember, s.getOptIn, BodyByMethod),
		s.bizRoute(http.MethodDelete, "/api/lending/product-opt-ins/:id", "Withdraw a loan product opt-in", orgs.Admin, s.withdrawOptIn, BodyByMethod),
		s.bizRoute(http.MethodPost, "/api/loans/quote", "Quote a loan for an employee (schedule and affordability; no state change)", orgs.Admin, s.quoteLoan, BodyByMethod),
	}
}

// forKind answers 403 (audited) unless the route's organization is of kind k, then runs h.
func (s *Server) forKind(k orgs.Kind, h gin.HandlerFunc) gin.HandlerFunc {
	refusal, ok := notOfKind[k]
	if !ok {
		panic("api: forKind of an unknown kind " + string(k))
	}
	return func(c *gin.Context) {
		cl := callerOf(c)
		if cl.Access.OrgKind != k {
			s.deny(c, cl.Tenant, refusal.code, refusal.message)
			return
		}
		h(c)
	}
}

// fiRoute is a route of a financial institution's members who hold perm (a loans permission);
// any other kind of organization is refused 403 ORGANIZATION_NOT_FI (forKind).
func (s *Server) fiRoute(method, path, summary string, perm orgs.Permission, h gin.HandlerFunc, body Body) Route {
	return Route{Method: method, Path: path, Auth: Org, Role: orgs.PlainMember, Permission: perm, Summary: summary,
		Handler: s.forKind(orgs.FI, h), Body: body}
}

// bizRoute is a route of a business's members of at least role; any other kind of organization
// is refused 403 ORGANIZATION_NOT_BUSINESS (forKind).
func (s *Server) bizRoute(method, path, summary string, role orgs.MemberRole, h gin.HandlerFunc, body Body) Route {
	return Route{Method: method, Path: path, Auth: Org, Role: role, Summary: summary, Handler: s.forKind(orgs.Business, h), Body: body}
}

// notOfKind is forKind's refusal for each kind.
var notOfKind = map[orgs.Kind]struct{ code, message string }{
	orgs.Business: {"ORGANIZATION_NOT_BUSINESS", "this route is for businesses"},
	orgs.FI:       {"ORGANIZATION_NOT_FI", "this route is for financial institutions"},
	orgs.Merchant: {"ORGANIZATION_NOT_MERCHANT", "this route is for merchants"},
}

// --- JSON ---

type lendingAccountJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
}

type fiAccountsJSON struct {
	FundingAccount    *lendingAccountJSON `json:"fundingAccount"`
	SettlementAccount *lendingAccountJSON `json:"settlementAccount"`
	UpdatedAt         *time.Time          `json:"updatedAt"`
}

func toFIAccountsJSON(a lending.FIAccounts, ok bool) fiAccountsJSON {
	if !ok {
		return fiAccountsJSON{}
	}
	t := a.UpdatedAt.UTC()
	return fiAccountsJSON{FundingAccount: &lendingAccountJSON{a.FundingPartner, a.FundingAccountNumber},
		SettlementAccount: &lendingAccountJSON{a.SettlementPartner, a.SettlementAccountNumber}, UpdatedAt: &t}
}

type loanProductJSON struct {
	ID                        string     `json:"id"`
	FIPartnerID               string     `json:"fiPartnerId"`
	Name                      string     `json:"name"`
	Description               string     `json:"description"`
	AnnualRateBasisPoints     int64      `json:"annualRateBasisPoints"`
	MinTermMonths             int        `json:"minTermMonths"`
	MaxTermMonths             int        `json:"maxTermMonths"`
	MinAmountSantim           int64      `json:"minAmountSantim"`
	MaxAmountSantim           int64      `json:"maxAmountSantim"`
	FeeFlatSantim             int64      `json:"feeFlatSantim"`
	FeeBasisPoints            int64      `json:"feeBasisPoints"`
	MaxDebtServiceBasisPoints int64      `json:"maxDebtServiceBasisPoints"`
	DefaultAfterDays          int        `json:"defaultAfterDays"`
	Status                    string     `json:"status"`
	Version                   int        `json:"version"`
	CreatedAt                 time.Time  `json:"createdAt"`
	UpdatedAt                 time.Time  `json:"updatedAt"`
	RetiredAt                 *time.Time `json:"retiredAt"`
	// FIName is the lender's name, in a business's reads of the products on offer.
	FIName string `json:"fiName,omitempty"`
}

func toLoanProductJSON(p lending.Product) loanProductJSON {
	return loanProductJSON{ID: p.ID, FIPartnerID: p.TenantID, Name: p.Name, Description: p.Description,
		AnnualRateBasisPoints: p.AnnualRateBasisPoints, MinTermMonths: p.MinTermMonths, MaxTermMonths: p.MaxTermMonths,
		MinAmountSantim: p.MinAmountSantim, MaxAmountSantim: p.MaxAmountSantim, FeeFlatSantim: p.FeeFlatSantim,
		FeeBasisPoints: p.FeeBasisPoints, MaxDebtServiceBasisPoints: p.MaxDebtServiceBasisPoints, DefaultAfterDays: p.DefaultAfterDays, Status: p.Status,
		Version: p.Version, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC(), RetiredAt: utcPtr(p.RetiredAt), FIName: p.FIName}
}

// loanProductListJSON is a page of loan products.
type loanProductListJSON = itemsPage[loanProductJSON]

type optInJSON struct {
	ID          string     `json:"id"`
	BusinessID  string     `json:"businessId"`
	ProductID   string     `json:"productId"`
	FIPartnerID string     `json:"fiPartnerId"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	WithdrawnAt *time.Time `json:"withdrawnAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
}

func toOptInJSON(o lending.OptIn) optInJSON {
	return optInJSON{ID: o.ID, BusinessID: o.TenantID, ProductID: o.ProductID, FIPartnerID: o.FIID, Status: o.Status,
		CreatedAt: o.CreatedAt.UTC(), WithdrawnAt: utcPtr(o.WithdrawnAt), UpdatedAt: o.UpdatedAt.UTC()}
}

// optInListJSON is a page of opt-ins.
type optInListJSON = itemsPage[optInJSON]

// --- shared reading ---

// enumCheck refuses, with problem, a value of name that is none of allowed.
func enumCheck(name, problem string, allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return &field.Error{Field: name, Problem: problem}
	}
}

// answerPathRow runs fn on the path's row (onPathRow: a refusal by a rule audited DENIED as
// action on target and the id, when action is set) and answers 200 with the row as toJSON shows
// it.
func answerPathRow[T, J any](s *Server, c *gin.Context, action, target string, fn func(ctx context.Context, tx db.BunTx, id string) (T, error), toJSON func(T) J) {
	if out, ok := onPathRow(s, c, action, target, fn); ok {
		c.JSON(http.StatusOK, toJSON(out))
	}
}

// --- FI accounts ---

// fiAccountsRead is the FI's accounts as read: set is false while none are.
type fiAccountsRead struct {
	a   lending.FIAccounts
	set bool
}

// readFIAccounts reads the tenant's FI accounts; it has answered when ok is false.
func (s *Server) readFIAccounts(c *gin.Context) (fiAccountsRead, bool) {
	return inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (fiAccountsRead, error) {
		a, set, err := lending.GetFIAccounts(ctx, tx)
		return fiAccountsRead{a, set}, err
	})
}

func (s *Server) getFIAccounts(c *gin.Context) {
	if out, ok := s.readFIAccounts(c); ok {
		c.JSON(http.StatusOK, toFIAccountsJSON(out.a, out.set))
	}
}

type fiAccountsRequest struct {
	FundingAccount    *lendingAccountJSON `json:"fundingAccount"`
	SettlementAccount *lendingAccountJSON `json:"settlementAccount"`
}

func (s *Server) putFIAccounts(c *gin.Context) {
	var req fiAccountsRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req.FundingAccount == nil {
		writeError(c, fieldError(&field.Error{Field: "fundingAccount", Problem: "is required"}))
		return
	}
	if req.SettlementAccount == nil {
		writeError(c, fieldError(&field.Error{Field: "settlementAccount", Problem: "is required"}))
		return
	}
	funding := lending.Account{Partner: req.FundingAccount.Partner, AccountNumber: req.FundingAccount.AccountNumber}
	settlement := lending.Account{Partner: req.SettlementAccount.Partner, AccountNumber: req.SettlementAccount.AccountNumber}
	if err := funding.Check("fundingAccount"); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := settlement.Check("settlementAccount"); err != nil {
		writeError(c, fieldError(err))
		return
	}
	// An account is asked about at the partner when it is set or changed (checkPartnerAccount,
	// the EWA funding account's check): one the partner does not have is refused now, not at the
	// first disbursement or remittance.
	cur, ok := s.readFIAccounts(c)
	if !ok {
		return
	}
	if !cur.set || cur.a.Funding() != funding {
		if e := s.checkPartnerAccount(c, accountCheck{Partner: funding.Partner, AccountNumber: funding.AccountNumber,
			Field: "fundingAccount", What: "the funding account",
			PartnerUnknown: "FI_FUNDING_PARTNER_UNKNOWN", NotFound: "FI_FUNDING_ACCOUNT_NOT_FOUND"}); e != nil {
			writeError(c, e)
			return
		}
	}
	if !cur.set || cur.a.Settlement() != settlement {
		if e := s.checkPartnerAccount(c, accountCheck{Partner: settlement.Partner, AccountNumber: settlement.AccountNumber,
			Field: "settlementAccount", What: "the settlement account",
			PartnerUnknown: "FI_SETTLEMENT_PARTNER_UNKNOWN", NotFound: "FI_SETTLEMENT_ACCOUNT_NOT_FOUND"}); e != nil {
			writeError(c, e)
			return
		}
	}
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (lending.FIAccounts, error) {
		return lending.PutFIAccounts(ctx, tx, funding, settlement, s.now())
	})
	if !ok {
		return
	}
	c.JSON(http.StatusOK, toFIAccountsJSON(out, true))
}

// --- products (the FI's) ---

type loanProductRequest struct {
	Name                      *string `json:"name"`
	Description               *string `json:"description"`
	AnnualRateBasisPoints     *int64  `json:"annualRateBasisPoints"`
	MinTermMonths             *int    `json:"minTermMonths"`
	MaxTermMonths             *int    `json:"maxTermMonths"`
	MinAmountSantim           *int64  `json:"minAmountSantim"`
	MaxAmountSantim           *int64  `json:"maxAmountSantim"`
	FeeFlatSantim             *int64  `json:"feeFlatSantim"`
	FeeBasisPoints            *int64  `json:"feeBasisPoints"`
	MaxDebtServiceBasisPoints *int64  `json:"maxDebtServiceBasisPoints"`
	DefaultAfterDays          *int    `json:"defaultAfterDays"`
}

func (r loanProductRequest) change() lending.ProductChange {
	return lending.ProductChange{Name: r.Name, Description: r.Description, AnnualRateBasisPoints: r.AnnualRateBasisPoints,
		MinTermMonths: r.MinTermMonths, MaxTermMonths: r.MaxTermMonths, MinAmountSantim: r.MinAmountSantim,
		MaxAmountSantim: r.MaxAmountSantim, FeeFlatSantim: r.FeeFlatSantim, FeeBasisPoints: r.FeeBasisPoints,
		MaxDebtServiceBasisPoints: r.MaxDebtServiceBasisPoints, DefaultAfterDays: r.DefaultAfterDays}
}

// terms is the create request's terms: the required fields present, the optional ones 0 or "".
func (r loanProductRequest) terms() (lending.ProductTerms, error) {
	for _, f := range []struct {
		name    string
		present bool
	}{{"name", r.Name != nil}, {"annualRateBasisPoints", r.AnnualRateBasisPoints != nil}, {"minTermMonths", r.MinTermMonths != nil},
		{"maxTermMonths", r.MaxTermMonths != nil}, {"minAmountSantim", r.MinAmountSantim != nil}, {"maxAmountSantim", r.MaxAmountSantim != nil},
		{"maxDebtServiceBasisPoints", r.MaxDebtServiceBasisPoints != nil}} {
		if !f.present {
			return lending.ProductTerms{}, &field.Error{Field: f.name, Problem: "is required"}
		}
	}
	if r.DefaultAfterDays != nil && *r.DefaultAfterDays == 0 {
		return lending.ProductTerms{}, &field.Error{Field: "defaultAfterDays",
			Problem: fmt.Sprintf("must be from %d to %d", lending.MinDefaultAfterDays, lending.MaxDefaultAfterDays)}
	}
	return r.change().Apply(lending.ProductTerms{DefaultAfterDays: lending.DefaultAfterDays}), nil
}

func (s *Server) createLoanProduct(c *gin.Context) {
	var req loanProductRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	in, err := req.terms()
	if err == nil {
		err = in.Check()
	}
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, ok := inTenantAudited(s, c, "CreateLoanProduct", "LoanProduct", "", func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.CreateProduct(ctx, tx, in, s.now())
	})
	if !ok {
		return
	}
	c.JSON(http.StatusCreated, toLoanProductJSON(out))
}

func (s *Server) listLoanProducts(c *gin.Context) {
	var f lending.ProductFilter
	s.answerProducts(c, &f, enumParam("status", &f.Status, "must be ACTIVE or RETIRED", lending.ProductActive, lending.ProductRetired), lending.ListProducts)
}

// answerProducts reads a product list's page and its one filter parameter (param, whose value
// lands in *f), lists that page of f with list and answers it.
func (s *Server) answerProducts(c *gin.Context, f *lending.ProductFilter, param filterParam,
	list func(ctx context.Context, tx db.BunTx, f lending.ProductFilter) ([]lending.Product, error)) {
	limit, cursor, ok := pagedFilters(c, param)
	if !ok {
		return
	}
	f.Page = db.Page{After: cursor, Limit: limit + 1}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.Product, error) {
		return list(ctx, tx, *f)
	})
	if ok {
		c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(p lending.Product) string { return p.ID }, toLoanProductJSON))
	}
}

func (s *Server) getLoanProduct(c *gin.Context) {
	answerPathRow(s, c, "", "", lending.GetProduct, toLoanProductJSON)
}

func (s *Server) updateLoanProduct(c *gin.Context) {
	// The path's id is refused before the body, as on every route of an id and a body.
	if _, ok := pathID(c); !ok {
		return
	}
	var req loanProductRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req == (loanProductRequest{}) {
		writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", "name at least one term to change"))
		return
	}
	answerPathRow(s, c, "UpdateLoanProduct", "LoanProduct", func(ctx context.Context, tx db.BunTx, id string) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, id, req.change(), s.now())
	}, toLoanProductJSON)
}

func (s *Server) retireLoanProduct(c *gin.Context) {
	answerPathRow(s, c, "RetireLoanProduct", "LoanProduct", func(ctx context.Context, tx db.BunTx, id string) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, id, s.now())
	}, toLoanProductJSON)
}

// answerOptIns reads an opt-in list's page and its status and productId filters, lists that page
// with list (the FI's opt-ins or the business's) and answers it.
func (s *Server) answerOptIns(c *gin.Context, list func(ctx context.Context, tx db.BunTx, f lending.OptInFilter) ([]lending.OptIn, error)) {
	var f lending.OptInFilter
	limit, cursor, ok := pagedFilters(c,
		enumParam("status", &f.Status, "must be ACTIVE or WITHDRAWN", lending.OptInActive, lending.OptInWithdrawn),
		idParam("productId", &f.ProductID))
	if !ok {
		return
	}
	f.Page = db.Page{After: cursor, Limit: limit + 1}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.OptIn, error) {
		return list(ctx, tx, f)
	})
	if ok {
		c.JSON(http.StatusOK, itemsPageOf(rows, limit, func(o lending.OptIn) string { return o.ID }, toOptInJSON))
	}
}

func (s *Server) listFIOptIns(c *gin.Context) { s.answerOptIns(c, lending.ListFIOptIns) }

// --- products on offer and opt-ins (the business's) ---

func (s *Server) listOfferedProducts(c *gin.Context) {
	var f lending.ProductFilter
	s.answerProducts(c, &f, idParam("fiPartnerId", &f.FIID), lending.ListOfferedProducts)
}

func (s *Server) getOfferedProduct(c *gin.Context) {
	answerPathRow(s, c, "", "", lending.OfferedProduct, toLoanProductJSON)
}

type optInRequest struct {
	ProductID string `json:"productId"`
}

func (s *Server) createOptIn(c *gin.Context) {
	var req optInRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("productId", req.ProductID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, ok := inTenantAudited(s, c, "OptInLoanProduct", "LoanProduct", req.ProductID, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.OptInToProduct(ctx, tx, req.ProductID, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toOptInJSON(out))
	}
}

func (s *Server) listOptIns(c *gin.Context) { s.answerOptIns(c, lending.ListOptIns) }

func (s *Server) getOptIn(c *gin.Context) {
	answerPathRow(s, c, "", "", lending.GetOptIn, toOptInJSON)
}

func (s *Server) withdrawOptIn(c *gin.Context) {
	answerPathRow(s, c, "WithdrawLoanProductOptIn", "LoanProductOptIn", func(ctx context.Context, tx db.BunTx, id string) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, id, s.now())
	}, toOptInJSON)
}

// --- quote ---

type quoteRequest struct {
	EmployeeID   string `json:"employeeId"`
	ProductID    string `json:"productId"`
	FIPartnerID  string `json:"fiPartnerId"`
	AmountSantim *int64 `json:"amountSantim"`
	TermMonths   *int   `json:"termMonths"`
}

type quoteInstalmentJSON struct {
	Index           int    `json:"index"`
	DuePeriod       string `json:"duePeriod"`
	PrincipalSantim int64  `json:"principalSantim"`
	InterestSantim  int64  `json:"interestSantim"`
	FeeSantim       int64  `json:"feeSantim"`
	TotalSantim     int64  `json:"totalSantim"`
	BalanceSantim   int64  `json:"balanceSantim"`
}

type affordabilityJSON struct {
	Affordable                bool   `json:"affordable"`
	MonthlyInstalmentSantim   int64  `json:"monthlyInstalmentSantim"`
	ProjectedNetSantim        int64  `json:"projectedNetSantim"`
	ExistingInstalmentsSantim int64  `json:"existingInstalmentsSantim"`
	RecoverableSantim         int64  `json:"recoverableSantim"`
	MaxDebtServiceBasisPoints int64  `json:"maxDebtServiceBasisPoints"`
	DebtServiceLimitSantim    int64  `json:"debtServiceLimitSantim"`
	LimitSantim               int64  `json:"limitSantim"`
	BindingLimit              string `json:"bindingLimit"`
	HeadroomSantim            int64  `json:"headroomSantim"`
	MaxAmountSantim           int64  `json:"maxAmountSantim"`
}

type quoteJSON struct {
	EmployeeID              string                `json:"employeeId"`
	ProductID               string                `json:"productId"`
	ProductVersion          int                   `json:"productVersion"`
	FIPartnerID             string                `json:"fiPartnerId"`
	AmountSantim            int64                 `json:"amountSantim"`
	TermMonths              int                   `json:"termMonths"`
	AnnualRateBasisPoints   int64                 `json:"annualRateBasisPoints"`
	FeeFlatSantim           int64                 `json:"feeFlatSantim"`
	FeeBasisPoints          int64                 `json:"feeBasisPoints"`
	FirstDuePeriod          string                `json:"firstDuePeriod"`
	PaymentSantim           int64                 `json:"paymentSantim"`
	MonthlyInstalmentSantim int64                 `json:"monthlyInstalmentSantim"`
	TotalPrincipalSantim    int64                 `json:"totalPrincipalSantim"`
	TotalInterestSantim     int64                 `json:"totalInterestSantim"`
	TotalFeeSantim          int64                 `json:"totalFeeSantim"`
	TotalRepayableSantim    int64                 `json:"totalRepayableSantim"`
	APRBasisPoints          *int64                `json:"aprBasisPoints"`
	Instalments             []quoteInstalmentJSON `json:"instalments"`
	Affordability           affordabilityJSON     `json:"affordability"`
}

func toQuoteJSON(q lending.Quote) quoteJSON {
	s, a := q.Schedule, q.Affordability
	out := quoteJSON{EmployeeID: q.Request.EmployeeID, ProductID: q.Product.ID, ProductVersion: q.Product.Version,
		FIPartnerID: q.Product.TenantID, AmountSantim: q.Request.AmountSantim, TermMonths: q.Request.TermMonths,
		AnnualRateBasisPoints: q.Product.AnnualRateBasisPoints, FeeFlatSantim: q.Product.FeeFlatSantim, FeeBasisPoints: q.Product.FeeBasisPoints,
		FirstDuePeriod: s.Instalments[0].DuePeriod, PaymentSantim: s.PaymentSantim, MonthlyInstalmentSantim: s.MaxInstalmentSantim,
		TotalPrincipalSantim: s.TotalPrincipalSantim, TotalInterestSantim: s.TotalInterestSantim, TotalFeeSantim: s.TotalFeeSantim,
		TotalRepayableSantim: s.TotalSantim, APRBasisPoints: s.APRBasisPoints, Instalments: make([]quoteInstalmentJSON, len(s.Instalments)),
		Affordability: toAffordabilityJSON(a)}
	for i, in := range s.Instalments {
		out.Instalments[i] = quoteInstalmentJSON{Index: in.Index, DuePeriod: in.DuePeriod, PrincipalSantim: in.PrincipalSantim,
			InterestSantim: in.InterestSantim, FeeSantim: in.FeeSantim, TotalSantim: in.TotalSantim, BalanceSantim: in.BalanceSantim}
	}
	return out
}

// loanRequest reads and checks the body a quote and an origination share (quoteRequest), and
// refuses 503 NOT_CONFIGURED while the payroll projection is missing (use says what the route
// does with it: "quoted", "judged"). It has answered when ok is false.
func (s *Server) loanRequest(c *gin.Context, use string) (lending.QuoteRequest, bool) {
	var req quoteRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return lending.QuoteRequest{}, false
	}
	if e := missingField(required{"employeeId", req.EmployeeID != ""}, required{"productId", req.ProductID != ""},
		required{"amountSantim", req.AmountSantim != nil}, required{"termMonths", req.TermMonths != nil}); e != nil {
		writeError(c, e)
		return lending.QuoteRequest{}, false
	}
	in := lending.QuoteRequest{EmployeeID: req.EmployeeID, ProductID: req.ProductID, FIPartnerID: req.FIPartnerID,
		AmountSantim: *req.AmountSantim, TermMonths: *req.TermMonths}
	if err := in.Check(); err != nil {
		writeError(c, fieldError(err))
		return lending.QuoteRequest{}, false
	}
	if s.deps.LoanProjection == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the payroll projection that loans are "+use+" on is not configured"))
		return lending.QuoteRequest{}, false
	}
	return in, true
}

func (s *Server) quoteLoan(c *gin.Context) {
	in, ok := s.loanRequest(c, "quoted")
	if !ok {
		return
	}
	// A quote changes nothing, so a refusal is answered, not audited.
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (lending.Quote, error) {
		return lending.QuoteLoan(ctx, tx, s.deps.LoanProjection, in)
	})
	if ok {
		c.JSON(http.StatusOK, toQuoteJSON(out))
	}
}
