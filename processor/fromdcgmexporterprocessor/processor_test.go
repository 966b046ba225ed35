package fromdcgmexporterprocessor

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	mn "github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor/internal/metadatatest"
)

const (
	gpu0 = "GPU-5ca1ab1e-0000-4000-8000-000000000000"
	gpu1 = "GPU-5ca1ab1e-0000-4000-8000-000000000001"
	gpu2 = "GPU-5ca1ab1e-0000-4000-8000-000000000002"
	gpu3 = "GPU-5ca1ab1e-0000-4000-8000-000000000003"
	// The MIG instance dcgm-exporter serves in place of GPU 0.
	mig01 = gpu0 + "/1/0"
)

// TestCapturedPages runs the five pages captured from dcgm-exporter 4.8.2
// through the processor, 15 s apart: each becomes one resource per device,
// as the dcgm receiver emits it; XID 79 injected before the third page is
// one event; the driver reload before the fifth restarts the counters.
func TestCapturedPages(t *testing.T) {
	p, tel := newTestTranslator(t, defaultConfig())
	var outs []pmetric.Metrics
	for n := 1; n <= 5; n++ {
		outs = append(outs, consume(t, p, scrape(t, capturedPage(t, n), t0.Add(time.Duration(n-1)*15*time.Second), t0)))
	}

	first := outs[0]
	byID := devices(first)
	require.Len(t, byID, 5)
	for _, id := range []string{gpu0, mig01, gpu1, gpu2, gpu3} {
		require.Len(t, byID[id], 1, id)
	}
	// Only the scrape's own series pass; every DCGM series was translated.
	target := first.ResourceMetrics().At(0)
	require.Equal(t, []string{"up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling", "scrape_series_added"}, names(pmetricOf(target)))

	g1 := byID[gpu1][0]
	attrs := g1.Resource().Attributes().AsRaw()
	assert.Equal(t, map[string]any{
		"hw.id": gpu1, "hw.name": "gpu1", "hw.type": "gpu", "hw.vendor": "NVIDIA", "hw.model": "NVIDIA H100 80GB HBM3",
		"hw.driver_version": "550.54.15", "host.name": "localhost", "nvidia.gpu.index": int64(1),
		"nvidia.gpu.pci_bus_id": "00000000:28:00.0",
	}, attrs)
	// DCGM's units become OpenTelemetry's: percent to ratio, MiB to bytes,
	// MHz to Hz, mJ to J (relative to its start).
	assert.InDelta(t, 0.91, value(t, g1, mn.HWGPUUtilization, map[string]any{"hw.gpu.task": "general"}), 1e-12)
	assert.InDelta(t, 41559.0*(1<<20), value(t, g1, "hw.gpu.memory.usage", nil), 0)
	assert.InDelta(t, 1980e6, value(t, g1, "nvidia.gpu.clock.frequency", map[string]any{"nvidia.gpu.clock": "sm"}), 0)
	assert.InDelta(t, 0.52, value(t, g1, mn.NvidiaGPUSMActive, nil), 1e-12)
	assert.InDelta(t, 0.0, value(t, g1, mn.HWEnergy, nil), 0)
	_, hasXID := point(g1, mn.NvidiaGPUXIDErrors, nil)
	assert.False(t, hasXID, "no XID before the third page")

	// The T4 has no profiling: no SM activity, and its graphics engine
	// activity is the receiver's fallback from GPU_UTIL.
	t4 := byID[gpu3][0]
	_, hasSM := point(t4, mn.NvidiaGPUSMActive, nil)
	assert.False(t, hasSM)
	assert.InDelta(t, 0.93, value(t, t4, "nvidia.gpu.graphics_engine.active", nil), 1e-12)

	// The MIG instance.
	mig := byID[mig01][0].Resource().Attributes()
	for k, v := range map[string]string{"hw.name": "gpu0/mig1.0", mn.AttrNvidiaGPUMIGParentID: gpu0, mn.AttrNvidiaGPUMIGInstance: "1.0"} {
		got, _ := mig.Get(k)
		assert.Equal(t, v, got.Str(), k)
	}

	// XID 79 on GPU 1 at the third page: one event, counted from
	// DCGM_EXP_XID_ERRORS_COUNT; the fourth page repeats it, no new event.
	for _, n := range []int{2, 3} {
		g1 := devices(outs[n])[gpu1][0]
		assert.InDelta(t, 1, value(t, g1, mn.NvidiaGPUXIDErrors, map[string]any{mn.AttrNvidiaGPUXID: int64(79)}), 0, "page %d", n+1)
	}
	// Energy: 12 kJ between the first and fourth pages (the stand-in adds
	// 1 kJ per DCGM read).
	assert.InDelta(t, 12000, value(t, devices(outs[3])[gpu1][0], mn.HWEnergy, nil), 0)

	// The driver reload: energy went down on every device, a new epoch
	// restarts the counters (from 0, with a new start time) and forgets
	// the XID count, as the receiver does when its source reconnects.
	g1 = devices(outs[4])[gpu1][0]
	energy, _ := point(g1, mn.HWEnergy, nil)
	assert.InDelta(t, 0, energy.DoubleValue(), 0)
	assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(60*time.Second)), energy.StartTimestamp())
	_, hasXID = point(g1, mn.NvidiaGPUXIDErrors, nil)
	assert.False(t, hasXID)

	metadatatest.AssertEqualProcessorFromDcgmExporterXidEvents(t, tel, []metricdata.DataPoint[int64]{{Value: 1, Attributes: attrSet("source", "xid_count")}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorFromDcgmExporterCounterResets(t, tel, []metricdata.DataPoint[int64]{{Value: 4}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorFromDcgmExporterTrackedGpus(t, tel, []metricdata.DataPoint[int64]{{Value: 5}}, metricdatatest.IgnoreTimestamp())
	_, err := tel.GetMetric("otelcol_processor_from_dcgm_exporter_rejected_data_points")
	assert.Error(t, err, "nothing on the real pages is refused")
}

func pmetricOf(rm pmetric.ResourceMetrics) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm.CopyTo(md.ResourceMetrics().AppendEmpty())
	return md
}

const labels = `gpu="0",UUID="GPU-a",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"`

// TestLastXIDGauge: DCGM_FI_DEV_XID_ERRORS alone. The value at the first
// scrape is history; a change to a new non-zero code is one event; the
// same code again, or 0, is none (a repeat of the same XID between
// scrapes cannot be seen in this gauge).
func TestLastXIDGauge(t *testing.T) {
	p, tel := newTestTranslator(t, defaultConfig())
	var last pmetric.Metrics
	for i, code := range []string{"48", "48", "0", "79", "79", "48", "0"} {
		last = consume(t, p, page(t, time.Duration(i)*15*time.Second,
			"DCGM_FI_DEV_GPU_UTIL{"+labels+"} 50\nDCGM_FI_DEV_XID_ERRORS{"+labels+`,err_code="`+code+`"} `+code+"\n"))
	}
	rm := devices(last)["GPU-a"][0]
	assert.InDelta(t, 1, value(t, rm, mn.NvidiaGPUXIDErrors, map[string]any{mn.AttrNvidiaGPUXID: int64(79)}), 0)
	assert.InDelta(t, 1, value(t, rm, mn.NvidiaGPUXIDErrors, map[string]any{mn.AttrNvidiaGPUXID: int64(48)}), 0)
	assert.Equal(t, map[string]int64{"last_xid": 2}, counts(t, tel, "otelcol_processor_from_dcgm_exporter_xid_events", "source"))
}

// TestXIDCountPreferred: with DCGM_EXP_XID_ERRORS_COUNT served, each unit
// its count of a code rises is one event, the last-XID gauge is not read
// for events (no double count), and a count that falls (events leaving the
// window) is none.
func TestXIDCountPreferred(t *testing.T) {
	p, tel := newTestTranslator(t, defaultConfig())
	steps := []struct{ last, counts string }{
		{"13", `DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="13"} 2`}, // history
		{"79", `DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="13"} 2` + "\n" +
			`DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="79"} 1`},
		{"13", `DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="13"} 4` + "\n" +
			`DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="79"} 1`},
		{"13", `DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="13"} 1`},
		{"13", `DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000"} 0`},
		{"31", `DCGM_EXP_XID_ERRORS_COUNT{` + labels + `,window_size_in_ms="300000",xid="31"} 1`},
	}
	var last pmetric.Metrics
	for i, s := range steps {
		last = consume(t, p, page(t, time.Duration(i)*15*time.Second,
			"DCGM_FI_DEV_GPU_UTIL{"+labels+"} 50\nDCGM_FI_DEV_XID_ERRORS{"+labels+"} "+s.last+"\n"+s.counts+"\n"))
	}
	rm := devices(last)["GPU-a"][0]
	for code, n := range map[int64]float64{13: 2, 79: 1, 31: 1} {
		assert.InDelta(t, n, value(t, rm, mn.NvidiaGPUXIDErrors, map[string]any{mn.AttrNvidiaGPUXID: code}), 0, "xid %d", code)
	}
	assert.Equal(t, map[string]int64{"xid_count": 4}, counts(t, tel, "otelcol_processor_from_dcgm_exporter_xid_events", "source"))
}

// TestCountersHeld: counters served as gauges (as dcgm-exporter's counters
// file may declare them) or as counters are cumulative either way: one
// that goes down bumps the device's epoch, so every counter of that device
// restarts with a new start time, never a negative increase.
func TestCountersHeld(t *testing.T) {
	p, tel := newTestTranslator(t, defaultConfig())
	pages := []string{
		"# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL gauge\nDCGM_FI_DEV_ECC_DBE_VOL_TOTAL{" + labels + "} 5\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" + labels + "} 1000000\n",
		"# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL gauge\nDCGM_FI_DEV_ECC_DBE_VOL_TOTAL{" + labels + "} 7\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" + labels + "} 1500000\n",
		// A GPU reset: the ECC count restarts; energy does not go down.
		"# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL gauge\nDCGM_FI_DEV_ECC_DBE_VOL_TOTAL{" + labels + "} 1\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" + labels + "} 1600000\n",
		"# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL gauge\nDCGM_FI_DEV_ECC_DBE_VOL_TOTAL{" + labels + "} 2\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" + labels + "} 1700000\n",
	}
	var outs []pmetric.ResourceMetrics
	for i, pg := range pages {
		outs = append(outs, devices(consume(t, p, page(t, time.Duration(i)*15*time.Second, pg)))["GPU-a"][0])
	}
	dbe := map[string]any{"error.type": "uncorrected"}
	for i, want := range []struct {
		errors, joules float64
		start          time.Duration
	}{{0, 0, 0}, {2, 500, 0}, {0, 0, 30 * time.Second}, {1, 100, 30 * time.Second}} {
		dp, ok := point(outs[i], mn.HWErrors, dbe)
		require.True(t, ok)
		assert.Equal(t, int64(want.errors), dp.IntValue(), "page %d", i+1)
		assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(want.start)), dp.StartTimestamp(), "page %d", i+1)
		assert.InDelta(t, want.joules, value(t, outs[i], mn.HWEnergy, nil), 1e-9, "page %d", i+1)
	}
	metadatatest.AssertEqualProcessorFromDcgmExporterCounterResets(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// TestRecoveryAction: the recovery action under DCGM 4.6's name
// (DCGM_FI_DEV_GPU_RECOVERY_ACTION, as the dcgm receiver's dcgm_exporter
// naming and dcgm-exporters built on DCGM 4.6 serve it) and under 4.5's
// (DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION) becomes the receiver's int gauge
// nvidia.gpu.recovery_action; a GPU served without it has none, and a
// value no driver reports (DCGM's int64 NOT_SUPPORTED blank, had an
// exporter passed it on) is refused, not emitted as an action.
func TestRecoveryAction(t *testing.T) {
	p, tel := newTestTranslator(t, defaultConfig())
	gpu := func(i int) string {
		return `gpu="` + strconv.Itoa(i) + `",UUID="GPU-` + "abcde"[i:i+1] + `",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"`
	}
	out := consume(t, p, page(t, 0, strings.Join([]string{
		"DCGM_FI_DEV_GPU_UTIL{" + gpu(0) + "} 50",
		"DCGM_FI_DEV_GPU_RECOVERY_ACTION{" + gpu(0) + "} 2",
		"DCGM_FI_DEV_GPU_UTIL{" + gpu(1) + "} 50",
		"DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION{" + gpu(1) + "} 1",
		"DCGM_FI_DEV_GPU_UTIL{" + gpu(2) + "} 50",
		"DCGM_FI_DEV_GPU_RECOVERY_ACTION{" + gpu(2) + "} 0",
		"DCGM_FI_DEV_GPU_UTIL{" + gpu(3) + "} 50",
		"DCGM_FI_DEV_GPU_UTIL{" + gpu(4) + "} 50",
		"DCGM_FI_DEV_GPU_RECOVERY_ACTION{" + gpu(4) + "} 9223372036854775794",
	}, "\n")))
	byID := devices(out)
	require.Len(t, byID, 5)
	for id, want := range map[string]int64{"GPU-a": 2, "GPU-b": 1, "GPU-c": 0} {
		dp, ok := point(byID[id][0], mn.NvidiaGPURecoveryAction, nil)
		require.True(t, ok, id)
		require.Equal(t, pmetric.NumberDataPointValueTypeInt, dp.ValueType(), id)
		assert.Equal(t, want, dp.IntValue(), id)
	}
	for _, id := range []string{"GPU-d", "GPU-e"} {
		_, ok := point(byID[id][0], mn.NvidiaGPURecoveryAction, nil)
		assert.False(t, ok, "%s has no recovery action", id)
	}
	assert.Equal(t, map[string]int64{reasonOutOfRange: 1}, counts(t, tel, "otelcol_processor_from_dcgm_exporter_rejected_data_points", "reason"))
}

// TestRefused: staleness markers are dropped silently; every other point
// that cannot be translated is counted by reason, and none gives a verdict.
func TestRefused(t *testing.T) {
	p, tel := newTestTranslator(t, defaultConfig())
	md := page(t, 0, strings.Join([]string{
		"DCGM_FI_DEV_GPU_UTIL{" + labels + "} 50",
		"DCGM_FI_DEV_GPU_TEMP{" + labels + "} NaN",                                       // not_finite
		"DCGM_FI_DEV_POWER_USAGE{" + labels + "} +Inf",                                   // not_finite
		"DCGM_FI_DEV_FB_USED{" + labels + "} -1",                                         // out_of_range
		"DCGM_FI_PROF_SM_ACTIVE{" + labels + "} 1.5",                                     // out_of_range
		"DCGM_FI_DEV_XID_ERRORS{" + labels + "} 7.5",                                     // out_of_range
		`DCGM_FI_DEV_GPU_UTIL{gpu="1",modelName="x",Hostname="node-1"} 50`,               // no_uuid
		`DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-a",Hostname="node-2"} 50`,                // uuid_on_two_hosts
		`DCGM_FI_DEV_GPU_UTIL{gpu="x",UUID="GPU-b",Hostname="node-1"} 50`,                // bad_label
		`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",GPU_I_ID="one",Hostname="node-1"} 50`, // bad_label
		`DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",Hostname="node-1",xid="-3"} 1`,   // bad_label
		"DCGM_FI_DEV_MEM_CLOCK{" + labels + "} 1000",                                     // marked stale below
		`DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",Hostname="node-1"} 50`,                // too_many_gpus (max_gpus 1)
		`DCGM_FI_DEV_GPU_UTIL{gpu="3",uuid="GPU-d",Hostname="node-1"} 50`,                // too_many_gpus (max_gpus 1)
	}, "\n"))
	dps := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < dps.Len(); i++ {
		if m := dps.At(i); m.Name() == "DCGM_FI_DEV_MEM_CLOCK" {
			dp := m.Gauge().DataPoints().At(0)
			dp.SetDoubleValue(math.Float64frombits(0x7ff0000000000002)) // Prometheus' staleness NaN
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
		}
	}
	// A histogram under a DCGM name, a future and an out-of-order point.
	m := dps.AppendEmpty()
	m.SetName("DCGM_FI_DEV_SM_CLOCK")
	m.SetEmptyHistogram().DataPoints().AppendEmpty().SetTimestamp(pcommon.NewTimestampFromTime(t0))
	future := dps.AppendEmpty()
	future.SetName("DCGM_FI_DEV_SM_CLOCK")
	fdp := future.SetEmptyGauge().DataPoints().AppendEmpty()
	fdp.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(24 * time.Hour)))
	fdp.SetDoubleValue(1)
	fdp.Attributes().PutStr("UUID", "GPU-a")

	p.cfg.MaxGPUs = 1 // GPU-a; GPU-b is refused for its label before it is tracked
	out := consume(t, p, md)
	rm := devices(out)["GPU-a"]
	require.Len(t, rm, 1)
	assert.InDelta(t, 0.5, value(t, rm[0], mn.HWGPUUtilization, map[string]any{"hw.gpu.task": "general"}), 0)
	for _, name := range []string{mn.HWTemperature, mn.HWPower, mn.HWGPUMemoryUsage, mn.NvidiaGPUSMActive, mn.NvidiaGPUClockFrequency} {
		_, ok := point(rm[0], name, nil)
		assert.False(t, ok, "%s from a refused point", name)
	}
	// GPU-a again, at the same time: out of order.
	late := page(t, 0, "DCGM_FI_DEV_GPU_UTIL{"+labels+"} 50")
	consume(t, p, late)

	assert.Equal(t, map[string]int64{
		reasonNotFinite: 2, reasonOutOfRange: 3, reasonNoUUID: 1, reasonTwoHosts: 1, reasonBadLabel: 3,
		reasonTooMany: 2, reasonWrongType: 1, reasonFuture: 1, reasonOutOfOrder: 1,
	}, counts(t, tel, "otelcol_processor_from_dcgm_exporter_rejected_data_points", "reason"))
}

// TestOneSamplePerDeviceAndScrape: two scrapes in one batch (a batch
// processor before this one) are two samples per device, in time order;
// a device missing from a scrape gets nothing for it.
func TestOneSamplePerDeviceAndScrape(t *testing.T) {
	p, _ := newTestTranslator(t, defaultConfig())
	md := page(t, 15*time.Second, "DCGM_FI_DEV_GPU_UTIL{"+labels+"} 70\nDCGM_FI_PROF_SM_ACTIVE{"+labels+"} 0.7\n")
	page(t, 0, "DCGM_FI_DEV_GPU_UTIL{"+labels+"} 60\nDCGM_FI_PROF_SM_ACTIVE{"+labels+"} 0.6\n"+
		`DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",Hostname="node-1"} 10`).ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	out := devices(consume(t, p, md))
	require.Len(t, out["GPU-a"], 2)
	require.Len(t, out["GPU-b"], 1)
	for i, want := range []float64{0.6, 0.7} {
		dp, ok := point(out["GPU-a"][i], mn.NvidiaGPUSMActive, nil)
		require.True(t, ok)
		assert.InDelta(t, want, dp.DoubleValue(), 1e-12)
		assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(time.Duration(i)*15*time.Second)), dp.Timestamp())
	}
	// The next scrape has no GPU-b: nothing for it, no stale value.
	out = devices(consume(t, p, page(t, 30*time.Second, "DCGM_FI_DEV_GPU_UTIL{"+labels+"} 70\n")))
	assert.Len(t, out, 1)
	assert.NotContains(t, out, "GPU-b")
}

// TestPassThroughAndKeepOriginals: what the processor does not translate
// passes through unchanged; the translated series are dropped unless
// keep_originals is set.
func TestPassThroughAndKeepOriginals(t *testing.T) {
	text := "DCGM_FI_DEV_GPU_UTIL{" + labels + "} 70\nDCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{" + labels + "} 5\nvllm_num_requests_waiting 3\n"
	for _, keep := range []bool{false, true} {
		cfg := defaultConfig()
		cfg.KeepOriginals = keep
		p, _ := newTestTranslator(t, cfg)
		out := consume(t, p, page(t, 0, text))
		got := names(pmetricOf(out.ResourceMetrics().At(0)))
		want := []string{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "vllm_num_requests_waiting", "up"}
		if keep {
			want = slices.Insert(want, 0, "DCGM_FI_DEV_GPU_UTIL")
		}
		assert.Equal(t, want, got[:len(want)], "keep_originals %v", keep)
		assert.Len(t, devices(out), 1)
	}
	// A batch without dcgm-exporter's series is untouched.
	p, _ := newTestTranslator(t, defaultConfig())
	in := page(t, 0, "vllm_num_requests_waiting 3\n")
	want := pmetric.NewMetrics()
	in.CopyTo(want)
	require.NoError(t, pmetrictest.CompareMetrics(want, consume(t, p, in)))
}

// TestPods: dcgm-exporter's pod labels become the k8s.* attributes; where
// Kubernetes service discovery gave the target labels of the same names,
// dcgm-exporter's are the exported_ ones; a GPU shared by pods (served
// once per pod) goes to the first pod by name.
func TestPods(t *testing.T) {
	p, _ := newTestTranslator(t, defaultConfig())
	out := devices(consume(t, p, page(t, 0, strings.Join([]string{
		`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="n",namespace="ml",pod="train-1",container="main"} 50`,
		`DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",Hostname="n",namespace="gpu-operator",pod="nvidia-dcgm-exporter-x",exported_namespace="ml",exported_pod="train-2",exported_container="main"} 50`,
		`DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",Hostname="n",namespace="web",pod="infer-b",container="srv"} 50`,
		`DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",Hostname="n",namespace="web",pod="infer-a",container="srv"} 50`,
	}, "\n"))))
	for id, want := range map[string][2]string{"GPU-a": {"ml", "train-1"}, "GPU-b": {"ml", "train-2"}, "GPU-c": {"web", "infer-a"}} {
		require.Len(t, out[id], 1, id)
		a := out[id][0].Resource().Attributes()
		ns, _ := a.Get("k8s.namespace.name")
		pod, _ := a.Get("k8s.pod.name")
		assert.Equal(t, want, [2]string{ns.Str(), pod.Str()}, id)
	}
}

// TestTTL: a device not scraped for gpu_ttl is forgotten; it may then
// come back on another host, and its last XID is history again.
func TestTTL(t *testing.T) {
	cfg := defaultConfig()
	cfg.GPUTTL = time.Minute
	p, tel := newTestTranslator(t, cfg)
	consume(t, p, page(t, 0, "DCGM_FI_DEV_XID_ERRORS{"+labels+"} 48\n"))
	consume(t, p, page(t, 2*time.Minute, `DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",Hostname="node-1"} 10`))
	require.Len(t, p.devices, 1)
	out := consume(t, p, page(t, 3*time.Minute, `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="node-9"} 10`+"\n"+
		`DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-a",Hostname="node-9"} 79`))
	rm := devices(out)["GPU-a"]
	require.Len(t, rm, 1)
	_, hasXID := point(rm[0], mn.NvidiaGPUXIDErrors, nil)
	assert.False(t, hasXID)
	_, err := tel.GetMetric("otelcol_processor_from_dcgm_exporter_rejected_data_points")
	assert.Error(t, err)
}

// TestFactory: the processor made by its factory, in a pipeline.
func TestFactory(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	f := NewFactory()
	pr, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, pr.Start(context.Background(), componenttest.NewNopHost()))
	require.True(t, pr.Capabilities().MutatesData)
	require.NoError(t, pr.ConsumeMetrics(context.Background(), scrape(t, capturedPage(t, 1), time.Now(), time.Now())))
	require.NoError(t, pr.Shutdown(context.Background()))
	require.Len(t, sink.AllMetrics(), 1)
	assert.Len(t, devices(sink.AllMetrics()[0]), 5, "4 GPUs, one served as its MIG instance, with its board's power on its own")
}
