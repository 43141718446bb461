package lending_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func (w *loanWorld) approved(t *testing.T) lending.Loan {
	t.Helper()
	l, err := w.originate(t, w.biz, w.emp, 500_000, 12)
	require.NoError(t, err)
	l, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.ApproveLoan(ctx, tx, l.ID, t0)
	})
	require.NoError(t, err)
	return l
}

// loadPlan runs LoadDisbursePlan in a pgx transaction of o (as the saga's step does).
func loadPlan(o *payrolltest.Org, id, wf string) (p lending.DisbursePlan, err error) {
	err = tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		p, err = lending.LoadDisbursePlan(o.Ctx, tx, id, wf)
		return err
	})
	return p, err
}

func disbursement(t *testing.T, o *payrolltest.Org, fn func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error)) (lending.Disbursement, error) {
	return value(t, o, fn)
}

// TestDisbursementStore walks the disbursement's record steps on the real database: the plan
// needs the FI's funding account; the claim (APPROVED → DISBURSING) belongs to one saga run and
// records its posting; a failed transfer returns the loan to APPROVED with the code; a new run
// claims it again and the settled transfer makes it ACTIVE. Each step is idempotent for its run
// and refused to any other, with one audit row and one event per move.
func TestDisbursementStore(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.approved(t)
	plan := func(wf string) (lending.DisbursePlan, error) {
		return loadPlan(w.biz, l.ID, wf)
	}

	// No funding account yet.
	_, err := plan("wf-a")
	requireRefusal(t, err, http.StatusConflict, lending.CodeFundingAccountNotSet)
	_, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.FIAccounts, error) {
		return lending.PutFIAccounts(ctx, tx, lending.Account{Partner: "sandbox", AccountNumber: "3000000000001"},
			lending.Account{Partner: "sandbox", AccountNumber: "3000000000002"}, t0)
	})
	require.NoError(t, err)
	p, err := plan("wf-a")
	require.NoError(t, err)
	require.Equal(t, lending.DisbursePlan{TenantID: w.biz.ID, LoanID: l.ID, BorrowerID: w.emp, FIID: w.fi.ID, PrincipalSantim: 500_000,
		Funding:     lending.Account{Partner: "sandbox", AccountNumber: "3000000000001"},
		Destination: lending.Payee{Account: lending.Account{Partner: "cbe", AccountNumber: "1000123456789"}, HolderName: "Abebe Kebede"},
		Status:      lending.LoanApproved}, p)
	// Another business (no loan from this FI) does not see the FI's accounts.
	require.Zero(t, w.otherBiz.Count(t, `SELECT count(*) FROM app.lending_fi_accounts`))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.lending_fi_accounts`))
	// Nor another business's loan: not found.
	_, err = loadPlan(w.otherBiz, l.ID, "wf-a")
	requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)

	step := func(fn func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error)) (lending.Disbursement, error) {
		return disbursement(t, w.biz, fn)
	}
	claim := func(wf, txID string) (lending.Disbursement, error) {
		return step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.ClaimDisbursement(ctx, tx, l.ID, wf, txID, t0)
		})
	}
	d, err := claim("wf-a", "tx-1")
	require.NoError(t, err)
	require.Equal(t, lending.LoanDisbursing, d.Status)
	require.Equal(t, "wf-a", d.WorkflowID)
	require.Equal(t, "tx-1", d.LedgerTxID)
	again, err := claim("wf-a", "tx-1")
	require.NoError(t, err)
	require.Equal(t, d, again)
	_, err = claim("wf-a", "tx-other")
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)
	_, err = claim("wf-b", "tx-2")
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)
	_, err = plan("wf-b")
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)
	_, err = plan("wf-a") // the run holding it (retried or continued) reads its plan
	require.NoError(t, err)
	require.Equal(t, 1, audits(t, w.biz, lending.ActionDisburseLoan))
	require.Equal(t, 1, events(t, w.biz, lending.EventLoanDisbursing))
	// A DISBURSING loan is not cancelled.
	_, err = value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.CancelLoan(ctx, tx, lending.Business, l.ID, t0)
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)

	// The transfer failed: back to APPROVED with the code; only the run holding it says so.
	failed := func(wf string) (lending.Disbursement, error) {
		return step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.MarkDisbursementFailed(ctx, tx, l.ID, wf, "INSUFFICIENT_FUNDS", t0)
		})
	}
	_, err = failed("wf-b")
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)
	d, err = failed("wf-a")
	require.NoError(t, err)
	require.Equal(t, lending.LoanApproved, d.Status)
	require.Equal(t, "INSUFFICIENT_FUNDS", d.LastFailure)
	_, err = failed("wf-a")
	require.NoError(t, err)
	require.Equal(t, 1, events(t, w.biz, lending.EventLoanDisbursementFailed))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'FAILED'`, lending.ActionLoanDisbursementFailed))
	_, err = step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
		return lending.MarkDisbursed(ctx, tx, l.ID, "wf-a", "trf-1", "", t0)
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)

	// A new run claims it and is paid out.
	d, err = claim("wf-b", "tx-2")
	require.NoError(t, err)
	require.Equal(t, lending.LoanDisbursing, d.Status)
	require.Equal(t, "INSUFFICIENT_FUNDS", d.LastFailure, "the last failure stays on record")
	paid := func(wf string) (lending.Disbursement, error) {
		return step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.MarkDisbursed(ctx, tx, l.ID, wf, "trf-2", "", t0)
		})
	}
	_, err = paid("wf-a")
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)
	d, err = paid("wf-b")
	require.NoError(t, err)
	require.Equal(t, lending.LoanActive, d.Status)
	require.Equal(t, "trf-2", d.TransferID)
	require.NotNil(t, d.DisbursedAt)
	again, err = paid("wf-b")
	require.NoError(t, err)
	require.Equal(t, d, again)
	require.Equal(t, 1, events(t, w.biz, lending.EventLoanDisbursed))
	require.Equal(t, 1, audits(t, w.biz, lending.ActionLoanDisbursed))
	got, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, lending.Business, l.ID)
	})
	require.NoError(t, err)
	require.Equal(t, lending.LoanActive, got.Status)
	require.Equal(t, "wf-b", *got.DisburseWorkflowID)
	require.Equal(t, "tx-2", *got.DisburseLedgerTxID)
	require.Equal(t, "INSUFFICIENT_FUNDS", *got.LastDisbursementFailure)
}

// TestDisbursementConcludedBy: a saga run whose local steps run again after a lost workflow task
// finds the outcome it recorded on its loan — FAILED with the code (the loan APPROVED again, and
// still after a cancellation), or ACTIVE with its posting and transfer — and no other run does,
// nor the run while the loan is DISBURSING (a run that claims after another's failure sees that
// failure on record, not its own).
func TestDisbursementConcludedBy(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.approved(t)
	concluded := func(o *payrolltest.Org, id, wf string) (*lending.DisburseConcluded, error) {
		return value(t, o, func(ctx context.Context, tx db.BunTx) (*lending.DisburseConcluded, error) {
			return lending.DisbursementConcludedBy(ctx, tx, id, wf)
		})
	}
	none := func(id string, wfs ...string) {
		t.Helper()
		for _, wf := range wfs {
			c, err := concluded(w.biz, id, wf)
			require.NoError(t, err)
			require.Nil(t, c, wf)
		}
	}
	step := func(fn func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error)) {
		t.Helper()
		_, err := disbursement(t, w.biz, fn)
		require.NoError(t, err)
	}
	claim := func(id, wf, txID string) {
		step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.ClaimDisbursement(ctx, tx, id, wf, txID, t0)
		})
	}
	fail := func(id, wf string) {
		step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.MarkDisbursementFailed(ctx, tx, id, wf, "INSUFFICIENT_FUNDS", t0)
		})
	}

	none(l.ID, "wf-a", "")
	_, err := concluded(w.otherBiz, l.ID, "wf-a")
	requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)
	claim(l.ID, "wf-a", "tx-1")
	none(l.ID, "wf-a", "wf-b")

	// wf-a's transfer failed: the loan is APPROVED again, and wf-a's failure is on record.
	fail(l.ID, "wf-a")
	c, err := concluded(w.biz, l.ID, "wf-a")
	require.NoError(t, err)
	require.Equal(t, &lending.DisburseConcluded{Status: lending.DisbursementFailed, LedgerTxID: "tx-1", Reason: "INSUFFICIENT_FUNDS"}, c)
	none(l.ID, "wf-b", "")
	fail(l.ID, "wf-a") // what the run then records again: a no-op
	require.Equal(t, 1, events(t, w.biz, lending.EventLoanDisbursementFailed))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'FAILED'`, lending.ActionLoanDisbursementFailed))

	// wf-b claims it (wf-a's failure stays on record) and pays it out.
	claim(l.ID, "wf-b", "tx-2")
	none(l.ID, "wf-a", "wf-b")
	step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
		return lending.MarkDisbursed(ctx, tx, l.ID, "wf-b", "trf-2", "", t0)
	})
	c, err = concluded(w.biz, l.ID, "wf-b")
	require.NoError(t, err)
	require.Equal(t, &lending.DisburseConcluded{Status: lending.LoanActive, LedgerTxID: "tx-2", TransferID: "trf-2"}, c)
	none(l.ID, "wf-a", "")

	// A loan failed by wf-c and cancelled since: still wf-c's failure.
	l2 := w.approved(t)
	claim(l2.ID, "wf-c", "tx-3")
	fail(l2.ID, "wf-c")
	_, err = value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.CancelLoan(ctx, tx, lending.Business, l2.ID, t0)
	})
	require.NoError(t, err)
	c, err = concluded(w.biz, l2.ID, "wf-c")
	require.NoError(t, err)
	require.Equal(t, &lending.DisburseConcluded{Status: lending.DisbursementFailed, LedgerTxID: "tx-3", Reason: "INSUFFICIENT_FUNDS"}, c)
	none(l2.ID, "wf-a", "wf-b")
}

// TestDisbursementStartsTheScheduleInAnOpenPeriod: a loan requested on 27 November 2026 with its
// first instalment due in 2026-12 is paid out on 10 February 2027, when the 2027-02 run is
// already approved. Its twelve instalments move, whole and with the same amounts, to start in
// 2027-03, the first period whose run can still deduct one (they used to stay from 2026-12: three
// instalments overdue on the day the money arrived, never deducted by any run). The event says
// so; a retried step moves nothing again. A payout in an open period keeps the schedule.
func TestDisbursementStartsTheScheduleInAnOpenPeriod(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.approved(t)
	require.Equal(t, "2026-12", l.FirstDuePeriod)
	paidOut := time.Date(2027, 2, 10, 9, 0, 0, 0, time.UTC)
	_, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2027-02", paidOut)
		return r, err
	})
	require.NoError(t, err)
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.ExecContext(ctx, `UPDATE app.payroll_runs SET status = 'APPROVED',
			calculated_by = 'u-maker', calculated_at = now(), approved_by = 'u-checker', approved_at = now() WHERE period = '2027-02'`)
		return err
	}))
	step := func(fn func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error)) {
		t.Helper()
		_, err := disbursement(t, w.biz, fn)
		require.NoError(t, err)
	}
	step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
		return lending.ClaimDisbursement(ctx, tx, l.ID, "wf-a", "tx-1", paidOut)
	})
	for range 2 {
		step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.MarkDisbursed(ctx, tx, l.ID, "wf-a", "trf-1", "", paidOut)
		})
	}
	got, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, lending.Business, l.ID)
	})
	require.NoError(t, err)
	require.Equal(t, "2027-03", got.FirstDuePeriod)
	require.Len(t, got.Instalments, len(l.Instalments))
	for i, in := range got.Instalments {
		want := l.Instalments[i]
		want.DuePeriod = time.Date(2027, time.Month(3+i), 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
		require.Equal(t, want, in, "instalment %d: moved, amounts unchanged", i)
	}
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'firstDuePeriod' = '2027-03'
		AND (payload->>'scheduleMovedMonths')::int = 3`, lending.EventLoanDisbursed))

	// Paid out in an open period: the schedule stays.
	l2, err := w.originate(t, w.biz, w.biz.Employee(t, payrolltest.Employee{}), 300_000, 6)
	require.NoError(t, err)
	_, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.ApproveLoan(ctx, tx, l2.ID, t0)
	})
	require.NoError(t, err)
	step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
		return lending.ClaimDisbursement(ctx, tx, l2.ID, "wf-b", "tx-2", t0)
	})
	step(func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
		return lending.MarkDisbursed(ctx, tx, l2.ID, "wf-b", "trf-2", "", t0)
	})
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE id = $1 AND first_due_period = '2026-12'`, l2.ID))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loan_instalments WHERE loan_id = $1 AND idx = 0 AND due_period = '2026-12'`, l2.ID))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'loanId' = $2
		AND payload->>'firstDuePeriod' = '2026-12' AND NOT payload ? 'scheduleMovedMonths'`, lending.EventLoanDisbursed, l2.ID))
}

// TestFICannotDisburse: the FI updates the loans it funds (its decisions), but the database
// refuses it the disbursement's columns and moves, whatever SQL it sends.
func TestFICannotDisburse(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.approved(t)
	for _, stmt := range []string{
		`UPDATE app.loans SET disburse_workflow_id = 'wf-fi' WHERE id = $1`,
		`UPDATE app.loans SET disburse_ledger_tx_id = 'tx-fi' WHERE id = $1`,
		`UPDATE app.loans SET disburse_transfer_id = 'trf-fi' WHERE id = $1`,
		`UPDATE app.loans SET last_disbursement_failure = 'X' WHERE id = $1`,
		`UPDATE app.loans SET status = 'DISBURSING', disburse_workflow_id = 'wf-fi', disburse_ledger_tx_id = 'tx-fi' WHERE id = $1`,
		`UPDATE app.loans SET status = 'ACTIVE', disbursed_at = now(), disburse_workflow_id = 'wf-fi', disburse_ledger_tx_id = 'tx-fi' WHERE id = $1`,
	} {
		err := w.fi.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := tx.Exec(ctx, stmt, l.ID)
			return err
		})
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe, stmt)
		require.Equal(t, "42501", pe.Code, stmt)
	}
	// A DISBURSING loan is not the FI's to move either (not even to cancel it).
	_, err := disbursement(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
		return lending.ClaimDisbursement(ctx, tx, l.ID, "wf-biz", "tx-biz", t0)
	})
	require.NoError(t, err)
	err = w.fi.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'CANCELLED' WHERE id = $1`, l.ID)
		return err
	})
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "42501", pe.Code)
	// The business's own saga made the move; the FI still reads the loan.
	require.Equal(t, 1, w.fi.Count(t, `SELECT count(*) FROM app.loans WHERE id = $1 AND status = 'DISBURSING'`, l.ID))
}

// TestDisbursementChecks: the table's CHECKs hold the disbursement's columns to the states.
func TestDisbursementChecks(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.approved(t)
	for _, stmt := range []string{
		`UPDATE app.loans SET status = 'DISBURSING' WHERE id = $1`,                                                // no claim
		`UPDATE app.loans SET status = 'DISBURSING', disburse_workflow_id = 'wf' WHERE id = $1`,                   // no posting
		`UPDATE app.loans SET status = 'ACTIVE' WHERE id = $1`,                                                    // not paid out
		`UPDATE app.loans SET disbursed_at = now() WHERE id = $1`,                                                 // paid out, still APPROVED
		`UPDATE app.loans SET disburse_workflow_id = '' WHERE id = $1`,                                            // empty
		`UPDATE app.loans SET status = 'ACTIVE', disbursed_at = now(), disburse_workflow_id = 'wf' WHERE id = $1`, // no posting
	} {
		err := w.biz.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := tx.Exec(ctx, stmt, l.ID)
			return err
		})
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe, stmt)
		require.Equal(t, "23514", pe.Code, stmt)
	}
}

// TestDisbursementByWorkflowReadsThroughItsIndex: the disburse route asks which loan a key's run
// claimed on every first request of a key; the read finds the claim through
// loans_disburse_workflow (app migration 0085), not by going through the business's loans.
func TestDisbursementByWorkflowReadsThroughItsIndex(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	ctx := w.biz.Ctx
	var plan strings.Builder
	require.NoError(t, tenancy.InTx(ctx, w.biz.DB.App, func(tx pgx.Tx) error {
		// The test's few loans are cheaper to scan than to look up: the plan without scans says
		// whether the index can serve the read at all.
		text, err := testkit.Plan(ctx, tx, lending.DisbursementByWorkflowSQL, w.biz.ID, "wf-plan")
		plan.WriteString(text)
		return err
	}))
	require.Contains(t, plan.String(), "loans_disburse_workflow", "the claim is not read through its index:\n%s", plan.String())
}

// claimable is an APPROVED loan of an FI whose accounts are set, and its claim by run wf-a.
func (w *loanWorld) claimable(t *testing.T) (lending.Loan, func() (lending.Disbursement, error)) {
	t.Helper()
	_, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.FIAccounts, error) {
		return lending.PutFIAccounts(ctx, tx, lending.Account{Partner: "sandbox", AccountNumber: "3000000000001"},
			lending.Account{Partner: "sandbox", AccountNumber: "3000000000002"}, t0)
	})
	require.NoError(t, err)
	l := w.approved(t)
	return l, func() (lending.Disbursement, error) {
		return disbursement(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Disbursement, error) {
			return lending.ClaimDisbursement(ctx, tx, l.ID, "wf-a", "tx-1", t0)
		})
	}
}

// TestDisbursementNeedsTheOptIn: an APPROVED loan whose business withdrew its opt-in to the
// loan's product since is not paid out: the plan refuses it (422 LOAN_PRODUCT_NOT_OPTED_IN), and
// so does the claim of a run that planned before the withdrawal (nothing written: the loan stays
// APPROVED and unclaimed, no audit row, no event). Opted in again, it is claimed.
func TestDisbursementNeedsTheOptIn(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l, claim := w.claimable(t)
	_, err := loadPlan(w.biz, l.ID, "wf-a") // planned while the product was offered
	require.NoError(t, err)

	w.withdrawOptIn(t, w.biz)
	_, err = loadPlan(w.biz, l.ID, "wf-a")
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotOptedIn)
	_, err = claim()
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotOptedIn)
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE id = $1 AND status = 'APPROVED'
		AND disburse_workflow_id IS NULL AND disburse_ledger_tx_id IS NULL`, l.ID))
	require.Zero(t, audits(t, w.biz, lending.ActionDisburseLoan))
	require.Zero(t, events(t, w.biz, lending.EventLoanDisbursing))
	// The code is the table's: the saga ends refused, and the API answers it.
	r, ok := lending.RefusalOf(lending.CodeOf(err))
	require.True(t, ok)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status)

	w.optInAgain(t, w.biz)
	_, err = loadPlan(w.biz, l.ID, "wf-a")
	require.NoError(t, err)
	d, err := claim()
	require.NoError(t, err)
	require.Equal(t, lending.LoanDisbursing, d.Status)
}

// An FI suspended after the plan was read is refused at the claim (409 LOAN_FI_NOT_AVAILABLE,
// nothing written), before the saga sends anything; back in good standing, the claim goes through.
func TestDisbursementClaimNeedsTheFIInGoodStanding(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l, claim := w.claimable(t)
	_, err := loadPlan(w.biz, l.ID, "wf-a") // planned while the FI was in good standing
	require.NoError(t, err)

	w.setFIStatus(t, orgs.OrgSuspended)
	_, err = claim()
	requireRefusal(t, err, http.StatusConflict, lending.CodeFINotAvailable)
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE id = $1 AND status = 'APPROVED'
		AND disburse_workflow_id IS NULL AND disburse_ledger_tx_id IS NULL`, l.ID))
	require.Zero(t, audits(t, w.biz, lending.ActionDisburseLoan))
	require.Zero(t, events(t, w.biz, lending.EventLoanDisbursing))

	w.setFIStatus(t, orgs.OrgActive)
	d, err := claim()
	require.NoError(t, err)
	require.Equal(t, lending.LoanDisbursing, d.Status)
}
