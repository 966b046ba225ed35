//go:build !linux

package netdev

import "golang.org/x/sys/unix"

// openPath opens a NUL-terminated path read-only.
func openPath(path []byte) (int, error) {
	return unix.Open(string(path[:len(path)-1]), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}
