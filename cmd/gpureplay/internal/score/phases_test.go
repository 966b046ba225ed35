package score

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPhases: each label's window is read as written, with no grace; a
// bottleneck label gets its window's most common class, an alert label
// passes when the alert fires from 40 s before its start, and a label
// without verdicts in its window neither passes nor fails.
func TestPhases(t *testing.T) {
	vs := every5("a", 0, 200, func(t float64) Verdict {
		switch {
		case t < 100:
			return Verdict{Bottleneck: "compute_bound"}
		case t < 115: // the analyzer's window still remembers the compute
			return Verdict{Bottleneck: "input_bound", Alerts: []string{"GPUMemoryPressure"}}
		default:
			return Verdict{Bottleneck: "idle", Straggler: t >= 150, Cause: map[bool]string{true: "cpu_throttled"}[t >= 180]}
		}
	})
	labels := []Label{
		{UUID: "a", Kind: "bottleneck", Value: "compute_bound", Start: 0, End: 100},
		{UUID: "a", Kind: "bottleneck", Value: "idle", Start: 100, End: 150}, // 3 input_bound, 7 idle
		{UUID: "a", Kind: "bottleneck", Value: "memory_bound", Start: 10, End: 60},
		{UUID: "a", Kind: "alert", Value: "GPUMemoryPressure", Start: 140, End: 200}, // fired at 100-110, within 40 s before
		{UUID: "a", Kind: "alert", Value: "GPUMemoryLeak", Start: 0, End: 200},
		{UUID: "a", Kind: "straggler", Value: "true", Start: 150, End: 200},
		{UUID: "a", Kind: "cause", Value: "cpu_throttled", Start: 150, End: 200}, // 4 of 10
		{UUID: "b", Kind: "bottleneck", Value: "idle", Start: 0, End: 100},
	}
	got := Phases(labels, map[string][]Verdict{"a": vs})
	type row struct {
		verdict string
		samples int
		share   float64
		pass    bool
	}
	want := []row{
		{"compute_bound", 20, 1, true},
		{"idle", 10, 0.7, true},
		{"compute_bound", 10, 1, false},
		{"fired", 20, 3.0 / 20, true},
		{"not fired", 40, 0, false},
		{"true", 10, 1, true},
		{"none", 10, 0.6, false},
		{"", 0, 0, false},
	}
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		require.Equalf(t, labels[i], g.Label, "row %d keeps its label", i)
		gotRow := row{g.Verdict, g.Samples, g.Share, g.Pass}
		require.Equalf(t, w, gotRow, "row %d", i)
	}
}

// TestMajorityTie: a tie goes to the first class in byte order, whatever
// the order the verdicts came in.
func TestMajorityTie(t *testing.T) {
	require.Equal(t, "idle", majority(map[string]int{"input_bound": 3, "idle": 3, "compute_bound": 1}))
	require.Equal(t, "input_bound", majority(map[string]int{"input_bound": 4, "idle": 3}))
}

func TestCheckLabels(t *testing.T) {
	require.NoError(t, CheckLabels([]Label{
		{UUID: "a", Kind: "bottleneck", Value: "launch_bound", Start: 1, End: 2},
		{UUID: "a", Kind: "alert", Value: "GPUMemoryLeak", Start: 1, End: 2},
		{UUID: "a", Kind: "cause", Value: "cpu_throttled", Start: 1, End: 2},
	}))
	err := CheckLabels([]Label{
		{UUID: "a", Kind: "bottleneck", Value: "compute_bound", Start: 1, End: 2},
		{UUID: "a", Kind: "bottleneck", Value: "computebound", Start: 1, End: 2},
		{UUID: "a", Kind: "phase", Value: "x", Start: 1, End: 2},
		{UUID: "a", Kind: "alert", Value: "GPULeak", Start: 1, End: 2},
		{UUID: "a", Kind: "straggler", Value: "true", Start: 5, End: 5},
		{UUID: "", Kind: "straggler", Value: "true", Start: 1, End: 2},
	})
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 5, "one error per bad label: %v", err)
	require.True(t, strings.HasPrefix(lines[0], `line 3: bottleneck label: unknown value "computebound"; want one of unknown, faulted,`), lines[0])
	require.Equal(t, `line 4: unknown kind "phase"; want bottleneck, straggler, alert or cause`, lines[1])
	require.True(t, strings.HasPrefix(lines[2], `line 5: alert label: unknown value "GPULeak"`), lines[2])
	require.Equal(t, "line 6: want start < end, got 5 and 5", lines[3])
	require.Equal(t, "line 7: empty uuid", lines[4])
}

func TestWriteTable(t *testing.T) {
	labels := []Label{
		{UUID: "GPU-5c8cc1ab-781e-7b00-48f1-3a056abd685a", Kind: "bottleneck", Value: "compute_bound", Start: 1000, End: 1050},
		{UUID: "GPU-5c8cc1ab-781e-7b00-48f1-3a056abd685a", Kind: "bottleneck", Value: "launch_bound", Start: 1100, End: 1150},
		{UUID: "GPU-5c8cc1ab-781e-7b00-48f1-3a056abd685a", Kind: "bottleneck", Value: "idle", Start: 1200, End: 1250},
	}
	phases := []Phase{
		{Label: labels[0], Samples: 50, Verdict: "compute_bound", Share: 1, Pass: true},
		{Label: labels[1], Samples: 50, Verdict: "idle", Share: 0.88},
		{Label: labels[2]},
	}
	var b strings.Builder
	require.NoError(t, WriteTable(&b, phases, 0))
	require.Equal(t, ""+
		"#  gpu           window (s)  kind        label          verdict        share  samples  result\n"+
		"1  GPU-5c8cc1ab  0-50        bottleneck  compute_bound  compute_bound  100%   50       pass\n"+
		"2  GPU-5c8cc1ab  100-150     bottleneck  launch_bound   idle           88%    50       FAIL\n"+
		"3  GPU-5c8cc1ab  200-250     bottleneck  idle           -              -      0        NO DATA\n"+
		"1 of 3 labels agree with the analyzer; 1 without a verdict in their window\n", b.String())
}
