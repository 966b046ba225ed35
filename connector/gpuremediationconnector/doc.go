//go:generate go tool mdatagen metadata.yaml

// Package gpuremediationconnector takes broken GPUs out of service. It
// reads the faults GPU metrics carry (XIDs, uncorrectable ECC errors,
// row-remap failures, the gpu_analyzer's faulted verdict), maps each to a
// remediation with NVIDIA's XID catalogue as the default, and acts on the
// Kubernetes node in rising order: an Event, the GPUHealthy condition, a
// taint naming the GPU, cordon, drain through the Eviction API, and a
// reset or reboot request for a node agent. It defaults to dry run and
// stops itself when too many nodes are affected at once. Every decision,
// acted on or not, is a log record and a metric.
package gpuremediationconnector
