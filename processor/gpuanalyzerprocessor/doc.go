//go:generate go tool mdatagen metadata.yaml

// Package gpuanalyzerprocessor turns raw GPU telemetry into answers: each
// GPU's bottleneck class, stragglers among the GPUs of one job, and alerts
// with `for` durations and hysteresis. It reads the dcgm receiver's metrics
// and adds its verdicts as metrics on each GPU's resource.
package gpuanalyzerprocessor
