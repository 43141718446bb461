package ledger

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// headStart gives an account a history it did not have to post: as the owner, a checkpoint at
// sequence 0 holding the given posted totals, and the same running totals. It stands for the
// 100,000 postings of a whole transaction's maximum that an account needs to come near
// money.MaxAccountTotalSantim; everything posted after it goes the real way. (VerifyCheckpoints
// would name that checkpoint: no entry backs it.)
func headStart(t testing.TB, e *env, tenant, accountID string, debits, credits int64) {
	t.Helper()
	ctx := ctxT(t)
	owner, err := db.Open(ctx, e.db.OwnerDSN, 1)
	require.NoError(t, err)
	defer owner.Close()
	require.NoError(t, db.InTenantTx(ctx, owner, tenant, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO ledger.balance_checkpoints (tenant_id, account_id, currency, seq, entry_count,
				last_entry_at, posted_debits, posted_credits, pending_debits, pending_credits)
			VALUES ($1, $2::uuid, 'ETB', 0, 1, '2000-01-01Z', $3, $4, 0, 0)`, tenant, accountID, debits, credits); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ledger.account_totals (account_id, tenant_id, debits, credits) VALUES ($1::uuid, $2, $3, $4)
			ON CONFLICT (account_id) DO UPDATE SET debits = excluded.debits, credits = excluded.credits`, accountID, tenant, debits, credits)
		return err
	}))
}

// legs posts n entries of amount on debit and n on credit.
func legs(debit, credit string, n int, amount int64) []*ledgerv1.EntryInput {
	var out []*ledgerv1.EntryInput
	for range n {
		out = append(out, leg(debit, dr, amount), leg(credit, cr, amount))
	}
	return out
}

// TestHardening1_AmountBoundsRefused: an entry above money.MaxAmountSantim and a transaction
// whose debits exceed money.MaxTransactionSantim are refused by the validator (gRPC,
// AMOUNT_OUT_OF_RANGE) and, written around it, by the database; amounts at the bounds pass.
func TestHardening1_AmountBoundsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income")

	atMax, err := e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "max-entry",
		Entries: legs("payroll-clearing", "fee-income", 10, money.MaxAmountSantim)})
	require.NoError(t, err, "ten entries at the maximum make a transaction at the maximum")
	require.Len(t, atMax.GetTransaction().GetEntries(), 20)
	before := e.counts(t, tenant)

	for name, entries := range map[string][]*ledgerv1.EntryInput{
		"entry above the maximum":         legs("payroll-clearing", "fee-income", 1, money.MaxAmountSantim+1),
		"entry at MaxInt64":               legs("payroll-clearing", "fee-income", 1, math.MaxInt64),
		"transaction above the maximum":   legs("payroll-clearing", "fee-income", 11, money.MaxAmountSantim),
		"debits past the maximum, by one": append(legs("payroll-clearing", "fee-income", 10, money.MaxAmountSantim), leg("payroll-clearing", dr, 1), leg("fee-income", cr, 1)),
	} {
		_, err := e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "k-" + strings.ReplaceAll(name, " ", "-"), Entries: entries})
		requireReason(t, err, ReasonAmountOutOfRange)
		b, err := e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: []*ledgerv1.PostTransactionRequest{
			{IdempotencyKey: "b-" + strings.ReplaceAll(name, " ", "-"), Entries: entries}}})
		require.NoError(t, err)
		requireReason(t, ItemError(b.GetResults()[0]), ReasonAmountOutOfRange)
	}
	require.Equal(t, codes.InvalidArgument, ReasonAmountOutOfRange.Code())

	// The database refuses the same, whoever writes: raw SQL as the runtime role.
	constraint := func(err error) string {
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, pgerrcode.CheckViolation, pgErr.Code, "got %v", err)
		return pgErr.ConstraintName
	}
	insert := func(n int, amount int64) error {
		return db.InTenantTx(ctx, e.db.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `WITH t AS (
					INSERT INTO ledger.transactions (tenant_id, idempotency_key, request_hash, kind, status, currency)
					VALUES ($1, 'raw', decode(repeat('00', 32), 'hex'), 'STANDARD', 'POSTED', 'ETB') RETURNING id)
				INSERT INTO ledger.entries (tenant_id, transaction_id, account_id, currency, phase, direction, amount)
				SELECT $1, t.id, v.acc, 'ETB', 'POSTED', v.dir, $5::numeric
				FROM t, generate_series(1, $4::int) g, (VALUES ($2::uuid, 'DEBIT'), ($3::uuid, 'CREDIT')) AS v(acc, dir)`,
				tenant, ids["payroll-clearing"], ids["fee-income"], n, amount)
			return err
		})
	}
	entryErr := insert(1, money.MaxAmountSantim+1)
	require.Equal(t, "santim_max_check", constraint(entryErr))
	requireReason(t, storeErr("x", entryErr), ReasonAmountOutOfRange)
	txErr := insert(11, money.MaxAmountSantim)
	require.Equal(t, "entries_transaction_max", constraint(txErr))
	requireReason(t, storeErr("x", txErr), ReasonAmountOutOfRange)
	require.NoError(t, insert(10, money.MaxAmountSantim), "at the bound the database agrees with the validator")
	before.transactions++
	before.entries += 20

	// Bank statements are bounded alike: a line is an amount, a closing balance an account total.
	for _, a := range []*ledgerv1.BankStatementAccount{
		{Account: "1", Lines: []*ledgerv1.BankStatementLine{{Reference: "r", AmountSantim: math.MaxInt64}}},
		{Account: "1", Lines: []*ledgerv1.BankStatementLine{{Reference: "r", AmountSantim: math.MinInt64}}},
		{Account: "1", HasClosingBalance: true, ClosingBalanceSantim: math.MinInt64},
		{Account: "1", HasClosingBalance: true, ClosingBalanceSantim: money.MaxAccountTotalSantim + 1},
	} {
		_, err := e.client.ReconcileWithBank(ctx, &ledgerv1.ReconcileWithBankRequest{TenantId: tenant, Partner: "cbe", Accounts: []*ledgerv1.BankStatementAccount{a}})
		requireReason(t, err, ReasonAmountOutOfRange)
	}
	require.Equal(t, before, e.counts(t, tenant), "refused postings wrote nothing")
}

// TestHardening1_AccountLimitAtomicUnderConcurrency: postings that would take an account's
// debit total past money.MaxAccountTotalSantim are refused (ACCOUNT_LIMIT_EXCEEDED) in the
// database, atomically: of many concurrent postings exactly those that fit are written, and the
// account ends exactly at the bound, readable.
func TestHardening1_AccountLimitAtomicUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tenant := testkit.Unique("t")
	ids := e.ensure(t, tenant, "payroll-clearing", "fee-income", "misc-loss")
	const fit = 5
	headStart(t, e, tenant, ids["payroll-clearing"], money.MaxAccountTotalSantim-fit*money.MaxTransactionSantim, 0)

	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: fmt.Sprintf("c%d", i),
				Entries: legs("payroll-clearing", "fee-income", 10, money.MaxAmountSantim)})
		}()
	}
	wg.Wait()
	written := 0
	for _, err := range errs {
		if err == nil {
			written++
			continue
		}
		requireReason(t, err, ReasonAccountLimitExceeded)
	}
	require.Equal(t, fit, written, "exactly the postings that fit were written")
	require.Equal(t, codes.FailedPrecondition, ReasonAccountLimitExceeded.Code())

	b := e.balance(t, tenant, "payroll-clearing")
	require.Equal(t, money.MaxAccountTotalSantim, b.GetPostedDebitsSantim())
	require.Equal(t, money.MaxAccountTotalSantim, b.GetPostedSantim())
	// Full: one santim more is refused, a hold as well; money out of the account still moves
	// (its credit total has room).
	_, err := e.client.PostTransaction(ctx, twoLeg(tenant, "one-more", "payroll-clearing", "misc-loss", 1))
	requireReason(t, err, ReasonAccountLimitExceeded)
	hold := twoLeg(tenant, "hold", "payroll-clearing", "misc-loss", 1)
	hold.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	_, err = e.client.PostTransaction(ctx, hold)
	requireReason(t, err, ReasonAccountLimitExceeded)
	_, err = e.client.PostTransaction(ctx, twoLeg(tenant, "out", "misc-loss", "payroll-clearing", money.MaxAmountSantim))
	require.NoError(t, err)
	b = e.balance(t, tenant, "payroll-clearing")
	require.Equal(t, money.MaxAccountTotalSantim-money.MaxAmountSantim, b.GetPostedSantim())

	// In a batch the posting past the limit fails alone.
	br, err := e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: []*ledgerv1.PostTransactionRequest{
		{IdempotencyKey: "batch-full", Entries: legs("payroll-clearing", "misc-loss", 1, 1)},
		{IdempotencyKey: "batch-ok", Entries: legs("misc-loss", "fee-income", 1, 5)},
	}})
	require.NoError(t, err)
	requireReason(t, ItemError(br.GetResults()[0]), ReasonAccountLimitExceeded)
	require.NoError(t, ItemError(br.GetResults()[1]))
	require.Equal(t, int64(5), e.balance(t, tenant, "fee-income").GetPostedSantim()-fit*money.MaxTransactionSantim)
}

// boundModel is what the ledger should say about each account.
type boundModel struct {
	pd, pc, hd, hc int64
}

func (m boundModel) debits() int64  { return m.pd + m.hd }
func (m boundModel) credits() int64 { return m.pc + m.hc }

type boundTx struct {
	id, debit, credit string
	amount            int64
	status            Status
}

// TestHardening1_BalancesReadableNearBounds is a property test: from random head starts just
// below money.MaxAccountTotalSantim, it posts, holds, commits, voids and reverses amounts near
// money.MaxAmountSantim on the same few accounts until the ledger refuses, and after every step
// reads every balance (posted, pending, available, and as of an earlier step) and compares it
// with a model, exactly. A refused step must be ACCOUNT_LIMIT_EXCEEDED exactly when the model
// says a total would pass the bound, and change nothing. Cases are seeded (the seed is in the
// failure message); WAGERAIL_SOAK=1 runs ten times as many.
func TestHardening1_BalancesReadableNearBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.store.CheckpointEvery = 2 // checkpoints written by the database on the way, near the bound
	ctx := ctxT(t)
	cases := 6
	if os.Getenv("WAGERAIL_SOAK") != "" {
		cases = 60
	}
	const limit = money.MaxAccountTotalSantim
	refusals := 0
	for seed := range uint64(cases) {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		tenant := testkit.Unique("bound")
		names := []string{"payroll-clearing", "fee-income", "misc-loss"}
		ids := e.ensure(t, tenant, names...)
		model := map[string]*boundModel{}
		for _, n := range names {
			// within a few transactions' maximum of the bound, both sides
			d := limit - r.Int64N(4)*money.MaxTransactionSantim - r.Int64N(money.MaxAmountSantim)
			c := limit - r.Int64N(4)*money.MaxTransactionSantim - r.Int64N(money.MaxAmountSantim)
			headStart(t, e, tenant, ids[n], d, c)
			model[n] = &boundModel{pd: d, pc: c}
		}
		type snapshot struct {
			at    time.Time
			model map[string]boundModel
		}
		var snaps []snapshot
		var txs []*boundTx
		amount := func() int64 {
			switch r.IntN(3) {
			case 0:
				return money.MaxAmountSantim
			case 1:
				return money.MaxAmountSantim - r.Int64N(1000)
			}
			return 1 + r.Int64N(money.MaxAmountSantim)
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d: %s", seed, fmt.Sprintf(format, args...))
		}
		check := func() {
			for _, n := range names {
				got := e.balance(t, tenant, n)
				w := model[n]
				want := Balance{NormalSide: dirFromPB(got.GetNormalSide()), PostedDebitsSantim: w.pd, PostedCreditsSantim: w.pc,
					PendingDebitsSantim: w.hd, PendingCreditsSantim: w.hc}
				if got.GetPostedDebitsSantim() != w.pd || got.GetPostedCreditsSantim() != w.pc || got.GetPendingDebitsSantim() != w.hd ||
					got.GetPendingCreditsSantim() != w.hc || got.GetPostedSantim() != want.PostedSantim() ||
					got.GetPendingSantim() != want.PendingSantim() || got.GetAvailableSantim() != want.AvailableSantim() {
					fail("balance of %s: got %+v, model %+v", n, got, *w)
				}
			}
			if len(snaps) > 0 {
				s := snaps[r.IntN(len(snaps))]
				for _, n := range names {
					res, err := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: n, AsOf: timestamppb.New(s.at)})
					if err != nil {
						fail("balance of %s as of %s: %v", n, s.at, err)
					}
					got, w := res.GetBalance(), s.model[n]
					if got.GetPostedDebitsSantim() != w.pd || got.GetPostedCreditsSantim() != w.pc || got.GetPendingDebitsSantim() != w.hd || got.GetPendingCreditsSantim() != w.hc {
						fail("balance of %s as of %s: got %+v, model %+v", n, s.at, got, w)
					}
				}
			}
			snap := snapshot{at: time.Now(), model: map[string]boundModel{}}
			for _, n := range names {
				snap.model[n] = *model[n]
			}
			snaps = append(snaps, snap)
		}
		// expect compares the outcome of a step with the model's verdict.
		expect := func(err error, fits bool, what string) bool {
			if fits {
				if err != nil {
					fail("%s: %v", what, err)
				}
				return true
			}
			if !IsReason(err, ReasonAccountLimitExceeded) {
				fail("%s: want ACCOUNT_LIMIT_EXCEEDED, got %v", what, err)
			}
			refusals++
			return false
		}
		refused := false
		for step := 0; step < 40 && !(refused && step >= 12); step++ {
			switch k := r.IntN(6); {
			case k <= 2: // post or hold, n entries of an amount near the maximum on each side
				i := r.IntN(len(names))
				debit, credit := names[i], names[(i+1+r.IntN(len(names)-1))%len(names)]
				n, a := 1+r.IntN(10), amount()
				total := int64(n) * a
				req := &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: fmt.Sprintf("p%d", step), Entries: legs(debit, credit, n, a)}
				pending := k == 2
				if pending {
					req.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
				}
				fits := model[debit].debits() <= limit-total && model[credit].credits() <= limit-total
				res, err := e.client.PostTransaction(ctx, req)
				if !expect(err, fits, fmt.Sprintf("post %d on %s/%s", total, debit, credit)) {
					refused = true
					break
				}
				tx := &boundTx{id: res.GetTransaction().GetId(), debit: debit, credit: credit, amount: total, status: Posted}
				if pending {
					tx.status = Pending
					model[debit].hd += total
					model[credit].hc += total
				} else {
					model[debit].pd += total
					model[credit].pc += total
				}
				txs = append(txs, tx)
			case k == 3 || k == 4: // commit or void an open hold: never refused, totals do not grow
				var open []*boundTx
				for _, tx := range txs {
					if tx.status == Pending {
						open = append(open, tx)
					}
				}
				if len(open) == 0 {
					continue
				}
				tx := open[r.IntN(len(open))]
				var err error
				if k == 3 {
					_, err = e.client.CommitPending(ctx, &ledgerv1.CommitPendingRequest{TenantId: tenant, TransactionId: tx.id})
				} else {
					_, err = e.client.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: tenant, TransactionId: tx.id, Reason: "bounds"})
				}
				expect(err, true, "settle")
				model[tx.debit].hd -= tx.amount
				model[tx.credit].hc -= tx.amount
				if k == 3 {
					tx.status = Posted
					model[tx.debit].pd += tx.amount
					model[tx.credit].pc += tx.amount
				} else {
					tx.status = Voided
				}
			default: // reverse a posting: a new posting the other way, bounded like any
				var posted []*boundTx
				for _, tx := range txs {
					if tx.status == Posted {
						posted = append(posted, tx)
					}
				}
				if len(posted) == 0 {
					continue
				}
				tx := posted[r.IntN(len(posted))]
				fits := model[tx.debit].credits() <= limit-tx.amount && model[tx.credit].debits() <= limit-tx.amount
				_, err := e.client.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: tenant, TransactionId: tx.id, Reason: "bounds", IdempotencyKey: fmt.Sprintf("r%d", step)})
				if !expect(err, fits, "reverse") {
					refused = true
					break
				}
				tx.status = Reversed
				model[tx.debit].pc += tx.amount
				model[tx.credit].pd += tx.amount
			}
			check()
		}
		// Until refused: the maximum transaction, again and again, onto the fullest debit side.
		for !refused {
			full := names[0]
			for _, n := range names {
				if model[n].debits() > model[full].debits() {
					full = n
				}
			}
			other := names[0]
			if other == full {
				other = names[1]
			}
			fits := model[full].debits() <= limit-money.MaxTransactionSantim && model[other].credits() <= limit-money.MaxTransactionSantim
			_, err := e.client.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: fmt.Sprintf("fill%d", len(snaps)),
				Entries: legs(full, other, 10, money.MaxAmountSantim)})
			if expect(err, fits, "fill") {
				model[full].pd += money.MaxTransactionSantim
				model[other].pc += money.MaxTransactionSantim
			} else {
				refused = true
			}
			check()
		}
	}
	require.Positive(t, refusals)
	t.Logf("%d cases, %d refusals at the account bound", cases, refusals)
}
