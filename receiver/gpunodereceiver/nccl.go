package gpunodereceiver

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/ncclinspector"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// ncclSource emits one resource per rank's GPU and communicator: the latest
// bus bandwidth and time NCCL Inspector wrote for each collective. A job
// turns Inspector on (NCCL_PROFILER_PLUGIN, NCCL_INSPECTOR_ENABLE=1,
// NCCL_INSPECTOR_DUMP_DIR on a hostPath the agent reads, and
// NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS for figures while it
// runs); the files are what it writes there.
type ncclSource struct {
	host   string
	logger *zap.Logger
	once   *onceLog
	reader *ncclinspector.Reader
}

// ncclMaxAge drops a rank's figures this long after its last dump: the
// plugin leaves its files behind when a job ends.
const ncclMaxAge = 5 * time.Minute

func newNCCLSource(env sourceEnv) (source, error) {
	if !env.cfg.NCCL.Enabled {
		return nil, nil //nolint:nilnil // disabled: no source, no error
	}
	patterns := make([]string, len(env.cfg.NCCL.Paths))
	for i, p := range env.cfg.NCCL.Paths {
		patterns[i] = hostPath(env.cfg, p)
	}
	return &ncclSource{host: env.host, logger: env.logger, once: newOnceLog(env.logger),
		reader: ncclinspector.NewReader(patterns, ncclMaxAge)}, nil
}

func (s *ncclSource) scrape(now pcommon.Timestamp, mb *metadata.MetricsBuilder) error {
	if err := s.reader.Read(); err != nil {
		// Files that did not parse: the others' figures are still sent.
		s.once.warn("read", "some NCCL Inspector files were not read", err)
	} else {
		s.once.seen("read")
	}
	rb := mb.NewResourceBuilder()
	for _, a := range s.reader.Latest() {
		if !a.HasBusBandwidth && !a.HasExecTime {
			continue
		}
		if a.HasBusBandwidth {
			mb.RecordOtelgpuNcclBusBandwidthDataPoint(now, a.BusBandwidth, a.Collective)
		}
		if a.HasExecTime {
			mb.RecordOtelgpuNcclCollectiveDurationDataPoint(now, a.ExecTime, a.Collective)
		}
		host := a.Node
		if host == "" {
			host = s.host
		}
		rb.SetHostName(host)
		rb.SetHwName(rankName(&a.Sample))
		rb.SetOtelgpuNcclCommunicator(a.Communicator)
		mb.EmitForResource(metadata.WithResource(rb.Emit()))
	}
	s.once.endRound()
	return nil
}

// rankName names the rank's GPU as the dcgm receiver does (gpu3), or the
// rank where Inspector names no GPU (its JSON records).
func rankName(sm *ncclinspector.Sample) string {
	switch {
	case sm.GPU >= 0:
		return "gpu" + strconv.Itoa(sm.GPU)
	case sm.Rank >= 0:
		return "rank" + strconv.Itoa(sm.Rank)
	}
	return "unknown-" + sm.CommID
}
