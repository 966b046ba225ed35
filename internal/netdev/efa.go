package netdev

import (
	"bytes"
	"fmt"
)

// efaKnown classifies the AWS EFA driver's hw_counters, as
// drivers/infiniband/hw/efa/efa_verbs.c in the kernel names them (the
// port-level set; the device-level one adds admin-queue and verb error
// counts, kept in Port.Other). Unlike mlx5's port counters these count
// bytes, not 4-byte words.
var efaKnown = map[string]known{
	"tx_bytes": {ClassBytes, Transmit},
	"rx_bytes": {ClassBytes, Receive},
	"tx_pkts":  {ClassPackets, Transmit},
	"rx_pkts":  {ClassPackets, Receive},
	"rx_drops": {ClassError, Receive},
	// The SRD protocol's retransmissions (Nitro v4 and later).
	"retrans_pkts":           {ClassRetransmit, Transmit},
	"retrans_bytes":          {ClassRetransmit, Transmit},
	"retrans_timeout_events": {ClassRetransmit, Transmit},
	// A peer that stopped answering, or answers slowly: errors of the
	// connection, not of one direction.
	"impaired_remote_conn_events": {ClassError, ""},
	"unresponsive_remote_events":  {ClassError, ""},
}

// Stat is one named driver statistic, as `ethtool -S` or a hw_counters
// dump lists it.
type Stat struct {
	Name  string
	Value uint64
}

// ParseCounterDump parses a dump of counters one per line as "name :value"
// or "name: value" (white space around the colon optional), the form a
// shell loop over hw_counters or `ethtool -S` prints. Lines without a
// colon (a heading such as "NIC statistics:" has nothing after it) are
// skipped; a line whose value is not an unsigned decimal number is
// skipped too and reported in the error, the others are still returned.
func ParseCounterDump(data []byte) ([]Stat, error) {
	var stats []Stat
	bad := 0
	var first []byte
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		i := bytes.LastIndexByte(line, ':')
		if i < 0 {
			continue
		}
		name := bytes.TrimSpace(line[:i])
		val := bytes.TrimSpace(line[i+1:])
		if len(val) == 0 || len(name) == 0 {
			continue // a heading, such as "NIC statistics:"
		}
		v, ok := parseUint(val)
		if !ok {
			if bad == 0 {
				first = line
			}
			bad++
			continue
		}
		stats = append(stats, Stat{Name: string(name), Value: v})
	}
	if bad > 0 {
		return stats, fmt.Errorf("counter dump: %d line(s) without a number, first %q", bad, first)
	}
	return stats, nil
}

// AddEFA files EFA hw_counters read from elsewhere (a dump, say) into the
// port, as Scan files those it reads from sysfs.
func (p *Port) AddEFA(stats []Stat) {
	kind := p.Kind
	p.Kind = KindEFA
	for _, s := range stats {
		p.addRDMA(s.Name, s.Value)
	}
	p.Kind = kind
}
