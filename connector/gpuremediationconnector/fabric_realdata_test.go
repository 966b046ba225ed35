package gpuremediationconnector

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// TestFabricRealH100Node: a real H100 node's RDMA ports (gpud's sysfs
// fixture, shared/realdata/node/ib_sysfs: eight ConnectX-7 InfiniBand
// ports at 400 Gb/s and a BlueField-3 RoCE bond at 200 Gb/s, all ACTIVE,
// with a few lifetime receive errors) read by internal/netdev as the
// gpu_node receiver reads them, reported twice a minute apart: no fabric
// fault. The bond's 200 Gb/s is another link layer's, not a slow port, and
// errors that do not rise are history.
func TestFabricRealH100Node(t *testing.T) {
	ib := filepath.Join(sharedtest.Path(t, "realdata/node/ib_sysfs"), "gpud_h100_sys_class_infiniband")
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "class"), 0o750))
	abs, err := filepath.Abs(ib)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(root, "class", "infiniband")))
	ports, err := netdev.Scan(root, netdev.Options{NoNetdev: true})
	require.NoError(t, err)
	require.Len(t, ports, 9)

	var reports []nicReport
	for _, p := range ports {
		n := nicReport{node: "h100-node", port: p.ID, layer: p.LinkLayer, up: -1, rate: p.RateBytesPerSec, errors: map[string]int64{}}
		if p.HasUp {
			n.up = 0
			if p.Up {
				n.up = 1
			}
		}
		for _, c := range p.Errors {
			n.errors[c.Name] = int64(c.Value)
		}
		reports = append(reports, n)
	}
	r := fabricShadow(t)
	require.Empty(t, feedNIC(r, t0, t0, reports...))
	require.Empty(t, feedNIC(r, t0, at(time.Minute), reports...))
	require.Empty(t, feedNIC(r, t0, at(10*time.Minute), reports...))
}
