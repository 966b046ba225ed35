package legacynames

import "github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"

// The deprecated-name table: each renamed metric and attribute, and the name
// it had before. These are the only spellings of the old names in code.

// metrics maps each renamed metric to its old name. otelgpu.process.count
// had two: nvidia.gpu.process.count on a per-process resource (this table)
// and amd.gpu.process.count, a gauge, on an AMD GPU's own resource
// (OldAMDProcessCount).
var metrics = map[string]string{
	metricnames.OTelGPUAlerts:                       "nvidia.gpu.alerts",
	metricnames.OTelGPUBottleneckState:              "nvidia.gpu.bottleneck.state",
	metricnames.OTelGPUBottleneckTime:               "nvidia.gpu.bottleneck.time",
	metricnames.OTelGPUCost:                         "nvidia.gpu.cost",
	metricnames.OTelGPUStragglerScore:               "nvidia.gpu.straggler.score",
	metricnames.OTelGPUStragglerState:               "nvidia.gpu.straggler.state",
	metricnames.OTelGPUTime:                         "nvidia.gpu.time",
	metricnames.OTelGPUProcessCount:                 "nvidia.gpu.process.count",
	metricnames.OTelGPUProcessMemoryUsage:           "nvidia.gpu.process.memory.usage",
	metricnames.OTelGPUProcessMemoryCopyUtilization: "nvidia.gpu.process.memory_copy.utilization",
	metricnames.OTelGPUProcessUtilization:           "nvidia.gpu.process.utilization",
}

// OldAMDProcessCount is otelgpu.process.count's old name on an AMD GPU's or
// partition's own resource, where it was a gauge.
const OldAMDProcessCount = "amd.gpu.process.count"

// attributes maps each renamed data point attribute to its old name.
var attributes = map[string]string{
	metricnames.AttrOTelGPUBottleneckClass:    "nvidia.gpu.bottleneck.class",
	metricnames.AttrOTelGPUBottleneckEvidence: "nvidia.gpu.bottleneck.evidence",
	metricnames.AttrOTelGPUBottleneckHint:     "nvidia.gpu.bottleneck.hint",
	metricnames.AttrOTelGPUBottleneckScope:    "nvidia.gpu.bottleneck.scope",
	metricnames.AttrOTelGPUUsageState:         "nvidia.gpu.usage.state",
}

// OldProcessOwner is the old name of the resource attribute
// otelgpu.process.owner, which marks a per-process resource.
const OldProcessOwner = "nvidia.gpu.process.owner"

// Metric returns the old name of a renamed metric.
func Metric(name string) (string, bool) {
	old, ok := metrics[name]
	return old, ok
}

// Attribute returns the old name of a renamed attribute.
func Attribute(name string) (string, bool) {
	old, ok := attributes[name]
	return old, ok
}

// Renames lists every renamed metric and attribute as old → new pairs, the
// resource attribute and the AMD count included, for documentation and tests.
func Renames() map[string]string {
	out := make(map[string]string, len(metrics)+len(attributes)+2)
	for n, o := range metrics {
		out[o] = n
	}
	for n, o := range attributes {
		out[o] = n
	}
	out[OldAMDProcessCount] = metricnames.OTelGPUProcessCount
	out[OldProcessOwner] = metricnames.AttrOTelGPUProcessOwner
	return out
}
