package gpunodereceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// simulatedSource emits a simulated fleet's nodes as the real sources emit
// a host's: each host's pods, its pressure and its NIC ports, under the
// fleet's host names and pod UIDs. Its data time is the wall clock at the
// scrape, as the dcgm receiver's simulated backend's is, and its fleet's
// clock starts at the first scrape, as that backend's does: the two
// receivers, started together, show the same phases and faults.
type simulatedSource struct {
	cfg *Config
	fl  *simulated.Fleet
}

func newSimulatedSource(env sourceEnv) (source, error) {
	fl, err := simulated.New(*env.cfg.Simulated)
	if err != nil {
		return nil, err
	}
	if env.cfg.Simulated.Trace != "" {
		env.logger.Info("a replayed trace has no node evidence: the simulated source emits nothing", zap.String("trace", env.cfg.Simulated.Trace))
	}
	return &simulatedSource{cfg: env.cfg, fl: fl}, nil
}

func (s *simulatedSource) scrape(now pcommon.Timestamp, mb *metadata.MetricsBuilder) error {
	emitNodes(now, mb, s.cfg, s.fl.Node(now.AsTime()))
	return nil
}

// emitNodes records and emits hosts' evidence as the real sources emit a
// host's, each part where its section is enabled: the simulated fleet's,
// and a replayed trace's (offline.NodeReceiver).
func emitNodes(now pcommon.Timestamp, mb *metadata.MetricsBuilder, cfg *Config, nodes []simulated.NodeEvidence) {
	rb := mb.NewResourceBuilder()
	for _, n := range nodes {
		if cfg.Cgroup.Enabled {
			for i := range n.Pods {
				recordPod(now, mb, &n.Pods[i].Stats)
				rb.SetHostName(n.Host)
				rb.SetK8sPodUID(n.Pods[i].UID)
				if pod := &n.Pods[i]; pod.Name != "" {
					rb.SetK8sNamespaceName(pod.Namespace)
					rb.SetK8sPodName(pod.Name)
				}
				mb.EmitForResource(metadata.WithResource(rb.Emit()))
			}
		}
		if cfg.Pressure.Enabled {
			recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceCPU, n.Pressure.CPU)
			recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceMemory, n.Pressure.Memory)
			recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceIo, n.Pressure.IO)
			rb.SetHostName(n.Host)
			mb.EmitForResource(metadata.WithResource(rb.Emit()))
		}
		if cfg.Network.Enabled {
			for i := range n.NICs {
				emitPort(now, mb, rb, n.Host, &n.NICs[i].Port, n.NICs[i].Rail)
			}
		}
	}
}
