//go:build unix

package testkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A cluster directory whose binary has ended is swept; a live binary's, and a directory without
// an owner lock, are not.
func TestSweepRemovesOnlyAbandonedClusterDirs(t *testing.T) {
	parent := t.TempDir()
	live, err := makeClusterDir(parent)
	require.NoError(t, err)
	abandoned := filepath.Join(parent, clusterDirPrefix+"abandoned")
	require.NoError(t, os.MkdirAll(filepath.Join(abandoned, "data"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(abandoned, ownerLock), nil, 0o644)) // nobody holds it
	unknown := filepath.Join(parent, clusterDirPrefix+"unknown")
	require.NoError(t, os.MkdirAll(unknown, 0o755))
	other := filepath.Join(parent, "someone-elses")
	require.NoError(t, os.MkdirAll(other, 0o755))

	sweepClusterDirs(parent)
	require.NoDirExists(t, abandoned)
	for _, kept := range []string{live, unknown, other} {
		require.DirExists(t, kept)
	}
	require.FileExists(t, filepath.Join(live, ownerLock))
	_, ok := tryLockFile(filepath.Join(live, ownerLock))
	require.False(t, ok, "this binary still holds its directory's lock")
}

// Parallel tests take data directories at once: each its own, made where the cluster is, held
// against a sweep while the binary runs, and removed when its test ends.
func TestDataDirsInParallel(t *testing.T) {
	dirs := make([]string, 8)
	t.Run("take", func(t *testing.T) {
		for i := range dirs {
			t.Run("", func(t *testing.T) {
				t.Parallel()
				dirs[i] = DataDir(t)
				require.DirExists(t, dirs[i])
				require.Equal(t, clusterParent(), filepath.Dir(dirs[i]))
				sweepClusterDirs(clusterParent())
				require.DirExists(t, dirs[i], "held while the binary runs")
			})
		}
	})
	seen := map[string]bool{}
	for _, d := range dirs {
		require.False(t, seen[d], "each its own")
		seen[d] = true
		require.NoDirExists(t, d, "removed when its test ended")
	}
}
