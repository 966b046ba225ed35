package whatif

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector"
)

func TestQueueStep(t *testing.T) {
	var q queue
	// 3 arrive, 2 ready pods serve 2: 1 waits, each pod fully loaded.
	require.Equal(t, 1.0, q.step(3, 2, 1))
	require.Equal(t, 1.0, q.backlog)
	require.Equal(t, 0.5, q.wait(2))
	// 1 arrives, the backlog of 1 and it are served: busy, empty queue.
	require.Equal(t, 1.0, q.step(1, 2, 1))
	require.Zero(t, q.backlog)
	// 0.5 arrives on 2 pods: a quarter load each.
	require.Equal(t, 0.25, q.step(0.5, 2, 1))
	// Without ready pods nothing is served and the wait is infinite.
	require.Zero(t, q.step(1, 0, 1))
	require.True(t, math.IsInf(q.wait(0), 1))
}

func TestDeploymentScaleOrder(t *testing.T) {
	d := NewDeployment("llm", 2, 180*time.Second)
	d.now = 10 * time.Second
	d.Scale(4) // ordinals 2 and 3, ready at 190 s
	require.Equal(t, int32(4), d.Replicas())
	d.now = 100 * time.Second
	require.Len(t, d.ready(), 2)
	d.Scale(3) // the not-ready newest (3) goes first
	require.Equal(t, []int{0, 1, 2}, ordinals(d.replicas))
	d.now = 200 * time.Second
	require.Len(t, d.ready(), 3)
	d.Scale(2) // then the most recently readied (2)
	require.Equal(t, []int{0, 1}, ordinals(d.replicas))
	d.Scale(1) // among replicas ready together, the newest (1)
	require.Equal(t, []int{0}, ordinals(d.replicas))
	d.Scale(2) // a new ordinal, never reused
	require.Equal(t, []int{0, 4}, ordinals(d.replicas))
	require.Equal(t, int32(4), d.peak)
	require.Equal(t, 2, d.ups)
	require.Equal(t, 3, d.downs)
}

func ordinals(rs []replica) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.ordinal)
	}
	return out
}

func settings(t *testing.T, yaml string) *gpuautoscaleconnector.Config {
	t.Helper()
	path := t.TempDir() + "/settings.yaml"
	require.NoError(t, writeFile(path, yaml))
	cfg, err := LoadSettings(path)
	require.NoError(t, err)
	return cfg.(*gpuautoscaleconnector.Config)
}

func demand(t *testing.T, csv string) *Demand {
	t.Helper()
	d, err := ReadDemand(strings.NewReader(csv), "demand.csv")
	require.NoError(t, err)
	return d
}

const target = `targets:
  - scale_target_ref: {api_version: apps/v1, kind: Deployment, name: llm, namespace: serving}
    target_value: 0.5
`

// One pod that may not grow, twice the work it can serve for a minute:
// the backlog grows by 1 pod-second each second, B(t) = t + 1.
func TestRunSaturatedByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 1\n")
	var out bytes.Buffer
	sum, err := Run(cfg, demand(t, "t_seconds,demand_pods\n0,2\n15,2\n30,2\n45,2\n"), Options{}, &out)
	require.NoError(t, err)
	require.Equal(t, Summary{
		GPUHours:            round(60.0 / 3600), // one pod for 60 s
		SLOViolationMinutes: round(58.0 / 60),   // B / c > 2 from t = 2 s
		BacklogPodHours:     round(1830.0 / 3600),
		PeakReplicas:        1,
		IdealGPUHours:       round(120.0 / 3600), // ceil(2) pods for 60 s
	}, sum)
	// Evaluations at 15, 30 and 45 s: SM activity 0.95 against 0.5 asks
	// for 2, max_replicas holds 1.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, `{"time":15,"current":1,"desired":1,"reason":"TooManyReplicas","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[0])
	require.Contains(t, lines[3], `"gpu_hours":0.016667`)
}

// A pod fully loaded by a demand of 1.0 at target 0.5 asks for a second
// one at the first evaluation (15 s); it serves 30 s later, and the HPA
// waits for it (a pod without metrics counts as 0 when scaling up).
func TestRunScaleUpByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 4\n")
	var out bytes.Buffer
	rows := "t_seconds,demand_pods\n0,1\n60,1\n"
	sum, err := Run(cfg, demand(t, rows), Options{Startup: 30 * time.Second}, &out)
	require.NoError(t, err)
	require.Equal(t, Summary{
		GPUHours:      round((16*1 + 104*2) / 3600.0), // 2 requested from t = 16 s
		PeakReplicas:  2,
		ScaleUps:      1,
		IdealGPUHours: round(120.0 / 3600),
	}, sum)
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, `{"time":15,"current":1,"desired":2,"reason":"Scaled","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[0])
	require.Equal(t, `{"time":30,"current":2,"desired":2,"reason":"MissingMetrics","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[1])
	require.Equal(t, `{"time":45,"current":2,"desired":2,"reason":"WithinTolerance","metric":"nvidia.gpu.sm.active","value":0.475}`, lines[2])
}

func TestRunDeterministic(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 10\n")
	d := demand(t, "t_seconds,demand_pods\n0,0.5\n15,3\n30,7.5\n45,0\n60,2\n75,4\n90,1\n")
	var a, b bytes.Buffer
	_, err := Run(cfg, d, Options{Startup: 20 * time.Second, Scale: 3}, &a)
	require.NoError(t, err)
	_, err = Run(cfg, d, Options{Startup: 20 * time.Second, Scale: 3}, &b)
	require.NoError(t, err)
	require.Equal(t, a.String(), b.String())
}

func TestReadDemandErrors(t *testing.T) {
	for _, tc := range []struct{ csv, want string }{
		{"t,demand_pods\n0,1\n", "demand.csv:1:1: header"},
		{"t_seconds,demand_pods\n0,1\n15,x\n", "demand.csv:3:4: demand_pods"},
		{"t_seconds,demand_pods\n0,1\n15,-1\n", "demand.csv:3:4: demand_pods"},
		{"t_seconds,demand_pods\n0,1\n0,2\n", "demand.csv:3:1: t_seconds: 0 does not increase"},
		{"t_seconds,demand_pods\n5,1\n", "demand.csv:2:1: t_seconds: the series must start at 0"},
		{"t_seconds,demand_pods\n0,1,2\n", "demand.csv:2:1: wrong number of fields"},
		{"t_seconds,demand_pods\n", "demand.csv: no demand rows"},
	} {
		_, err := ReadDemand(strings.NewReader(tc.csv), "demand.csv")
		require.ErrorContains(t, err, tc.want, tc.csv)
	}
}

func TestSettingsErrorsNameTheKey(t *testing.T) {
	path := t.TempDir() + "/s.yaml"
	require.NoError(t, writeFile(path, target+"    min_replicas: 1\n    max_replicas: 4\n    mode: serving\n"))
	cfg, err := LoadSettings(path)
	require.NoError(t, err)
	_, err = Run(cfg, demand(t, "t_seconds,demand_pods\n0,1\n"), Options{}, nil)
	require.ErrorContains(t, err, "targets::0: serving::pod_throughput must be positive")

	require.NoError(t, writeFile(path, target+"    min_replicas: 1\n    max_replicas: 4\n    target_vlaue: 3\n"))
	_, err = LoadSettings(path)
	require.ErrorContains(t, err, "target_vlaue")
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
