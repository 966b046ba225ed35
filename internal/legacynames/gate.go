// Package legacynames keeps, for one deprecation period, the names
// otelcol-gpu gave its own metrics before they moved to the otelgpu.*
// namespace: the gpu_analyzer processor's outputs (nvidia.gpu.bottleneck.*,
// nvidia.gpu.straggler.*, nvidia.gpu.cost, nvidia.gpu.time,
// nvidia.gpu.alerts) and the dcgm receiver's per-process series
// (nvidia.gpu.process.*, amd.gpu.process.count). While the feature gate
// otelgpu.emitNvidiaNames is enabled, each renamed metric is sent twice: under
// its new name with the new attribute names, and under its old name with the
// old attribute names. Both components register nothing of their own: the one
// gate here turns the whole rename's old names on or off.
//
// The same gate keeps the receiver's vendor names for what the semantic
// conventions now name: nvidia.gpu.memory.temperature and
// amd.gpu.temperature (hw.temperature with hw.sensor_location), and
// nvidia.gpu.mig.parent_id (hw.parent).
//
// The namespace is the product's own because bare gpu.* is used by Datadog,
// OpenLIT and Beyla with other meanings and may be claimed by the
// OpenTelemetry semantic conventions, and hw.gpu.* belongs to those
// conventions: a name after the product collides with none of them.
package legacynames

import "go.opentelemetry.io/collector/featuregate"

// GateID is the feature gate's id: --feature-gates=-otelgpu.emitNvidiaNames
// turns the deprecated names off.
const GateID = "otelgpu.emitNvidiaNames"

// Gate is enabled by default (beta) in this release: every renamed metric is
// sent under its old name as well. It will be made stable (off, the old names
// gone) and then removed, as the OpenTelemetry Collector deprecates names.
var Gate = featuregate.GlobalRegistry().MustRegister(
	GateID,
	featuregate.StageBeta,
	featuregate.WithRegisterDescription("When enabled, the gpu_analyzer processor's and the dcgm receiver's "+
		"renamed metrics are also sent under their deprecated names (nvidia.gpu.bottleneck.*, nvidia.gpu.straggler.*, "+
		"nvidia.gpu.cost, nvidia.gpu.time, nvidia.gpu.alerts, nvidia.gpu.process.*, amd.gpu.process.count) beside the "+
		"otelgpu.* names, and the dcgm receiver sends the vendor duplicates of the conventions' names "+
		"(nvidia.gpu.memory.temperature, amd.gpu.temperature, nvidia.gpu.mig.parent_id). The deprecated names will be removed."),
	featuregate.WithRegisterFromVersion("v0.1.0"),
)

// Enabled reports whether the deprecated names are sent.
func Enabled() bool { return Gate.IsEnabled() }
