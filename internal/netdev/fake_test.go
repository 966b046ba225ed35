package netdev

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeSys builds a sysfs tree in a temporary directory: files with
// contents, and symlinks whose targets are given relative to the root
// (written as relative links, as sysfs has them).
type fakeSys struct {
	tb   testing.TB
	root string
}

func newFakeSys(tb testing.TB) *fakeSys {
	tb.Helper()
	return &fakeSys{tb: tb, root: tb.TempDir()}
}

func (f *fakeSys) file(path, content string) {
	f.tb.Helper()
	p := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		f.tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
		f.tb.Fatal(err)
	}
}

// link makes path a symlink to target (both relative to the root).
func (f *fakeSys) link(path, target string) {
	f.tb.Helper()
	p := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		f.tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.root, target), 0o750); err != nil {
		f.tb.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(p), filepath.Join(f.root, target))
	if err != nil {
		f.tb.Fatal(err)
	}
	if err := os.Symlink(rel, p); err != nil {
		f.tb.Fatal(err)
	}
}

// pciDevice places a PCI device at devPath (below devices/, e.g.
// "pci0000:17/0000:17:00.0/0000:18:00.0") with its bus/pci/devices link
// and NUMA node.
func (f *fakeSys) pciDevice(devPath string, numa string) {
	f.tb.Helper()
	f.file(filepath.Join("devices", devPath, "numa_node"), numa)
	f.link(filepath.Join("bus", "pci", "devices", filepath.Base(devPath)), filepath.Join("devices", devPath))
}

// netdev adds /sys/class/net/<name> with statistics; devPath, when not
// empty, is its device's path below devices/.
func (f *fakeSys) netdev(name, devPath string, rx, tx uint64) {
	f.tb.Helper()
	dir := filepath.Join("class", "net", name)
	stats := map[string]uint64{"rx_bytes": rx, "tx_bytes": tx, "rx_packets": rx / 100, "tx_packets": tx / 100,
		"rx_errors": 1, "tx_errors": 2, "rx_dropped": 3, "tx_dropped": 4}
	for k, v := range stats {
		f.file(filepath.Join(dir, "statistics", k), uitoa(v))
	}
	f.file(filepath.Join(dir, "operstate"), "up")
	f.file(filepath.Join(dir, "type"), "1")
	if devPath != "" {
		f.link(filepath.Join(dir, "device"), filepath.Join("devices", devPath))
	}
}

func uitoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
