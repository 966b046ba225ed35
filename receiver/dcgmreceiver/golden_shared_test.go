package dcgmreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// TestGoldenSharedGPUs pins the attributes of shared GPUs, in both naming
// modes: a GPU time-sliced between three pods (the GPU's resource and one
// per pod, marked otelgpu.process.owner), a GPU split into three MIG
// instances (each under its MIG UUID, with its parent, GI.CI and profile),
// and a GPU held through a DRA claim (k8s.resourceclaim.name).
func TestGoldenSharedGPUs(t *testing.T) {
	legacynamestest.SetGate(t, false) // the golden file shows the new names only
	cfg := simulated.Config{
		Seed: 9, Hosts: 1, GPUsPerHost: 3, HostPrefix: "node-", Models: []string{"h100"},
		Workloads: []simulated.Workload{
			{Name: "nb", Kind: simulated.TimeSliced, Namespace: "research", GPUs: "0/0", Pods: 3,
				Phases: []simulated.Phase{{Kind: simulated.InputBound}}},
			{Name: "mig", Kind: simulated.MIG, Namespace: "inference", GPUs: "0/1", Instances: 3,
				Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
			{Name: "claim", Kind: simulated.Serving, Namespace: "serving", GPUs: "0/2", DRA: true,
				Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
		},
	}
	for _, naming := range []string{NamingOTel, NamingDCGMExporter} {
		t.Run(naming, func(t *testing.T) {
			fl, err := simulated.New(cfg)
			require.NoError(t, err)
			fl.EnableProcesses()
			m := newMapper(metadata.NewDefaultMetricsBuilderConfig(), naming, receivertest.NewNopSettings(metadata.Type))
			t0 := time.Unix(1767225600, 0)
			var got pmetric.Metrics
			for k := range 2 { // per-process utilization needs an interval
				samples, err := fl.Collect(context.Background(), t0.Add(time.Duration(k)*10*time.Second), time.Second)
				require.NoError(t, err)
				for i := range samples {
					m.Append(&samples[i])
				}
				got = m.Emit()
			}
			path := filepath.Join("testdata", "golden", "shared-"+naming+".yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, path, got))
			}
			want, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
				pmetrictest.IgnoreMetricDataPointsOrder()))
		})
	}
}
