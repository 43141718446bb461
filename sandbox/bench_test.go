package sandbox

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestBenchmarkReportSandboxBatch measures the payroll path of the bank: a batch of 10,000
// credit transfers through HTTP, from POST to accepted, to all settled, to every callback
// acknowledged by a receiver that verifies signatures. It also measures single transfer
// creation over HTTP. It prints figures and asserts correctness, never timings.
func TestBenchmarkReportSandboxBatch(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench)")
	}
	const items = 10_000
	// Production defaults, except that settlement is immediate (the figure is the bank's
	// throughput, not the configured delay) and callbacks go to the test receiver.
	e := newEnv(t, func(c *Config) {
		c.SettleDelay = 0
		c.PollInterval = 200 * time.Millisecond
		c.CallbackBackoffMin, c.CallbackBackoffMax = time.Second, time.Minute
		c.OutOfOrderWindow = time.Second
		c.FaultCacheTTL = 250 * time.Millisecond
	})
	e.openAccount("BENCH-EMPLOYER", "Bench employer payroll", 1_000_000_000_000)
	rows := make([][]any, items)
	for i := range items {
		rows[i] = []any{fmt.Sprintf("BENCH-W%05d", i), fmt.Sprintf("Worker %d", i)}
	}
	_, err := e.db.App.CopyFrom(context.Background(), pgx.Identifier{"sandbox", "accounts"}, []string{"account_number", "holder_name"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)

	bref := ref("bench-payroll")
	req := BatchRequest{BatchReference: bref, FromAccount: "BENCH-EMPLOYER", Currency: "ETB", TenantID: "bench", Domain: "PAYROLL"}
	var total int64
	for i := range items {
		amt := int64(1_500_00 + (i*7919)%2_000_000) // 1,500.00 – 21,499.99 birr
		total += amt
		req.Items = append(req.Items, BatchItemRequest{Reference: fmt.Sprintf("%s-%05d", bref, i), ToAccount: fmt.Sprintf("BENCH-W%05d", i), AmountSantim: amt})
	}

	start := time.Now()
	r := e.do("POST", "/api/v1/transfer-batches", req)
	accepted := time.Since(start)
	require.Equal(t, 201, r.Status, "%.300s", r.Body)
	b := decodeAs[Batch](t, r)
	require.Equal(t, items, b.ItemCount)

	var settled time.Duration
	for {
		if e.count(`SELECT count(*) FROM sandbox.transfers WHERE batch_id = $1::uuid AND status = 'SETTLED'`, b.ID) == items {
			settled = time.Since(start)
			break
		}
		require.Less(t, time.Since(start), 5*time.Minute, "batch never settled")
		time.Sleep(25 * time.Millisecond)
	}
	e.recv.waitAcked(t, 5*time.Minute, func(cs []receivedCallback) bool { return len(cs) >= items })
	delivered := time.Since(start)

	attempts, acked := e.recv.snapshot()
	seen := map[string]bool{}
	for _, c := range acked {
		require.True(t, c.Verified)
		seen[c.Body.TransferID] = true
	}
	require.Len(t, seen, items, "one acknowledged callback per item")
	require.Equal(t, int64(1_000_000_000_000)-total, e.balance("BENCH-EMPLOYER"))
	e.checkBooks()

	// Single transfers over HTTP, 16 callers at once.
	const singles, callers = 2_000, 16
	lat := make([]time.Duration, singles)
	var wg sync.WaitGroup
	next := make(chan int)
	sStart := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				r := e.do("POST", "/api/v1/transfers", e.transfer(fmt.Sprintf("%s-single-%05d", bref, i), "BENCH-EMPLOYER", fmt.Sprintf("BENCH-W%05d", i), 1_00))
				lat[i] = time.Since(t0)
				if r.Status != 201 {
					t.Errorf("single transfer %d: %d %s", i, r.Status, r.Body)
				}
			}
		}()
	}
	for i := range singles {
		next <- i
	}
	close(next)
	wg.Wait()
	sElapsed := time.Since(sStart)
	slices.Sort(lat)

	fmt.Printf("\n== sandbox bank: bulk batch of %d transfers over HTTP (settle delay 0) ==\n", items)
	fmt.Printf("%-44s %10s\n", "figure", "value")
	fmt.Printf("%-44s %9.2fs   (target <= 5 s)\n", "POST → 201 accepted (all items held)", accepted.Seconds())
	fmt.Printf("%-44s %9.2fs   (target <= 20 s)\n", "POST → all items SETTLED", settled.Seconds())
	fmt.Printf("%-44s %9.2fs   (target <= 20 s)\n", "POST → all callbacks acknowledged", delivered.Seconds())
	fmt.Printf("%-44s %10.0f\n", "items accepted per second", float64(items)/accepted.Seconds())
	fmt.Printf("%-44s %10.0f\n", "items settled per second (incl. accept)", float64(items)/settled.Seconds())
	fmt.Printf("%-44s %10d\n", "callback attempts (acknowledged)", len(attempts))
	fmt.Printf("\n== sandbox bank: single transfers over HTTP (%d callers) ==\n", callers)
	fmt.Printf("%-44s %10.0f\n", "transfers created per second", float64(singles)/sElapsed.Seconds())
	fmt.Printf("%-44s %9.1fms\n", "p50 latency", float64(lat[singles/2].Microseconds())/1000)
	fmt.Printf("%-44s %9.1fms\n", "p99 latency", float64(lat[singles*99/100].Microseconds())/1000)
}
