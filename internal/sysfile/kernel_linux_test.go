package sysfile

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// TestRealKernelSysfsCounterThroughAKeptDescriptor: a sysfs counter read
// again from offset 0 through the descriptor kept open is the kernel's
// current value, not the one at open. 200 UDP datagrams to the loopback
// interface must show in lo's rx_packets, read without opening it again.
func TestRealKernelSysfsCounterThroughAKeptDescriptor(t *testing.T) {
	p := "/sys/class/net/lo/statistics/rx_packets"
	if _, err := os.Stat(p); err != nil {
		sharedtest.Need(t, "sysfs with the loopback interface's statistics: %v", err)
	}
	var f Files
	before := readUint(t, &f, p)
	fdBefore := f.open[p].fd

	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer conn.Close()
	out, err := net.Dial("udp4", conn.LocalAddr().String())
	require.NoError(t, err)
	defer out.Close()
	for range 200 {
		_, err := out.Write([]byte("x"))
		require.NoError(t, err)
	}

	after := readUint(t, &f, p)
	require.Equal(t, fdBefore, f.open[p].fd, "read through the same descriptor")
	require.GreaterOrEqual(t, after-before, uint64(200), "rx_packets from %d to %d", before, after)
	t.Logf("lo rx_packets %d -> %d through one descriptor", before, after)
}

// TestRealKernelRemovedCgroupReadsAsGone: a cgroup's file kept open reads
// ENODEV once the cgroup is removed; Files then tries the path again and
// reports it absent, as a file that was never there.
func TestRealKernelRemovedCgroupReadsAsGone(t *testing.T) {
	const hier = "/sys/fs/cgroup/cpu"
	if os.Geteuid() != 0 {
		sharedtest.Need(t, "root to make a cgroup under %s (euid %d)", hier, os.Geteuid())
	}
	if _, err := os.Stat(filepath.Join(hier, "cpu.shares")); err != nil {
		sharedtest.Need(t, "a v1 cpu hierarchy at %s: %v", hier, err)
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	dir := filepath.Join(hier, "sysfile-test-"+hex.EncodeToString(id[:]))
	if err := os.Mkdir(dir, 0o750); err != nil {
		sharedtest.Need(t, "%s not writable: %v", hier, err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			_ = os.Remove(dir)
		}
	})
	p := filepath.Join(dir, "cpu.shares")
	var f Files
	b, err := f.Read(p)
	require.NoError(t, err)
	require.Equal(t, "1024", strings.TrimSpace(string(b)))
	require.Equal(t, 1, f.Open())

	require.NoError(t, os.Remove(dir))
	removed = true
	_, err = f.Read(p)
	require.ErrorIs(t, err, fs.ErrNotExist, "the removed cgroup's file")
	require.Equal(t, 0, f.Open(), "its descriptor was closed")
}

// TestRealKernelPressureThroughAKeptDescriptor: /proc/pressure/cpu (a
// seq_file) read again from offset 0 through the kept descriptor shows the
// stall the kernel counted since: three busy processes on this machine's
// CPUs make tasks wait for one.
func TestRealKernelPressureThroughAKeptDescriptor(t *testing.T) {
	const p = "/proc/pressure/cpu"
	if _, err := os.Stat(p); err != nil {
		sharedtest.Need(t, "the kernel's pressure (PSI) at %s: %v", p, err)
	}
	var f Files
	before := someTotal(t, &f, p)
	fd := f.open[p].fd
	busy := max(3, runtime.NumCPU()+1)
	var cmds []*exec.Cmd
	for range busy {
		c := exec.Command("sh", "-c", "end=$(($(date +%s)+1)); while [ $(date +%s) -lt $end ]; do :; done")
		require.NoError(t, c.Start())
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		_ = c.Wait()
	}
	after := someTotal(t, &f, p)
	require.Equal(t, fd, f.open[p].fd, "read through the same descriptor")
	require.Greater(t, after, before, "cpu some total with %d busy processes", busy)
	t.Logf("cpu some total %d -> %d µs through one descriptor", before, after)
}

// someTotal is the "some" line's total= of a pressure file.
func someTotal(t *testing.T, f *Files, p string) uint64 {
	t.Helper()
	b, err := f.Read(p)
	require.NoError(t, err)
	line, _, _ := strings.Cut(string(b), "\n")
	_, tot, ok := strings.Cut(line, "total=")
	require.True(t, ok, "%s: %q", p, line)
	v, err := strconv.ParseUint(strings.TrimSpace(tot), 10, 64)
	require.NoError(t, err)
	return v
}

func readUint(t *testing.T, f *Files, p string) uint64 {
	t.Helper()
	b, err := f.Read(p)
	require.NoError(t, err)
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(t, err)
	return v
}
