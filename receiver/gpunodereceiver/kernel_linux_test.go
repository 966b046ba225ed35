package gpunodereceiver

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// needKernel skips a test that needs root and the host's cgroup and
// network namespaces, except under CI=true, whose machine has them.
func needKernel(t *testing.T, why string, err error) {
	t.Helper()
	sharedtest.Need(t, "%s: %v", why, err)
}

// TestRealKernelThroughTheReceiver runs the receiver, started as a
// collector starts it, against this machine's real kernel: a pod-shaped
// cgroup capped at 0.1 CPU with a busy loop in it must show throttling,
// named by its kubelet log directory on this machine's disk, and UDP traffic over a veth pair into a network namespace must show in
// that interface's counters. CI's machine mounts cgroup v1 controllers
// (the v2 files are covered by the fixtures) and runs as root.
func TestRealKernelThroughTheReceiver(t *testing.T) {
	if os.Geteuid() != 0 {
		needKernel(t, "making cgroups and network namespaces needs root", fmt.Errorf("euid %d", os.Geteuid()))
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err != nil {
		needKernel(t, "this test caps a pod through cgroup v1's cpu.cfs_quota_us", err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		needKernel(t, "the veth pair is made with iproute2's ip", err)
	}
	uid := podUID(t)
	throttledPod(t, uid)
	podLogDir(t, "otelgpu-test", "loader-0", uid)
	veth, peer := vethPair(t)

	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.CollectionInterval = 250 * time.Millisecond
	cfg.Network.IncludeVirtual, cfg.Network.Ethtool = true, false
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	const datagrams, size = 40, 1200
	// Unconnected: the peer's port unreachable replies would fail a
	// connected socket's next writes.
	conn, err := net.ListenPacket("udp4", ":0")
	require.NoError(t, err)
	defer conn.Close()
	to := &net.UDPAddr{IP: net.ParseIP(peer), Port: 9}
	// One datagram first, so that the peer's address is resolved: the
	// kernel holds only a few packets while ARP is pending.
	_, err = conn.WriteTo([]byte{0}, to)
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	var txBefore int64 = -1
	var throttled, txAfter int64
	var named string
	done := func() bool {
		for _, md := range sink.AllMetrics() {
			if v, ok := sumOf(md, "k8s.pod.uid", uid, "otelgpu.pod.cpu.throttled_periods", ""); ok {
				throttled = v
				named = podNameOf(md, uid)
			}
			if v, ok := sumOf(md, "hw.id", veth, "hw.network.io", "transmit"); ok {
				if txBefore < 0 {
					txBefore = v
					for range datagrams {
						if _, err := conn.WriteTo(make([]byte, size), to); err != nil {
							t.Errorf("sending to %v: %v", to, err)
						}
					}
				}
				txAfter = v
			}
		}
		return throttled > 0 && named == "otelgpu-test/loader-0" && txBefore >= 0 && txAfter-txBefore >= datagrams*size
	}
	for deadline := time.Now().Add(20 * time.Second); !done(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pod %s (named %q) throttled periods %d; %s transmitted %d bytes since the first scrape (from %d), %d sent",
				uid, named, throttled, veth, txAfter-txBefore, txBefore, datagrams*size)
		}
	}
	t.Logf("pod %s (%s): %d periods throttled; %s: %d bytes transmitted for %d datagrams of %d bytes", uid, named, throttled, veth, txAfter-txBefore, datagrams, size)
}

// podLogDir makes the kubelet's log directory of a pod,
// /var/log/pods/<namespace>_<name>_<uid>, on this machine; undone at
// cleanup, /var/log/pods too where the test made it.
func podLogDir(t *testing.T, namespace, name, uid string) {
	const root = "/var/log/pods"
	_, err := os.Stat(root)
	madeRoot := os.IsNotExist(err)
	dir := filepath.Join(root, namespace+"_"+name+"_"+uid)
	require.NoError(t, os.MkdirAll(dir, 0o750))
	t.Cleanup(func() {
		_ = os.Remove(dir)
		if madeRoot {
			_ = os.Remove(root)
		}
	})
}

// podNameOf is namespace/name of the pod resource with the UID.
func podNameOf(md pmetric.Metrics, uid string) string {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		a := md.ResourceMetrics().At(i).Resource().Attributes()
		if v, ok := a.Get("k8s.pod.uid"); !ok || v.Str() != uid {
			continue
		}
		ns, _ := a.Get("k8s.namespace.name")
		name, _ := a.Get("k8s.pod.name")
		return ns.Str() + "/" + name.Str()
	}
	return ""
}

// sumOf finds the value of a sum on the resource whose key is value,
// with the given network.io.direction ("" for none).
func sumOf(md pmetric.Metrics, key, value, metric, direction string) (int64, bool) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get(key); !ok || v.Str() != value {
			continue
		}
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() != metric {
					continue
				}
				dps := ms.At(k).Sum().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					dir, _ := dps.At(d).Attributes().Get("network.io.direction")
					if dir.Str() == direction {
						return dps.At(d).IntValue(), true
					}
				}
			}
		}
	}
	return 0, false
}

func podUID(t *testing.T) string {
	var b [16]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// throttledPod makes kubepods/burstable/pod<uid> in the v1 cpu (and, where
// apart, cpuacct) hierarchy, caps it at 0.1 CPU and starts a busy loop in
// it; all undone at cleanup.
func throttledPod(t *testing.T, uid string) {
	var made []string
	t.Cleanup(func() {
		for i := len(made) - 1; i >= 0; i-- {
			_ = os.Remove(made[i])
		}
	})
	var dirs []string
	for _, h := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct"} {
		if resolved, err := filepath.EvalSymlinks(h); err == nil && h != "/sys/fs/cgroup/cpu" && resolved == mustEval(t, "/sys/fs/cgroup/cpu") {
			continue // cpu,cpuacct mounted together
		}
		if _, err := os.Stat(h); err != nil {
			continue
		}
		d := h
		for _, part := range []string{"kubepods", "burstable", "pod" + uid} {
			d = filepath.Join(d, part)
			if err := os.Mkdir(d, 0o750); err == nil {
				made = append(made, d)
			} else if !os.IsExist(err) {
				needKernel(t, "the cgroup hierarchy is not writable", err)
			}
		}
		dirs = append(dirs, d)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dirs[0], "cpu.cfs_quota_us"), []byte("10000"), 0o600))
	busy := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(t, busy.Start())
	t.Cleanup(func() {
		_ = busy.Process.Kill()
		_ = busy.Wait()
	})
	for _, d := range dirs {
		require.NoError(t, os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(busy.Process.Pid)), 0o600))
	}
}

func mustEval(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

// vethPair makes a veth pair with one end in a new network namespace and
// returns the root side's name and the far end's address.
func vethPair(t *testing.T) (string, string) {
	n := os.Getpid()%10000*10 + int(time.Now().UnixNano()%10)
	ns, local, far := "gnr"+strconv.Itoa(n), "gnv"+strconv.Itoa(n), "gnp"+strconv.Itoa(n)
	a, b := n%250+1, 4*(n/250%60)
	near, peer := fmt.Sprintf("10.198.%d.%d", a, b+1), fmt.Sprintf("10.198.%d.%d", a, b+2)
	ip := func(args ...string) {
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", local, "type", "veth", "peer", "name", far)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", local).Run() })
	ip("link", "set", far, "netns", ns)
	ip("addr", "add", near+"/30", "dev", local)
	ip("link", "set", local, "up")
	ip("-n", ns, "addr", "add", peer+"/30", "dev", far)
	ip("-n", ns, "link", "set", far, "up")
	return local, peer
}
