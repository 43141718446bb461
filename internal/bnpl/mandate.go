package bnpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// Instalments collected by payroll deduction (internal/payroll/product_mandate.go): the
// customer opts in for their own ACTIVE agreement (CreateInstalmentMandate: a PENDING
// BNPL_INSTALLMENT mandate whose reference is the agreement, of the amount of its largest
// instalment still owed, DUE or being collected: largestOwed); a payroll approver activates it;
// each period's line is the earliest DUE instalment's amount, at most the mandate's, none once nothing is DUE or while the agreement
// cannot be collected (internal/payroll/mandate.go's periodMandates), and the collection that settles the agreement
// cancels the mandate (MarkCollected; a write-off cancels it too, and a restructure to larger
// instalments than it covers); each PAID payroll entry's line is then collected
// by the collection saga with Source PAYROLL (workflows.BnplCollect), which takes the
// agreement's earliest DUE instalment (ReservePayroll) and
// refuses a line whose amount is not that instalment's (BNPL_MANDATE_AMOUNT_MISMATCH: the
// instalment stays owed, the line is reported for a refund).

// CreateInstalmentMandate is the customer's opt-in to pay agreement id's instalments by payroll
// deduction from startPeriod (to endPeriod, "" until cancelled): employeeID is the caller's own
// employee. Errors: BNPL_AGREEMENT_NOT_FOUND (404: another organization's or another customer's
// agreement), BNPL_INVALID_STATE (409: not ACTIVE), BNPL_MERCHANT_ORDER_REVERSED (409: the
// merchant refunded or cancelled the order), BNPL_NOTHING_OUTSTANDING (409: no DUE instalment),
// field errors, PAYROLL_MANDATE_EXISTS (409), PAYROLL_EMPLOYEE_TERMINATED (422).
func CreateInstalmentMandate(ctx context.Context, tx db.BunTx, id, employeeID, startPeriod, endPeriod string, now time.Time) (payroll.Mandate, error) {
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return payroll.Mandate{}, err
	}
	if a.EmployeeID != employeeID {
		return payroll.Mandate{}, RefusalError(CodeAgreementNotFound)
	}
	if err := collectable(ctx, tx, a); err != nil {
		return payroll.Mandate{}, err
	}
	amount, err := largestOwed(ctx, tx, a)
	if err != nil {
		return payroll.Mandate{}, err
	}
	return payroll.CreateProductMandate(ctx, tx, payroll.ProductMandate{Kind: payroll.KindBnplInstallment, EmployeeID: a.EmployeeID,
		Reference: a.ID, AmountSantim: amount, StartPeriod: startPeriod, EndPeriod: endPeriod,
		Description: "BNPL instalment by payroll deduction"}, now)
}

// earliestDue is the index and amount of a's earliest DUE instalment (by due date, then
// index; superseded and collected ones are not owed). Errors: BNPL_NOTHING_OUTSTANDING.
func earliestDue(ctx context.Context, tx db.Writer, a Agreement) (int, int64, error) {
	var idx int
	var amount int64
	err := tx.QueryRow(ctx, `SELECT idx, amount_santim::bigint FROM app.bnpl_instalments
		WHERE tenant_id = $1 AND agreement_id = $2 AND status = 'DUE' ORDER BY due_date, idx LIMIT 1`, a.TenantID, a.ID).Scan(&idx, &amount)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, RefusalError(CodeNothingOutstanding)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("bnpl: read the earliest due instalment: %w", err)
	}
	return idx, amount, nil
}

// largestOwed is the amount of a's largest instalment still owed: DUE, or being collected (its
// collection may yet be refused and the instalment be DUE again). A mandate of that amount covers
// whichever instalment a period's line takes (the earliest DUE one, at most the mandate's amount):
// one of the earliest DUE instalment's while another was being collected was a santim short of
// that one when its collection was refused, and every period's line was refused
// BNPL_MANDATE_AMOUNT_MISMATCH. Errors: BNPL_NOTHING_OUTSTANDING (no DUE instalment).
func largestOwed(ctx context.Context, tx db.Writer, a Agreement) (int64, error) {
	var due, amount *int64
	err := tx.QueryRow(ctx, `SELECT max(amount_santim) FILTER (WHERE status = 'DUE')::bigint, max(amount_santim)::bigint
		FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND status IN ('DUE', 'COLLECTING')`, a.TenantID, a.ID).
		Scan(&due, &amount)
	if err != nil {
		return 0, fmt.Errorf("bnpl: read the instalments owed: %w", err)
	}
	if due == nil {
		return 0, RefusalError(CodeNothingOutstanding)
	}
	return *amount, nil
}

// liveMandate is a's live BNPL_INSTALLMENT mandate; ok is false when it has none.
func liveMandate(ctx context.Context, tx db.Writer, a Agreement) (m payroll.LiveProductMandate, ok bool, err error) {
	live, err := payroll.LiveProductMandates(ctx, tx, payroll.KindBnplInstallment, []string{a.ID})
	m, ok = live[a.ID]
	return m, ok, err
}

// CheckNoOpenRun refuses BNPL_MANDATE_IN_OPEN_RUN while a payroll run that has not completed
// withheld, or may still withhold, one of a's instalments under any of its mandates (live or
// cancelled since: payroll.RefuseInOpenRun). Its completion collects the earliest DUE instalment
// at the amount it withheld, so whatever changes what a owes — a manual collection, a
// restructure, a write-off — waits for it; else the withheld pay would be refused at completion
// and left for an operator to refund.
func CheckNoOpenRun(ctx context.Context, tx db.Writer, a Agreement) error {
	return payroll.RefuseInOpenRun(ctx, tx, a.EmployeeID, payroll.KindBnplInstallment, a.ID, RefusalError(CodeMandateInOpenRun))
}
