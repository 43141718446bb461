// Package testkit is what every integration test in Wagerail uses to get real dependencies:
//
//   - one ephemeral PostgreSQL cluster per test binary (the same pgcluster code `wagerail dev`
//     uses), or the server named by DATABASE_URL (a superuser DSN) when set;
//   - a template database migrated once, and a fresh database per test cloned from it with
//     CREATE DATABASE … TEMPLATE, so tests own their data and may run in parallel;
//   - AtExit, through which a test-support package that starts more (the embedded Temporal
//     servers of internal/platform/devtemporal/devtemporaltest) stops it when the tests end.
//
// A package that uses it declares `func TestMain(m *testing.M) { testkit.Main(m) }` so the
// cluster, and what AtExit registered, stop when the tests end.
package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/pgcluster"
	"github.com/wagerail/wagerail/schema"
)

// Server is the Postgres server the tests of this binary share.
type Server struct {
	Host             string
	Port             int
	SuperDSN         func(db string) string
	OwnerPassword    string
	AppPassword      string
	PlatformPassword string
	Template         string
	Cluster          *pgcluster.Cluster // nil when DATABASE_URL is used
	// fileCopy: the server (15 or later) copies the template's files for a new database
	// (STRATEGY = FILE_COPY) instead of writing each of its pages to the WAL, the default since
	// 15, which suits a large template; ours is the schema alone. 60 databases in /dev/shm:
	// 19–20 CPU-s and 16 s with the WAL, 10.7 CPU-s and 8 s copied.
	fileCopy bool
}

var (
	// inMain is set by Main: the server PG starts is stopped and its directory removed only there.
	inMain bool

	srvOnce sync.Once
	srv     *Server
	srvErr  error
	tmpDir  string

	dbSeq atomic.Int64

	builds sync.Map // package path -> *build
)

// Binary returns the real wagerail binary (cmd/wagerail), for tests that run a command as its own
// process.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := Command("github.com/wagerail/wagerail/cmd/wagerail")
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return bin
}

// build is one package's Command, made once per test binary.
type build struct {
	once sync.Once
	path string
	err  error
}

// Command builds the main package pkg of this module (without the race detector the tests may
// run under) and returns the executable's path. Every test binary of one checkout shares one copy
// per package (binaryDir), built under a file lock: `go test ./...` runs several packages' tests
// at once, and without the lock each compiled and linked the same binary side by side. `go build
// -o` of a target that is already up to date (its build ID matches the sources, flags and
// toolchain) neither compiles nor links, so the second package, and the next run on unchanged
// sources, wait only for the up-to-date check; a changed source is rebuilt as before.
func Command(pkg string) (string, error) {
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		var dir string
		if dir, b.err = binaryDir(); b.err != nil {
			return
		}
		b.path = filepath.Join(dir, path.Base(pkg))
		unlock, err := lockFile(b.path + ".lock")
		if err != nil {
			b.err = err
			return
		}
		defer unlock()
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v: %s", pkg, err, out)
		}
	})
	return b.path, b.err
}

// binaryDir is where Command keeps the binaries: under the user's cache directory (else the
// temporary directory), one directory per checkout (its module root), so two checkouts never
// share, or overwrite, each other's build.
func binaryDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			root = wd // no go.mod above: the package's own directory
			break
		}
		root = parent
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(base, "wagerail-testbin", hex.EncodeToString(sum[:8]))
	return dir, os.MkdirAll(dir, 0o755)
}

// Main runs the tests and then stops what the kit started.
func Main(m *testing.M) {
	inMain = true
	code := m.Run()
	atExitMu.Lock()
	hooks := atExit
	atExitMu.Unlock()
	for i := len(hooks) - 1; i >= 0; i-- {
		hooks[i]()
	}
	if srv != nil {
		if srv.Cluster != nil {
			_ = srv.Cluster.Stop()
		} else {
			srv.DropDatabase(srv.Template)
			dropped.Lock()
			left := dropped.names
			dropped.Unlock()
			for _, name := range left {
				srv.DropDatabase(name)
			}
		}
	}
	if tmpDir != "" {
		_ = os.RemoveAll(tmpDir)
	}
	os.Exit(code)
}

// atExit holds what AtExit registered.
var (
	atExitMu sync.Mutex
	atExit   []func()
)

// AtExit registers fn for Main to run once the tests have ended, before it stops the Postgres
// server (the last registered runs first): how a test-support package stops what it started.
func AtExit(fn func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExit = append(atExit, fn)
}

// PG returns the shared server, starting it (and migrating the template) on first use.
func PG(t testing.TB) *Server {
	t.Helper()
	if !inMain {
		// Without Main nothing stops the private cluster or removes its directory: each run of
		// the package would leave one behind in the temporary directory.
		t.Fatalf("testkit: the package's TestMain must call testkit.Main(m) before its tests use the database")
	}
	srvOnce.Do(func() { srv, srvErr = startServer() })
	if srvErr != nil {
		t.Fatalf("testkit: postgres: %v", srvErr)
	}
	return srv
}

func startServer() (*Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := &Server{OwnerPassword: randomHex(12), AppPassword: randomHex(12), PlatformPassword: randomHex(12)}
	if dsn := os.Getenv("DATABASE_URL"); dsn != "" {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
		s.Host, s.Port = cfg.Host, int(cfg.Port)
		// Test binaries run in parallel against one shared server and the roles are cluster-wide:
		// every binary must set the same passwords, or each would lock the others out.
		sum := sha256.Sum256([]byte("wagerail-test-roles:" + dsn))
		s.OwnerPassword, s.AppPassword, s.PlatformPassword = hex.EncodeToString(sum[:10]), hex.EncodeToString(sum[10:20]), hex.EncodeToString(sum[20:30])
		s.SuperDSN = func(name string) string {
			if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
				u.Path = "/" + name
				return u.String()
			}
			return dsn + " dbname=" + name // key=value form: the last dbname wins
		}
	} else {
		parent := clusterParent()
		sweepClusterDirs(parent)
		sweepClusterDirs(os.TempDir()) // where the cluster lived before it moved to memory
		dir, err := makeClusterDir(parent)
		if err != nil {
			return nil, err
		}
		tmpDir = dir
		if err := pgcluster.MakeReachable(dir); err != nil {
			return nil, err
		}
		port, err := freeport.One()
		if err != nil {
			return nil, err
		}
		c := &pgcluster.Cluster{Dir: filepath.Join(dir, "data"), Port: port}
		// A throwaway cluster need not survive the machine losing power: without fsync, creating
		// each test's database from the template and every commit stop waiting on the disk. A
		// killed server still loses nothing (commits stay synchronous: the WAL reaches the OS
		// before a commit returns), so crash and restart tests prove the same. Benchmarks
		// keep the durable settings their figures are about.
		if !Benchmarking() {
			c.Settings = []string{"fsync=off", "full_page_writes=off"}
		}
		// Work-counting tests (WAGERAIL_COUNT_STATEMENTS) read every statement from
		// pg_stat_statements, which must be loaded when the server starts.
		if os.Getenv("WAGERAIL_COUNT_STATEMENTS") != "" {
			c.Settings = append(c.Settings, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.max=10000",
				"pg_stat_statements.track_planning=on")
		}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		s.Cluster = c
		s.Host, s.Port = "127.0.0.1", port
		s.SuperDSN = c.SuperuserDSN
	}
	conn, err := pgx.Connect(ctx, s.SuperDSN("postgres"))
	if err != nil {
		return nil, err
	}
	var version int
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version)
	conn.Close(ctx)
	if err != nil {
		return nil, err
	}
	s.fileCopy = version >= 150000
	s.Template = fmt.Sprintf("wagerail_tmpl_%d", os.Getpid())
	if err := db.Provision(ctx, s.SuperDSN("postgres"), s.Template, db.Passwords{Owner: s.OwnerPassword, App: s.AppPassword, Platform: s.PlatformPassword}); err != nil {
		return nil, err
	}
	if err := schema.Up(db.DSN(s.Host, s.Port, db.OwnerRole, s.OwnerPassword, s.Template)); err != nil {
		return nil, err
	}
	return s, nil
}

// clusterParent is the directory the throwaway cluster is made in: a memory file system with
// room for it when there is one, else the temporary directory. Its fsync is off, so the disk only
// made each test's database cost more: creating and dropping one cost some 0.5 CPU-s in kernel
// writeback and checkpoints on disk, 0.13 in memory (60 databases: 34–36 CPU-s and 31 s on disk,
// 10.7 CPU-s and 8 s in /dev/shm). A killed server loses nothing either way: the files live as
// long as the machine. Benchmarks keep the disk their figures are about.
func clusterParent() string {
	if dir := memoryDir(); dir != "" && !Benchmarking() {
		return dir
	}
	return os.TempDir()
}

// DataDir is a directory for a stack's data (a private cluster, `wagerail dev`'s data
// directory) that the test removes when it ends: beside the throwaway cluster (clusterParent),
// and removed by a later test binary's sweep when this one dies before its cleanup.
func DataDir(t testing.TB) string {
	t.Helper()
	dir, err := makeClusterDir(clusterParent())
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// DB is a fresh, migrated database owned by one test.
type DB struct {
	Name     string
	OwnerDSN string // migration/owner role: DDL, test fixtures that must bypass nothing
	AppDSN   string // runtime role: what services use; RLS applies
	// PlatformDSN is the cross-tenant role (internal/platform/crosstenant); RLS applies to it too.
	PlatformDSN string
	// App is a pool on AppDSN, closed when the test ends.
	App *pgxpool.Pool
}

// Platform opens a pool as the cross-tenant role, closed when the test ends.
func (d *DB) Platform(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := db.Open(context.Background(), d.PlatformDSN, 10)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewDB clones the migrated template into a database for this test and drops it afterwards.
func NewDB(t testing.TB) *DB {
	t.Helper()
	s := PG(t)
	ctx := context.Background()
	name := fmt.Sprintf("wagerail_t_%d_%d", os.Getpid(), dbSeq.Add(1))
	conn, err := pgx.Connect(ctx, s.SuperDSN("postgres"))
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	create := fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s OWNER %s", name, s.Template, db.OwnerRole)
	if s.fileCopy {
		create += " STRATEGY = FILE_COPY"
	}
	_, err = conn.Exec(ctx, create)
	conn.Close(ctx)
	if err != nil {
		t.Fatalf("testkit: create database: %v", err)
	}
	d := &DB{
		Name:        name,
		OwnerDSN:    db.DSN(s.Host, s.Port, db.OwnerRole, s.OwnerPassword, name),
		AppDSN:      db.DSN(s.Host, s.Port, db.AppRole, s.AppPassword, name),
		PlatformDSN: db.DSN(s.Host, s.Port, db.PlatformRole, s.PlatformPassword, name),
	}
	pool, err := db.Open(ctx, d.AppDSN, 20)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	d.App = pool
	t.Cleanup(func() {
		pool.Close()
		dropSoon(s, name)
	})
	return d
}

// dropBatch is how many ended tests' databases are dropped together. PostgreSQL (15) makes every
// DROP DATABASE force an immediate checkpoint and a barrier at which every backend of the server
// closes all its relation files. Dropping each database as its test ended put that between the
// statements of every test still running; dropping sixteen at a time, back to back, halved the
// server's CPU over api's EWA tests (about 24 s to 12 s) and cut their wall time by a fifth.
// At most dropBatch-1 ended databases wait (~16 MB each).
const dropBatch = 16

// dropped holds the ended tests' databases not yet dropped.
var dropped struct {
	sync.Mutex
	names []string
}

// dropSoon drops the ended test's database name with the ones before it once dropBatch of them
// wait. Main drops what is left on a shared server (DATABASE_URL); a private one is removed whole.
func dropSoon(s *Server, name string) {
	dropped.Lock()
	dropped.names = append(dropped.names, name)
	batch := dropped.names
	if len(batch) < dropBatch {
		batch = nil
	} else {
		dropped.names = nil
	}
	dropped.Unlock()
	for _, n := range batch {
		s.DropDatabase(n)
	}
}

// DropDatabase drops the server's database name, if it is there, closing its connections.
func (s *Server) DropDatabase(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.SuperDSN("postgres"))
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
}

// Benchmarking says whether this is a benchmark run (WAGERAIL_BENCH, `make bench`): the servers
// then keep the production settings the figures are about, not the tests' quicker ones.
func Benchmarking() bool { return os.Getenv("WAGERAIL_BENCH") != "" }

// Unique returns a short random string for ids in tests that share a server.
func Unique(prefix string) string { return prefix + "-" + randomHex(6) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// VerifyPartner marks FI or merchant organization id KYB-verified, as the platform's review does
// (PUT /api/financial-institutions/{id}/verify-kyc, the merchants' likewise): in good standing, it
// offers loans or sells on BNPL. A fixture for tests about something else; the review itself is
// tested through its route.
func (d *DB) VerifyPartner(t testing.TB, id string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, PG(t).SuperDSN(d.Name))
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, `UPDATE app.organizations SET kyc_status = 'VERIFIED' WHERE id = $1 AND kind IN ('FI', 'MERCHANT')`, id)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("testkit: verify partner %s: %v (%d rows)", id, err, tag.RowsAffected())
	}
}
