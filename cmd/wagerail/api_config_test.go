package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/api"
	"github.com/wagerail/wagerail/ledger"
)

// The API refuses at start, in one line and before it listens or connects, an adjustment key the
// ledger would refuse (so disputes do not find out at their first adjustment), a negative
// disburse wait (once silently the default), and a disburse wait that does not end before the
// write timeout (the client would get a dropped connection instead of 202 DISBURSING).
func TestAPIChecksAdjustmentKeyAndDisburseWaitAtStart(t *testing.T) {
	base := apiConfig{Addr: "127.0.0.1:0", DatabaseURL: "postgres://wagerail_app:x@127.0.0.1:1/wagerail?connect_timeout=2"}
	short := strings.Repeat("k", ledger.MinAdjustmentKeyBytes-1)
	for name, tc := range map[string]struct {
		mut  func(*apiConfig)
		want string
	}{
		"short adjustment key":          {func(c *apiConfig) { c.AdjustmentKey = short }, "LEDGER_ADJUSTMENT_KEY must be at least 32 bytes"},
		"short previous adjustment key": {func(c *apiConfig) { c.AdjustmentKey, c.AdjustmentKeyPrevious = strings.Repeat("k", 32), short }, "LEDGER_ADJUSTMENT_KEY_PREVIOUS"},
		"negative disburse wait":        {func(c *apiConfig) { c.DisburseWait = -time.Second }, "API_DISBURSE_WAIT must not be negative"},
		"disburse wait past the write timeout": {func(c *apiConfig) { c.DisburseWait, c.Timeouts.Write = 20*time.Second, 10*time.Second },
			"must be less than --write-timeout / API_WRITE_TIMEOUT"},
		"disburse wait equal to the write timeout": {func(c *apiConfig) { c.DisburseWait, c.Timeouts.Write = 30*time.Second, 0 },
			"API_WRITE_TIMEOUT (30s)"},
		"default disburse wait past a short write timeout": {func(c *apiConfig) { c.Timeouts.Write = 10 * time.Second },
			"API_DISBURSE_WAIT (15s)"},
	} {
		cfg := base
		tc.mut(&cfg)
		_, err := cfg.check()
		requireOneLine(t, err, "api: ", tc.want)
		err = runAPI(t.Context(), slog.New(slog.DiscardHandler), cfg, func() { t.Fatalf("%s: ready called", name) })
		requireOneLine(t, err, "api: ", tc.want)
		require.NotContains(t, err.Error(), short, name)
	}
	ok := base
	ok.AdjustmentKey, ok.AdjustmentKeyPrevious = strings.Repeat("k", 32), strings.Repeat("p", 40)
	ok.DisburseWait, ok.Timeouts.Write = 25*time.Second, 30*time.Second
	_, err := ok.check()
	require.NoError(t, err)
}

// The API's shutdown lets a request accepted just before the signal run to its write timeout (a
// disburse waits up to its disburse wait, which is shorter), however the timeout is set; it was
// a fixed 5 s, shorter than the default disburse wait.
func TestAPIShutdownBudgetCoversTheWriteTimeout(t *testing.T) {
	for _, write := range []time.Duration{0, 10 * time.Second, 2 * time.Minute} {
		cfg := apiConfig{Timeouts: api.Timeouts{Write: write}}
		effective := write
		if effective == 0 {
			effective = api.DefaultTimeouts().Write
		}
		require.Greater(t, cfg.shutdownBudget(), effective, "write timeout %s", write)
	}
	require.Equal(t, 5*time.Second, apiConfig{ShutdownTimeout: 5 * time.Second}.shutdownBudget())
}
