package trace

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// TestWriteReadBack writes rows and reads them back: every identity column,
// every value bit for bit, blanks staying blank, comments skipped.
func TestWriteReadBack(t *testing.T) {
	var sb strings.Builder
	w, err := NewWriter(&sb, dcgmfield.All())
	require.NoError(t, err)
	require.NoError(t, w.Comment("recorded by a test\nsecond line"))

	var a, b dcgmfield.Values
	a.Set(dcgmfield.GPUUtil, 98)
	a.Set(dcgmfield.SMActive, 0.9137)
	a.Set(dcgmfield.PCIeRxBytes, 123456789012)
	a.Set(dcgmfield.ClocksEventReasons, 0x48)
	a.Set(dcgmfield.PowerUsage, 1.0/3)
	b.Set(dcgmfield.XIDErrors, 79)
	rows := []Row{
		{Time: 1767225600.25, UUID: "GPU-a", Host: "h0", GPU: 0, HasGPU: true, Model: "NVIDIA H100 80GB HBM3",
			Namespace: "ml", Pod: "p,0", Container: "c\"x", Job: "train", Values: a},
		{Time: 1767225600.25, UUID: "GPU-b", Host: "h0", Values: b},
		{Time: 1767225601, UUID: "GPU-a"},
	}
	for i := range rows {
		require.NoError(t, w.Write(&rows[i]))
	}
	require.NoError(t, w.Comment("a comment between rows"))
	require.NoError(t, w.Flush())
	require.Equal(t, 3, w.Rows())

	batches, err := readAll(t, sb.String())
	require.NoError(t, err, sb.String())
	require.Len(t, batches, 2)
	require.Len(t, batches[0], 2)
	got := batches[0][0]
	require.Equal(t, "1767225600.250", got.TimeText)
	require.Equal(t, rows[0].Time, got.Time)
	require.Equal(t, []string{"GPU-a", "h0", "NVIDIA H100 80GB HBM3", "ml", "p,0", "c\"x", "train"},
		[]string{got.UUID, got.Host, got.Model, got.Namespace, got.Pod, got.Container, got.Job})
	require.True(t, got.HasGPU)
	require.Equal(t, a, got.Values, "values survive exactly")
	require.False(t, batches[0][1].HasGPU, "a blank gpu stays blank")
	require.Equal(t, b, batches[0][1].Values)
	require.Zero(t, batches[1][0].Values.Len())
}

func TestWriterRejectsWhatReaderWould(t *testing.T) {
	w, err := NewWriter(&strings.Builder{}, dcgmfield.All())
	require.NoError(t, err)
	require.NoError(t, w.Write(&Row{Time: 10, UUID: "GPU-a"}))
	require.ErrorContains(t, w.Write(&Row{Time: 10, UUID: "GPU-a"}), "second trace row for GPU-a at 10.000")
	require.ErrorContains(t, w.Write(&Row{Time: 9, UUID: "GPU-b"}), "earlier than the previous row's")
	require.ErrorContains(t, w.Write(&Row{Time: 11}), "no uuid")
	var nan dcgmfield.Values
	nan.Set(dcgmfield.GPUTemp, math.NaN())
	require.ErrorContains(t, w.Write(&Row{Time: 11, UUID: "GPU-a", Values: nan}), "DCGM_FI_DEV_GPU_TEMP is NaN")
}
