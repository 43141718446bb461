//go:build !unix

package testkit

// lockFile does not lock where flock is missing: test binaries that need the binary at the same
// time then build it side by side, as they did before the lock.
func lockFile(string) (func(), error) { return func() {}, nil }

// tryLockFile never locks where flock is missing, so no cluster directory is taken for
// abandoned.
func tryLockFile(string) (func(), bool) { return nil, false }
