package fromdcgmexporterprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// TestMIGBoardPowerOnce: with MIG on, dcgm-exporter serves each instance in
// place of the GPU and repeats the board's power, energy and power limit on
// every one. They go to the GPU's own device, once, as the dcgm receiver
// reports them: summed over the devices, the watts and joules are the
// board's, not twice them; each instance keeps its own activity and memory.
func TestMIGBoardPowerOnce(t *testing.T) {
	const text = `# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-b0a4d000-0000-4000-8000-000000000000",modelName="NVIDIA H100 80GB HBM3",GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",pod="a"} 410
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-b0a4d000-0000-4000-8000-000000000000",modelName="NVIDIA H100 80GB HBM3",GPU_I_ID="2",GPU_I_PROFILE="3g.40gb",pod="b"} 410
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-b0a4d000-0000-4000-8000-000000000000",modelName="NVIDIA H100 80GB HBM3",GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",pod="a"} 9000000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-b0a4d000-0000-4000-8000-000000000000",modelName="NVIDIA H100 80GB HBM3",GPU_I_ID="2",GPU_I_PROFILE="3g.40gb",pod="b"} 9000000
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-b0a4d000-0000-4000-8000-000000000000",modelName="NVIDIA H100 80GB HBM3",GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",pod="a"} 0.9
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-b0a4d000-0000-4000-8000-000000000000",modelName="NVIDIA H100 80GB HBM3",GPU_I_ID="2",GPU_I_PROFILE="3g.40gb",pod="b"} 0.2
`
	p, _ := newTestTranslator(t, defaultConfig())
	byID := devices(consume(t, p, page(t, 0, text)))
	const gpu = "GPU-b0a4d000-0000-4000-8000-000000000000"
	require.Len(t, byID, 3, "the GPU and its two instances")
	var watts float64
	var energies int
	for id, rms := range byID {
		if dp, ok := point(rms[0], metricnames.HWPower, nil); ok {
			require.Equal(t, gpu, id, "power only on the GPU's own device")
			watts += dp.DoubleValue()
		}
		if _, ok := point(rms[0], metricnames.HWEnergy, nil); ok {
			require.Equal(t, gpu, id, "energy only on the GPU's own device")
			energies++
		}
	}
	require.InDelta(t, 410, watts, 1e-9, "the board's power once")
	require.Equal(t, 1, energies)
	_, held := byID[gpu][0].Resource().Attributes().Get(metricnames.AttrK8sPodName)
	require.False(t, held, "the GPU's own device is no instance's pod's")
	for id, pod := range map[string]string{gpu + "/1/0": "a", gpu + "/2/0": "b"} {
		require.Contains(t, byID, id)
		got, _ := byID[id][0].Resource().Attributes().Get(metricnames.AttrK8sPodName)
		require.Equal(t, pod, got.Str(), id)
		_, ok := point(byID[id][0], metricnames.NvidiaGPUGraphicsEngineActive, nil)
		require.True(t, ok, "%s keeps its own activity", id)
	}
}
