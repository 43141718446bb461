package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// requireCode checks a gRPC error's code and its stable ErrorInfo reason.
func requireCode(t *testing.T, err error, code codes.Code, reason Reason) {
	t.Helper()
	require.Error(t, err)
	st, ok := status.FromError(err)
	require.True(t, ok, "not a gRPC status: %v", err)
	require.Equal(t, code, st.Code(), "status %v", st)
	if reason == "" {
		return
	}
	var got Reason
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			got = Reason(info.GetReason())
			require.Equal(t, ErrorDomain, info.GetDomain())
		}
	}
	require.Equal(t, reason, got, "status %v", st)
}

func lookup(e *env, account, expected string) (*gatewayv1.LookupAccountResponse, error) {
	return e.rpc.LookupAccount(context.Background(), &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: account, ExpectedHolderName: expected})
}

// The holder-name check compares in the one normalised form of names (internal/platform/personname):
// a name the employer wrote in Ge'ez matches the partner's Latin spelling, and another person's
// does not.
func TestLookupAccountMatchesGeezHolderName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	acc := acct("geez")
	e.account(t, acc, "Abebe Kebede", 0)
	for expected, want := range map[string]gatewayv1.NameMatch{
		"አበበ ከበደ":  gatewayv1.NameMatch_NAME_MATCH_MATCH,
		"አልማዝ ከበደ": gatewayv1.NameMatch_NAME_MATCH_MISMATCH,
	} {
		r, err := lookup(e, acc, expected)
		require.NoError(t, err)
		require.True(t, r.GetExists())
		require.Equal(t, want, r.GetNameMatch(), expected)
	}
}

func TestLookupAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	acc, closed := acct("emp"), acct("closed")
	e.account(t, acc, "Abebe Kebede", 0)
	e.account(t, closed, "Almaz Tesfaye", 0)
	e.bankCall(t, http.MethodPost, "/api/v1/sandbox/accounts/"+closed+"/close", nil, http.StatusOK, nil)

	// Hit, no expected name.
	r, err := lookup(e, acc, "")
	require.NoError(t, err)
	require.True(t, r.GetExists())
	require.Equal(t, "Abebe Kebede", r.GetResolvedHolderName())
	require.Equal(t, "ETB", r.GetCurrency())
	require.Equal(t, gatewayv1.AccountStatus_ACCOUNT_STATUS_ACTIVE, r.GetAccountStatus())
	require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_NOT_CHECKED, r.GetNameMatch())
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, r.GetPartnerHealth())

	// The same name written differently matches.
	r, err = lookup(e, acc, "  abebe KEBEDE. ")
	require.NoError(t, err)
	require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_MATCH, r.GetNameMatch())

	// Another holder's name does not: the account exists, the name check says MISMATCH.
	r, err = lookup(e, acc, "Abebe Tesfaye")
	require.NoError(t, err)
	require.True(t, r.GetExists())
	require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_MISMATCH, r.GetNameMatch())

	// Miss: a normal answer, not an error.
	r, err = lookup(e, acct("nobody"), "Abebe Kebede")
	require.NoError(t, err)
	require.False(t, r.GetExists())
	require.Empty(t, r.GetResolvedHolderName())
	require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_NOT_CHECKED, r.GetNameMatch())

	// Closed account: exists, status CLOSED.
	r, err = lookup(e, closed, "")
	require.NoError(t, err)
	require.True(t, r.GetExists())
	require.Equal(t, gatewayv1.AccountStatus_ACCOUNT_STATUS_CLOSED, r.GetAccountStatus())

	require.Equal(t, 2.0, testutil.ToFloat64(e.metrics.LookupSuccess.WithLabelValues(SandboxPartner)))
	for reason, n := range map[string]float64{"name_mismatch": 1, "not_found": 1, "account_closed": 1} {
		require.Equal(t, n, testutil.ToFloat64(e.metrics.LookupFailure.WithLabelValues(SandboxPartner, reason)), reason)
	}
	text := e.scrape(t)
	require.Contains(t, text, `lookup_success_total{partner="sandbox"} 2`)
	require.Contains(t, text, `lookup_failure_total{partner="sandbox",reason="not_found"} 1`)
	require.Contains(t, text, `lookup_latency_seconds_count{partner="sandbox"} 5`)
	require.NotContains(t, text, "tenant")

	// Bad input never reaches the partner.
	before := testutil.ToFloat64(e.metrics.PartnerCalls.WithLabelValues(SandboxPartner, "lookup_account", "ok"))
	_, err = lookup(e, "", "")
	requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
	_, err = lookup(e, "has space", "")
	requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
	_, err = e.rpc.LookupAccount(context.Background(), &gatewayv1.LookupAccountRequest{Partner: "nobank", AccountId: acc})
	requireCode(t, err, codes.NotFound, ReasonUnknownPartner)
	require.Equal(t, before, testutil.ToFloat64(e.metrics.PartnerCalls.WithLabelValues(SandboxPartner, "lookup_account", "ok")))
}

func disburse(e *env, ref, from, to string, amount int64) (*gatewayv1.InitiateDisbursementResponse, error) {
	return e.rpc.InitiateDisbursement(context.Background(), &gatewayv1.InitiateDisbursementRequest{
		Partner: SandboxPartner, Reference: ref, FromAccount: from, ToAccount: to, AmountSantim: amount,
		Currency: "ETB", TenantId: "tenant-a", Domain: "EWA",
	})
}

func TestInitiateDisbursement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)

	ref := uniq("ewa")
	r, err := disburse(e, ref, src, dst, 125_050)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	require.False(t, r.GetReplayed())
	tr := r.GetTransfer()
	require.Equal(t, ref, tr.GetReference())
	require.Equal(t, int64(125_050), tr.GetAmountSantim())
	require.Equal(t, "tenant-a", tr.GetTenantId())
	require.Equal(t, "EWA", tr.GetDomain())
	require.NotEmpty(t, tr.GetId())

	// Same reference, same body: the same transfer, replayed.
	r2, err := disburse(e, ref, src, dst, 125_050)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r2.GetOutcome())
	require.True(t, r2.GetReplayed())
	require.Equal(t, tr.GetId(), r2.GetTransfer().GetId())

	// Same reference, different amount: a conflict, not a second transfer.
	_, err = disburse(e, ref, src, dst, 125_051)
	requireCode(t, err, codes.AlreadyExists, ReasonReferenceConflict)

	settled := e.waitStatus(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	require.Equal(t, tr.GetId(), settled.GetId())
	require.NotNil(t, settled.GetSettledAt())

	// Rejections come back as REJECTED with the bank's code, never as errors or UNKNOWN.
	r, err = disburse(e, uniq("ewa"), src, dst, 10_000_000)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, r.GetOutcome())
	require.Equal(t, "INSUFFICIENT_FUNDS", r.GetRejectCode())
	r, err = disburse(e, uniq("ewa"), src, acct("ghost"), 100)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, r.GetOutcome())
	require.Equal(t, "ACCOUNT_NOT_FOUND", r.GetRejectCode())

	// Unknown reference.
	_, err = e.rpc.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: uniq("none")})
	requireCode(t, err, codes.NotFound, ReasonTransferNotFound)

	// Bad input: InvalidArgument and nothing sent to the bank.
	n := len(e.bankTransfers(t))
	bad := []*gatewayv1.InitiateDisbursementRequest{
		{Partner: SandboxPartner, Reference: "", FromAccount: src, ToAccount: dst, AmountSantim: 1, TenantId: "t", Domain: "EWA"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: dst, AmountSantim: 0, TenantId: "t", Domain: "EWA"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: dst, AmountSantim: -5, TenantId: "t", Domain: "EWA"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: src, AmountSantim: 1, TenantId: "t", Domain: "EWA"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: dst, AmountSantim: 1, TenantId: "", Domain: "EWA"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: dst, AmountSantim: 1, TenantId: "t", Domain: "CASINO"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: dst, AmountSantim: 1, TenantId: "t", Domain: "EWA", Currency: "usd"},
		{Partner: SandboxPartner, Reference: uniq("x"), FromAccount: src, ToAccount: dst, AmountSantim: 1, TenantId: "t", Domain: "EWA", CallbackUrl: "ftp://x"},
	}
	for i, req := range bad {
		_, err := e.rpc.InitiateDisbursement(context.Background(), req)
		requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
		_ = i
	}
	require.Len(t, e.bankTransfers(t), n)
}

func TestInitiateBulkDisbursement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src := acct("payroll")
	e.account(t, src, "Employer PLC", 10_000_000)
	dsts := []string{acct("e1"), acct("e2"), acct("e3")}
	for _, d := range dsts {
		e.account(t, d, "Employee "+d, 0)
	}
	batchRef := uniq("run")
	req := &gatewayv1.InitiateBulkDisbursementRequest{
		Partner: SandboxPartner, BatchReference: batchRef, FromAccount: src, TenantId: "tenant-a", Domain: "PAYROLL",
		Items: []*gatewayv1.BulkItem{
			{Reference: batchRef + "-1", ToAccount: dsts[0], AmountSantim: 100_000},
			{Reference: batchRef + "-2", ToAccount: dsts[1], AmountSantim: 200_000},
			{Reference: batchRef + "-3", ToAccount: dsts[2], AmountSantim: 300_001},
			{Reference: batchRef + "-4", ToAccount: acct("ghost"), AmountSantim: 5},
		},
	}
	r, err := e.rpc.InitiateBulkDisbursement(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	require.NotEmpty(t, r.GetBatchId())
	require.Equal(t, int64(4), r.GetItemCount())
	require.Len(t, r.GetItems(), 4)
	byRef := map[string]*gatewayv1.BulkItemResult{}
	for _, it := range r.GetItems() {
		byRef[it.GetReference()] = it
	}
	// The item to an unknown account fails alone; the others are held.
	require.Equal(t, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED, byRef[batchRef+"-4"].GetStatus())
	require.Equal(t, "ACCOUNT_NOT_FOUND", byRef[batchRef+"-4"].GetFailureCode())
	for i := 1; i <= 3; i++ {
		it := byRef[batchRef+"-"+string(rune('0'+i))]
		require.NotEmpty(t, it.GetTransferId())
		require.NotEqual(t, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED, it.GetStatus())
	}
	// Replay of the batch: the same batch.
	r2, err := e.rpc.InitiateBulkDisbursement(context.Background(), req)
	require.NoError(t, err)
	require.True(t, r2.GetReplayed())
	require.Equal(t, r.GetBatchId(), r2.GetBatchId())
	for i := 1; i <= 3; i++ {
		e.waitStatus(t, batchRef+"-"+string(rune('0'+i)), gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	}

	// Repeated item references are refused before anything is sent.
	dup := &gatewayv1.InitiateBulkDisbursementRequest{
		Partner: SandboxPartner, BatchReference: uniq("run"), FromAccount: src, TenantId: "tenant-a", Domain: "PAYROLL",
		Items: []*gatewayv1.BulkItem{{Reference: "same", ToAccount: dsts[0], AmountSantim: 1}, {Reference: "same", ToAccount: dsts[1], AmountSantim: 1}},
	}
	_, err = e.rpc.InitiateBulkDisbursement(context.Background(), dup)
	requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
	_, err = e.rpc.InitiateBulkDisbursement(context.Background(), &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: uniq("run"), FromAccount: src, TenantId: "t", Domain: "PAYROLL"})
	requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
}

// TestFaultMatrix drives the sandbox's injected faults through the gateway: each case owns its
// accounts and sets its faults on them, so the cases share one bank.
func TestFaultMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.LookupTimeout = 400 * time.Millisecond
		g.TransferTimeout = 400 * time.Millisecond
		g.StatusTimeout = 2 * time.Second
		g.BreakerFailures = 1000 // this test is about classification, not the breaker
	}})
	src := acct("src")
	e.account(t, src, "Employer PLC", 100_000_000)

	t.Run("latency within the deadline", func(t *testing.T) {
		a := acct("slow")
		e.account(t, a, "Slow Account", 0)
		e.fault(t, a, map[string]any{"latencyMs": 150})
		start := time.Now()
		r, err := lookup(e, a, "")
		require.NoError(t, err)
		require.True(t, r.GetExists())
		require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	})

	t.Run("latency past the deadline", func(t *testing.T) {
		a := acct("slower")
		e.account(t, a, "Slower Account", 0)
		e.fault(t, a, map[string]any{"latencyMs": 1500})
		before := testutil.ToFloat64(e.metrics.LookupFailure.WithLabelValues(SandboxPartner, "timeout"))
		_, err := lookup(e, a, "")
		requireCode(t, err, codes.DeadlineExceeded, ReasonPartnerTimeout)
		require.Equal(t, before+1, testutil.ToFloat64(e.metrics.LookupFailure.WithLabelValues(SandboxPartner, "timeout")))

		// A slow transfer past its deadline is UNKNOWN, never REJECTED.
		dst := acct("dst")
		e.account(t, dst, "Dest", 0)
		e.fault(t, dst, map[string]any{"latencyMs": 1500})
		r, err := disburse(e, uniq("slow"), src, dst, 100)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome())
		require.Contains(t, r.GetUnknownReason(), "timeout")
	})

	t.Run("5xx", func(t *testing.T) {
		dst := acct("down")
		e.account(t, dst, "Down Account", 0)
		e.fault(t, dst, map[string]any{"errorRatePercent": 100})
		unknown := func() float64 {
			return testutil.ToFloat64(e.metrics.PartnerCalls.WithLabelValues(SandboxPartner, "lookup_account", "unknown"))
		}
		before := unknown()
		_, err := lookup(e, dst, "")
		requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
		// A read is retried: three attempts reached the bank.
		require.Equal(t, before+3, unknown())

		// A transfer answered 5xx is UNKNOWN (a real bank may have booked it before failing);
		// the status lookup settles it: the sandbox wrote nothing, so NOT_FOUND, and resending
		// the same reference is then safe.
		ref := uniq("5xx")
		r, err := disburse(e, ref, src, dst, 700)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome())
		require.Contains(t, r.GetUnknownReason(), "INJECTED_FAILURE")
		_, err = e.rpc.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: ref})
		requireCode(t, err, codes.NotFound, ReasonTransferNotFound)
		e.clearFault(t, dst)
		require.Eventually(t, func() bool {
			r, err = disburse(e, ref, src, dst, 700)
			return err == nil && r.GetOutcome() == gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED
		}, 5*time.Second, 100*time.Millisecond) // the sandbox caches faults for a moment
		require.False(t, r.GetReplayed())
	})

	t.Run("execute then timeout", func(t *testing.T) {
		dst := acct("ett")
		e.account(t, dst, "Abebe Kebede", 0)
		e.fault(t, dst, map[string]any{"executeThenTimeoutMs": 3000})
		ref := uniq("ett")
		r, err := disburse(e, ref, src, dst, 12_345)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome(), "a timeout must never be FAILED or REJECTED")
		require.Contains(t, r.GetUnknownReason(), "timeout")
		require.Nil(t, r.GetTransfer())

		// Resolved by the status lookup: the bank did execute it.
		st, err := e.rpc.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: ref})
		require.NoError(t, err)
		require.Equal(t, ref, st.GetTransfer().GetReference())
		require.Equal(t, int64(12_345), st.GetTransfer().GetAmountSantim())
		require.NotEqual(t, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED, st.GetTransfer().GetStatus())
		e.waitStatus(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)

		// Exactly one transfer exists for the reference; resending it (fault cleared) replays it.
		e.clearFault(t, dst)
		require.Eventually(t, func() bool {
			r, err = disburse(e, ref, src, dst, 12_345)
			return err == nil && r.GetOutcome() == gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED
		}, 5*time.Second, 100*time.Millisecond)
		require.True(t, r.GetReplayed())
		require.Equal(t, st.GetTransfer().GetId(), r.GetTransfer().GetId())
		n := 0
		for _, tr := range e.bankTransfers(t) {
			if tr.Reference == ref {
				n++
			}
		}
		require.Equal(t, 1, n)
	})

	t.Run("reject", func(t *testing.T) {
		dst := acct("rej")
		e.account(t, dst, "Blocked Account", 0)
		e.fault(t, dst, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
		ref := uniq("rej")
		r, err := disburse(e, ref, src, dst, 100)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, r.GetOutcome())
		require.Equal(t, "ACCOUNT_BLOCKED", r.GetRejectCode())
		// Nothing moved.
		_, err = e.rpc.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: ref})
		requireCode(t, err, codes.NotFound, ReasonTransferNotFound)
	})

	t.Run("settlement failure", func(t *testing.T) {
		dst := acct("sf")
		e.account(t, dst, "Failing Account", 0)
		e.fault(t, dst, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
		ref := uniq("sf")
		r, err := disburse(e, ref, src, dst, 100)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
		st := e.waitStatus(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED)
		require.Equal(t, "ACCOUNT_CLOSED", st.GetFailureCode())
	})
}

func TestBankUnreachable(t *testing.T) {
	t.Parallel()
	// A bank that is not listening: the request never left, so a transfer is UNAVAILABLE (safe to
	// retry), not UNKNOWN.
	a, err := NewSandboxAdapter("http://127.0.0.1:1", nil)
	require.NoError(t, err)
	gc := DefaultGuardConfig()
	gc.RetryBackoff = time.Millisecond
	p := Guard(a, gc)
	_, _, err = p.InitiateTransfer(context.Background(), TransferRequest{Reference: "r", FromAccount: "a", ToAccount: "b", AmountSantim: 1, Currency: "ETB", TenantID: "t", Domain: "EWA"})
	require.True(t, IsKind(err, KindUnavailable), "%v", err)
	_, code, _, rerr := writeOutcome(err)
	require.Empty(t, code)
	requireCode(t, ToStatus(rerr).Err(), codes.Unavailable, ReasonPartnerUnavail)
	require.True(t, IsKind(a.Probe(context.Background()), KindUnavailable))
}

func TestAdapterDegradedFlipsAndRecovers(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEnv(t, envOpt{clock: clock, guard: func(g *GuardConfig) {
		g.BreakerFailures = 1000 // the error-rate rule alone, not the breaker
		g.Attempts = 1
	}})
	good, bad := acct("good"), acct("bad")
	e.account(t, good, "Good Account", 0)
	e.account(t, bad, "Bad Account", 0)
	status := func() *gatewayv1.GetAdapterStatusResponse {
		r, err := e.rpc.GetAdapterStatus(context.Background(), &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
		require.NoError(t, err)
		return r
	}
	for i := 0; i < 40; i++ {
		_, err := lookup(e, good, "")
		require.NoError(t, err)
	}
	s := status()
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, s.GetHealth())
	require.Equal(t, int64(40), s.GetWindowCalls())
	require.Zero(t, s.GetWindowErrors())
	require.Equal(t, "closed", s.GetBreakerState())

	// Three injected 5xx out of 43 calls is 6.97%: over the 5% limit.
	e.fault(t, bad, map[string]any{"errorRatePercent": 100})
	for i := 0; i < 3; i++ {
		_, err := lookup(e, bad, "")
		requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
	}
	s = status()
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, s.GetHealth())
	require.Equal(t, int64(43), s.GetWindowCalls())
	require.Equal(t, int64(3), s.GetWindowErrors())
	require.Equal(t, int64(697), s.GetErrorRateBasisPoints())
	require.Contains(t, s.GetReason(), "error rate")
	require.Equal(t, 5*time.Minute, s.GetWindow().AsDuration())
	// Lookups report it too.
	r, err := lookup(e, good, "")
	require.NoError(t, err)
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, r.GetPartnerHealth())

	// Recovery by dilution: enough good calls bring the rate to 5% (3 of 60), not over it.
	for i := 0; i < 16; i++ {
		_, err := lookup(e, good, "")
		require.NoError(t, err)
	}
	s = status()
	require.Equal(t, int64(60), s.GetWindowCalls())
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, s.GetHealth(), s.GetReason())

	// Flip again, then recover by time: five minutes later the errors have left the window.
	for i := 0; i < 10; i++ {
		_, _ = lookup(e, bad, "")
	}
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, status().GetHealth())
	clock.Advance(4 * time.Minute)
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, status().GetHealth(), "still inside the window")
	clock.Advance(time.Minute + time.Second)
	s = status()
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, s.GetHealth())
	require.Zero(t, s.GetWindowCalls())

	// The probe loop exports the state as a metric.
	e.gw.ProbeDependencies(context.Background())
	text := e.scrape(t)
	require.Contains(t, text, `gateway_adapter_degraded{partner="sandbox"} 0`)
	require.Contains(t, text, `svc_dependency_up{dependency="partner:sandbox"} 1`)
	require.Contains(t, text, `svc_dependency_up{dependency="database"} 1`)
}

func TestBreakerOpensAndHalfOpens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.BreakerFailures = 3
		// Long enough that the open-state checks below (three calls) finish before the breaker
		// half-opens even on a loaded machine (at 300 ms a CI run's disburse found it half-open
		// and reached the bank).
		g.BreakerOpenFor = 2 * time.Second
		g.Attempts = 1
	}})
	a, other := acct("flaky"), acct("fine")
	e.account(t, a, "Flaky Account", 0)
	e.account(t, other, "Fine Account", 0)
	calls := func() float64 {
		return testutil.ToFloat64(e.metrics.PartnerCalls.WithLabelValues(SandboxPartner, "lookup_account", "unknown")) +
			testutil.ToFloat64(e.metrics.PartnerCalls.WithLabelValues(SandboxPartner, "lookup_account", "ok"))
	}
	status := func() *gatewayv1.GetAdapterStatusResponse {
		r, err := e.rpc.GetAdapterStatus(context.Background(), &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
		require.NoError(t, err)
		return r
	}

	e.fault(t, a, map[string]any{"errorRatePercent": 100})
	for i := 0; i < 3; i++ {
		_, err := lookup(e, a, "")
		requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
	}
	s := status()
	require.Equal(t, "open", s.GetBreakerState())
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, s.GetHealth())
	require.Contains(t, s.GetReason(), "breaker")

	// Open: calls fail fast without reaching the bank, for every account of the partner.
	n := calls()
	_, err := lookup(e, other, "")
	requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
	require.ErrorContains(t, err, "circuit breaker open")
	require.Equal(t, n, calls(), "no request may reach the bank while the breaker is open")
	// A transfer refused by the open breaker was never sent: UNAVAILABLE, not UNKNOWN.
	_, err = disburse(e, uniq("open"), a, other, 1)
	requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)

	// Half-open after the timeout: one probe call goes through; it fails, so the breaker opens again.
	halfOpen := func() {
		t.Helper()
		require.Eventually(t, func() bool { return e.partner.Status().BreakerState == "half-open" }, 10*time.Second, 10*time.Millisecond)
	}
	halfOpen()
	require.Equal(t, "half-open", status().GetBreakerState())
	_, err = lookup(e, a, "")
	requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
	require.Equal(t, n+1, calls())
	require.Equal(t, "open", status().GetBreakerState())

	// The bank recovers; after the next timeout the probe succeeds and the breaker closes.
	e.clearFault(t, a)
	halfOpen()
	require.Equal(t, "half-open", status().GetBreakerState())
	for attempt := 1; ; attempt++ {
		r, err := lookup(e, a, "")
		if err == nil {
			require.True(t, r.GetExists())
			break
		}
		// The sandbox may still serve its cached fault once; the breaker then reopens, and the
		// next probe waits for its next half-open state.
		require.Less(t, attempt, 20, "the probe keeps failing: %v", err)
		halfOpen()
	}
	require.Equal(t, "closed", status().GetBreakerState())
	_, err = lookup(e, other, "")
	require.NoError(t, err)
}

func TestGatewayMetricsHaveNoTenantLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	a := acct("m")
	e.account(t, a, "Metric Account", 0)
	_, err := lookup(e, a, "")
	require.NoError(t, err)
	_, err = e.rpc.FetchStatement(context.Background(), &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: "tenant-secret-id", Account: a, FromDate: time.Now().UTC().Format(time.DateOnly), ToDate: time.Now().UTC().Format(time.DateOnly)})
	require.NoError(t, err)
	text := e.scrape(t)
	require.Contains(t, text, "svc_statement_ingest_age_seconds{partner=\"sandbox\"}")
	require.False(t, strings.Contains(text, "tenant"), "metrics must not carry tenant ids")
}

// A read is not retried on the breaker's refusal, open or half-open with its trial calls taken
// (found by an audit: a half-open refusal was retried until the caller's deadline); another
// fault of a partner that could not be reached is.
func TestReadRetryableNotOnABreakerRefusal(t *testing.T) {
	for _, refusal := range []error{gobreaker.ErrOpenState, gobreaker.ErrTooManyRequests} {
		require.False(t, readRetryable(&PartnerError{Kind: KindUnavailable, Err: refusal}), "%v", refusal)
	}
	require.True(t, readRetryable(&PartnerError{Kind: KindUnavailable, Err: errors.New("connection refused")}))
	require.False(t, readRetryable(&PartnerError{Kind: KindUnavailable, Timeout: true}), "a spent deadline")
}
