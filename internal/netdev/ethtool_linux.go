package netdev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// From include/uapi/linux/ethtool.h (not in x/sys/unix): the string set of
// statistics, and the length of one name in an ETHTOOL_GSTRINGS reply.
const (
	ethSSStats    = 1
	ethGStringLen = 32
)

// ifreqData is struct ifreq with its union holding a pointer (ifr_data),
// as SIOCETHTOOL takes it: the pointer kept as unsafe.Pointer so the
// collector knows the buffer is referenced during the call.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [unsafe.Sizeof(unix.Ifreq{}) - unix.IFNAMSIZ - unsafe.Sizeof(uintptr(0))]byte
}

// ssetInfo is struct ethtool_sset_info asking for one string set's size.
type ssetInfo struct {
	cmd      uint32
	reserved uint32
	mask     uint64
	data     [1]uint32
}

// Ethtool reads drivers' statistics through the SIOCETHTOOL ioctl, the
// interface `ethtool -S` uses (ETHTOOL_GSSET_INFO for the count,
// ETHTOOL_GSTRINGS with ETH_SS_STATS for the names, ETHTOOL_GSTATS for the
// values). It reads the interfaces of the calling process's network
// namespace, whatever sysfs root Scan was given. One goroutine at a time.
type Ethtool struct {
	fd int
	// The last names read per interface, with the raw reply they came
	// from: the names change only when the driver does, and keeping them
	// spares a thousand strings per scrape of a ConnectX port.
	raw   map[string][]byte
	names map[string][]string
	strs  []byte
	vals  []byte
}

// OpenEthtool opens the socket the ioctls go through.
func OpenEthtool() (*Ethtool, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ethtool socket: %w", err)
	}
	return &Ethtool{fd: fd, raw: map[string][]byte{}, names: map[string][]string{}}, nil
}

// Close closes the socket.
func (e *Ethtool) Close() error {
	if e == nil || e.fd < 0 {
		return nil
	}
	err := unix.Close(e.fd)
	e.fd = -1
	return err
}

// EthtoolStats reads one interface's driver statistics with a socket of
// its own; an Ethtool kept between scrapes is cheaper.
func EthtoolStats(ifname string) ([]Stat, error) {
	e, err := OpenEthtool()
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return e.Stats(ifname)
}

func (e *Ethtool) ioctl(ifname string, data unsafe.Pointer) error {
	var ifr ifreqData
	if ifname == "" || len(ifname) >= unix.IFNAMSIZ || bytes.IndexByte([]byte(ifname), 0) >= 0 {
		return unix.EINVAL
	}
	copy(ifr.name[:], ifname)
	ifr.data = data
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(e.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))) //nolint:gosec // G103: SIOCETHTOOL takes a struct ifreq pointer; ifreqData keeps ifr_data a Go pointer
	runtime.KeepAlive(&ifr)
	if errno != 0 {
		return errno
	}
	return nil
}

// count returns how many statistics the driver has.
func (e *Ethtool) count(ifname string) (int, error) {
	si := ssetInfo{cmd: unix.ETHTOOL_GSSET_INFO, mask: 1 << ethSSStats}
	err := e.ioctl(ifname, unsafe.Pointer(&si)) //nolint:gosec // G103: struct ethtool_sset_info, laid out as the kernel has it
	if err == nil {
		if si.mask&(1<<ethSSStats) == 0 {
			return 0, nil
		}
		return int(si.data[0]), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EINVAL) {
		return 0, err
	}
	// Kernels before 2.6.34 have no GSSET_INFO; the driver info has it.
	info, err := unix.IoctlGetEthtoolDrvinfo(e.fd, ifname)
	if err != nil {
		return 0, err
	}
	return int(info.N_stats), nil
}

// maxStats bounds the statistics read of one interface; the largest
// drivers have a few thousand (mlx5 with many channels).
const maxStats = 1 << 16

// Stats reads one interface's driver statistics in the driver's order. An
// interface with none (lo) gives none and no error.
func (e *Ethtool) Stats(ifname string) ([]Stat, error) {
	for try := 0; ; try++ {
		stats, changed, err := e.stats(ifname)
		if !changed || try == 1 {
			if err != nil {
				return nil, fmt.Errorf("ethtool %s: %w", ifname, err)
			}
			return stats, nil
		}
	}
}

// stats reads once; changed says the driver's count moved between the
// calls (a reconfiguration), and the read should be done again.
func (e *Ethtool) stats(ifname string) (stats []Stat, changed bool, err error) {
	n, err := e.count(ifname)
	if err != nil || n == 0 {
		return nil, false, err
	}
	if n > maxStats {
		return nil, false, fmt.Errorf("%d statistics", n)
	}
	// The kernel writes as many entries as the driver has at the time of
	// each call, not as many as asked for, so the buffers get room for
	// more in case the count grew since it was read.
	room := n + n/4 + 64

	hdr := 12 // struct ethtool_gstrings: cmd, string_set, len
	e.strs = grow(e.strs, hdr+room*ethGStringLen)
	binary.NativeEndian.PutUint32(e.strs[0:], unix.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(e.strs[4:], ethSSStats)
	binary.NativeEndian.PutUint32(e.strs[8:], uint32(n))
	if err := e.ioctl(ifname, unsafe.Pointer(&e.strs[0])); err != nil { //nolint:gosec // G103: struct ethtool_gstrings, sized with room above
		return nil, false, err
	}
	ns := int(binary.NativeEndian.Uint32(e.strs[8:]))

	hdr = 8 // struct ethtool_stats: cmd, n_stats
	e.vals = grow(e.vals, hdr+room*8)
	binary.NativeEndian.PutUint32(e.vals[0:], unix.ETHTOOL_GSTATS)
	binary.NativeEndian.PutUint32(e.vals[4:], uint32(n))
	if err := e.ioctl(ifname, unsafe.Pointer(&e.vals[0])); err != nil { //nolint:gosec // G103: struct ethtool_stats, sized with room above
		return nil, false, err
	}
	nv := int(binary.NativeEndian.Uint32(e.vals[4:]))
	if ns != n || nv != n {
		if ns > room || nv > room {
			return nil, true, fmt.Errorf("the driver's statistics grew from %d to %d while being read", n, max(ns, nv))
		}
		return nil, true, fmt.Errorf("the driver's statistics changed from %d to %d/%d while being read", n, ns, nv)
	}

	raw := e.strs[12 : 12+n*ethGStringLen]
	names := e.names[ifname]
	if len(names) != n || !bytes.Equal(e.raw[ifname], raw) {
		names = make([]string, n)
		for i := range names {
			b := raw[i*ethGStringLen : (i+1)*ethGStringLen]
			if j := bytes.IndexByte(b, 0); j >= 0 {
				b = b[:j]
			}
			names[i] = string(b)
		}
		e.names[ifname] = names
		e.raw[ifname] = append(e.raw[ifname][:0], raw...)
	}
	stats = make([]Stat, n)
	for i := range stats {
		stats[i] = Stat{Name: names[i], Value: binary.NativeEndian.Uint64(e.vals[8+i*8:])}
	}
	return stats, false, nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	b = b[:n]
	clear(b)
	return b
}
