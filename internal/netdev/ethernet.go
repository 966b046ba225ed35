package netdev

import "fmt"

// netdevCounters are the /sys/class/net/<if>/statistics files read, as
// Documentation/ABI/testing/sysfs-class-net-statistics describes them.
// Only these eight: the other statistics files are mostly zero on modern
// drivers, and each costs an open.
var netdevCounters = [...]struct {
	name  string
	class Class
	dir   Direction
}{
	{"rx_bytes", ClassBytes, Receive},
	{"tx_bytes", ClassBytes, Transmit},
	{"rx_packets", ClassPackets, Receive},
	{"tx_packets", ClassPackets, Transmit},
	{"rx_errors", ClassError, Receive},
	{"tx_errors", ClassError, Transmit},
	{"rx_dropped", ClassError, Receive},
	{"tx_dropped", ClassError, Transmit},
}

// readNetdev reads /sys/class/net/<name>. ok is false when the interface
// is left out (PhysicalOnly) or has no statistics at all.
func (s *Scanner) readNetdev(dir, name string) (p Port, ok bool, err error) {
	st := s.staticFor(dir, nil)
	if s.opts.PhysicalOnly && !st.physical {
		return Port{}, false, nil
	}
	p = Port{ID: name, Device: name, Netdev: name, Kind: KindNetdev}
	st.apply(&p)

	n := 0
	for _, c := range netdevCounters {
		v, ok := s.r.uint(dir, "statistics", c.name)
		if !ok {
			continue
		}
		n++
		switch c.name {
		case "rx_bytes":
			p.RxBytes, p.HasBytes = v, true
		case "tx_bytes":
			p.TxBytes, p.HasBytes = v, true
		case "rx_packets":
			p.RxPackets, p.HasPackets = v, true
		case "tx_packets":
			p.TxPackets, p.HasPackets = v, true
		default:
			p.Errors = append(p.Errors, Counter{Name: c.name, Class: c.class, Direction: c.dir, Value: v})
		}
	}
	if n == 0 {
		// An interface that vanished between the listing and the read is
		// gone, not broken; one whose statistics cannot be read is.
		if _, err := s.r.read(dir, "operstate"); err != nil {
			return Port{}, false, nil
		}
		return Port{}, false, fmt.Errorf("netdev %s: no statistics readable", name)
	}

	// operstate is RFC 2863's ifOperStatus in lower case; only "up" is up.
	if b, err := s.r.read(dir, "operstate"); err == nil {
		p.State = string(b)
		p.Up, p.HasUp = p.State == "up", true
	}
	// speed is in Mb/s; -1 (or EINVAL on the read, for a link that is
	// down or a virtual interface) means unknown.
	if v, ok := s.r.int(dir, "speed"); ok && v > 0 {
		p.RateBytesPerSec = float64(v) * 1e6 / 8
	}
	// type is the ARPHRD_* of include/uapi/linux/if_arp.h: 1 Ethernet,
	// 32 InfiniBand (IPoIB).
	if v, ok := s.r.uint(dir, "type"); ok {
		switch v {
		case 1:
			p.LinkLayer = LinkEthernet
		case 32:
			p.LinkLayer = LinkInfiniBand
		}
	}
	return p, true, nil
}
