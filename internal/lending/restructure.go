package lending

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/lending/schedule"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// # Restructure
//
// A platform operator restructures an ACTIVE or DEFAULTED loan (Restructure; DEFAULTED → ACTIVE:
// the new schedule gives the borrower a fresh start, and the delinquency workflow, nudged,
// records the bucket the new schedule gives, CURRENT until a new instalment is missed). The loan's
// PRINCIPAL OUTSTANDING R (PrincipalOutstanding: what the receivable-from-borrower account holds)
// is amortised again over TermMonths at AnnualRateBasisPoints (default the loan's, never more),
// by the same schedule package as an origination, the first instalment due in the month after
// the restructure's (UTC):
//
//   - an instalment REPAID is kept as it is;
//   - an instalment PARTIALLY_REPAID is closed at what was repaid on it (REPAID: its parts become
//     what the repayment covered, interest first, then fee, then principal — the repayment rule);
//   - an instalment nothing was repaid on (SCHEDULED) is replaced: it stays, SUPERSEDED by the
//     new schedule version (migration 0038; a FAILED repayment may still name it, and history
//     is kept), and is no longer part of the loan's schedule (read, repaid, deducted, assessed);
//   - what was not repaid of the replaced and closed instalments' FEES is carried into the new
//     schedule (its flat fee, spread over its instalments by money.Allocate), so the FI's fee is
//     kept; their unpaid INTEREST is waived — interest is never recognised before it is collected,
//     so no ledger entry changes, and the new schedule charges interest on R from now on. A
//     restructure posts nothing: R stays the receivable.
//
// The new instalments are numbered after the loan's highest index (an index names one instalment
// for good), the whole old schedule is kept in app.loan_schedule_versions (version 2, 3, …;
// version 1 is the origination's) with the restructure's terms, reason and operator, and the loan
// takes the new rate, level payment, monthly instalment and totals. Bounds: TermMonths within the
// product's term range and short enough that every new instalment repays principal
// (schedule.ErrNotAmortising: a small remainder over a long term; LOAN_TERM_OUT_OF_RANGE, 422,
// naming the longest term that does), the rate at most the loan's
// (LOAN_RESTRUCTURE_RATE_TOO_HIGH, 422), something outstanding (LOAN_NOTHING_OUTSTANDING, 409),
// no write-off under way (LOAN_WRITE_OFF_IN_PROGRESS, 409), no repayment of the loan being
// posted (LOAN_REPAYMENT_IN_PROGRESS, 409), the last index at most
// MaxInstalmentIndex (LOAN_RESTRUCTURE_LIMIT_REACHED, 409). Audited RestructureLoan, event
// loan.restructured.v1.

// MaxInstalmentIndex bounds an instalment's index (app.loan_instalments, migration 0036).
const MaxInstalmentIndex = 1199

// The servicing refusals, from the one table (codes.go).
var (
	errRateTooHigh        = RefusalError(CodeRestructureRateTooHigh)
	errNothingOutstanding = RefusalError(CodeNothingOutstanding)
	errWriteOffInProgress = RefusalError(CodeWriteOffInProgress)
	errRestructureLimit   = RefusalError(CodeRestructureLimit)
)

// RestructureRequest is a restructure's terms.
type RestructureRequest struct {
	TermMonths            int
	AnnualRateBasisPoints *int64 // nil: the loan's
	Reason                string
}

// Check validates the request's fields (the caller's 400).
func (r RestructureRequest) Check() error {
	switch {
	case r.TermMonths < 1 || r.TermMonths > schedule.MaxTermMonths:
		return &field.Error{Field: "termMonths", Problem: fmt.Sprintf("must be from 1 to %d", schedule.MaxTermMonths)}
	case r.AnnualRateBasisPoints != nil && (*r.AnnualRateBasisPoints < 0 || *r.AnnualRateBasisPoints > schedule.MaxAnnualRateBasisPoints):
		return &field.Error{Field: "annualRateBasisPoints", Problem: fmt.Sprintf("must be from 0 to %d", schedule.MaxAnnualRateBasisPoints)}
	}
	return CheckReason("reason", r.Reason)
}

// Covered is what the repaid santim of an instalment paid of each part: interest first, then
// fee, then principal (the repayment rule).
func Covered(in LoanInstalment) (interest, fee, principal int64) {
	left := in.RepaidSantim
	interest = min(left, in.InterestSantim)
	left -= interest
	fee = min(left, in.FeeSantim)
	left -= fee
	principal = min(left, in.PrincipalSantim)
	return interest, fee, principal
}

// PrincipalOutstanding is what the borrower still owes of the principal: Σ over the instalments
// of the principal their repayments have not covered (what receivable-from-borrower:<loan>
// holds, the journals in doc.go).
func PrincipalOutstanding(ins []LoanInstalment) int64 {
	var r int64
	for _, in := range ins {
		_, _, p := Covered(in)
		r += in.PrincipalSantim - p
	}
	return r
}

// ScheduleVersion is one restructure's record: the version it made and the schedule it replaced.
type ScheduleVersion struct {
	bun.BaseModel `bun:"table:app.loan_schedule_versions,alias:sv"`

	TenantID                   string          `bun:"tenant_id"`
	LoanID                     string          `bun:"loan_id"`
	FIID                       string          `bun:"fi_id"`
	Version                    int             `bun:"version"`
	FromStatus                 string          `bun:"from_status"`
	PrincipalOutstandingSantim int64           `bun:"principal_outstanding_santim"`
	AnnualRateBasisPoints      int64           `bun:"annual_rate_basis_points"`
	TermMonths                 int             `bun:"term_months"`
	FirstDuePeriod             string          `bun:"first_due_period"`
	CarriedFeeSantim           int64           `bun:"carried_fee_santim"`
	WaivedInterestSantim       int64           `bun:"waived_interest_santim"`
	Reason                     string          `bun:"reason"`
	RestructuredBy             string          `bun:"restructured_by"`
	RestructuredAt             time.Time       `bun:"restructured_at"`
	Previous                   json.RawMessage `bun:"previous,type:jsonb"`
	Instalments                json.RawMessage `bun:"instalments,type:jsonb"`
}

// HistoryInstalment is an instalment as a schedule version keeps it.
type HistoryInstalment struct {
	Index           int    `json:"index"`
	DuePeriod       string `json:"duePeriod"`
	PrincipalSantim int64  `json:"principalSantim"`
	InterestSantim  int64  `json:"interestSantim"`
	FeeSantim       int64  `json:"feeSantim"`
	TotalSantim     int64  `json:"totalSantim"`
	BalanceSantim   int64  `json:"balanceSantim"`
	RepaidSantim    int64  `json:"repaidSantim"`
	Status          string `json:"status"`
}

func historyOf(ins []LoanInstalment) []HistoryInstalment {
	out := make([]HistoryInstalment, 0, len(ins))
	for _, in := range ins {
		out = append(out, HistoryInstalment{Index: in.Index, DuePeriod: in.DuePeriod, PrincipalSantim: in.PrincipalSantim,
			InterestSantim: in.InterestSantim, FeeSantim: in.FeeSantim, TotalSantim: in.TotalSantim, BalanceSantim: in.BalanceSantim,
			RepaidSantim: in.RepaidSantim, Status: in.Status})
	}
	return out
}

// ScheduleVersions lists a loan's restructures, oldest first.
func ScheduleVersions(ctx context.Context, tx db.BunTx, l Loan) ([]ScheduleVersion, error) {
	var out []ScheduleVersion
	if err := tx.NewSelect().Model(&out).Where("sv.tenant_id = ? AND sv.loan_id = ?", l.TenantID, l.ID).OrderExpr("sv.version").
		Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.schedule_versions: %w", err)
	}
	return out, nil
}

// currentVersion is the loan's schedule version: 1 + its restructures.
func currentVersion(ctx context.Context, tx db.BunTx, l Loan) (int, error) {
	var v int
	if err := tx.NewRaw(`SELECT COALESCE(max(version), 1) FROM app.loan_schedule_versions WHERE tenant_id = ? AND loan_id = ?`,
		l.TenantID, l.ID).Scan(ctx, &v); err != nil {
		return 0, fmt.Errorf("lending: schedule version: %w", err)
	}
	return v, nil
}

// CurrentScheduleVersion is the schedule version of a loan party sees.
func CurrentScheduleVersion(ctx context.Context, tx db.BunTx, l Loan) (int, error) {
	return currentVersion(ctx, tx, l)
}

// Restructured is a restructure's outcome.
type Restructured struct {
	Loan    Loan
	Version ScheduleVersion
}

// Restructure restructures the context's business's loan (see "Restructure"). The caller's
// scope is the loan's business (a platform operator acts there). Errors: ErrLoanNotFound, 409
// LOAN_INVALID_STATE, the refusals above.
func Restructure(ctx context.Context, tx db.BunTx, loanID string, r RestructureRequest, now time.Time) (Restructured, error) {
	if err := r.Check(); err != nil {
		return Restructured{}, err
	}
	now = now.UTC()
	l, err := getLoan(ctx, tx, Business, loanID, true)
	if err != nil {
		return Restructured{}, err
	}
	from := l.Status
	to, err := LoanMachine.Next("restructured", l.Status)
	if err != nil {
		return Restructured{}, err
	}
	if err := notOwnLoan(ctx, tx, l.BorrowerID); err != nil {
		return Restructured{}, err
	}
	var pending int
	if err := tx.NewRaw(`SELECT count(*) FROM app.loan_write_offs WHERE tenant_id = ? AND loan_id = ? AND status = 'PENDING'`,
		l.TenantID, l.ID).Scan(ctx, &pending); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: write-offs: %w", err)
	}
	if pending > 0 {
		return Restructured{}, errWriteOffInProgress
	}
	// A repayment being posted is for an instalment the restructure may replace or close: its
	// parts were derived from the instalment as it is. The loan's row lock (held) keeps a new one
	// from being reserved until this commits.
	if err := noRepaymentPending(ctx, tx, l); err != nil {
		return Restructured{}, err
	}
	// The product's term range (the business reads the products it opted in to; a product it
	// can no longer read bounds the term by the schedule's own limits).
	var bounds []struct {
		Min int `bun:"min_term_months"`
		Max int `bun:"max_term_months"`
	}
	if err := tx.NewRaw(`SELECT min_term_months, max_term_months FROM app.loan_products WHERE tenant_id = ? AND id = ?`,
		l.FIID, l.ProductID).Scan(ctx, &bounds); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: product: %w", err)
	}
	minTerm, maxTerm := 1, schedule.MaxTermMonths
	if len(bounds) == 1 {
		minTerm, maxTerm = bounds[0].Min, bounds[0].Max
	}
	if r.TermMonths < minTerm || r.TermMonths > maxTerm {
		return Restructured{}, &payroll.Refusal{Code: CodeTermOutOfRange, Status: http.StatusUnprocessableEntity,
			Message: fmt.Sprintf("termMonths must be from %d to %d (the product's term range)", minTerm, maxTerm),
			Details: map[string]any{"minTermMonths": minTerm, "maxTermMonths": maxTerm}}
	}
	rate := l.AnnualRateBasisPoints
	if r.AnnualRateBasisPoints != nil {
		if *r.AnnualRateBasisPoints > l.AnnualRateBasisPoints {
			return Restructured{}, errRateTooHigh
		}
		rate = *r.AnnualRateBasisPoints
	}

	// What stays, what closes, what goes.
	outstanding := PrincipalOutstanding(l.Instalments)
	if outstanding <= 0 {
		return Restructured{}, errNothingOutstanding
	}
	var carriedFee, waivedInterest int64
	var closed []LoanInstalment
	var replaced []int
	// Indexes are never reused: the new instalments follow every index, superseded ones too.
	var maxIdx int
	if err := tx.NewRaw(`SELECT COALESCE(max(idx), 0) FROM app.loan_instalments WHERE tenant_id = ? AND loan_id = ?`, l.TenantID, l.ID).
		Scan(ctx, &maxIdx); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: last index: %w", err)
	}
	for _, in := range l.Instalments {
		if in.Status == InstalmentRepaid {
			continue
		}
		ci, cf, _ := Covered(in)
		carriedFee += in.FeeSantim - cf
		waivedInterest += in.InterestSantim - ci
		if in.RepaidSantim == 0 {
			replaced = append(replaced, in.Index)
			continue
		}
		closed = append(closed, closedAtRepaid(in))
	}
	// The new schedule starts next month, or in the first period after it whose run has not fixed
	// its figures: a DEFAULTED loan is in no run, so nothing else keeps a run approved ahead of the
	// clock from missing its first instalment (found by an audit).
	first, err := firstOpenPeriod(ctx, tx, time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01"))
	if err != nil {
		return Restructured{}, err
	}
	terms := schedule.Terms{PrincipalSantim: outstanding, AnnualRateBasisPoints: rate, TermMonths: r.TermMonths,
		FeeFlatSantim: carriedFee, FirstDuePeriod: first}
	s, err := schedule.Compute(terms)
	if errors.Is(err, schedule.ErrNotAmortising) {
		// A small remainder over a long term: some instalment would repay no principal (one of 0
		// santim could never be repaid). Name the longest term that amortises.
		longest := schedule.LongestTerm(terms)
		return Restructured{}, &payroll.Refusal{Code: CodeTermOutOfRange, Status: http.StatusUnprocessableEntity,
			Message: fmt.Sprintf("%d santim outstanding cannot be spread over %d months at this rate: every instalment must repay principal",
				outstanding, r.TermMonths),
			Details: map[string]any{"minTermMonths": minTerm, "maxTermMonths": min(maxTerm, longest), "principalOutstandingSantim": outstanding}}
	}
	if err != nil {
		return Restructured{}, err
	}
	if maxIdx+r.TermMonths > MaxInstalmentIndex {
		return Restructured{}, errRestructureLimit
	}
	version, err := currentVersion(ctx, tx, l)
	if err != nil {
		return Restructured{}, err
	}
	var fresh []LoanInstalment
	for _, in := range s.Instalments {
		fresh = append(fresh, LoanInstalment{TenantID: l.TenantID, LoanID: l.ID, FIID: l.FIID, Index: maxIdx + 1 + in.Index,
			DuePeriod: in.DuePeriod, PrincipalSantim: in.PrincipalSantim, InterestSantim: in.InterestSantim, FeeSantim: in.FeeSantim,
			TotalSantim: in.TotalSantim, BalanceSantim: in.BalanceSantim, Status: InstalmentScheduled})
	}
	previous, _ := json.Marshal(historyOf(l.Instalments))
	made, _ := json.Marshal(historyOf(fresh))
	v := ScheduleVersion{TenantID: l.TenantID, LoanID: l.ID, FIID: l.FIID, Version: version + 1, FromStatus: from,
		PrincipalOutstandingSantim: outstanding, AnnualRateBasisPoints: rate, TermMonths: r.TermMonths, FirstDuePeriod: first,
		CarriedFeeSantim: carriedFee, WaivedInterestSantim: waivedInterest, Reason: r.Reason, RestructuredBy: actor(ctx),
		RestructuredAt: now, Previous: previous, Instalments: made}
	if _, err := tx.NewInsert().Model(&v).Exec(ctx); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: version: %w", err)
	}
	if len(replaced) > 0 {
		res, err := tx.NewUpdate().Model((*LoanInstalment)(nil)).Set("status = ?", InstalmentSuperseded).
			Set("superseded_by_version = ?", v.Version).Where("li.tenant_id = ? AND li.loan_id = ?", l.TenantID, l.ID).
			Where("li.idx IN (?) AND li.status = ? AND li.repaid_santim = 0", bun.List(replaced), InstalmentScheduled).Exec(ctx)
		if err != nil {
			return Restructured{}, fmt.Errorf("lending.restructure: replace instalments: %w", err)
		}
		if n, _ := res.RowsAffected(); n != int64(len(replaced)) {
			return Restructured{}, fmt.Errorf("lending.restructure: superseded %d instalments of %d", n, len(replaced))
		}
	}
	if err := storeClosed(ctx, tx, closed); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: %w", err)
	}
	if _, err := tx.NewInsert().Model(&fresh).Exec(ctx); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: new instalments: %w", err)
	}

	// The loan's current schedule: kept and closed instalments, then the new ones.
	var current []LoanInstalment
	for _, in := range l.Instalments {
		if in.Status == InstalmentRepaid {
			current = append(current, in)
		}
	}
	current = append(append(current, closed...), fresh...)
	var interest, fee, total int64
	for _, in := range current {
		interest, fee, total = interest+in.InterestSantim, fee+in.FeeSantim, total+in.TotalSantim
	}
	l.Status, l.AnnualRateBasisPoints, l.PaymentSantim, l.MonthlyInstalmentSantim = to, rate, s.PaymentSantim, s.MaxInstalmentSantim
	l.TotalInterestSantim, l.FeeSantim, l.TotalRepayableSantim, l.UpdatedAt = interest, fee, total, now
	if _, err := tx.NewUpdate().Model(&l).Column("status", "annual_rate_basis_points", "payment_santim", "monthly_instalment_santim",
		"total_interest_santim", "fee_santim", "total_repayable_santim", "updated_at").Where("ln.tenant_id = ?", l.TenantID).WherePK().
		Exec(ctx); err != nil {
		return Restructured{}, fmt.Errorf("lending.restructure: loan: %w", err)
	}
	l, err = getLoan(ctx, tx, Business, l.ID, false)
	if err != nil {
		return Restructured{}, err
	}
	ev := loanEvent(l)
	ev["scheduleVersion"], ev["fromStatus"], ev["principalOutstandingSantim"] = v.Version, from, outstanding
	ev["annualRateBasisPoints"], ev["newTermMonths"], ev["newFirstDuePeriod"] = rate, r.TermMonths, first
	ev["carriedFeeSantim"], ev["waivedInterestSantim"], ev["replacedInstalments"], ev["reason"] = carriedFee, waivedInterest, replaced, r.Reason
	return Restructured{Loan: l, Version: v}, record(ctx, tx, "RestructureLoan", "Loan", l.ID, "loan.restructured.v1", ev)
}

// closedAtRepaid is a PARTIALLY_REPAID instalment closed at what was repaid on it: REPAID, its
// parts what the repayments covered (Covered: interest, then fee, then principal), its balance
// holding the principal it no longer takes. Its repaid amount is what a remittance to the FI
// sends (remit.go takes a REPAID instalment).
func closedAtRepaid(in LoanInstalment) LoanInstalment {
	ci, cf, cp := Covered(in)
	c := in
	c.InterestSantim, c.FeeSantim, c.PrincipalSantim = ci, cf, cp
	c.TotalSantim, c.Status = ci+cf+cp, InstalmentRepaid
	c.BalanceSantim = in.BalanceSantim + (in.PrincipalSantim - cp)
	return c
}

// storeClosed writes instalments closed by closedAtRepaid.
func storeClosed(ctx context.Context, tx db.BunTx, closed []LoanInstalment) error {
	for i := range closed {
		if _, err := tx.NewUpdate().Model(&closed[i]).Column("principal_santim", "interest_santim", "fee_santim", "total_santim",
			"balance_santim", "status").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("close instalment %d: %w", closed[i].Index, err)
		}
	}
	return nil
}
