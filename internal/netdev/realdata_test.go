package netdev

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// realNodeDir is the folder of real node fixtures beside the repository
// (shared/realdata/node, sources in its SOURCES.md), read in place: some
// have no licence.
func realNodeDir(tb testing.TB) string {
	tb.Helper()
	return sharedtest.Path(tb, "realdata/node")
}

// fixtureRoot makes a sysfs root whose class/infiniband is the given
// fixture directory (a symlink to it): the fixtures are class/infiniband
// trees, not whole sysfs trees.
func fixtureRoot(tb testing.TB, ibDir string) string {
	tb.Helper()
	root := tb.TempDir()
	abs, err := filepath.Abs(ibDir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "class"), 0o750); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(root, "class", "infiniband")); err != nil {
		tb.Fatal(err)
	}
	return root
}

func errorValue(p *Port, name string) (uint64, bool) {
	for _, c := range p.Errors {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

func otherValue(p *Port, name string) (Counter, bool) {
	for _, c := range p.Other {
		if c.Name == name {
			return c, true
		}
	}
	return Counter{}, false
}

func TestRealGpudH100(t *testing.T) {
	root := fixtureRoot(t, filepath.Join(realNodeDir(t), "ib_sysfs", "gpud_h100_sys_class_infiniband"))
	ports, err := Scan(root, Options{NoNetdev: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ports {
		ids = append(ids, p.ID)
	}
	want := []string{"mlx5_0:1", "mlx5_1:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1", "mlx5_7:1", "mlx5_8:1", "mlx5_9:1", "mlx5_bond_0:1"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ports %v, want %v", ids, want)
	}
	for i := range ports {
		p := &ports[i]
		if p.Kind != KindIB || !p.Up || !p.HasUp || p.State != "ACTIVE" {
			t.Errorf("%s: kind %s up %v/%v state %q", p.ID, p.Kind, p.Up, p.HasUp, p.State)
		}
		// The fixture replicates one port's counters on every device.
		if p.XmitWait != 2489603687 || !p.HasXmitWait {
			t.Errorf("%s: port_xmit_wait %d", p.ID, p.XmitWait)
		}
		if v, _ := errorValue(p, "port_rcv_errors"); v != 14 {
			t.Errorf("%s: port_rcv_errors %d", p.ID, v)
		}
		if v, _ := errorValue(p, "excessive_buffer_overrun_errors"); v != 15 {
			t.Errorf("%s: excessive_buffer_overrun_errors %d", p.ID, v)
		}
		// SOURCES.md calls the counters identical on all nine devices;
		// mlx5_1 is the exception, with its own port_rcv_data and two
		// relay errors.
		rxWords, relay := uint64(230539874932483), uint64(1)
		if p.ID == "mlx5_1:1" {
			rxWords, relay = 205128687774249, 2
		}
		if v, _ := errorValue(p, "port_rcv_switch_relay_errors"); v != relay {
			t.Errorf("%s: port_rcv_switch_relay_errors %d", p.ID, v)
		}
		// port_*_data count 4-byte words.
		if p.RxBytes != rxWords*4 || p.TxBytes != 230442669431839*4 || p.DataSaturated {
			t.Errorf("%s: bytes rx %d tx %d saturated %v", p.ID, p.RxBytes, p.TxBytes, p.DataSaturated)
		}
		if p.RxPackets != 317548853677 || p.TxPackets != 315487941081 {
			t.Errorf("%s: packets rx %d tx %d", p.ID, p.RxPackets, p.TxPackets)
		}
		if p.Retransmits != 3 || !p.HasRetransmits {
			t.Errorf("%s: retransmits %d", p.ID, p.Retransmits)
		}
		if c, ok := otherValue(p, "rx_dct_connect"); !ok || c.Value != 422237 || c.Class != ClassOther {
			t.Errorf("%s: rx_dct_connect %+v %v (an unknown counter is kept)", p.ID, c, ok)
		}
		if p.ID == "mlx5_bond_0:1" {
			if p.Model != "MT41692" || p.FW != "32.38.3056" || p.LinkLayer != LinkEthernet || p.RateBytesPerSec != 200e9/8 {
				t.Errorf("bond: %+v", p)
			}
			continue
		}
		if p.Model != "MT4129" || p.FW != "28.41.1000" || p.LinkLayer != LinkInfiniBand || p.RateBytesPerSec != 400e9/8 {
			t.Errorf("%s: model %q fw %q link %q rate %v", p.ID, p.Model, p.FW, p.LinkLayer, p.RateBytesPerSec)
		}
	}
}

func TestRealProcfsConnectX4(t *testing.T) {
	root := fixtureRoot(t, filepath.Join(realNodeDir(t), "ib_sysfs", "procfs_mlx5_0_connectx4_edr"))
	ports, err := Scan(root, Options{NoNetdev: true})
	if err != nil || len(ports) != 1 {
		t.Fatalf("%d ports, %v", len(ports), err)
	}
	p := &ports[0]
	if p.ID != "mlx5_0:1" || p.Model != "MT4118" || p.FW != "14.28.2006" || p.RateBytesPerSec != 25e9/8 {
		t.Errorf("%+v", p)
	}
	if p.Retransmits != 99 {
		t.Errorf("roce_adp_retrans: %d", p.Retransmits)
	}
	for name, want := range map[string]uint64{
		"roce_adp_retrans_to": 4, "local_ack_timeout_err": 131, "out_of_sequence": 1, "packet_seq_err": 1,
	} {
		if c, ok := otherValue(p, name); !ok || c.Value != want || c.Class != ClassRetransmit {
			t.Errorf("%s: %+v %v", name, c, ok)
		}
	}
	for name, want := range map[string]uint64{"req_cqe_error": 3481, "resp_cqe_error": 8109, "duplicate_request": 41, "roce_slow_restart_cnps": 131} {
		if c, ok := otherValue(p, name); !ok || c.Value != want {
			t.Errorf("%s: %+v %v", name, c, ok)
		}
	}
}

func readDump(t *testing.T, parts ...string) []Stat {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{realNodeDir(t)}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := ParseCounterDump(data)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

func statValue(stats []Stat, name string) (uint64, bool) {
	for _, s := range stats {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

func TestRealEthtoolMlx5(t *testing.T) {
	for file, want := range map[string][2]uint64{
		"ethtool_S_kernel-5.15.txt": {58591428329, 990473555},
		"ethtool_S_kernel-6.5.txt":  {441063206498, 534918379},
	} {
		stats := readDump(t, "ethtool", "mlx5_lkml_xdp_overload", file)
		var p Port
		p.AddEthtool(stats)
		if v, _ := errorValue(&p, "rx_discards_phy"); v != want[0] {
			t.Errorf("%s: rx_discards_phy %d", file, v)
		}
		if v, _ := errorValue(&p, "rx_out_of_buffer"); v != want[1] {
			t.Errorf("%s: rx_out_of_buffer %d", file, v)
		}
		if c, ok := otherValue(&p, "tx_pause_ctrl_phy"); !ok || c.Value == 0 || c.Class != ClassPause || c.Direction != Transmit {
			t.Errorf("%s: tx_pause_ctrl_phy %+v %v", file, c, ok)
		}
		if v, ok := statValue(stats, "rx_packets"); !ok || (file == "ethtool_S_kernel-5.15.txt" && v != 333854100) {
			t.Errorf("%s: rx_packets %d %v", file, v, ok)
		}
	}
}

func TestRealEthtoolENA(t *testing.T) {
	stats := readDump(t, "ethtool", "ena_sliderule_issue518", "ethtool_S_ens34.txt")
	if len(stats) != 37 {
		t.Errorf("%d statistics", len(stats))
	}
	var p Port
	p.AddEthtool(stats)
	got := map[string]uint64{}
	for _, c := range p.Allowance {
		got[c.Name] = c.Value
	}
	want := map[string]uint64{"bw_in": 3241329, "bw_out": 530, "pps": 784, "conntrack": 0, "linklocal": 0}
	if len(got) != len(want) {
		t.Fatalf("allowance %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d", k, got[k], v)
		}
	}
	// conntrack_allowance_available is a level, not a count of packets.
	if _, ok := statValue(stats, "conntrack_allowance_available"); !ok {
		t.Error("conntrack_allowance_available missing")
	}
}

func TestRealEFADump(t *testing.T) {
	client := readDump(t, "efa", "perftest_issue113_efa_hw_counters", "client.txt")
	server := readDump(t, "efa", "perftest_issue113_efa_hw_counters", "server.txt")
	c := Port{ID: "efa_0:1", Kind: KindEFA}
	c.AddEFA(client)
	if c.TxPackets != 1 || c.RxPackets != 0 || c.TxBytes != 2 || !c.HasBytes || !c.HasPackets {
		t.Errorf("client: %+v", c)
	}
	if v, ok := errorValue(&c, "rx_drops"); !ok || v != 0 {
		t.Errorf("client rx_drops %d %v", v, ok)
	}
	if cc, ok := otherValue(&c, "completed_cmds"); !ok || cc.Value != 105 {
		t.Errorf("completed_cmds %+v", cc)
	}
	s := Port{Kind: KindEFA}
	s.AddEFA(server)
	if s.RxPackets != 0 {
		t.Errorf("server received %d packets", s.RxPackets)
	}
}

// BenchmarkScan reads the gpud H100 tree (nine RDMA ports, about fifty
// counters each) as a Scanner kept between scrapes does.
func BenchmarkScan(b *testing.B) {
	root := fixtureRoot(b, filepath.Join(realNodeDir(b), "ib_sysfs", "gpud_h100_sys_class_infiniband"))
	s := NewScanner(root, Options{NoNetdev: true})
	b.ReportAllocs()
	for b.Loop() {
		ports, err := s.Scan()
		if err != nil || len(ports) != 9 {
			b.Fatal(len(ports), err)
		}
	}
}

// TestRealGpudH100KnownOnly: reading only the classified counters gives
// the same ports, bytes, errors, waits and retransmits as reading them all,
// leaves no unclassified counter in Other, and keeps fewer files open from
// scan to scan (each one a read the agent makes every scrape).
func TestRealGpudH100KnownOnly(t *testing.T) {
	root := fixtureRoot(t, filepath.Join(realNodeDir(t), "ib_sysfs", "gpud_h100_sys_class_infiniband"))
	all := NewScanner(root, Options{NoNetdev: true})
	known := NewScanner(root, Options{NoNetdev: true, KnownOnly: true})
	defer all.Close()
	defer known.Close()
	for range 2 { // the second scan reads through the cached listings and open files
		pa, errA := all.Scan()
		pk, errK := known.Scan()
		if errA != nil || errK != nil || len(pa) != 9 || len(pk) != len(pa) {
			t.Fatalf("%d ports (%v), known only %d (%v)", len(pa), errA, len(pk), errK)
		}
		for i := range pa {
			a, k := pa[i], pk[i]
			if a.ID != k.ID || a.RxBytes != k.RxBytes || a.TxBytes != k.TxBytes || a.XmitWait != k.XmitWait ||
				a.Retransmits != k.Retransmits || a.CNPs != k.CNPs || a.Up != k.Up || a.RateBytesPerSec != k.RateBytesPerSec ||
				!slices.Equal(a.Errors, k.Errors) {
				t.Errorf("%s differs:\n all   %+v\n known %+v", a.ID, a, k)
			}
			for _, c := range k.Other {
				if c.Class == ClassOther {
					t.Errorf("%s: unclassified %s read with KnownOnly", k.ID, c.Name)
				}
			}
			if _, ok := otherValue(&a, "rx_dct_connect"); !ok {
				t.Errorf("%s: the full scan lost rx_dct_connect", a.ID)
			}
		}
	}
	na, nk := all.r.files.Open(), known.r.files.Open()
	t.Logf("files kept open: %d reading every counter, %d reading the classified ones", na, nk)
	if nk >= na || nk < 9*20 {
		t.Errorf("files kept open: %d known only against %d", nk, na)
	}
}
