package gpunodereceiver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGPUBusIDs: the GPUs a rail can serve are NVIDIA's and AMD's display
// and accelerator functions; an NVSwitch (a bridge), a NIC and another
// vendor's display controller are not.
func TestGPUBusIDs(t *testing.T) {
	sys := t.TempDir()
	for addr, vc := range map[string][2]string{
		"0000:18:00.0": {"0x10de", "0x030200"}, // H100, 3D controller
		"0000:05:00.0": {"0x10de", "0x068000"}, // NVSwitch, bridge
		"0000:0c:00.0": {"0x1002", "0x120000"}, // MI300X, processing accelerator
		"0000:1a:00.0": {"0x15b3", "0x020700"}, // ConnectX-7, InfiniBand controller
		"0000:03:00.0": {"0x1a03", "0x030000"}, // ASPEED BMC display
	} {
		d := filepath.Join(sys, "bus", "pci", "devices", addr)
		require.NoError(t, os.MkdirAll(d, 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(d, "vendor"), []byte(vc[0]+"\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(d, "class"), []byte(vc[1]+"\n"), 0o600))
	}
	require.Equal(t, []string{"0000:0c:00.0", "0000:18:00.0"}, gpuBusIDs(sys, nil))
	require.Empty(t, gpuBusIDs(filepath.Join(sys, "missing"), nil), "no sysfs: no GPUs, no error")
}
