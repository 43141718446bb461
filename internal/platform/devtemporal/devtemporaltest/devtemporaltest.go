// Package devtemporaltest gives tests the embedded Temporal servers (internal/platform/devtemporal)
// their test binary shares, each a process of its own (devtemporaltest/temporalserver) built
// without the race detector (testkit.Command) and stopped by testkit.Main once the tests have
// ended. The tests reach
// them over gRPC, as every worker and API reaches Temporal, and their binaries link no Temporal
// server.
package devtemporaltest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest/launch"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// Process is a running test server: its frontend's address and namespace.
type Process struct {
	hostPort, namespace string
	cmd                 *exec.Cmd
	stdin               io.WriteCloser
	exited              chan struct{}
}

// HostPort is the frontend address clients dial.
func (p *Process) HostPort() string { return p.hostPort }

// Pid is the server process's id (benchmarks read its CPU time from /proc).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Namespace is the registered namespace ("default", with devtemporal.SearchAttributes).
func (p *Process) Namespace() string { return p.namespace }

var (
	sqliteOnce sync.Once
	sqlite     *Process
	sqliteErr  error

	pgOnce sync.Once
	pg     *Process
	pgErr  error
)

// Server returns the Temporal server shared by this test binary, on SQLite in memory. Tests use
// unique workflow ids.
func Server(t testing.TB) *Process {
	t.Helper()
	sqliteOnce.Do(func() {
		sqlite, sqliteErr = start(launch.Request{WorkflowTaskTimeout: workflowTaskTimeout()})
	})
	if sqliteErr != nil {
		t.Fatalf("devtemporaltest: %v", sqliteErr)
	}
	return sqlite
}

// OnPostgres returns a second Temporal server shared by this test binary, whose default and
// visibility stores are two databases of the binary's Postgres server (testkit.PG) rather than
// SQLite: the same namespace and search attributes as Server, so a benchmark can run the same
// work on both persistences in one run. It connects as the login role devtemporal.PostgresUser.
func OnPostgres(t testing.TB) *Process {
	t.Helper()
	s := testkit.PG(t)
	pgOnce.Do(func() {
		// The role is cluster-wide and test binaries may share a server (DATABASE_URL): every
		// binary derives the same password, as testkit does for the other roles.
		sum := sha256.Sum256([]byte("wagerail-test-temporal:" + s.SuperDSN("postgres")))
		req := launch.Request{WorkflowTaskTimeout: workflowTaskTimeout(), SuperDSN: s.SuperDSN("postgres"), Postgres: &launch.Postgres{
			Host: s.Host, Port: s.Port, Password: hex.EncodeToString(sum[:12]),
			Database:           fmt.Sprintf("temporal_t_%d", os.Getpid()),
			VisibilityDatabase: fmt.Sprintf("temporal_visibility_t_%d", os.Getpid()),
		}}
		// Registered first, so it runs after the server has stopped.
		testkit.AtExit(func() {
			s.DropDatabase(req.Postgres.Database)
			s.DropDatabase(req.Postgres.VisibilityDatabase)
		})
		pg, pgErr = start(req)
	})
	if pgErr != nil {
		t.Fatalf("devtemporaltest: on postgres: %v", pgErr)
	}
	return pg
}

// startWait bounds the wait for a server process to answer once started.
const startWait = 2 * time.Minute

// start runs a server process for req (testkit.Command builds it, without the race detector, once
// per checkout and sources) and waits for its ready line. testkit.Main stops it after the tests;
// if the test binary dies first, the process's standard input ends and it stops by itself.
func start(req launch.Request) (*Process, error) {
	bin, err := testkit.Command(launch.Package)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &testkit.SyncBuffer{} // the server logs nothing: what a failed start said
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("temporal server process: %w", err)
	}
	p := &Process{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	ready := make(chan error, 1)
	go func() {
		if _, err := stdin.Write(append(body, '\n')); err != nil {
			ready <- err
			return
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil {
			p.hostPort, p.namespace, err = launch.ParseReady(line)
		}
		ready <- err
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case err = <-ready:
	case <-time.After(startWait):
		err = fmt.Errorf("no answer after %s", startWait)
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("temporal server process: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	testkit.AtExit(p.stop)
	return p, nil
}

// stopWait bounds the wait for a process to stop once its standard input ends (the server's own
// stop takes up to 3 s).
const stopWait = 10 * time.Second

// stop ends the process: its standard input first, then, if it has not exited, a kill.
func (p *Process) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(stopWait):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// workflowTaskTimeout is the test servers' workflow task timeout: 2 s instead of Temporal's 10, so
// a test that kills a worker mid-task sees another worker take the workflow over 8 s sooner (the
// crash tests each wait for that once or more). A live worker is not hurried by it: while its
// local activities run, the SDK extends the task before 80% of the timeout. Benchmarks keep
// Temporal's default, as the server `make run` starts does.
func workflowTaskTimeout() time.Duration {
	if testkit.Benchmarking() {
		return 0
	}
	return 2 * time.Second
}
