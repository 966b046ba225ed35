//go:generate go tool mdatagen metadata.yaml

// Package gpuautoscaleconnector scales Kubernetes workloads on what their
// GPUs actually do. It reads GPU metrics (SM activity, the analyzer's
// verdicts, anything with the workload's resource attributes), computes
// desired replicas with the HorizontalPodAutoscaler's algorithm or a
// predictive variant, writes them through the scale subresource, and emits
// its decisions as metrics and log records.
package gpuautoscaleconnector
