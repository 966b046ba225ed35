//go:generate go tool mdatagen metadata.yaml

// Package gpuanalyzerprocessor turns raw GPU telemetry into answers: each
// GPU's bottleneck class with the next step to take, stragglers among the
// GPUs of one job, and alerts with `for` durations and hysteresis, memory
// leaks included. It reads the dcgm receiver's metrics and adds its verdicts
// as metrics on each GPU's resource; with a storage extension its state
// survives restarts.
package gpuanalyzerprocessor
