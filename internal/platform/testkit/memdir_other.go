//go:build !linux

package testkit

// memoryDir is "" where no memory file system is known: the cluster lives in the temporary
// directory.
func memoryDir() string { return "" }
