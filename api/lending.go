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
	fi := func(r Route) Route { r.Handler = s.forKind(orgs.FI, r.Handler); return r }
	biz := func(r Route) Route { r.Handler = s.forKind(orgs.Business, r.Handler); return r }
	return []Route{
		fi(Route{Method: http.MethodGet, Path: "/api/fi/accounts", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView, Summary: "The financial institution's funding and settlement accounts", Handler: s.getFIAccounts}),
		fi(Route{Method: http.MethodPut, Path: "/api/fi/accounts", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansEdit, Summary: "Set the financial institution's funding and settlement accounts", Handler: s.putFIAccounts}),
		fi(Route{Method: http.MethodPost, Path: "/api/fi/products", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansEdit, Summary: "Create a loan product", Handler: s.createLoanProduct}),
		fi(Route{Method: http.MethodGet, Path: "/api/fi/products", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView, Summary: "The financial institution's loan products (paged)", Handler: s.listLoanProducts}),
		fi(Route{Method: http.MethodGet, Path: "/api/fi/products/:id", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView, Summary: "One of the financial institution's loan products", Handler: s.getLoanProduct}),
		fi(Route{Method: http.MethodPatch, Path: "/api/fi/products/:id", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansEdit, Summary: "Change an ACTIVE loan product's terms", Handler: s.updateLoanProduct}),
		fi(Route{Method: http.MethodPost, Path: "/api/fi/products/:id/retire", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansEdit, Summary: "Retire a loan product", Handler: s.retireLoanProduct, Body: BodyNone}),
		fi(Route{Method: http.MethodGet, Path: "/api/fi/product-opt-ins", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView, Summary: "The businesses' opt-ins to the financial institution's products (paged)", Handler: s.listFIOptIns}),
		biz(Route{Method: http.MethodGet, Path: "/api/lending/products", Auth: Org, Role: orgs.PlainMember, Summary: "The loan products on offer (paged)", Handler: s.listOfferedProducts}),
		biz(Route{Method: http.MethodGet, Path: "/api/lending/products/:id", Auth: Org, Role: orgs.PlainMember, Summary: "A loan product on offer or opted in to", Handler: s.getOfferedProduct}),
		biz(Route{Method: http.MethodPost, Path: "/api/lending/product-opt-ins", Auth: Org, Role: orgs.Admin, Summary: "Opt in to a loan product", Handler: s.createOptIn}),
		biz(Route{Method: http.MethodGet, Path: "/api/lending/product-opt-ins", Auth: Org, Role: orgs.PlainMember, Summary: "The organization's loan product opt-ins (paged)", Handler: s.listOptIns}),
		biz(Route{Method: http.MethodGet, Path: "/api/lending/product-opt-ins/:id", Auth: Org, Role: orgs.PlainMember, Summary: "One loan product opt-in", Handler: s.getOptIn}),
		biz(Route{Method: http.MethodDelete, Path: "/api/lending/product-opt-ins/:id", Auth: Org, Role: orgs.Admin, Summary: "Withdraw a loan product opt-in", Handler: s.withdrawOptIn}),
		biz(Route{Method: http.MethodPost, Path: "/api/loans/quote", Auth: Org, Role: orgs.Admin, Summary: "Quote a loan for an employee (schedule and affordability; no state change)", Handler: s.quoteLoan}),
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

type loanProductListJSON struct {
	Items      []loanProductJSON `json:"items"`
	NextCursor *string           `json:"nextCursor"`
}

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

type optInListJSON struct {
	Items      []optInJSON `json:"items"`
	NextCursor *string     `json:"nextCursor"`
}

// --- shared reading ---

// lendingID reads the path id; it has answered when ok is false.
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

// --- FI accounts ---

func (s *Server) getFIAccounts(c *gin.Context) {
	type got struct {
		a  lending.FIAccounts
		ok bool
	}
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (got, error) {
		a, ok, err := lending.GetFIAccounts(ctx, tx)
		return got{a, ok}, err
	})
	if !ok {
		return
	}
	c.JSON(http.StatusOK, toFIAccountsJSON(out.a, out.ok))
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
	type got struct {
		a  lending.FIAccounts
		ok bool
	}
	cur, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (got, error) {
		a, ok, err := lending.GetFIAccounts(ctx, tx)
		return got{a, ok}, err
	})
	if !ok {
		return
	}
	if !cur.ok || cur.a.Funding() != funding {
		if e := s.checkPartnerAccount(c, accountCheck{Partner: funding.Partner, AccountNumber: funding.AccountNumber,
			Field: "fundingAccount", What: "the funding account",
			PartnerUnknown: "FI_FUNDING_PARTNER_UNKNOWN", NotFound: "FI_FUNDING_ACCOUNT_NOT_FOUND"}); e != nil {
			writeError(c, e)
			return
		}
	}
	if !cur.ok || cur.a.Settlement() != settlement {
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
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	status, ok := singleQuery(c, "status", false, enumCheck("status", "must be ACTIVE or RETIRED", lending.ProductActive, lending.ProductRetired))
	if !ok {
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.Product, error) {
		return lending.ListProducts(ctx, tx, lending.ProductFilter{Status: status, Page: db.Page{After: cursor, Limit: limit + 1}})
	})
	if ok {
		answerProductPage(c, rows, limit)
	}
}

func answerProductPage(c *gin.Context, rows []lending.Product, limit int) {
	out := loanProductListJSON{Items: []loanProductJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(p lending.Product) string { return p.ID })
	for _, p := range rows {
		out.Items = append(out.Items, toLoanProductJSON(p))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getLoanProduct(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.GetProduct(ctx, tx, id)
	})
	if ok {
		c.JSON(http.StatusOK, toLoanProductJSON(out))
	}
}

func (s *Server) updateLoanProduct(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
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
	out, ok := inTenantAudited(s, c, "UpdateLoanProduct", "LoanProduct", id, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, id, req.change(), s.now())
	})
	if ok {
		c.JSON(http.StatusOK, toLoanProductJSON(out))
	}
}

func (s *Server) retireLoanProduct(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "RetireLoanProduct", "LoanProduct", id, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, id, s.now())
	})
	if ok {
		c.JSON(http.StatusOK, toLoanProductJSON(out))
	}
}

// optInFilter reads an opt-in list's status and productId filters and its page.
func optInFilter(c *gin.Context) (lending.OptInFilter, int, bool) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return lending.OptInFilter{}, 0, false
	}
	status, ok := singleQuery(c, "status", false, enumCheck("status", "must be ACTIVE or WITHDRAWN", lending.OptInActive, lending.OptInWithdrawn))
	if !ok {
		return lending.OptInFilter{}, 0, false
	}
	product, ok := singleQuery(c, "productId", false, identifierCheck("productId"))
	if !ok {
		return lending.OptInFilter{}, 0, false
	}
	return lending.OptInFilter{Status: status, ProductID: product, Page: db.Page{After: cursor, Limit: limit + 1}}, limit, true
}

func answerOptInPage(c *gin.Context, rows []lending.OptIn, limit int) {
	out := optInListJSON{Items: []optInJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(o lending.OptIn) string { return o.ID })
	for _, o := range rows {
		out.Items = append(out.Items, toOptInJSON(o))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) listFIOptIns(c *gin.Context) {
	f, limit, ok := optInFilter(c)
	if !ok {
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.OptIn, error) {
		return lending.ListFIOptIns(ctx, tx, f)
	})
	if ok {
		answerOptInPage(c, rows, limit)
	}
}

// --- products on offer and opt-ins (the business's) ---

func (s *Server) listOfferedProducts(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	fi, ok := singleQuery(c, "fiPartnerId", false, identifierCheck("fiPartnerId"))
	if !ok {
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.Product, error) {
		return lending.ListOfferedProducts(ctx, tx, lending.ProductFilter{FIID: fi, Page: db.Page{After: cursor, Limit: limit + 1}})
	})
	if ok {
		answerProductPage(c, rows, limit)
	}
}

func (s *Server) getOfferedProduct(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.OfferedProduct(ctx, tx, id)
	})
	if ok {
		c.JSON(http.StatusOK, toLoanProductJSON(out))
	}
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

func (s *Server) listOptIns(c *gin.Context) {
	f, limit, ok := optInFilter(c)
	if !ok {
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.OptIn, error) {
		return lending.ListOptIns(ctx, tx, f)
	})
	if ok {
		answerOptInPage(c, rows, limit)
	}
}

func (s *Server) getOptIn(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.GetOptIn(ctx, tx, id)
	})
	if ok {
		c.JSON(http.StatusOK, toOptInJSON(out))
	}
}

func (s *Server) withdrawOptIn(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "WithdrawLoanProductOptIn", "LoanProductOptIn", id, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, id, s.now())
	})
	if ok {
		c.JSON(http.StatusOK, toOptInJSON(out))
	}
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

func (s *Server) quoteLoan(c *gin.Context) {
	var req quoteRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	for _, f := range []struct {
		name    string
		present bool
	}{{"employeeId", req.EmployeeID != ""}, {"productId", req.ProductID != ""}, {"amountSantim", req.AmountSantim != nil}, {"termMonths", req.TermMonths != nil}} {
		if !f.present {
			writeError(c, fieldError(&field.Error{Field: f.name, Problem: "is required"}))
			return
		}
	}
	in := lending.QuoteRequest{EmployeeID: req.EmployeeID, ProductID: req.ProductID, FIPartnerID: req.FIPartnerID,
		AmountSantim: *req.AmountSantim, TermMonths: *req.TermMonths}
	if err := in.Check(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if s.deps.LoanProjection == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the payroll projection that loans are quoted on is not configured"))
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
