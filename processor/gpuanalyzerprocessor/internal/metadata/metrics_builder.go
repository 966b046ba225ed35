package metadata

// mdatagen writes the MetricsBuilder's constructor for receivers, scrapers
// and connectors only (open-telemetry/opentelemetry-collector#12403: a
// processor's output is usually its input). The analyzer adds metrics of its
// own to each GPU's resource, so it uses the generated builder with the three
// things below, written by hand; everything else is generated from
// metadata.yaml.

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
)

// NewMetricsBuilder is the constructor mdatagen writes for a receiver.
func NewMetricsBuilder(mbc MetricsBuilderConfig, settings processor.Settings, options ...MetricBuilderOption) *MetricsBuilder {
	mb := &MetricsBuilder{
		config:                       mbc,
		startTime:                    pcommon.NewTimestampFromTime(time.Now()),
		metricsBuffer:                pmetric.NewMetrics(),
		buildInfo:                    settings.BuildInfo,
		metricHwStatus:               newMetricHwStatus(mbc.Metrics.HwStatus),
		metricOtelgpuAlerts:          newMetricOtelgpuAlerts(mbc.Metrics.OtelgpuAlerts),
		metricOtelgpuBottleneckState: newMetricOtelgpuBottleneckState(mbc.Metrics.OtelgpuBottleneckState),
		metricOtelgpuBottleneckTime:  newMetricOtelgpuBottleneckTime(mbc.Metrics.OtelgpuBottleneckTime),
		metricOtelgpuCost:            newMetricOtelgpuCost(mbc.Metrics.OtelgpuCost),
		metricOtelgpuStragglerScore:  newMetricOtelgpuStragglerScore(mbc.Metrics.OtelgpuStragglerScore),
		metricOtelgpuStragglerState:  newMetricOtelgpuStragglerState(mbc.Metrics.OtelgpuStragglerState),
		metricOtelgpuTime:            newMetricOtelgpuTime(mbc.Metrics.OtelgpuTime),
	}
	for _, op := range options {
		op.apply(mb)
	}
	return mb
}

// SetStartTime sets the start time of the data points recorded next. The
// builder has one for all its metrics, a receiver's start; the analyzer's
// counters each start at their own time, and its gauges have none (0).
func (mb *MetricsBuilder) SetStartTime(start pcommon.Timestamp) { mb.startTime = start }

// EmitTo moves the metrics recorded since the last call to the end of ms,
// which is a scope of the GPU's own resource: the generated EmitForResource
// would build a new resource. The order is the one the analyzer has always
// sent, the verdict first, not EmitForResource's alphabetical one.
func (mb *MetricsBuilder) EmitTo(ms pmetric.MetricSlice) {
	mb.metricOtelgpuBottleneckState.emit(ms)
	mb.metricOtelgpuBottleneckTime.emit(ms)
	mb.metricOtelgpuTime.emit(ms)
	mb.metricOtelgpuCost.emit(ms)
	mb.metricOtelgpuStragglerState.emit(ms)
	mb.metricOtelgpuStragglerScore.emit(ms)
	mb.metricOtelgpuAlerts.emit(ms)
	mb.metricHwStatus.emit(ms)
}
