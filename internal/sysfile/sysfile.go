// Package sysfile reads small kernel files (sysfs attributes, cgroup and
// procfs pressure files) that a scraper reads again every few seconds, by
// keeping them open and reading each from offset 0 with pread.
//
// Opening a file walks its path and allocates a file description; closing
// it frees them again. For a counter read every scrape that is most of the
// cost of reading it: a node with nine RDMA ports has some three hundred
// counter files. The kernel regenerates the content of a sysfs, kernfs
// (cgroup) or seq_file (procfs) file on every read that starts at offset 0
// (seq_read_iter resets its iterator there), so an open descriptor reads the
// current value each time, as a new open would.
//
// A file that was removed reads ENODEV on sysfs and cgroupfs; Files then
// closes it and opens the path again once, so that a device or cgroup that
// came back under the same path is read anew. Files not read during a round
// (between two EndRound calls) are closed: a pod that left, a port that went
// away. At most Max files are kept open; past that a file is opened, read and
// closed as usual.
package sysfile

import (
	"bytes"
	"errors"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultMax is how many files a Files keeps open unless told otherwise:
// an HGX node's NIC ports and GPU pods need about four hundred, and the
// collector's soft limit on descriptors is raised by Go at start to the
// hard limit (usually 2^19 or more).
const DefaultMax = 2048

// BufSize is the largest file Read returns whole. A sysfs attribute is at
// most a page, and every file read here is a few lines.
const BufSize = 4096

// ErrTooLong is returned, wrapped with the path, for a file longer than
// BufSize bytes.
var ErrTooLong = errors.New("longer than 4096 bytes")

// Files keeps files open between reads. It is not safe for concurrent use;
// each scraper has its own.
type Files struct {
	// Max bounds the open files; 0 means DefaultMax.
	Max int

	open  map[string]*entry
	round uint32
	buf   [BufSize + 1]byte
	path  []byte // the NUL-terminated path of the file being opened
	key   []byte // Read's path, for ReadPath
}

type entry struct {
	fd   int
	used uint32 // the round it was last read in
}

// Read returns the content of the file at path; the slice is valid until
// the next Read. An error is the open's or the read's, as a *fs.PathError
// (so errors.Is(err, fs.ErrNotExist) tells an absent file), or ErrTooLong.
func (f *Files) Read(path string) ([]byte, error) {
	f.key = append(f.key[:0], path...)
	return f.ReadPath(f.key)
}

// ReadPath is Read of a path held in a byte slice, which it does not keep:
// a caller that builds paths in a reused buffer reads a file kept open
// without allocating.
func (f *Files) ReadPath(path []byte) ([]byte, error) {
	if e, ok := f.open[string(path)]; ok {
		e.used = f.round
		n, err := pread(e.fd, f.buf[:])
		if err == nil {
			return f.result(path, n)
		}
		// Removed, or its device gone: forget it and open the path
		// again, which may name a new file.
		_ = unix.Close(e.fd)
		delete(f.open, string(path))
	}
	fd, err := f.openPath(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: string(path), Err: err}
	}
	n, err := pread(fd, f.buf[:])
	if err != nil {
		_ = unix.Close(fd)
		return nil, &fs.PathError{Op: "read", Path: string(path), Err: err}
	}
	if f.open == nil {
		f.open = map[string]*entry{}
	}
	limit := f.Max
	if limit <= 0 {
		limit = DefaultMax
	}
	if len(f.open) < limit {
		f.open[string(path)] = &entry{fd: fd, used: f.round}
	} else {
		_ = unix.Close(fd)
	}
	return f.result(path, n)
}

func (f *Files) result(path []byte, n int) ([]byte, error) {
	if n > BufSize {
		return nil, &fs.PathError{Op: "read", Path: string(path), Err: ErrTooLong}
	}
	return f.buf[:max(n, 0)], nil
}

// EndRound closes the files not read since the previous EndRound.
func (f *Files) EndRound() {
	for p, e := range f.open {
		if e.used != f.round {
			_ = unix.Close(e.fd)
			delete(f.open, p)
		}
	}
	f.round++
}

// Open is how many files are kept open.
func (f *Files) Open() int { return len(f.open) }

// Close closes every file kept open. The Files can still be used.
func (f *Files) Close() {
	for p, e := range f.open {
		_ = unix.Close(e.fd)
		delete(f.open, p)
	}
}

// openPath opens path read-only. The path is copied into a reused buffer
// with its NUL, because unix.Open makes a new C string on every call.
func (f *Files) openPath(path []byte) (int, error) {
	if bytes.IndexByte(path, 0) >= 0 {
		return -1, syscall.EINVAL
	}
	f.path = append(append(f.path[:0], path...), 0)
	return openat(f.path)
}

// pread reads from offset 0, retrying when interrupted.
func pread(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Pread(fd, b, 0)
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
