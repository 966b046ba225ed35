// Package ncclinspector reads what NCCL says about its own collectives on a
// node: the files of NCCL's Inspector profiler plugin (NVIDIA/nccl
// plugins/profiler/inspector, NCCL 2.29 and later), the text the ncclras
// client prints, and the NET/IB completion errors of NCCL_DEBUG. It imports
// nothing of the collector: the gpu_node receiver (CONTRACT-36) turns its
// values into metrics, and the analyzer reads the RAS and IB evidence.
//
// What the plugin writes, from its README and sources at NVIDIA/nccl
// 5067397c (2026-06-11):
//
//   - It runs when NCCL_PROFILER_PLUGIN names libnccl-profiler-inspector.so
//     and NCCL_INSPECTOR_ENABLE=1.
//   - Files go to NCCL_INSPECTOR_DUMP_DIR; unset, to nccl-inspector-<slurm
//     job id> or nccl-inspector-unknown-jobid under the working directory.
//   - NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS sets how often its
//     dump thread writes; -1 (the default) writes only at communicator
//     teardown, so a live job shows nothing unless it is set.
//   - JSON (the default): one file per process, <hostname>-pid<pid>.log,
//     appended for the life of the process, one compact JSON object per
//     line (see json.go for the record forms).
//   - NCCL_INSPECTOR_PROM_DUMP=1: Prometheus text files meant for node
//     exporter's textfile collector, one per GPU,
//     nccl_inspector_metrics_<device UUID>.prom, truncated and rewritten
//     every interval (at least 30 s in this mode) with the means over the
//     interval (see prom.go). NCCL_INSPECTOR_OTEL_EXPORT=1 sends OTLP
//     instead and, set with PROM_DUMP, wins: no files are then written.
//
// Units. Inspector's "GB/s" is decimal: it divides bytes by 1.0E9 and by
// the seconds taken (inspectorComputeOpBw, the same formula as
// nccl-tests), so BusBandwidth here is that figure x 1e9 bytes/s. Its
// message_size buckets ("4-5GB") are binary, powers of 1024.
package ncclinspector

import (
	"strconv"
	"strings"
	"time"
)

// Sample is one figure Inspector reported for one communicator on one GPU
// (Prometheus form) or one rank (JSON form).
type Sample struct {
	// Node is the host that ran the rank: the Prometheus `node` label or
	// the JSON metadata's hostname.
	Node string
	// GPU is the CUDA device index from `gpu="GPU<N>"`; -1 when not given
	// (the JSON records do not name the device) or not of that form.
	GPU int
	// Communicator is the communicator's name (`comm_name`); in JSON
	// records without a name, its hash id ("0x7f8c496ae9f661").
	Communicator string
	// CommID is the communicator's hash id where given (JSON only).
	CommID string
	// NRanks and NNodes size the communicator; 0 when not given.
	NRanks, NNodes int
	// Collective names the operation: the collective (AllReduce, ...) or,
	// with P2P set, the point-to-point operation (Send, Recv).
	Collective string
	P2P        bool
	// MessageSize is Inspector's bucket label ("4-5GB", binary units);
	// MessageBytes is the exact size in JSON records and the bucket's lower
	// bound in Prometheus files.
	MessageSize  string
	MessageBytes uint64
	// AlgoProto is the algorithm and protocol ("Ring_ll"); empty when not
	// given (P2P, and JSON before the records carried them).
	AlgoProto string
	// BusBandwidth is in bytes/s and ExecTime in seconds, each valid only
	// when its Has flag is set: NaN, infinities and (for bandwidth) zero
	// are what the plugin writes when it has no figure, and none of them
	// is a measurement.
	BusBandwidth    float64
	HasBusBandwidth bool
	ExecTime        float64
	HasExecTime     bool
	// Rank is the rank in the communicator (JSON header); -1 when not given.
	Rank int
	// Time is when Inspector dumped the figure: dump_timestamp_us in JSON,
	// the sample timestamp in a Prometheus line; zero when not given (the
	// Reader then uses the file's modification time).
	Time time.Time
}

// Key is what the receiver emits one gauge point per: a communicator's
// operation on one GPU, or on one rank where the GPU is not known.
type Key struct {
	Node         string
	GPU          int
	Rank         int
	Communicator string
	Collective   string
	P2P          bool
}

// Key returns the sample's aggregation key.
func (s *Sample) Key() Key {
	return Key{Node: s.Node, GPU: s.GPU, Rank: s.Rank, Communicator: s.Communicator, Collective: s.Collective, P2P: s.P2P}
}

// gpuIndex reads Inspector's "GPU<N>" label (the CUDA device ordinal); -1
// for anything else, such as the plugin's "unknown".
func gpuIndex(label string) int {
	rest, ok := strings.CutPrefix(label, "GPU")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || rest[0] == '+' {
		return -1
	}
	return n
}

// gbsToBytes converts Inspector's decimal GB/s to bytes/s.
const gbsToBytes = 1e9

// sizeUnits are Inspector's message_size units, each 1024 times the last.
var sizeUnits = []string{"B", "KB", "MB", "GB", "TB"}

// sizeBucket labels a message size the way the plugin's Prometheus output
// does, so that JSON and Prometheus samples carry comparable buckets:
// divide by 1024 while at least 1024 (up to TB), then floor..floor+1.
func sizeBucket(n uint64) string {
	if n == 0 {
		return "0B"
	}
	v, u := float64(n), 0
	for v >= 1024 && u < len(sizeUnits)-1 {
		v /= 1024
		u++
	}
	lo := uint64(v)
	return strconv.FormatUint(lo, 10) + "-" + strconv.FormatUint(lo+1, 10) + sizeUnits[u]
}

// bucketLowerBound reads a label of sizeBucket's form back to its lower
// bound in bytes; 0 when it is not of that form.
func bucketLowerBound(label string) uint64 {
	lo, rest, ok := strings.Cut(label, "-")
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(lo, 10, 64)
	if err != nil {
		return 0
	}
	i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if i <= 0 {
		return 0
	}
	for u, name := range sizeUnits {
		if rest[i:] == name {
			for range u {
				if n > (1<<64-1)/1024 {
					return 0
				}
				n *= 1024
			}
			return n
		}
	}
	return 0
}
