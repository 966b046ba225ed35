package dcgmreceiver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

const (
	gpu0 = "GPU-5ca1ab1e-0000-4000-8000-000000000000"
	gpu1 = "GPU-5ca1ab1e-0000-4000-8000-000000000001"
	gpu2 = "GPU-5ca1ab1e-0000-4000-8000-000000000002"
	mig0 = "MIG-5ca1ab1e-0000-4000-9000-000000000000"
)

// standin builds and loads the stand-in libdcgm.so.4 and returns the path
// of its state file, initialised to st.
func standin(t *testing.T, st dcgmstandin.State) string {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	require.NoError(t, st.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
	require.NoError(t, dcgmstandin.Load("testdata/standin-dcgm/libdcgm.c", t.TempDir()))
	return state
}

func newDCGMScraper(t *testing.T) (*gpuScraper, *statusHost, *observer.ObservedLogs) {
	t.Helper()
	return newDCGMScraperWith(t, func(*Config) {})
}

// newDCGMScraperWith is newDCGMScraper with the configuration changed by
// mutate first.
func newDCGMScraperWith(t *testing.T, mutate func(*Config)) (*gpuScraper, *statusHost, *observer.ObservedLogs) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendDCGM
	cfg.Endpoint = "localhost:5555"
	cfg.Hostname = "gpu-node-7"
	cfg.CollectionInterval = time.Second
	cfg.Reconnect = ReconnectConfig{InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond}
	mutate(cfg)
	core, logs := observer.New(zap.DebugLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	s := newGPUScraper(cfg, set)
	host := &statusHost{}
	require.NoError(t, s.start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	return s, host, logs
}

// TestDCGMStandin runs the real go-dcgm code path against the stand-in
// library: canned GPUs, one without profiling support, a MIG instance,
// XID events, a dropped connection that recovers with a driver reload, and
// values too old to report.
func TestDCGMStandin(t *testing.T) {
	st := dcgmstandin.State{GPUs: 3, NoProf: []int{2}, MIG: true, Connected: true, Epoch: 1}
	state := standin(t, st)
	s, host, logs := newDCGMScraper(t)
	ctx := context.Background()

	md, err := s.scrape(ctx)
	require.NoError(t, err)
	devs := byDevice(t, md)
	require.Len(t, devs, 4, "3 GPUs and 1 MIG instance")
	require.Contains(t, devs, gpu0)
	require.Contains(t, devs, gpu1)
	require.Contains(t, devs, gpu2)
	require.Contains(t, devs, mig0)

	attrs := devs[gpu1].Resource().Attributes().AsRaw()
	require.Equal(t, "NVIDIA H100 80GB HBM3", attrs["hw.model"])
	require.Equal(t, "550.54.15", attrs["hw.driver_version"])
	require.Equal(t, "00000000:28:00.0", attrs["nvidia.gpu.pci_bus_id"])
	require.Equal(t, int64(1), attrs["nvidia.gpu.index"])
	require.Equal(t, "NVIDIA", attrs["hw.vendor"])
	require.Equal(t, "gpu-node-7", attrs["host.name"])

	migAttrs := devs[mig0].Resource().Attributes().AsRaw()
	require.Equal(t, gpu0, migAttrs["nvidia.gpu.mig.parent_id"])
	require.Equal(t, "1.0", migAttrs["nvidia.gpu.mig.instance"])
	require.Equal(t, "1g.10gb", migAttrs["nvidia.gpu.mig.profile"], "its memory's share of the H100's")

	// Canned values, converted to OpenTelemetry units.
	require.InDelta(t, 0.91, num(point(t, devs[gpu1], "hw.gpu.utilization", map[string]any{"hw.gpu.task": "general"})), 1e-9)
	require.InDelta(t, 301.5, num(point(t, devs[gpu1], "hw.power", nil)), 1e-9)
	require.InDelta(t, 700, num(point(t, devs[gpu1], "nvidia.gpu.power.limit", nil)), 1e-9)
	require.InDelta(t, 70, num(point(t, devs[gpu2], "nvidia.gpu.power.limit", nil)), 1e-9, "the T4's limit")
	require.InDelta(t, 1980e6, num(point(t, devs[gpu1], "nvidia.gpu.clock.frequency", map[string]any{"nvidia.gpu.clock": "sm"})), 1)
	require.Equal(t, int64(41559)<<20, point(t, devs[gpu1], "hw.gpu.memory.usage", nil).IntValue())
	require.InDelta(t, 0.52, num(point(t, devs[gpu1], "nvidia.gpu.sm.active", nil)), 1e-9)
	require.InDelta(t, 0.55, num(point(t, devs[gpu1], "nvidia.gpu.dram.active", nil)), 1e-9)

	// The T4 has no profiling: no SM activity at all, the documented
	// fallbacks for engine and DRAM activity, and no blank memory temperature.
	_, hasSM := metric(devs[gpu2], "nvidia.gpu.sm.active")
	require.False(t, hasSM, "SM activity must not be invented for a GPU without profiling")
	require.InDelta(t, 0.92, num(point(t, devs[gpu2], "nvidia.gpu.graphics_engine.active", nil)), 1e-9)
	require.InDelta(t, 0.40, num(point(t, devs[gpu2], "nvidia.gpu.dram.active", nil)), 1e-9)
	_, hasMemTemp := metric(devs[gpu2], "nvidia.gpu.memory.temperature")
	require.False(t, hasMemTemp, "a DCGM blank value must not be emitted")
	warned := logs.FilterMessage("DCGM profiling field unsupported on this GPU").FilterField(zap.String("field", "DCGM_FI_PROF_SM_ACTIVE"))
	require.Equal(t, 1, warned.Len(), "one warning per unsupported field and model")

	// Counters: the first sample starts each counter at zero.
	e0 := point(t, devs[gpu0], "hw.energy", nil)
	require.Zero(t, e0.DoubleValue())
	firstStart := e0.StartTimestamp()
	time.Sleep(5 * time.Millisecond)
	md, err = s.scrape(ctx)
	require.NoError(t, err)
	e1 := point(t, byDevice(t, md)[gpu0], "hw.energy", nil)
	require.Equal(t, firstStart, e1.StartTimestamp())
	require.InDelta(t, 1000, e1.DoubleValue(), 1e-9, "1 kJ per read in the stand-in")
	io := point(t, byDevice(t, md)[gpu0], "hw.gpu.io", map[string]any{"network.io.direction": "receive"})
	require.Positive(t, io.IntValue(), "PCIe rates are integrated into bytes")

	// An XID event is counted once, however often it is scraped after.
	st.XIDs = []dcgmstandin.XID{{GPU: 1, Code: 79, TSMicros: time.Now().UnixMicro()}}
	require.NoError(t, st.Write(state))
	time.Sleep(2 * time.Millisecond)
	for range 2 {
		md, err = s.scrape(ctx)
		require.NoError(t, err)
		xid := point(t, byDevice(t, md)[gpu1], "nvidia.gpu.xid.errors", map[string]any{"nvidia.gpu.xid": int64(79)})
		require.Equal(t, int64(1), xid.IntValue())
	}

	// nv-hostengine goes away: no data at all, never a stale value, and a
	// recoverable status.
	st.Connected = false
	require.NoError(t, st.Write(state))
	for range 3 {
		md, err = s.scrape(ctx)
		require.NoError(t, err, "an outage is reported as a status, not as a scrape error on every interval")
		require.Zero(t, md.DataPointCount(), "nothing may be emitted during the outage")
		time.Sleep(2 * time.Millisecond)
	}
	require.Equal(t, componentstatus.StatusRecoverableError, host.last().Status())
	require.ErrorContains(t, host.last().Err(), "dcgm backend")

	// It comes back after a driver reload: counters restart with a new start
	// time, from zero, never negative.
	st.Connected, st.Epoch = true, 2
	require.NoError(t, st.Write(state))
	require.Eventually(t, func() bool {
		md, err = s.scrape(ctx)
		return err == nil && md.DataPointCount() > 0
	}, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, componentstatus.StatusOK, host.last().Status())
	e2 := point(t, byDevice(t, md)[gpu0], "hw.energy", nil)
	require.Greater(t, e2.StartTimestamp(), firstStart)
	require.Zero(t, e2.DoubleValue())
	time.Sleep(2 * time.Millisecond)
	md, err = s.scrape(ctx)
	require.NoError(t, err)
	e3 := point(t, byDevice(t, md)[gpu0], "hw.energy", nil)
	require.Equal(t, e2.StartTimestamp(), e3.StartTimestamp())
	require.InDelta(t, 1000, e3.DoubleValue(), 1e-9)
	_, hasXID := metric(byDevice(t, md)[gpu1], "nvidia.gpu.xid.errors")
	require.False(t, hasXID, "events from before the reconnect are not counted again")

	// Values older than one collection interval are not reported.
	st.Stale = true
	require.NoError(t, st.Write(state))
	md, err = s.scrape(ctx)
	require.NoError(t, err)
	require.Zero(t, md.DataPointCount(), "stale values must be dropped")
}

// TestDCGMStandinRecoveryAction reads DCGM_FI_DEV_GPU_RECOVERY_ACTION
// (field 1523) through the DCGM backend: GPU 1 needs a node reboot (2),
// GPU 0 needs nothing (0, a point all the same), and GPU 2's driver
// predates the field, so DCGM holds its NOT_SUPPORTED blank under a status
// of OK: no point for GPU 2, in either naming, and its other metrics as
// usual.
func TestDCGMStandinRecoveryAction(t *testing.T) {
	standin(t, dcgmstandin.State{GPUs: 3, Connected: true, Epoch: 1, Recovery: []dcgmstandin.Recovery{
		{GPU: 1, Action: 2}, {GPU: 2, Action: dcgmstandin.RecoveryUnsupported},
	}})
	t.Run(NamingOTel, func(t *testing.T) {
		s, _, _ := newDCGMScraper(t)
		md, err := s.scrape(context.Background())
		require.NoError(t, err)
		devs := byDevice(t, md)
		require.Len(t, devs, 3)
		dp := point(t, devs[gpu1], "nvidia.gpu.recovery_action", nil)
		require.Equal(t, pmetric.NumberDataPointValueTypeInt, dp.ValueType())
		require.Equal(t, int64(2), dp.IntValue(), "node reboot")
		require.Equal(t, int64(0), point(t, devs[gpu0], "nvidia.gpu.recovery_action", nil).IntValue(), "none")
		_, has := metric(devs[gpu2], "nvidia.gpu.recovery_action")
		require.False(t, has, "DCGM's blank must not be emitted as an action")
		require.InDelta(t, 52, num(point(t, devs[gpu2], "hw.temperature", nil)), 1e-9)
	})
	t.Run(NamingDCGMExporter, func(t *testing.T) {
		s, _, _ := newDCGMScraperWith(t, func(c *Config) { c.Naming = NamingDCGMExporter })
		md, err := s.scrape(context.Background())
		require.NoError(t, err)
		got := map[string]float64{}
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			m, ok := metric(rms.At(i), "DCGM_FI_DEV_GPU_RECOVERY_ACTION")
			if !ok {
				continue
			}
			dp := m.Gauge().DataPoints().At(0)
			uuid, _ := dp.Attributes().Get("UUID")
			got[uuid.Str()] = dp.DoubleValue()
		}
		require.Equal(t, map[string]float64{gpu0: 0, gpu1: 2}, got)
	})
}

// TestDCGMStandinEmbedded starts DCGM's embedded host engine instead of
// connecting to nv-hostengine.
func TestDCGMStandinEmbedded(t *testing.T) {
	standin(t, dcgmstandin.State{GPUs: 2, Connected: true, Epoch: 1})
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendDCGM
	cfg.Embedded = true
	cfg.Endpoint = "" // not needed, and not validated, in embedded mode
	require.NoError(t, confmap.Validate(cfg))
	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	ctx := context.Background()
	require.NoError(t, s.start(ctx, &statusHost{}))
	defer func() { require.NoError(t, s.shutdown(ctx)) }()
	md, err := s.scrape(ctx)
	require.NoError(t, err)
	require.Len(t, byDevice(t, md), 2)
}

// TestDCGMStandinFullHost reads a full host engine, 32 GPUs: more values
// than one read of the latest values takes (256), so the backend splits
// its reads by entity; every GPU must get its own values.
func TestDCGMStandinFullHost(t *testing.T) {
	standin(t, dcgmstandin.State{GPUs: 32, NoProf: []int{31}, Connected: true, Epoch: 1})
	s, _, _ := newDCGMScraper(t)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	devs := byDevice(t, md)
	require.Len(t, devs, 32)
	for gpu := range 32 {
		uuid := fmt.Sprintf("GPU-5ca1ab1e-0000-4000-8000-%012d", gpu)
		require.Contains(t, devs, uuid)
		// The stand-in's temperature and power are 50 + GPU and 300.5 + GPU.
		require.InDelta(t, 50+gpu, num(point(t, devs[uuid], "hw.temperature", nil)), 1e-9, uuid)
		require.InDelta(t, 300.5+float64(gpu), num(point(t, devs[uuid], "hw.power", nil)), 1e-9, uuid)
		_, hasSM := metric(devs[uuid], "nvidia.gpu.sm.active")
		require.Equal(t, gpu != 31, hasSM, "profiling fields only where supported (%s)", uuid)
	}
}

// TestDCGMStandinMIGFollowed: a MIG instance created on GPU 0 while the
// receiver runs appears under its MIG UUID once the instances are listed
// again (every 30 s; each scrape here is a minute apart), with its parent,
// instance IDs and profile; destroyed, it is gone at the next listing. The
// GPUs' counters go on meanwhile.
func TestDCGMStandinMIGFollowed(t *testing.T) {
	st := dcgmstandin.State{GPUs: 2, Connected: true, Epoch: 1}
	state := standin(t, st)
	s, _, logs := newDCGMScraperWith(t, func(c *Config) {
		c.CollectionInterval = time.Hour // the stand-in's values are fresh at any clock
	})
	ctx := context.Background()
	clock := time.Now()
	s.now = func() time.Time { return clock }
	scrape := func() map[string]pmetric.ResourceMetrics {
		clock = clock.Add(time.Minute)
		md, err := s.scrape(ctx)
		require.NoError(t, err)
		return byDevice(t, md)
	}
	devs := scrape()
	require.Len(t, devs, 2)
	energyStart := point(t, devs[gpu0], "hw.energy", nil).StartTimestamp()

	st.MIG = true
	require.NoError(t, st.Write(state))
	devs = scrape()
	require.Len(t, devs, 3, "2 GPUs and the new instance")
	attrs := devs[mig0].Resource().Attributes().AsRaw()
	require.Equal(t, gpu0, attrs["nvidia.gpu.mig.parent_id"])
	require.Equal(t, "1.0", attrs["nvidia.gpu.mig.instance"])
	require.Equal(t, "1g.10gb", attrs["nvidia.gpu.mig.profile"])
	require.Equal(t, int64(2728)<<20, point(t, devs[mig0], "hw.gpu.memory.usage", nil).IntValue(), "the instance's own memory")
	require.Equal(t, energyStart, point(t, devs[gpu0], "hw.energy", nil).StartTimestamp(), "the GPU's counters go on")
	require.Equal(t, 1, logs.FilterMessage("MIG instances changed; following them").Len())

	devs = scrape()
	require.Len(t, devs, 3)
	require.Equal(t, 1, logs.FilterMessage("MIG instances changed; following them").Len(), "no change, no new discovery")

	st.MIG = false
	require.NoError(t, st.Write(state))
	devs = scrape()
	require.Len(t, devs, 2)
	require.NotContains(t, devs, mig0)
}
