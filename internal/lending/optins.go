package lending

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// An opt-in is a business's choice to offer an FI's product to its employees: only a product the
// business has an ACTIVE opt-in to is quoted, originated, approved by the FI and paid out for
// them (loanProductOffered). Lifecycle: ACTIVE →
// WITHDRAWN (withdraw, final; opting in again makes a new opt-in). One ACTIVE opt-in per business
// and product (the database's unique index).

// Opt-in states.
const (
	OptInActive    = "ACTIVE"
	OptInWithdrawn = "WITHDRAWN"
)

// OptInMachine is the opt-in lifecycle.
var OptInMachine = &payroll.Machine{Noun: "loan product opt-in", Code: CodeOptInInvalidState, Moves: map[string]payroll.Move{
	"withdrawn": {From: []string{OptInActive}, To: OptInWithdrawn},
}}

// OptIn is one stored opt-in.
type OptIn struct {
	bun.BaseModel `bun:"table:app.loan_product_opt_ins,alias:lo"`

	ID          string     `bun:"id,pk"`
	TenantID    string     `bun:"tenant_id"` // the business
	ProductID   string     `bun:"product_id"`
	FIID        string     `bun:"fi_id"`
	Status      string     `bun:"status"`
	CreatedBy   string     `bun:"created_by"`
	CreatedAt   time.Time  `bun:"created_at"`
	WithdrawnBy *string    `bun:"withdrawn_by"`
	WithdrawnAt *time.Time `bun:"withdrawn_at"`
	UpdatedAt   time.Time  `bun:"updated_at"`
}

// OptInToProduct opts the context's business in to a product on offer (audited
// OptInLoanProduct, event lending.product_opted_in.v1). Errors: ErrProductNotFound (none on
// offer, another FI's retired one included), 409 LOAN_PRODUCT_RETIRED (a retired product the
// business had opted in to before), 409 LOAN_FI_NOT_AVAILABLE (the FI is not in good standing),
// 409 LOAN_PRODUCT_ALREADY_OPTED_IN.
func OptInToProduct(ctx context.Context, tx db.BunTx, productID string, now time.Time) (OptIn, error) {
	p, err := OfferedProduct(ctx, tx, productID)
	if err != nil {
		return OptIn{}, err
	}
	if p.Status != ProductActive {
		return OptIn{}, errRetired
	}
	if err := fiAvailable(ctx, tx, p.TenantID); err != nil {
		return OptIn{}, err // a product visible through a withdrawn opt-in
	}
	o := OptIn{ID: "lopt_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), ProductID: p.ID, FIID: p.TenantID,
		Status: OptInActive, CreatedBy: actor(ctx), CreatedAt: now, UpdatedAt: now}
	if o.FIID == o.TenantID {
		return OptIn{}, ErrProductNotFound // an FI does not opt in to its own products
	}
	err = savepoint(ctx, tx, func() error {
		_, err := tx.NewInsert().Model(&o).Exec(ctx)
		if uniqueViolation(err, "loan_product_opt_ins_active") {
			return errAlreadyOptedIn
		}
		if err != nil {
			return fmt.Errorf("lending.opt_in: %w", err)
		}
		return nil
	})
	if err != nil {
		return OptIn{}, err
	}
	return o, record(ctx, tx, "OptInLoanProduct", "LoanProductOptIn", o.ID, "lending.product_opted_in.v1", optInEvent(o))
}

// GetOptIn reads one opt-in of the context's business.
func GetOptIn(ctx context.Context, tx db.BunTx, id string) (OptIn, error) {
	return getOptIn(ctx, tx, id, false)
}

func getOptIn(ctx context.Context, tx db.BunTx, id string, lock bool) (OptIn, error) {
	var o OptIn
	q := tx.NewSelect().Model(&o).Where("lo.tenant_id = ?", tenancy.TenantID(ctx)).Where("lo.id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return OptIn{}, db.NotFoundOr(err, ErrOptInNotFound)
	}
	return o, nil
}

// OptInFilter narrows ListOptIns.
type OptInFilter struct {
	Status    string // "" any
	ProductID string // "" any
	db.Page
}

// ListOptIns lists the context's business's opt-ins by id.
func ListOptIns(ctx context.Context, tx db.BunTx, f OptInFilter) ([]OptIn, error) {
	var out []OptIn
	q := tx.NewSelect().Model(&out).Where("lo.tenant_id = ?", tenancy.TenantID(ctx)).OrderExpr("lo.id").Limit(f.Rows())
	if f.Status != "" {
		q = q.Where("lo.status = ?", f.Status)
	}
	if f.ProductID != "" {
		q = q.Where("lo.product_id = ?", f.ProductID)
	}
	if f.After != "" {
		q = q.Where("lo.id > ?", f.After)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.list_opt_ins: %w", err)
	}
	return out, nil
}

// ListFIOptIns lists the opt-ins to the context's FI's products (which businesses offer them),
// by id.
func ListFIOptIns(ctx context.Context, tx db.BunTx, f OptInFilter) ([]OptIn, error) {
	var out []OptIn
	q := tx.NewSelect().Model(&out).Where("lo.fi_id = ?", tenancy.TenantID(ctx)).OrderExpr("lo.id").Limit(f.Rows())
	if f.Status != "" {
		q = q.Where("lo.status = ?", f.Status)
	}
	if f.ProductID != "" {
		q = q.Where("lo.product_id = ?", f.ProductID)
	}
	if f.After != "" {
		q = q.Where("lo.id > ?", f.After)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.list_fi_opt_ins: %w", err)
	}
	return out, nil
}

// WithdrawOptIn withdraws an ACTIVE opt-in (audited WithdrawLoanProductOptIn, event
// lending.product_opt_in_withdrawn.v1): the product is quoted for the business's employees no
// more. Errors: ErrOptInNotFound, 409 LOAN_PRODUCT_OPT_IN_INVALID_STATE.
func WithdrawOptIn(ctx context.Context, tx db.BunTx, id string, now time.Time) (OptIn, error) {
	o, err := getOptIn(ctx, tx, id, true)
	if err != nil {
		return OptIn{}, err
	}
	to, err := OptInMachine.Next("withdrawn", o.Status)
	if err != nil {
		return OptIn{}, err
	}
	who := actor(ctx)
	o.Status, o.WithdrawnBy, o.WithdrawnAt, o.UpdatedAt = to, &who, &now, now
	if _, err := tx.NewUpdate().Model(&o).Column("status", "withdrawn_by", "withdrawn_at", "updated_at").
		Where("lo.tenant_id = ?", o.TenantID).WherePK().Exec(ctx); err != nil {
		return OptIn{}, fmt.Errorf("lending.withdraw_opt_in: %w", err)
	}
	return o, record(ctx, tx, "WithdrawLoanProductOptIn", "LoanProductOptIn", o.ID, "lending.product_opt_in_withdrawn.v1", optInEvent(o))
}

// activeOptIn reports whether the context's business has an ACTIVE opt-in to productID.
func activeOptIn(ctx context.Context, tx db.BunTx, productID string) (bool, error) {
	var id string
	err := tx.NewSelect().Model((*OptIn)(nil)).Column("lo.id").Where("lo.tenant_id = ?", tenancy.TenantID(ctx)).
		Where("lo.product_id = ?", productID).Where("lo.status = ?", OptInActive).For("SHARE").Scan(ctx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// loanProductOffered reports whether loan id's business still offers the loan's product: the
// business has an ACTIVE opt-in to it. A withdrawn opt-in ends the offer for loans not yet paid
// out too (a loan requested before the withdrawal must not be approved or paid out after it), so
// the FI's approval and the disbursement's plan and claim ask it again; an opt-in made again
// offers the product again. share locks the opt-in FOR SHARE for the rest of
// tx, so a withdrawal (which locks it FOR UPDATE) waits for tx, or tx sees it withdrawn: only the
// business's own transaction may take that lock (the FI reads the business's opt-ins through the
// fi_reads_opt_ins policy, and a row lock needs the update policy too, which the FI does not
// pass), so the FI's approval reads without it; the claim that pays the loan out locks.
func loanProductOffered(ctx context.Context, tx db.Writer, business, loanID string, share bool) (bool, error) {
	lock := ""
	if share {
		lock = " FOR SHARE OF o"
	}
	var n int
	err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM app.loan_product_opt_ins o
			JOIN app.loans l ON l.tenant_id = o.tenant_id AND l.product_id = o.product_id AND l.fi_id = o.fi_id
		WHERE l.tenant_id = $1 AND l.id = $2 AND o.status = 'ACTIVE'`+lock+`) active`, business, loanID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("lending: the loan's opt-in: %w", err)
	}
	return n > 0, nil
}

// offered refuses (422 LOAN_PRODUCT_NOT_OPTED_IN) loan id of business unless its product is still
// offered (loanProductOffered).
func offered(ctx context.Context, tx db.Writer, business, loanID string, share bool) error {
	ok, err := loanProductOffered(ctx, tx, business, loanID, share)
	if err != nil {
		return err
	}
	if !ok {
		return RefusalError(CodeNotOptedIn)
	}
	return nil
}

func optInEvent(o OptIn) map[string]any {
	return map[string]any{"optInId": o.ID, "productId": o.ProductID, "fiId": o.FIID, "status": o.Status}
}
