// Package pgcluster creates and runs a private PostgreSQL cluster from the machine's PostgreSQL
// binaries: the one `wagerail dev` keeps under .data/pg and the throwaway one the test kit starts.
// It never touches a system cluster: the data directory, port and socket directory are ours alone,
// and the server listens on loopback only.
package pgcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the bootstrap superuser initdb creates. Only the cluster's own tooling (role and
// database bootstrap, test templates) connects as it, over the private Unix socket.
const Superuser = "postgres"

// Cluster is a private PostgreSQL cluster.
type Cluster struct {
	Dir    string // data directory (PG_VERSION lives here)
	Port   int
	BinDir string
	// LogFile receives the server's log; default Dir/../postgres.log.
	LogFile string
	// StaleLockWait bounds how long Start waits for the postmaster of a previous run that is
	// still going away (its lock file, port or shared memory still held); default
	// DefaultStaleLockWait.
	StaleLockWait time.Duration
	// Settings are extra server settings, "name=value" each, passed as -c after the defaults (a
	// later -c wins). The test kit's throwaway cluster turns fsync off with them.
	Settings []string

	cmd  *exec.Cmd
	done chan error
	cred *syscall.Credential
}

// FindBinDir locates initdb/postgres: $PG_BINDIR, then `pg_config --bindir`, then the newest
// /usr/lib/postgresql/*/bin.
func FindBinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		if hasPostgres(d) {
			return d, nil
		}
		return "", fmt.Errorf("PG_BINDIR=%s has no initdb/postgres", d)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); hasPostgres(d) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if hasPostgres(d) {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries found (install the postgresql package, or set PG_BINDIR or DATABASE_URL)")
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasPostgres(dir string) bool {
	for _, b := range []string{"initdb", "postgres"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// SocketDir is where the server puts its Unix socket (kept inside the cluster's own directory so
// two clusters never collide and no system directory is needed).
func (c *Cluster) SocketDir() string { return filepath.Join(filepath.Dir(c.Dir), "run") }

// SuperuserDSN connects as the bootstrap superuser over the private socket.
func (c *Cluster) SuperuserDSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.SocketDir(), c.Port, Superuser, db)
}

// DefaultStaleLockWait is how long Start waits, by default, for a previous run's postmaster to
// go away. After a hard crash of its parent (SIGKILL of `wagerail dev`) the postmaster gets SIGINT
// and shuts down fast, which takes a moment; its backends outlive a killed postmaster by
// milliseconds.
const DefaultStaleLockWait = 15 * time.Second

// Start creates the cluster on first use and starts the server as a child process. The child is
// sent SIGINT (fast shutdown) if we die, so a crashed test run leaves no postgres behind.
//
// A lock left by a previous run does not fail the start: a lock file whose postmaster is gone (or
// a zombie not yet reaped, or its pid now another program's) is removed, and a postmaster still
// shutting down, its port, or shared memory its last backends hold are waited for, up to
// StaleLockWait.
func (c *Cluster) Start(ctx context.Context) error {
	if c.BinDir == "" {
		d, err := FindBinDir()
		if err != nil {
			return err
		}
		c.BinDir = d
	}
	if c.LogFile == "" {
		c.LogFile = filepath.Join(filepath.Dir(c.Dir), "postgres.log")
	}
	wait := c.StaleLockWait
	if wait <= 0 {
		wait = DefaultStaleLockWait
	}
	deadline := time.Now().Add(wait)
	stale, err := c.waitOldPostmaster(ctx, deadline)
	if err != nil {
		return err
	}
	if !stale {
		deadline = time.Now() // no previous run of ours: a port in use is someone else's
	}
	if err := waitPortFree(ctx, c.Port, deadline); err != nil {
		return err
	}
	cred, err := runAs()
	if err != nil {
		return err
	}
	c.cred = cred
	for _, d := range []string{filepath.Dir(c.Dir), c.SocketDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		if err := c.chown(d); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx); err != nil {
			return err
		}
	}
	for {
		err := c.launch(ctx)
		if err == nil || !errors.Is(err, errStaleLock) || time.Now().After(deadline) {
			return err
		}
		// The last run's backends still hold its shared memory, or its postmaster came back
		// into view: wait a little and try again.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if _, err := c.waitOldPostmaster(ctx, deadline); err != nil {
			return err
		}
	}
}

// errStaleLock marks a start that failed on a previous run's lock or shared memory.
var errStaleLock = errors.New("a previous run's lock is still held")

// launch starts postgres once and waits until it accepts connections.
func (c *Cluster) launch(ctx context.Context) error {
	logFrom := logSize(c.LogFile) // this launch's lines follow
	logf, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgcluster log: %w", err)
	}
	cmd := exec.Command(filepath.Join(c.BinDir, "postgres"),
		"-D", c.Dir,
		"-p", strconv.Itoa(c.Port),
		"-k", c.SocketDir(),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=300",
		"-c", "shared_buffers=128MB",
		"-c", "fsync=on",
		"-c", "synchronous_commit=on",
	)
	for _, kv := range c.Settings {
		cmd.Args = append(cmd.Args, "-c", kv)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT, Credential: c.cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("pgcluster start postgres: %w", err)
	}
	c.cmd = cmd
	c.done = make(chan error, 1)
	go func() { c.done <- cmd.Wait(); logf.Close() }()
	return c.waitReady(ctx, logFrom)
}

func logSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// Stop asks the server for a fast shutdown and waits for it to exit.
func (c *Cluster) Stop() error {
	if c.cmd == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(8 * time.Second):
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		<-c.done
	}
	c.cmd = nil
	return nil
}

func (c *Cluster) initdb(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, "initdb"),
		"-D", c.Dir, "-U", Superuser, "-E", "UTF8", "--locale=C",
		// The superuser is reachable only through the private socket; TCP logins need passwords.
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgcluster initdb %s: %w: %s", c.Dir, err, lastLines(string(out), 5))
	}
	return nil
}

func (c *Cluster) waitReady(ctx context.Context, logFrom int64) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, c.SuperuserDSN("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case werr := <-c.done:
			c.done <- werr
			c.cmd = nil
			err := fmt.Errorf("pgcluster: postgres exited during start (%v); see %s: %s", werr, c.LogFile, tailFile(c.LogFile, 5))
			if staleLockLog(c.LogFile, logFrom) {
				err = fmt.Errorf("%w: %w", errStaleLock, err)
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgcluster: postgres not ready after 60s: %w", err)
		}
	}
}

// waitOldPostmaster clears the lock files of a previous run (lockFiles): each is removed when
// the postmaster it names is gone, a zombie (dead, not yet reaped: postgres would take it for
// alive) or its pid is now another program's; a postmaster that still runs is waited for until
// deadline. stale reports that there was a lock file.
func (c *Cluster) waitOldPostmaster(ctx context.Context, deadline time.Time) (stale bool, err error) {
	for {
		running := 0
		for _, lockFile := range c.lockFiles() {
			pid, ok := readPid(lockFile)
			if !ok {
				continue
			}
			stale = true
			if postmasterRunning(pid) {
				running = pid
				continue
			}
			if err := os.Remove(lockFile); err != nil && !errors.Is(err, os.ErrNotExist) {
				return true, fmt.Errorf("pgcluster: removing the stale lock %s: %w", lockFile, err)
			}
		}
		if running == 0 {
			return stale, nil
		}
		if time.Now().After(deadline) {
			return true, fmt.Errorf("pgcluster: postgres (pid %d) still runs on %s; stop it first", running, c.Dir)
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockFiles are the lock files a postmaster of this cluster holds, each naming its pid on the
// first line: the data directory's postmaster.pid and its Unix socket's lock. A postmaster killed
// with SIGKILL leaves both, and postgres refuses to start while either names a pid that
// kill(pid, 0) finds — a zombie included.
func (c *Cluster) lockFiles() []string {
	return []string{
		filepath.Join(c.Dir, "postmaster.pid"),
		filepath.Join(c.SocketDir(), ".s.PGSQL."+strconv.Itoa(c.Port)+".lock"),
	}
}

// readPid reads the postmaster's pid, the lock file's first line; ok is false without one.
func readPid(pidFile string) (int, bool) {
	f, err := os.Open(pidFile)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if !s.Scan() {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s.Text()))
	return pid, err == nil && pid > 0
}

// postmasterRunning reports whether pid is a live (not zombie) postgres process.
func postmasterRunning(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		// No /proc entry: gone by now (or no procfs, where kill's answer is all we have).
		_, statErr := os.Stat("/proc/self/stat")
		return statErr != nil && syscall.Kill(pid, 0) == nil
	}
	// "pid (comm) state …": the command name may hold spaces and parentheses, the state follows
	// the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	if state := stat[i+2]; state == 'Z' || state == 'X' {
		return false
	}
	comm := string(stat[strings.IndexByte(string(stat), '(')+1 : i])
	return comm == "postgres" || strings.HasPrefix(comm, "postgres")
}

// staleLockLog reports whether the log written since offset from says postgres refused to start
// over a previous run's lock file or shared memory.
func staleLockLog(path string, from int64) bool {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < from {
		return false
	}
	tail := string(b[from:])
	return strings.Contains(tail, "postmaster.pid") || strings.Contains(tail, ".s.PGSQL.") || strings.Contains(tail, "pre-existing shared memory block") ||
		strings.Contains(tail, "could not bind")
}

func (c *Cluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	return filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(c.cred.Uid), int(c.cred.Gid))
	})
}

// runAs returns the credential of the postgres OS user when we are root (initdb and postgres
// refuse to run as root), or nil to run as ourselves.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root and no 'postgres' OS user exists (install the postgresql package or run as a normal user)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// MakeReachable ensures every parent of dir can be traversed by the postgres OS user (a private
// temp dir is 0700 and root-owned).
func MakeReachable(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitPortFree waits until deadline for the port to be free (a previous run's postmaster may
// hold it for a moment while it shuts down).
func waitPortFree(ctx context.Context, port int, deadline time.Time) error {
	for {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			return l.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres port %d on 127.0.0.1 is in use (choose another with --pg-port, or set DATABASE_URL)", port)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return lastLines(string(b), n)
}
