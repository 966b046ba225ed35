package sysfile

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openat opens a NUL-terminated path read-only. It calls openat itself
// because unix.Open copies its string argument into a new C string on
// every call, the one allocation left in reading a counter.
func openat(path []byte) (int, error) {
	cwd := unix.AT_FDCWD // a variable: the constant is negative
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd),
			uintptr(unsafe.Pointer(&path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0) //nolint:gosec // G103: openat takes the NUL-terminated path read builds
		if errno == 0 {
			return int(fd), nil
		}
		if !errors.Is(errno, unix.EINTR) {
			return -1, errno
		}
	}
}
