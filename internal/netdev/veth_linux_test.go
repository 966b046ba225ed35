package netdev

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// realVeth makes a network namespace and a veth pair, one end in the
// namespace, with 10.199.x.y/30 addresses, and returns the root-side name
// and the peer's address. Without root or `ip` it skips, except under
// CI=true, where the machine is expected to have both.
func realVeth(t *testing.T) (ifname, peer string) {
	t.Helper()
	if os.Geteuid() != 0 {
		sharedtest.Need(t, "root to create a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		sharedtest.Need(t, "iproute2's ip: %v", err)
	}
	// Names unique to this process, within IFNAMSIZ.
	id := os.Getpid()%100000*10 + int(time.Now().UnixNano()%10)
	ns := "ndtest" + strconv.Itoa(id)
	ifname, peerIf := "ndv"+strconv.Itoa(id), "ndp"+strconv.Itoa(id)
	x, y := 1+id%250, 4*(id/250%60)
	local, peer := fmt.Sprintf("10.199.%d.%d", x, y+1), fmt.Sprintf("10.199.%d.%d", x, y+2)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	run("link", "add", ifname, "type", "veth", "peer", "name", peerIf)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", ifname).Run() })
	run("link", "set", peerIf, "netns", ns)
	run("addr", "add", local+"/30", "dev", ifname)
	run("link", "set", ifname, "up")
	run("-n", ns, "addr", "add", peer+"/30", "dev", peerIf)
	run("-n", ns, "link", "set", peerIf, "up")
	run("-n", ns, "link", "set", "lo", "up")
	return ifname, peer
}

func TestRealVeth(t *testing.T) {
	ifname, peer := realVeth(t)
	s := NewScanner("/sys", Options{Netdev: func(n string) bool { return n == ifname }, NoRDMA: true})
	before, err := s.Scan()
	if err != nil || len(before) != 1 {
		t.Fatalf("%v, %v", before, err)
	}
	b := before[0]
	if b.Physical || b.PCI != "" || !b.HasBytes {
		t.Errorf("before: %+v", b)
	}

	// Datagrams to the peer's discard port: the first waits on ARP, which
	// the peer answers once its end is up; every one leaves through the
	// veth. An unconnected socket, because the peer's ICMP port
	// unreachable would fail a connected one's next write.
	conn, err := net.ListenUDP("udp4", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	to := &net.UDPAddr{IP: net.ParseIP(peer), Port: 9}
	const n, size = 50, 1000
	payload := make([]byte, size)
	for range n {
		if _, err := conn.WriteToUDP(payload, to); err != nil {
			t.Fatal(err)
		}
	}
	// Frames on the wire: payload + UDP 8 + IPv4 20 + Ethernet 14.
	minBytes := uint64(n * (size + 8 + 20 + 14))
	var a Port
	for range 50 { // transmission is asynchronous; give it a moment
		after, err := s.Scan()
		if err != nil || len(after) != 1 {
			t.Fatalf("%v, %v", after, err)
		}
		a = after[0]
		if a.TxBytes-b.TxBytes >= minBytes && a.TxPackets-b.TxPackets >= n {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%s: tx +%d bytes +%d packets, rx +%d bytes +%d packets, operstate %s, up %v",
		ifname, a.TxBytes-b.TxBytes, a.TxPackets-b.TxPackets, a.RxBytes-b.RxBytes, a.RxPackets-b.RxPackets, a.State, a.Up)
	if a.TxBytes-b.TxBytes < minBytes || a.TxPackets-b.TxPackets < n {
		t.Errorf("tx rose by %d bytes, %d packets; sent %d bytes in %d datagrams", a.TxBytes-b.TxBytes, a.TxPackets-b.TxPackets, minBytes, n)
	}
	if !a.Up || !a.HasUp || a.RateBytesPerSec < 0 {
		t.Errorf("after: %+v", a)
	}

	// The veth driver's ethtool statistics name the peer's ifindex.
	stats, err := EthtoolStats(ifname)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := statValue(stats, "peer_ifindex")
	if !ok || v == 0 {
		t.Errorf("peer_ifindex %d %v in %v", v, ok, stats)
	}
	t.Logf("ethtool: %d statistics, peer_ifindex %d", len(stats), v)
	e, err := OpenEthtool()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	again, err := e.Stats(ifname)
	if err != nil || len(again) != len(stats) {
		t.Errorf("again: %d, %v", len(again), err)
	}
	if _, err := e.Stats("nosuchif0"); err == nil {
		t.Error("no error for a missing interface")
	}
	if _, err := e.Stats("an-interface-name-too-long"); err == nil {
		t.Error("no error for a name over IFNAMSIZ")
	}
}
