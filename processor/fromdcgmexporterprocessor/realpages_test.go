package fromdcgmexporterprocessor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
)

// realPagesDir is the folder of real exporter pages beside the repository
// (shared/realdata/exporter-pages): pages that exporters served on real
// GPUs, published by others, with their sources in its SOURCES.md. Outside
// CI a checkout may lack it, and the tests that read it skip; under CI=true
// a missing folder fails them.
func realPagesDir(t *testing.T) string {
	t.Helper()
	return sharedtest.Path(t, "realdata/exporter-pages")
}

// readablePage drops the lines a page's publisher elided ("...", "<snip>"):
// they are no samples, and a scrape of the real page would not have them.
func readablePage(t *testing.T, raw []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, line := range strings.Split(string(raw), "\n") {
		s := strings.TrimSpace(line)
		if s == "" || strings.HasPrefix(s, "#") {
			out.WriteString(line + "\n")
			continue
		}
		if _, _, _, err := parseSample(s); err != nil {
			continue
		}
		out.WriteString(s + "\n")
	}
	return out.Bytes()
}

// pageVerdict is what the analyzer said of one device of a page.
type pageVerdict struct {
	class, evidence string
	busy            bool // GPU utilization or graphics engine activity at 5 % or more
	hasActivity     bool // a utilization or graphics engine reading
	memoryBytes     float64
}

// analysePage scrapes a page twice, 15 s apart, as the prometheus receiver
// would, through from_dcgm_exporter and the gpu_analyzer as the shipped
// example configures them, and returns each device's verdict at the second.
func analysePage(t *testing.T, raw []byte) map[string]pageVerdict {
	t.Helper()
	text := readablePage(t, raw)
	tr, _ := newTestTranslator(t, createDefaultConfig().(*Config))
	af := gpuanalyzerprocessor.NewFactory()
	acfg := af.CreateDefaultConfig().(*gpuanalyzerprocessor.Config)
	acfg.VerdictInterval = 0
	sink := new(consumertest.MetricsSink)
	an, err := af.CreateMetrics(context.Background(), processortest.NewNopSettings(af.Type()), acfg, sink)
	require.NoError(t, err)
	require.NoError(t, an.Start(context.Background(), nil))
	defer func() { require.NoError(t, an.Shutdown(context.Background())) }()
	for _, at := range []time.Duration{0, 15 * time.Second} {
		md := consume(t, tr, scrape(t, text, t0.Add(at), t0))
		require.NoError(t, an.ConsumeMetrics(context.Background(), md))
	}
	all := sink.AllMetrics()
	last := all[len(all)-1]
	out := map[string]pageVerdict{}
	for id, rms := range devices(last) {
		rm := rms[0]
		key := id
		if inst, ok := rm.Resource().Attributes().Get(metricnames.AttrNvidiaGPUMIGInstance); ok {
			key += "/mig" + inst.AsString()
		}
		v := pageVerdict{class: "(none)"}
		forEachPoint(rm, func(name string, dp pmetric.NumberDataPoint) {
			val := dp.DoubleValue() + float64(dp.IntValue())
			switch name {
			case metricnames.OTelGPUBottleneckState:
				if dp.IntValue() == 1 {
					c, _ := dp.Attributes().Get(metricnames.AttrOTelGPUBottleneckClass)
					e, _ := dp.Attributes().Get(metricnames.AttrOTelGPUBottleneckEvidence)
					v.class, v.evidence = c.Str(), e.Str()
				}
			case metricnames.HWGPUUtilization, metricnames.NvidiaGPUGraphicsEngineActive:
				if task, ok := dp.Attributes().Get(metricnames.AttrHWGPUTask); ok && task.Str() != metricnames.AttrHWGPUTaskGeneral {
					return
				}
				v.hasActivity = true
				v.busy = v.busy || val >= 0.05
			case metricnames.HWGPUMemoryUsage:
				v.memoryBytes = val
			}
		})
		out[key] = v
	}
	return out
}

// TestRealPages: every real page, as the shipped examples/dcgm-exporter
// pipeline reads it. Every device with a utilization or graphics engine
// reading gets a verdict; no busy device is unknown where its fields decide
// it (the processor README's table: a profiled graphics engine, or a power
// cap the clocks show); the pages whose state their publisher gave get that
// state.
func TestRealPages(t *testing.T) {
	dir := realPagesDir(t)
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	want := map[string]map[string]string{
		// A T4 at 91 % utilization drawing 68 W of its 70 W limit at
		// 660 MHz of 1,590: held by its power cap.
		"dcgm-06-T4-ericsson-busy.txt": {"*": "throttled/power_cap"},
		// An A100 and its 1g.5gb MIG instance busy in NVIDIA's docs: the
		// GPU's graphics engine 0.996 with its tensor pipes at 0.93; the
		// instance's own engine as busy, its DRAM active 0.80 of the time
		// (the contract tries memory bound first).
		"dcgm-17-A100-MIG-1g5gb-nvidia-docs-busy.txt": {
			"GPU-34319582-d595-d1c7-d1d2-179bcfa61660":              "compute_bound/gr_engine",
			"GPU-34319582-d595-d1c7-d1d2-179bcfa61660/13/0/mig13.0": "memory_bound/dram_active",
		},
		// dcgm-exporter 1.x's dcgm_* series with lowercase uuid, and its
		// pod-devices exporter's pod_name labels: idle GPUs.
		"dcgm-42-unknownGPU-1x-dcgm_-names-node-exporter-textfile-2018.txt": {"*": "idle/utilization"},
		"dcgm-43-unknownGPUx2-1x-pod_name-labels-2019.txt":                  {"*": "idle/utilization"},
	}
	// Memory in use, in bytes, as each page says it in its own unit: MiB
	// on dcgm-exporter's, bytes on nvidia_gpu_exporter's.
	memory := map[string]float64{
		"dcgm-06-T4-ericsson-busy.txt":        5120 << 20,
		"nvsmi-01-H100-80GB-load-gpuburn.txt": 2.0780679168e10,
	}
	// nvidia_gpu_exporter's pages, nvidia-smi's fields: no profiling, so
	// power against the enforced limit tells work from waiting.
	for name, w := range map[string]string{
		"nvsmi-02-H100-80GB-idle.txt":                       "idle/utilization",
		"nvsmi-05-RTX2080S-windows-idle.txt":                "idle/utilization",
		"nvsmi-06-RTX2080S-windows-v0-2021-readme-full.txt": "idle/utilization",
	} {
		want[name] = map[string]string{"*": w}
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			verdicts := analysePage(t, raw)
			profiled := bytes.Contains(raw, []byte("DCGM_FI_PROF_GR_ENGINE_ACTIVE{"))
			keys := make([]string, 0, len(verdicts))
			for k := range verdicts {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := verdicts[k]
				t.Logf("%s: %s/%s busy=%v activity=%v memory=%.0f MiB", k, v.class, v.evidence, v.busy, v.hasActivity, v.memoryBytes/(1<<20))
				if v.hasActivity {
					require.NotEqual(t, "(none)", v.class, "%s has a utilization reading and no verdict", k)
				}
				if v.busy && profiled {
					// A busy device with a profiled graphics engine has
					// what its class needs (the README's table); without
					// profiling, utilization and power cannot tell one
					// working class from another, and unknown is right.
					require.NotEqual(t, "unknown", v.class, "%s is busy", k)
				}
				if b, ok := memory[name]; ok {
					require.InDelta(t, b, v.memoryBytes, 1<<20, "%s: memory in use, in bytes", k)
				}
				if w, ok := want[name]["*"]; ok {
					require.Equal(t, w, v.class+"/"+v.evidence, k)
				}
				if w, ok := want[name][k]; ok {
					require.Equal(t, w, v.class+"/"+v.evidence, k)
				}
			}
			for k := range want[name] {
				if k != "*" {
					require.Contains(t, verdicts, k)
				}
			}
			if len(want[name]) > 0 {
				require.NotEmpty(t, verdicts)
			}
			if strings.HasPrefix(name, "other-") {
				// An NVML exporter's nvidia_gpu_* (2018): no utilization,
				// nothing the analyzer could judge; passed through.
				require.Empty(t, verdicts, "not a page the translator reads")
			}
		})
	}
}
