package gpuanalyzerprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestDCGMHealth: the receiver's nvidia.gpu.health, as its mapper writes
// it, sets the GPU's hw.status through internal/gpuhealth: a power
// warning (a GPU at its cap) leaves it ok, a memory warning (rows pending
// remapping) degrades it, a memory failure fails it, and it is ok again
// once the check passes. The answer holds across samples that lack it.
func TestDCGMHealth(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, _ := newProcessor(t, everySample(), set)
	var all gpu.Health
	for _, s := range gpu.HealthSystems() {
		all.Watch(s)
	}
	at := func(sys gpu.HealthSystem, r gpu.HealthResult) gpu.Health {
		h := all
		h.Report(sys, r)
		return h
	}
	script := map[int]gpu.Health{
		0:  all,
		5:  at(gpu.HealthPower, gpu.HealthWarn),
		10: at(gpu.HealthMemory, gpu.HealthWarn),
		// 11 to 19: no health read; the last answer holds.
		20: at(gpu.HealthMemory, gpu.HealthFail),
		30: all,
	}
	const target = "gpu-node-0/gpu1"
	var h gpu.Health
	for i := range 40 {
		samples, err := f.fl.Collect(context.Background(), f.t0.Add(time.Duration(i)*time.Second), time.Second)
		require.NoError(t, err)
		if next, ok := script[i]; ok {
			h = next
		} else if i > 10 && i < 20 {
			h = gpu.Health{}
		}
		for j := range samples {
			if d := samples[j].Device; d.Host+"/"+d.Name() == target {
				samples[j].Health = h
			}
		}
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.rcv.Map(samples)))
	}
	var changes strings.Builder
	for _, e := range logs.FilterMessage("GPU health changed").All() {
		m := e.ContextMap()
		if fmt.Sprint(m["host.name"], "/", m["hw.name"]) != target {
			continue // the fleet's own faults
		}
		fmt.Fprintf(&changes, "%s>%s(%v) ", m["from"], m["to"], m["reason"])
	}
	require.Equal(t, "ok>degraded(dcgm_health_memory) degraded>failed(dcgm_health_memory) failed>ok(<nil>) ", changes.String())
}
