package netdev

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestScanNetdevs(t *testing.T) {
	f := newFakeSys(t)
	f.pciDevice("pci0000:17/0000:17:00.0/0000:18:00.0", "0")
	f.file("devices/pci0000:17/0000:17:00.0/0000:18:00.0/vendor", "0x15b3")
	f.netdev("eth0", "pci0000:17/0000:17:00.0/0000:18:00.0", 1000, 2000)
	f.file("class/net/eth0/speed", "400000")
	f.netdev("lo", "", 5, 5)
	f.file("class/net/lo/operstate", "unknown")
	f.netdev("veth1", "", 700, 800)
	f.file("class/net/veth1/speed", "-1")
	// A virtio NIC: its device is a child of the PCI function.
	f.pciDevice("pci0000:00/0000:00:03.0", "-1")
	f.netdev("ens3", "pci0000:00/0000:00:03.0/virtio2", 1, 1)

	ports, err := Scan(f.root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Port{}
	for _, p := range ports {
		byID[p.ID] = p
	}
	if len(byID) != 4 {
		t.Fatalf("%v", ports)
	}
	e := byID["eth0"]
	if e.PCI != "0000:18:00.0" || e.NUMA != 0 || !e.Physical || e.Vendor != "Mellanox" || e.RateBytesPerSec != 400e9/8 ||
		e.RxBytes != 1000 || e.TxBytes != 2000 || e.RxPackets != 10 || !e.Up || e.LinkLayer != LinkEthernet || len(e.Errors) != 4 {
		t.Errorf("eth0: %+v", e)
	}
	if v, _ := errorValue(&e, "tx_dropped"); v != 4 {
		t.Errorf("tx_dropped %d", v)
	}
	if v := byID["veth1"]; v.Physical || v.PCI != "" || v.NUMA != -1 || v.RateBytesPerSec != 0 || v.RxBytes != 700 {
		t.Errorf("veth1: %+v", v)
	}
	if v := byID["ens3"]; v.PCI != "0000:00:03.0" || v.NUMA != -1 {
		t.Errorf("ens3: %+v", v)
	}
	if lo := byID["lo"]; lo.Up || !lo.HasUp || lo.State != "unknown" {
		t.Errorf("lo: %+v", lo)
	}

	ports, err = Scan(f.root, Options{PhysicalOnly: true})
	if err != nil || len(ports) != 2 || ports[0].ID != "ens3" || ports[1].ID != "eth0" {
		t.Errorf("physical only: %v, %v", ports, err)
	}
	ports, err = Scan(f.root, Options{Netdev: func(n string) bool { return n != "lo" }, NoRDMA: true})
	if err != nil || len(ports) != 3 {
		t.Errorf("without lo: %v, %v", ports, err)
	}
}

// TestScanBadInput: values that do not parse are left out, a port with
// nothing readable is an error naming it, and the other ports still come.
func TestScanBadInput(t *testing.T) {
	f := newFakeSys(t)
	f.netdev("good0", "", 10, 20)
	f.file("class/net/bad0/statistics/rx_bytes", "lots")
	f.file("class/net/bad0/operstate", "up")
	f.file("class/net/odd0/statistics/rx_bytes", "99999999999999999999999")
	f.file("class/net/odd0/statistics/tx_bytes", "12")
	f.file("class/net/odd0/speed", "fast")
	f.file("class/net/odd0/operstate", "")
	f.file("class/infiniband/mlx5_0/hca_type", "MT4129")
	f.file("class/infiniband/mlx5_0/ports/1/state", "garbage")
	f.file("class/infiniband/mlx5_0/ports/1/rate", "fast (4X)")
	f.file("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", "-5")
	f.file("class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "4294967295")
	if err := os.MkdirAll(filepath.Join(f.root, "class/infiniband/mlx5_3/ports/1"), 0o750); err != nil {
		t.Fatal(err)
	}
	ports, err := Scan(f.root, Options{})
	if err == nil {
		t.Fatal("no error for bad0 and mlx5_3")
	}
	for _, want := range []string{"netdev bad0", "rdma device mlx5_3"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	ids := map[string]Port{}
	for _, p := range ports {
		ids[p.ID] = p
	}
	if _, ok := ids["good0"]; !ok || len(ids) != 3 {
		t.Fatalf("ports %v", ports)
	}
	if o := ids["odd0"]; o.TxBytes != 12 || o.RxBytes != 0 || o.RateBytesPerSec != 0 || o.Up {
		t.Errorf("odd0: %+v", o)
	}
	m := ids["mlx5_0:1"]
	if m.HasUp || m.RateBytesPerSec != 0 || m.RxBytes != 0 || m.TxBytes != 4*maxU32 || !m.DataSaturated {
		t.Errorf("mlx5_0: %+v", m)
	}
	// No class/infiniband at all is a node without RDMA, not an error.
	g := newFakeSys(t)
	g.netdev("eth0", "", 1, 1)
	if _, err := Scan(g.root, Options{}); err != nil {
		t.Error(err)
	}
	if _, err := Scan(filepath.Join(g.root, "nowhere"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing root: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestScanRoCEAndEFA: a RoCE port's netdev from gid_attrs, else from the
// PCI function's net directory; an EFA device's port counters in bytes.
func TestScanRoCEAndEFA(t *testing.T) {
	f := newFakeSys(t)
	dev := "pci0000:17/0000:17:00.0/0000:18:00.0"
	f.pciDevice(dev, "1")
	f.file("devices/"+dev+"/net/ens1f0np0/dev_port", "0")
	f.link("class/infiniband/mlx5_2/device", "devices/"+dev)
	f.file("class/infiniband/mlx5_2/hca_type", "MT4129")
	p1 := "class/infiniband/mlx5_2/ports/1/"
	f.file(p1+"state", "4: ACTIVE")
	f.file(p1+"phys_state", "5: LinkUp")
	f.file(p1+"rate", "2.5 Gb/sec (1X SDR)")
	f.file(p1+"link_layer", "Ethernet")
	f.file(p1+"hw_counters/np_cnp_sent", "7")
	f.file(p1+"hw_counters/rp_cnp_handled", "5")
	f.file(p1+"hw_counters/np_ecn_marked_roce_packets", "9")
	f.file(p1+"hw_counters/new_driver_counter", "42")
	f.file("class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/0", "bond0")
	f.file("class/infiniband/mlx5_bond_0/ports/1/state", "1: DOWN")
	f.file("class/infiniband/mlx5_bond_0/ports/1/phys_state", "3: Disabled")

	efa := "class/infiniband/efa_0/ports/1/"
	f.file(efa+"state", "4: ACTIVE")
	f.file(efa+"hw_counters/tx_bytes", "1000")
	f.file(efa+"hw_counters/rx_bytes", "2000")
	f.file(efa+"hw_counters/rx_pkts", "20")
	f.file(efa+"hw_counters/retrans_pkts", "6")
	f.file(efa+"hw_counters/retrans_bytes", "6000")
	f.file(efa+"hw_counters/unresponsive_remote_events", "1")
	f.file(efa+"hw_counters/rdma_read_bytes", "300")

	ports, err := Scan(f.root, Options{NoNetdev: true})
	if err != nil || len(ports) != 3 {
		t.Fatalf("%v %v", ports, err)
	}
	e, m, b := ports[0], ports[1], ports[2]
	if m.ID != "mlx5_2:1" || m.Netdev != "ens1f0np0" || m.PCI != "0000:18:00.0" || m.NUMA != 1 || !m.Up ||
		m.RateBytesPerSec != 2.5e9/8 || m.LinkLayer != LinkEthernet || m.CNPs != 12 || !m.HasCNPs {
		t.Errorf("mlx5_2: %+v", m)
	}
	if c, ok := otherValue(&m, "new_driver_counter"); !ok || c.Value != 42 || c.Class != ClassOther {
		t.Errorf("unknown counter: %+v", c)
	}
	if c, _ := otherValue(&m, "np_ecn_marked_roce_packets"); c.Class != ClassCNP || c.Direction != Receive {
		t.Errorf("ecn: %+v", c)
	}
	if b.ID != "mlx5_bond_0:1" || b.Netdev != "bond0" || b.Up || !b.HasUp || b.State != "DOWN" {
		t.Errorf("bond: %+v", b)
	}
	if e.ID != "efa_0:1" || e.Kind != KindEFA || e.TxBytes != 1000 || e.RxBytes != 2000 || e.RxPackets != 20 ||
		e.Retransmits != 6 || !e.Up {
		t.Errorf("efa: %+v", e)
	}
	if v, ok := errorValue(&e, "unresponsive_remote_events"); !ok || v != 1 {
		t.Errorf("efa unresponsive: %d", v)
	}
	if c, ok := otherValue(&e, "rdma_read_bytes"); !ok || c.Value != 300 {
		t.Errorf("efa rdma_read_bytes: %+v", c)
	}
}

// TestScannerCache: a device's static attributes are read again when its
// device link changes, and a device that went away leaves the cache.
func TestScannerCache(t *testing.T) {
	f := newFakeSys(t)
	f.pciDevice("pci0000:17/0000:17:00.0/0000:18:00.0", "0")
	f.pciDevice("pci0000:97/0000:97:00.0/0000:98:00.0", "1")
	f.netdev("eth0", "pci0000:17/0000:17:00.0/0000:18:00.0", 1, 1)
	s := NewScanner(f.root, Options{})
	ports, _ := s.Scan()
	if ports[0].PCI != "0000:18:00.0" {
		t.Fatal(ports)
	}
	if err := os.Remove(filepath.Join(f.root, "class/net/eth0/device")); err != nil {
		t.Fatal(err)
	}
	f.link("class/net/eth0/device", "devices/pci0000:97/0000:97:00.0/0000:98:00.0")
	ports, _ = s.Scan()
	if ports[0].PCI != "0000:98:00.0" || ports[0].NUMA != 1 {
		t.Errorf("after the link moved: %+v", ports[0])
	}
	if err := os.RemoveAll(filepath.Join(f.root, "class/net/eth0")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scan(); err != nil || len(s.static) != 0 {
		t.Errorf("cache %v, %v", s.static, err)
	}
}

// TestScannerStaticMaxAge: a device's static attributes and listings are
// read again after staticMaxAge even with the same device link (a RoCE
// port's netdev follows bonds and addresses made after the driver bound),
// and not before.
func TestScannerStaticMaxAge(t *testing.T) {
	f := newFakeSys(t)
	f.pciDevice("pci0000:17/0000:17:00.0/0000:18:00.0", "0")
	f.netdev("eth0", "pci0000:17/0000:17:00.0/0000:18:00.0", 1, 1)
	s := NewScanner(f.root, Options{})
	now := time.Unix(1767225600, 0)
	s.now = func() time.Time { return now }
	if ports, _ := s.Scan(); len(ports) != 1 || ports[0].NUMA != 0 {
		t.Fatal(ports)
	}
	numa := filepath.Join(f.root, "devices/pci0000:17/0000:17:00.0/0000:18:00.0/numa_node")
	if err := os.WriteFile(numa, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(staticMaxAge - time.Second)
	if ports, _ := s.Scan(); ports[0].NUMA != 0 {
		t.Errorf("static attributes read again before staticMaxAge: NUMA %d", ports[0].NUMA)
	}
	now = now.Add(time.Second)
	if ports, _ := s.Scan(); ports[0].NUMA != 1 {
		t.Errorf("static attributes not read again after staticMaxAge: NUMA %d", ports[0].NUMA)
	}
}
