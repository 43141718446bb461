package pgcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/freeport"
)

// newCluster is a cluster description on a fresh directory and port (not started).
func newCluster(t *testing.T) *Cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "wagerail-pgcluster-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, MakeReachable(dir))
	port, err := freeport.One()
	require.NoError(t, err)
	return &Cluster{Dir: filepath.Join(dir, "data"), Port: port}
}

// again is another run on c's data directory and port, as `make run` after a crash.
func again(c *Cluster, wait time.Duration) *Cluster {
	return &Cluster{Dir: c.Dir, Port: c.Port, StaleLockWait: wait}
}

func start(t *testing.T, c *Cluster) {
	t.Helper()
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { _ = c.Stop() })
	conn, err := pgx.Connect(context.Background(), c.SuperuserDSN("postgres"))
	require.NoError(t, err)
	var one int
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT 1").Scan(&one))
	require.NoError(t, conn.Close(context.Background()))
}

// lockNaming rewrites the data directory's lock file as the last run left it, with pid as its
// postmaster.
func lockNaming(t *testing.T, c *Cluster, lock []byte, pid int) {
	t.Helper()
	fileNaming(t, filepath.Join(c.Dir, "postmaster.pid"), lock, pid)
}

// fileNaming writes the lock file path as the last run left it (lock), with pid as its postmaster.
func fileNaming(t *testing.T, path string, lock []byte, pid int) {
	t.Helper()
	lines := strings.SplitN(string(lock), "\n", 2)
	require.Len(t, lines, 2)
	require.NoError(t, os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"+lines[1]), 0o600))
}

// asPostgresUser runs cmd as the user postgres runs as (when we are root, the postgres OS user),
// so that postgres's own check of the lock's pid (kill(pid, 0)) sees it alive: it takes a process
// it may not signal for gone.
func asPostgresUser(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	cred, err := runAs()
	require.NoError(t, err)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd
}

// TestStartAfterHardCrash: a run whose postmaster died without cleaning up (SIGKILL, a zombie
// nobody reaped yet, its pid since taken by another program) or is still shutting down does not
// keep the next run on the same data directory from starting; a postmaster that stays is reported
// once the wait is over.
func TestStartAfterHardCrash(t *testing.T) {
	first := newCluster(t)
	start(t, first)
	lock, err := os.ReadFile(filepath.Join(first.Dir, "postmaster.pid"))
	require.NoError(t, err)
	socketLockFile := filepath.Join(first.SocketDir(), ".s.PGSQL."+strconv.Itoa(first.Port)+".lock")
	socketLock, err := os.ReadFile(socketLockFile)
	require.NoError(t, err)

	// The postmaster is SIGKILLed: its lock file stays behind.
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	<-first.done
	first.cmd = nil
	require.FileExists(t, filepath.Join(first.Dir, "postmaster.pid"))
	second := again(first, 0)
	start(t, second)
	require.NoError(t, second.Stop())

	// The locks name a postmaster that died and was not reaped yet (a zombie: kill(pid, 0) still
	// succeeds, so postgres itself would refuse to start): the data directory's and the socket's,
	// both left by a SIGKILL (the crash drill's restart once failed on the socket's).
	zombie := asPostgresUser(t, exec.Command("sleep", "60"))
	require.NoError(t, zombie.Start())
	require.NoError(t, zombie.Process.Signal(syscall.SIGKILL))
	require.Eventually(t, func() bool {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(zombie.Process.Pid) + "/stat")
		return err == nil && strings.Contains(string(st), ") Z ")
	}, 5*time.Second, 10*time.Millisecond)
	lockNaming(t, first, lock, zombie.Process.Pid)
	fileNaming(t, socketLockFile, socketLock, zombie.Process.Pid)
	third := again(first, 0)
	start(t, third)
	require.NoError(t, third.Stop())
	_ = zombie.Wait()

	// The lock's pid is now another program's, which is left alone.
	other := asPostgresUser(t, exec.Command("sleep", "60"))
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	lockNaming(t, first, lock, other.Process.Pid)
	fourth := again(first, 0)
	start(t, fourth)
	require.NoError(t, syscall.Kill(other.Process.Pid, 0), "the other program still runs")

	// The last run's postmaster is still shutting down: the next run waits for it.
	go func() {
		time.Sleep(time.Second)
		_ = fourth.Stop()
	}()
	fifth := again(first, 0)
	start(t, fifth)

	// A postmaster that does not go away is reported once the wait is over.
	err = again(first, 500*time.Millisecond).Start(context.Background())
	require.ErrorContains(t, err, "still runs on "+first.Dir)
}
