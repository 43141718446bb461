package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildBinary compiles the real wagerail binary once for the subprocess tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "wagerail-bin-")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "wagerail"), ".")
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return filepath.Join(binDir, "wagerail")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type devProc struct {
	cmd     *exec.Cmd
	apiURL  string
	dataDir string
	out     *syncBuffer
	errOut  syncBuffer
	ready   chan struct{}
}

// syncBuffer collects the child's stderr (written by exec's copier goroutine, read by the test).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func addr(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }

// startDev runs `wagerail dev` on free ports with no DATABASE_URL / TEMPORAL_ADDRESS, so it brings
// up its own Postgres and Temporal exactly as `make run` does.
func startDev(t *testing.T, bin, dataDir string) *devProc {
	t.Helper()
	api := addr(freePort(t))
	cmd := exec.Command(bin, "dev",
		"--data-dir", dataDir,
		"--pg-port", strconv.Itoa(freePort(t)),
		"--temporal-port", strconv.Itoa(freePort(t)),
		"--temporal-ui-port", strconv.Itoa(freePort(t)),
		"--api-addr", api,
		"--ledger-grpc-addr", addr(freePort(t)),
		"--ledger-metrics-addr", addr(freePort(t)),
		"--gateway-grpc-addr", addr(freePort(t)),
		"--gateway-metrics-addr", addr(freePort(t)),
		"--sandbox-addr", addr(freePort(t)),
	)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "DATABASE_URL=") && !strings.HasPrefix(e, "DATABASE_OWNER_URL=") && !strings.HasPrefix(e, "TEMPORAL_ADDRESS=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p0 := &devProc{}
	cmd.Stderr = &p0.errOut
	require.NoError(t, cmd.Start())
	p := p0
	p.cmd, p.apiURL, p.dataDir, p.out, p.ready = cmd, "http://"+api, dataDir, &syncBuffer{}, make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			_, _ = p.out.Write([]byte(sc.Text() + "\n"))
			if !signalled && strings.HasPrefix(sc.Text(), "wagerail dev: ready in") {
				signalled = true
				close(p.ready)
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	select {
	case <-p.ready:
	case <-time.After(90 * time.Second):
		// Ask Go for every goroutine's stack so the hang is diagnosable.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		_ = cmd.Wait()
		t.Fatalf("dev stack not ready after 90s; output:\n%s\nstderr tail:\n%s", p.out.String(), tail(p.errOut.String(), 200))
	}
	return p
}

func (p *devProc) readyz(t *testing.T) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(p.apiURL + "/api/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

func (p *devProc) waitReadyz(t *testing.T, want int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := p.readyz(t)
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz stayed %d (want %d): %v", code, want, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *devProc) postgresPID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dataDir, "pg", "data", "postmaster.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	require.NoError(t, err)
	return pid
}

// stop sends SIGTERM and requires a clean exit (code 0) within 10 seconds.
func (p *devProc) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "dev exited non-zero; output:\n%s", p.out.String())
	case <-time.After(10 * time.Second):
		// Ask Go for every goroutine's stack so the hang is diagnosable.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		<-done
		t.Fatalf("dev did not stop within 10s; stderr tail:\n%s", tail(p.errOut.String(), 120))
	}
	return time.Since(start)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// processesMentioning lists live processes whose command line contains s (our data dir).
func processesMentioning(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cl := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cl, s) {
			out = append(out, fmt.Sprintf("%s: %s", e.Name(), cl))
		}
	}
	return out
}

func TestDevStackReadyThenDegradesThenStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack")
	}
	bin := buildBinary(t)
	dataDir := filepath.Join(t.TempDir(), "data")

	// First run: creates the cluster and the Temporal database, everything ready.
	p := startDev(t, bin, dataDir)
	body := p.waitReadyz(t, http.StatusOK)
	deps := body["dependencies"].(map[string]any)
	for _, d := range []string{"database", "temporal", "ledger", "gateway"} {
		require.Equal(t, "up", deps[d].(map[string]any)["status"], d)
	}
	require.FileExists(t, filepath.Join(dataDir, "temporal.db"))
	for _, line := range []string{"postgres", "temporal", "sandbox", "ledger", "gateway", "api", "worker", "API", "Temporal UI", "Bank sandbox"} {
		require.Contains(t, p.out.String(), line)
	}

	// Postgres goes away: readiness turns 503 and names the database.
	pgPID := p.postgresPID(t)
	require.NoError(t, syscall.Kill(pgPID, syscall.SIGINT))
	body = p.waitReadyz(t, http.StatusServiceUnavailable)
	require.Contains(t, body["error"].(map[string]any)["message"], "database")
	p.stop(t)
	require.Empty(t, processesMentioning(dataDir), "processes left behind")

	// Second run reuses the data dir; a normal SIGTERM stops everything, postgres included.
	p = startDev(t, bin, dataDir)
	p.waitReadyz(t, http.StatusOK)
	pgPID = p.postgresPID(t)
	took := p.stop(t)
	t.Logf("graceful stop took %s", took)
	require.False(t, processAlive(pgPID), "postgres %d survived shutdown", pgPID)
	require.Empty(t, processesMentioning(dataDir), "processes left behind")
}

func TestConfigErrorsAreOneClearLine(t *testing.T) {
	bin := buildBinary(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	dataDir := t.TempDir()
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"unknown command", []string{"nope"}, nil, "unknown command"},
		{"bad flag", []string{"api", "--no-such-flag"}, nil, "no-such-flag"},
		{"api without database", []string{"api"}, []string{"DATABASE_URL="}, "DATABASE_URL"},
		{"api bad database url", []string{"api", "--addr", "127.0.0.1:0", "--database-url", "postgres://%zz"}, nil, "database"},
		{"api port in use", []string{"api", "--addr", busy.Addr().String(), "--database-url", "postgres://x@127.0.0.1:1/x"}, nil, "in use"},
		{"bad env value", []string{"dev"}, []string{"WAGERAIL_PG_PORT=notaport"}, "WAGERAIL_PG_PORT"},
		{"missing postgres binaries", []string{"dev", "--data-dir", dataDir}, []string{"PG_BINDIR=/nonexistent", "DATABASE_URL=", "TEMPORAL_ADDRESS="}, "PG_BINDIR"},
		{"postgres port in use", []string{"dev", "--data-dir", dataDir, "--pg-port", strconv.Itoa(busyPort)}, []string{"DATABASE_URL=", "TEMPORAL_ADDRESS="}, "in use"},
		{"worker without database", []string{"worker"}, []string{"DATABASE_URL="}, "DATABASE_URL"},
		{"worker without temporal", []string{"worker", "--database-url", "postgres://x@127.0.0.1:1/x", "--temporal-address", "127.0.0.1:1", "--temporal-dial-timeout", "1s"}, nil, "TEMPORAL_ADDRESS"},
		{"migrate without url", []string{"migrate", "up"}, []string{"DATABASE_OWNER_URL="}, "DATABASE_OWNER_URL"},
		{"migrate down without N", []string{"migrate", "down", "--database-owner-url", "postgres://x@127.0.0.1:1/x"}, nil, "number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			cmd.Env = append(os.Environ(), tc.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr // stdout may carry progress lines; the error is stderr's one line
			err := cmd.Run()
			require.Error(t, err, "want non-zero exit")
			out := stderr.String()
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 1, "want one line, got:\n%s", out)
			require.Contains(t, lines[0], tc.want)
		})
	}
}

func TestEveryCommandHasHelpWithEnvironment(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range commands() {
		out, err := exec.Command(bin, c.Name, "--help").CombinedOutput()
		require.NoError(t, err, c.Name)
		require.Contains(t, string(out), "Usage: wagerail "+c.Name, c.Name)
		nflags := 0
		c.Flags.VisitAll(func(*flag.Flag) { nflags++ })
		if nflags > 0 {
			require.Contains(t, string(out), "environment", c.Name)
		}
	}
	out, err := exec.Command(bin, "api", "--help").CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "DATABASE_URL")
	require.Contains(t, string(out), ":8080")
}
