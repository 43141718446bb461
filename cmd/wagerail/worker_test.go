package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/freeport"
)

// The worker serves /metrics and /healthz on its own port from the moment it starts: while it
// waits for Temporal, /healthz says so (503) and /metrics already answers.
func TestWorkerServesMetricsAndHealthWhileStarting(t *testing.T) {
	port, err := freeport.One()
	require.NoError(t, err)
	cfg := defaultWorkerConfig()
	cfg.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail?connect_timeout=2"
	cfg.TemporalAddress = "127.0.0.1:1" // nothing there: the worker keeps trying
	cfg.DialTimeout = time.Minute
	cfg.MetricsAddr = "127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runWorker(ctx, slog.New(slog.DiscardHandler), cfg, func() { t.Error("ready while Temporal is unreachable") })
	}()

	base := "http://" + cfg.MetricsAddr
	var status int
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		status, body = get(base + "/healthz")
		if status != 0 {
			break
		}
		time.Sleep(50 * time.Millisecond) // the listener is bound before runWorker dials anything
	}
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	require.JSONEq(t, `{"status":"starting"}`, body)
	status, body = get(base + "/metrics")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "go_goroutines")

	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not stop")
	}
	_, err = net.Dial("tcp", cfg.MetricsAddr)
	require.Error(t, err, "the metrics port is released on stop")
}

func TestWorkerMetricsPortInUseIsOneLine(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cfg := defaultWorkerConfig()
	cfg.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail"
	cfg.MetricsAddr = busy.Addr().String()
	err = runWorker(context.Background(), slog.New(slog.DiscardHandler), cfg, func() { t.Error("ready") })
	require.Error(t, err)
	require.Contains(t, err.Error(), "--metrics-addr")
	require.NotContains(t, strings.TrimSpace(err.Error()), "\n")
}

// get returns the status and body, status 0 when nothing answered.
func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
