package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSandboxHTTP sends any method, path and body to the bank (the national ID registry's routes
// included): the answer is success or the caller's error (never a 5xx), an error of the bank's
// own is the envelope with a code, and no message names a Go type; a refusal (4xx) writes
// nothing (no row, no change to the identity register), and after every input the books
// balance (checkBooks: balances follow the statement lines, none negative, money conserved).
func FuzzSandboxHTTP(f *testing.F) {
	allowed := "http://127.0.0.1:8080/api/integration/bank-callback/sandbox"
	e := newEnv(f, func(c *Config) { c.CallbackAllowlist = []string{allowed} })
	e.openAccount("HP-SRC", "Source", 1_000_000_000)
	e.openAccount("HP-DST", "Destination", 0)
	require.Equal(f, 201, e.do("POST", "/api/v1/sandbox/identities", CreateIdentityRequest{NationalID: "HPSEEDED01",
		FullName: "Seeded Person", DateOfBirth: "1980-05-06"}).Status)

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
		{"POST", "/api/v1/sandbox/identities", identityBody(nil)},
		{"POST", "/api/v1/sandbox/identities", identityBody(map[string]string{"nationalId": `"HPID000001"`, "status": `"DECEASED"`})},
		{"GET", "/api/v1/identities/HPSEEDED01", ""},
		{"GET", "/api/v1/identities/HPID999999", ""},
		{"POST", "/api/v1/sandbox/identities/HPSEEDED01/revoke", ""},
		{"PUT", "/api/v1/sandbox/faults/" + RegistryScope, `{"errorRatePercent":100}`},
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
		before, register := e.rowCounts(t), e.registry(t)
		r, err := e.trySend(method, path, body)
		if err != nil {
			// A request Go's client refuses to build or send (an invalid method or URL) never
			// reached the bank.
			t.Skip(err)
		}
		require.Less(t, r.Status, 500, "%s %q: %s", method, path, r.Body)
		if r.Status >= 400 {
			require.Equal(t, before, e.rowCounts(t), "%s %q answered %d and wrote: %s", method, path, r.Status, r.Body)
			require.Equal(t, register, e.registry(t), "%s %q answered %d and changed the registry: %s", method, path, r.Status, r.Body)
		}
		e.checkBooksT(t)
		if r.Status >= 400 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			var env errorBody
			require.NoError(t, json.Unmarshal(r.Body, &env), "%s %q: %s", method, path, r.Body)
			require.NotEmpty(t, env.Error.Code)
			requireNoGoWords(t, method+" "+path, r.Body)
		}
	})
}

// rowCounts counts every table a request can write to (faults included: the deferred clear runs
// after the comparison). Nothing else writes while the fuzzer runs: transfers settle an hour
// after they are made, and the deliverer only updates callbacks it was given.
// registry is the national ID register as it stands.
func (e *env) registry(t testing.TB) map[string]Identity {
	t.Helper()
	m, err := e.bank.identities.snapshot(context.Background())
	require.NoError(t, err)
	return m
}

func (e *env) rowCounts(t testing.TB) [7]int {
	t.Helper()
	var c [7]int
	require.NoError(t, e.db.App.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM sandbox.transfers), (SELECT count(*) FROM sandbox.batches),
		(SELECT count(*) FROM sandbox.statement_lines), (SELECT count(*) FROM sandbox.callbacks),
		(SELECT count(*) FROM sandbox.accounts), (SELECT count(*) FROM sandbox.accounts WHERE status = 'ACTIVE'),
		(SELECT count(*) FROM sandbox.faults)`).Scan(&c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6]))
	return c
}

// checkBooksT is checkBooks reporting to t (the fuzz input's test), not to the env's.
func (e *env) checkBooksT(t testing.TB) {
	t.Helper()
	saved := e.t
	e.t = t
	defer func() { e.t = saved }()
	e.checkBooks()
}
