//go:build !linux

package sysfile

import "golang.org/x/sys/unix"

// openat opens a NUL-terminated path read-only.
func openat(path []byte) (int, error) {
	return unix.Open(string(path[:len(path)-1]), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}
