package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	"github.com/wagerail/wagerail/sandbox/sandboxtest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func requireErrType(t *testing.T, err error, typ string, nonRetryable bool) {
	t.Helper()
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, typ, ae.Type(), "%v", err)
	require.Equal(t, nonRetryable, ae.NonRetryable(), "%v", err)
}

func disburseLegs(employee, funding string) []LedgerLeg {
	return []LedgerLeg{
		{Account: "receivable-from-employee:" + employee, Direction: "DEBIT", AmountSantim: 101_500},
		{Account: "partner-bank:sandbox:" + funding, Direction: "CREDIT", AmountSantim: 100_000},
		{Account: "fee-income", Direction: "CREDIT", AmountSantim: 1_500},
	}
}

func TestMoneyLedgerAgainstTheLedger(t *testing.T) {
	d := testkit.NewDB(t)
	led := ledger.NewClient(ledgertest.Serve(t, d.App, nil), ledger.ClientOptions{})
	m := &Money{Ledger: led}
	ctx := context.Background()
	tenant, employee, funding := testkit.Unique("tenant"), testkit.Unique("emp"), testkit.Unique("FUND")
	in := LedgerPostInput{Run: Run{TenantID: tenant, WorkflowID: "wf-1", CorrelationID: "req-1"}, IdempotencyKey: "ewa-disburse:wf-1", Step: "disburse",
		Legs: disburseLegs(employee, funding), Metadata: map[string]string{"ewaRequestId": "r1"}}

	// Pending (the accounts are created on first use); a retry returns the same transaction.
	first, err := m.LedgerPostPending(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "PENDING", first.Status)
	require.False(t, first.Replayed)
	again, err := m.LedgerPostPending(ctx, in)
	require.NoError(t, err)
	require.Equal(t, LedgerPostResult{TxID: first.TxID, Status: "PENDING", Replayed: true}, again)

	// Commit, twice: the second is the first's answer lost, and succeeds.
	settle := LedgerSettleInput{Run: Run{TenantID: tenant, WorkflowID: "wf-1", CorrelationID: "req-1"}, TxID: first.TxID}
	require.NoError(t, m.LedgerCommit(ctx, settle))
	require.NoError(t, m.LedgerCommit(ctx, settle))
	tx, err := led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: first.TxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.Equal(t, "wf-1", tx.GetTransaction().GetLineage().GetWorkflowId())
	// Money that moved is never voided.
	requireErrType(t, m.LedgerVoid(ctx, settle), string(ledger.ReasonAlreadyPosted), true)

	// Void, twice.
	in2 := in
	in2.WorkflowID, in2.IdempotencyKey = "wf-2", "ewa-disburse:wf-2"
	second, err := m.LedgerPostPending(ctx, in2)
	require.NoError(t, err)
	void := LedgerSettleInput{Run: Run{TenantID: tenant, WorkflowID: "wf-2"}, TxID: second.TxID, Reason: "ACCOUNT_CLOSED"}
	require.NoError(t, m.LedgerVoid(ctx, void))
	require.NoError(t, m.LedgerVoid(ctx, void))
	requireErrType(t, m.LedgerCommit(ctx, void), string(ledger.ReasonAlreadyVoided), true)
	tx, err = led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: second.TxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, tx.GetTransaction().GetStatus())

	// Void by the posting's key (a step whose answer was lost): the hold under it, twice; no
	// transaction under a key voids the key, and a posting under it that arrives after (a step's
	// attempt still on its way) is refused, for good.
	in4 := in
	in4.WorkflowID, in4.IdempotencyKey = "wf-4", "ewa-disburse:wf-4"
	fourth, err := m.LedgerPostPending(ctx, in4)
	require.NoError(t, err)
	byKey := LedgerSettleInput{Run: Run{TenantID: tenant, WorkflowID: "wf-4"}, IdempotencyKey: in4.IdempotencyKey, Reason: "UNANSWERED"}
	require.NoError(t, m.LedgerVoid(ctx, byKey))
	require.NoError(t, m.LedgerVoid(ctx, byKey))
	tx, err = led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: fourth.TxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, tx.GetTransaction().GetStatus())
	require.NoError(t, m.LedgerVoid(ctx, LedgerSettleInput{Run: Run{TenantID: tenant, WorkflowID: "wf-5"}, IdempotencyKey: "ewa-disburse:wf-5"}))
	late := in
	late.WorkflowID, late.IdempotencyKey = "wf-5", "ewa-disburse:wf-5"
	_, err = m.LedgerPostPending(ctx, late)
	requireErrType(t, err, string(ledger.ReasonKeyVoided), true)
	require.NoError(t, m.LedgerVoid(ctx, LedgerSettleInput{Run: Run{TenantID: tenant, WorkflowID: "wf-5"}, IdempotencyKey: "ewa-disburse:wf-5"}))

	// Posted at once (the repayment journal's shape).
	repay := LedgerPostInput{Run: Run{TenantID: tenant, WorkflowID: "wf-3"}, IdempotencyKey: "ewa-repay:r1", Step: "repay", Legs: []LedgerLeg{
		{Account: "payroll-clearing", Direction: "DEBIT", AmountSantim: 101_500},
		{Account: "receivable-from-employee:" + employee, Direction: "CREDIT", AmountSantim: 101_500}}}
	posted, err := m.LedgerPost(ctx, repay)
	require.NoError(t, err)
	require.Equal(t, "POSTED", posted.Status)
	bal, err := led.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "receivable-from-employee:" + employee})
	require.NoError(t, err)
	require.Equal(t, int64(0), bal.GetBalance().GetPostedSantim(), "advanced 1,015 ETB, repaid 1,015 ETB; the voided one never counted")
	require.Equal(t, int64(0), bal.GetBalance().GetPendingSantim(), "no hold left open")

	// Refusals are not retried: same key with another body, an unbalanced posting, a bad leg.
	conflict := in
	conflict.Legs = disburseLegs(employee, testkit.Unique("OTHER"))
	_, err = m.LedgerPostPending(ctx, conflict)
	requireErrType(t, err, string(ledger.ReasonIdempotencyConflict), true)
	unbalanced := in
	unbalanced.IdempotencyKey, unbalanced.Legs = "k-unbalanced", unbalanced.Legs[:2]
	_, err = m.LedgerPostPending(ctx, unbalanced)
	requireErrType(t, err, string(ledger.ReasonUnbalanced), true)
	badLeg := in
	badLeg.IdempotencyKey, badLeg.Legs = "k-bad", []LedgerLeg{{Account: "fee-income", Direction: "SIDEWAYS", AmountSantim: 1}}
	_, err = m.LedgerPostPending(ctx, badLeg)
	requireErrType(t, err, ErrTypeInvalidArgument, true)

	// The ledger unreachable: retryable.
	down, err := ledger.Dial("127.0.0.1:1", ledger.ClientOptions{Timeout: time.Second})
	require.NoError(t, err)
	defer down.Close()
	_, err = (&Money{Ledger: down}).LedgerPostPending(ctx, in)
	requireErrType(t, err, string(ledger.ReasonUnavailable), false)
	_, err = (&Money{}).LedgerPost(ctx, in)
	requireErrType(t, err, ErrTypeMisconfigured, true)
}

func TestMoneyTransfersAgainstGatewayAndSandbox(t *testing.T) {
	d := testkit.NewDB(t)
	sb := sandboxtest.Start(t, d.App, sandboxtest.Options{SettleDelay: 20 * time.Millisecond})
	gw := gatewaytest.Serve(t, d.App, sb.URL, gatewaytest.Options{Guard: func(c *gateway.GuardConfig) { c.RetryBackoff = 10 * time.Millisecond }})
	reg := prometheus.NewRegistry()
	m := &Money{Gateway: gw.Client, Metrics: NewSettlementPollMetrics(reg)}
	ctx := context.Background()
	funding, payout := testkit.Unique("FUND"), testkit.Unique("EMP")
	sb.Account(t, funding, "Employer PLC", 10_000_00)
	sb.Account(t, payout, "Almaz Tesfaye", 0)
	tin := func(ref string) TransferInput {
		return TransferInput{Run: Run{TenantID: "t1", WorkflowID: ref, CorrelationID: "req-1"}, Partner: "sandbox", Reference: ref,
			FromAccount: funding, ToAccount: payout, AmountSantim: 500_00, Domain: "EWA"}
	}
	sin := func(ref string) TransferStatusInput {
		return TransferStatusInput{Run: Run{TenantID: "t1", WorkflowID: ref}, Partner: "sandbox", Reference: ref}
	}
	polls := func(outcome string) float64 { return testutil.ToFloat64(m.Metrics.ticks.WithLabelValues(outcome)) }

	// Accepted, then the same reference again: the same transfer, never a second one.
	ref := testkit.Unique("idem-wf")
	res, err := m.InitiateTransfer(ctx, tin(ref))
	require.NoError(t, err)
	require.Equal(t, TransferAccepted, res.Outcome)
	require.NotEmpty(t, res.TransferID)
	again, err := m.InitiateTransfer(ctx, tin(ref))
	require.NoError(t, err)
	require.Equal(t, res.TransferID, again.TransferID)
	gw.WaitTransfer(t, ref, 2) // SETTLED
	st, err := m.TransferStatus(ctx, sin(ref))
	require.NoError(t, err)
	require.Equal(t, TransferStatusResult{Status: TransferSettled, TransferID: res.TransferID}, st)
	require.Equal(t, 1.0, polls(PollSettled))
	n := 0
	for _, tr := range sb.Transfers(t) {
		if tr.Reference == ref {
			n++
		}
	}
	require.Equal(t, 1, n, "one transfer at the partner")

	// Unknown reference: NOT_FOUND is a result.
	st, err = m.TransferStatus(ctx, sin(testkit.Unique("idem-none")))
	require.NoError(t, err)
	require.Equal(t, TransferNotFound, st.Status)
	require.Equal(t, 1.0, polls(PollNotFound))

	// Rejected: a result, no money moved.
	sb.Fault(t, payout, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
	rej, err := m.InitiateTransfer(ctx, tin(testkit.Unique("idem-rej")))
	require.NoError(t, err)
	require.Equal(t, TransferRejected, rej.Outcome)
	require.Equal(t, "ACCOUNT_FROZEN", rej.RejectCode)
	sb.ClearFault(t, payout)

	// Failing at settlement: the status lookup says FAILED with the partner's code.
	sb.Fault(t, payout, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
	failRef := testkit.Unique("idem-fail")
	res, err = m.InitiateTransfer(ctx, tin(failRef))
	require.NoError(t, err)
	require.Equal(t, TransferAccepted, res.Outcome)
	gw.WaitTransfer(t, failRef, 3) // FAILED
	st, err = m.TransferStatus(ctx, sin(failRef))
	require.NoError(t, err)
	require.Equal(t, TransferStatusResult{Status: TransferFailed, TransferID: res.TransferID, FailureCode: "ACCOUNT_CLOSED"}, st)
	require.Equal(t, 1.0, polls(PollFailed))
	sb.ClearFault(t, payout)

	// The partner failing: the gateway cannot tell whether the bank booked it, so UNKNOWN (a
	// result); the lookup says the bank has no such transfer, so sending it again (same
	// reference) is safe.
	sb.Fault(t, "", map[string]any{"errorRatePercent": 100})
	downRef := testkit.Unique("idem-down")
	res, err = m.InitiateTransfer(ctx, tin(downRef))
	require.NoError(t, err)
	require.Equal(t, TransferUnknown, res.Outcome, "%+v", res)
	sb.ClearFault(t, "")
	st, err = m.TransferStatus(ctx, sin(downRef))
	require.NoError(t, err)
	require.Equal(t, TransferNotFound, st.Status)
	res, err = m.InitiateTransfer(ctx, tin(downRef))
	require.NoError(t, err)
	require.Equal(t, TransferAccepted, res.Outcome)

	// The answer lost (the bank books the transfer, then holds its answer past the client's
	// deadline): UNKNOWN, a result; the status lookup finds the transfer.
	slow := &Money{Gateway: gateway.NewClient(gw.RPC, gateway.ClientOptions{TransferTimeout: 500 * time.Millisecond}), Metrics: m.Metrics}
	sb.Fault(t, payout, map[string]any{"executeThenTimeoutMs": 3000})
	lostRef := testkit.Unique("idem-lost")
	res, err = slow.InitiateTransfer(ctx, tin(lostRef))
	require.NoError(t, err)
	require.Equal(t, TransferUnknown, res.Outcome, "%+v", res)
	sb.ClearFault(t, payout)
	gw.WaitTransfer(t, lostRef, 2)
	st, err = slow.TransferStatus(ctx, sin(lostRef))
	require.NoError(t, err)
	require.Equal(t, TransferSettled, st.Status)

	// The gateway unreachable: UNKNOWN for an initiation (it may have been sent), retryable for
	// a lookup.
	down, err := gateway.Dial("127.0.0.1:1", gateway.ClientOptions{Timeout: time.Second, TransferTimeout: time.Second})
	require.NoError(t, err)
	defer down.Close()
	res, err = (&Money{Gateway: down}).InitiateTransfer(ctx, tin(testkit.Unique("idem-gw")))
	require.NoError(t, err)
	require.Equal(t, TransferUnknown, res.Outcome)
	_, err = (&Money{Gateway: down, Metrics: m.Metrics}).TransferStatus(ctx, sin(ref))
	requireErrType(t, err, string(gateway.ReasonUnavailable), false)
	require.Equal(t, 1.0, polls(PollError))

	// A bad request is refused, not retried.
	bad := tin(testkit.Unique("idem-bad"))
	bad.AmountSantim = -1
	_, err = m.InitiateTransfer(ctx, bad)
	requireErrType(t, err, string(gateway.ReasonInvalidArgument), true)
	require.Equal(t, 2.0, polls(PollSettled))
	require.Equal(t, 2.0, polls(PollNotFound))
	n, err = testutil.GatherAndCount(reg, MetricSettlementTicks)
	require.NoError(t, err)
	require.Equal(t, 5, n, "one series per outcome, registered in the worker's registry")
	require.Same(t, m.Metrics.ticks, NewSettlementPollMetrics(reg).ticks, "registering again reuses the series")
}
