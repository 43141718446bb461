package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestClientBreakerLogsItsStateChanges: a service client built as the binary builds it logs its
// breaker opening (warn, with the client's name) once the service is unreachable five times in a
// row — the log is how an operator learns why every call now fails at once.
func TestClientBreakerLogsItsStateChanges(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := logging.New(&buf, slog.LevelInfo, "test")
	c, err := ledger.Dial("127.0.0.1:1", ledger.ClientOptions{Breaker: clientBreaker(log, "ledger")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for range 5 {
		_, err := c.GetAccount(context.Background(), &ledgerv1.GetAccountRequest{TenantId: "org_1", AccountName: "fee-income"})
		require.Error(t, err)
	}
	require.Equal(t, "open", c.BreakerState())
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == "service client circuit breaker changed state" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 1, buf.String())
	require.Equal(t, "WARN", lines[0]["level"])
	require.Equal(t, []any{"ledger", "closed", "open"}, []any{lines[0]["client"], lines[0]["from"], lines[0]["to"]})
}
