// Package freeport hands out loopback TCP ports for servers that must be told a port number before
// they listen (a Postgres cluster, Temporal's services, a child `wagerail dev`), without the race of
// "listen on :0, close, hand the number on": in that window the kernel may give the same port to any
// outgoing connection's source port or to another process's listen(":0"), and the server then fails
// to bind (this made `make test` flaky).
//
// Two rules close the race:
//   - ports come from below the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range),
//     which the kernel never picks for a source port or a listen(":0");
//   - among Wagerail's own processes (parallel test binaries), a port is claimed by an exclusive
//     flock on a file under the temp dir, held until the process exits, so no two claim one port.
//
// What remains is a foreign process binding one of these ports by number, which the bind check
// at claim time catches when it is already listening.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var (
	mu      sync.Mutex
	claimed = map[int]*os.File{} // held for the life of the process
)

// Take claims n distinct free loopback ports for this process.
func Take(n int) ([]int, error) {
	lo, hi := portRange()
	dir := filepath.Join(os.TempDir(), "wagerail-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("freeport: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]int, 0, n)
	span := hi - lo + 1
	start := rand.IntN(span)
	for i := 0; i < span && len(out) < n; i++ {
		p := lo + (start+i)%span
		if _, mine := claimed[p]; mine {
			continue
		}
		f, ok := lock(dir, p)
		if !ok {
			continue
		}
		if !bindable(p) {
			f.Close()
			continue
		}
		claimed[p] = f
		out = append(out, p)
	}
	if len(out) < n {
		return nil, fmt.Errorf("freeport: only %d of %d ports free in %d-%d", len(out), n, lo, hi)
	}
	return out, nil
}

// One claims a single port.
func One() (int, error) {
	p, err := Take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func lock(dir string, port int) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

func bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	return l.Close() == nil
}

// portRange is the widest stretch of ports outside the kernel's ephemeral range, avoiding the
// privileged ports and the usual well-known service ports below 10000.
func portRange() (lo, hi int) {
	ephLo, ephHi, err := ephemeral()
	if err != nil {
		ephLo, ephHi = 32768, 60999 // Linux's default
	}
	below := [2]int{10000, ephLo - 1}
	above := [2]int{ephHi + 1, 65535}
	if above[1]-above[0] > below[1]-below[0] {
		return above[0], above[1]
	}
	return below[0], below[1]
}

func ephemeral() (int, int, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, errors.New("unexpected ip_local_port_range")
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, errors.New("unexpected ip_local_port_range")
	}
	return lo, hi, nil
}
