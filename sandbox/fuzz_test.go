package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSandboxHTTP sends any method, path and body to the bank: the answer is success or the
// caller's error (never a 5xx), an error of the bank's own is the envelope with a code, and no
// message names a Go type.
func FuzzSandboxHTTP(f *testing.F) {
	allowed := "http://127.0.0.1:8080/api/integration/bank-callback/sandbox"
	e := newEnv(f, func(c *Config) { c.CallbackAllowlist = []string{allowed} })
	e.openAccount("HP-SRC", "Source", 1_000_000_000)
	e.openAccount("HP-DST", "Destination", 0)

	seeds := []struct{ method, path, body string }{
		{"POST", "/api/v1/transfers", transferJSON(nil)},
		{"POST", "/api/v1/transfer-batches", batchJSON(nil)},
		{"POST", "/api/v1/sandbox/accounts", accountBody(nil)},
		{"POST", "/api/v1/sandbox/accounts/HP-DST/fund", `{"amountSantim":1}`},
		{"POST", "/api/v1/sandbox/accounts/HP-NEW/close", ""},
		{"PUT", "/api/v1/sandbox/faults/HP-DST", `{"latencyMs":1}`},
		{"DELETE", "/api/v1/sandbox/faults?all=true", ""},
		{"GET", "/api/v1/statements?account=HP-SRC&format=camt053", ""},
		{"GET", "/api/v1/sandbox/transfers?limit=5&status=PENDING", ""},
		{"GET", "/api/v1/sandbox/callbacks?transferId=00000000-0000-4000-8000-000000000000", ""},
		{"GET", "/api/v1/sandbox/faults", ""},
		{"GET", "/healthz", ""},
	}
	// Every hostile probe of the table test is a seed as well.
	for _, p := range hostileProbes(allowed) {
		if len(p.body) > 4096 {
			continue // the oversized probes are the table test's; seeds stay small and fast
		}
		seeds = append(seeds, struct{ method, path, body string }{p.method, p.path, p.body})
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, []byte(s.body))
	}

	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		// Faults a probe set are cleared before the next one, so no input is delayed or failed
		// on purpose by an earlier one: the property holds without depending on timing.
		defer func() { require.NoError(t, e.bank.faults.clearAll(context.Background())) }()
		r, err := e.trySend(method, path, body)
		if err != nil {
			// A request Go's client refuses to build or send (an invalid method or URL) never
			// reached the bank.
			t.Skip(err)
		}
		require.Less(t, r.Status, 500, "%s %q: %s", method, path, r.Body)
		if r.Status >= 400 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			var env errorBody
			require.NoError(t, json.Unmarshal(r.Body, &env), "%s %q: %s", method, path, r.Body)
			require.NotEmpty(t, env.Error.Code)
			requireNoGoWords(t, method+" "+path, r.Body)
		}
	})
}
