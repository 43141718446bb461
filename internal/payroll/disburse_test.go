package payroll_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The disbursement's record steps in the store: the plan refuses without a payroll account; the
// claim settles a net-0 entry PAID without a transfer and fails one whose payout account is at
// another partner, and is answered the same when the saga claims again (another saga is
// refused); outcomes are recorded once and only for the attempt the saga owns; the run is
// DISBURSED once every entry is final, once; a retry claims a FAILED entry for a new attempt.
func TestDisbursementRecordSteps(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	a := o.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	b := o.Employee(t, payrolltest.Employee{Salary: 1_200_000})
	zero := o.Employee(t, payrolltest.Employee{Salary: 900_000})
	elsewhere := o.Employee(t, payrolltest.Employee{Salary: 800_000})
	exec(t, o, `UPDATE app.employees SET payout_partner = 'other-bank' WHERE id = $1`, elsewhere)
	const maker, checker, wf = "u-maker", "u-checker", "payroll-disburse-x"

	run, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-11", runNow)
		if err != nil {
			return r, err
		}
		return payroll.CalculateRun(ctx, tx, r.ID, runNow)
	})
	require.NoError(t, err)
	exec(t, o, `UPDATE app.payroll_entries SET basic_santim = 0, gross_santim = 0, taxable_santim = 0, exempt_santim = 0,
		tax_base_santim = 0, paye_santim = 0, pension_employee_santim = 0, statutory_santim = 0, court_orders_santim = 0,
		protected_santim = 0, deductions_santim = 0, net_santim = 0 WHERE employee_id = $1`, zero)
	_, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.NoError(t, err)
	es := entriesOf(t, o, run.ID)

	// No payroll account: refused.
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.LoadDisbursePlan(ctx, tx, run.ID, wf)
		require.Equal(t, payroll.CodePayrollAccountNotSet, refusalCode(err))
		_, err = payroll.ChangeSettings(ctx, tx, payroll.LayerTenant, payroll.SettingsChange{PayrollAccount: payroll.Field[payroll.Account]{
			Set: true, Value: &payroll.Account{Partner: "cbe", AccountNumber: "2000000000001", HolderName: "Org Treasury"}}})
		return err
	}))
	var claim payroll.DisburseClaim
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		p, err := payroll.LoadDisbursePlan(ctx, tx, run.ID, wf)
		require.NoError(t, err)
		require.Equal(t, payroll.RunApproved, p.Status)
		require.Equal(t, "2000000000001", p.Account.AccountNumber)
		claim, err = payroll.ClaimDisbursement(ctx, tx, run.ID, wf, p.Account.Partner, runNow)
		return err
	}))
	require.Equal(t, payroll.RunDisbursing, claim.Status)
	require.Equal(t, 4, claim.EntriesClaimed)
	require.Equal(t, 1, claim.PaidWithout)
	require.Equal(t, 1, claim.FailedUnsent)
	require.ElementsMatch(t, []payroll.DisburseItem{
		{EntryID: es[a].ID, ToAccount: "1000123456789", AmountSantim: es[a].NetSantim},
		{EntryID: es[b].ID, ToAccount: "1000123456789", AmountSantim: es[b].NetSantim}}, claim.Items)
	es = entriesOf(t, o, run.ID)
	require.Equal(t, payroll.EntryPaid, es[zero].Status)
	require.Equal(t, payroll.EntryFailed, es[elsewhere].Status)
	require.Equal(t, payroll.FailurePayoutOtherPartner, es[elsewhere].FailureReason)
	require.Equal(t, payroll.EntryDisbursing, es[a].Status)
	require.Equal(t, 1, es[a].Attempts)

	// The same saga claims again: the same items, nothing written; another saga is refused.
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		again, err := payroll.ClaimDisbursement(ctx, tx, run.ID, wf, "cbe", runNow)
		require.NoError(t, err)
		require.ElementsMatch(t, claim.Items, again.Items)
		_, err = payroll.ClaimDisbursement(ctx, tx, run.ID, "payroll-disburse-other", "cbe", runNow)
		require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))
		return nil
	}))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_disbursing.v1'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.entry_paid.v1'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.entry_failed.v1'`))
	// payroll.bank_transfer_settled.v1: all of them, and those of one entry's settled transfer.
	settledEvents := func() int {
		return o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, payroll.EventBankTransferSettled)
	}
	settledOf := func(e payroll.Entry, transferID, ref string) int {
		return o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'domain' = 'PAYROLL' AND payload->>'kind' = 'entry'
			AND payload->>'subjectId' = $2 AND payload->>'entryId' = $2 AND payload->>'runId' = $3 AND (payload->>'amountSantim')::bigint = $4
			AND payload->>'transferId' = $5 AND payload->>'partnerReference' = $6`,
			payroll.EventBankTransferSettled, e.ID, run.ID, e.NetSantim, transferID, ref)
	}
	require.Zero(t, settledEvents(), "the net-0 entry was paid without a transfer")

	// The progress counts the two entries sent (the net-0 and the other partner's are not), here
	// in batches of one, as their outcomes are recorded.
	progress := func(batch int) payroll.DisbursementProgress {
		var p payroll.DisbursementProgress
		require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) (err error) {
			if p, err = payroll.ReadDisbursementProgress(ctx, tx, run.ID, batch); err != nil {
				return err
			}
			counts, err := payroll.EntryCounts(ctx, tx, run.ID)
			require.Equal(t, counts, p.Entries, "the entries counted in the same scan")
			return err
		}))
		p.Entries = nil
		return p
	}
	require.Equal(t, payroll.DisbursementProgress{Items: 2, Batches: 2}, progress(1))
	require.Equal(t, payroll.DisbursementProgress{Items: 2, Batches: 1}, progress(500))

	record := func(owner string, outs ...payroll.EntryOutcome) int {
		var n int
		require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) (err error) {
			n, err = payroll.RecordOutcomes(ctx, tx, owner, outs, runNow)
			return err
		}))
		return n
	}
	finish := func() payroll.Run {
		r, err := runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.FinishDisbursement(ctx, tx, run.ID, runNow)
		})
		require.NoError(t, err)
		return r
	}
	settled := payroll.EntryOutcome{EntryID: es[a].ID, Reference: "ref-a", TransferID: "tr-a", Status: "SETTLED"}
	failed := payroll.EntryOutcome{EntryID: es[b].ID, Reference: "ref-b", TransferID: "tr-b", Status: "FAILED", Code: "ACCOUNT_CLOSED"}
	require.Zero(t, record("payroll-disburse-other", settled), "another saga's outcome changes nothing")
	require.Equal(t, 1, record(wf, settled))
	// a's batch of one is done.
	require.Equal(t, payroll.DisbursementProgress{Items: 2, Batches: 2, BatchesDone: 1, Settled: 1, SettledSantim: es[a].NetSantim}, progress(1))
	require.Equal(t, payroll.DisbursementProgress{Items: 2, Batches: 1, Settled: 1, SettledSantim: es[a].NetSantim}, progress(500))
	require.Equal(t, payroll.RunDisbursing, finish().Status, "an entry is still DISBURSING")
	require.Equal(t, 1, record(wf, settled, failed), "the settled one was recorded already")
	require.Zero(t, record(wf, settled, failed), "recorded once")
	require.Equal(t, 1, settledEvents(), "one transfer settled, recorded once; none for the failed one")
	require.Equal(t, 1, settledOf(es[a], "tr-a", "ref-a"))
	es = entriesOf(t, o, run.ID)
	require.Equal(t, payroll.EntryPaid, es[a].Status)
	require.Equal(t, "ref-a", es[a].TransferReference)
	require.False(t, es[a].PaidAt.IsZero())
	require.Equal(t, payroll.EntryFailed, es[b].Status)
	require.Equal(t, "ACCOUNT_CLOSED", es[b].FailureReason)
	done := payroll.DisbursementProgress{Items: 2, Batches: 1, BatchesDone: 1, Settled: 1, Failed: 1, SettledSantim: es[a].NetSantim,
		FailedSantim: es[b].NetSantim}
	require.Equal(t, done, progress(500))
	require.Equal(t, payroll.RunDisbursed, finish().Status)
	require.Equal(t, payroll.RunDisbursed, finish().Status)
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_disbursed.v1'`))
	require.Equal(t, 2, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.entry_paid.v1'`))

	// Retries: a PAID entry is refused, the other-partner one too (its account is still there);
	// the FAILED one is claimed for attempt 2 under the retry's saga, whose outcome alone counts.
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ClaimRetry(ctx, tx, run.ID, es[a].ID, "retry-1", runNow)
		require.Equal(t, payroll.CodeEntryInvalidState, refusalCode(err))
		_, err = payroll.ClaimRetry(ctx, tx, run.ID, es[elsewhere].ID, "retry-1", runNow)
		require.Equal(t, payroll.CodeEntryInvalidState, refusalCode(err))
		_, err = payroll.ClaimRetry(ctx, tx, run.ID, "pent_nope", "retry-1", runNow)
		require.Equal(t, payroll.CodeEntryNotFound, refusalCode(err))
		c, err := payroll.ClaimRetry(ctx, tx, run.ID, es[b].ID, "retry-1", runNow)
		require.NoError(t, err)
		require.Equal(t, 2, c.Attempt)
		require.Equal(t, es[b].NetSantim, c.Item.AmountSantim)
		again, err := payroll.ClaimRetry(ctx, tx, run.ID, es[b].ID, "retry-1", runNow)
		require.NoError(t, err)
		require.Equal(t, c, again, "the same retry saga is answered the same")
		_, err = payroll.ClaimRetry(ctx, tx, run.ID, es[b].ID, "retry-2", runNow)
		require.Equal(t, payroll.CodeEntryInvalidState, refusalCode(err), "one retry at a time")
		return nil
	}))
	require.Equal(t, payroll.DisbursementProgress{Items: 2, Batches: 1, Settled: 1, SettledSantim: es[a].NetSantim}, progress(500),
		"the retried entry is being paid again: its batch is not done")
	begin := func() (payroll.Run, error) {
		return runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.BeginCompletion(ctx, tx, run.ID)
		})
	}
	_, err = begin()
	require.Equal(t, payroll.CodeEntriesUnsettled, refusalCode(err), "an entry being sent again holds the completion back")
	require.Zero(t, record(wf, payroll.EntryOutcome{EntryID: es[b].ID, Reference: "ref-b", Status: "SETTLED"}), "the first attempt's saga no longer owns it")
	require.Equal(t, 1, record("retry-1", payroll.EntryOutcome{EntryID: es[b].ID, Reference: "ref-b2", TransferID: "tr-b2", Status: "SETTLED"}))
	es = entriesOf(t, o, run.ID)
	require.Equal(t, payroll.EntryPaid, es[b].Status)
	require.Equal(t, "ref-b2", es[b].TransferReference)
	require.Equal(t, 2, settledEvents(), "the retry's transfer settled")
	require.Equal(t, 1, settledOf(es[b], "tr-b2", "ref-b2"))
	require.Equal(t, payroll.DisbursementProgress{Items: 2, Batches: 2, BatchesDone: 2, Settled: 2, SettledSantim: es[a].NetSantim + es[b].NetSantim},
		progress(1))
	require.Equal(t, payroll.RunDisbursed, finish().Status, "still DISBURSED, no second event")
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_disbursed.v1'`))

	// The settlement totals over the run.
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		tot, err := payroll.SettlementTotals(ctx, tx, run.ID)
		require.NoError(t, err)
		require.Equal(t, []payroll.StatusTotal{{Status: payroll.EntryApproved}, {Status: payroll.EntryDisbursing},
			{Status: payroll.EntryPaid, Entries: 3, NetSantim: es[a].NetSantim + es[b].NetSantim},
			{Status: payroll.EntryFailed, Entries: 1, NetSantim: es[elsewhere].NetSantim}}, tot)
		return nil
	}))

	// The completion begins: the run is marked once, and from then on no entry is sent again —
	// an entry paid while the completion reads the paid entries' lines would have its mandates
	// applied and its EWA, loan and product lines never repaid (found by an audit).
	began, err := begin()
	require.NoError(t, err)
	require.False(t, began.CompletingAt.IsZero())
	again, err := begin()
	require.NoError(t, err)
	require.True(t, began.CompletingAt.Equal(again.CompletingAt), "marked once")
	exec(t, o, `UPDATE app.employees SET payout_partner = 'sandbox' WHERE id = $1`, es[elsewhere].EmployeeID)
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ClaimRetry(ctx, tx, run.ID, es[elsewhere].ID, "retry-3", runNow)
		require.Equal(t, payroll.CodeRunCompleting, refusalCode(err))
		return nil
	}))
	require.Equal(t, payroll.EntryFailed, entriesOf(t, o, run.ID)[elsewhere].Status, "nothing claimed")
}

// A retry's saga that claimed an entry and sent nothing (its claim's answer lost, its fan-out
// refused) gives the entry back: FAILED with the reason (an entry_failed event), once, and only
// the saga that holds it can; another retry may then claim it. Without it the entry stayed
// DISBURSING under a saga that had ended, and the run could never complete (found by an audit).
func TestRetryReleaseGivesTheEntryBack(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	a := o.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	const maker, checker, wf = "u-maker", "u-checker", "payroll-disburse-r"

	run, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-11", runNow)
		if err != nil {
			return r, err
		}
		return payroll.CalculateRun(ctx, tx, r.ID, runNow)
	})
	require.NoError(t, err)
	_, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.NoError(t, err)
	entry := entriesOf(t, o, run.ID)[a]
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		if _, err := payroll.ChangeSettings(ctx, tx, payroll.LayerTenant, payroll.SettingsChange{PayrollAccount: payroll.Field[payroll.Account]{
			Set: true, Value: &payroll.Account{Partner: "cbe", AccountNumber: "2000000000001", HolderName: "Org Treasury"}}}); err != nil {
			return err
		}
		if _, err := payroll.ClaimDisbursement(ctx, tx, run.ID, wf, "cbe", runNow); err != nil {
			return err
		}
		if _, err := payroll.RecordOutcomes(ctx, tx, wf, []payroll.EntryOutcome{{EntryID: entry.ID, Reference: "ref-1", Status: "FAILED",
			Code: "ACCOUNT_CLOSED"}}, runNow); err != nil {
			return err
		}
		_, err := payroll.FinishDisbursement(ctx, tx, run.ID, runNow)
		return err
	}))
	release := func(saga string) int {
		var n int
		require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) (err error) {
			n, err = payroll.ReleaseRetry(ctx, tx, run.ID, entry.ID, saga, "UNANSWERED", runNow)
			return err
		}))
		return n
	}
	claim := func(saga string) (payroll.RetryClaim, error) {
		var c payroll.RetryClaim
		err := as(o, checker, func(ctx context.Context, tx db.BunTx) (err error) {
			c, err = payroll.ClaimRetry(ctx, tx, run.ID, entry.ID, saga, runNow)
			return err
		})
		return c, err
	}
	failedEvents := func() int {
		return o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.entry_failed.v1'`)
	}
	require.Equal(t, 1, failedEvents())

	require.Zero(t, release("retry-1"), "a FAILED entry no saga holds is left alone")
	c, err := claim("retry-1")
	require.NoError(t, err)
	require.Equal(t, 2, c.Attempt)
	require.Zero(t, release("retry-2"), "only the saga that holds the entry gives it back")
	require.Equal(t, payroll.EntryDisbursing, entriesOf(t, o, run.ID)[a].Status)

	require.Equal(t, 1, release("retry-1"))
	e := entriesOf(t, o, run.ID)[a]
	require.Equal(t, payroll.EntryFailed, e.Status)
	require.Equal(t, "UNANSWERED", e.FailureReason)
	require.Equal(t, 2, e.Attempts)
	require.Equal(t, 2, failedEvents())
	require.Zero(t, release("retry-1"), "released once")
	require.Equal(t, 2, failedEvents())

	// The entry is free: another retry claims it (attempt 3), and the first saga can no longer
	// release it.
	c, err = claim("retry-3")
	require.NoError(t, err)
	require.Equal(t, 3, c.Attempt)
	require.Zero(t, release("retry-1"))
	require.Equal(t, payroll.EntryDisbursing, entriesOf(t, o, run.ID)[a].Status)
}
