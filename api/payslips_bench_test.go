package api

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// TestBenchmarkReportPayslipArchive prints (asserts nothing about speed or size) what streaming
// GET /api/payroll/<id>/payslips.zip costs for runs of 1,000 and WAGERAIL_BENCH_PAYSLIPS
// employees (default 10,000; half with Amharic names): the time, the archive's size, and the
// process's heap while it streams — the peak of HeapInuse sampled every 10 ms above the heap
// before the request, and the bytes allocated in all. The answer goes to a file through a writer
// that keeps nothing, so the figures are the server's alone; what it asserts is the outcome: the
// archive opens, one PDF per entry, the first and the last hold their employee's name.
// `make bench` runs it.
func TestBenchmarkReportPayslipArchive(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	n := envInt("WAGERAIL_BENCH_PAYSLIPS", 10_000)
	t.Logf("payslip archive: the API in process over a real Postgres, PDFs rendered and zipped as they stream (%d per page), GOMAXPROCS %d",
		payslipArchivePage, runtime.GOMAXPROCS(0))
	for _, size := range []int{1_000, n} {
		k := newPayrollKit(t, fmt.Sprintf("payslip-bench-%d", size))
		setup := time.Now()
		k.benchEmployees(t, size-1) // with the kit's own
		run := decode[payrollRunOut](t, k.clerk.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"}))
		rec := k.clerk.call(http.MethodPost, "/api/payroll/"+run.ID+"/calculate", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, size, decode[payrollRunOut](t, rec).EmployeeCount)
		setupTook := time.Since(setup)

		path := filepath.Join(t.TempDir(), "payslips.zip")
		f, err := os.Create(path)
		require.NoError(t, err)
		w := &discardingWriter{header: http.Header{}, body: f}
		req := httptest.NewRequest(http.MethodGet, "/api/payroll/"+run.ID+"/payslips.zip", nil)
		req.RemoteAddr = "192.0.2.85:40000"
		req.AddCookie(k.viewer.cookie)

		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		done := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Go(func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		})
		start := time.Now()
		k.f.srv.Engine.ServeHTTP(w, req)
		took := time.Since(start)
		close(done)
		sampler.Wait()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		require.NoError(t, f.Close())
		require.Equal(t, http.StatusOK, w.status)

		zr, err := zip.OpenReader(path)
		require.NoError(t, err)
		require.Len(t, zr.File, size, "one PDF per entry")
		for _, i := range []int{0, size - 1} {
			rc, err := zr.File[i].Open()
			require.NoError(t, err)
			raw, err := io.ReadAll(rc)
			require.NoError(t, err)
			require.NoError(t, rc.Close())
			text := extractPDF(t, raw)
			require.True(t, strings.Contains(text, "Abebe Kebede") || strings.Contains(text, amharicName), "%s: %.200q", zr.File[i].Name, text)
		}
		require.NoError(t, zr.Close())

		peakAbove := int64(peak.Load()) - int64(before.HeapInuse)
		t.Logf("%6d payslips (setup, not measured: %.1f s): %6.2f s, %.2f ms each; archive %.1f MiB (%.1f KiB each); heap in use before %.1f MiB, peak %.1f MiB (+%.1f MiB); allocated %.0f MiB in all (%.0f KiB per payslip); %d GCs",
			size, setupTook.Seconds(), took.Seconds(), float64(took.Milliseconds())/float64(size), float64(w.n)/(1<<20), float64(w.n)/1024/float64(size),
			float64(before.HeapInuse)/(1<<20), float64(peak.Load())/(1<<20), float64(peakAbove)/(1<<20),
			float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(after.TotalAlloc-before.TotalAlloc)/1024/float64(size), after.NumGC-before.NumGC)
	}
}

// benchEmployees inserts n employees of the kit's tenant in one statement, every other one with
// an Amharic name, all paid from before the period.
func (k *payrollKit) benchEmployees(t *testing.T, n int) {
	t.Helper()
	ctx := tenancy.WithTenant(context.Background(), k.tenant)
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name)
			SELECT 'emp_bench_' || lpad(i::text, 6, '0'), $1, 'Abebe', 'Kebede',
				CASE WHEN i % 2 = 0 THEN $2 ELSE 'Abebe Kebede' END, 'BENCH' || lpad(i::text, 8, '0'), '2024-01-01',
				800000 + (i % 100) * 10000, 'cbe', '1000' || lpad(i::text, 9, '0'), 'Abebe Kebede'
			FROM generate_series(1, $3::int) AS i`, k.tenant, amharicName, n)
		return err
	}))
}

// discardingWriter is an http.ResponseWriter that writes the body to a file and keeps none of
// it in memory, and flushes (as the archive handler asks between pages).
type discardingWriter struct {
	header http.Header
	status int
	body   io.Writer
	n      int64
}

func (w *discardingWriter) Header() http.Header { return w.header }
func (w *discardingWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *discardingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.body.Write(b)
	w.n += int64(n)
	return n, err
}
func (w *discardingWriter) Flush() {}
