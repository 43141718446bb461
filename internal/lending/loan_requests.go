package lending

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The FI's decision queue (GET /api/fi/loan-requests): the loans waiting for the context's FI to
// decide on them — REQUESTED, the one state in which its approval or rejection is a move
// (LoanMachine) — across the businesses that opted in to its products, oldest request first, each
// with what the FI decides on: the loan and its schedule as quoted (the Loan, read as GetLoan reads
// it), the affordability its request was judged on (RequestAffordability), the borrower's other
// loans at this FI (BorrowerExposure) and how long it has waited. The queue's totals cover the
// whole filter whatever the page: how many wait, the principal they ask for and the oldest request.
//
// It reads as the FI (Lender: fi_id, which the database's fi_reads_loans policy states too), so a
// platform admin's transaction answers alike, and never another FI's requests.
//
// Order: requested_at, then the loan's id. A page's cursor is the last row's place in that order
// (LoanRequestCursor), not the row, so a decision that takes the row out of the queue while the
// walk is under way loses the walk nothing: the next page starts after its place. A request never
// comes back once decided and its requested_at never changes, so a walk meets no row twice; a
// request made while the walk is under way is met at the end (its requested_at is later than every
// page already read, but for one that commits later than a request stamped after it, which the
// next walk from the top meets).

// LoanRequestFilter narrows the queue. Every field is optional ("" or zero: any).
type LoanRequestFilter struct {
	ProductID  string // one of the FI's products
	BusinessID string // the borrower's employer
	// From and To bound requested_at: From ≤ at < To.
	From, To time.Time
}

// LoanRequestCursor is a place in the queue's order: a request's instant and loan id. The zero
// cursor is the top.
type LoanRequestCursor struct {
	At time.Time
	ID string
}

// The cursor is written <requested_at in whole microseconds since 1970>.<loan id>: what
// LoanRequestCursorPattern matches, and all it matches is a cursor (the API's document states the
// same pattern). A loan id is "loan_" and a UUID (Originate); any identifier after "loan_" is a
// place in the order all the same.
const (
	// LoanRequestCursorPattern is a written cursor's pattern.
	LoanRequestCursorPattern = `^(0|[1-9][0-9]{0,15})\.loan_[0-9A-Za-z_.:-]{1,64}$`
	// MaxLoanRequestCursor bounds a written cursor's length.
	MaxLoanRequestCursor = 86
)

var loanRequestCursorRE = regexp.MustCompile(LoanRequestCursorPattern)

// String writes c as a page's nextCursor.
func (c LoanRequestCursor) String() string {
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + c.ID
}

// ParseLoanRequestCursor reads a cursor a caller sent ("" is the top); anything but what
// LoanRequestCursorPattern matches is a *field.Error on "cursor".
func ParseLoanRequestCursor(v string) (LoanRequestCursor, error) {
	if v == "" {
		return LoanRequestCursor{}, nil
	}
	bad := &field.Error{Field: "cursor", Problem: "must be a nextCursor this list returned"}
	if len(v) > MaxLoanRequestCursor || !loanRequestCursorRE.MatchString(v) {
		return LoanRequestCursor{}, bad
	}
	at, id, _ := strings.Cut(v, ".")
	micros, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return LoanRequestCursor{}, bad
	}
	return LoanRequestCursor{At: time.UnixMicro(micros).UTC(), ID: id}, nil
}

// LoanRequest is one request of the queue.
type LoanRequest struct {
	// Loan is the loan with its schedule (its instalments), as GetLoan reads it.
	Loan Loan
	// ProductName is the product's name now (the loan keeps the terms of ProductVersion).
	ProductName string
	// WaitedSeconds is how long it has waited at the instant asked (Waited).
	WaitedSeconds int64
	// Borrower is the borrower's other loans at this FI.
	Borrower BorrowerExposure
}

// Cursor is the place of r in the queue: the next page starts after it.
func (r LoanRequest) Cursor() LoanRequestCursor {
	return LoanRequestCursor{At: r.Loan.RequestedAt, ID: r.Loan.ID}
}

// LoanOpenStatuses are the states in which a loan is still the FI's business: asked for, agreed,
// being paid out, or owed.
var LoanOpenStatuses = []string{LoanRequested, LoanApproved, LoanDisbursing, LoanActive, LoanDefaulted}

// BorrowerExposure is what a borrower has at the FI beside one request: the borrower's other loans
// from it, in the same business (a borrower is an employee, of one business).
type BorrowerExposure struct {
	// ByStatus counts them in each state of LoanOpenStatuses (every state a key); OpenLoans is
	// their sum.
	ByStatus  map[string]int64
	OpenLoans int64
	// OutstandingSantim is what the ACTIVE and DEFAULTED ones still owe: Σ total − repaid over
	// their schedules (Summary's rule).
	OutstandingSantim int64
	// PendingPrincipalSantim is the principal of the REQUESTED, APPROVED and DISBURSING ones:
	// asked for or agreed, not yet paid out.
	PendingPrincipalSantim int64
}

// RequestAffordability is the affordability the loan's request was judged on: QuoteLoan's
// Affordability at origination (the product's debt-service share and what the payroll could
// still recover, against the projection of the borrower's next run), judging the loan's largest
// instalment (MonthlyInstalmentSantim: the request's until a restructure sets a new schedule, so
// a REQUESTED loan's is the request's). ok is false for a loan requested before app migration
// 0112, whose figures were not kept.
func (l Loan) RequestAffordability() (a Affordability, ok bool) {
	if l.AffordLimitSantim == nil || l.AffordProjectedNetSantim == nil || l.AffordExistingInstalmentsSantim == nil ||
		l.AffordRecoverableSantim == nil || l.AffordMaxDebtServiceBasisPoints == nil || l.AffordDebtServiceLimitSantim == nil ||
		l.AffordBinding == nil || l.AffordMaxAmountSantim == nil {
		return Affordability{}, false
	}
	a = Affordability{ProjectedNetSantim: *l.AffordProjectedNetSantim, ExistingInstalmentsSantim: *l.AffordExistingInstalmentsSantim,
		RecoverableSantim: *l.AffordRecoverableSantim, MaxDebtServiceBasisPoints: *l.AffordMaxDebtServiceBasisPoints,
		DebtServiceLimitSantim: *l.AffordDebtServiceLimitSantim, LimitSantim: *l.AffordLimitSantim, Binding: *l.AffordBinding,
		MaxAmountSantim: *l.AffordMaxAmountSantim, InstalmentSantim: l.MonthlyInstalmentSantim}
	a.HeadroomSantim = a.LimitSantim - a.InstalmentSantim
	a.Affordable = a.InstalmentSantim <= a.LimitSantim
	return a, true
}

// keepAffordability records a on l (Originate), as RequestAffordability reads it back.
func (l *Loan) keepAffordability(a Affordability) {
	l.AffordProjectedNetSantim, l.AffordExistingInstalmentsSantim, l.AffordRecoverableSantim = &a.ProjectedNetSantim,
		&a.ExistingInstalmentsSantim, &a.RecoverableSantim
	l.AffordMaxDebtServiceBasisPoints, l.AffordDebtServiceLimitSantim, l.AffordLimitSantim = &a.MaxDebtServiceBasisPoints,
		&a.DebtServiceLimitSantim, &a.LimitSantim
	l.AffordBinding, l.AffordMaxAmountSantim = &a.Binding, &a.MaxAmountSantim
}

// Waited is how long a request made at at has waited at now, in whole seconds (rounded down; 0
// if at is after now). Both instants are the server's clock's: it stamps requested_at.
func Waited(at, now time.Time) int64 {
	if !now.After(at) {
		return 0
	}
	return int64(now.Sub(at) / time.Second)
}

// where states f and the queue's rule (the context's FI's REQUESTED loans) on q, over app.loans
// (alias ln): the conditions loans_fi_requests (app migration 0112) serves.
func (f LoanRequestFilter) where(ctx context.Context, q *bun.SelectQuery) *bun.SelectQuery {
	q = q.Where("ln.fi_id = ?", tenancy.TenantID(ctx)).Where("ln.status = ?", LoanRequested)
	if f.ProductID != "" {
		q = q.Where("ln.product_id = ?", f.ProductID)
	}
	if f.BusinessID != "" {
		q = q.Where("ln.tenant_id = ?", f.BusinessID)
	}
	if !f.From.IsZero() {
		q = q.Where("ln.requested_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("ln.requested_at < ?", f.To.UTC())
	}
	return q
}

// loanRequestsQuery is the statement of a page: up to limit of f's requests after after, oldest
// first.
func loanRequestsQuery(ctx context.Context, tx db.BunTx, out *[]Loan, f LoanRequestFilter, after LoanRequestCursor, limit int) *bun.SelectQuery {
	q := f.where(ctx, tx.NewSelect().Model(out))
	if after.ID != "" {
		q = q.Where("(ln.requested_at, ln.id) > (?, ?)", after.At.UTC(), after.ID)
	}
	return q.OrderExpr("ln.requested_at, ln.id").Limit(int64(limit))
}

// ListLoanRequests lists up to limit of the context's FI's requests that f names after after (the
// zero cursor: from the top), oldest first, each with its schedule, its product's name, how long
// it has waited at now and the borrower's other loans at the FI. A sum past int64 (an exposure's)
// is money.ErrOverflow.
func ListLoanRequests(ctx context.Context, tx db.BunTx, f LoanRequestFilter, after LoanRequestCursor, limit int, now time.Time) ([]LoanRequest, error) {
	var loans []Loan
	if err := loanRequestsQuery(ctx, tx, &loans, f, after, limit).Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.loan_requests: %w", err)
	}
	out := make([]LoanRequest, 0, len(loans))
	if len(loans) == 0 {
		return out, nil
	}
	var ids, tenants, borrowers, products []string
	for _, l := range loans {
		ids, tenants, borrowers, products = append(ids, l.ID), append(tenants, l.TenantID), append(borrowers, l.BorrowerID),
			append(products, l.ProductID)
	}
	// The schedules, as getLoan reads one (its instalments but those a restructure superseded).
	var ins []LoanInstalment
	if err := tx.NewSelect().Model(&ins).Where("li.fi_id = ?", tenancy.TenantID(ctx)).Where("li.tenant_id IN (?)", bun.List(tenants)).
		Where("li.loan_id IN (?)", bun.List(ids)).Where("li.status <> ?", InstalmentSuperseded).OrderExpr("li.loan_id, li.idx").
		Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.loan_requests: instalments: %w", err)
	}
	schedules := map[string][]LoanInstalment{}
	for _, in := range ins {
		schedules[in.LoanID] = append(schedules[in.LoanID], in)
	}
	names := map[string]string{}
	var named []struct {
		ID   string `bun:"id"`
		Name string `bun:"name"`
	}
	if err := tx.NewRaw(`SELECT id, name FROM app.loan_products WHERE tenant_id = ? AND id IN (?)`, tenancy.TenantID(ctx),
		bun.List(products)).Scan(ctx, &named); err != nil {
		return nil, fmt.Errorf("lending.loan_requests: products: %w", err)
	}
	for _, p := range named {
		names[p.ID] = p.Name
	}
	exposure, err := borrowerLoans(ctx, tx, tenants, borrowers)
	if err != nil {
		return nil, err
	}
	for _, l := range loans {
		l.Instalments = schedules[l.ID]
		b, err := exposureBeside(exposure, l)
		if err != nil {
			return nil, err
		}
		out = append(out, LoanRequest{Loan: l, ProductName: names[l.ProductID], WaitedSeconds: Waited(l.RequestedAt, now), Borrower: b})
	}
	return out, nil
}

// openLoan is one open loan of a borrower at the FI, with what its schedule still owes.
type openLoan struct {
	ID              string `bun:"id"`
	TenantID        string `bun:"tenant_id"`
	BorrowerID      string `bun:"borrower_id"`
	Status          string `bun:"status"`
	PrincipalSantim int64  `bun:"principal_santim"`
	Owed            string `bun:"owed"` // exact numeric as text (money.ParseSum)
}

// borrowerLoans reads the open loans at the context's FI of the borrowers named (each in its
// business: tenants[i] with borrowers[i]; the statement may read a few more, which
// exposureBeside leaves out), along the loans_borrower index.
func borrowerLoans(ctx context.Context, tx db.BunTx, tenants, borrowers []string) ([]openLoan, error) {
	var rows []openLoan
	if err := borrowerLoansQuery(ctx, tx, tenants, borrowers).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("lending.loan_requests: the borrowers' loans: %w", err)
	}
	return rows, nil
}

func borrowerLoansQuery(ctx context.Context, tx db.BunTx, tenants, borrowers []string) *bun.RawQuery {
	return tx.NewRaw(`SELECT o.id, o.tenant_id, o.borrower_id, o.status, o.principal_santim,
			coalesce((SELECT sum(li.total_santim - li.repaid_santim) FROM app.loan_instalments li
				WHERE li.tenant_id = o.tenant_id AND li.loan_id = o.id AND li.status NOT IN (?)), 0)::text AS owed
		FROM app.loans o
		WHERE o.fi_id = ? AND o.tenant_id IN (?) AND o.borrower_id IN (?) AND o.status IN (?)`,
		bun.List([]string{InstalmentRepaid, InstalmentSuperseded}), tenancy.TenantID(ctx), bun.List(tenants), bun.List(borrowers),
		bun.List(LoanOpenStatuses))
}

// exposureBeside is l's borrower's exposure at the FI from rows, l itself left out.
func exposureBeside(rows []openLoan, l Loan) (BorrowerExposure, error) {
	b := BorrowerExposure{ByStatus: make(map[string]int64, len(LoanOpenStatuses))}
	for _, st := range LoanOpenStatuses {
		b.ByStatus[st] = 0
	}
	for _, o := range rows {
		if o.ID == l.ID || o.TenantID != l.TenantID || o.BorrowerID != l.BorrowerID {
			continue
		}
		b.ByStatus[o.Status]++
		b.OpenLoans++
		var ok bool
		switch o.Status {
		case LoanActive, LoanDefaulted:
			owed, err := money.ParseSum(o.Owed)
			if err != nil {
				return b, fmt.Errorf("lending.loan_requests: loan %s: %w", o.ID, err)
			}
			if b.OutstandingSantim, ok = money.Add(b.OutstandingSantim, owed); !ok {
				return b, fmt.Errorf("lending.loan_requests: outstanding: %w", money.ErrOverflow)
			}
		default:
			if b.PendingPrincipalSantim, ok = money.Add(b.PendingPrincipalSantim, o.PrincipalSantim); !ok {
				return b, fmt.Errorf("lending.loan_requests: pending principal: %w", money.ErrOverflow)
			}
		}
	}
	return b, nil
}

// LoanRequestTotals is the whole filter's queue, whatever the page.
type LoanRequestTotals struct {
	Count int64
	// RequestedSantim is the principal the requests ask for, summed.
	RequestedSantim int64
	// OldestRequestedAt is the earliest request's instant (nil when none waits) and
	// OldestWaitedSeconds how long it has waited at the instant asked (Waited).
	OldestRequestedAt   *time.Time
	OldestWaitedSeconds *int64
}

func loanRequestTotalsQuery(ctx context.Context, tx db.BunTx, f LoanRequestFilter) *bun.SelectQuery {
	return f.where(ctx, tx.NewSelect().TableExpr("app.loans AS ln")).
		ColumnExpr("count(*)").ColumnExpr("coalesce(sum(ln.principal_santim), 0)::text").ColumnExpr("min(ln.requested_at)")
}

// SumLoanRequests counts and sums the context's FI's requests that f names, in one statement
// along loans_fi_requests. Overflow: a principal is at most 10^12 santim (the table's CHECK), so
// the sum holds 9.2 million of the largest; it is taken in exact numeric and read as text
// (money.ParseSum), so one past int64 is money.ErrOverflow, the caller's to refuse.
func SumLoanRequests(ctx context.Context, tx db.BunTx, f LoanRequestFilter, now time.Time) (LoanRequestTotals, error) {
	var t LoanRequestTotals
	var sum string
	if err := loanRequestTotalsQuery(ctx, tx, f).Scan(ctx, &t.Count, &sum, &t.OldestRequestedAt); err != nil {
		return t, fmt.Errorf("lending.loan_request_totals: %w", err)
	}
	var err error
	if t.RequestedSantim, err = money.ParseSum(sum); err != nil {
		return LoanRequestTotals{}, fmt.Errorf("lending.loan_request_totals: %w", err)
	}
	if t.OldestRequestedAt != nil {
		at := t.OldestRequestedAt.UTC()
		w := Waited(at, now)
		t.OldestRequestedAt, t.OldestWaitedSeconds = &at, &w
	}
	return t, nil
}
