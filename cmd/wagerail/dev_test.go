//go:build !noembed

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

type devProc struct {
	cmd     *exec.Cmd
	apiURL  string
	dataDir string
	out     *readyWatcher
	errOut  testkit.SyncBuffer
	exited  chan struct{} // closed when the process has exited; waitErr is then set
	waitErr error
}

// readyWatcher collects the child's stdout and closes ready at the line dev prints once every
// component is up.
type readyWatcher struct {
	testkit.SyncBuffer
	ready chan struct{}
	once  sync.Once
}

func (w *readyWatcher) Write(p []byte) (int, error) {
	n, err := w.SyncBuffer.Write(p)
	// The last line dev prints once up: the URLs and the demo's credentials are out by then.
	if strings.Contains(w.String(), "Ctrl-C stops everything.") {
		w.once.Do(func() { close(w.ready) })
	}
	return n, err
}

// devPorts claims the ten ports a dev stack listens on. freeport keeps them away from the kernel's
// ephemeral range and from every other test process, so nothing takes one before dev binds it.
func devPorts(t *testing.T) []int {
	t.Helper()
	ports, err := freeport.Take(10)
	require.NoError(t, err)
	return ports
}

// occupyDefaultPorts listens, for the rest of the test, on every default address a `make run`
// stack holds that is still free, so a case that falls back to a default fails here as it would
// beside a running stack. An address already taken is the same situation.
func occupyDefaultPorts(t *testing.T) {
	t.Helper()
	for _, p := range []int{8080, 8090, 7233, 8233, 50051, 50052, 50053, 50054, 50055, 54329} {
		l, err := net.Listen("tcp", addr(p))
		if err != nil {
			continue
		}
		t.Cleanup(func() { _ = l.Close() })
	}
}

// isolatedListenEnv points every address a subcommand listens on (and the gRPC services it dials)
// away from the defaults, which a developer's `make run` holds while the suite runs beside it.
func isolatedListenEnv(t *testing.T) []string {
	t.Helper()
	ports := devPorts(t)
	return []string{
		"WAGERAIL_PG_PORT=" + strconv.Itoa(ports[1]),
		"WAGERAIL_TEMPORAL_PORT=" + strconv.Itoa(ports[2]),
		"WAGERAIL_TEMPORAL_UI_PORT=" + strconv.Itoa(ports[3]),
		"API_ADDR=" + addr(ports[0]),
		"LEDGER_GRPC_ADDR=" + addr(ports[4]),
		"LEDGER_METRICS_ADDR=" + addr(ports[5]),
		"GATEWAY_GRPC_ADDR=" + addr(ports[6]),
		"GATEWAY_METRICS_ADDR=" + addr(ports[7]),
		"SANDBOX_ADDR=" + addr(ports[8]),
		"WORKER_METRICS_ADDR=" + addr(ports[9]),
		"LEDGER_ADDR=127.0.0.1:1",
		"GATEWAY_ADDR=127.0.0.1:1",
	}
}

// launchDev runs `wagerail dev` with no DATABASE_URL / TEMPORAL_ADDRESS, so it brings up its own
// Postgres and Temporal exactly as `make run` does, and waits until it is ready or has exited.
// extra flags come last and override the claimed ports.
func launchDev(t *testing.T, bin, dataDir string, extra ...string) *devProc {
	t.Helper()
	return launchDevWith(t, bin, dataDir, devLaunch{ports: devPorts(t)}, extra...)
}

// devLaunch is how launchDevWith starts dev: on which ten ports (devPorts), and whether as the
// leader of its own process group (so a crash drill can SIGKILL the group; the process then dies
// with the test binary too).
type devLaunch struct {
	ports    []int
	ownGroup bool
}

func launchDevWith(t *testing.T, bin, dataDir string, l devLaunch, extra ...string) *devProc {
	t.Helper()
	ports := l.ports
	api := addr(ports[0])
	args := []string{"dev",
		"--data-dir", dataDir,
		"--pg-port", strconv.Itoa(ports[1]),
		"--temporal-port", strconv.Itoa(ports[2]),
		"--temporal-ui-port", strconv.Itoa(ports[3]),
		"--api-addr", api,
		"--ledger-grpc-addr", addr(ports[4]),
		"--ledger-metrics-addr", addr(ports[5]),
		"--gateway-grpc-addr", addr(ports[6]),
		"--gateway-metrics-addr", addr(ports[7]),
		"--sandbox-addr", addr(ports[8]),
		"--worker-metrics-addr", addr(ports[9]),
	}
	cmd := exec.Command(bin, append(args, extra...)...)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "DATABASE_URL=") && !strings.HasPrefix(e, "DATABASE_OWNER_URL=") && !strings.HasPrefix(e, "TEMPORAL_ADDRESS=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	if l.ownGroup {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	p := &devProc{cmd: cmd, apiURL: "http://" + api, dataDir: dataDir, out: &readyWatcher{ready: make(chan struct{})}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, &p.errOut
	require.NoError(t, cmd.Start())
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		if l.ownGroup {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		<-p.exited
	})
	select {
	case <-p.out.ready:
	case <-p.exited:
	case <-time.After(90 * time.Second):
		// Ask Go for every goroutine's stack so the hang is diagnosable.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		<-p.exited
		t.Fatalf("dev stack not ready after 90s; output:\n%s\nstderr tail:\n%s", p.out.String(), tail(p.errOut.String(), 200))
	}
	return p
}

// startDev starts a dev stack (extra flags appended) and fails the test at once if dev exits
// instead of getting ready. A bind conflict (a port taken by a process outside the test's
// control) gets a fresh start on new ports, twice at most.
func startDev(t *testing.T, bin, dataDir string, extra ...string) *devProc {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p := launchDev(t, bin, dataDir, extra...)
		if p = startedDev(t, p, attempt); p != nil {
			return p
		}
	}
}

// startedDev returns p when it got ready, nil when it exited on a bind conflict and attempt may
// be retried on new ports; otherwise it fails the test.
func startedDev(t *testing.T, p *devProc, attempt int) *devProc {
	t.Helper()
	select {
	case <-p.exited:
	default:
		return p
	}
	if attempt < 3 && strings.Contains(p.errOut.String(), "address already in use") {
		t.Logf("attempt %d: a port was taken, starting again on new ports: %s", attempt, lastLine(p.errOut.String()))
		return nil
	}
	t.Fatalf("dev exited before it was ready (%v); output:\n%s\nstderr tail:\n%s", p.waitErr, p.out.String(), tail(p.errOut.String(), 50))
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
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
	select {
	case <-p.exited:
		require.NoError(t, p.waitErr, "dev exited non-zero; output:\n%s", p.out.String())
	case <-time.After(10 * time.Second):
		// Ask Go for every goroutine's stack so the hang is diagnosable.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		<-p.exited
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
	bin := testkit.Binary(t)
	dataDir := filepath.Join(testkit.DataDir(t), "data")

	// A component that cannot start (here the ledger, on the address the sandbox already holds,
	// after Postgres and Temporal are up) stops the whole stack at once: non-zero exit, its one
	// error line last on stderr, nothing left running.
	ports := devPorts(t)
	t0 := time.Now()
	p := launchDev(t, bin, dataDir, "--no-demo", "--sandbox-addr", addr(ports[0]), "--ledger-grpc-addr", addr(ports[0]))
	select {
	case <-p.exited:
	default:
		t.Fatalf("dev got ready with the ledger on the sandbox's address; output:\n%s", p.out.String())
	}
	t.Logf("dev gave up in %s", time.Since(t0).Round(time.Millisecond))
	require.Error(t, p.waitErr)
	last := lastLine(p.errOut.String())
	require.True(t, strings.HasPrefix(last, "wagerail: ledger: "), "last stderr line: %s", last)
	require.Contains(t, last, "address already in use")
	require.Contains(t, p.out.String(), "sandbox    ready", "the sandbox started before the ledger failed")
	require.NotContains(t, p.out.String(), "wagerail dev: ready")
	require.Empty(t, processesMentioning(dataDir), "processes left behind")

	// First full run: creates the Temporal database, everything ready; no demo (demo_test.go
	// runs the default), so nothing is seeded.
	p = startDev(t, bin, dataDir, "--no-demo")
	body := p.waitReadyz(t, http.StatusOK)
	deps := body["dependencies"].(map[string]any)
	for _, d := range []string{"database", "temporal", "ledger", "gateway"} {
		require.Equal(t, "up", deps[d].(map[string]any)["status"], d)
	}
	require.FileExists(t, filepath.Join(dataDir, "temporal.db"))
	for _, line := range []string{"postgres", "temporal", "sandbox", "ledger", "gateway", "api", "worker", "API", "Temporal UI", "Bank sandbox", "Worker"} {
		require.Contains(t, p.out.String(), line)
	}
	// The worker's own port serves its metrics, the outbox relay's among them (on in dev).
	m := regexp.MustCompile(`Worker\s+metrics: (http://\S+/metrics)`).FindStringSubmatch(p.out.String())
	require.NotNil(t, m, "no worker metrics URL in:\n%s", p.out.String())
	resp, err := http.Get(m[1])
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(metrics), "svc_outbox_oldest_unpublished_age_seconds")
	// The worker registered its consumers on the relay (each one's failure series starts at 0).
	require.Contains(t, string(metrics), `svc_outbox_consumer_failures_total{consumer="event-log"} 0`)
	requireNoDemo(t, p)
	// make run has the daily reconciliation over every tenant, with no list to give, and runs it
	// once at the first start (none had succeeded yet): its heartbeat gauge leaves 0.
	require.Eventually(t, func() bool {
		return strings.Contains(p.errOut.String(), `"msg":"schedule ensured","process":"dev","component":"worker","schedule":"reconcile-daily"`) &&
			lastReconcileSuccess(t, m[1]) > 0
	}, 2*time.Minute, 500*time.Millisecond, "stderr tail:\n%s", tail(p.errOut.String(), 20))

	// The developer inbox: printed beside the URLs, and where a sign-up's verification e-mail lands
	// with its link on the API's URL.
	inbox := filepath.Join(dataDir, notify.DevInboxFile)
	require.Regexp(t, `Dev inbox\s+`+regexp.QuoteMeta(inbox), p.out.String())
	signUp, err := json.Marshal(map[string]any{"email": "dev@example.org", "password": "a long enough password", "name": "Dev",
		"organization": map[string]string{"name": "Dev Co", "kind": "BUSINESS"}})
	require.NoError(t, err)
	resp, err = http.Post(p.apiURL+"/api/auth/sign-up/email", "application/json", bytes.NewReader(signUp))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	msg, err := notify.Latest(inbox, "dev@example.org", notify.VerifyEmail)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(msg.Secret, p.apiURL+"/verify-email?token="), msg.Secret)
	// A demo request from the public form is mailed, by the worker's sales consumer, to the dev
	// sales address in the same inbox.
	require.Regexp(t, `Sales alerts\s+new demo requests mailed to `+regexp.QuoteMeta(devSalesEmail), p.out.String())
	form, err := json.Marshal(map[string]any{"name": "Almaz Bekele", "email": "almaz@example.org", "company": "Abyssinia Textiles",
		"message": "We pay 250 people monthly."})
	require.NoError(t, err)
	resp, err = http.Post(p.apiURL+"/api/demo-requests", "application/json", bytes.NewReader(form))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Eventually(t, func() bool {
		m, err := notify.Latest(inbox, devSalesEmail, notify.Notification)
		return err == nil && m.Subject == "Demo request: Abyssinia Textiles (Almaz Bekele)" && strings.Contains(m.Text, "> We pay 250 people monthly.")
	}, time.Minute, 100*time.Millisecond, "stderr tail:\n%s", tail(p.errOut.String(), 20))

	// The admin commands find the running stack's private cluster by the data dir alone: a fresh
	// install fails the checks (no platform admin) until create-platform-admin made one.
	dataEnv := []string{"WAGERAIL_DATA_DIR=" + dataDir}
	_, stderr, code := runAdminBinary(t, bin, t.TempDir(), dataEnv, "check")
	require.Equal(t, 2, code, stderr)
	out, stderr, code := runAdminBinary(t, bin, t.TempDir(), dataEnv, "create-platform-admin", "--email", "root@example.org")
	require.Zero(t, code, stderr)
	require.Contains(t, out, `"setupLink": "http://127.0.0.1:8080/setup-account?token=`)
	_, stderr, code = runAdminBinary(t, bin, t.TempDir(), dataEnv, "check")
	require.Zero(t, code, stderr)

	// Postgres goes away: readiness turns 503 and names the database.
	pgPID := p.postgresPID(t)
	require.NoError(t, syscall.Kill(pgPID, syscall.SIGINT))
	body = p.waitReadyz(t, http.StatusServiceUnavailable)
	require.Contains(t, body["error"].(map[string]any)["message"], "database")
	p.stop(t)
	require.Empty(t, processesMentioning(dataDir), "processes left behind")

	// Second run reuses the data dir; a normal SIGTERM stops everything, postgres included.
	p = startDev(t, bin, dataDir, "--no-demo")
	p.waitReadyz(t, http.StatusOK)
	// The worker brings the clean-up schedules (made by the first run) up to date once the
	// restarted Temporal's scheduler answers.
	require.Eventually(t, func() bool {
		return strings.Contains(p.errOut.String(), `"msg":"schedule ensured","process":"dev","component":"worker","schedule":"idempotency-cleanup-daily"`) &&
			strings.Contains(p.errOut.String(), `"msg":"schedule ensured","process":"dev","component":"worker","schedule":"identity-cleanup-daily"`)
	}, 2*time.Minute, 200*time.Millisecond, "stderr tail:\n%s", tail(p.errOut.String(), 20))
	pgPID = p.postgresPID(t)
	took := p.stop(t)
	t.Logf("graceful stop took %s", took)
	require.False(t, processAlive(pgPID), "postgres %d survived shutdown", pgPID)
	require.Empty(t, processesMentioning(dataDir), "processes left behind")
}

// lastReconcileSuccess reads svc_reconcile_last_success_timestamp_seconds from the worker's
// metrics URL (-1 when it is not there).
func lastReconcileSuccess(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^svc_reconcile_last_success_timestamp_seconds (\S+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return v
}

// With --temporal-postgres the embedded Temporal server keeps its state in the private cluster,
// as its own login role: no temporal.db, the namespace in the temporal database, the worker's
// schedules made, and a clean stop (Temporal before its Postgres).
func TestDevStackKeepsTemporalInPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack")
	}
	bin := testkit.Binary(t)
	dataDir := filepath.Join(testkit.DataDir(t), "data")
	p := startDev(t, bin, dataDir, "--no-demo", "--temporal-postgres")
	body := p.waitReadyz(t, http.StatusOK)
	require.Equal(t, "up", body["dependencies"].(map[string]any)["temporal"].(map[string]any)["status"])
	require.Contains(t, p.out.String(), "state in private Postgres")
	require.NoFileExists(t, filepath.Join(dataDir, "temporal.db"))
	creds := readCredentials(t, dataDir)
	require.NotEmpty(t, creds.TemporalPassword)

	pgPort := 0
	for i, a := range p.cmd.Args {
		if a == "--pg-port" {
			pgPort, _ = strconv.Atoi(p.cmd.Args[i+1])
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.DSN("127.0.0.1", pgPort, devtemporal.PostgresUser, creds.TemporalPassword, "temporal"))
	require.NoError(t, err)
	var namespaces int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM namespaces WHERE name = 'default'`).Scan(&namespaces))
	conn.Close(ctx)
	require.Equal(t, 1, namespaces)
	require.Eventually(t, func() bool {
		return strings.Contains(p.errOut.String(), `"msg":"schedule ensured","process":"dev","component":"worker","schedule":"identity-cleanup-daily"`)
	}, 2*time.Minute, 200*time.Millisecond, "stderr tail:\n%s", tail(p.errOut.String(), 20))

	pgPID := p.postgresPID(t)
	p.stop(t)
	require.False(t, processAlive(pgPID), "postgres %d survived shutdown", pgPID)
	require.Empty(t, processesMentioning(dataDir), "processes left behind")
}

func TestConfigErrorsAreOneClearLine(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t)
	occupyDefaultPorts(t) // as a developer's `make run` beside the suite does (issue 21)
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
		{"dev component port in use", []string{"dev", "--data-dir", dataDir, "--sandbox-addr", busy.Addr().String()}, []string{"DATABASE_URL=", "TEMPORAL_ADDRESS="}, "--sandbox-addr"},
		{"postgres port in use", []string{"dev", "--data-dir", dataDir, "--pg-port", strconv.Itoa(busyPort)}, []string{"DATABASE_URL=", "TEMPORAL_ADDRESS="}, "in use"},
		{"temporal-postgres with database-url", []string{"dev", "--data-dir", dataDir, "--temporal-postgres", "--database-url", "postgres://x@127.0.0.1:1/x"}, []string{"TEMPORAL_ADDRESS="}, "--database-url"},
		{"temporal-postgres with temporal-address", []string{"dev", "--data-dir", dataDir, "--temporal-postgres", "--temporal-address", "127.0.0.1:1"}, []string{"DATABASE_URL="}, "--temporal-address"},
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
			// Every listen address on a claimed port, so a `make run` stack on the default ports
			// cannot turn the error under test into a bind error; the case's own env comes last
			// and wins (exec keeps the last of duplicate keys).
			cmd.Env = append(append(os.Environ(), isolatedListenEnv(t)...), tc.env...)
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
	t.Parallel()
	bin := testkit.Binary(t)
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
