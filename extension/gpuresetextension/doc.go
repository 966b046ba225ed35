//go:generate go tool mdatagen metadata.yaml

// Package gpuresetextension is the node-local GPU reset actor: it watches
// its own node for the reset request the gpu_remediation connector sets
// once a GPU's pods are drained, checks that each GPU is idle and not
// partitioned, resets it with a command (nvidia-smi --gpu-reset by
// default; NVML has no reset call), checks that it came back with its UUID
// and, with DCGM, passes a short diagnostic, and answers on the node in one
// write. A failed or impossible reset is answered too, so that the
// connector falls back to a reboot. It acts only when listed in
// service::extensions.
package gpuresetextension
