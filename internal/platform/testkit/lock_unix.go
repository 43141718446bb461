//go:build unix

package testkit

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path (created if missing), waiting for another process
// that holds it; the returned func releases it. The kernel releases it too when the process ends.
func lockFile(path string) (func(), error) {
	return flock(path, os.O_CREATE|os.O_RDWR, syscall.LOCK_EX)
}

// tryLockFile takes an exclusive lock on the existing file path if no process holds one: ok
// false when another does (or path is missing). The returned func releases it.
func tryLockFile(path string) (unlock func(), ok bool) {
	unlock, err := flock(path, os.O_RDWR, syscall.LOCK_EX|syscall.LOCK_NB)
	return unlock, err == nil
}

// flock opens path with flag and locks it with how (syscall.Flock's), retrying an interrupted
// call.
func flock(path string, flag, how int) (func(), error) {
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
