package lending

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A loan product is what an FI offers a business's employees: an annual interest rate, the terms
// and amounts it lends for, its fee (flat and a share of the principal, spread over the
// instalments: package schedule) and the most of a borrower's net pay all their instalments
// together may take. Lifecycle: ACTIVE → RETIRED (retire, final). An ACTIVE product's terms may
// be changed (version + 1); a quote uses the current terms and a loan will keep its own copy.

// Product states.
const (
	ProductActive  = "ACTIVE"
	ProductRetired = "RETIRED"
)

// Bounds of a product's terms (the database checks them again).
const (
	MaxProductName                  = 128
	MaxProductDescription           = 512
	MaxAnnualRateBasisPoints        = 10_000 // 100% a year
	MinTermMonths                   = 1
	MaxTermMonths                   = 60
	MinAmountSantim           int64 = 10_000        // 100 ETB
	MaxAmountSantim           int64 = 1_000_000_000 // 10 million ETB
	MaxFeeFlatSantim          int64 = 10_000_000    // 100,000 ETB
	MaxFeeBasisPoints               = 2_000         // 20% of the principal
	MaxDebtServiceBasisPoints       = 10_000
	// MinPrincipalPerMonthSantim: a product's smallest amount is at least 10 ETB per month of its
	// longest term, so every instalment of every loan it makes repays principal (the schedule
	// package's TestEveryProductTermAmortises proves it for every term and rate).
	MinPrincipalPerMonthSantim int64 = 1_000
)

// ProductMachine is the product lifecycle.
var ProductMachine = &payroll.Machine{Noun: "loan product", Code: CodeProductInvalidState, Moves: map[string]payroll.Move{
	"updated": {From: []string{ProductActive}, To: ProductActive},
	"retired": {From: []string{ProductActive}, To: ProductRetired},
}}

// Product is one stored product.
type Product struct {
	bun.BaseModel `bun:"table:app.loan_products,alias:lp"`

	ID                        string     `bun:"id,pk"`
	TenantID                  string     `bun:"tenant_id"` // the FI
	Name                      string     `bun:"name"`
	Description               string     `bun:"description"`
	AnnualRateBasisPoints     int64      `bun:"annual_rate_basis_points"`
	MinTermMonths             int        `bun:"min_term_months"`
	MaxTermMonths             int        `bun:"max_term_months"`
	MinAmountSantim           int64      `bun:"min_amount_santim"`
	MaxAmountSantim           int64      `bun:"max_amount_santim"`
	FeeFlatSantim             int64      `bun:"fee_flat_santim"`
	FeeBasisPoints            int64      `bun:"fee_basis_points"`
	MaxDebtServiceBasisPoints int64      `bun:"max_debt_service_basis_points"`
	DefaultAfterDays          int        `bun:"default_after_days"`
	Status                    string     `bun:"status"`
	Version                   int        `bun:"version"`
	CreatedBy                 string     `bun:"created_by"`
	CreatedAt                 time.Time  `bun:"created_at"`
	UpdatedBy                 string     `bun:"updated_by"`
	UpdatedAt                 time.Time  `bun:"updated_at"`
	RetiredBy                 *string    `bun:"retired_by"`
	RetiredAt                 *time.Time `bun:"retired_at"`
	// FIName is the FI's name, read for a business choosing a product (withFIName): "" in the
	// FI's own reads and writes.
	FIName string `bun:"fi_name,scanonly"`
}

// withFIName adds the FI's name (the partner standing's, which every organization reads) to a
// select of products.
func withFIName(q *bun.SelectQuery) *bun.SelectQuery {
	return q.ColumnExpr("lp.*").ColumnExpr("(SELECT ps.name FROM app.partner_standing ps WHERE ps.id = lp.tenant_id) AS fi_name")
}

// ProductTerms is what an FI states of a product.
type ProductTerms struct {
	Name                      string
	Description               string
	AnnualRateBasisPoints     int64
	MinTermMonths             int
	MaxTermMonths             int
	MinAmountSantim           int64
	MaxAmountSantim           int64
	FeeFlatSantim             int64
	FeeBasisPoints            int64
	MaxDebtServiceBasisPoints int64
	// DefaultAfterDays is the days past due after which a loan of the product is DEFAULTED
	// (delinquency.go), MinDefaultAfterDays to MaxDefaultAfterDays; 0 is DefaultAfterDays.
	DefaultAfterDays int
}

// The bounds of a product's default threshold: at least the first bucket (1–30 days past due)
// before a loan can default, at most a year.
const (
	MinDefaultAfterDays = 30
	MaxDefaultAfterDays = 365
)

// Check validates the terms as a whole (field errors: the caller's 400).
func (p ProductTerms) Check() error {
	if err := field.Name("name", p.Name); err != nil {
		return err
	}
	switch {
	case len(p.Name) > MaxProductName:
		return &field.Error{Field: "name", Problem: fmt.Sprintf("must be at most %d bytes", MaxProductName)}
	case strings.TrimSpace(p.Name) != p.Name:
		return &field.Error{Field: "name", Problem: "must not start or end with spaces"}
	}
	if err := field.Text("description", p.Description, MaxProductDescription); err != nil {
		return err
	}
	switch {
	case p.AnnualRateBasisPoints < 0 || p.AnnualRateBasisPoints > MaxAnnualRateBasisPoints:
		return &field.Error{Field: "annualRateBasisPoints", Problem: fmt.Sprintf("must be from 0 to %d", MaxAnnualRateBasisPoints)}
	case p.MinTermMonths < MinTermMonths || p.MinTermMonths > MaxTermMonths:
		return &field.Error{Field: "minTermMonths", Problem: fmt.Sprintf("must be from %d to %d", MinTermMonths, MaxTermMonths)}
	case p.MaxTermMonths < MinTermMonths || p.MaxTermMonths > MaxTermMonths:
		return &field.Error{Field: "maxTermMonths", Problem: fmt.Sprintf("must be from %d to %d", MinTermMonths, MaxTermMonths)}
	case p.MinTermMonths > p.MaxTermMonths:
		return &field.Error{Field: "maxTermMonths", Problem: "must not be below minTermMonths"}
	case p.MinAmountSantim < MinAmountSantim || p.MinAmountSantim > MaxAmountSantim:
		return &field.Error{Field: "minAmountSantim", Problem: fmt.Sprintf("must be from %d to %d", MinAmountSantim, MaxAmountSantim)}
	case p.MaxAmountSantim < MinAmountSantim || p.MaxAmountSantim > MaxAmountSantim:
		return &field.Error{Field: "maxAmountSantim", Problem: fmt.Sprintf("must be from %d to %d", MinAmountSantim, MaxAmountSantim)}
	case p.MinAmountSantim > p.MaxAmountSantim:
		return &field.Error{Field: "maxAmountSantim", Problem: "must not be below minAmountSantim"}
	case p.MinAmountSantim < MinPrincipalPerMonthSantim*int64(p.MaxTermMonths):
		return &field.Error{Field: "minAmountSantim", Problem: fmt.Sprintf("must be at least %d × maxTermMonths (10 ETB of principal a month)", MinPrincipalPerMonthSantim)}
	case p.FeeFlatSantim < 0 || p.FeeFlatSantim > MaxFeeFlatSantim:
		return &field.Error{Field: "feeFlatSantim", Problem: fmt.Sprintf("must be from 0 to %d", MaxFeeFlatSantim)}
	case p.FeeBasisPoints < 0 || p.FeeBasisPoints > MaxFeeBasisPoints:
		return &field.Error{Field: "feeBasisPoints", Problem: fmt.Sprintf("must be from 0 to %d", MaxFeeBasisPoints)}
	case p.MaxDebtServiceBasisPoints < 1 || p.MaxDebtServiceBasisPoints > MaxDebtServiceBasisPoints:
		return &field.Error{Field: "maxDebtServiceBasisPoints", Problem: fmt.Sprintf("must be from 1 to %d", MaxDebtServiceBasisPoints)}
	case p.DefaultAfterDays != 0 && (p.DefaultAfterDays < MinDefaultAfterDays || p.DefaultAfterDays > MaxDefaultAfterDays):
		return &field.Error{Field: "defaultAfterDays", Problem: fmt.Sprintf("must be from %d to %d", MinDefaultAfterDays, MaxDefaultAfterDays)}
	}
	return nil
}

// Terms is the product's terms.
func (p Product) Terms() ProductTerms {
	return ProductTerms{Name: p.Name, Description: p.Description, AnnualRateBasisPoints: p.AnnualRateBasisPoints,
		MinTermMonths: p.MinTermMonths, MaxTermMonths: p.MaxTermMonths, MinAmountSantim: p.MinAmountSantim,
		MaxAmountSantim: p.MaxAmountSantim, FeeFlatSantim: p.FeeFlatSantim, FeeBasisPoints: p.FeeBasisPoints,
		MaxDebtServiceBasisPoints: p.MaxDebtServiceBasisPoints, DefaultAfterDays: p.DefaultAfterDays}
}

func (p *Product) setTerms(t ProductTerms) {
	p.Name, p.Description, p.AnnualRateBasisPoints = t.Name, t.Description, t.AnnualRateBasisPoints
	p.MinTermMonths, p.MaxTermMonths, p.MinAmountSantim, p.MaxAmountSantim = t.MinTermMonths, t.MaxTermMonths, t.MinAmountSantim, t.MaxAmountSantim
	p.FeeFlatSantim, p.FeeBasisPoints, p.MaxDebtServiceBasisPoints = t.FeeFlatSantim, t.FeeBasisPoints, t.MaxDebtServiceBasisPoints
	p.DefaultAfterDays = t.DefaultAfterDays
	if p.DefaultAfterDays == 0 {
		p.DefaultAfterDays = DefaultAfterDays
	}
}

// CreateProduct adds an ACTIVE product of the context's FI (audited CreateLoanProduct, event
// lending.product_created.v1). Errors: field errors, 409 LOAN_PRODUCT_NAME_TAKEN.
func CreateProduct(ctx context.Context, tx db.BunTx, in ProductTerms, now time.Time) (Product, error) {
	if err := in.Check(); err != nil {
		return Product{}, err
	}
	who := actor(ctx)
	p := Product{ID: "lprod_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), Status: ProductActive, Version: 1,
		CreatedBy: who, CreatedAt: now, UpdatedBy: who, UpdatedAt: now}
	p.setTerms(in)
	if err := insertOrNameTaken(ctx, tx, &p); err != nil {
		return Product{}, err
	}
	return p, record(ctx, tx, "CreateLoanProduct", "LoanProduct", p.ID, "lending.product_created.v1", productEvent(p))
}

// insertOrNameTaken inserts p inside a savepoint, so a name clash answers 409 and leaves the
// caller's transaction usable.
func insertOrNameTaken(ctx context.Context, tx db.BunTx, p *Product) error {
	return savepoint(ctx, tx, func() error {
		_, err := tx.NewInsert().Model(p).Exec(ctx)
		if uniqueViolation(err, "loan_products_name") {
			return errNameTaken
		}
		if err != nil {
			return fmt.Errorf("lending.create_product: %w", err)
		}
		return nil
	})
}

// savepoint runs fn inside a savepoint of tx, rolled back to when fn fails.
func savepoint(ctx context.Context, tx db.BunTx, fn func() error) error {
	if _, err := tx.Exec(ctx, `SAVEPOINT lending`); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT lending`); rerr != nil {
			return rerr
		}
		return err
	}
	_, err := tx.Exec(ctx, `RELEASE SAVEPOINT lending`)
	return err
}

// GetProduct reads one product of the context's FI.
func GetProduct(ctx context.Context, tx db.BunTx, id string) (Product, error) {
	return getOwnProduct(ctx, tx, id, false)
}

func getOwnProduct(ctx context.Context, tx db.BunTx, id string, lock bool) (Product, error) {
	var p Product
	q := tx.NewSelect().Model(&p).Where("lp.tenant_id = ?", tenancy.TenantID(ctx)).Where("lp.id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return Product{}, db.NotFoundOr(err, ErrProductNotFound)
	}
	return p, nil
}

// ProductFilter narrows a product list.
type ProductFilter struct {
	Status string // "" any (the FI's own list; the offered list is ACTIVE only)
	FIID   string // the offered list: one FI's products ("" every FI's)
	db.Page
}

// ListProducts lists the context's FI's products by id.
func ListProducts(ctx context.Context, tx db.BunTx, f ProductFilter) ([]Product, error) {
	var out []Product
	q := tx.NewSelect().Model(&out).Where("lp.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("lp.id").Limit(f.Rows())
	if f.Status != "" {
		q = q.Where("lp.status = ?", f.Status)
	}
	if f.After != "" {
		q = q.Where("lp.id > ?", f.After)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.list_products: %w", err)
	}
	return out, nil
}

// ProductChange is a partial change of a product's terms (nil: unchanged).
type ProductChange struct {
	Name                      *string
	Description               *string
	AnnualRateBasisPoints     *int64
	MinTermMonths             *int
	MaxTermMonths             *int
	MinAmountSantim           *int64
	MaxAmountSantim           *int64
	FeeFlatSantim             *int64
	FeeBasisPoints            *int64
	MaxDebtServiceBasisPoints *int64
	DefaultAfterDays          *int
}

// Apply is t with the change's fields.
func (c ProductChange) Apply(t ProductTerms) ProductTerms {
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	if c.Name != nil {
		t.Name = *c.Name
	}
	if c.Description != nil {
		t.Description = *c.Description
	}
	if c.MinTermMonths != nil {
		t.MinTermMonths = *c.MinTermMonths
	}
	if c.MaxTermMonths != nil {
		t.MaxTermMonths = *c.MaxTermMonths
	}
	if c.DefaultAfterDays != nil {
		t.DefaultAfterDays = *c.DefaultAfterDays
	}
	set(&t.AnnualRateBasisPoints, c.AnnualRateBasisPoints)
	set(&t.MinAmountSantim, c.MinAmountSantim)
	set(&t.MaxAmountSantim, c.MaxAmountSantim)
	set(&t.FeeFlatSantim, c.FeeFlatSantim)
	set(&t.FeeBasisPoints, c.FeeBasisPoints)
	set(&t.MaxDebtServiceBasisPoints, c.MaxDebtServiceBasisPoints)
	return t
}

// UpdateProduct changes an ACTIVE product's terms (the result is checked as a whole; version + 1;
// audited UpdateLoanProduct, event lending.product_updated.v1). Errors: ErrProductNotFound, field
// errors, 409 LOAN_PRODUCT_INVALID_STATE (RETIRED), 409 LOAN_PRODUCT_NAME_TAKEN.
func UpdateProduct(ctx context.Context, tx db.BunTx, id string, c ProductChange, now time.Time) (Product, error) {
	p, err := getOwnProduct(ctx, tx, id, true)
	if err != nil {
		return Product{}, err
	}
	if _, err := ProductMachine.Next("updated", p.Status); err != nil {
		return Product{}, err
	}
	if c.DefaultAfterDays != nil && *c.DefaultAfterDays == 0 { // 0 means "the default" only at creation
		return Product{}, &field.Error{Field: "defaultAfterDays", Problem: fmt.Sprintf("must be from %d to %d", MinDefaultAfterDays, MaxDefaultAfterDays)}
	}
	terms := c.Apply(p.Terms())
	if err := terms.Check(); err != nil {
		return Product{}, err
	}
	p.setTerms(terms)
	p.Version++
	p.UpdatedBy, p.UpdatedAt = actor(ctx), now
	err = savepoint(ctx, tx, func() error {
		_, err := tx.NewUpdate().Model(&p).ExcludeColumn("id", "tenant_id", "created_by", "created_at", "status", "retired_by", "retired_at").
			Where("lp.tenant_id = ?", p.TenantID).WherePK().Exec(ctx)
		if uniqueViolation(err, "loan_products_name") {
			return errNameTaken
		}
		return err
	})
	if err != nil {
		return Product{}, err
	}
	return p, record(ctx, tx, "UpdateLoanProduct", "LoanProduct", p.ID, "lending.product_updated.v1", productEvent(p))
}

// RetireProduct retires an ACTIVE product (audited RetireLoanProduct, event
// lending.product_retired.v1): it is offered no more and quotes of it are refused; the opt-ins
// stay as they are (the businesses see it RETIRED). Errors: ErrProductNotFound, 409
// LOAN_PRODUCT_INVALID_STATE.
func RetireProduct(ctx context.Context, tx db.BunTx, id string, now time.Time) (Product, error) {
	p, err := getOwnProduct(ctx, tx, id, true)
	if err != nil {
		return Product{}, err
	}
	to, err := ProductMachine.Next("retired", p.Status)
	if err != nil {
		return Product{}, err
	}
	who := actor(ctx)
	p.Status, p.RetiredBy, p.RetiredAt, p.UpdatedBy, p.UpdatedAt = to, &who, &now, who, now
	if _, err := tx.NewUpdate().Model(&p).Column("status", "retired_by", "retired_at", "updated_by", "updated_at").
		Where("lp.tenant_id = ?", p.TenantID).WherePK().Exec(ctx); err != nil {
		return Product{}, fmt.Errorf("lending.retire_product: %w", err)
	}
	return p, record(ctx, tx, "RetireLoanProduct", "LoanProduct", p.ID, "lending.product_retired.v1", productEvent(p))
}

// onOffer is the condition "lp is on offer": ACTIVE, from an FI in good standing (orgs
// standing.go: KYB verified, not suspended).
var onOffer = "lp.status = '" + ProductActive + "' AND " + orgs.InGoodStanding("lp.tenant_id")

// visibleToBusiness is the "offered" policy's rule as a condition on lp: on offer, or opted in to
// (in any state) by the context's organization. Stated in the query as well so a platform
// admin's transaction, which sees every row, answers as the business's own would. A product
// opted in to stays visible when its FI falls out of good standing (the business's opt-ins name
// it); quoting and originating on it are refused (errFINotAvailable).
func visibleToBusiness(ctx context.Context, q *bun.SelectQuery) *bun.SelectQuery {
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where(onOffer).
			WhereOr("EXISTS (SELECT 1 FROM app.loan_product_opt_ins o WHERE o.product_id = lp.id AND o.tenant_id = ?)", tenancy.TenantID(ctx))
	})
}

// OfferedProduct reads a product as a business sees it: one on offer (ACTIVE) or one it has opted
// in to. Errors: ErrProductNotFound.
func OfferedProduct(ctx context.Context, tx db.BunTx, id string) (Product, error) {
	var p Product
	q := withFIName(tx.NewSelect().Model(&p)).Where("lp.id = ?", id)
	if err := visibleToBusiness(ctx, q).Scan(ctx); err != nil {
		return Product{}, db.NotFoundOr(err, ErrProductNotFound)
	}
	return p, nil
}

// ListOfferedProducts lists the products on offer (ACTIVE, of an FI in good standing) of every FI
// (or of f.FIID) by id: what a business may opt in to.
func ListOfferedProducts(ctx context.Context, tx db.BunTx, f ProductFilter) ([]Product, error) {
	var out []Product
	q := withFIName(tx.NewSelect().Model(&out)).Where(onOffer).OrderExpr("lp.id").Limit(f.Rows())
	if f.FIID != "" {
		q = q.Where("lp.tenant_id = ?", f.FIID)
	}
	if f.After != "" {
		q = q.Where("lp.id > ?", f.After)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.list_offered_products: %w", err)
	}
	return out, nil
}

// knownFI reports whether fiID is a financial institution the context's organization can see
// offer products: one with a product on offer or opted in to.
func knownFI(ctx context.Context, tx db.BunTx, fiID string) (bool, error) {
	q := tx.NewSelect().Model((*Product)(nil)).Where("lp.tenant_id = ?", fiID)
	ok, err := visibleToBusiness(ctx, q).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("lending.known_fi: %w", err)
	}
	return ok, nil
}

func productEvent(p Product) map[string]any {
	return map[string]any{"productId": p.ID, "fiId": p.TenantID, "status": p.Status, "version": p.Version, "name": p.Name,
		"annualRateBasisPoints": p.AnnualRateBasisPoints, "minTermMonths": p.MinTermMonths, "maxTermMonths": p.MaxTermMonths,
		"minAmountSantim": p.MinAmountSantim, "maxAmountSantim": p.MaxAmountSantim, "feeFlatSantim": p.FeeFlatSantim,
		"feeBasisPoints": p.FeeBasisPoints, "maxDebtServiceBasisPoints": p.MaxDebtServiceBasisPoints, "defaultAfterDays": p.DefaultAfterDays}
}
