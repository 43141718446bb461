package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
)

// tierShare is the share of the machine's CPUs each of splitTiers's three tiers gets: together
// 0.9 of them, the rest left to the machine's own work.
const tierShare = 0.3

// tierPeriodMicros is the quota's period: short, so a tier that used its quota waits at most
// a few milliseconds, not the default 100 ms, for the next.
const tierPeriodMicros = 20_000

// splitTiers runs the stack's three tiers as a deployment does, each on machines of its own of
// the same size: the Temporal server, Postgres (the postmaster and its backends, present and
// to come), and this process (the API, the worker, the ledger and the gateway; with the bank
// sandbox and the bench's callers, which a deployment runs elsewhere, charged to it) each get
// tierShare of the machine's CPUs under a CPU quota of their own (a cgroup each, cgroup v1's
// cpu controller or v2's). The quotas end, and every process is back in the root group, when
// the test ends. It says how it split the CPUs, or why it did not (split false): no cgroup CPU
// controller it may write to, or an external Postgres.
func splitTiers(t *testing.T, temporal *devtemporaltest.Process) (how string, split bool) {
	t.Helper()
	g, err := cpuCgroups()
	if err != nil {
		return "not split: " + err.Error(), false
	}
	master, ok := postmaster(t)
	if !ok {
		return "not split: Postgres is an external server", false
	}
	cpus := float64(runtime.NumCPU()) * tierShare
	tiers := []struct {
		name string
		pids []int
	}{
		{"temporal", []int{temporal.Pid()}},
		{"postgres", postgresPids(master)},
		{"stack", []int{os.Getpid()}},
	}
	// undo moves every process back to the root group and removes the groups: at the test's
	// end, or at once when the split fails part-way, so a run that says "not split" is not
	// partly under quotas.
	var made []string
	undo := func() {
		for _, dir := range made {
			g.empty(dir)
		}
		made = nil
	}
	t.Cleanup(undo)
	for _, tier := range tiers {
		dir, err := g.create(fmt.Sprintf("wagerail-bench-%d-%s", os.Getpid(), tier.name), cpus)
		if dir != "" {
			made = append(made, dir)
		}
		for _, pid := range tier.pids {
			if err != nil {
				break
			}
			// A process that ended meanwhile is no error; forked ones join their parent's group.
			if err = writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); errors.Is(err, syscall.ESRCH) {
				err = nil
			}
		}
		if err != nil {
			undo()
			return "not split: " + err.Error(), false
		}
	}
	return fmt.Sprintf("split in three tiers (the Temporal server; Postgres; this process, with the bank sandbox and the callers), each under a quota of %.2f CPU (cgroup %s)",
		cpus, g.version()), true
}

// cpuCgroup is where the machine's cgroup CPU controller is mounted, and which version it is.
type cpuCgroup struct {
	root string
	v2   bool
}

// cpuCgroups finds a cgroup CPU controller this process may create groups in: cgroup v2's
// unified hierarchy with the cpu controller, or cgroup v1's cpu hierarchy.
func cpuCgroups() (cpuCgroup, error) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(" "+string(b)+" ", " cpu ") {
		// The root's children get the cpu controller only when the root hands it down.
		if err := writeFile("/sys/fs/cgroup/cgroup.subtree_control", "+cpu"); err != nil {
			return cpuCgroup{}, fmt.Errorf("cgroup v2: %w", err)
		}
		return cpuCgroup{root: "/sys/fs/cgroup", v2: true}, nil
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		return cpuCgroup{root: "/sys/fs/cgroup/cpu"}, nil
	}
	return cpuCgroup{}, errors.New("no cgroup CPU controller")
}

func (g cpuCgroup) version() string {
	if g.v2 {
		return "v2"
	}
	return "v1"
}

// create makes the group name under the root with a quota of cpus CPUs per tierPeriodMicros.
func (g cpuCgroup) create(name string, cpus float64) (string, error) {
	dir := filepath.Join(g.root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	quota := strconv.Itoa(int(cpus * tierPeriodMicros))
	if g.v2 {
		return dir, writeFile(filepath.Join(dir, "cpu.max"), quota+" "+strconv.Itoa(tierPeriodMicros))
	}
	if err := writeFile(filepath.Join(dir, "cpu.cfs_period_us"), strconv.Itoa(tierPeriodMicros)); err != nil {
		return dir, err
	}
	return dir, writeFile(filepath.Join(dir, "cpu.cfs_quota_us"), quota)
}

// empty moves the group's processes back to the root group and removes it.
func (g cpuCgroup) empty(dir string) {
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
		for _, pid := range strings.Fields(string(b)) {
			_ = writeFile(filepath.Join(g.root, "cgroup.procs"), pid)
		}
	}
	_ = os.Remove(dir)
}

// writeFile writes s to a cgroup file (which takes one value per write).
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
