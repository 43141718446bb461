package testkit

import (
	"os"
	"path/filepath"
	"sync"
)

// clusterDirPrefix names the temporary directories of the test binaries' throwaway clusters.
const clusterDirPrefix = "wagerail-test-pg-"

// ownerLock is the file in a cluster directory that its test binary holds locked while it runs.
// The kernel releases the lock when the process ends, however it ends.
const ownerLock = "owner.lock"

// makeClusterDir creates this binary's cluster directory under parent, its owner lock taken
// (and held until the process ends) before the directory bears the name sweepClusterDirs reads.
func makeClusterDir(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, clusterDirPrefix)
	if err != nil {
		return "", err
	}
	// Locked under another name, then renamed: a sweeper never sees an unlocked owner.lock of a
	// live binary.
	pending := filepath.Join(dir, "."+ownerLock)
	unlock, err := lockFile(pending)
	if err != nil {
		return "", err
	}
	heldOwnerLocksMu.Lock()
	heldOwnerLocks = append(heldOwnerLocks, unlock) // reachable, so the file is never closed
	heldOwnerLocksMu.Unlock()
	return dir, os.Rename(pending, filepath.Join(dir, ownerLock))
}

// heldOwnerLocks keeps the owner locks' open files reachable for as long as the process runs: a
// collected *os.File would close its descriptor, and the lock with it.
// Parallel tests make data directories (DataDir) at once.
var (
	heldOwnerLocksMu sync.Mutex
	heldOwnerLocks   []func()
)

// sweepClusterDirs removes the cluster directories under parent whose test binary has ended
// without removing its own: a fuzz worker that the fuzzing coordinator kills before Main has
// cleaned up leaves one (~90 MB for api). A directory whose owner lock is held, or that has none,
// is left alone.
func sweepClusterDirs(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, clusterDirPrefix+"*"))
	for _, dir := range dirs {
		unlock, ok := tryLockFile(filepath.Join(dir, ownerLock))
		if !ok {
			continue
		}
		_ = os.RemoveAll(dir)
		unlock()
	}
}
