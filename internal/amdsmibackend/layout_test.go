package amdsmibackend_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// cpxGPU is the UUID of Fleet's MI300X in CPX mode, and spxGPU of its
// MI300X in SPX mode.
const (
	cpxGPU = "9fff74b9-0000-1000-8044-4a2fb30adeb0"
	spxGPU = "ccff74a1-0000-1000-80e0-c6d49f5b0d86"
)

// partitionLoads returns the activity read for each partition of the CPX
// GPU, by partition ID; a partition without one is left out.
func partitionLoads(t *testing.T, b *amdsmibackend.Backend) map[int]float64 {
	t.Helper()
	out := map[int]float64{}
	for _, s := range collect(t, b) {
		if s.Device.AMD.ParentUUID != cpxGPU {
			continue
		}
		if v, ok := s.Values.Get(f.GPUUtil); ok {
			out[s.Device.AMD.PartitionID] = v
		}
	}
	return out
}

func wantLoads(st amdsmistandin.State) map[int]float64 {
	out := map[int]float64{}
	for x, l := range st.GPUs[1].XCPLoads {
		out[x] = float64(l)
	}
	return out
}

// TestMetricsLayouts reads each partition's activity, and the XGMI links,
// from a library of each version whose layout is known: the stand-in
// writes amdsmi_gpu_metrics_t's xcp entries and amdsmi_link_metrics_t's
// links at that version's strides (AMD's headers of each), and the
// backend must find them there.
func TestMetricsLayouts(t *testing.T) {
	for _, tc := range []struct {
		abi            int
		version        [3]int
		xcp, linkBytes int // the strides, as the stand-in's default
	}{
		{25, [3]int{25, 4, 0}, 232, 56},
		{26, [3]int{26, 0, 0}, 504, 56},
		{26, [3]int{26, 1, 0}, 504, 56},
		{26, [3]int{26, 2, 1}, 504, 48},
		{26, [3]int{26, 3, 0}, 504, 56},
		{26, [3]int{26, 4, 0}, 520, 56},
		{26, [3]int{26, 5, 0}, 520, 56},
	} {
		for _, said := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d.%d.%d/strides said %v", tc.version[0], tc.version[1], tc.version[2], said), func(t *testing.T) {
				st := amdsmistandin.Fleet()
				st.Version = tc.version
				if said { // the same as the version's own, stated
					st.MetricsXCPStride, st.LinkStride = tc.xcp, tc.linkBytes
				}
				withState(t, st)
				core, logs := observer.New(zap.InfoLevel)
				b := connect(t, amdsmibackend.Options{Library: libs[tc.abi], Logger: zap.New(core)})
				require.Equal(t, wantLoads(st), partitionLoads(t, b))
				links := collect(t, b)[spxGPU].AMD.Links
				require.Len(t, links, 7)
				for i, l := range links {
					require.Equal(t, i, l.Index)
					require.Equal(t, 512.0, l.MaxBandwidthGbps, "link %d", i)
					require.Equal(t, uint64(2*87*1000*(i+1)), l.ReadKB, "link %d, second read", i)
					require.Equal(t, uint64(2*87*900*(i+1)), l.WriteKB, "link %d, second read", i)
				}
				require.Empty(t, logs.FilterMessageSnippet("not read").All())
			})
		}
	}
}

// TestMetricsWrongStride: a table laid out otherwise than the version
// says (26.4's library writing 26.3's 504-byte entries) is not read as
// the partitions' activities, which shows that the reader follows the
// version's stride and that the test above can fail.
func TestMetricsWrongStride(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.Version = [3]int{26, 4, 0}
	st.MetricsXCPStride = 504
	withState(t, st)
	b := connect(t, amdsmibackend.Options{Library: libs[26]})
	require.NotEqual(t, wantLoads(st), partitionLoads(t, b))
}

// TestMetricsUnknownLayout: from a version whose layout this build does
// not know (26.6), neither table is read: partitions report no activity
// and the GPUs no links, rather than figures read from the wrong bytes,
// and each is said once, with the version.
func TestMetricsUnknownLayout(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.Version = [3]int{26, 6, 0}
	withState(t, st)
	core, logs := observer.New(zap.InfoLevel)
	b := connect(t, amdsmibackend.Options{Library: libs[26], Logger: zap.New(core)})
	for range 3 {
		require.Empty(t, partitionLoads(t, b))
		got := collect(t, b)
		require.Empty(t, got[spxGPU].AMD.Links)
		require.Equal(t, 87.0, value(t, got[spxGPU], f.GPUUtil), "the rest is read")
	}
	for _, call := range []string{"amdsmi_get_link_metrics", "amdsmi_get_gpu_metrics_info"} {
		said := logs.FilterField(zap.String("call", call)).All()
		require.Len(t, said, 1, "%s said once", call)
		require.Contains(t, said[0].Message, "does not know this AMD SMI version's")
		require.Equal(t, "26.6.0", said[0].ContextMap()["amdsmi.version"])
	}
}
