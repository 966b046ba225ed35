package trace

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// A trace at 5 s resampled to 15 s: a batch at 0, 15 and 30; SM activity the
// mean of the rows each kept row stands for, GPU utilization the kept row's
// own, and an XID of a dropped row carried to the next kept row.
func TestResample(t *testing.T) {
	const in = `timestamp,uuid,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_PROF_SM_ACTIVE,DCGM_FI_DEV_XID_ERRORS
0,GPU-a,10,0.1,
5,GPU-a,20,0.2,
10,GPU-a,30,0.3,79
15,GPU-a,40,0.7,
20,GPU-a,50,0.5,
31,GPU-a,60,,
`
	r, err := NewReader(strings.NewReader(in), "t.csv")
	require.NoError(t, err)
	src := Resample(r, 15)
	type got struct {
		t        float64
		util, sm float64
		hasSM    bool
		xid      float64
	}
	var rows []got
	for {
		b, err := src.NextBatch()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Len(t, b, 1)
		util, _ := b[0].Values.Get(dcgmfield.GPUUtil)
		sm, hasSM := b[0].Values.Get(dcgmfield.SMActive)
		xid, _ := b[0].Values.Get(dcgmfield.XIDErrors)
		rows = append(rows, got{b[0].Time, util, sm, hasSM, xid})
	}
	require.Len(t, rows, 3)
	require.Equal(t, got{0, 10, 0.1, true, 0}, rows[0])
	require.Equal(t, 15.0, rows[1].t)
	require.Equal(t, 40.0, rows[1].util, "an instantaneous gauge is the kept row's")
	require.InDelta(t, (0.2+0.3+0.7)/3, rows[1].sm, 1e-12, "profiling: the mean since the previous kept row")
	require.Equal(t, 79.0, rows[1].xid, "the XID of a dropped row")
	require.Equal(t, 31.0, rows[2].t, "the first batch at or after 30 s")
	require.True(t, rows[2].hasSM, "the dropped row's SM activity stands for the interval")
	require.InDelta(t, 0.5, rows[2].sm, 1e-12)
	require.Zero(t, rows[2].xid, "an XID is carried once")
}

func TestResampleZeroIsIdentity(t *testing.T) {
	r, err := NewReader(strings.NewReader("timestamp,uuid\n0,GPU-a\n"), "t.csv")
	require.NoError(t, err)
	require.Same(t, Batches(r), Resample(r, 0))
}
