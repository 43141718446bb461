package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employees"
)

// TestBenchmarkReportEmployeeImport prints (asserts nothing about speed) how long a full
// bulk import of employees.MaxImportRows rows takes through the whole pipeline: a dry run, the
// import itself (employees, one audit row and one event each, in one transaction), and the
// same file again (every row a duplicate). The requests go straight to the engine: the
// contract client's validation of a 10,000-row request and answer would dominate the figures.
// `make bench` runs it.
func TestBenchmarkReportEmployeeImport(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	w := newEmpWorld(t)
	n := employees.MaxImportRows
	rows := make([][]string, 0, n)
	for i := 1; i <= n; i++ {
		rows = append(rows, w.importCells(fmt.Sprintf("BENCH%07d", i)))
	}
	file := csvFile(t, importCols, rows...)
	send := func(query string) (employeeImportJSON, time.Duration) {
		req := httptest.NewRequest(http.MethodPost, importPath+query, strings.NewReader(file))
		req.Header.Set("Content-Type", "text/csv")
		req.RemoteAddr = "192.0.2.10:40000"
		req.AddCookie(w.owner.cookie)
		rec := httptest.NewRecorder()
		start := time.Now()
		w.f.srv.Engine.ServeHTTP(rec, req)
		took := time.Since(start)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[employeeImportJSON](t, rec), took
	}
	dry, dryTook := send("?dryRun=true")
	require.Equal(t, n, dry.Valid)
	res, took := send("")
	require.Equal(t, n, res.Created)
	again, againTook := send("")
	require.Equal(t, n, again.Failed)

	t.Logf("employee bulk import, %d rows, %.1f MB file", n, float64(len(file))/1e6)
	t.Logf("%-36s %10s %12s", "", "time", "rows/s")
	for _, r := range []struct {
		what string
		took time.Duration
	}{{"dry run (parse, validate, check ids)", dryTook}, {"import (write all, audit, events)", took}, {"same file again (all duplicates)", againTook}} {
		t.Logf("%-36s %10s %12.0f", r.what, r.took.Round(time.Millisecond), float64(n)/r.took.Seconds())
	}
}
