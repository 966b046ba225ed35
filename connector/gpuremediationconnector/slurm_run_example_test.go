package gpuremediationconnector

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// TestSlurmRunExample runs make run-slurm's remediation
// (examples/slurm/config.yaml: its simulated fleet and gpu_remediation
// settings) for 90 s of data on a host without Slurm (scontrol missing):
// the XID 79 at 40 s on gpu-a-2/gpu7 gets one dry-run decision to drain
// gpu-a-2, whose log line gives the reason Slurm would get, naming the
// incident; the node it could not read does not hold the decision back,
// and no other node is acted on. TestE2EMakeRunSlurm sees the same line
// from the built collector.
func TestSlurmRunExample(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "examples", "slurm", "config.yaml"))
	require.NoError(t, err)
	rf := dcgmreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig()
	sub, err := cm.Sub("receivers::dcgm")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(rcfg))
	require.NoError(t, confmap.Validate(rcfg))
	fl, err := simulated.New(rcfg.(*dcgmreceiver.Config).Simulated)
	require.NoError(t, err)
	rcv, err := rf.CreateMetrics(context.Background(), receivertest.NewNopSettings(rf.Type()), rf.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	mapper, ok := rcv.(offline.Receiver)
	require.True(t, ok, "the dcgm receiver maps samples for replay")

	cfg := createDefaultConfig()
	sub, err = cm.Sub("connectors::gpu_remediation")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.DryRun, "make run-slurm never writes to a cluster")
	require.True(t, cfg.Slurm.Enabled)
	cfg.Slurm.Scontrol = filepath.Join(t.TempDir(), "scontrol") // no Slurm here, whatever the host has

	core, logs := observer.New(zapcore.InfoLevel)
	set := connectortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r, err := newRemediator(cfg, set)
	require.NoError(t, err)
	r.api, err = r.newAPI(context.Background())
	require.NoError(t, err)
	r.logsOut = &consumertest.LogsSink{}

	t0 := time.Unix(1767225600, 0)
	var out []offline.Decision // each tick's
	for k := range 90 {
		now := t0.Add(time.Duration(k) * time.Second)
		samples, err := fl.Collect(context.Background(), now, time.Second)
		require.NoError(t, err)
		require.NoError(t, r.consume(context.Background(), mapper.Map(samples)))
		r.tick(context.Background(), now)
		out = append(out, r.out...)
	}

	var drains []offline.Decision
	for _, d := range out {
		require.Equal(t, "gpu-a-2", d.Node, "only the faulted GPU's node: %+v", d)
		require.True(t, d.DryRun)
		if d.Reason == reasonPolicy {
			drains = append(drains, d)
		}
	}
	require.Len(t, drains, 1, "decisions: %+v", out)
	require.Equal(t, "xid_79", drains[0].Fault)
	require.False(t, drains[0].Time.Before(t0.Add(40*time.Second)), "not before the fault")

	lines := logs.FilterMessage("GPU remediation decision").All()
	require.NotEmpty(t, lines)
	why, _ := lines[len(lines)-1].ContextMap()["why"].(string)
	t.Logf("at %v: %s", drains[0].Time.Sub(t0), why)
	require.Contains(t, why, "would act (dry run) on gpu-a-2")
	require.Contains(t, why, `Slurm: state=DRAIN reason="otelcol-gpu incident `+drains[0].Incident+`: xid_79 on `)
	require.True(t, strings.HasPrefix(drains[0].UUID, "GPU-"), drains[0].UUID)
	require.Contains(t, why, drains[0].UUID)
	require.NotEmpty(t, logs.FilterMessage("Dry run: node not read, deciding without its state").All(), "the log says Slurm was not read")
}
