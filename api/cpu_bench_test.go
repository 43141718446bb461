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

	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// cpuUse is the CPU time used so far by this process (the API, the worker, the ledger, the
// gateway and the bank sandbox), by the test cluster's Postgres (the postmaster, its live
// processes and the ones it has reaped) and by the Temporal server temporal (a process of its own,
// devtemporaltest; nil: not measured); pg is -1 when the tests run against an external server or
// /proc cannot be read, temporal likewise. Benchmarks read it before and after a phase to split a
// unit of work's CPU between the three.
func cpuUse(t *testing.T, temporal *devtemporaltest.Process) (self, pg, tmp time.Duration) {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	tmp = -1
	if temporal != nil {
		if f, ok := procStat(temporal.Pid()); ok {
			tmp = ticks(atoi(f[11]) + atoi(f[12]))
		}
	}
	return self, postgresCPU(t), tmp
}

// postgresCPU is the CPU time the test cluster's Postgres has used so far, -1 when not known.
func postgresCPU(t *testing.T) time.Duration {
	c := testkit.PG(t).Cluster
	if c == nil {
		return -1
	}
	pidFile, err := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid"))
	if err != nil {
		return -1
	}
	master, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pidFile), "\n", 2)[0]))
	if err != nil {
		return -1
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	var n int64
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
			n += atoi(f[11]) + atoi(f[12]) + atoi(f[13]) + atoi(f[14])
		case atoi(f[1]) == int64(master):
			n += atoi(f[11]) + atoi(f[12])
		}
	}
	return ticks(n)
}

// ticks is n clock ticks of /proc/<pid>/stat as a duration.
func ticks(n int64) time.Duration {
	const hz = 100 // USER_HZ, 100 on every Linux architecture Go supports
	return time.Duration(n) * time.Second / hz
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

// cpu is a phase's CPU: this process's, Postgres's and the Temporal server's (negative: not
// measured).
type cpu struct{ self, pg, temporal time.Duration }

// cpuNow reads cpuUse.
func cpuNow(t *testing.T, temporal *devtemporaltest.Process) cpu {
	self, pg, tmp := cpuUse(t, temporal)
	return cpu{self, pg, tmp}
}

// since is the CPU used from c0 to c; a part not measured at either end stays negative.
func (c cpu) since(c0 cpu) cpu {
	d := func(a, b time.Duration) time.Duration {
		if a < 0 || b < 0 {
			return -1
		}
		return a - b
	}
	return cpu{c.self - c0.self, d(c.pg, c0.pg), d(c.temporal, c0.temporal)}
}

// plus adds d's parts to c's (a part not measured in either stays negative).
func (c cpu) plus(d cpu) cpu {
	p := func(a, b time.Duration) time.Duration {
		if a < 0 || b < 0 {
			return -1
		}
		return a + b
	}
	return cpu{c.self + d.self, p(c.pg, d.pg), p(c.temporal, d.temporal)}
}

// total is the CPU of the parts measured.
func (c cpu) total() time.Duration { return c.self + max(c.pg, 0) + max(c.temporal, 0) }

// cpuPer logs the CPU a phase used per unit (n units), split between this process, the Temporal
// server and Postgres (with Temporal's own stores when it runs on Postgres).
func cpuPer(t *testing.T, what string, n int, c cpu) {
	t.Helper()
	per := func(d time.Duration) string {
		if d < 0 {
			return "not measured"
		}
		return (d / time.Duration(n)).Round(100 * time.Microsecond).String()
	}
	t.Logf("CPU per %s: %s = this process (API, worker, ledger, gateway, sandbox) %s + the Temporal server %s + Postgres %s",
		what, per(c.total()), per(c.self), per(c.temporal), per(c.pg))
}
