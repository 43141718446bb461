package api

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestBenchmarkReportAuth prints (asserts nothing about speed) what sign-in and the request
// pipeline cost: sign-in latency for a wrong password, an unknown e-mail and a success (the first
// two should be alike: no account enumeration by timing), and a signed-in read through the whole
// pipeline. `make bench` runs it.
func TestBenchmarkReportAuth(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	n := 200
	if s, err := strconv.Atoi(os.Getenv("WAGERAIL_BENCH_SIGNINS")); err == nil && s > 0 {
		n = s
	}
	f := newAuthFixture(t)
	owner, _ := f.signUp("bench@example.com", "BUSINESS")
	measure := func(what string, count int, body func(i int) *apiClient, method, path string, payload any, want int) []time.Duration {
		lat := make([]time.Duration, 0, count)
		for i := 0; i < count; i++ {
			if i%9 == 8 {
				f.advance(ruleSignInAccount.Window) // stay under the per-account lockout
			}
			a := body(i)
			start := time.Now()
			rec := a.hostile(method, path, payload)
			lat = append(lat, time.Since(start))
			if rec.Code != want {
				t.Fatalf("%s: %d %s", what, rec.Code, rec.Body.String())
			}
		}
		slices.Sort(lat)
		return lat
	}
	pct := func(l []time.Duration, p int) time.Duration { return l[(len(l)-1)*p/100] }
	fresh := func(i int) *apiClient { a := f.client(); a.ip = fmt.Sprintf("198.51.100.%d", i%250+1); return a }
	wrong := measure("wrong password", n, fresh, http.MethodPost, "/api/auth/sign-in/email",
		map[string]any{"email": "bench@example.com", "password": "not the password"}, http.StatusUnauthorized)
	unknown := measure("unknown e-mail", n, fresh, http.MethodPost, "/api/auth/sign-in/email",
		map[string]any{"email": "nobody@example.com", "password": "not the password"}, http.StatusUnauthorized)
	ok := measure("success", n, fresh, http.MethodPost, "/api/auth/sign-in/email",
		map[string]any{"email": "bench@example.com", "password": testPassword}, http.StatusOK)
	reads := 10 * n
	start := time.Now()
	read := measure("get-session", reads, func(int) *apiClient { return owner }, http.MethodGet, "/api/auth/get-session", nil, http.StatusOK)
	elapsed := time.Since(start)

	t.Logf("auth (1 client; each response is validated against the contract, which the figures include)")
	t.Logf("%-32s %10s %10s", "", "p50", "p99")
	for _, r := range []struct {
		what string
		lat  []time.Duration
	}{{"sign-in, wrong password", wrong}, {"sign-in, unknown e-mail", unknown}, {"sign-in, success", ok}, {"get-session (full pipeline)", read}} {
		t.Logf("%-32s %10s %10s", r.what, pct(r.lat, 50).Round(time.Microsecond), pct(r.lat, 99).Round(time.Microsecond))
	}
	t.Logf("unknown/wrong-password p50 ratio: %.2f (1.00 = indistinguishable)", float64(pct(unknown, 50))/float64(pct(wrong, 50)))
	t.Logf("get-session throughput: %.0f req/s", float64(reads)/elapsed.Seconds())
}
