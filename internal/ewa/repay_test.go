package ewa_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// repayWorld is one organization on a fresh database, with its EWA settings (a fee, so principal
// + fee is what is owed) and a way to make disbursed requests.
type repayWorld struct {
	t      testing.TB
	d      *testkit.DB
	pool   *pgxpool.Pool
	tenant string
	ctx    context.Context
	n      atomic.Int64
}

func newRepayWorld(t testing.TB) *repayWorld {
	d := testkit.NewDB(t)
	w := &repayWorld{t: t, d: d, pool: d.App, tenant: orgs.NewOrganizationID()}
	w.ctx = tenancy.With(context.Background(), tenancy.Scope{TenantID: w.tenant, Actor: tenancy.System("repay-test")})
	w.in(func(tx pgx.Tx) error {
		if _, _, err := orgs.Create(w.ctx, tx, orgs.NewOrganization{ID: w.tenant, Name: "Biz", Kind: orgs.Business}, ""); err != nil {
			return err
		}
		_, err := ewa.PutSettings(w.ctx, tx, w.tenant, ewa.Settings{AccessCapPercent: 100, FeeFlatSantim: 50, FeeBasisPoints: 100})
		return err
	})
	return w
}

func (w *repayWorld) in(fn func(tx pgx.Tx) error) {
	w.t.Helper()
	require.NoError(w.t, tenancy.InTx(w.ctx, w.pool, fn))
}

// disbursed is a new employee's DISBURSED request of principal santim.
func (w *repayWorld) disbursed(principal int64) ewa.Request {
	w.t.Helper()
	n := w.n.Add(1)
	var r ewa.Request
	w.in(func(tx pgx.Tx) error {
		e, err := employees.Create(w.ctx, tx, w.tenant, employees.Employee{FirstName: "Abebe", LastName: "Kebede",
			NationalID: fmt.Sprintf("ET%08d", n), HireDate: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
			GrossMonthlySalarySantim: 1_000_000_00,
			Payout:                   employees.PayoutAccount{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"}})
		if err != nil {
			return err
		}
		if r, err = ewa.Create(w.ctx, tx, w.tenant, e.ID, principal, time.Now()); err != nil {
			return err
		}
		wf := "wf-disburse-" + r.ID
		if _, err := ewa.Claim(w.ctx, tx, r.ID, wf); err != nil {
			return err
		}
		if err := ewa.SetLedgerTx(w.ctx, tx, r.ID, wf, "ltx-"+r.ID); err != nil {
			return err
		}
		r, err = ewa.MarkDisbursed(w.ctx, tx, r.ID, wf, "tr-"+r.ID, "")
		return err
	})
	require.Equal(w.t, ewa.Disbursed, r.Status)
	return r
}

// repay runs one repayment saga's record steps in their own transactions: reserve, then (unless
// release) complete with a journal id, or release. It returns the request after it, or the
// reservation's refusal.
func (w *repayWorld) repay(req ewa.Request, wf string, amount int64, release bool) (ewa.Request, error) {
	ask := ewa.RepaymentAsk{RequestID: req.ID, WorkflowID: wf, AmountSantim: amount, Source: ewa.SourcePayroll}
	var refusal error
	var res ewa.Reservation
	err := tenancy.InTx(w.ctx, w.pool, func(tx pgx.Tx) error {
		var err error
		res, err = ewa.ReserveRepayment(w.ctx, tx, ask)
		if errors.Is(err, ewa.ErrExceedsOutstanding) || errors.Is(err, ewa.ErrNotDisbursed) {
			refusal = err // the DENIED audit row commits
			return nil
		}
		return err
	})
	if err != nil || refusal != nil {
		return ewa.Request{}, errors.Join(err, refusal)
	}
	if res.Replay {
		// The request was repaid whole by one repayment of this amount and source: the ask is
		// answered as that one, nothing reserved, nothing to complete.
		return res.Request, nil
	}
	var out ewa.Request
	err = tenancy.InTx(w.ctx, w.pool, func(tx pgx.Tx) error {
		if release {
			_, err := ewa.FailRepayment(w.ctx, tx, wf, "UNBALANCED")
			if err == nil {
				out, err = ewa.Get(w.ctx, tx, w.tenant, req.ID)
			}
			return err
		}
		var err error
		out, _, err = ewa.CompleteRepayment(w.ctx, tx, wf, "ltx-"+wf)
		return err
	})
	return out, err
}

func (w *repayWorld) get(id string) (r ewa.Request, ps []ewa.Repayment) {
	w.t.Helper()
	w.in(func(tx pgx.Tx) error {
		var err error
		if r, err = ewa.Get(w.ctx, tx, w.tenant, id); err != nil {
			return err
		}
		ps, err = ewa.Repayments(w.ctx, tx, id)
		return err
	})
	return r, ps
}

func (w *repayWorld) count(sql string, args ...any) int {
	w.t.Helper()
	var n int
	w.in(func(tx pgx.Tx) error { return tx.QueryRow(w.ctx, sql, args...).Scan(&n) })
	return n
}

// TestRepaymentsProperty: any sequence of repayments (some more than is owed, some released by a
// ledger refusal) against a model of what is owed. A repayment is accepted exactly when it is at
// most what is still owed; the request's repaid sum is the sum of the accepted ones and never
// passes principal + fee; it is REPAID exactly when the sum covers principal + fee; each accepted
// repayment has the next ledger key.
func TestRepaymentsProperty(t *testing.T) {
	w := newRepayWorld(t)
	rapid.Check(t, func(rt *rapid.T) {
		req := w.disbursed(rapid.Int64Range(1, 50_000).Draw(rt, "principal"))
		total := req.PrincipalSantim + req.FeeSantim
		var sum int64
		var seq, postedN int
		steps := rapid.IntRange(1, 8).Draw(rt, "steps")
		for i := range steps {
			owed := total - sum
			var amount int64
			switch rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("kind%d", i)) {
			case 0: // exactly what is owed
				amount = max(owed, 1)
			case 1: // more than is owed
				amount = owed + rapid.Int64Range(1, 1_000).Draw(rt, fmt.Sprintf("over%d", i))
			default: // a part
				amount = rapid.Int64Range(1, max(owed, 1)).Draw(rt, fmt.Sprintf("part%d", i))
			}
			release := rapid.IntRange(0, 5).Draw(rt, fmt.Sprintf("release%d", i)) == 0
			wf := fmt.Sprintf("wf-%s-%d", req.ID, i)
			got, err := w.repay(req, wf, amount, release)
			switch {
			case owed == 0 && postedN == 1 && amount == total:
				// ReserveRepayment's replay rule: the request was repaid whole by one repayment of
				// this amount from this source, so the ask is that one again, answered as it was.
				require.NoError(rt, err)
				require.Equal(rt, sum, got.RepaidAmountSantim)
			case owed == 0:
				require.ErrorIs(rt, err, ewa.ErrNotDisbursed, "a REPAID request takes no more")
			case amount > owed:
				var over *ewa.OverpaymentError
				require.ErrorAs(rt, err, &over)
				require.Equal(rt, owed, over.OutstandingSantim)
			default:
				require.NoError(rt, err)
				seq++
				if !release {
					sum += amount
					postedN++
				}
				require.Equal(rt, sum, got.RepaidAmountSantim)
			}
		}
		r, ps := w.get(req.ID)
		require.Equal(rt, sum, r.RepaidAmountSantim)
		require.LessOrEqual(rt, r.RepaidAmountSantim, total)
		require.Equal(rt, sum == total, r.Status == ewa.Repaid, "REPAID exactly when covered")
		require.Len(rt, ps, seq)
		var posted int64
		for i, p := range ps {
			require.Equal(rt, i+1, p.Seq)
			require.Equal(rt, ewa.RepaymentLedgerKey(req.ID, i+1), p.LedgerKey)
			require.NotEqual(rt, ewa.RepaymentPending, p.Status, "every reservation was completed or released")
			if p.Status == ewa.RepaymentPosted {
				posted += p.AmountSantim
			}
		}
		require.Equal(rt, sum, posted)
	})
}

// TestRacingRepaymentsCannotOverpay: sixteen sagas (different keys) repay the same request at
// once, each with a fifth of it plus one santim: exactly four fit, the others are refused as
// overpayments, and the repaid sum never passes principal + fee.
func TestRacingRepaymentsCannotOverpay(t *testing.T) {
	w := newRepayWorld(t)
	req := w.disbursed(99_950) // fee 50 + 999 = 1,049: total 100,999
	total := req.PrincipalSantim + req.FeeSantim
	part := total/5 + 1
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = w.repay(req, fmt.Sprintf("wf-race-%d", i), part, false) })
	}
	wg.Wait()
	var ok int
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		require.ErrorIs(t, err, ewa.ErrExceedsOutstanding)
	}
	require.Equal(t, 4, ok)
	r, ps := w.get(req.ID)
	require.Equal(t, 4*part, r.RepaidAmountSantim)
	require.Equal(t, ewa.Disbursed, r.Status, "4 × (total/5 + 1) < total")
	require.Len(t, ps, 4)
	require.Equal(t, n-4, w.count(`SELECT count(*) FROM app.audit_log WHERE action = 'RecordEwaRepayment' AND outcome = 'DENIED'`))
	require.Equal(t, 4, w.count(`SELECT count(*) FROM app.outbox WHERE type = 'ewa.repayment_recorded.v1'`))

	// The rest, in one repayment, completes it.
	r, err := w.repay(req, "wf-race-last", total-4*part, false)
	require.NoError(t, err)
	require.Equal(t, ewa.Repaid, r.Status)
	require.Equal(t, 1, w.count(`SELECT count(*) FROM app.outbox WHERE type = 'ewa.repaid.v1' AND payload->>'requestId' = $1`, req.ID))
}

// TestRepaymentStepsIdempotent: each step repeats safely for its saga; a saga's key cannot be
// reused for another repayment; the database refuses a sum over principal + fee whatever the
// code does.
func TestRepaymentStepsIdempotent(t *testing.T) {
	w := newRepayWorld(t)
	req := w.disbursed(10_000)
	total := req.PrincipalSantim + req.FeeSantim
	ask := ewa.RepaymentAsk{RequestID: req.ID, WorkflowID: "wf-1", AmountSantim: 4_000, Source: ewa.SourceEmployer}
	var first, again ewa.Reservation
	w.in(func(tx pgx.Tx) error {
		var err error
		first, err = ewa.ReserveRepayment(w.ctx, tx, ask)
		return err
	})
	w.in(func(tx pgx.Tx) error {
		var err error
		again, err = ewa.ReserveRepayment(w.ctx, tx, ask)
		return err
	})
	require.Equal(t, first.Repayment, again.Repayment, "the same reservation")
	require.Equal(t, "ewa-repay:"+req.ID, first.Repayment.LedgerKey, "the first repayment keeps the whole repayment's key")
	other := ask
	other.AmountSantim = 5_000
	require.NoError(t, tenancy.InTx(w.ctx, w.pool, func(tx pgx.Tx) error {
		_, err := ewa.ReserveRepayment(w.ctx, tx, other)
		require.ErrorIs(t, err, ewa.ErrInvalid, "one saga, one repayment")
		return nil
	}))
	var r1, r2 ewa.Request
	w.in(func(tx pgx.Tx) error {
		var err error
		r1, _, err = ewa.CompleteRepayment(w.ctx, tx, "wf-1", "ltx-a")
		return err
	})
	w.in(func(tx pgx.Tx) error {
		var err error
		r2, _, err = ewa.CompleteRepayment(w.ctx, tx, "wf-1", "ltx-a")
		return err
	})
	require.Equal(t, r1, r2)
	require.EqualValues(t, 4_000, r1.RepaidAmountSantim)
	require.Equal(t, ewa.Disbursed, r1.Status)
	require.NoError(t, tenancy.InTx(w.ctx, w.pool, func(tx pgx.Tx) error {
		_, _, err := ewa.CompleteRepayment(w.ctx, tx, "wf-1", "ltx-b")
		require.ErrorIs(t, err, ewa.ErrInvalidState, "posted with another journal")
		_, err = ewa.FailRepayment(w.ctx, tx, "wf-1", "late")
		require.ErrorIs(t, err, ewa.ErrInvalidState, "a posted repayment is not released")
		return nil
	}))
	require.Equal(t, 1, w.count(`SELECT count(*) FROM app.outbox WHERE type = 'ewa.repayment_recorded.v1'`))

	err := tenancy.InTx(w.ctx, w.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(w.ctx, `UPDATE app.ewa_requests SET repaid_amount_santim = $2 WHERE id = $1`, req.ID, total+1)
		return err
	})
	require.ErrorContains(t, err, "ewa_requests_repaid_within_total")
	err = tenancy.InTx(w.ctx, w.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(w.ctx, `UPDATE app.ewa_requests SET status = 'REPAID', repaid_at = now() WHERE id = $1`, req.ID)
		return err
	})
	require.ErrorContains(t, err, "ewa_requests_repaid_when_covered", "REPAID only when covered")
}
