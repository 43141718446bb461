package gateway

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// benchRun calls op n times from `workers` goroutines and returns throughput and latencies.
func benchRun(t *testing.T, n, workers int, op func(i int) error) (perSec float64, p50, p99 time.Duration, errs int64) {
	t.Helper()
	lat := make([]time.Duration, n)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				s := time.Now()
				if err := op(i); err != nil {
					failed.Add(1)
				}
				lat[i] = time.Since(s)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return float64(n) / elapsed.Seconds(), lat[n*50/100], lat[n*99/100], failed.Load()
}

// TestBenchmarkReportGateway measures account lookups and disbursement initiations per second
// through the gateway's gRPC API against the real sandbox (both in process, real Postgres).
func TestBenchmarkReportGateway(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench)")
	}
	e := newEnv(t, envOpt{settleDelay: time.Second})
	ctx := context.Background()
	const workers = 32
	accounts := make([]string, 64)
	for i := range accounts {
		accounts[i] = acct("bench")
		e.account(t, accounts[i], fmt.Sprintf("Bench Holder %d", i), 1_000_000_000)
	}
	// Warm up connections on both hops.
	for _, a := range accounts[:workers] {
		_, err := lookup(e, a, "")
		require.NoError(t, err)
	}

	type row struct {
		name        string
		n           int
		perSec      float64
		p50, p99    time.Duration
		errs        int64
		description string
	}
	var rows []row

	n := 5000
	ps, p50, p99, errs := benchRun(t, n, workers, func(i int) error {
		a := accounts[i%len(accounts)]
		r, err := e.rpc.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: a, ExpectedHolderName: "bench holder " + fmt.Sprint(i%len(accounts))})
		if err == nil && r.GetNameMatch() != gatewayv1.NameMatch_NAME_MATCH_MATCH {
			return fmt.Errorf("name did not match")
		}
		return err
	})
	rows = append(rows, row{"LookupAccount", n, ps, p50, p99, errs, "hit, with expected-name check"})

	n = 3000
	run := uniq("b")
	ps, p50, p99, errs = benchRun(t, n, workers, func(i int) error {
		// Each worker slot pays from its own source so the bank's per-account lock is not the
		// thing being measured.
		from := accounts[i%workers]
		to := accounts[workers+i%(len(accounts)-workers)]
		r, err := e.rpc.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{
			Partner: SandboxPartner, Reference: fmt.Sprintf("%s-%d", run, i), FromAccount: from, ToAccount: to,
			AmountSantim: int64(100 + i), TenantId: "bench-tenant", Domain: "EWA",
		})
		if err == nil && r.GetOutcome() != gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED {
			return fmt.Errorf("outcome %v", r.GetOutcome())
		}
		return err
	})
	rows = append(rows, row{"InitiateDisbursement", n, ps, p50, p99, errs, "new transfer, hold at source"})

	ps, p50, p99, errs = benchRun(t, n, workers, func(i int) error {
		_, err := e.rpc.GetTransferStatus(ctx, &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: fmt.Sprintf("%s-%d", run, i)})
		return err
	})
	rows = append(rows, row{"GetTransferStatus", n, ps, p50, p99, errs, "by our reference"})

	// One payroll batch of 10,000 items through the gateway.
	items := make([]*gatewayv1.BulkItem, 10_000)
	for i := range items {
		items[i] = &gatewayv1.BulkItem{Reference: fmt.Sprintf("%s-pay-%d", run, i), ToAccount: accounts[1+i%(len(accounts)-1)], AmountSantim: 5_000}
	}
	s := time.Now()
	br, err := e.rpc.InitiateBulkDisbursement(ctx, &gatewayv1.InitiateBulkDisbursementRequest{
		Partner: SandboxPartner, BatchReference: run + "-payroll", FromAccount: accounts[0], TenantId: "bench-tenant", Domain: "PAYROLL", Items: items,
	})
	bulk := time.Since(s)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, br.GetOutcome())

	st := e.partner.Status()
	fmt.Printf("\nGateway benchmark (gRPC → gateway → sandbox HTTP → Postgres, all in one process, %d concurrent callers)\n", workers)
	fmt.Printf("%-22s %7s %10s %10s %10s %6s  %s\n", "operation", "calls", "per sec", "p50", "p99", "errors", "")
	for _, r := range rows {
		fmt.Printf("%-22s %7d %10.0f %10s %10s %6d  %s\n", r.name, r.n, r.perSec, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.errs, r.description)
	}
	fmt.Printf("%-22s %7d %10.0f %10s %10s %6d  %s\n", "InitiateBulkDisbursement", 10_000, 10_000/bulk.Seconds(), bulk.Round(time.Millisecond), "-", 0, "one batch of 10,000 items accepted (items/s)")
	fmt.Printf("adapter after the run: %s, %d calls in window, %d errors, p95 ≤ %s\n\n", st.Health, st.Stats.Calls, st.Stats.Errors, st.Stats.P95)
}
