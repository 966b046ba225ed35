package netdev

import (
	"path/filepath"
	"slices"
	"strings"
)

// How a rail was decided, as the contract's otelgpu.network.rail.by has it.
const (
	RailByPCIeSwitch = "pcie_switch"
	RailByNUMANode   = "numa_node"
)

// Rail is the GPUs one NIC port serves.
type Rail struct {
	// GPUs are the PCI bus IDs, normalised ("0000:18:00.0"), in order.
	GPUs []string
	// By is RailByPCIeSwitch or RailByNUMANode.
	By string
}

// NormalizeBusID turns a PCI bus ID as NVML and DCGM spell it
// ("00000000:18:00.0", 8-hex-digit domain, upper case) or as sysfs does
// ("0000:18:00.0") into sysfs's form: lower case, a 4-digit domain where
// the domain fits in one. A bus ID without a domain ("18:00.0") is in
// domain 0. ok is false for anything else.
func NormalizeBusID(id string) (string, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 2:
		parts = append([]string{"0000"}, parts...)
	case 3:
	default:
		return "", false
	}
	if len(parts[0]) > 8 {
		return "", false
	}
	dom := strings.TrimLeft(parts[0], "0")
	for len(dom) < 4 {
		dom = "0" + dom
	}
	out := dom + ":" + parts[1] + ":" + parts[2]
	if !isPCIAddr(out) {
		return "", false
	}
	return out, true
}

// pciNode is a PCI device's place in the topology.
type pciNode struct {
	path []string // the resolved path's elements below <sysRoot>/devices
	numa int
}

// resolvePCI finds a device's path in the PCI hierarchy from its
// <sysRoot>/bus/pci/devices link, as Documentation/ABI/testing/sysfs-bus-pci
// lays the tree out: pciDDDD:BB (the host bridge) / root port / switch
// ports ... / device.
func resolvePCI(r *reader, devices, sysRoot, addr string) (pciNode, bool) {
	resolved, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "bus", "pci", "devices", addr))
	if err != nil {
		return pciNode{}, false
	}
	rel, err := filepath.Rel(devices, resolved)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return pciNode{}, false
	}
	n := pciNode{path: strings.Split(filepath.ToSlash(rel), "/"), numa: -1}
	if v, ok := r.int(resolved, "numa_node"); ok && v >= 0 {
		n.numa = int(v)
	}
	return n, true
}

// sameSwitch reports whether two devices' deepest common ancestor is a PCI
// bridge rather than the host bridge: both sit below one root port, and a
// PCIe root port has one link, so below it they share a switch. Devices
// that meet only at pciDDDD:BB are on different root ports.
func sameSwitch(a, b []string) bool {
	if len(a) < 2 || len(b) < 2 || !strings.HasPrefix(a[0], "pci") {
		return false
	}
	k := 0
	// Only ancestors count: neither device's own element.
	for k < len(a)-1 && k < len(b)-1 && a[k] == b[k] {
		k++
	}
	if k < 2 {
		return false
	}
	for _, e := range a[1:k] {
		if isPCIAddr(e) {
			return true
		}
	}
	return false
}

// Rails decides which GPUs each NIC port serves, keyed by Port.ID. A GPU
// is served by the NICs under its PCIe switch; a GPU with no NIC under
// its switch is served by the NICs on its NUMA node that serve no GPU by
// switch (NUMA node -1, unknown, makes no rail). A port without a PCI
// address, or whose device cannot be placed, has no rail and is absent
// from the map, as are ports that serve no GPU.
func Rails(sysRoot string, gpuBusIDs []string, ports []Port) map[string]Rail {
	var r reader
	devices, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "devices"))
	if err != nil {
		return nil
	}
	type gpu struct {
		id       string
		node     pciNode
		bySwitch bool
	}
	var gpus []gpu
	for _, id := range gpuBusIDs {
		addr, ok := NormalizeBusID(id)
		if !ok || slices.ContainsFunc(gpus, func(g gpu) bool { return g.id == addr }) {
			continue
		}
		if n, ok := resolvePCI(&r, devices, sysRoot, addr); ok {
			gpus = append(gpus, gpu{id: addr, node: n})
		}
	}
	nics := map[string]pciNode{}
	switchGPUs := map[string][]string{} // port ID -> GPUs
	for _, p := range ports {
		if p.PCI == "" {
			continue
		}
		n, ok := nics[p.PCI]
		if !ok {
			if n, ok = resolvePCI(&r, devices, sysRoot, p.PCI); !ok {
				continue
			}
			nics[p.PCI] = n
		}
		for i := range gpus {
			if sameSwitch(gpus[i].node.path, n.path) {
				switchGPUs[p.ID] = append(switchGPUs[p.ID], gpus[i].id)
				gpus[i].bySwitch = true
			}
		}
	}
	out := map[string]Rail{}
	for _, p := range ports {
		n, ok := nics[p.PCI]
		if p.PCI == "" || !ok {
			continue
		}
		if g := switchGPUs[p.ID]; len(g) > 0 {
			slices.Sort(g)
			out[p.ID] = Rail{GPUs: g, By: RailByPCIeSwitch}
			continue
		}
		if n.numa < 0 {
			continue
		}
		var g []string
		for _, gp := range gpus {
			if !gp.bySwitch && gp.node.numa == n.numa {
				g = append(g, gp.id)
			}
		}
		if len(g) > 0 {
			slices.Sort(g)
			out[p.ID] = Rail{GPUs: g, By: RailByNUMANode}
		}
	}
	return out
}
