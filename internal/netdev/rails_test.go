package netdev

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:18:00.0": "0000:18:00.0",
		"0000:18:00.0":     "0000:18:00.0",
		"00000000:9A:00.0": "0000:9a:00.0",
		"18:00.0":          "0000:18:00.0",
		"00010000:01:00.1": "10000:01:00.1",
		"0000:AB:1f.7":     "0000:ab:1f.7",
	} {
		if got, ok := NormalizeBusID(in); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "GPU-1234", "0000:18:00", "0000:1g:00.0", "000000000:18:00.0", "a:b:c:d"} {
		if got, ok := NormalizeBusID(bad); ok {
			t.Errorf("%q: %q accepted", bad, got)
		}
	}
}

// hgx builds an HGX-like node: four host bridges, each with two PCIe
// switches, each switch with one GPU and one NIC (8 GPUs, 8 NICs);
// NUMA 0 for the first two host bridges, 1 for the others.
func hgx(t *testing.T) (root string, gpus []string, ports []Port) {
	t.Helper()
	f := newFakeSys(t)
	for i := range 8 {
		hb := fmt.Sprintf("%02x", 0x10+0x20*(i/2))                   // host bridge bus
		rp := fmt.Sprintf("0000:%s:%02x.0", hb, 1+i%2)               // root port
		up := fmt.Sprintf("0000:%02x:00.0", 0x11+0x20*(i/2)+8*(i%2)) // switch upstream port
		bus := 0x11 + 0x20*(i/2) + 8*(i%2)
		dnG := fmt.Sprintf("0000:%02x:00.0", bus+1)
		dnN := fmt.Sprintf("0000:%02x:01.0", bus+1)
		gpu := fmt.Sprintf("0000:%02x:00.0", bus+2)
		nic := fmt.Sprintf("0000:%02x:00.0", bus+3)
		numa := strconv.Itoa(i / 4)
		base := "pci0000:" + hb + "/" + rp + "/" + up
		f.pciDevice(base+"/"+dnG+"/"+gpu, numa)
		f.pciDevice(base+"/"+dnN+"/"+nic, numa)
		gpus = append(gpus, fmt.Sprintf("00000000:%02X:00.0", bus+2))
		ports = append(ports, Port{ID: fmt.Sprintf("mlx5_%d:1", i), PCI: nic})
	}
	return f.root, gpus, ports
}

func TestRailsHGX(t *testing.T) {
	root, gpus, ports := hgx(t)
	// A veth (no PCI) and a port whose device is unknown get no rail.
	ports = append(ports, Port{ID: "veth0"}, Port{ID: "ghost:1", PCI: "0000:ee:00.0"})
	rails := Rails(root, gpus, ports)
	if len(rails) != 8 {
		t.Fatalf("%d rails: %v", len(rails), rails)
	}
	for i, p := range ports[:8] {
		want, _ := NormalizeBusID(gpus[i])
		r := rails[p.ID]
		if r.By != RailByPCIeSwitch || !slices.Equal(r.GPUs, []string{want}) {
			t.Errorf("%s: %+v, want %s by switch", p.ID, r, want)
		}
	}
}

// TestRailsNUMAFallback: a PCIe box with the GPUs on one root complex and
// the NICs on another: no switch is shared, so NUMA decides.
func TestRailsNUMAFallback(t *testing.T) {
	f := newFakeSys(t)
	f.pciDevice("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", "0") // GPU 0 behind a switch
	f.pciDevice("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", "0") // GPU 1, same switch
	f.pciDevice("pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0", "1") // GPU 2
	f.pciDevice("pci0000:40/0000:40:01.0/0000:41:00.0", "0")                           // NIC on NUMA 0
	f.pciDevice("pci0000:c0/0000:c0:01.0/0000:c1:00.0", "1")                           // NIC on NUMA 1
	f.pciDevice("pci0000:e0/0000:e0:01.0/0000:e1:00.0", "-1")                          // NIC, NUMA unknown
	ports := []Port{{ID: "eth0", PCI: "0000:41:00.0"}, {ID: "eth1", PCI: "0000:c1:00.0"}, {ID: "eth2", PCI: "0000:e1:00.0"}}
	rails := Rails(f.root, []string{"0000:03:00.0", "0000:04:00.0", "00000000:83:00.0"}, ports)
	if r := rails["eth0"]; r.By != RailByNUMANode || !slices.Equal(r.GPUs, []string{"0000:03:00.0", "0000:04:00.0"}) {
		t.Errorf("eth0: %+v", r)
	}
	if r := rails["eth1"]; r.By != RailByNUMANode || !slices.Equal(r.GPUs, []string{"0000:83:00.0"}) {
		t.Errorf("eth1: %+v", r)
	}
	if r, ok := rails["eth2"]; ok {
		t.Errorf("eth2 (NUMA unknown): %+v", r)
	}
}

// TestRailsSeparateRootPort: under one host bridge, a NIC on a root port
// no GPU shares meets the GPUs only at pciDDDD:BB, which is no switch;
// the GPU under the switch with its own NIC keeps it, and the GPU with no
// switch NIC falls back to the lone NIC by NUMA node.
func TestRailsSeparateRootPort(t *testing.T) {
	f := newFakeSys(t)
	f.pciDevice("pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0", "0") // GPU A
	f.pciDevice("pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:01.0/0000:1b:00.0", "0") // NIC A, same switch
	f.pciDevice("pci0000:17/0000:17:02.0/0000:20:00.0", "0")                           // GPU B on its own root port
	f.pciDevice("pci0000:17/0000:17:03.0/0000:30:00.0", "0")                           // NIC C on a root port of its own
	ports := []Port{{ID: "mlx5_0:1", PCI: "0000:1b:00.0"}, {ID: "eth9", PCI: "0000:1b:00.0"}, {ID: "mlx5_1:1", PCI: "0000:30:00.0"}}
	rails := Rails(f.root, []string{"0000:1a:00.0", "0000:20:00.0"}, ports)
	for _, id := range []string{"mlx5_0:1", "eth9"} {
		if r := rails[id]; r.By != RailByPCIeSwitch || !slices.Equal(r.GPUs, []string{"0000:1a:00.0"}) {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if r := rails["mlx5_1:1"]; r.By != RailByNUMANode || !slices.Equal(r.GPUs, []string{"0000:20:00.0"}) {
		t.Errorf("mlx5_1:1: %+v", r)
	}
	if sameSwitch([]string{"pci0000:17", "0000:17:02.0", "0000:20:00.0"}, []string{"pci0000:17", "0000:17:03.0", "0000:30:00.0"}) {
		t.Error("two root ports share a switch")
	}
}
