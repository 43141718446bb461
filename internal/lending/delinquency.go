package lending

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// # Delinquency
//
// A loan that is paid out (ACTIVE) is watched by one delinquency workflow
// (workflows.LoanDelinquency), which wakes on a Temporal timer at each instant its delinquency can
// change and runs CheckDelinquency there — never a daily poll.
//
// Due date. An instalment is deducted in its due_period's payroll (a UTC calendar month); its
// DUE DATE is the last calendar day of that month (DueDate). It is PAST DUE from GraceDays whole
// days after the due date's end: from 00:00 UTC on the (GraceDays+1)-th day of the next month
// (OverdueAt; a grace of 5 days, so the month's payroll deduction and its settlement at the bank
// have time to be recorded). Its DAYS PAST DUE at an instant t is 0 before that and
// ⌊(t − OverdueAt) ÷ 24 h⌋ + 1 from it (day 1 is the first day past due).
//
// A loan's days past due are those of its EARLIEST UNPAID instalment (any instalment not REPAID,
// by due period then index) — 0 when none is past due — and its bucket is CURRENT (0), DPD_1_30,
// DPD_31_60, DPD_61_90 or DPD_90_PLUS (91 and more). So the bucket can change only when an
// unpaid instalment becomes past due, when the earliest one crosses 30, 60 or 90 days, or when a
// repayment or a restructure changes which instalment is the earliest unpaid (those nudge the
// workflow with its signal; otherwise its next timer-driven check sees them). NextCheckAt is the
// first of those instants after a check.
//
// Default. An ACTIVE loan is DEFAULTED (LoanMachine "defaulted", audited DefaultLoan, event
// loan.defaulted.v1) at the first check where its days past due are MORE than its product's
// default_after_days (a per-product setting, migration 0036; DefaultAfterDays = 90 unless the
// product says otherwise: a loan defaults the day it enters the 90+ bucket). A DEFAULTED loan
// keeps being watched (its bucket still moves, back to CURRENT if it is repaid) but stays
// DEFAULTED until a restructure (→ ACTIVE) or a write-off (→ WRITTEN_OFF). The watch ends when
// the loan is REPAID or WRITTEN_OFF.
//
// Each bucket change is recorded in app.loan_delinquency with an audit row
// (RecordLoanDelinquency) and a loan.delinquency_changed.v1 event, in one transaction with the
// default when there is one; a check that changes nothing writes nothing, so the activity may
// run any number of times for one instant.

// GraceDays is the grace after an instalment's due date before it is past due.
const GraceDays = 5

// DefaultAfterDays is the default threshold of a product (app.loan_products.default_after_days).
const DefaultAfterDays = 90

// Delinquency buckets.
const (
	BucketCurrent  = "CURRENT"
	Bucket1To30    = "DPD_1_30"
	Bucket31To60   = "DPD_31_60"
	Bucket61To90   = "DPD_61_90"
	Bucket90Plus   = "DPD_90_PLUS"
	bucketBoundary = 30 // days per bucket
)

// Buckets are every bucket, in order.
var Buckets = []string{BucketCurrent, Bucket1To30, Bucket31To60, Bucket61To90, Bucket90Plus}

const day = 24 * time.Hour

func init() {
	// The servicing moves of the loan lifecycle (delinquency.go, restructure.go, writeoff.go).
	LoanMachine.Moves["defaulted"] = payroll.Move{From: []string{LoanActive}, To: LoanDefaulted}
	LoanMachine.Moves["restructured"] = payroll.Move{From: []string{LoanActive, LoanDefaulted}, To: LoanActive}
	LoanMachine.Moves["written off"] = payroll.Move{From: []string{LoanDefaulted}, To: LoanWrittenOff}
}

// DueDate is the due date of an instalment of period ("YYYY-MM"): 00:00 UTC of the period's
// last calendar day.
func DueDate(period string) (time.Time, error) {
	t, err := time.Parse("2006-01", period)
	if err != nil || len(period) != 7 {
		return time.Time{}, fmt.Errorf("lending: due period %q is not YYYY-MM", period)
	}
	return t.AddDate(0, 1, -1), nil
}

// OverdueAt is the first instant an instalment of period is past due: the end of its due date
// plus GraceDays days.
func OverdueAt(period string) (time.Time, error) {
	d, err := DueDate(period)
	if err != nil {
		return time.Time{}, err
	}
	return d.AddDate(0, 0, 1+GraceDays), nil
}

// DaysPastDue is the days past due at at of an instalment past due from overdueAt.
func DaysPastDue(overdueAt, at time.Time) int {
	if at.Before(overdueAt) {
		return 0
	}
	return int(at.Sub(overdueAt)/day) + 1
}

// BucketOf is the bucket of dpd days past due.
func BucketOf(dpd int) string {
	switch {
	case dpd <= 0:
		return BucketCurrent
	case dpd <= 30:
		return Bucket1To30
	case dpd <= 60:
		return Bucket31To60
	case dpd <= 90:
		return Bucket61To90
	}
	return Bucket90Plus
}

// Delinquency is a loan's delinquency at one instant.
type Delinquency struct {
	DaysPastDue int
	Bucket      string
	// OldestUnpaidIdx and OldestOverdueAt name the earliest unpaid instalment when it is past
	// due (nil when CURRENT).
	OldestUnpaidIdx *int
	OldestOverdueAt *time.Time
}

// unpaid are the instalments not REPAID, each with the instant it is past due, earliest first
// (instalments are stored by index, and indexes follow due periods).
type unpaid struct {
	idx       int
	overdueAt time.Time
}

func unpaidOf(ins []LoanInstalment) ([]unpaid, error) {
	var out []unpaid
	for _, in := range ins {
		if in.Status == InstalmentRepaid {
			continue
		}
		o, err := OverdueAt(in.DuePeriod)
		if err != nil {
			return nil, err
		}
		u := unpaid{idx: in.Index, overdueAt: o}
		// Keep the list ordered by overdue instant then index, whatever order the rows came in.
		i := len(out)
		for i > 0 && (out[i-1].overdueAt.After(o) || out[i-1].overdueAt.Equal(o) && out[i-1].idx > in.Index) {
			i--
		}
		out = append(out, unpaid{})
		copy(out[i+1:], out[i:])
		out[i] = u
	}
	return out, nil
}

// Assess is the delinquency of a loan with instalments ins at at (see "Delinquency").
func Assess(ins []LoanInstalment, at time.Time) (Delinquency, error) {
	u, err := unpaidOf(ins)
	if err != nil {
		return Delinquency{}, err
	}
	if len(u) == 0 || at.Before(u[0].overdueAt) {
		return Delinquency{Bucket: BucketCurrent}, nil
	}
	dpd := DaysPastDue(u[0].overdueAt, at)
	idx, o := u[0].idx, u[0].overdueAt
	return Delinquency{DaysPastDue: dpd, Bucket: BucketOf(dpd), OldestUnpaidIdx: &idx, OldestOverdueAt: &o}, nil
}

// NextCheckAt is the first instant after at when the delinquency of ins can change without a
// repayment or restructure (an unpaid instalment becoming past due, the earliest unpaid one
// crossing 30, 60 or 90 days past due or the default threshold), nil when there is none.
func NextCheckAt(ins []LoanInstalment, at time.Time, defaultAfterDays int) (*time.Time, error) {
	u, err := unpaidOf(ins)
	if err != nil || len(u) == 0 {
		return nil, err
	}
	var next *time.Time
	consider := func(t time.Time) {
		if t.After(at) && (next == nil || t.Before(*next)) {
			next = &t
		}
	}
	for _, x := range u {
		consider(x.overdueAt)
	}
	for _, d := range []int{bucketBoundary, 2 * bucketBoundary, 3 * bucketBoundary, defaultAfterDays} {
		consider(u[0].overdueAt.AddDate(0, 0, d))
	}
	return next, nil
}

// DelinquencyCheck is what CheckDelinquency found and did.
type DelinquencyCheck struct {
	LoanID string
	Status string // the loan's state after the check
	Delinquency
	PreviousBucket   string
	Changed          bool // the bucket changed and was recorded
	Defaulted        bool // the loan became DEFAULTED at this check
	DefaultAfterDays int
	// NextCheckAt is when the workflow should check again (nil: only when nudged).
	NextCheckAt *time.Time
	// Final: the loan is REPAID or WRITTEN_OFF (or never paid out: REJECTED, CANCELLED), so the
	// watch ends.
	Final bool
}

// delinquencyRow is app.loan_delinquency.
type delinquencyRow struct {
	bun.BaseModel `bun:"table:app.loan_delinquency,alias:ld"`

	TenantID        string     `bun:"tenant_id"`
	LoanID          string     `bun:"loan_id"`
	FIID            string     `bun:"fi_id"`
	DaysPastDue     int        `bun:"days_past_due"`
	Bucket          string     `bun:"bucket"`
	OldestUnpaidIdx *int       `bun:"oldest_unpaid_idx"`
	OldestOverdueAt *time.Time `bun:"oldest_overdue_at"`
	CheckedAt       time.Time  `bun:"checked_at"`
	ChangedAt       time.Time  `bun:"changed_at"`
}

// LoanDelinquencyRecord is a loan's delinquency as last recorded.
type LoanDelinquencyRecord struct {
	Delinquency
	ChangedAt *time.Time // nil: never past due
}

// GetDelinquency reads the recorded delinquency of a loan party sees (CURRENT when none was
// recorded).
func GetDelinquency(ctx context.Context, tx db.BunTx, l Loan) (LoanDelinquencyRecord, error) {
	var rows []delinquencyRow
	if err := tx.NewSelect().Model(&rows).Where("ld.tenant_id = ? AND ld.loan_id = ?", l.TenantID, l.ID).Scan(ctx); err != nil {
		return LoanDelinquencyRecord{}, fmt.Errorf("lending.get_delinquency: %w", err)
	}
	if len(rows) == 0 {
		return LoanDelinquencyRecord{Delinquency: Delinquency{Bucket: BucketCurrent}}, nil
	}
	r := rows[0]
	return LoanDelinquencyRecord{Delinquency: Delinquency{DaysPastDue: r.DaysPastDue, Bucket: r.Bucket, OldestUnpaidIdx: r.OldestUnpaidIdx,
		OldestOverdueAt: utcPtr(r.OldestOverdueAt)}, ChangedAt: utcPtr(&r.ChangedAt)}, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// CheckDelinquency assesses the context's business's loan at at and records what changed (see
// "Delinquency"): under the loan's row lock, so it serialises with repayments, restructures and
// write-offs of the loan. Errors: ErrLoanNotFound.
func CheckDelinquency(ctx context.Context, tx db.BunTx, loanID string, at time.Time) (DelinquencyCheck, error) {
	at = at.UTC()
	l, err := getLoan(ctx, tx, Business, loanID, true)
	if err != nil {
		return DelinquencyCheck{}, err
	}
	out := DelinquencyCheck{LoanID: l.ID, Status: l.Status}
	switch l.Status {
	case LoanWrittenOff, LoanRejected, LoanCancelled:
		out.Final = true
		return out, nil
	case LoanRepaid:
		// The last check: nothing is unpaid, so the bucket is CURRENT, recorded below when it was
		// not (a loan repaid while past due kept its bucket for good).
		out.Final = true
	case LoanActive, LoanDefaulted:
	default:
		return out, nil // not paid out yet: nothing is due; wait to be nudged
	}
	if err := tx.NewRaw(`SELECT COALESCE((SELECT default_after_days FROM app.loan_products WHERE tenant_id = ? AND id = ?), ?)`,
		l.FIID, l.ProductID, DefaultAfterDays).Scan(ctx, &out.DefaultAfterDays); err != nil {
		return DelinquencyCheck{}, fmt.Errorf("lending.check_delinquency: threshold: %w", err)
	}
	if out.Delinquency, err = Assess(l.Instalments, at); err != nil {
		return DelinquencyCheck{}, err
	}
	if out.NextCheckAt, err = NextCheckAt(l.Instalments, at, out.DefaultAfterDays); err != nil {
		return DelinquencyCheck{}, err
	}
	prev, err := GetDelinquency(ctx, tx, l)
	if err != nil {
		return DelinquencyCheck{}, err
	}
	out.PreviousBucket = prev.Bucket
	if prev.Bucket != out.Bucket {
		out.Changed = true
		row := delinquencyRow{TenantID: l.TenantID, LoanID: l.ID, FIID: l.FIID, DaysPastDue: out.DaysPastDue, Bucket: out.Bucket,
			OldestUnpaidIdx: out.OldestUnpaidIdx, OldestOverdueAt: out.OldestOverdueAt, CheckedAt: at, ChangedAt: at}
		if _, err := tx.NewInsert().Model(&row).
			On("CONFLICT (tenant_id, loan_id) DO UPDATE").
			Set("days_past_due = EXCLUDED.days_past_due, bucket = EXCLUDED.bucket, oldest_unpaid_idx = EXCLUDED.oldest_unpaid_idx").
			Set("oldest_overdue_at = EXCLUDED.oldest_overdue_at, checked_at = EXCLUDED.checked_at, changed_at = EXCLUDED.changed_at").
			Exec(ctx); err != nil {
			return DelinquencyCheck{}, fmt.Errorf("lending.check_delinquency: record: %w", err)
		}
		ev := loanEvent(l)
		ev["daysPastDue"], ev["bucket"], ev["previousBucket"], ev["checkedAt"] = out.DaysPastDue, out.Bucket, prev.Bucket, at
		ev["oldestUnpaidIndex"] = out.OldestUnpaidIdx
		if err := record(ctx, tx, "RecordLoanDelinquency", "Loan", l.ID, "loan.delinquency_changed.v1", ev); err != nil {
			return DelinquencyCheck{}, err
		}
	}
	if l.Status == LoanActive && out.DaysPastDue > out.DefaultAfterDays {
		to, err := LoanMachine.Next("defaulted", l.Status)
		if err != nil {
			return DelinquencyCheck{}, err
		}
		l.Status, l.UpdatedAt = to, at
		if _, err := tx.NewUpdate().Model(&l).Column("status", "updated_at").Where("ln.tenant_id = ?", l.TenantID).WherePK().Exec(ctx); err != nil {
			return DelinquencyCheck{}, fmt.Errorf("lending.check_delinquency: default: %w", err)
		}
		ev := loanEvent(l)
		ev["daysPastDue"], ev["bucket"], ev["defaultAfterDays"], ev["defaultedAt"] = out.DaysPastDue, out.Bucket, out.DefaultAfterDays, at
		if err := record(ctx, tx, "DefaultLoan", "Loan", l.ID, "loan.defaulted.v1", ev); err != nil {
			return DelinquencyCheck{}, err
		}
		out.Status, out.Defaulted = to, true
	}
	return out, nil
}
