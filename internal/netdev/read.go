package netdev

import (
	"bytes"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sysfile"
)

// reader reads small sysfs files, keeping them open between scans
// (sysfile.Files: a counter read again is one pread, not an open, a read
// and a close). A sysfs attribute is at most a page, and the ones read here
// are a line; the path is built in a reused buffer, so reading a counter
// kept open allocates nothing.
type reader struct {
	files sysfile.Files
	path  []byte
}

// read returns the content of the file whose path is the parts joined with
// "/", surrounding white space trimmed; the slice is valid until the next
// read. The error is the open's or the read's (sysfs answers EINVAL for a
// link speed it does not know).
func (r *reader) read(parts ...string) ([]byte, error) {
	r.path = r.path[:0]
	for i, p := range parts {
		if i > 0 {
			r.path = append(r.path, '/')
		}
		r.path = append(r.path, p...)
	}
	b, err := r.files.ReadPath(r.path)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b), nil
}

// uint reads a file holding one unsigned decimal number.
func (r *reader) uint(parts ...string) (uint64, bool) {
	b, err := r.read(parts...)
	if err != nil {
		return 0, false
	}
	return parseUint(b)
}

// int reads a file holding one decimal number, maybe negative (numa_node
// and speed say -1 for unknown).
func (r *reader) int(parts ...string) (int64, bool) {
	b, err := r.read(parts...)
	if err != nil {
		return 0, false
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := parseUint(b)
	if !ok || v > 1<<62 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// str reads a one-line file as a string; empty when it cannot be read.
func (r *reader) str(parts ...string) string {
	b, err := r.read(parts...)
	if err != nil {
		return ""
	}
	return string(b)
}

// parseUint parses an unsigned decimal number with no sign, no spaces and
// no overflow; it does not allocate, unlike strconv on a converted slice.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// isPCIAddr reports whether s is a PCI address as sysfs spells it:
// DDDD:BB:DD.F in lower-case hex (the domain may be longer on some
// platforms, as the kernel prints it with %04x).
func isPCIAddr(s string) bool {
	i := strings.IndexByte(s, ':')
	if i < 4 || len(s) != i+8 || s[i+3] != ':' || s[i+6] != '.' {
		return false
	}
	for j := 0; j < len(s); j++ {
		if j == i || j == i+3 || j == i+6 {
			continue
		}
		c := s[j]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// pciAddrOf returns the last PCI address in a resolved sysfs device path:
// the device's own, or, for a virtio or other child device, the PCI
// function it sits on.
func pciAddrOf(path string) string {
	for path != "" && path != "/" && path != "." {
		if b := strings.ToLower(lastElem(path)); isPCIAddr(b) {
			return b
		}
		i := strings.LastIndexByte(path, '/')
		if i < 0 {
			return ""
		}
		path = path[:i]
	}
	return ""
}

func lastElem(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}
