package netdev

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// known is what this package knows of a counter name.
type known struct {
	class Class
	dir   Direction
}

// rdmaKnown classifies the counters of /sys/class/infiniband/<dev>/ports/<n>/
// counters (the IBTA PortCounters and PortCountersExtended attributes, as
// the kernel's Documentation/ABI/stable/sysfs-class-infiniband lists them),
// and hw_counters (driver counters; mlx5's are described in NVIDIA's
// "Understanding mlx5 Linux Counters" and the kernel's mlx5 pages under
// Documentation/networking/device_drivers/ethernet/mellanox/). EFA ports
// use efaKnown instead. Names in neither are kept in Port.Other as
// ClassOther.
var rdmaKnown = map[string]known{
	// IBTA PortCounters / PortCountersExtended.
	"port_rcv_data":                   {ClassBytes, Receive},
	"port_xmit_data":                  {ClassBytes, Transmit},
	"port_rcv_packets":                {ClassPackets, Receive},
	"port_xmit_packets":               {ClassPackets, Transmit},
	"symbol_error":                    {ClassError, Receive},
	"link_downed":                     {ClassError, ""},
	"link_error_recovery":             {ClassError, ""},
	"port_rcv_errors":                 {ClassError, Receive},
	"port_rcv_remote_physical_errors": {ClassError, Receive},
	"port_rcv_switch_relay_errors":    {ClassError, Receive},
	"port_xmit_discards":              {ClassError, Transmit},
	"port_xmit_constraint_errors":     {ClassError, Transmit},
	"port_rcv_constraint_errors":      {ClassError, Receive},
	"local_link_integrity_errors":     {ClassError, ""},
	"excessive_buffer_overrun_errors": {ClassError, Receive},
	"VL15_dropped":                    {ClassError, Receive},
	"port_xmit_wait":                  {ClassWait, Transmit},

	// mlx5 hw_counters: receive-queue drops for want of a posted buffer.
	"out_of_buffer": {ClassError, Receive},
	// mlx5 RoCE retransmission and what causes it: adaptive
	// retransmissions and their timeouts, ACK timeouts at the requester,
	// NAK sequence errors received, out-of-sequence packets received.
	"roce_adp_retrans":      {ClassRetransmit, Transmit},
	"roce_adp_retrans_to":   {ClassRetransmit, Transmit},
	"local_ack_timeout_err": {ClassRetransmit, Transmit},
	"packet_seq_err":        {ClassRetransmit, Receive},
	"out_of_sequence":       {ClassRetransmit, Receive},
	// mlx5 DCQCN: CNPs this port sent as notification point, CNPs it
	// handled as reaction point, ECN-marked RoCE packets it received.
	"np_cnp_sent":                {ClassCNP, Transmit},
	"rp_cnp_handled":             {ClassCNP, Receive},
	"np_ecn_marked_roce_packets": {ClassCNP, Receive},
}

// retransmitted counts packets sent again; the other ClassRetransmit
// counters count events that cause retransmission, and summing those
// with these would count one loss twice.
func retransmitted(name string) bool {
	return name == "roce_adp_retrans" || name == "retrans_pkts"
}

// maxU32 is where the 32-bit IBTA PortCounters attribute's PortXmitData
// and PortRcvData stop: the IBTA Architecture Specification (Vol. 1,
// PortCounters) makes them saturate rather than wrap.
const maxU32 = 1<<32 - 1

// readRDMA appends the ports of the RDMA device at dir (a
// /sys/class/infiniband/<name> directory).
func (s *Scanner) readRDMA(ports []Port, dir, name string) ([]Port, error) {
	st := s.staticFor(dir, func(st *staticInfo) {
		st.model = s.r.str(dir, "hca_type")
		st.board = s.r.str(dir, "board_id")
		st.fw = s.r.str(dir, "fw_ver")
	})
	kind := KindIB
	if strings.HasPrefix(name, "efa") || st.driver == "efa" {
		kind = KindEFA
	}
	portNames, err := st.list(filepath.Join(dir, "ports"), nil, false)
	if err != nil {
		return ports, fmt.Errorf("rdma device %s: %w", name, err)
	}
	var errs []string
	for _, pn := range portNames {
		num, err := strconv.Atoi(pn)
		if err != nil || num < 0 {
			continue
		}
		p := Port{ID: name + ":" + pn, Device: name, Port: num, Kind: kind}
		st.apply(&p)
		pdir := filepath.Join(dir, "ports", pn)
		n := s.readRDMACounters(&p, st, pdir, "counters")
		n += s.readRDMACounters(&p, st, pdir, "hw_counters")
		// An EFA device on older kernels keeps its counters at device
		// level only, with one port.
		if kind == KindEFA && len(portNames) == 1 {
			n += s.readRDMACounters(&p, st, dir, "hw_counters")
		}
		ok := s.readRDMAPortState(&p, pdir)
		if n == 0 && !ok {
			errs = append(errs, pn)
			continue
		}
		p.Netdev = s.rdmaNetdevOf(st, dir, pdir, num)
		ports = append(ports, p)
	}
	if errs != nil {
		return ports, fmt.Errorf("rdma device %s: nothing readable in port(s) %s", name, strings.Join(errs, ","))
	}
	return ports, nil
}

// readRDMAPortState reads a port's state, rate and link layer; false when
// none of them could be read.
func (s *Scanner) readRDMAPortState(p *Port, pdir string) bool {
	readable := false
	// state is "N: WORD" with the IBTA PortState (4 = ACTIVE); phys_state
	// the PortPhysicalState (5 = LinkUp), as the kernel's state_show and
	// phys_state_show print them.
	state, word, okState := parseState(s.readOr(pdir, "state"))
	phys, _, okPhys := parseState(s.readOr(pdir, "phys_state"))
	if okState {
		readable = true
		p.State = word
		p.HasUp = true
		p.Up = state == 4 && (!okPhys || phys == 5)
	}
	if b, err := s.r.read(pdir, "rate"); err == nil {
		readable = true
		if v, ok := parseRate(b); ok {
			p.RateBytesPerSec = v
		}
	}
	if b, err := s.r.read(pdir, "link_layer"); err == nil {
		readable = true
		switch strings.ToLower(string(b)) {
		case "infiniband":
			p.LinkLayer = LinkInfiniBand
		case "ethernet":
			p.LinkLayer = LinkEthernet
		}
	}
	return readable
}

// readOr reads a file, nil when it cannot be read.
func (s *Scanner) readOr(parts ...string) []byte {
	b, err := s.r.read(parts...)
	if err != nil {
		return nil
	}
	return b
}

// readRDMACounters reads every file of dir/sub into p (with KnownOnly,
// every file it classifies); it returns how many it read.
func (s *Scanner) readRDMACounters(p *Port, st *staticInfo, dir, sub string) int {
	cdir := filepath.Join(dir, sub)
	var only map[string]known
	if s.opts.KnownOnly {
		only = rdmaKnown
		if p.Kind == KindEFA {
			only = efaKnown
		}
	}
	names, err := st.list(cdir, only, true)
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		v, ok := s.r.uint(cdir, name)
		if !ok {
			continue // a directory, an unreadable or a non-numeric file
		}
		n++
		p.addRDMA(name, v)
	}
	return n
}

// addRDMA files one RDMA counter into the port.
func (p *Port) addRDMA(name string, v uint64) {
	var k known
	var ok bool
	if p.Kind == KindEFA {
		k, ok = efaKnown[name]
	} else {
		k, ok = rdmaKnown[name]
	}
	if !ok {
		p.Other = append(p.Other, Counter{Name: name, Value: v})
		return
	}
	switch k.class {
	case ClassBytes:
		if name == "port_rcv_data" || name == "port_xmit_data" {
			// PortRcvData and PortXmitData count octets divided by four
			// (IBTA Architecture Specification Vol. 1, PortCounters and
			// PortCountersExtended; the kernel's sysfs-class-infiniband
			// ABI document says the same of these files).
			if v == maxU32 {
				p.DataSaturated = true
			}
			v *= 4
		}
		p.HasBytes = true
		if k.dir == Receive {
			p.RxBytes = v
		} else {
			p.TxBytes = v
		}
	case ClassPackets:
		p.HasPackets = true
		if k.dir == Receive {
			p.RxPackets = v
		} else {
			p.TxPackets = v
		}
	case ClassError:
		p.Errors = append(p.Errors, Counter{Name: name, Class: k.class, Direction: k.dir, Value: v})
	case ClassWait:
		p.XmitWait, p.HasXmitWait = v, true
	case ClassRetransmit:
		if retransmitted(name) {
			p.Retransmits += v
			p.HasRetransmits = true
		}
		p.Other = append(p.Other, Counter{Name: name, Class: k.class, Direction: k.dir, Value: v})
	case ClassCNP:
		if name != "np_ecn_marked_roce_packets" {
			p.CNPs += v
			p.HasCNPs = true
		}
		p.Other = append(p.Other, Counter{Name: name, Class: k.class, Direction: k.dir, Value: v})
	default:
		p.Other = append(p.Other, Counter{Name: name, Class: k.class, Direction: k.dir, Value: v})
	}
}

// rdmaNetdevOf is rdmaNetdev, kept with the device's static attributes.
func (s *Scanner) rdmaNetdevOf(st *staticInfo, dir, pdir string, port int) string {
	if n, ok := st.netdevs[pdir]; ok {
		return n
	}
	n := s.rdmaNetdev(dir, pdir, port)
	if st.netdevs == nil {
		st.netdevs = map[string]string{}
	}
	st.netdevs[pdir] = n
	return n
}

// rdmaNetdev names the netdev an RDMA port carries traffic for: the one
// its first GID is bound to (ports/<n>/gid_attrs/ndevs/0, which names the
// bond master for a RoCE LAG device), else the PCI function's own netdev
// (<dev>/device/net/*), choosing by dev_port when the function has several.
func (s *Scanner) rdmaNetdev(dir, pdir string, port int) string {
	if b, err := s.r.read(pdir, "gid_attrs", "ndevs", "0"); err == nil && len(b) > 0 {
		return string(b)
	}
	netDir := filepath.Join(dir, "device", "net")
	names, err := listDir(netDir)
	if err != nil || len(names) == 0 {
		return ""
	}
	if len(names) == 1 {
		return names[0]
	}
	// dev_port is the 0-based port index of a multi-port function
	// (Documentation/ABI/testing/sysfs-class-net).
	for _, n := range names {
		if v, ok := s.r.uint(netDir, n, "dev_port"); ok && int(v) == port-1 {
			return n
		}
	}
	return ""
}

// parseState parses an RDMA port's state or phys_state line, "4: ACTIVE".
func parseState(b []byte) (num int, word string, ok bool) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 || i > 3 || i >= len(b) || b[i] != ':' {
		return 0, "", false
	}
	v, _ := parseUint(b[:i])
	return int(v), strings.TrimSpace(string(b[i+1:])), true
}

// parseRate parses an RDMA port's rate, "400 Gb/sec (4X NDR)" or
// "2.5 Gb/sec (1X SDR)", into bytes per second.
func parseRate(b []byte) (float64, bool) {
	i := 0
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.') {
		i++
	}
	if i == 0 || i > 12 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b[:i]), 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	rest := strings.TrimSpace(string(b[i:]))
	var mul float64
	switch {
	case strings.HasPrefix(rest, "Gb/sec"):
		mul = 1e9
	case strings.HasPrefix(rest, "Mb/sec"):
		mul = 1e6
	default:
		return 0, false
	}
	return v * mul / 8, true
}
