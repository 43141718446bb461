package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// embeddedOnly are the packages only `wagerail dev` needs: the Temporal server and its Web UI
// (devtemporal pulls both in). The production image's binary (-tags noembed) must not link them.
var embeddedOnly = []string{
	"github.com/wagerail/wagerail/internal/platform/devtemporal",
	"go.temporal.io/server/temporal",
	"github.com/temporalio/ui-server/v2/server",
}

func deps(t *testing.T, tags ...string) map[string]bool {
	t.Helper()
	args := append([]string{"list", "-deps"}, tags...)
	out, err := exec.Command("go", append(args, "github.com/wagerail/wagerail/cmd/wagerail")...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	return set
}

// TestProductionBuildLeavesTheDevStackOut builds both variants of the binary: the default one
// (`make run`) links the embedded Temporal server and UI; the noembed one (deploy/Dockerfile)
// links neither, still serves every other command, and refuses `wagerail dev` in one clear line.
func TestProductionBuildLeavesTheDevStackOut(t *testing.T) {
	t.Parallel()
	full, prod := deps(t), deps(t, "-tags", "noembed")
	for _, p := range embeddedOnly {
		require.True(t, full[p], "the default build links %s (make run needs it)", p)
		require.False(t, prod[p], "the noembed build must not link %s", p)
	}

	bin := filepath.Join(t.TempDir(), "wagerail")
	build := exec.Command("go", "build", "-tags", "noembed", "-o", bin, "github.com/wagerail/wagerail/cmd/wagerail")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	out, err = exec.Command(bin, "dev", "--data-dir", t.TempDir()).CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.NotZero(t, exit.ExitCode())
	msg := strings.TrimSpace(string(out))
	require.NotContains(t, msg, "\n", "one line: %s", msg)
	require.Contains(t, msg, "built without the embedded dev stack (-tags noembed")
	require.Contains(t, msg, "wagerail api, worker, ledger, gateway")

	// Every other command is there, with its flags.
	for _, c := range commands() {
		if c.Name == "dev" {
			continue
		}
		out, err := exec.Command(bin, c.Name, "--help").CombinedOutput()
		require.NoError(t, err, "%s --help: %s", c.Name, out)
		require.Contains(t, string(out), c.Usage)
	}
	out, err = exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
}
