package simulated

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

func TestReplayTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(path, []byte(`timestamp,uuid,host,gpu,model,namespace,pod,job,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION,DCGM_FI_DEV_XID_ERRORS
100,GPU-a,n0,0,NVIDIA H100 80GB HBM3,ml,p0,train,10,1000,0
100,GPU-b,n0,1,NVIDIA H100 80GB HBM3,ml,p0,train,20,2000,0
105,GPU-a,n0,0,NVIDIA H100 80GB HBM3,ml,p0,train,11,1100,79
105,GPU-b,n0,1,NVIDIA H100 80GB HBM3,ml,p0,train,21,2100,0
110,GPU-a,n0,0,NVIDIA H100 80GB HBM3,ml,p0,train,12,1200,0
`), 0o644))
	fl, err := New(Config{Trace: path})
	require.NoError(t, err)
	require.Len(t, fl.Devices(), 2)
	require.Equal(t, "train", fl.Devices()[0].Pod.Job)

	util := func(at time.Duration) map[string]float64 {
		s := collect(t, fl, at)
		out := map[string]float64{}
		for _, x := range s {
			out[x.Device.UUID] = val(t, x, f.GPUUtil)
		}
		return out
	}
	// Scraped every second, a 5 s trace shows each row once.
	require.Equal(t, map[string]float64{"GPU-a": 10, "GPU-b": 20}, util(0))
	require.Empty(t, util(time.Second), "no value older than the collection interval")
	require.Equal(t, map[string]float64{"GPU-a": 11, "GPU-b": 21}, util(5*time.Second))
	require.Equal(t, map[string]float64{"GPU-a": 12}, util(10*time.Second), "GPU-b stopped reporting")

	// It loops: 15 s of trace (three 5 s samples), then again, in a new epoch.
	s := collect(t, fl, 15*time.Second)
	require.Len(t, s, 2)
	require.Equal(t, uint64(2), s[0].Epoch)
	require.Equal(t, 10.0, val(t, s[0], f.GPUUtil))
	s = collect(t, fl, 20*time.Second)
	require.Equal(t, []uint32{79}, s[0].XIDs, "the XID replays as an event")
}

func TestReplayTraceErrors(t *testing.T) {
	_, err := New(Config{Trace: filepath.Join(t.TempDir(), "absent.csv")})
	require.ErrorContains(t, err, "absent.csv")
	bad := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("timestamp,uuid,DCGM_FI_DEV_GPU_UTIL\n1,GPU-a,x\n"), 0o644))
	_, err = New(Config{Trace: bad})
	require.EqualError(t, err, bad+`:2:9: DCGM_FI_DEV_GPU_UTIL: malformed number "x"`)
}
