package testkit

import "syscall"

// memoryDirRoom is the free space a memory file system must have to hold the throwaway cluster:
// api's, the largest, peaked at 353 MB (live databases, the ended ones waiting to be dropped
// together, the WAL), cmd/wagerail's tests add `wagerail dev` data directories, and two test
// binaries run side by side; the rest is margin.
const memoryDirRoom = 4 << 30

// memoryDir is a memory file system with room for the throwaway cluster (/dev/shm), "" when
// there is none.
func memoryDir() string {
	const dir = "/dev/shm"
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bavail*uint64(st.Bsize) < memoryDirRoom {
		return ""
	}
	if err := syscall.Access(dir, 0o7); err != nil { // rwx
		return ""
	}
	return dir
}
