// Package netdev reads the counters of every NIC port of a GPU node from
// sysfs: Ethernet netdevs (/sys/class/net), InfiniBand and RoCE ports and
// AWS EFA devices (/sys/class/infiniband), and, through the SIOCETHTOOL
// ioctl or `ethtool -S` text, the drivers' own statistics. Rails works out
// which GPUs each NIC serves from the PCI topology.
//
// It reads a sysfs tree given as a directory, so that tests use a fake one
// and an agent in a container reads the host's through a mount. It is
// built to be scraped every few seconds on a node with some twenty ports:
// small files are read into a reused buffer, values are parsed from bytes,
// and what does not change (PCI address, NUMA node, model, firmware) is
// read once per device and kept while the device's sysfs link is the same.
//
// Nothing here panics on any file content: a value that does not parse is
// left out of the port, and a port that cannot be read at all is reported
// in the joined error while the others are still returned.
package netdev

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Kind says which sysfs class a port was read from.
type Kind string

// The kinds of port.
const (
	KindNetdev Kind = "netdev" // /sys/class/net/<if>
	KindIB     Kind = "ib"     // /sys/class/infiniband/<dev>/ports/<n> (InfiniBand or RoCE)
	KindEFA    Kind = "efa"    // /sys/class/infiniband/efa_N, AWS Elastic Fabric Adapter
)

// Link layers, as the contract's otelgpu.network.link_layer spells them.
const (
	LinkInfiniBand = "infiniband"
	LinkEthernet   = "ethernet"
)

// Direction is the traffic direction a counter counts, spelt as the
// network.io.direction attribute; empty where a counter has none (a link
// that went down is neither).
type Direction string

// The directions.
const (
	Receive  Direction = "receive"
	Transmit Direction = "transmit"
)

// Class is what a counter counts, so that a reader of Port.Other can tell
// a known counter from one a new driver added.
type Class uint8

// The classes of counter.
const (
	ClassOther      Class = iota // not classified: kept by name so that no driver's counter is lost
	ClassBytes                   // data volume
	ClassPackets                 // packets
	ClassError                   // errors, drops and discards
	ClassWait                    // time the port had data to send and could not (IB port_xmit_wait)
	ClassRetransmit              // retransmissions and what causes them (RoCE, EFA)
	ClassCNP                     // RoCE congestion notification (DCQCN)
	ClassAllowance               // AWS ENA shaping: packets queued or dropped over an allowance
	ClassPause                   // Ethernet flow-control pause frames
)

var classNames = [...]string{"other", "bytes", "packets", "error", "wait", "retransmit", "cnp", "allowance", "pause"}

// String names the class in lower case.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// Counter is one monotonic counter as the kernel or the driver names it.
type Counter struct {
	Name      string
	Class     Class
	Direction Direction
	Value     uint64
}

// Port is one NIC port: an Ethernet netdev, an RDMA device's port, or an
// EFA device's port. A zero numeric field with its Has flag false means
// the kernel did not say.
type Port struct {
	// ID is the contract's hw.id: "mlx5_0:1" for an RDMA port, "eth0"
	// for a netdev.
	ID string
	// Device is the netdev or RDMA device name; Port the RDMA port number
	// (0 for a netdev).
	Device string
	Port   int
	// Netdev is the network interface the port carries traffic for: the
	// netdev itself, or the one sysfs maps a RoCE (or IPoIB) port to;
	// empty when sysfs names none.
	Netdev    string
	Kind      Kind
	LinkLayer string // LinkInfiniBand, LinkEthernet, or empty when unknown

	Model  string // hca_type (e.g. MT4129), where the device has one
	Vendor string // the PCI vendor's name, where it is one this package knows
	Board  string // board_id
	FW     string // fw_ver
	Driver string // the kernel driver bound to the device (mlx5_core, ena, efa ...)
	// PCI is the device's PCI address in lower case ("0000:18:00.0");
	// empty for virtual interfaces (lo, veth, bridges).
	PCI string
	// NUMA is the device's NUMA node, -1 when unknown.
	NUMA int
	// Physical is true when sysfs links the port to a device (lo, veth,
	// bonds and bridges have no device link).
	Physical bool

	// Up: an RDMA port whose state is ACTIVE and phys_state LinkUp, a
	// netdev whose operstate is "up". HasUp is false when neither file
	// could be read.
	Up, HasUp bool
	// State is the kernel's word for it: "ACTIVE", "up", "down" ...
	State string

	// RateBytesPerSec is the link's signalling rate (IB `rate`, Ethernet
	// `speed`) in bytes per second; 0 when unknown.
	RateBytesPerSec float64

	RxBytes, TxBytes, RxPackets, TxPackets uint64
	HasBytes, HasPackets                   bool
	// DataSaturated: an IB data counter read 2^32-1, the stop value of the
	// 32-bit PortCounters attribute, so the byte counts stopped counting
	// (the kernel reads the 64-bit PortCountersExtended where the HCA
	// has it, and then this is never set).
	DataSaturated bool

	// Errors are the error, drop and discard counters, by kernel name.
	Errors []Counter
	// XmitWait is IB port_xmit_wait, in the port's sampling ticks.
	XmitWait    uint64
	HasXmitWait bool
	// Retransmits is the number of retransmitted packets the port reports
	// (RoCE roce_adp_retrans, EFA retrans_pkts); the causes of retransmits
	// (timeouts, NAK sequence errors) are in Other with ClassRetransmit.
	Retransmits    uint64
	HasRetransmits bool
	// CNPs is the RoCE congestion notification packets the port sent
	// (np_cnp_sent) plus those it handled (rp_cnp_handled); each is in
	// Other with its direction.
	CNPs    uint64
	HasCNPs bool
	// Allowance holds the ENA shaping counters by the contract's short
	// name (bw_in, bw_out, pps, conntrack, linklocal).
	Allowance []Counter
	// Other is every other counter the port has, by kernel name, so that
	// a new driver's counters are not lost.
	Other []Counter
}

// Options choose what Scan reads.
type Options struct {
	// Netdev, when not nil, decides which /sys/class/net interfaces are
	// read (return false to skip "lo", say); nil reads them all.
	Netdev func(name string) bool
	// PhysicalOnly reads only netdevs linked to a device, leaving out lo,
	// veth, bridges and bonds.
	PhysicalOnly bool
	// NoNetdev and NoRDMA leave out /sys/class/net and
	// /sys/class/infiniband respectively.
	NoNetdev, NoRDMA bool
	// KnownOnly reads only the RDMA and EFA counters this package
	// classifies, so Port.Other holds no ClassOther counter: a reader that
	// does not use them (the gpu_node receiver emits none) is spared one
	// file per counter per scan, about a third of an mlx5 port's.
	KnownOnly bool
}

// Scan reads every port under sysRoot (normally "/sys") once. A Scanner
// keeps what does not change between scans; Scan is for one-off reads.
func Scan(sysRoot string, opts Options) ([]Port, error) {
	return NewScanner(sysRoot, opts).Scan()
}

// Scanner reads the ports under one sysfs root repeatedly, keeping each
// device's static attributes while its sysfs device link is unchanged. It
// is safe for use by one goroutine at a time.
type Scanner struct {
	root string
	opts Options
	r    reader
	// static caches per sysfs directory what is read once per device.
	static map[string]*staticInfo
	seen   map[string]bool
	now    func() time.Time // the clock staticMaxAge is told by
}

// staticInfo is what a device keeps until its device link changes.
type staticInfo struct {
	link                              string // the device symlink's target, the cache key
	pci, vendor, driver, model, board string
	fw                                string
	numa                              int
	physical                          bool
	// lists holds the device's directory listings (its ports, their
	// counters) by path: a driver creates a port's counter files when it
	// binds, so they change only with the device link.
	lists map[string][]string
	// netdevs holds the netdev each RDMA port directory maps to.
	netdevs map[string]string
	at      time.Time // when it was read
}

// staticMaxAge is how long a device's static attributes, listings and
// netdev mapping are kept with the same device link: a RoCE port's GID
// table (and so its netdev) follows the addresses and bonds made after the
// driver bound.
const staticMaxAge = time.Minute

// NewScanner returns a Scanner of the sysfs tree at sysRoot.
func NewScanner(sysRoot string, opts Options) *Scanner {
	return &Scanner{root: sysRoot, opts: opts, static: map[string]*staticInfo{}, seen: map[string]bool{}, now: time.Now}
}

// Scan reads every port: netdevs first, in name order, then RDMA ports by
// device and port. A port that cannot be read is named in the returned
// error and left out; the others are returned.
func (s *Scanner) Scan() ([]Port, error) {
	var errs []error
	ports := make([]Port, 0, 24)
	clear(s.seen)
	if !s.opts.NoNetdev {
		dir := filepath.Join(s.root, "class", "net")
		names, err := listDir(dir)
		if err != nil {
			errs = append(errs, err)
		}
		for _, name := range names {
			if s.opts.Netdev != nil && !s.opts.Netdev(name) {
				continue
			}
			p, ok, err := s.readNetdev(filepath.Join(dir, name), name)
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				ports = append(ports, p)
			}
		}
	}
	if !s.opts.NoRDMA {
		dir := filepath.Join(s.root, "class", "infiniband")
		names, err := listDir(dir)
		// No RDMA class at all is a node without RDMA devices, not an error.
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, name := range names {
			var err error
			ports, err = s.readRDMA(ports, filepath.Join(dir, name), name)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	// Devices that went away drop out of the cache, and the files of
	// ports that went away are closed.
	for k := range s.static {
		if !s.seen[k] {
			delete(s.static, k)
		}
	}
	s.r.files.EndRound()
	return ports, errors.Join(errs...)
}

// Close closes the files the Scanner keeps open between scans. The Scanner
// can still be used; its next Scan opens them again.
func (s *Scanner) Close() { s.r.files.Close() }

// list returns the entry names of dir, a directory of the device st
// describes, from st's cache; with only, just the names it has. With
// missingOK a directory that does not exist (a port without hw_counters)
// lists as empty until the device link changes; other errors are not kept.
func (st *staticInfo) list(dir string, only map[string]known, missingOK bool) ([]string, error) {
	if names, ok := st.lists[dir]; ok {
		return names, nil
	}
	names, err := listDir(dir)
	if err != nil && (!missingOK || !errors.Is(err, os.ErrNotExist)) {
		return nil, err
	}
	if only != nil {
		names = slices.DeleteFunc(names, func(n string) bool { _, ok := only[n]; return !ok })
	}
	if st.lists == nil {
		st.lists = map[string][]string{}
	}
	st.lists[dir] = names
	return names, nil
}

// staticFor returns the cached static attributes of the device whose class
// directory is dir, reading them again when its device link changed.
// fill reads the class-specific ones (hca_type, fw_ver ...).
func (s *Scanner) staticFor(dir string, fill func(*staticInfo)) *staticInfo {
	s.seen[dir] = true
	devLink := filepath.Join(dir, "device")
	link, err := os.Readlink(devLink)
	if err != nil {
		link = ""
	}
	if st, ok := s.static[dir]; ok && st.link == link && s.now().Sub(st.at) < staticMaxAge {
		return st
	}
	st := &staticInfo{link: link, numa: -1, at: s.now()}
	if link != "" {
		st.physical = true
		if resolved, err := filepath.EvalSymlinks(devLink); err == nil {
			st.pci = pciAddrOf(resolved)
			if st.pci != "" {
				pciDir := resolved
				// A virtio or other child device sits below its PCI
				// function: its numa_node and vendor are the function's.
				for len(pciDir) > 1 && !strings.EqualFold(filepath.Base(pciDir), st.pci) {
					pciDir = filepath.Dir(pciDir)
				}
				if v, ok := s.r.int(pciDir, "numa_node"); ok && v >= 0 {
					st.numa = int(v)
				}
				st.vendor = vendorName(s.r.str(pciDir, "vendor"))
			}
		}
		if drv, err := os.Readlink(filepath.Join(devLink, "driver")); err == nil {
			st.driver = filepath.Base(drv)
		}
	}
	if fill != nil {
		fill(st)
	}
	s.static[dir] = st
	return st
}

func (st *staticInfo) apply(p *Port) {
	p.PCI, p.Vendor, p.Driver, p.NUMA, p.Physical = st.pci, st.vendor, st.driver, st.numa, st.physical
	p.Model, p.Board, p.FW = st.model, st.board, st.fw
}

// listDir returns a directory's entry names in order.
func listDir(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	_ = f.Close()
	sort.Strings(names)
	return names, err
}

// vendorName names the PCI vendors of the NICs GPU nodes carry, from the
// PCI-SIG vendor IDs as the pci.ids database lists them; others are left
// unnamed rather than guessed.
func vendorName(id string) string {
	switch strings.ToLower(id) {
	case "0x15b3":
		return "Mellanox" // ConnectX and BlueField, now NVIDIA's networking business
	case "0x1d0f":
		return "Amazon" // ENA and EFA
	case "0x8086":
		return "Intel"
	case "0x14e4":
		return "Broadcom"
	case "0x1077":
		return "QLogic"
	case "0x1924":
		return "Solarflare"
	case "0x1dd8":
		return "Pensando" // AMD Pensando DSCs
	case "0x1af4":
		return "Red Hat" // virtio
	}
	return ""
}
