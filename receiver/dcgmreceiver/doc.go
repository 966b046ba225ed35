//go:generate go tool mdatagen metadata.yaml

// Package dcgmreceiver reads NVIDIA GPU telemetry through DCGM, NVML or a
// simulated fleet and emits it as OTLP metrics named after the OpenTelemetry
// hardware conventions.
package dcgmreceiver
