package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/sandbox"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// walletTransferWorld is the EWA stack (real Postgres, Temporal, ledger, gateway and bank sandbox
// over HTTP with its callbacks) with the organization's wallet pool set and funded at the
// sandbox, a destination account, and the employee's login linked.
type walletTransferWorld struct {
	*ewaStack
	me   *apiClient
	pool string
	dest string
}

const walletDestHolder = "Tigist Alemu"

func newWalletTransferWorld(t *testing.T, kyc bool, o ewaStackOpts) *walletTransferWorld {
	s := newEwaStack(t, o)
	if kyc {
		s.approveKyc(t)
	}
	w := &walletTransferWorld{ewaStack: s, pool: testkit.Unique("wpool"), dest: testkit.Unique("wdest")}
	s.bank.Account(t, w.pool, "Org Wallet Pool", 5_000_000)
	s.bank.Account(t, w.dest, walletDestHolder, 0)
	rec := s.owner.call(http.MethodPut, "/api/wallet/settings", map[string]any{
		"poolAccount": map[string]any{"partner": "sandbox", "accountNumber": w.pool}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w.me = s.linkEmployeeUser(t, testkit.Unique("holder")+"@wallet.test")
	return w
}

// fund credits the employee's wallet with amount held in the pool (POSTED Dr the pool's mirror /
// Cr payable-to-employee:<employee>): what a payout into the wallet leaves in the ledger.
func (w *walletTransferWorld) fund(t *testing.T, amount int64) {
	t.Helper()
	_, err := w.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{
		TenantId: w.tenant, IdempotencyKey: testkit.Unique("wallet-fund"), Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: wallet.Account(w.employee), Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amount},
			{AccountName: chart.PartnerBankAccount("sandbox", w.pool), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amount},
		}})
	require.NoError(t, err)
}

func (w *walletTransferWorld) transfer(key string, amount int64, dest map[string]any) *httptest.ResponseRecorder {
	return w.me.call(http.MethodPost, "/api/wallet/transfer", map[string]any{"amountSantim": amount, "destination": dest}, "Idempotency-Key", key)
}

func (w *walletTransferWorld) destination(account, holder string) map[string]any {
	return map[string]any{"partner": "sandbox", "accountNumber": account, "holderName": holder}
}

func (w *walletTransferWorld) balance(t *testing.T) walletBalanceJSON {
	t.Helper()
	rec := w.me.call(http.MethodGet, "/api/me/wallet/balance", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[walletBalanceJSON](t, rec)
}

// waitPosted waits until the wallet's posted balance is posted and nothing is in flight.
func (w *walletTransferWorld) waitPosted(t *testing.T, posted int64) walletBalanceJSON {
	t.Helper()
	var b walletBalanceJSON
	require.Eventually(t, func() bool {
		b = w.balance(t)
		return b.PostedSantim == posted && b.PendingOutSantim == 0 && b.PendingInSantim == 0
	}, 60*time.Second, 100*time.Millisecond, "want %d posted, nothing pending", posted)
	return b
}

func (w *walletTransferWorld) result(t *testing.T, id string) workflows.WalletTransferResult {
	t.Helper()
	var res workflows.WalletTransferResult
	require.NoError(t, w.tc.GetWorkflow(context.Background(), id, "").Get(context.Background(), &res))
	return res
}

func (w *walletTransferWorld) bankBalance(t *testing.T, account string) int64 {
	t.Helper()
	var a sandbox.OperatorAccount
	w.bank.Bank(t, http.MethodGet, "/api/v1/sandbox/accounts/"+account, nil, http.StatusOK, &a)
	return a.BalanceSantim
}

// nothingMoved: no transfer recorded, no ledger transaction besides the funding ones, no partner
// transfer, no wallet.transfer_* event.
func (w *walletTransferWorld) requireNothingMoved(t *testing.T, fundings int) {
	t.Helper()
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1`, w.tenant))
	require.Equal(t, fundings, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant))
	require.Zero(t, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant))
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type LIKE 'wallet.transfer%'`, w.tenant))
}

// TestWalletPoolNotChangedWhileItHoldsMoney: every wallet transfer pays from the pool account
// set, so another account is refused 409 WALLET_POOL_IN_USE (details: what the pool's ledger
// mirror holds) while it holds wallet money, nothing changed (found by an audit: transfers then
// paid out of the new account, the wallets' money left at the old); the same account again is
// fine; before any money is there the account may change.
func TestWalletPoolNotChangedWhileItHoldsMoney(t *testing.T) {
	t.Parallel()
	w := newWalletTransferWorld(t, true, ewaStackOpts{})
	other := testkit.Unique("wpool2")
	w.bank.Account(t, other, "Org Wallet Pool Two", 0)
	put := func(account string) *httptest.ResponseRecorder {
		return w.owner.call(http.MethodPut, "/api/wallet/settings", map[string]any{
			"poolAccount": map[string]any{"partner": "sandbox", "accountNumber": account}})
	}
	// Nothing held yet: the pool may move (and back).
	require.Equal(t, http.StatusOK, put(other).Code)
	require.Equal(t, http.StatusOK, put(w.pool).Code)

	w.fund(t, 10_000)
	details := refused(t, put(other), http.StatusConflict, "WALLET_POOL_IN_USE")
	require.EqualValues(t, 10_000, details["postedSantim"])
	require.Equal(t, http.StatusOK, put(w.pool).Code, "the same account again")
	rec := w.owner.call(http.MethodGet, "/api/wallet/settings", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), w.pool, "nothing changed")
	require.NotContains(t, rec.Body.String(), other)
}

// TestWalletPoolChangeWaitsForAReservation: a pool change is decided under the settings row's
// lock that a transfer's reservation holds while it places its hold at the pool
// (wallet.CheckPool). Here the pool is empty when the change is asked, and a movement at it is
// being placed (the test holds the share lock as the reservation would): the change waits, sees
// the movement once the lock is let go, and is refused 409 WALLET_POOL_IN_USE, nothing changed
// (before, the ledger was asked first and the change stored after, over the movement). And a
// reservation planned at the old pool after a change is refused WALLET_POOL_CHANGED: nothing
// posted, nothing recorded.
func TestWalletPoolChangeWaitsForAReservation(t *testing.T) {
	t.Parallel()
	w := newWalletTransferWorld(t, false, ewaStackOpts{})
	other := testkit.Unique("wpool2")
	w.bank.Account(t, other, "Org Wallet Pool Two", 0)
	put := func(account string) *httptest.ResponseRecorder {
		return w.owner.call(http.MethodPut, "/api/wallet/settings", map[string]any{
			"poolAccount": map[string]any{"partner": "sandbox", "accountNumber": account}})
	}

	ctx := context.Background()
	hold := holdRowLock(t, w.d.Name, `SELECT 1 FROM app.wallet_settings WHERE tenant_id = $1 FOR SHARE`, w.tenant)
	var wg sync.WaitGroup
	var changed *httptest.ResponseRecorder
	wg.Go(func() { changed = put(other) })
	require.Eventually(t, func() bool { return hold.waiting() == 1 }, 30*time.Second, 20*time.Millisecond,
		"the change waits on the settings row")
	// The reservation places its movement at the pool, then lets the lock go.
	_, err := w.ledger.PostCreatingAccounts(ctx, &ledgerv1.PostTransactionRequest{
		TenantId: w.tenant, IdempotencyKey: testkit.Unique("wallet-in"), Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: wallet.Account(w.employee), Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 7_000},
			{AccountName: chart.PartnerBankAccount("sandbox", w.pool), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 7_000},
		}})
	require.NoError(t, err)
	require.NoError(t, hold.Commit(ctx))
	wg.Wait()
	details := refused(t, changed, http.StatusConflict, "WALLET_POOL_IN_USE")
	require.EqualValues(t, 7_000, details["pendingDebitsSantim"])
	rec := w.owner.call(http.MethodGet, "/api/wallet/settings", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), w.pool, "nothing changed")
	require.NotContains(t, rec.Body.String(), other)

	// A reservation planned at another pool than the one set: refused, nothing moved.
	act := &activities.Wallet{DB: w.d.App, Ledger: w.ledger}
	plan := wallet.Plan{EmployeeID: w.employee, AmountSantim: 1_000, Pool: wallet.BankAccount{Partner: "sandbox", AccountNumber: other},
		Destination: wallet.BankAccount{Partner: "sandbox", AccountNumber: w.dest, HolderName: walletDestHolder}}
	run := activities.Run{TenantID: w.tenant, WorkflowID: testkit.Unique("wallet-transfer")}
	_, err = act.Reserve(ctx, activities.WalletReserveInput{Run: run, Plan: plan, ActorID: "user-test", Posting: activities.LedgerPostInput{
		Run: run, IdempotencyKey: "wallet-transfer:" + run.WorkflowID, Step: "wallet-transfer",
		Legs: []activities.LedgerLeg{
			{Account: plan.WalletAccount(), Direction: "DEBIT", AmountSantim: plan.AmountSantim},
			{Account: plan.Pool.Mirror(), Direction: "CREDIT", AmountSantim: plan.AmountSantim},
		}}})
	require.Equal(t, wallet.CodePoolChanged, activities.ErrorType(err), "%v", err)
	require.Zero(t, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant), "only the movement")
}

// TestWalletTransferEndToEnd: over HTTP on the real stack, the wallet holder pays 4,000 of a
// 10,000 wallet to an account at the sandbox: the partner moves it (pool −4,000, destination
// +4,000), the ledger holds exactly the transfer's journal (Dr payable-to-employee / Cr the pool's
// mirror, bank_reference the leg reference), the wallet reads 6,000, one transfer row SETTLED, one
// wallet.transfer_initiated.v1 and one wallet.transfer_settled.v1 with their audit rows; the same
// key again answers the stored result and moves nothing more; more than the wallet holds, the
// edge's bad input and the destinations the settings cannot pay are refused with nothing moved;
// a transfer the bank refuses ends FAILED with its hold voided (nothing posted, the amount
// available again); a destination whose holder name differs, or whose holder is sanctioned, is
// refused by its gate; another organization's caller never reaches this wallet.
func TestWalletTransferEndToEnd(t *testing.T) {
	t.Parallel()
	w := newWalletTransferWorld(t, true, ewaStackOpts{sagaWait: 2 * time.Minute})
	w.fund(t, 10_000)
	require.Equal(t, int64(10_000), w.balance(t).AvailableSantim)

	key := testkit.Unique("wt")
	rec := w.transfer(key, 4_000, w.destination(w.dest, walletDestHolder))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[walletTransferJSON](t, rec)
	require.Contains(t, []string{"DISBURSING", "SETTLED"}, acc.Status)
	require.Equal(t, w.employee, acc.EmployeeID)
	got := w.waitPosted(t, 6_000)
	require.Equal(t, int64(6_000), got.AvailableSantim)
	res := w.result(t, acc.WorkflowID)
	require.Equal(t, "SETTLED", res.Status)

	tx, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant, IdempotencyKey: "wallet-transfer:" + acc.WorkflowID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{"D payable-to-employee:" + w.employee + " 4000", "C partner-bank:sandbox:" + w.pool + " 4000"}, entryLines(tx.GetTransaction()))
	require.Equal(t, acc.WorkflowID+".wallet-transfer.1", tx.GetTransaction().GetMetadata()["bank_reference"])
	require.Equal(t, int64(5_000_000-4_000), w.bankBalance(t, w.pool))
	require.Equal(t, int64(4_000), w.bankBalance(t, w.dest))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1 AND status = 'SETTLED' AND amount_santim = 4000 AND transfer_id IS NOT NULL`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'wallet.transfer_initiated.v1'`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'wallet.transfer_settled.v1' AND payload->>'employeeId' = $2`, w.tenant, w.employee))
	// Beside it, the spec's wallet.bank_transfer_settled.v1: one, of the amount, about the transfer row.
	settled := []settledTransfer{{Kind: "transfer", SubjectID: w.transferRecordID(t, acc.WorkflowID), AmountSantim: 4_000}}
	require.Equal(t, settled, settledTransfers(t, w.d, w.tenant, wallet.EventBankTransferSettled))
	require.Equal(t, 1, w.auditRows(t, "WalletTransfer"))
	require.Equal(t, 1, w.auditRows(t, "WalletTransferSettled"))
	testkit.RecordHistory(t, w.tc, acc.WorkflowID, "", "../workflows/testdata/wallet_transfer_history.json")

	// The same key again: the stored answer, one transfer, one partner transfer.
	again := w.transfer(key, 4_000, w.destination(w.dest, walletDestHolder))
	require.Equal(t, rec.Body.String(), again.Body.String())
	require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1`, w.tenant))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant))
	// The same key with another body is not a second transfer.
	requireStatus(t, w.transfer(key, 4_001, w.destination(w.dest, walletDestHolder)), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")

	ledgerTxs := w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant)
	unchanged := func() {
		t.Helper()
		require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1`, w.tenant))
		require.Equal(t, ledgerTxs, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant))
		require.Equal(t, 1, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant))
	}

	// More than the wallet holds: refused under the wallet's lock, nothing posted.
	requireStatus(t, w.transfer(testkit.Unique("wt"), 6_001, w.destination(w.dest, walletDestHolder)), http.StatusConflict, "WALLET_INSUFFICIENT_BALANCE")
	unchanged()

	// Bad input at the edge (the schema says each rule): 400, nothing written.
	for _, body := range []map[string]any{
		{"amountSantim": 0, "destination": w.destination(w.dest, walletDestHolder)},
		{"amountSantim": -1, "destination": w.destination(w.dest, walletDestHolder)},
		{"amountSantim": 100_000_000_001, "destination": w.destination(w.dest, walletDestHolder)},
		{"amountSantim": int64(9_223_372_036_854_775_807), "destination": w.destination(w.dest, walletDestHolder)},
		{"amountSantim": 100},
		{"amountSantim": 100, "destination": w.destination("has space", walletDestHolder)},
		{"amountSantim": 100, "destination": w.destination(w.dest, " ")},
		{"amountSantim": 100, "destination": w.destination(w.dest, "Tigist\u200bAlemu")},
		{"amountSantim": 100, "destination": map[string]any{"partner": "sandbox", "accountNumber": w.dest}},
		{"amountSantim": 100, "destination": w.destination(w.dest, walletDestHolder), "employeeId": "emp_other"},
	} {
		requireStatus(t, w.me.hostile(http.MethodPost, "/api/wallet/transfer", body, "Idempotency-Key", testkit.Unique("bad")), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.me.hostile(http.MethodPost, "/api/wallet/transfer", map[string]any{"amountSantim": 100, "destination": w.destination(w.dest, walletDestHolder)}),
		http.StatusBadRequest, "IDEMPOTENCY_KEY_REQUIRED")
	// Destinations the settings cannot pay.
	requireStatus(t, w.transfer(testkit.Unique("wt"), 100, map[string]any{"partner": "otherbank", "accountNumber": w.dest, "holderName": walletDestHolder}),
		http.StatusConflict, "WALLET_DESTINATION_PARTNER_UNSUPPORTED")
	requireStatus(t, w.transfer(testkit.Unique("wt"), 100, w.destination(w.pool, "Org Wallet Pool")), http.StatusConflict, "WALLET_DESTINATION_IS_POOL")
	unchanged()

	// The destination's holder is not the name given: the account gate refuses, one audit row.
	requireStatus(t, w.transfer(testkit.Unique("wt"), 100, w.destination(w.dest, "Abebe Kebede")), http.StatusConflict, "ACCOUNT_MISMATCH")
	require.Equal(t, 1, w.auditRows(t, "AccountLookupGateBlocked"))
	// An account the partner does not have.
	requireStatus(t, w.transfer(testkit.Unique("wt"), 100, w.destination(testkit.Unique("nosuch"), walletDestHolder)), http.StatusConflict, "WALLET_DESTINATION_ACCOUNT_INVALID")
	unchanged()

	// The bank refuses the transfer: FAILED, the hold voided, the wallet whole again.
	frozen := testkit.Unique("wfrozen")
	w.bank.Account(t, frozen, walletDestHolder, 0)
	w.bank.Fault(t, frozen, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
	rec = w.transfer(testkit.Unique("wt"), 1_500, w.destination(frozen, walletDestHolder))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	failed := decode[walletTransferJSON](t, rec)
	fres := w.result(t, failed.WorkflowID)
	require.Equal(t, "FAILED", fres.Status)
	ftx, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant, IdempotencyKey: "wallet-transfer:" + failed.WorkflowID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, ftx.GetTransaction().GetStatus())
	b := w.waitPosted(t, 6_000)
	require.Equal(t, int64(6_000), b.AvailableSantim)
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1 AND workflow_id = $2 AND status = 'FAILED'`, w.tenant, failed.WorkflowID))
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'wallet.transfer_failed.v1'`, w.tenant))
	require.Equal(t, settled, settledTransfers(t, w.d, w.tenant, wallet.EventBankTransferSettled), "the FAILED transfer settled nothing")
	require.Equal(t, 1, w.auditRows(t, "WalletTransferFailed"))
	require.Equal(t, int64(5_000_000-4_000), w.bankBalance(t, w.pool))
	require.Zero(t, w.bankBalance(t, frozen))

	// Another organization's caller has no wallet here: 404, and the wallet is not theirs to read.
	requireStatus(t, w.other.call(http.MethodPost, "/api/wallet/transfer", map[string]any{"amountSantim": 100, "destination": w.destination(w.dest, walletDestHolder)},
		"Idempotency-Key", testkit.Unique("x")), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, w.other.call(http.MethodGet, "/api/wallet/balance?employeeId="+w.employee, nil), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	requireStatus(t, w.owner.call(http.MethodPost, "/api/wallet/transfer", map[string]any{"amountSantim": 100, "destination": w.destination(w.dest, walletDestHolder)},
		"Idempotency-Key", testkit.Unique("x")), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")

	// The counterparty is listed: its screening refuses with one audit row, nothing moved.
	listed := "Dawit Listedname Haile"
	ctx := tenancy.WithActor(context.Background(), "system:test")
	_, err = sanctions.Ingest(ctx, w.d.Platform(t), sanctions.National, sanctions.IngestOptions{},
		sanctions.File{Name: "national.csv", Data: []byte("name,aliases,dob,reference\n" + listed + ",,1980-01-01,ETH-NAT-77\n")})
	require.NoError(t, err)
	_, err = sanctions.Rescreen(ctx, w.d.Platform(t))
	require.NoError(t, err)
	sanctioned := testkit.Unique("wsanc")
	w.bank.Account(t, sanctioned, listed, 0)
	before := w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant)
	requireStatus(t, w.transfer(testkit.Unique("wt"), 100, w.destination(sanctioned, listed)), http.StatusUnprocessableEntity, "WALLET_COUNTERPARTY_SANCTIONS_BLOCKED")
	require.Equal(t, 1, w.auditRows(t, "CounterpartySanctionsGateBlocked"))
	require.Equal(t, before, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant))
	require.Equal(t, 2, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant), "the settled and the refused transfer only")
}

// TestWalletTransferNeedsKyc: a holder without approved KYC is refused 422 WALLET_KYC_NOT_APPROVED
// by the saga's first gate: one audit row, no transfer recorded, no ledger posting besides the
// funding, no partner call, no event.
func TestWalletTransferNeedsKyc(t *testing.T) {
	t.Parallel()
	w := newWalletTransferWorld(t, false, ewaStackOpts{sagaWait: 2 * time.Minute})
	w.fund(t, 10_000)
	requireStatus(t, w.transfer(testkit.Unique("wt"), 1_000, w.destination(w.dest, walletDestHolder)), http.StatusUnprocessableEntity, "WALLET_KYC_NOT_APPROVED")
	require.Equal(t, 1, w.auditRows(t, "KycGateBlocked"))
	w.requireNothingMoved(t, 1)
	require.Equal(t, int64(10_000), w.balance(t).AvailableSantim)
}

// TestWalletTransferRacingNeverOverdraws: 20 transfers of 700 race against a wallet holding
// 10,000: exactly 14 are answered 202 (reserved) and 6 are 409 WALLET_INSUFFICIENT_BALANCE; in the
// end 14 sagas settled (9,800), 6 were refused with nothing moved, and the wallet holds 200: it
// never went below zero.
func TestWalletTransferRacingNeverOverdraws(t *testing.T) {
	t.Parallel()
	w := newWalletTransferWorld(t, true, ewaStackOpts{sagaWait: 3 * time.Minute})
	w.fund(t, 10_000)

	const n = 20
	racers, keys := make([]*racer, n), make([]string, n)
	for i := range racers {
		keys[i] = testkit.Unique("race")
		racers[i] = w.me.racer(http.MethodPost, "/api/wallet/transfer",
			map[string]any{"amountSantim": 700, "destination": w.destination(w.dest, walletDestHolder)}, "Idempotency-Key", keys[i])
	}
	var wg sync.WaitGroup
	for _, r := range racers {
		wg.Add(1)
		go func() { defer wg.Done(); r.serve() }()
	}
	wg.Wait()
	outcomes, answers := map[string]int{}, map[int]int{}
	for i, r := range racers {
		a := r.answer()
		answers[a.Code]++
		switch a.Code {
		case http.StatusAccepted:
			require.NotEqual(t, "FAILED", decode[walletTransferJSON](t, a).Status, a.Body.String())
		case http.StatusConflict:
			require.Equal(t, "WALLET_INSUFFICIENT_BALANCE", errCode(a), a.Body.String())
		default:
			t.Fatalf("transfer %d: %d %s", i, a.Code, a.Body.String())
		}
		res := w.result(t, idempotency.WorkflowID(w.tenant, "POST /api/wallet/transfer", keys[i]))
		outcomes[res.Status+" "+res.Code]++
	}
	require.Equal(t, map[int]int{http.StatusAccepted: 14, http.StatusConflict: 6}, answers)
	require.Equal(t, map[string]int{"SETTLED ": 14, "REFUSED WALLET_INSUFFICIENT_BALANCE": 6}, outcomes)
	final := w.waitPosted(t, 200)
	require.Equal(t, int64(200), final.AvailableSantim)
	require.Equal(t, 14, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1 AND status = 'SETTLED'`, w.tenant))
	require.Equal(t, 14, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'wallet.transfer_settled.v1'`, w.tenant))
	require.Equal(t, 14, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = $2 AND payload->>'amountSantim' = '700'`,
		w.tenant, wallet.EventBankTransferSettled), "one per settled transfer")
	require.Equal(t, 14, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = $2`, w.tenant, wallet.EventBankTransferSettled))
	require.Equal(t, int64(9_800), w.bankBalance(t, w.dest))
}

// transferRecordID is the id of the transfer row saga run wfID recorded.
func (w *walletTransferWorld) transferRecordID(t *testing.T, wfID string) string {
	return tenantString(t, w.d, w.tenant, `SELECT id FROM app.wallet_transfers WHERE workflow_id = $1`, wfID)
}

// FuzzWalletTransferRoutes: whatever reaches the wallet transfer and settings routes (any body,
// header and query, from the linked employee, the owner, another business's owner or nobody)
// answers 4xx or success, never 5xx. (The transfer is sent without an Idempotency-Key, or with a
// body refused at the edge or by the pre-check — this world has no pool set — before any saga
// starts: no worker runs here.)
func FuzzWalletTransferRoutes(f *testing.F) {
	w := newWalletWorld(f)
	me := w.linkEmployeeUser(f, "fuzz-wallet-transfer-me@example.com")
	routes := w.srv.walletTransferRoutes()
	f.Add(uint8(0), uint8(1), "", "", "")
	f.Add(uint8(1), uint8(1), "", "", `{"poolAccount":{"partner":"sandbox","accountNumber":"\u0000"}}`)
	f.Add(uint8(1), uint8(2), "", "", `{"poolAccount":{"partner":"nobank","accountNumber":"1"}}`)
	f.Add(uint8(2), uint8(0), "", "", `{"amountSantim":100,"destination":{"partner":"sandbox","accountNumber":"1","holderName":"A B"}}`)
	f.Add(uint8(2), uint8(0), "k1", "", `{"amountSantim":0,"destination":{"partner":"sandbox","accountNumber":"1","holderName":"A B"}}`)
	f.Add(uint8(2), uint8(0), "k2", "", `{"amountSantim":9223372036854775807,"destination":{"partner":"sandbox","accountNumber":"1","holderName":"A"}}`)
	f.Add(uint8(2), uint8(0), "k3", "", `{"amountSantim":1e400,"destination":{}}`)
	f.Add(uint8(2), uint8(0), "k4", "", `{"amountSantim":1,"destination":{"partner":"sandbox","accountNumber":"1","holderName":"\u200b"}}`)
	f.Add(uint8(2), uint8(1), "k5", "", `{"amountSantim":1,"destination":{"partner":"sandbox","accountNumber":"1","holderName":"A"}}`)
	f.Add(uint8(2), uint8(3), "", "x=1", `[]`)
	f.Fuzz(func(t *testing.T, route, who uint8, key, query, body string) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = r.Path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		req.RemoteAddr = "192.0.2.85:40000"
		switch who % 4 {
		case 0:
			req.AddCookie(me.cookie)
		case 1:
			req.AddCookie(w.owner.cookie)
		case 2:
			req.AddCookie(w.other.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		if rec.Code == http.StatusServiceUnavailable && errCode(rec) == "NOT_CONFIGURED" {
			return // a body the saga would judge, in a world without Temporal: not an answer to the input
		}
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q %q", r.Method, r.Path, key, query, body))
	})
}
