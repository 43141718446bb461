package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/pgcluster"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var allRoles = []string{db.AppRole, db.OwnerRole, db.PlatformRole}

// fakeDataDir lays out a data dir as `wagerail dev` does: credentials.json, and a postmaster.pid
// naming pid and port when pid > 0.
func fakeDataDir(t *testing.T, creds devCredentials, pid, port int) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(creds)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "credentials.json"), b, 0o600))
	if pid > 0 {
		data := filepath.Join(dir, "pg", "data")
		require.NoError(t, os.MkdirAll(data, 0o700))
		pidFile := fmt.Sprintf("%d\n%s\n1700000000\n%d\n%s\n127.0.0.1\n  1234  5678\nready   \n", pid, data, port, filepath.Join(dir, "pg", "run"))
		require.NoError(t, os.WriteFile(filepath.Join(data, "postmaster.pid"), []byte(pidFile), 0o600))
	}
	return dir
}

var someCreds = devCredentials{OwnerPassword: "own-pw", AppPassword: "app-pw", PlatformPassword: "plat-pw", CallbackSecret: "cb", AdjustmentKey: "adj"}

// exitedPid is the pid of a process that has exited and been reaped.
func exitedPid(t *testing.T) int {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func requireOneLine(t *testing.T, err error, contains ...string) {
	t.Helper()
	require.Error(t, err)
	require.NotContains(t, err.Error(), "\n")
	for _, c := range contains {
		require.Contains(t, err.Error(), c)
	}
}

// A URL given by flag or environment is used as it is, without looking for a private cluster.
func TestResolveDatabaseURLPrefersTheSetting(t *testing.T) {
	t.Setenv("WAGERAIL_DATA_DIR", "/nonexistent")
	for _, role := range allRoles {
		got, err := resolveDatabaseURL("x", "postgres://given@h:1/d", role)
		require.NoError(t, err)
		require.Equal(t, "postgres://given@h:1/d", got)
	}
}

// Beside a running `make run`, each role gets the private cluster's URL with its password.
func TestPrivateClusterURLFromDataDir(t *testing.T) {
	t.Parallel()
	dir := fakeDataDir(t, someCreds, os.Getpid(), 54329)
	for role, pw := range map[string]string{db.AppRole: "app-pw", db.OwnerRole: "own-pw", db.PlatformRole: "plat-pw"} {
		got, err := privateClusterURL("reconcile", dir, role)
		require.NoError(t, err, role)
		require.Equal(t, db.DSN("127.0.0.1", 54329, role, pw, "wagerail"), got)
	}
}

// WAGERAIL_DATA_DIR names the data dir, as it does for `wagerail dev`.
func TestResolveDatabaseURLHonoursDataDirSetting(t *testing.T) {
	dir := fakeDataDir(t, someCreds, os.Getpid(), 6543)
	t.Setenv("WAGERAIL_DATA_DIR", dir)
	got, err := resolveDatabaseURL("reconcile", "", db.AppRole)
	require.NoError(t, err)
	require.Equal(t, db.DSN("127.0.0.1", 6543, db.AppRole, "app-pw", "wagerail"), got)
}

// Without a usable private cluster, the error is one line that says what to set, for each role.
func TestPrivateClusterURLSaysWhatToSet(t *testing.T) {
	t.Parallel()
	settings := map[string][]string{
		db.AppRole:      {"--database-url", "DATABASE_URL"},
		db.OwnerRole:    {"--database-owner-url", "DATABASE_OWNER_URL"},
		db.PlatformRole: {"--database-platform-url", "DATABASE_PLATFORM_URL"},
	}
	noPlatform := someCreds
	noPlatform.PlatformPassword = ""
	damaged := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(damaged, "credentials.json"), []byte("{not json"), 0o600))
	badPid := fakeDataDir(t, someCreds, os.Getpid(), 1)
	require.NoError(t, os.WriteFile(filepath.Join(badPid, "pg", "data", "postmaster.pid"), []byte("12x\n"), 0o600))

	for name, tc := range map[string]struct {
		dir   string
		roles []string
		want  []string
	}{
		"no data dir":         {filepath.Join(t.TempDir(), "absent"), allRoles, []string{"make run", "credentials.json"}},
		"cluster stopped":     {fakeDataDir(t, someCreds, 0, 0), allRoles, []string{"not running", "no postmaster.pid", "start `make run`"}},
		"cluster gone":        {fakeDataDir(t, someCreds, exitedPid(t), 54329), allRoles, []string{"not running", "has exited"}},
		"damaged pid file":    {badPid, allRoles, []string{"not running", "postmaster.pid"}},
		"damaged credentials": {damaged, allRoles, []string{"damaged"}},
		"credentials too old": {fakeDataDir(t, noPlatform, os.Getpid(), 54329), []string{db.PlatformRole}, []string{"no password for wagerail_platform", "make run"}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, role := range tc.roles {
				_, err := privateClusterURL("reconcile", tc.dir, role)
				requireOneLine(t, err, append([]string{"reconcile: "}, append(tc.want, settings[role]...)...)...)
				t.Log(err)
			}
		})
	}
	_, err := privateClusterURL("reconcile", t.TempDir(), "postgres")
	requireOneLine(t, err, "no login role")
}

// The real thing: a private cluster laid out and provisioned by the code `wagerail dev` runs
// (credentials.json from loadOrCreateCredentials, the cluster under pg/data). Every role connects
// through the resolved URL as itself; once the cluster stops, the answer is that it is not running.
func TestPrivateClusterURLConnectsToARealCluster(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dataDir := testkit.DataDir(t)
	creds, err := loadOrCreateCredentials(filepath.Join(dataDir, "credentials.json"))
	require.NoError(t, err)
	pgDir := filepath.Join(dataDir, "pg")
	require.NoError(t, os.MkdirAll(pgDir, 0o755))
	require.NoError(t, pgcluster.MakeReachable(pgDir))
	port, err := freeport.One()
	require.NoError(t, err)
	c := &pgcluster.Cluster{Dir: filepath.Join(pgDir, "data"), Port: port}
	require.NoError(t, c.Start(ctx))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	require.NoError(t, db.Provision(ctx, c.SuperuserDSN("postgres"), "wagerail",
		db.Passwords{Owner: creds.OwnerPassword, App: creds.AppPassword, Platform: creds.PlatformPassword}))

	for _, role := range allRoles {
		url, err := privateClusterURL("reconcile", dataDir, role)
		require.NoError(t, err, role)
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err, role)
		var user, database string
		require.NoError(t, conn.QueryRow(ctx, `SELECT current_user, current_database()`).Scan(&user, &database))
		require.NoError(t, conn.Close(ctx))
		require.Equal(t, role, user)
		require.Equal(t, "wagerail", database)
	}

	require.NoError(t, c.Stop())
	stopped = true
	_, err = privateClusterURL("reconcile", dataDir, db.AppRole)
	requireOneLine(t, err, "not running", "DATABASE_URL")
	require.False(t, strings.Contains(err.Error(), creds.AppPassword), "the error must not show a password")
}
