package netdev

// ethtoolKnown classifies the driver statistics that explain a slow or
// lossy NIC, by the names the drivers give them: mlx5's physical-port
// counters (the kernel's mlx5 counters page under Documentation/
// networking/device_drivers/ethernet/mellanox/mlx5/) and the AWS ENA
// driver's shaping counters (Documentation/networking/device_drivers/
// ethernet/amazon/ena.rst and AWS's "Monitor network performance for ENA
// settings" guide). The rest of a driver's hundreds of statistics are left
// to the caller, who has them all from EthtoolStats or ParseCounterDump.
var ethtoolKnown = map[string]known{
	// Packets the NIC dropped because the host did not take them fast
	// enough (no receive buffer, or the port's buffer full).
	"rx_discards_phy":   {ClassError, Receive},
	"tx_discards_phy":   {ClassError, Transmit},
	"rx_out_of_buffer":  {ClassError, Receive},
	"rx_crc_errors_phy": {ClassError, Receive},
	"rx_symbol_err_phy": {ClassError, Receive},
	"tx_errors_phy":     {ClassError, Transmit},
	"rx_pause_ctrl_phy": {ClassPause, Receive},
	"tx_pause_ctrl_phy": {ClassPause, Transmit},
	"rx_global_pause":   {ClassPause, Receive},
	"tx_global_pause":   {ClassPause, Transmit},

	"bw_in_allowance_exceeded":     {ClassAllowance, Receive},
	"bw_out_allowance_exceeded":    {ClassAllowance, Transmit},
	"pps_allowance_exceeded":       {ClassAllowance, ""},
	"conntrack_allowance_exceeded": {ClassAllowance, ""},
	"linklocal_allowance_exceeded": {ClassAllowance, ""},
}

// allowanceName is the contract's otelgpu.network.allowance value of an
// ENA shaping counter: its name without "_allowance_exceeded".
func allowanceName(name string) string {
	const suffix = "_allowance_exceeded"
	if len(name) > len(suffix) && name[len(name)-len(suffix):] == suffix {
		return name[:len(name)-len(suffix)]
	}
	return name
}

// AddEthtool files the driver statistics this package classifies into the
// port: drops and discards into Errors, ENA shaping counters into
// Allowance (by short name: bw_in, bw_out, pps, conntrack, linklocal),
// pause frames into Other as ClassPause. Statistics it does not know are
// not copied: a ConnectX port has over a thousand, mostly per queue.
func (p *Port) AddEthtool(stats []Stat) {
	for _, s := range stats {
		k, ok := ethtoolKnown[s.Name]
		if !ok {
			continue
		}
		c := Counter{Name: s.Name, Class: k.class, Direction: k.dir, Value: s.Value}
		switch k.class {
		case ClassError:
			p.Errors = append(p.Errors, c)
		case ClassAllowance:
			c.Name = allowanceName(s.Name)
			p.Allowance = append(p.Allowance, c)
		default:
			p.Other = append(p.Other, c)
		}
	}
}
