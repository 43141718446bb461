package ledger

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestLedgerProperties drives the ledger through gRPC with random sequences of postings, holds,
// commits, voids, reversals, adjustments, batches, replays and refused requests, against a
// model. After every step: every derived balance equals the model's; per tenant the posted
// entries (and the open holds) sum to zero; every transaction balances per phase; every
// reversal nets its original to zero; statuses match; refused and replayed requests changed
// nothing. Each case uses its own tenant on one shared database, with a checkpoint written
// every other entry so balances are read through checkpoints constantly.
//
// 200 cases in a normal run (make test); WAGERAIL_SOAK=1 runs 5000 longer ones (-rapid.checks, which
// counts per half, and -rapid.steps override both).
func TestLedgerProperties(t *testing.T) {
	// The cases run in two halves side by side: each step waits on the database far more than
	// on the CPU.
	const parts = 2
	checks, steps := 200, 8
	if os.Getenv("WAGERAIL_SOAK") != "" {
		checks, steps = 5000, 40
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["rapid.checks"] {
		require.NoError(t, flag.Set("rapid.checks", strconv.Itoa(checks/parts)))
	}
	if !set["rapid.steps"] {
		require.NoError(t, flag.Set("rapid.steps", strconv.Itoa(steps)))
	}

	e := newEnv(t)
	e.store.CheckpointEvery = 2
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	t.Cleanup(cancel) // not defer: the halves run after this function returns
	var cases atomic.Int64
	t.Cleanup(func() { t.Logf("%d cases", cases.Load()) })
	for part := range parts {
		t.Run(fmt.Sprintf("part%d", part), func(t *testing.T) {
			t.Parallel()
			rapid.Check(t, func(rt *rapid.T) {
				cases.Add(1)
				m := &ledgerMachine{e: e, ctx: ctx, tenant: testkit.Unique("prop"), byID: map[string]*modelTx{}, keys: map[string]*modelKey{}}
				m.accounts = []string{"payroll-clearing", "receivable-from-employee:a", "payable-to-employee:b", "fee-income", "misc-loss"}
				m.ids = e.ensure(t, m.tenant, m.accounts...)
				rt.Repeat(rapid.StateMachineActions(m))
				v, err := e.client.VerifyCheckpoints(ctx, &ledgerv1.VerifyCheckpointsRequest{TenantId: m.tenant})
				if err != nil {
					rt.Fatalf("verify checkpoints: %v", err)
				}
				if len(v.GetMismatches()) > 0 {
					rt.Fatalf("checkpoints disagree with entries: %v", v.GetMismatches())
				}
			})
		})
	}
}

type modelLeg struct {
	account string
	dir     Direction
	amount  int64
}

type modelTx struct {
	id     string
	key    string
	status Status
	kind   Kind
	legs   []modelLeg
}

type modelKey struct {
	req  *ledgerv1.PostTransactionRequest
	txID string
}

type ledgerMachine struct {
	e        *env
	ctx      context.Context
	tenant   string
	accounts []string
	ids      map[string]string
	txs      []*modelTx
	byID     map[string]*modelTx
	keys     map[string]*modelKey
	n        int
}

func (m *ledgerMachine) nextKey() string {
	m.n++
	return fmt.Sprintf("k%d", m.n)
}

func (m *ledgerMachine) drawLegs(t *rapid.T) []modelLeg {
	var legs []modelLeg
	acc := rapid.SampledFrom(m.accounts)
	for range rapid.IntRange(1, 2).Draw(t, "pairs") {
		amount := rapid.Int64Range(1, 1_000_000_000).Draw(t, "amount")
		if rapid.Bool().Draw(t, "split") && amount > 1 {
			// one debit against two credits
			part := rapid.Int64Range(1, amount-1).Draw(t, "part")
			legs = append(legs, modelLeg{acc.Draw(t, "debit"), Debit, amount},
				modelLeg{acc.Draw(t, "credit"), Credit, part}, modelLeg{acc.Draw(t, "credit2"), Credit, amount - part})
			continue
		}
		legs = append(legs, modelLeg{acc.Draw(t, "debit"), Debit, amount}, modelLeg{acc.Draw(t, "credit"), Credit, amount})
	}
	// A transaction moves money between accounts (TestHardening2_OneAccountPostingRefused): when
	// every leg drew the same account, the last goes to the next account of the chart.
	if !slices.ContainsFunc(legs, func(l modelLeg) bool { return l.account != legs[0].account }) {
		i := slices.Index(m.accounts, legs[0].account)
		legs[len(legs)-1].account = m.accounts[(i+1)%len(m.accounts)]
	}
	return legs
}

func toInputs(legs []modelLeg) []*ledgerv1.EntryInput {
	out := make([]*ledgerv1.EntryInput, len(legs))
	for i, l := range legs {
		out[i] = &ledgerv1.EntryInput{AccountName: l.account, Direction: dirToPB[l.dir], AmountSantim: l.amount}
	}
	return out
}

func (m *ledgerMachine) add(tx *modelTx) {
	m.txs = append(m.txs, tx)
	m.byID[tx.id] = tx
}

func (m *ledgerMachine) counts(t *rapid.T) counts {
	c, err := m.e.countsErr(m.tenant)
	if err != nil {
		t.Fatalf("counts: %v", err)
	}
	return c
}

// expectUnchanged fails if the tenant's rows changed since before.
func (m *ledgerMachine) expectUnchanged(t *rapid.T, before counts, what string) {
	if after := m.counts(t); after != before {
		t.Fatalf("%s wrote something: %+v -> %+v", what, before, after)
	}
}

func expectReason(t *rapid.T, err error, r Reason) {
	if !IsReason(err, r) {
		t.Fatalf("want %s, got %v", r, err)
	}
}

func (m *ledgerMachine) Post(t *rapid.T) {
	legs := m.drawLegs(t)
	pending := rapid.Bool().Draw(t, "pending")
	req := &ledgerv1.PostTransactionRequest{TenantId: m.tenant, IdempotencyKey: m.nextKey(), Entries: toInputs(legs)}
	status := Posted
	if pending {
		req.Status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
		status = Pending
	}
	r, err := m.e.client.PostTransaction(m.ctx, req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	if r.GetReplayed() || statusFromPB(r.GetTransaction().GetStatus()) != status {
		t.Fatalf("post: replayed=%v status=%v", r.GetReplayed(), r.GetTransaction().GetStatus())
	}
	m.add(&modelTx{id: r.GetTransaction().GetId(), key: req.IdempotencyKey, status: status, kind: Standard, legs: legs})
	m.keys[req.IdempotencyKey] = &modelKey{req: req, txID: r.GetTransaction().GetId()}
}

func (m *ledgerMachine) pickKey(t *rapid.T) *modelKey {
	if len(m.keys) == 0 {
		t.Skip("no keys yet")
	}
	names := make([]string, 0, len(m.keys))
	for k := range m.keys {
		names = append(names, k)
	}
	// map order is random; sort for reproducible draws
	slices.Sort(names)
	return m.keys[rapid.SampledFrom(names).Draw(t, "key")]
}

func (m *ledgerMachine) Replay(t *rapid.T) {
	k := m.pickKey(t)
	before := m.counts(t)
	r, err := m.e.client.PostTransaction(m.ctx, k.req)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !r.GetReplayed() || r.GetTransaction().GetId() != k.txID {
		t.Fatalf("replay: got %s replayed=%v, want %s", r.GetTransaction().GetId(), r.GetReplayed(), k.txID)
	}
	m.expectUnchanged(t, before, "a replay")
}

func (m *ledgerMachine) Conflict(t *rapid.T) {
	k := m.pickKey(t)
	before := m.counts(t)
	req := &ledgerv1.PostTransactionRequest{TenantId: m.tenant, IdempotencyKey: k.req.IdempotencyKey, Status: k.req.Status, Entries: toInputs([]modelLeg{
		{m.accounts[0], Debit, 7}, {m.accounts[1], Credit, 7}})}
	if len(k.req.Entries) == 2 && k.req.Entries[0].AmountSantim == 7 {
		req.Entries[0].AmountSantim, req.Entries[1].AmountSantim = 8, 8
	}
	_, err := m.e.client.PostTransaction(m.ctx, req)
	expectReason(t, err, ReasonIdempotencyConflict)
	m.expectUnchanged(t, before, "a conflicting key")
}

func (m *ledgerMachine) pickTx(t *rapid.T) *modelTx {
	if len(m.txs) == 0 {
		t.Skip("no transactions yet")
	}
	return rapid.SampledFrom(m.txs).Draw(t, "tx")
}

func (m *ledgerMachine) Commit(t *rapid.T) {
	tx := m.pickTx(t)
	before := m.counts(t)
	_, err := m.e.client.CommitPending(m.ctx, &ledgerv1.CommitPendingRequest{TenantId: m.tenant, TransactionId: tx.id})
	switch tx.status {
	case Pending:
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
		tx.status = Posted
	case Voided:
		expectReason(t, err, ReasonAlreadyVoided)
		m.expectUnchanged(t, before, "a refused commit")
	default:
		expectReason(t, err, ReasonAlreadyPosted)
		m.expectUnchanged(t, before, "a refused commit")
	}
}

func (m *ledgerMachine) Void(t *rapid.T) {
	tx := m.pickTx(t)
	before := m.counts(t)
	_, err := m.e.client.VoidPending(m.ctx, &ledgerv1.VoidPendingRequest{TenantId: m.tenant, TransactionId: tx.id, Reason: "model"})
	switch tx.status {
	case Pending:
		if err != nil {
			t.Fatalf("void: %v", err)
		}
		tx.status = Voided
	case Voided:
		expectReason(t, err, ReasonAlreadyVoided)
		m.expectUnchanged(t, before, "a refused void")
	default:
		expectReason(t, err, ReasonAlreadyPosted)
		m.expectUnchanged(t, before, "a refused void")
	}
}

func (m *ledgerMachine) Reverse(t *rapid.T) {
	tx := m.pickTx(t)
	before := m.counts(t)
	key := m.nextKey()
	r, err := m.e.client.Reverse(m.ctx, &ledgerv1.ReverseRequest{TenantId: m.tenant, TransactionId: tx.id, Reason: "model", IdempotencyKey: key})
	switch {
	case tx.kind == ReversalKind:
		expectReason(t, err, ReasonNotReversible)
	case tx.status == Reversed:
		expectReason(t, err, ReasonAlreadyReversed)
	case tx.status != Posted:
		expectReason(t, err, ReasonNotPosted)
	default:
		if err != nil {
			t.Fatalf("reverse: %v", err)
		}
		tx.status = Reversed
		mirror := make([]modelLeg, len(tx.legs))
		for i, l := range tx.legs {
			mirror[i] = modelLeg{l.account, l.dir.Opposite(), l.amount}
		}
		m.add(&modelTx{id: r.GetReversal().GetId(), key: key, status: Posted, kind: ReversalKind, legs: mirror})
		return
	}
	m.expectUnchanged(t, before, "a refused reversal")
}

func (m *ledgerMachine) Adjust(t *rapid.T) {
	legs := m.drawLegs(t)
	req := &ledgerv1.PostAdjustmentRequest{TenantId: m.tenant, IdempotencyKey: m.nextKey(), Entries: toInputs(legs),
		Adjustment: &ledgerv1.Adjustment{Source: "dispute", Reason: "dsp_1:model", ApprovedBy: "admin", RequestedBy: "operator"}}
	before := m.counts(t)
	switch rapid.IntRange(0, 3).Draw(t, "signature") {
	case 0: // unsigned
		_, err := m.e.client.PostAdjustment(m.ctx, req)
		expectReason(t, err, ReasonSignatureMissing)
		m.expectUnchanged(t, before, "an unsigned adjustment")
	case 1: // forged
		SignAdjustmentRequest([]byte("a-key-that-is-not-the-ledgers-key-000"), req)
		_, err := m.e.client.PostAdjustment(m.ctx, req)
		expectReason(t, err, ReasonSignatureInvalid)
		m.expectUnchanged(t, before, "a forged adjustment")
	default:
		SignAdjustmentRequest(testAdjustmentKey, req)
		r, err := m.e.client.PostAdjustment(m.ctx, req)
		if err != nil {
			t.Fatalf("adjust: %v", err)
		}
		m.add(&modelTx{id: r.GetTransaction().GetId(), key: req.IdempotencyKey, status: Posted, kind: AdjustmentKind, legs: legs})
	}
}

func (m *ledgerMachine) Batch(t *rapid.T) {
	n := rapid.IntRange(1, 4).Draw(t, "batch")
	bad := rapid.IntRange(-1, n-1).Draw(t, "bad") // index of an unbalanced item, -1 for none
	var reqs []*ledgerv1.PostTransactionRequest
	var legsOf [][]modelLeg
	for i := range n {
		legs := m.drawLegs(t)
		req := &ledgerv1.PostTransactionRequest{IdempotencyKey: m.nextKey(), Entries: toInputs(legs)}
		if i == bad {
			req.Entries[0].AmountSantim++
		}
		reqs, legsOf = append(reqs, req), append(legsOf, legs)
	}
	r, err := m.e.client.PostTransactions(m.ctx, &ledgerv1.PostTransactionsRequest{TenantId: m.tenant, Transactions: reqs})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	for i, res := range r.GetResults() {
		if i == bad {
			expectReason(t, ItemError(res), ReasonUnbalanced)
			continue
		}
		if err := ItemError(res); err != nil {
			t.Fatalf("batch item %d: %v", i, err)
		}
		reqs[i].TenantId = m.tenant
		m.add(&modelTx{id: res.GetTransaction().GetId(), key: reqs[i].IdempotencyKey, status: Posted, kind: Standard, legs: legsOf[i]})
		m.keys[reqs[i].IdempotencyKey] = &modelKey{req: reqs[i], txID: res.GetTransaction().GetId()}
	}
}

func (m *ledgerMachine) BadPost(t *rapid.T) {
	before := m.counts(t)
	legs := m.drawLegs(t)
	req := &ledgerv1.PostTransactionRequest{TenantId: m.tenant, IdempotencyKey: m.nextKey(), Entries: toInputs(legs)}
	var want Reason
	switch rapid.IntRange(0, 3).Draw(t, "defect") {
	case 0:
		req.Entries[0].AmountSantim++
		want = ReasonUnbalanced
	case 1:
		req.Entries[1].AccountName = "receivable-from-employee:nobody"
		want = ReasonAccountNotFound
	case 2:
		req.Entries = req.Entries[:1]
		want = ReasonTooFewEntries
	default:
		req.Entries[0].AmountSantim = -req.Entries[0].AmountSantim
		want = ReasonInvalidAmount
	}
	_, err := m.e.client.PostTransaction(m.ctx, req)
	expectReason(t, err, want)
	m.expectUnchanged(t, before, "a refused posting")
}

// Check runs after every action.
func (m *ledgerMachine) Check(t *rapid.T) {
	type sums struct{ pd, pc, hd, hc int64 }
	want := map[string]*sums{}
	for _, a := range m.accounts {
		want[a] = &sums{}
	}
	statuses := map[string]Status{}
	for _, tx := range m.txs {
		statuses[tx.id] = tx.status
		for _, l := range tx.legs {
			s := want[l.account]
			switch {
			case tx.status == Posted || tx.status == Reversed:
				if l.dir == Debit {
					s.pd += l.amount
				} else {
					s.pc += l.amount
				}
			case tx.status == Pending:
				if l.dir == Debit {
					s.hd += l.amount
				} else {
					s.hc += l.amount
				}
			}
		}
	}
	// Every account's balance, read by GetBalance and, all at once, by GetBalances (by id and by
	// name in turn): the two agree, and GetBalance agrees with the model.
	many := &ledgerv1.GetBalancesRequest{TenantId: m.tenant}
	for i, a := range m.accounts {
		if i%2 == 0 {
			many.Accounts = append(many.Accounts, &ledgerv1.AccountRef{AccountName: a})
		} else {
			many.Accounts = append(many.Accounts, &ledgerv1.AccountRef{AccountId: m.ids[a]})
		}
	}
	all, err := m.e.client.GetBalances(m.ctx, many)
	if err != nil {
		t.Fatalf("balances: %v", err)
	}
	for i, a := range m.accounts {
		r, err := m.e.client.GetBalance(m.ctx, &ledgerv1.GetBalanceRequest{TenantId: m.tenant, AccountName: a})
		if err != nil {
			t.Fatalf("balance %s: %v", a, err)
		}
		b, w := r.GetBalance(), want[a]
		if c := all.GetResults()[i].GetBalance(); c == nil || c.GetPostedDebitsSantim() != b.GetPostedDebitsSantim() ||
			c.GetPostedCreditsSantim() != b.GetPostedCreditsSantim() || c.GetPendingDebitsSantim() != b.GetPendingDebitsSantim() ||
			c.GetPendingCreditsSantim() != b.GetPendingCreditsSantim() || c.GetAvailableSantim() != b.GetAvailableSantim() ||
			c.GetLastSeq() != b.GetLastSeq() || c.GetAccountId() != b.GetAccountId() {
			t.Fatalf("balance of %s: GetBalance %v, GetBalances %v", a, b, all.GetResults()[i])
		}
		got := sums{b.GetPostedDebitsSantim(), b.GetPostedCreditsSantim(), b.GetPendingDebitsSantim(), b.GetPendingCreditsSantim()}
		if got != *w {
			t.Fatalf("balance of %s: got %+v, model %+v", a, got, *w)
		}
		bal := Balance{NormalSide: dirFromPB(b.GetNormalSide()), PostedDebitsSantim: got.pd, PostedCreditsSantim: got.pc,
			PendingDebitsSantim: got.hd, PendingCreditsSantim: got.hc}
		if b.GetPostedSantim() != bal.PostedSantim() || b.GetAvailableSantim() != bal.AvailableSantim() || b.GetPendingSantim() != bal.PendingSantim() {
			t.Fatalf("derived figures of %s inconsistent: %+v", a, b)
		}
	}
	var postedSum, holdSum int64
	var unbalanced, badReversals int
	dbStatus := map[string]Status{}
	err = asTenant(m.e.db.App, m.tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT
			coalesce(sum(CASE WHEN direction = 'DEBIT' THEN amount ELSE -amount END) FILTER (WHERE phase = 'POSTED'), 0)::bigint,
			coalesce(sum(CASE WHEN direction = 'DEBIT' THEN amount ELSE -amount END * CASE WHEN phase = 'HOLD' THEN 1 ELSE -1 END)
				FILTER (WHERE phase <> 'POSTED'), 0)::bigint,
			(SELECT count(*) FROM (SELECT 1 FROM ledger.entries GROUP BY transaction_id, phase
				HAVING sum(CASE WHEN direction = 'DEBIT' THEN amount ELSE -amount END) <> 0) u),
			(SELECT count(*) FROM ledger.transactions r WHERE r.kind = 'REVERSAL' AND EXISTS (
				SELECT 1 FROM ledger.entries e WHERE e.transaction_id IN (r.id, r.reverses_id) AND e.phase = 'POSTED'
				GROUP BY e.account_id HAVING sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) <> 0))
			FROM ledger.entries`).QueryRow(func(r pgx.Row) error { return r.Scan(&postedSum, &holdSum, &unbalanced, &badReversals) })
		b.Queue(`SELECT id::text, status FROM ledger.transactions`).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var id string
				var st Status
				if err := rows.Scan(&id, &st); err != nil {
					return err
				}
				dbStatus[id] = st
			}
			return rows.Err()
		})
	})
	if err != nil {
		t.Fatalf("invariants: %v", err)
	}
	if postedSum != 0 || holdSum != 0 {
		t.Fatalf("posted entries sum to %d, open holds to %d (want 0)", postedSum, holdSum)
	}
	if unbalanced != 0 {
		t.Fatalf("%d transaction phases are unbalanced", unbalanced)
	}
	if badReversals != 0 {
		t.Fatalf("%d reversals do not net their original to zero", badReversals)
	}
	if len(dbStatus) != len(statuses) {
		t.Fatalf("database has %d transactions, model %d", len(dbStatus), len(statuses))
	}
	for id, st := range statuses {
		if dbStatus[id] != st {
			t.Fatalf("transaction %s: database %s, model %s", id, dbStatus[id], st)
		}
	}
}
