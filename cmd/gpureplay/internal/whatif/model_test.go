package whatif

import (
	"bytes"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

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

// Spec section 2: not-ready replicas go first (the most recently
// requested first), then the most recently readied; ordinals are never
// reused.
func TestDeploymentScaleOrder(t *testing.T) {
	d := NewDeployment("llm", 2, 180*time.Second, 0)
	d.now = 10 * time.Second
	d.Scale(4) // ordinals 2 and 3, ready at 190 s
	require.Equal(t, int32(4), d.Replicas())
	d.now = 20 * time.Second
	d.Scale(5) // ordinal 4, ready at 200 s
	d.now = 100 * time.Second
	require.Equal(t, []int{0, 1}, d.ready())
	d.Scale(4) // not ready, requested last (4) goes first
	require.Equal(t, []int{0, 1, 2, 3}, ordinals(d.replicas))
	d.now = 190 * time.Second
	require.Len(t, d.ready(), 4)
	d.now = 300 * time.Second
	d.Scale(5) // ordinal 5, ready at 480 s
	d.Scale(3) // the not-ready 5, then of 2 and 3 (readied together) the newest
	require.Equal(t, []int{0, 1, 2}, ordinals(d.replicas))
	d.Scale(2) // 2, readied at 190 s, after 0 and 1 (ready from the start)
	require.Equal(t, []int{0, 1}, ordinals(d.replicas))
	d.Scale(1) // among replicas ready together, the newest (1)
	require.Equal(t, []int{0}, ordinals(d.replicas))
	d.Scale(2) // a new ordinal, never reused
	require.Equal(t, []int{0, 6}, ordinals(d.replicas))
	require.Equal(t, int32(5), d.peak)
	require.Equal(t, 4, d.ups)
	require.Equal(t, 4, d.downs)
}

// The cold start (spec section 2's -cold): the initial replicas are
// requested at t = 0 and serve only a start-up later.
func TestDeploymentColdStart(t *testing.T) {
	d := NewDeployment("llm", 2, 180*time.Second, 180*time.Second)
	d.now = 179 * time.Second
	require.Empty(t, d.ready())
	d.now = 180 * time.Second
	require.Equal(t, []int{0, 1}, d.ready())
}

// Spec section 2's warm start, max(min, min(max, ceil(d0 / 0.8))), by hand.
func TestWarmReplicas(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int32 // min_replicas, max_replicas
		d0     float64
		want   int32
	}{
		{1, 100, 0.2297, 1},      // the conversation series at ×1: 0.29 → 1
		{1, 100, 0.2297 * 5, 2},  // ×5: 1.4356 → 2
		{1, 100, 0.2297 * 20, 6}, // ×20: 5.7425 → 6
		{1, 100, 0.8, 1},         // exactly 1 pod at 80 %
		{1, 100, 0.81, 2},
		{1, 100, 8.48 * 5, 53}, // 53.00000000000001 in float64: still 53
		{3, 100, 0, 3},         // no demand: min_replicas
		{1, 4, 10, 4},          // 13 clamped to max_replicas
	} {
		require.Equal(t, tc.want, warmReplicas(tc.lo, tc.hi, tc.d0), "%+v", tc)
	}
}

// s(t) = 0.05 × (1 + 0.5 sin(2πt/1800) + 0.25 sin(2πt/420 + 1)) (spec
// section 3), at times worked out by hand: at 0 only the second term's
// phase, 0.25 sin 1 = 0.2103677; at 450 s a quarter of the first period,
// 0.5 + 0.25 sin(15π/7 + 1) = 0.5 + 0.25 sin(π/7 + 1) = 0.7481419.
func TestRequestSize(t *testing.T) {
	require.InDelta(t, 0.05*(1+0.25*0.8414709848078965), requestSize(0), 1e-15)
	require.InDelta(t, 0.060518387, requestSize(0), 1e-9)
	require.InDelta(t, 0.05*(1+0.5+0.25*math.Sin(math.Pi/7+1)), requestSize(450*time.Second), 1e-15)
	require.InDelta(t, 0.087407094, requestSize(450*time.Second), 1e-9)
	// Over a day it stays within 0.05 × [0.25, 1.75].
	for s := 0; s < 86400; s++ {
		v := requestSize(time.Duration(s) * time.Second)
		require.True(t, v >= 0.0125 && v <= 0.0875, "s(%d) = %v", s, v)
	}
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

// batches runs the model and keeps every batch the pods report.
func batches(t *testing.T, cfg *gpuautoscaleconnector.Config, d *Demand, opts Options, out *bytes.Buffer) (Summary, []pmetric.Metrics) {
	t.Helper()
	var got []pmetric.Metrics
	var w io.Writer
	if out != nil {
		w = out
	}
	sum, err := run(cfg, d, opts, w, func(md pmetric.Metrics) { got = append(got, md) })
	require.NoError(t, err)
	return sum, got
}

// reported is one pod's sample: its gauges and its token counter's point.
type reported struct {
	gauges map[string]float64
	tokens pmetric.NumberDataPoint
	sum    pmetric.Sum
}

// pods reads a batch: each pod's values, by k8s.pod.name, checking its
// resource attributes on the way.
func pods(t *testing.T, md pmetric.Metrics) map[string]reported {
	t.Helper()
	out := map[string]reported{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes().AsRaw()
		pod := attrs["k8s.pod.name"].(string)
		n := strings.TrimPrefix(pod, "llm-")
		require.Equal(t, map[string]any{"k8s.namespace.name": "serving", "k8s.deployment.name": "llm", "k8s.pod.name": pod, "hw.id": "GPU-sim-" + n}, attrs)
		r := reported{gauges: map[string]float64{}}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Name() == "vllm:generation_tokens_total" {
				require.Equal(t, pmetric.MetricTypeSum, m.Type())
				r.sum, r.tokens = m.Sum(), m.Sum().DataPoints().At(0)
				continue
			}
			require.Equal(t, pmetric.MetricTypeGauge, m.Type(), m.Name())
			dp := m.Gauge().DataPoints().At(0)
			if m.Name() == "hw.gpu.utilization" {
				require.Equal(t, map[string]any{"hw.gpu.task": "general"}, dp.Attributes().AsRaw())
			}
			r.gauges[m.Name()] = dp.DoubleValue()
		}
		require.Len(t, r.gauges, 5, pod)
		require.Equal(t, 1, r.sum.DataPoints().Len(), pod)
		out[pod] = r
	}
	return out
}

// at is the epoch plus s seconds, as a data point's timestamp.
func at(s int) pcommon.Timestamp {
	return pcommon.NewTimestampFromTime(epoch.Add(time.Duration(s) * time.Second))
}

// One pod that may not grow, twice the work it can serve for a minute:
// warm, min(max_replicas 1, ceil(2 / 0.8) = 3) = 1 pod ready at t = 0,
// and the backlog grows by 1 pod-second each second: B(t) = t + 1 after
// the step at t, u = 1.
func TestRunSaturatedByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 1\n")
	var out bytes.Buffer
	sum, got := batches(t, cfg, demand(t, "t_seconds,demand_pods\n0,2\n15,2\n30,2\n45,2\n"), Options{}, &out)
	require.Equal(t, Summary{
		GPUHours:                round(60.0 / 3600), // one pod for 60 s
		SLOViolationMinutes:     round(58.0 / 60),   // B / c = t + 1 > 2 from t = 2 s
		SLOBreaches:             1,
		LongestSLOBreachMinutes: round(58.0 / 60),
		BacklogPodHours:         round(1830.0 / 3600),
		PeakReplicas:            1,
		IdealGPUHours:           round(120.0 / 3600), // ceil(2) pods for 60 s
		GPUHoursOverIdeal:       0.5,
		Start:                   "warm",
		InitialReplicas:         1,
	}, sum)
	// Evaluations at 15, 30 and 45 s: SM activity 0.95 against 0.5 asks
	// for 2, max_replicas holds 1.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, `{"time":15,"current":1,"desired":1,"reason":"TooManyReplicas","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[0])
	require.Contains(t, lines[3], `"gpu_hours":0.016667`)

	// A sample every 5 s (0, 5, ..., 55), one pod each.
	require.Len(t, got, 12)
	p := pods(t, got[2])["llm-0"] // t = 10 s: B = 11, u = 1
	s10 := requestSize(10 * time.Second)
	require.Equal(t, 0.95, p.gauges["nvidia.gpu.sm.active"])
	require.Equal(t, 1.0, p.gauges["hw.gpu.utilization"])
	require.InDelta(t, 11/s10, p.gauges["vllm:num_requests_waiting"], 1e-9) // 11 / 0.0622800 = 176.62
	require.InDelta(t, 176.621732, p.gauges["vllm:num_requests_waiting"], 1e-6)
	require.InDelta(t, 0.5/s10, p.gauges["vllm:num_requests_running"], 1e-9) // 8.03
	require.InDelta(t, 1.0, p.gauges["vllm:kv_cache_usage_perc"], 1e-12)     // 0.9 + 0.1 × min(1, 11/10)
	// The counter: 1000 tokens in each of the steps 0..10, from t = 0.
	require.Equal(t, 11000.0, p.tokens.DoubleValue())
	require.Equal(t, at(0), p.tokens.StartTimestamp())
	require.Equal(t, at(10), p.tokens.Timestamp())
	require.Equal(t, pmetric.AggregationTemporalityCumulative, p.sum.AggregationTemporality())
	require.True(t, p.sum.IsMonotonic())
	// t = 5 s: B = 6, the KV cache 0.9 + 0.1 × 6/10.
	require.InDelta(t, 0.96, pods(t, got[1])["llm-0"].gauges["vllm:kv_cache_usage_perc"], 1e-12)
}

// Two overloads of the one pod that may not grow, each followed by a
// quiet stretch that drains it: two breaches, told apart. Demand 2 for
// 0..9 s: B(t) = t + 1, over 2 s of wait from t = 2; demand 0 from 10 s:
// B(t) = 19 − t, over 2 until t = 16. The first breach is 2..16 s (15 s).
// Demand 2 again for 30..44 s: B(t) = t − 29, over 2 from t = 32; then 0:
// B(t) = 59 − t, over 2 until t = 56. The second is 32..56 s (25 s).
func TestRunBreachesByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 1\n")
	sum, _ := batches(t, cfg, demand(t, "t_seconds,demand_pods\n0,2\n10,0\n30,2\n45,0\n"), Options{}, nil)
	require.Equal(t, round(40.0/60), sum.SLOViolationMinutes)
	require.Equal(t, 2, sum.SLOBreaches)
	require.Equal(t, round(25.0/60), sum.LongestSLOBreachMinutes)
}

// Two pods that may not change, 1.0 of demand: warm, ceil(1 / 0.8) = 2
// ready at t = 0, each at half load, no queue.
func TestRunWarmHalfLoadByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 2\n    max_replicas: 2\n")
	sum, got := batches(t, cfg, demand(t, "t_seconds,demand_pods\n0,1\n15,1\n"), Options{}, nil)
	require.Equal(t, Summary{
		GPUHours:          round(60.0 / 3600),
		PeakReplicas:      2,
		IdealGPUHours:     round(60.0 / 3600), // max(min_replicas 2, ceil(1))
		GPUHoursOverIdeal: 1,
		Start:             "warm",
		InitialReplicas:   2,
	}, sum)
	require.Len(t, got, 6)
	ps := pods(t, got[2]) // t = 10 s
	require.Len(t, ps, 2)
	for _, p := range ps {
		require.Equal(t, 0.475, p.gauges["nvidia.gpu.sm.active"])
		require.Equal(t, 1.0, p.gauges["hw.gpu.utilization"]) // min(1, 0.5 / 0.15)
		require.Zero(t, p.gauges["vllm:num_requests_waiting"])
		require.InDelta(t, 0.25/requestSize(10*time.Second), p.gauges["vllm:num_requests_running"], 1e-9)
		require.InDelta(t, 0.45, p.gauges["vllm:kv_cache_usage_perc"], 1e-12)
		require.Equal(t, 5500.0, p.tokens.DoubleValue()) // 500 in each of the steps 0..10
	}
	// The running gauge follows s(t): at 25 s, 0.25 / s(25).
	require.InDelta(t, 0.25/requestSize(25*time.Second), pods(t, got[5])["llm-1"].gauges["vllm:num_requests_running"], 1e-9)
}

// A pod fully loaded by a demand of 1.0 at target 0.5, startup 30 s, cold:
// one replica requested at t = 0, ready at 30 s; the backlog 30 by then.
// Worked by hand from sections 2 to 4 and the HPA's rules:
//   - 0..29 s: nothing ready, B = t + 1, the wait infinite; the
//     evaluation at 15 s has no value to go on.
//   - 30 s: llm-0 serves 1, B stays 30, SM 0.95: 0.95 / 0.5 asks for
//     ceil(1.9) = 2; llm-1 is requested, ready at 60 s.
//   - 45 s: llm-1 has no value; counted as 0 on a scale-up the ratio is
//     0.95, within tolerance: MissingMetrics, 2.
//   - 60 s: two pods serve 2, B = 29; both at 0.95 ask for ceil(3.8) = 4
//     (max_replicas 4); llm-2 and llm-3 ready at 90 s.
//   - 61..89 s: B falls by 1 a second to 0 at 89 s; 75 s: MissingMetrics.
//   - 90..119 s: four pods, u = 0.25; the scale-down to 2 waits for the
//     HPA's 300 s stabilization (Stabilized).
func TestRunColdScaleUpByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 4\n")
	var out bytes.Buffer
	sum, got := batches(t, cfg, demand(t, "t_seconds,demand_pods\n0,1\n60,1\n"), Options{Startup: 30 * time.Second, Cold: true}, &out)
	require.Equal(t, Summary{
		// 1 requested for the steps 0..30, 2 for 31..60, 4 for 61..119.
		GPUHours: round((31*1 + 30*2 + 59*4) / 3600.0),
		// 0..29 (c = 0), 30..59 (30 / 1), 60..84 (B / 2 > 2 while B > 4).
		SLOViolationMinutes: round(85.0 / 60),
		// One breach: the steps 0..84 in a row.
		SLOBreaches:             1,
		LongestSLOBreachMinutes: round(85.0 / 60),
		// 1 + ... + 30, then 30 for 30 s, then 29 + ... + 0.
		BacklogPodHours:   round((465 + 900 + 435) / 3600.0),
		PeakReplicas:      4,
		ScaleUps:          2,
		IdealGPUHours:     round(120.0 / 3600),
		GPUHoursOverIdeal: round(327.0 / 120),
		Start:             "cold",
		InitialReplicas:   1,
	}, sum)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 8) // 15, 30, ..., 105 s, then the summary
	require.Equal(t, `{"time":15,"current":1,"desired":1,"reason":"NoMetrics","value":0}`, lines[0])
	require.Equal(t, `{"time":30,"current":1,"desired":2,"reason":"Scaled","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[1])
	require.Equal(t, `{"time":45,"current":2,"desired":2,"reason":"MissingMetrics","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[2])
	require.Equal(t, `{"time":60,"current":2,"desired":4,"reason":"Scaled","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[3])
	require.Equal(t, `{"time":75,"current":4,"desired":4,"reason":"MissingMetrics","metric":"nvidia.gpu.sm.active","value":0.95}`, lines[4])
	require.Contains(t, lines[5], `{"time":90,"current":4,"desired":4,"reason":"Stabilized",`)
	// 0.95 × 0.25 = 0.2375 in the HPA's milli-units, rounded up as a
	// resource.Quantity's MilliValue is.
	require.Contains(t, lines[5], `"value":0.238`)

	// No pod reports before 30 s; samples at 30, 35, ..., 115 s.
	require.Len(t, got, 18)
	first := pods(t, got[0])
	require.Len(t, first, 1)
	require.Equal(t, at(30), first["llm-0"].tokens.Timestamp())
	require.Equal(t, 1000.0, first["llm-0"].tokens.DoubleValue()) // the step at 30 s
	require.InDelta(t, 30/requestSize(30*time.Second), first["llm-0"].gauges["vllm:num_requests_waiting"], 1e-9)
	// At 90 s: each counter from its own readiness. llm-0: 60 busy steps
	// (30..89) and a quarter of one; llm-1: 30 busy steps (60..89) and a
	// quarter; llm-2 and llm-3: a quarter, from 90 s.
	ps := pods(t, got[12])
	require.Len(t, ps, 4)
	for pod, want := range map[string]struct {
		tokens float64
		start  int
	}{"llm-0": {60250, 30}, "llm-1": {30250, 60}, "llm-2": {250, 90}, "llm-3": {250, 90}} {
		require.Equal(t, want.tokens, ps[pod].tokens.DoubleValue(), pod)
		require.Equal(t, at(want.start), ps[pod].tokens.StartTimestamp(), pod)
		require.Equal(t, at(90), ps[pod].tokens.Timestamp(), pod)
	}
}

// The warm start of the same scenario: ceil(1 / 0.8) = 2 pods ready at
// t = 0, at 0.475 each, within the 0.5 target's tolerance: no action.
func TestRunWarmStartByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 1\n    max_replicas: 4\n")
	var out bytes.Buffer
	sum, _ := batches(t, cfg, demand(t, "t_seconds,demand_pods\n0,1\n60,1\n"), Options{Startup: 30 * time.Second}, &out)
	require.Equal(t, Summary{
		GPUHours:          round(240.0 / 3600),
		PeakReplicas:      2,
		IdealGPUHours:     round(120.0 / 3600),
		GPUHoursOverIdeal: 2,
		Start:             "warm",
		InitialReplicas:   2,
	}, sum)
	require.Contains(t, out.String(), `{"time":15,"current":2,"desired":2,"reason":"WithinTolerance","metric":"nvidia.gpu.sm.active","value":0.475}`)
}

// The ideal (section 4): max(min_replicas, ceil(demand)) per second, with
// -scale's float noise not adding a pod (50 × 1.1 is 55.00000000000001).
func TestIdealByHand(t *testing.T) {
	cfg := settings(t, target+"    min_replicas: 2\n    max_replicas: 100\n")
	sum, err := Run(cfg, demand(t, "t_seconds,demand_pods\n0,0.5\n10,2.3\n20,0\n"), Options{}, nil)
	require.NoError(t, err)
	require.Equal(t, round((10*2+10*3+10*2)/3600.0), sum.IdealGPUHours)
	sum, err = Run(cfg, demand(t, "t_seconds,demand_pods\n0,50\n10,50\n"), Options{Scale: 1.1}, nil)
	require.NoError(t, err)
	require.Equal(t, round(20*55/3600.0), sum.IdealGPUHours)
	require.Equal(t, int32(69), sum.InitialReplicas) // ceil(55 / 0.8) = ceil(68.75)
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
	require.NoError(t, writeFile(path, target+"    min_replicas: 1\n    max_replicas: 4\n    mode: serving\n    serving: {burst_cap: 0.5}\n"))
	cfg, err := LoadSettings(path)
	require.NoError(t, err)
	_, err = Run(cfg, demand(t, "t_seconds,demand_pods\n0,1\n"), Options{}, nil)
	require.ErrorContains(t, err, "targets::0: serving::burst_cap must be 0 (no cap) or at least 1")

	require.NoError(t, writeFile(path, target+"    min_replicas: 1\n    max_replicas: 4\n    target_vlaue: 3\n"))
	_, err = LoadSettings(path)
	require.ErrorContains(t, err, "target_vlaue")
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
