//go:generate go tool mdatagen metadata.yaml

// Package gpunodereceiver is the gpu_node receiver: on a GPU node it reads
// what the dcgm receiver does not - each pod's cgroup (CPU time, limit and
// throttling, memory) and the pressure (PSI) of the pods and of the node -
// so that a GPU waiting on its input can be traced to a starved pod or
// node. It needs the host's /sys/fs/cgroup and /proc, not a GPU library.
package gpunodereceiver
