package freeport

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHardening11_TakeGivesDistinctBindablePortsOutsideTheEphemeralRange(t *testing.T) {
	ports, err := Take(20)
	require.NoError(t, err)
	more, err := Take(20)
	require.NoError(t, err)
	lo, hi := portRange()
	ephLo, ephHi, err := ephemeral()
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, p := range append(ports, more...) {
		require.False(t, seen[p], "port %d handed out twice", p)
		seen[p] = true
		require.True(t, p >= lo && p <= hi, "port %d outside %d-%d", p, lo, hi)
		require.False(t, p >= ephLo && p <= ephHi, "port %d in the ephemeral range", p)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		require.NoError(t, err, "port %d", p)
		l.Close()
	}
}

// TestHardening11_AnotherProcessNeverGetsOurPorts runs this test binary again as a child that takes many ports
// while we hold ours: none may overlap.
func TestHardening11_AnotherProcessNeverGetsOurPorts(t *testing.T) {
	if os.Getenv("FREEPORT_CHILD") == "1" {
		ports, err := Take(300)
		if err != nil {
			os.Exit(3)
		}
		for _, p := range ports {
			os.Stdout.WriteString(strconv.Itoa(p) + "\n")
		}
		return
	}
	mine, err := Take(300)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHardening11_AnotherProcessNeverGetsOurPorts$")
	cmd.Env = append(os.Environ(), "FREEPORT_CHILD=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	theirs := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		theirs[l] = true
	}
	require.GreaterOrEqual(t, len(theirs), 300)
	for _, p := range mine {
		require.False(t, theirs[strconv.Itoa(p)], "port %d given to both processes", p)
	}
}
