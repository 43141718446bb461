package api

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	master, ok := postmaster(t)
	if !ok {
		return -1
	}
	var n int64
	for _, pid := range postgresPids(master) {
		f, ok := procStat(pid)
		if !ok {
			continue
		}
		// Fields after the command: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime.
		n += atoi(f[11]) + atoi(f[12])
		if pid == master {
			n += atoi(f[13]) + atoi(f[14]) // the processes it has reaped
		}
	}
	return ticks(n)
}

// postmaster is the test cluster's postmaster's process id; false for an external server.
func postmaster(t *testing.T) (int, bool) {
	c := testkit.PG(t).Cluster
	if c == nil {
		return 0, false
	}
	pidFile, err := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pidFile), "\n", 2)[0]))
	return pid, err == nil
}

// postgresPids are the postmaster and its live processes.
func postgresPids(master int) []int {
	pids := []int{master}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return pids
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if f, ok := procStat(pid); ok && atoi(f[1]) == int64(master) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// temporalProfile records the Temporal server temporal's CPU profile (perf record, call graphs
// by frame pointer, as Go builds them) into <WAGERAIL_BENCH_PROFILE>/<name>.temporal.perf.data
// until stop: the largest share of a saga's CPU is the server's, and benchProfile sees only this
// process. `perf report -i FILE --children --sort symbol` reads it. Without the directory it does
// nothing; without perf on the machine it logs that the profile is not recorded.
func temporalProfile(t *testing.T, temporal *devtemporaltest.Process, name string) (stop func()) {
	t.Helper()
	dir := os.Getenv("WAGERAIL_BENCH_PROFILE")
	if dir == "" || temporal == nil {
		return func() {}
	}
	if _, err := exec.LookPath("perf"); err != nil {
		t.Logf("the Temporal server's profile of %s is not recorded: perf is not installed", name)
		return func() {}
	}
	out := filepath.Join(dir, name+".temporal.perf.data")
	cmd := exec.Command("perf", "record", "--quiet", "-F", "499", "-g", "-p", strconv.Itoa(temporal.Pid()), "-o", out)
	if err := cmd.Start(); err != nil {
		t.Logf("the Temporal server's profile of %s is not recorded: %v", name, err)
		return func() {}
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGINT) // perf writes its file and ends by the signal
			var exit *exec.ExitError
			if err := cmd.Wait(); err != nil && !(errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT) {
				t.Logf("perf record of %s: %v", name, err)
				return
			}
			t.Logf("the Temporal server's CPU profile of %s: %s", name, out)
		})
	}
	t.Cleanup(stop)
	return stop
}

// pinStack gives the Temporal server temporal the machine's first CPU and the rest of the stack
// (this process: the API, the worker, the ledger, the gateway, the bank sandbox; and Postgres)
// the others, as a deployment gives Temporal machines of its own; the affinities are restored
// when the test ends. With Temporal on Postgres its stores' backends would be the stack's
// Postgres, on the stack's side. It says how it pinned, or why it did not (pinned false).
func pinStack(t *testing.T, temporal *devtemporaltest.Process) (how string, pinned bool) {
	t.Helper()
	var all, first, rest unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil || all.Count() < 2 {
		return "not pinned: fewer than 2 CPUs to split", false
	}
	for cpu := range 1024 {
		if all.IsSet(cpu) {
			if first.Count() == 0 {
				first.Set(cpu)
			} else {
				rest.Set(cpu)
			}
		}
	}
	master, ok := postmaster(t)
	if !ok {
		return "not pinned: Postgres is an external server", false
	}
	stack := append([]int{os.Getpid()}, postgresPids(master)...)
	pin := func(pids []int, set *unix.CPUSet) error {
		for _, pid := range pids {
			tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
			if err != nil {
				continue // ended meanwhile
			}
			for _, task := range tasks {
				tid, err := strconv.Atoi(task.Name())
				if err != nil {
					continue
				}
				// A thread ended meanwhile is no error; new threads and forked processes
				// inherit their creator's set.
				if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
					return err
				}
			}
		}
		return nil
	}
	t.Cleanup(func() {
		_ = pin([]int{temporal.Pid()}, &all)
		_ = pin(append([]int{os.Getpid()}, postgresPids(master)...), &all)
	})
	if err := pin([]int{temporal.Pid()}, &first); err != nil {
		return "not pinned: " + err.Error(), false
	}
	if err := pin(stack, &rest); err != nil {
		return "not pinned: " + err.Error(), false
	}
	return fmt.Sprintf("pinned: the Temporal server on 1 CPU, the rest of the stack on %d", rest.Count()), true
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
func (c cpu) since(c0 cpu) cpu { return c.join(c0, -1) }

// plus adds d's parts to c's (a part not measured in either stays negative).
func (c cpu) plus(d cpu) cpu { return c.join(d, 1) }

// join is c's parts with sign × d's added, part by part; a part not measured in either stays
// negative (this process's is always measured).
func (c cpu) join(d cpu, sign time.Duration) cpu {
	part := func(a, b time.Duration) time.Duration {
		if a < 0 || b < 0 {
			return -1
		}
		return a + sign*b
	}
	return cpu{c.self + sign*d.self, part(c.pg, d.pg), part(c.temporal, d.temporal)}
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
