package trace

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

const good = `# a comment
timestamp,uuid,host,gpu,model,namespace,pod,container,job,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_PROF_SM_UTIL_RATIO,step_seconds
100,GPU-a,h0,0,NVIDIA H100 80GB HBM3,ml,p0,c,train,98,0.91,0.5
100,GPU-b,h0,1,NVIDIA H100 80GB HBM3,ml,p0,c,train,,0.5,
# another comment
101.5,GPU-a,h0,0,NVIDIA H100 80GB HBM3,ml,p0,c,train,97,0.9,0.51
`

func readAll(t *testing.T, src string) ([][]Row, error) {
	t.Helper()
	tr, err := NewReader(strings.NewReader(src), "t.csv")
	if err != nil {
		return nil, err
	}
	var out [][]Row
	for {
		b, err := tr.NextBatch()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
}

func TestRead(t *testing.T) {
	batches, err := readAll(t, good)
	require.NoError(t, err)
	require.Len(t, batches, 2)
	require.Len(t, batches[0], 2)
	a := batches[0][0]
	require.Equal(t, 3, a.Line)
	require.Equal(t, "100", a.TimeText)
	require.Equal(t, "GPU-a", a.UUID)
	require.True(t, a.HasGPU)
	require.Equal(t, "train", a.Job)
	v, ok := a.Values.Get(dcgmfield.GPUUtil)
	require.True(t, ok)
	require.Equal(t, 98.0, v)
	sm, _ := a.Values.Get(dcgmfield.SMActive)
	require.Equal(t, 0.91, sm, "a newer DCGM alias names the same field")
	require.True(t, a.HasStep)

	b := batches[0][1]
	require.False(t, b.Values.Has(dcgmfield.GPUUtil), "a blank cell is not reported")
	require.False(t, b.HasStep)
	require.Equal(t, 101.5, batches[1][0].Time)
	require.Equal(t, 6, batches[1][0].Line)
}

func TestErrors(t *testing.T) {
	hdr := "timestamp,uuid,DCGM_FI_DEV_GPU_UTIL\n"
	for _, tt := range []struct {
		name, src, want string
	}{
		{"empty", "", "t.csv:1:1: empty trace: no header row"},
		{"unknown column", "timestamp,uuid,DCGM_FI_DEV_GPU_UTILZ\n", `t.csv:1:16: unknown column "DCGM_FI_DEV_GPU_UTILZ"`},
		{"duplicate column", "timestamp,uuid,gpu,gpu\n", `t.csv:1:20: duplicate column "gpu" (first in column 16)`},
		{"missing uuid", "timestamp,gpu\n", `t.csv:1:1: missing required column "uuid"`},
		{"malformed number", hdr + "1,GPU-a,9x\n", `t.csv:2:9: DCGM_FI_DEV_GPU_UTIL: malformed number "9x"`},
		{"bad timestamp", hdr + "soon,GPU-a,1\n", `t.csv:2:1: timestamp: want Unix seconds, got "soon"`},
		{"blank timestamp", hdr + ",GPU-a,1\n", `t.csv:2:1: timestamp is blank`},
		{"blank uuid", hdr + "1,,1\n", `t.csv:2:3: uuid is blank`},
		{"out of order", hdr + "2,GPU-a,1\n1,GPU-a,1\n", "t.csv:3:1: timestamp 1 is earlier than the previous row's"},
		{"duplicate row", hdr + "1,GPU-a,1\n1,GPU-a,2\n", "t.csv:3:3: second row for GPU-a at timestamp 1 (first on line 2)"},
		{"short row", hdr + "1,GPU-a\n", "t.csv:2:1: wrong number of cells"},
		{"bad quote", hdr + "1,\"GPU-a,1\n", "t.csv:2:"},
		{"bad gpu", "timestamp,uuid,gpu\n1,GPU-a,-1\n", `t.csv:2:9: gpu: want a GPU index, got "-1"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(t, tt.src)
			require.ErrorContains(t, err, tt.want)
			var te *Error
			require.ErrorAs(t, err, &te, "a positioned error, got %T", err)
		})
	}
}

// FuzzRead feeds arbitrary bytes after a valid header: the reader must
// never panic, and every error must say where it is.
func FuzzRead(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("timestamp,uuid\n1,a\n0,b\n"))
	f.Add([]byte("timestamp,uuid,gpu,step_seconds\n1,a,3,NaN\n1,b,,\n"))
	f.Add([]byte("timestamp,uuid\n\"1\",\"a\"\"b\"\n"))
	// The node evidence columns (docs/trace-node-evidence.md): a pod and a
	// NIC shared by two GPUs, and a row that disagrees.
	f.Add([]byte("timestamp,host,uuid,pci_bus_id,pod_uid,pod_cpu_limit,pod_cpu_periods,nic,nic_rate_gbps,nic_rx_bytes,nic_tx_bytes,nic_up\n" +
		"1,h,a,0000:18:00.0,p,4,10,mlx5_0:1,400,5,5,1\n1,h,b,0000:19:00.0,p,4,11,mlx5_0:1,400,5,5,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := NewReader(strings.NewReader(string(data)), "f.csv")
		for err == nil {
			var b []Row
			b, err = tr.NextBatch()
			for _, r := range b {
				if r.UUID == "" || r.Line < 1 {
					t.Fatalf("row without identity: %+v", r)
				}
				if r.Time != b[0].Time {
					t.Fatalf("batch mixes timestamps: %v and %v", b[0].Time, r.Time)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return
		}
		var te *Error
		if !errors.As(err, &te) {
			t.Fatalf("error without a position: %v", err)
		}
		if te.Line < 1 || te.Column < 1 || !strings.HasPrefix(err.Error(), "f.csv:") {
			t.Fatalf("bad position in %q", err)
		}
	})
}

// TestErrorAfterBatches: rows read before a bad one are handed out first.
func TestErrorAfterBatches(t *testing.T) {
	tr, err := NewReader(strings.NewReader("timestamp,uuid,gpu\n1,a,0\n2,a,0\n2,b,0\n3,a,x\n"), "t.csv")
	require.NoError(t, err)
	b, err := tr.NextBatch()
	require.NoError(t, err)
	require.Len(t, b, 1)
	b, err = tr.NextBatch()
	require.NoError(t, err)
	require.Len(t, b, 2)
	_, err = tr.NextBatch()
	require.EqualError(t, err, `t.csv:5:5: gpu: want a GPU index, got "x"`)
	_, err = tr.NextBatch()
	require.Error(t, err, "the error stays")
}

// TestRecoveryActionColumn: the recovery action is a column like any DCGM
// field. A writer of the whole catalogue (gpurecord's) writes it under
// DCGM 4.6's name; DCGM 4.5's name reads as the same field; a blank cell
// is no value; a trace without the column (every trace before it) reads
// as before, and its samples have no recovery action rather than 0.
func TestRecoveryActionColumn(t *testing.T) {
	var sb strings.Builder
	w, err := NewWriter(&sb, dcgmfield.All())
	require.NoError(t, err)
	var vs dcgmfield.Values
	vs.Set(dcgmfield.RecoveryAction, dcgmfield.RecoveryActionNodeReboot)
	require.NoError(t, w.Write(&Row{Time: 100, UUID: "GPU-a", Values: vs}))
	require.NoError(t, w.Write(&Row{Time: 100, UUID: "GPU-b"}))
	require.NoError(t, w.Flush())
	header, _, _ := strings.Cut(sb.String(), "\n")
	require.Contains(t, strings.Split(header, ","), "DCGM_FI_DEV_GPU_RECOVERY_ACTION")
	batches, err := readAll(t, sb.String())
	require.NoError(t, err)
	devices := map[string]*gpu.Device{}
	s := batches[0][0].Sample(devices)
	v, ok := s.Values.Get(dcgmfield.RecoveryAction)
	require.True(t, ok)
	require.Equal(t, float64(dcgmfield.RecoveryActionNodeReboot), v)
	require.False(t, batches[0][1].Values.Has(dcgmfield.RecoveryAction), "a blank cell is no action")

	batches, err = readAll(t, "timestamp,uuid,DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION\n100,GPU-a,1\n")
	require.NoError(t, err)
	v, ok = batches[0][0].Values.Get(dcgmfield.RecoveryAction)
	require.True(t, ok, "DCGM 4.5's name")
	require.Equal(t, float64(dcgmfield.RecoveryActionGPUReset), v)

	batches, err = readAll(t, good)
	require.NoError(t, err)
	for _, b := range batches {
		for i := range b {
			s := b[i].Sample(devices)
			require.False(t, s.Values.Has(dcgmfield.RecoveryAction), "line %d", b[i].Line)
		}
	}
}
