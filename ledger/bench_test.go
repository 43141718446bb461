package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestBenchmarkReportLedger prints the ledger's throughput and latency figures next to pgbench's
// TPC-B-like run against the same Postgres server, with the same client counts. It asserts no
// timing. Run with `make bench` (WAGERAIL_BENCH=1); WAGERAIL_BENCH_SECONDS sets the length of
// each timed run (default 10).
func TestBenchmarkReportLedger(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	dur := 10 * time.Second
	if s, err := strconv.Atoi(os.Getenv("WAGERAIL_BENCH_SECONDS")); err == nil && s > 0 {
		dur = time.Duration(s) * time.Second
	}
	ctx := context.Background()
	d := testkit.NewDB(t)
	// A durable pool (synchronous_commit on, the server default), large enough for 32 clients.
	pool, err := db.Open(ctx, d.AppDSN, 40)
	require.NoError(t, err)
	defer pool.Close()
	e := serveOn(t, d, NewStore(pool))
	tenant := "bench-tenant"
	const spread = 1000
	names := make([]string, spread)
	for i := range names {
		names[i] = fmt.Sprintf("receivable-from-employee:e%04d", i)
	}
	e.ensure(t, tenant, append([]string{"payroll-clearing"}, names...)...)

	clients := []int{1, 8, 32}
	type row struct {
		what    string
		clients int
		rate    float64
		p50     time.Duration
		p99     time.Duration
	}
	var rows []row
	var keySeq atomic.Int64
	nextKey := func() string { return "b" + strconv.FormatInt(keySeq.Add(1), 36) }

	// run calls op from n goroutines for dur and returns operations per second and latencies.
	run := func(n int, op func(r *rand.Rand) (int, error)) (float64, time.Duration, time.Duration) {
		var mu sync.Mutex
		var lat []time.Duration
		var total atomic.Int64
		deadline := time.Now().Add(dur)
		var wg sync.WaitGroup
		start := time.Now()
		for g := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
				var mine []time.Duration
				for time.Now().Before(deadline) {
					t0 := time.Now()
					k, err := op(r)
					if err != nil {
						t.Errorf("benchmark operation: %v", err)
						return
					}
					mine = append(mine, time.Since(t0))
					total.Add(int64(k))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		slices.Sort(lat)
		pct := func(p float64) time.Duration {
			if len(lat) == 0 {
				return 0
			}
			return lat[min(len(lat)-1, int(float64(len(lat))*p))]
		}
		return float64(total.Load()) / elapsed.Seconds(), pct(0.50), pct(0.99)
	}

	post := func(debit, credit string) error {
		_, err := e.client.PostTransaction(ctx, twoLeg(tenant, nextKey(), debit, credit, 100))
		return err
	}

	// pgbench TPC-B-like on its own database of the same server, with the same client counts.
	// It connects the way the ledger does, over TCP to 127.0.0.1 as a password role, and that is
	// the figure the ratio is taken against; its run over the Unix socket is printed beside it.
	pg := testkit.PG(t)
	pgbenchDB := fmt.Sprintf("wagerail_pgbench_%d", os.Getpid())
	super, err := pgx.Connect(ctx, pg.SuperDSN("postgres"))
	require.NoError(t, err)
	_, err = super.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgbenchDB, db.OwnerRole))
	require.NoError(t, err)
	defer func() {
		_, _ = super.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgbenchDB+" WITH (FORCE)")
		super.Close(context.Background())
	}()
	pgbench := "/usr/bin/pgbench"
	if p, err := exec.LookPath("pgbench"); err == nil {
		pgbench = p
	}
	tcpDSN := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, db.OwnerRole, pgbenchDB)
	pgbenchCmd := func(dsn string, args ...string) *exec.Cmd {
		c := exec.Command(pgbench, append(args, dsn)...)
		c.Env = append(os.Environ(), "PGPASSWORD="+pg.OwnerPassword) // not on the command line
		return c
	}
	const scale = 32 // one branch per client at 32 clients, so branch rows are not the bottleneck
	out, err := pgbenchCmd(tcpDSN, "-i", "-q", "-s", strconv.Itoa(scale)).CombinedOutput()
	require.NoError(t, err, "pgbench -i: %s", out)
	tpsRE := regexp.MustCompile(`tps = ([0-9.]+)`)
	latRE := regexp.MustCompile(`latency average = ([0-9.]+) ms`)
	type pgRun struct {
		tps float64
		lat string
	}
	pgbenchRun := func(dsn string, n int) pgRun {
		out, err := pgbenchCmd(dsn, "-n", "-c", strconv.Itoa(n), "-j", strconv.Itoa(min(n, 4)),
			"-T", strconv.Itoa(int(dur.Seconds()))).CombinedOutput()
		require.NoError(t, err, "pgbench: %s", out)
		m := tpsRE.FindSubmatch(out)
		require.NotNil(t, m, "pgbench output: %s", out)
		var r pgRun
		r.tps, _ = strconv.ParseFloat(string(m[1]), 64)
		if l := latRE.FindSubmatch(out); l != nil {
			r.lat = string(l[1]) + " ms avg"
		}
		return r
	}
	pgTCP, pgSocket := map[int]pgRun{}, map[int]pgRun{}

	// Per client count: spread and hot runs (so both see the database at the same size), then
	// pgbench, so the figures compared were taken minutes apart at most.
	var hotRows []row
	for _, n := range clients {
		rate, p50, p99 := run(n, func(r *rand.Rand) (int, error) {
			a, b := r.IntN(spread), r.IntN(spread-1)
			if b >= a {
				b++
			}
			return 1, post(names[a], names[b])
		})
		rows = append(rows, row{"two-leg postings, spread over 1,000 accounts", n, rate, p50, p99})
		rate, p50, p99 = run(n, func(r *rand.Rand) (int, error) {
			return 1, post("payroll-clearing", names[r.IntN(spread)])
		})
		hotRows = append(hotRows, row{"two-leg postings, all on one hot account", n, rate, p50, p99})
		pgTCP[n] = pgbenchRun(tcpDSN, n)
		pgSocket[n] = pgbenchRun(pg.SuperDSN(pgbenchDB), n)
	}
	rows = append(rows, hotRows...)
	const batch = 1000
	for _, n := range []int{1, 8} {
		rate, p50, p99 := run(n, func(r *rand.Rand) (int, error) {
			items := make([]*ledgerv1.PostTransactionRequest, batch)
			for i := range items {
				items[i] = twoLeg("", nextKey(), names[r.IntN(spread)], "payroll-clearing", 100)
			}
			resp, err := e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: items})
			if err != nil {
				return 0, err
			}
			for _, it := range resp.GetResults() {
				if err := ItemError(it); err != nil {
					return 0, err
				}
			}
			return batch, nil
		})
		rows = append(rows, row{fmt.Sprintf("PostTransactions, batches of %d (per posting; latency per batch)", batch), n, rate, p50, p99})
	}

	// Balance reads on an account with 1,000,000 entries, seeded through PostTransactions with
	// postings of 500 entries (499 debits of the account against one credit elsewhere), which
	// gets there in minutes rather than the half hour of a million two-leg postings.
	const seeded = 1_000_000
	const perPosting = MaxEntries - 1
	e.ensure(t, tenant, "partner-bank:bench:hot")
	seedStart := time.Now()
	have := 0
	var seedMu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
			for {
				seedMu.Lock()
				if have >= seeded {
					seedMu.Unlock()
					return
				}
				var items []*ledgerv1.PostTransactionRequest
				for len(items) < 10 && have < seeded {
					k := min(perPosting, seeded-have)
					have += k
					req := &ledgerv1.PostTransactionRequest{IdempotencyKey: nextKey()}
					var sum int64
					for range k {
						amt := 1 + int64(r.IntN(1000))
						sum += amt
						req.Entries = append(req.Entries, leg("partner-bank:bench:hot", dr, amt))
					}
					req.Entries = append(req.Entries, leg(names[r.IntN(spread)], cr, sum))
					items = append(items, req)
				}
				seedMu.Unlock()
				resp, err := e.client.PostTransactions(ctx, &ledgerv1.PostTransactionsRequest{TenantId: tenant, Transactions: items})
				if err != nil {
					t.Errorf("seed: %v", err)
					return
				}
				for _, it := range resp.GetResults() {
					if err := ItemError(it); err != nil {
						t.Errorf("seed: %v", err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	seedTime := time.Since(seedStart)
	var entries int64
	require.NoError(t, db.InTenantTx(ctx, pool, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM ledger.entries e JOIN ledger.accounts a ON a.id = e.account_id
			WHERE a.name = 'partner-bank:bench:hot'`).Scan(&entries)
	}))
	coldStart := time.Now()
	first, err := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "partner-bank:bench:hot"})
	require.NoError(t, err)
	cold := time.Since(coldStart)
	readRate, read50, read99 := run(1, func(*rand.Rand) (int, error) {
		_, err := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: "partner-bank:bench:hot"})
		return 1, err
	})
	// The same balance summed straight from the covering index, without checkpoints.
	var full []time.Duration
	var fullSum int64
	for range 20 {
		t0 := time.Now()
		require.NoError(t, db.InTenantTx(ctx, pool, tenant, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT coalesce(sum(CASE WHEN direction = 'DEBIT' THEN amount ELSE -amount END), 0)::bigint
				FROM ledger.entries WHERE account_id = $1::uuid AND phase = 'POSTED'`, first.GetBalance().GetAccountId()).Scan(&fullSum)
		}))
		full = append(full, time.Since(t0))
	}
	slices.Sort(full)
	require.Equal(t, first.GetBalance().GetPostedSantim(), fullSum, "the checkpointed balance equals the full sum")

	fmt.Printf("\n=== Ledger benchmark (each timed run %s; gRPC over loopback; durable commits) ===\n", dur)
	fmt.Printf("%-66s %7s %12s %10s %10s %12s %7s %12s %7s\n", "what", "clients", "postings/s", "p50", "p99",
		"pgbench TCP", "ratio", "pgbench sock", "ratio")
	// compare is pgbench's tps for the row's client count and the row's rate over it.
	compare := func(pgRuns map[int]pgRun, r row) (string, string) {
		if p, ok := pgRuns[r.clients]; ok && p.tps > 0 {
			return fmt.Sprintf("%.0f", p.tps), fmt.Sprintf("%.2fx", r.rate/p.tps)
		}
		return "", ""
	}
	for _, r := range rows {
		tcpCol, tcpRatio := compare(pgTCP, r)
		sockCol, sockRatio := compare(pgSocket, r)
		fmt.Printf("%-66s %7d %12.0f %10s %10s %12s %7s %12s %7s\n", r.what, r.clients, r.rate,
			r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), tcpCol, tcpRatio, sockCol, sockRatio)
	}
	fmt.Printf("\npgbench TPC-B-like (scale %d, simple protocol, same server, run after the ledger's runs of the same client count):\n", scale)
	for _, n := range clients {
		fmt.Printf("  %2d clients: TCP (as the ledger connects) %6.0f tps (%s); Unix socket %6.0f tps (%s)\n",
			n, pgTCP[n].tps, pgTCP[n].lat, pgSocket[n].tps, pgSocket[n].lat)
	}
	fmt.Printf("\nBalance reads, account with %d entries (seeded through PostTransactions in %s, %.0f entries/s):\n",
		entries, seedTime.Round(time.Second), float64(seeded)/seedTime.Seconds())
	fmt.Printf("  first read (writes the checkpoint): %s\n", cold.Round(10*time.Microsecond))
	fmt.Printf("  GetBalance via gRPC, 1 client: %.0f reads/s, p50 %s, p99 %s\n", readRate, read50.Round(time.Microsecond), read99.Round(time.Microsecond))
	fmt.Printf("  without checkpoints (index-only sum of all entries): p50 %s, max %s\n",
		full[len(full)/2].Round(10*time.Microsecond), full[len(full)-1].Round(10*time.Microsecond))
}

// TestBenchmarkReportBalanceBatch prints what one GetBalances of 20 accounts costs against 20
// GetBalance calls one after another (a dashboard's savings goals), over gRPC on loopback, each
// account with 200 entries and no checkpoint to start from. It asserts no timing. Run with
// `make bench` (WAGERAIL_BENCH=1).
func TestBenchmarkReportBalanceBatch(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	const accounts, entries = 20, 200
	e := newEnv(t)
	ctx := context.Background()
	tenant := testkit.Unique("bench-balances")
	names := make([]string, accounts)
	for i := range names {
		names[i] = fmt.Sprintf("%s:g%02d", chart.SavingsHeld, i)
	}
	e.ensure(t, tenant, append([]string{"payable-to-employee:e1"}, names...)...)
	for round := range entries {
		batch := &ledgerv1.PostTransactionsRequest{TenantId: tenant}
		for i, n := range names {
			batch.Transactions = append(batch.Transactions, twoLeg("", fmt.Sprintf("bb-%d-%d", round, i), "payable-to-employee:e1", n, int64(100+round)))
		}
		resp, err := e.client.PostTransactions(ctx, batch)
		require.NoError(t, err)
		for _, it := range resp.GetResults() {
			require.NoError(t, ItemError(it))
		}
	}
	req := &ledgerv1.GetBalancesRequest{TenantId: tenant}
	for _, n := range names {
		req.Accounts = append(req.Accounts, &ledgerv1.AccountRef{AccountName: n})
	}
	batched := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			if _, err := e.client.GetBalances(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	oneByOne := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				if _, err := e.client.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: n}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	fmt.Printf("\n=== Balance reads of %d accounts, %d entries each (gRPC over loopback) ===\n", accounts, entries)
	fmt.Printf("  GetBalances, one call of %d accounts: %10d ns/op (%d ops)\n", accounts, batched.NsPerOp(), batched.N)
	fmt.Printf("  GetBalance, %d calls one after another: %10d ns/op (%d ops)\n", accounts, oneByOne.NsPerOp(), oneByOne.N)
	fmt.Printf("  one call is %.1fx faster\n", float64(oneByOne.NsPerOp())/float64(batched.NsPerOp()))
}
