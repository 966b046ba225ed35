package dcgmbackend

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// healthStandin loads the stand-in DCGM with state and returns the path of
// its health log.
func healthStandin(t *testing.T, state dcgmstandin.State) string {
	t.Helper()
	dir := t.TempDir()
	path, log := filepath.Join(dir, "state"), filepath.Join(dir, "health.log")
	require.NoError(t, state.Write(path))
	t.Setenv("STANDIN_DCGM_STATE", path)
	t.Setenv(dcgmstandin.HealthLogEnv, log)
	require.NoError(t, dcgmstandin.Load("../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", t.TempDir()))
	return log
}

// collectHealth connects a backend that watches health, collects once at
// now and returns each whole GPU's health by index, and the MIG
// instances' samples.
func collectHealth(t *testing.T, b *Backend, now time.Time) (map[int]gpu.Health, []gpu.Sample) {
	t.Helper()
	samples, err := b.Collect(context.Background(), now, time.Minute)
	require.NoError(t, err)
	out := map[int]gpu.Health{}
	var migs []gpu.Sample
	for _, s := range samples {
		if s.Device.MIG != nil {
			migs = append(migs, s)
			continue
		}
		out[s.Device.Index] = s.Health
	}
	return out, migs
}

func connectHealth(t *testing.T) *Backend {
	t.Helper()
	b := New(Options{Address: "localhost:5555", Health: true, HealthEvery: 30 * time.Second})
	require.NoError(t, b.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b
}

// Each subsystem's incident reaches the right GPU and subsystem with the
// right result, through the real go-dcgm code; every other GPU and
// subsystem passes. An NVSwitch's incident is every GPU's.
func TestHealthPerSystem(t *testing.T) {
	const gpus = 4
	all := uint16(1<<gpu.NumHealthSystems - 1)
	for _, c := range []struct {
		name   string
		inc    dcgmstandin.Incident
		system gpu.HealthSystem
		result gpu.HealthResult
	}{
		{"pcie warning", dcgmstandin.Incident{Entity: 1, System: uint(dcgm.DCGM_HEALTH_WATCH_PCIE), Result: 10}, gpu.HealthPCIe, gpu.HealthWarn},
		{"memory failure", dcgmstandin.Incident{Entity: 2, System: uint(dcgm.DCGM_HEALTH_WATCH_MEM), Result: 20}, gpu.HealthMemory, gpu.HealthFail},
		{"inforom warning", dcgmstandin.Incident{Entity: 3, System: uint(dcgm.DCGM_HEALTH_WATCH_INFOROM), Result: 10}, gpu.HealthInfoROM, gpu.HealthWarn},
		{"thermal warning", dcgmstandin.Incident{Entity: 0, System: uint(dcgm.DCGM_HEALTH_WATCH_THERMAL), Result: 10}, gpu.HealthThermal, gpu.HealthWarn},
		{"power warning", dcgmstandin.Incident{Entity: 1, System: uint(dcgm.DCGM_HEALTH_WATCH_POWER), Result: 10}, gpu.HealthPower, gpu.HealthWarn},
		{"nvlink failure", dcgmstandin.Incident{Entity: 2, System: uint(dcgm.DCGM_HEALTH_WATCH_NVLINK), Result: 20}, gpu.HealthNVLink, gpu.HealthFail},
		{"driver failure", dcgmstandin.Incident{Entity: 3, System: uint(dcgm.DCGM_HEALTH_WATCH_DRIVER), Result: 20}, gpu.HealthDriver, gpu.HealthFail},
		{"nvswitch fatal", dcgmstandin.Incident{Entity: 1, Switch: true, System: uint(dcgm.DCGM_HEALTH_WATCH_NVSWITCH_FATAL), Result: 20}, gpu.HealthNVSwitchFatal, gpu.HealthFail},
		{"nvswitch non-fatal", dcgmstandin.Incident{Entity: 0, Switch: true, System: uint(dcgm.DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL), Result: 10}, gpu.HealthNVSwitchNonFatal, gpu.HealthWarn},
	} {
		t.Run(c.name, func(t *testing.T) {
			healthStandin(t, dcgmstandin.State{GPUs: gpus, Switches: 2, Connected: true, Health: []dcgmstandin.Incident{c.inc}})
			b := connectHealth(t)
			got, _ := collectHealth(t, b, time.Now())
			require.Len(t, got, gpus)
			for i := range gpus {
				var want gpu.Health
				want.Watched = all
				if c.inc.Switch || c.inc.Entity == i {
					want.Result[c.system] = c.result
				}
				require.Equal(t, want, got[i], "GPU %d", i)
			}
		})
	}
}

// The watches are set once per connection, on the whole GPUs and the
// switches, for every subsystem; the check runs every HealthEvery and its
// answer holds between checks; a GPU's worst incident per subsystem wins;
// a MIG instance carries none (its GPU does). Without switches, the
// NVSwitch subsystems are not watched.
func TestHealthCadence(t *testing.T) {
	pcie := uint(dcgm.DCGM_HEALTH_WATCH_PCIE)
	log := healthStandin(t, dcgmstandin.State{GPUs: 2, MIG: true, Connected: true, Health: []dcgmstandin.Incident{
		{Entity: 0, System: pcie, Result: 10}, {Entity: 0, System: pcie, Result: 20}, {Entity: 0, System: pcie, Result: 10},
		{Entity: 7, System: pcie, Result: 20}, // not a GPU of the group
	}})
	b := connectHealth(t)
	t0 := time.Now()
	got, migs := collectHealth(t, b, t0)
	want := uint16(1<<gpu.NumHealthSystems-1) &^ nvswitchSystems
	require.Equal(t, want, got[0].Watched, "no switches: no NVSwitch watches")
	require.Equal(t, gpu.HealthFail, got[0].Result[gpu.HealthPCIe], "the worst of the GPU's incidents")
	require.Equal(t, gpu.Health{Watched: want}, got[1])
	require.Len(t, migs, 1)
	require.Zero(t, migs[0].Health, "a MIG instance's health is its GPU's")

	_, _ = collectHealth(t, b, t0.Add(10*time.Second))
	got, _ = collectHealth(t, b, t0.Add(29*time.Second))
	require.Equal(t, gpu.HealthFail, got[0].Result[gpu.HealthPCIe], "the answer holds until the next check")
	_, _ = collectHealth(t, b, t0.Add(30*time.Second))
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, "healthset fff 0 1\nhealthcheck 3\nhealthcheck 3\n", string(raw),
		"watches set once, on the whole GPUs; checked at 0 s and 30 s")

	// Without the health module the GPUs are read as ever, without health.
	healthStandin(t, dcgmstandin.State{GPUs: 2, Connected: true, NoHealth: true})
	b2 := New(Options{Address: "localhost:5555", Health: true})
	require.NoError(t, b.Close())
	require.NoError(t, b2.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b2.Close()) })
	got, _ = collectHealth(t, b2, time.Now())
	require.Len(t, got, 2)
	require.Zero(t, got[0])
}

// A backend not asked for health sets no watches.
func TestHealthOff(t *testing.T) {
	log := healthStandin(t, dcgmstandin.State{GPUs: 2, Switches: 1, Connected: true})
	b := New(Options{Address: "localhost:5555"})
	require.NoError(t, b.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	got, _ := collectHealth(t, b, time.Now())
	require.Zero(t, got[0])
	_, err := os.Stat(log)
	require.True(t, os.IsNotExist(err), "no health call")
}

func TestHealthSystemBits(t *testing.T) {
	for _, s := range gpu.HealthSystems() {
		got, ok := healthSystem(dcgm.HealthSystem(1) << s)
		require.True(t, ok)
		require.Equal(t, s, got)
		parsed, ok := gpu.ParseHealthSystem(s.String())
		require.True(t, ok)
		require.Equal(t, s, parsed)
	}
	for _, bad := range []dcgm.HealthSystem{0, 3, dcgm.DCGM_HEALTH_WATCH_CONNECTX, dcgm.DCGM_HEALTH_WATCH_IMEX, dcgm.DCGM_HEALTH_WATCH_ALL} {
		_, ok := healthSystem(bad)
		require.False(t, ok, "%#x", uint(bad))
	}
	require.Equal(t, dcgm.DCGM_HEALTH_WATCH_NVSWITCH_FATAL, dcgm.HealthSystem(1)<<gpu.HealthNVSwitchFatal)
	require.Equal(t, dcgm.DCGM_HEALTH_WATCH_MEM, dcgm.HealthSystem(1)<<gpu.HealthMemory)
	require.Equal(t, dcgm.DCGM_HEALTH_WATCH_INFOROM, dcgm.HealthSystem(1)<<gpu.HealthInfoROM)
	require.Equal(t, dcgm.DCGM_HEALTH_WATCH_DRIVER, dcgm.HealthSystem(1)<<gpu.HealthDriver)
}
