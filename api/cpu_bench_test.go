package api

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// cpuUse is the CPU time used so far by this process (the whole stack but Postgres) and by the
// test cluster's Postgres (the postmaster, its live processes and the ones it has reaped); pg is
// -1 when the tests run against an external server or /proc cannot be read. Benchmarks read it
// before and after a phase to split a unit of work's CPU between the two.
func cpuUse(t *testing.T) (self, pg time.Duration) {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	pg = -1
	c := testkit.PG(t).Cluster
	if c == nil {
		return self, pg
	}
	pidFile, err := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid"))
	if err != nil {
		return self, pg
	}
	master, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pidFile), "\n", 2)[0]))
	if err != nil {
		return self, pg
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return self, pg
	}
	var ticks int64
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		f, ok := procStat(pid)
		if !ok {
			continue
		}
		// Fields after the command: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime.
		switch {
		case pid == master:
			ticks += atoi(f[11]) + atoi(f[12]) + atoi(f[13]) + atoi(f[14])
		case atoi(f[1]) == int64(master):
			ticks += atoi(f[11]) + atoi(f[12])
		}
	}
	const hz = 100 // USER_HZ, 100 on every Linux architecture Go supports
	return self, time.Duration(ticks) * time.Second / hz
}

// procStat is /proc/<pid>/stat's fields after the command name (the first is the state).
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(b[i+1:]))
	return f, len(f) > 14
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// cpuPer logs the CPU a phase used per unit (n units), split between this process (self) and
// Postgres (pg, negative when not measured).
func cpuPer(t *testing.T, what string, n int, self, pg time.Duration) {
	t.Helper()
	per := func(d time.Duration) time.Duration { return (d / time.Duration(n)).Round(100 * time.Microsecond) }
	if pg < 0 {
		t.Logf("CPU per %s: this process %s (Postgres not measured: an external server)", what, per(self))
		return
	}
	t.Logf("CPU per %s: %s = this process (API, worker, Temporal server, ledger, gateway, sandbox) %s + Postgres %s",
		what, per(self+pg), per(self), per(pg))
}
