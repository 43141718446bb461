package lending

import (
	"context"
	"fmt"
	"net/http"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/lending/schedule"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Projection is the next payroll run's view of one employee that a loan's affordability is
// judged on; ProjectFunc supplies it.
type Projection struct {
	// Period is the next run's period ("YYYY-MM"): a new loan's first instalment is due in it.
	Period string
	// NetSantim is the projected net pay after every deduction of the current inputs: PAYE,
	// pension, court orders, the instalments of existing loans, EWA recoveries and the rest
	// (paycalc.Projection.NetSantim).
	NetSantim int64
	// LoanInstalmentsSantim is the part of those deductions that is loan instalments (the
	// debt service already taken); 0 when the employee has no loan.
	LoanInstalmentsSantim int64
	// RecoverableSantim is how much more the run could deduct within the protection policy
	// without displacing any deduction (paycalc.Projection.RecoverableSantim).
	RecoverableSantim int64
	// BnplDeductedSantim is what the run deducts under each BNPL instalment mandate
	// (BNPL_INSTALLMENT lines by their reference, the mandate id; the mandate's own reference
	// is its agreement): part of the deductions, not yet of the loan instalments
	// (WithScheduledDebt makes it debt service).
	BnplDeductedSantim map[string]int64
}

// ProjectionOf is the Projection of the calculator's projection of the next run: its period,
// its net, the loan instalments among its deductions (LOAN_INSTALLMENT lines, whether from loan
// items or LOAN_INSTALLMENT mandates) and what it can still recover. The payroll loader's
// projection becomes a ProjectFunc through it.
func ProjectionOf(p paycalc.Projection) Projection {
	out := Projection{Period: p.Entry.Period, NetSantim: p.NetSantim, RecoverableSantim: p.RecoverableSantim}
	for _, d := range p.Entry.Deductions {
		switch d.Kind {
		case paycalc.KindLoanInstallment:
			out.LoanInstalmentsSantim += d.AmountSantim
		case paycalc.KindBnplInstallment:
			if out.BnplDeductedSantim == nil {
				out.BnplDeductedSantim = map[string]int64{}
			}
			out.BnplDeductedSantim[d.Reference] += d.AmountSantim
		}
	}
	return out
}

// Debt is what an employee's loans and BNPL plans weigh on a period, whatever a projection of
// it deducts (ScheduledDebt).
type Debt struct {
	// LoansSantim: each loan REQUESTED, APPROVED, DISBURSING, ACTIVE or DEFAULTED at the larger
	// of its scheduled instalment (its largest still part of its schedule from the period on, or
	// unpaid before it) and what the period owes it (its instalment of the period and, ACTIVE,
	// its arrears: a run deducts both, payroll.loadLoanInstalments).
	LoansSantim int64
	// UnprojectedLoansSantim is the part of LoansSantim a projection does not deduct: what each
	// loan weighs beyond what the period owes it (a projection deducts only that).
	UnprojectedLoansSantim int64
	// BnplSantim: each of the employee's ACCEPTED, ACTIVE or DEFAULTED BNPL agreements at the
	// larger of its scheduled instalment (its largest still owed, or due from the period on
	// whether collected or not) and what the period owes it (its instalments due in the period
	// still DUE or COLLECTING); BnplByAgreement the same by agreement (a projection deducts an
	// agreement's instalment only when a mandate takes it through payroll).
	BnplSantim      int64
	BnplByAgreement map[string]int64
}

// Total is all the debt weighing on the period.
func (d Debt) Total() int64 { return d.LoansSantim + d.BnplSantim }

// ScheduledDebt reads employeeID's Debt in period. A projection deducts what the next period
// owes, which understates a loan's weight twice over: an instalment repaid early leaves its
// period owing nothing (a run takes nothing that month, and the level instalment again the month
// after), and a DEFAULTED loan is not deducted by a run at all, yet is owed until repaid,
// restructured or written off. And it does not see BNPL instalments at all. A BNPL plan weighs
// by the same rule as a loan: an instalment collected early, or a schedule restructured to start
// later, does not empty the period (found by an audit: a plan whose instalment of the month was
// collected early weighed nothing, and a second plan was let past the limit).
func ScheduledDebt(ctx context.Context, tx db.Writer, employeeID, period string) (Debt, error) {
	if err := payroll.CheckPeriod("period", period); err != nil {
		return Debt{}, err
	}
	start := payroll.PeriodStart(period)
	var d Debt
	err := tx.QueryRow(ctx, `WITH per_loan AS (
			SELECT coalesce(max(i.total_santim) FILTER (WHERE i.due_period >= $3 OR i.status <> 'REPAID'), 0) AS scheduled,
				coalesce(sum(i.total_santim - i.repaid_santim) FILTER (WHERE i.status <> 'REPAID'
					AND (i.due_period = $3 AND l.status <> 'DEFAULTED' OR i.due_period < $3 AND l.status = 'ACTIVE')), 0) AS projected
			FROM app.loans l JOIN app.loan_instalments i ON i.tenant_id = l.tenant_id AND i.loan_id = l.id
			WHERE l.tenant_id = $1 AND l.borrower_id = $2 AND l.status IN ('REQUESTED', 'APPROVED', 'DISBURSING', 'ACTIVE', 'DEFAULTED')
				AND i.status <> 'SUPERSEDED'
			GROUP BY l.id)
		SELECT coalesce(sum(greatest(scheduled, projected)), 0)::bigint, coalesce(sum(greatest(scheduled - projected, 0)), 0)::bigint
		FROM per_loan`, tenancy.TenantID(ctx), employeeID, period).Scan(&d.LoansSantim, &d.UnprojectedLoansSantim)
	if err != nil {
		return Debt{}, fmt.Errorf("lending: scheduled debt: %w", err)
	}
	rows, err := db.Select[struct {
		AgreementID string `bun:"agreement_id" db:"agreement_id"`
		DueSantim   int64  `bun:"due_santim" db:"due_santim"`
	}](ctx, tx, `SELECT i.agreement_id, greatest(
				coalesce(max(i.amount_santim) FILTER (WHERE i.status IN ('DUE', 'COLLECTING') OR i.due_date >= ?0), 0),
				coalesce(sum(i.amount_santim) FILTER (WHERE i.status IN ('DUE', 'COLLECTING') AND i.due_date >= ?0 AND i.due_date < ?1), 0)
			)::bigint AS due_santim
		FROM app.bnpl_instalments i JOIN app.bnpl_agreements a ON a.tenant_id = i.tenant_id AND a.id = i.agreement_id
		WHERE a.tenant_id = ?2 AND a.employee_id = ?3 AND a.status IN ('ACCEPTED', 'ACTIVE', 'DEFAULTED') AND i.status <> 'SUPERSEDED'
		GROUP BY i.agreement_id
		HAVING bool_or(i.status IN ('DUE', 'COLLECTING'))`, start, start.AddDate(0, 1, 0), tenancy.TenantID(ctx), employeeID)
	if err != nil {
		return Debt{}, fmt.Errorf("lending: scheduled BNPL instalments: %w", err)
	}
	for _, r := range rows {
		if d.BnplByAgreement == nil {
			d.BnplByAgreement = map[string]int64{}
		}
		d.BnplByAgreement[r.AgreementID] = r.DueSantim
		d.BnplSantim += r.DueSantim
	}
	return d, nil
}

// WithScheduledDebt is p with employeeID's Debt in p.Period, as the affordability of a new loan
// or BNPL plan must see it: every instalment, loans' and BNPL's, shares the one debt-service
// limit. What p does not deduct (the loans' unprojected part, each BNPL agreement's due beyond
// what its mandate deducts) comes off the net and the recoverable and joins the loan
// instalments; what a mandate deducts is off them already and only joins the loan instalments.
// It returns the Debt too.
func WithScheduledDebt(ctx context.Context, tx db.Writer, p Projection, employeeID string) (Projection, Debt, error) {
	d, err := ScheduledDebt(ctx, tx, employeeID, p.Period)
	if err != nil {
		return Projection{}, Debt{}, err
	}
	byAgreement, err := bnplDeductedByAgreement(ctx, tx, p.BnplDeductedSantim)
	if err != nil {
		return Projection{}, Debt{}, err
	}
	more := d.UnprojectedLoansSantim
	for id, due := range d.BnplByAgreement {
		deducted := min(max(byAgreement[id], 0), due)
		more += due - deducted
		p.LoanInstalmentsSantim += deducted
	}
	p.NetSantim -= more
	p.RecoverableSantim -= more
	p.LoanInstalmentsSantim += more
	return p, d, nil
}

// bnplDeductedByAgreement is a projection's BNPL deductions (by mandate) by the agreement each
// mandate pays.
func bnplDeductedByAgreement(ctx context.Context, tx db.Writer, byMandate map[string]int64) (map[string]int64, error) {
	out := map[string]int64{}
	if len(byMandate) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(byMandate))
	for id := range byMandate {
		ids = append(ids, id)
	}
	rows, err := db.Select[struct {
		ID        string `bun:"id" db:"id"`
		Reference string `bun:"reference" db:"reference"`
	}](ctx, tx, `SELECT id, reference FROM app.payroll_deduction_mandates WHERE tenant_id = ? AND kind = ? AND id IN (?)`,
		tenancy.TenantID(ctx), string(paycalc.KindBnplInstallment), bun.List(ids))
	if err != nil {
		return nil, fmt.Errorf("lending: the BNPL mandates deducted: %w", err)
	}
	for _, r := range rows {
		out[r.Reference] += byMandate[r.ID]
	}
	return out, nil
}

// ProjectFunc projects the next payroll run of employeeID, an employee of the context's
// organization, in tx. The API wiring supplies it (the payroll loader turns the tenant's stored
// inputs into a paycalc.Input and runs paycalc.Project). An employee it does not know is
// payroll.ErrEmployeeNotFound; an employee it cannot project (no salary, inputs that do not
// compute) may be answered with a *payroll.Refusal of the caller's kind (4xx).
type ProjectFunc func(ctx context.Context, tx db.BunTx, employeeID string) (Projection, error)

// Limits the affordability rule answers with.
const (
	BindingDebtService = "DEBT_SERVICE_SHARE"  // the product's share of net pay binds
	BindingRecoverable = "PAYROLL_RECOVERABLE" // what the payroll can still recover binds
)

// Affordability is how a loan's largest instalment compares with what the borrower's pay allows.
type Affordability struct {
	Affordable bool
	// InstalmentSantim is the loan's largest instalment (principal + interest + fee).
	InstalmentSantim          int64
	ProjectedNetSantim        int64
	ExistingInstalmentsSantim int64
	RecoverableSantim         int64
	MaxDebtServiceBasisPoints int64
	// DebtServiceLimitSantim is ⌊(net + existing) × share ÷ 10,000⌋ − existing, at least 0.
	DebtServiceLimitSantim int64
	// LimitSantim is the smaller of DebtServiceLimitSantim and RecoverableSantim; Binding says
	// which (the debt-service share when they are equal).
	LimitSantim int64
	Binding     string
	// HeadroomSantim is LimitSantim − InstalmentSantim (negative when not affordable).
	HeadroomSantim int64
	// MaxAmountSantim is the largest principal, up to the product's maximum, whose instalments
	// at this term fit the limit; 0 when not even the product's minimum does.
	MaxAmountSantim int64
}

// Afford judges an instalment against a projection and a product's debt-service share.
func Afford(p Projection, maxDebtServiceBps, instalment int64) (Affordability, error) {
	a := Affordability{InstalmentSantim: instalment, ProjectedNetSantim: p.NetSantim, ExistingInstalmentsSantim: p.LoanInstalmentsSantim,
		RecoverableSantim: max(p.RecoverableSantim, 0), MaxDebtServiceBasisPoints: maxDebtServiceBps}
	base, ok := money.Add(max(p.NetSantim, 0), max(p.LoanInstalmentsSantim, 0))
	if !ok {
		return Affordability{}, money.ErrOverflow
	}
	share, err := money.MulDivFloor(base, maxDebtServiceBps, money.HundredPercent)
	if err != nil {
		return Affordability{}, err
	}
	a.DebtServiceLimitSantim = max(share-max(p.LoanInstalmentsSantim, 0), 0)
	a.LimitSantim, a.Binding = a.DebtServiceLimitSantim, BindingDebtService
	if a.RecoverableSantim < a.LimitSantim {
		a.LimitSantim, a.Binding = a.RecoverableSantim, BindingRecoverable
	}
	a.HeadroomSantim = a.LimitSantim - instalment
	a.Affordable = instalment <= a.LimitSantim
	return a, nil
}

// QuoteRequest is what a quote is asked for.
type QuoteRequest struct {
	EmployeeID   string
	ProductID    string
	FIPartnerID  string // optional: when given, the product must be this FI's
	AmountSantim int64
	TermMonths   int
}

// Check validates the request's fields (the caller's 400).
func (r QuoteRequest) Check() error {
	if err := field.Identifier("employeeId", r.EmployeeID, 0); err != nil {
		return err
	}
	if err := field.Identifier("productId", r.ProductID, 0); err != nil {
		return err
	}
	if r.FIPartnerID != "" {
		if err := field.Identifier("fiPartnerId", r.FIPartnerID, 0); err != nil {
			return err
		}
	}
	switch {
	case r.AmountSantim < 1 || r.AmountSantim > money.MaxAmountSantim:
		return &field.Error{Field: "amountSantim", Problem: fmt.Sprintf("must be from 1 to %d", money.MaxAmountSantim)}
	case r.TermMonths < MinTermMonths || r.TermMonths > MaxTermMonths:
		return &field.Error{Field: "termMonths", Problem: fmt.Sprintf("must be from %d to %d", MinTermMonths, MaxTermMonths)}
	}
	return nil
}

// Quote is a loan as it would be made now: the product's terms, the schedule and its
// affordability. It changes nothing.
type Quote struct {
	Request       QuoteRequest
	Product       Product
	Schedule      schedule.Schedule
	Affordability Affordability
}

// QuoteLoan quotes a loan for an employee of the context's business, in this order of refusal:
// the fields (400); fiPartnerId naming no FI that offers the business products (422
// LOAN_FI_PARTNER_UNKNOWN); the product (404 LOAN_PRODUCT_NOT_FOUND: none on offer or opted in
// to, or another FI's than fiPartnerId); a RETIRED product (409 LOAN_PRODUCT_RETIRED); its FI out
// of good standing (409 LOAN_FI_NOT_AVAILABLE: an opted-in product stays visible); no ACTIVE
// opt-in (422 LOAN_PRODUCT_NOT_OPTED_IN); the amount and the term outside the product's ranges
// (422 LOAN_AMOUNT_OUT_OF_RANGE, LOAN_TERM_OUT_OF_RANGE, with the range in the details); the
// employee (404 EMPLOYEE_NOT_FOUND, 409 LOAN_EMPLOYEE_NOT_ACTIVE); the projection's own refusals;
// affordability (422 LOAN_NOT_AFFORDABLE with the figures and the largest affordable amount).
func QuoteLoan(ctx context.Context, tx db.BunTx, project ProjectFunc, r QuoteRequest) (Quote, error) {
	if err := r.Check(); err != nil {
		return Quote{}, err
	}
	if r.FIPartnerID != "" {
		ok, err := knownFI(ctx, tx, r.FIPartnerID)
		if err != nil {
			return Quote{}, err
		}
		if !ok {
			return Quote{}, errFIPartnerUnknown
		}
	}
	p, err := OfferedProduct(ctx, tx, r.ProductID)
	if err != nil {
		return Quote{}, err
	}
	if r.FIPartnerID != "" && p.TenantID != r.FIPartnerID {
		return Quote{}, ErrProductNotFound
	}
	if p.Status != ProductActive {
		return Quote{}, errRetired
	}
	if err := fiAvailable(ctx, tx, p.TenantID); err != nil {
		return Quote{}, err
	}
	opted, err := activeOptIn(ctx, tx, p.ID)
	if err != nil {
		return Quote{}, fmt.Errorf("lending.quote: opt-in: %w", err)
	}
	if !opted {
		return Quote{}, errNotOptedIn
	}
	if r.AmountSantim < p.MinAmountSantim || r.AmountSantim > p.MaxAmountSantim {
		return Quote{}, &payroll.Refusal{Code: CodeAmountOutOfRange, Status: http.StatusUnprocessableEntity,
			Message: "amountSantim is outside the product's amount range",
			Details: map[string]any{"minAmountSantim": p.MinAmountSantim, "maxAmountSantim": p.MaxAmountSantim}}
	}
	if r.TermMonths < p.MinTermMonths || r.TermMonths > p.MaxTermMonths {
		return Quote{}, &payroll.Refusal{Code: CodeTermOutOfRange, Status: http.StatusUnprocessableEntity,
			Message: "termMonths is outside the product's term range",
			Details: map[string]any{"minTermMonths": p.MinTermMonths, "maxTermMonths": p.MaxTermMonths}}
	}
	status, err := payroll.EmployeeStatus(ctx, tx, r.EmployeeID)
	if err != nil {
		return Quote{}, err
	}
	if status != "ACTIVE" {
		return Quote{}, errEmployeeNotActive
	}
	proj, err := project(ctx, tx, r.EmployeeID)
	if err != nil {
		return Quote{}, err
	}
	if err := payroll.CheckPeriod("period", proj.Period); err != nil {
		return Quote{}, fmt.Errorf("lending.quote: the projection's period: %v", err)
	}
	if proj, _, err = WithScheduledDebt(ctx, tx, proj, r.EmployeeID); err != nil {
		return Quote{}, err
	}
	terms := termsOf(p, r.AmountSantim, r.TermMonths, proj.Period)
	s, err := schedule.Compute(terms)
	if err != nil {
		// The product's bounds keep every term within the schedule's; a term that runs past
		// 2100-12 is the one way out.
		return Quote{}, err
	}
	a, err := Afford(proj, p.MaxDebtServiceBasisPoints, s.MaxInstalmentSantim)
	if err != nil {
		return Quote{}, fmt.Errorf("lending.quote: affordability: %w", err)
	}
	a.MaxAmountSantim = maxAffordable(p, terms, a.LimitSantim)
	if !a.Affordable {
		return Quote{}, &payroll.Refusal{Code: CodeNotAffordable, Status: http.StatusUnprocessableEntity,
			Message: "the loan's instalment is more than the employee's pay allows",
			Details: map[string]any{"monthlyInstalmentSantim": a.InstalmentSantim, "limitSantim": a.LimitSantim,
				"bindingLimit": a.Binding, "debtServiceLimitSantim": a.DebtServiceLimitSantim,
				"recoverableSantim": a.RecoverableSantim, "maxAmountSantim": a.MaxAmountSantim}}
	}
	return Quote{Request: r, Product: p, Schedule: s, Affordability: a}, nil
}

func termsOf(p Product, amount int64, n int, first string) schedule.Terms {
	return schedule.Terms{PrincipalSantim: amount, AnnualRateBasisPoints: p.AnnualRateBasisPoints, TermMonths: n,
		FeeFlatSantim: p.FeeFlatSantim, FeeBasisPoints: p.FeeBasisPoints, FirstDuePeriod: first}
}

// maxAffordable is a principal in [product min, product max] whose largest instalment at terms'
// term is at most limit, found by bisection; 0 when the product's minimum does not fit. The
// largest instalment rises with the principal only up to the last instalment's rounding (a
// principal a santim larger can round A up and the last instalment down by several santim), so
// the answer always fits and is the largest that does up to that rounding: a slightly larger
// principal may fit too.
func maxAffordable(p Product, terms schedule.Terms, limit int64) int64 {
	fits := func(amount int64) bool {
		terms.PrincipalSantim = amount
		s, err := schedule.Plan(terms)
		return err == nil && s.MaxInstalmentSantim <= limit
	}
	if !fits(p.MinAmountSantim) {
		return 0
	}
	if fits(p.MaxAmountSantim) {
		return p.MaxAmountSantim
	}
	lo, hi := p.MinAmountSantim, p.MaxAmountSantim // fits(lo), !fits(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
