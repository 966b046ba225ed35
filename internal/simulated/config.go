// Package simulated is a deterministic fleet of NVIDIA and AMD GPUs for laptops,
// demos, tests and benchmarks. Given the same seed, configuration and
// sequence of collection times it produces the same values, shaped like
// DCGM's: workloads move through phases (compute-, memory-, input- and
// launch-bound, idle) and injected faults change the signals the way real
// faults do.
package simulated

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config describes the fleet.
type Config struct {
	// Seed makes UUIDs and noise reproducible.
	Seed int64 `mapstructure:"seed"`
	// Hosts and GPUsPerHost size the fleet.
	Hosts       int `mapstructure:"hosts"`
	GPUsPerHost int `mapstructure:"gpus_per_host"`
	// HostPrefix names hosts HostPrefix0, HostPrefix1, ...
	HostPrefix string `mapstructure:"host_prefix"`
	// Models is the GPU model of each host, cycled over hosts: h100, a100,
	// t4 or l40s (profiling, no NVLink), p100 (Pascal: no profiling
	// fields), or
	// AMD's mi300x or mi250 (read as AMD SMI reads them).
	Models []string `mapstructure:"models"`
	// Workloads place work on GPUs. A GPU that no workload selects is idle
	// and unallocated. Later workloads win over earlier ones.
	Workloads []Workload `mapstructure:"workloads"`
	// Faults are injected on top of the workloads.
	Faults []Fault `mapstructure:"faults"`
	// Networks are each host's NICs, cycled over hosts like Models (the
	// gpu_node receiver's simulated source reads them, with the pods'
	// cgroups and the node's pressure: node.go). Empty means by model:
	// an SXM/OAM board (NVLink or XGMI) has one 400 Gb/s InfiniBand port
	// per GPU on its PCIe switch, as an HGX H100 does; a PCIe card two
	// 100 Gb/s Ethernet NICs (one with a single GPU), each serving the
	// GPUs of its NUMA node.
	Networks []Network `mapstructure:"networks"`
	// Trace, if set, replays a recorded trace file (the format of the
	// analyzer's replay contract) in real time, looping, instead of
	// simulating: its GPUs, pods and values, with each loop a new epoch.
	// The fleet settings above are then ignored.
	Trace string `mapstructure:"trace"`
}

// Workload is a job or service running on a set of GPUs.
type Workload struct {
	// Name names the pods, and the job for kind training.
	Name string `mapstructure:"name"`
	// Kind is training (one pod per host, all its GPUs in one job),
	// serving (one pod per GPU, no job), time_sliced (Pods pods share
	// each GPU, as with the device plugin's time-slicing or MPS, each with
	// its own part of the GPU's load) or mig (each GPU split into
	// Instances MIG instances, one pod each, each with its own load) or
	// cpx (an mi300x in CPX mode: eight partitions, each its own device
	// with its own pod and load; the first carries the board's figures).
	Kind      string `mapstructure:"kind"`
	Namespace string `mapstructure:"namespace"`
	// GPUs selects GPUs as HOSTS/GPUS, each "*", "N" or "N-M" (indexes).
	GPUs string `mapstructure:"gpus"`
	// Phases repeat in order; each GPU's phases are offset by its index so
	// that a serving fleet shows every phase at once.
	Phases []Phase `mapstructure:"phases"`
	// Pods is, for kind time_sliced, how many pods share each GPU: 2 to
	// MaxSharingPods, default 3. Pod k of n does (n-k) parts of the
	// GPU's work out of 1+2+…+n: with 3, a half, a third and a sixth.
	Pods int `mapstructure:"pods"`
	// Instances is, for kind mig, how many MIG instances each GPU is
	// split into: 2 (3g.40gb), 3 (2g.20gb) or 7 (1g.10gb); an h100 or
	// a100 only.
	Instances int `mapstructure:"instances"`
	// DRA says the pods hold their GPUs through Dynamic Resource
	// Allocation: each through a ResourceClaim named after it (POD-gpu),
	// which the receiver reports as k8s.resourceclaim.name.
	DRA bool `mapstructure:"dra"`
	// CPULimit is each of the workload's pods' CPU limit, in CPUs (a
	// Kubernetes limit of 4 is 4); 0, the default, is no limit. A pod in
	// an input_bound phase wants more CPU than its limit and is throttled
	// in about a third of its CFS periods; in other phases it stays under
	// its limit and is throttled in under 3 %.
	CPULimit float64 `mapstructure:"cpu_limit"`
	// Slurm, when set, makes the workload a Slurm job instead of pods
	// (slurm.go): its GPUs carry slurm.* attributes and no k8s.* ones.
	Slurm *SlurmJob `mapstructure:"slurm"`
}

// Network is a host's NICs.
type Network struct {
	// Kind is infiniband (ports mlx5_0:1, mlx5_1:1, ..., on the GPUs'
	// PCIe switches) or ethernet (netdevs eth0, eth1, ..., by NUMA node).
	Kind string `mapstructure:"kind"`
	// RateGbps is each port's link rate in Gb/s; 0 means 400 for
	// infiniband, 100 for ethernet.
	RateGbps float64 `mapstructure:"rate_gbps"`
	// NICs is how many ports the host has, at most gpus_per_host; 0 means
	// one per GPU for infiniband, two (one for a single GPU) for
	// ethernet. The GPUs are split between them in order.
	NICs int `mapstructure:"nics"`
}

// Phase is a stretch of one behaviour.
type Phase struct {
	// Kind is compute_bound, memory_bound, communication_bound,
	// input_bound, launch_bound or idle.
	Kind     string        `mapstructure:"kind"`
	Duration time.Duration `mapstructure:"duration"`
}

// Fault is an injected failure.
type Fault struct {
	// Kind is thermal_throttle, slow_clock, slow_rank, ecc, xid,
	// memory_growth or fabric_errors. fabric_errors degrades the NIC of
	// each selected GPU's rail (symbol errors ~1,200/min and receive
	// errors ~250/min on InfiniBand, rx_errors and rx_dropped on
	// Ethernet, and one link_downed at its start) and makes the GPU a
	// slow rank, as slow_rank does: the job's straggler.
	Kind string `mapstructure:"kind"`
	// GPUs selects GPUs like Workload.GPUs.
	GPUs string `mapstructure:"gpus"`
	// Start is the time after the fleet starts when the fault begins.
	Start time.Duration `mapstructure:"start"`
	// Duration is how long it lasts; zero means until the end.
	Duration time.Duration `mapstructure:"duration"`
	// XID is the XID code of an xid fault (default 79). XID 154 (the
	// driver changed the GPU's recovery action) also sets the recovery
	// action to 1, GPU reset, for as long as the fault lasts.
	XID uint32 `mapstructure:"xid"`
	// Ramp is how long a memory_growth fault takes to fill the frame buffer
	// to 99% (default 5m). Growth is linear: a long ramp on a steady
	// workload is a memory leak.
	Ramp time.Duration `mapstructure:"ramp"`
}

// Phase and fault kinds.
const (
	ComputeBound = "compute_bound"
	MemoryBound  = "memory_bound"
	// CommunicationBound is collectives: NCCL kernels on a few SMs keep
	// GPU utilization near 100 % while NVLink carries the traffic.
	CommunicationBound = "communication_bound"
	InputBound         = "input_bound"
	LaunchBound        = "launch_bound"
	Idle               = "idle"

	ThermalThrottle = "thermal_throttle"
	SlowClock       = "slow_clock"
	SlowRank        = "slow_rank"
	ECC             = "ecc"
	XID             = "xid"
	MemoryGrowth    = "memory_growth"
	FabricErrors    = "fabric_errors"

	// Network kinds.
	InfiniBand = "infiniband"
	Ethernet   = "ethernet"
)

// DefaultConfig is 2 hosts of 8 H100s: host 0 runs one training job, host
// 1 serves inference through every phase, and a handful of faults appear
// within the first two minutes. The training job computes for 20 minutes,
// then waits on its collectives for 5; its GPU 7 leaks memory, filling in
// 90 minutes.
func DefaultConfig() Config {
	return Config{
		Seed:        1,
		Hosts:       2,
		GPUsPerHost: 8,
		HostPrefix:  "gpu-node-",
		Models:      []string{"h100"},
		Workloads: []Workload{
			{Name: "llm-pretrain", Kind: "training", Namespace: "ml", GPUs: "0/*",
				Phases: []Phase{{Kind: ComputeBound, Duration: 20 * time.Minute}, {Kind: CommunicationBound, Duration: 5 * time.Minute}}},
			{Name: "inference", Kind: "serving", Namespace: "serving", GPUs: "1/0-5",
				Phases: []Phase{
					{Kind: ComputeBound, Duration: 2 * time.Minute},
					{Kind: MemoryBound, Duration: 2 * time.Minute},
					{Kind: InputBound, Duration: 2 * time.Minute},
					{Kind: LaunchBound, Duration: 2 * time.Minute},
				}},
		},
		Faults: []Fault{
			{Kind: SlowRank, GPUs: "0/5", Start: 20 * time.Second},
			{Kind: ThermalThrottle, GPUs: "0/2", Start: 30 * time.Second},
			{Kind: MemoryGrowth, GPUs: "1/4", Start: 30 * time.Second, Ramp: 2 * time.Minute},
			{Kind: ECC, GPUs: "1/5", Start: 60 * time.Second},
			{Kind: XID, GPUs: "1/3", Start: 45 * time.Second, XID: 79},
			{Kind: MemoryGrowth, GPUs: "0/7", Start: 60 * time.Second, Ramp: 90 * time.Minute},
		},
	}
}

var models = map[string]model{
	"h100": {name: "NVIDIA H100 80GB HBM3", fbMiB: 81559, tdp: 700, idleW: 70, maxSM: 1980, memClock: 2619, profiling: true, nvlink: true},
	"a100": {name: "NVIDIA A100-SXM4-80GB", fbMiB: 81920, tdp: 400, idleW: 55, maxSM: 1410, memClock: 1593, profiling: true, nvlink: true},
	// Turing has the profiling fields (DCGM supports them from Volta on);
	// Pascal has none.
	"t4":   {name: "Tesla T4", fbMiB: 15360, tdp: 70, idleW: 10, maxSM: 1590, memClock: 5001, profiling: true},
	"p100": {name: "Tesla P100-PCIE-16GB", fbMiB: 16280, tdp: 250, idleW: 25, maxSM: 1328, memClock: 715},
	// Ada, a PCIe Gen4 card: 48 GB GDDR6, 350 W, no NVLink. Collectives
	// go over PCIe to the NIC (GPUDirect RDMA).
	"l40s": {name: "NVIDIA L40S", fbMiB: 46068, tdp: 350, idleW: 35, maxSM: 2520, memClock: 9001, profiling: true},
	// AMD Instinct, as AMD SMI names and measures them: no profiling
	// fields, XGMI rather than NVLink; the MI250 reports average power and
	// an edge temperature, the MI300X current power and no edge sensor.
	"mi300x": {name: "AMD Instinct MI300X OAM", fbMiB: 196592, tdp: 750, idleW: 140, maxSM: 2100, memClock: 1300, amd: true, nvlink: true},
	"mi250":  {name: "AMD Instinct MI250X / MI250", fbMiB: 65520, tdp: 560, idleW: 90, maxSM: 1700, memClock: 1600, amd: true, nvlink: true},
}

type model struct {
	name            string
	fbMiB           float64
	tdp, idleW      float64
	maxSM, memClock float64
	profiling       bool
	// nvlink is NVLink on NVIDIA's models, XGMI on AMD's.
	nvlink bool
	amd    bool
}

// The largest fleet simulated: the analyzer's default max_gpus.
const (
	MaxGPUs        = 100_000
	MaxGPUsPerHost = 64
)

// Workload kinds.
const (
	Training   = "training"
	Serving    = "serving"
	TimeSliced = "time_sliced"
	MIG        = "mig"
	CPX        = "cpx"
)

// CPXPartitions is how many partitions an MI300X shows in CPX mode: one
// per XCD.
const CPXPartitions = 8

// migProfiles are the profiles of a 7-slice, 80 GB GPU (H100, A100 80GB)
// split into 2, 3 or 7 equal instances.
var migProfiles = map[int]struct {
	slices int
	name   string
}{2: {3, "3g.40gb"}, 3: {2, "2g.20gb"}, 7: {1, "1g.10gb"}}

// MaxSharingPods is the most pods a time_sliced workload puts on one GPU:
// the replicas a device plugin's time-slicing would give a GPU are a
// handful, and MPS's Volta limit is 48 clients, more than a demo shows.
const MaxSharingPods = 16

// MaxCPULimit is the largest cpu_limit, in CPUs: more than a node has.
const MaxCPULimit = 1024

// MaxRateGbps is the largest network rate_gbps: 1.6 Tb/s, past today's
// fastest ports.
const MaxRateGbps = 1600

// DefaultSharingPods is a time_sliced workload's pods per GPU when Pods
// is not set.
const DefaultSharingPods = 3

// Check checks the fleet; errors name the key under `simulated`. It is not
// named Validate on purpose: the collector's config walk calls every nested
// Validate, and the dcgm receiver must check this block only when its
// backend is simulated.
func (c *Config) Check() error {
	if c.Trace != "" {
		return nil // the trace is read, and checked line by line, at start
	}
	var errs []error
	if c.Hosts <= 0 || c.GPUsPerHost <= 0 {
		errs = append(errs, fmt.Errorf("hosts and gpus_per_host must be positive, got %d and %d", c.Hosts, c.GPUsPerHost))
	} else if c.GPUsPerHost > MaxGPUsPerHost || c.Hosts > MaxGPUs/c.GPUsPerHost {
		// A fleet beyond this is a typo, and would take the memory of one.
		errs = append(errs, fmt.Errorf("hosts × gpus_per_host must be at most %d with at most %d GPUs per host, got %d × %d", MaxGPUs, MaxGPUsPerHost, c.Hosts, c.GPUsPerHost))
	}
	if len(c.Models) == 0 {
		errs = append(errs, errors.New("models must name at least one model (h100, a100, t4, l40s, p100, mi300x, mi250)"))
	}
	for i, m := range c.Models {
		if _, ok := models[strings.ToLower(m)]; !ok {
			errs = append(errs, fmt.Errorf("models[%d]: unknown model %q; want h100, a100, t4, l40s, p100, mi300x or mi250", i, m))
		}
	}
	for i, w := range c.Workloads {
		switch w.Kind {
		case Training, Serving:
			if w.Pods != 0 {
				errs = append(errs, fmt.Errorf("workloads[%d]::pods: only a time_sliced workload shares GPUs between pods", i))
			}
		case TimeSliced:
			if w.Pods != 0 && (w.Pods < 2 || w.Pods > MaxSharingPods) {
				errs = append(errs, fmt.Errorf("workloads[%d]::pods must be 2 to %d, got %d", i, MaxSharingPods, w.Pods))
			}
		case MIG:
			if _, ok := migProfiles[w.Instances]; !ok {
				errs = append(errs, fmt.Errorf("workloads[%d]::instances must be 2, 3 or 7, got %d", i, w.Instances))
			}
			if m, ok := c.selectedModel(w.GPUs, "h100", "a100"); !ok {
				errs = append(errs, fmt.Errorf("workloads[%d]: a mig workload needs h100 or a100 models, got %q", i, m))
			}
		case CPX:
			if m, ok := c.selectedModel(w.GPUs, "mi300x"); !ok {
				errs = append(errs, fmt.Errorf("workloads[%d]: a cpx workload needs mi300x models, got %q", i, m))
			}
		default:
			errs = append(errs, fmt.Errorf("workloads[%d]::kind: unknown kind %q; want training, serving, time_sliced, mig or cpx", i, w.Kind))
		}
		if !(w.CPULimit >= 0 && w.CPULimit <= MaxCPULimit) {
			errs = append(errs, fmt.Errorf("workloads[%d]::cpu_limit must be 0 (no limit) to %d CPUs, got %v", i, MaxCPULimit, w.CPULimit))
		}
		if w.Kind != MIG && w.Instances != 0 {
			errs = append(errs, fmt.Errorf("workloads[%d]::instances: only a mig workload splits GPUs into instances", i))
		}
		if w.Name == "" {
			errs = append(errs, fmt.Errorf("workloads[%d]::name must be set", i))
		}
		if w.Slurm != nil {
			errs = append(errs, w.Slurm.check(i, &w)...)
		}
		if _, err := parseSelector(w.GPUs); err != nil {
			errs = append(errs, fmt.Errorf("workloads[%d]::gpus: %w", i, err))
		}
		if len(w.Phases) == 0 {
			errs = append(errs, fmt.Errorf("workloads[%d]::phases must list at least one phase", i))
		}
		for j, p := range w.Phases {
			if _, ok := phases[p.Kind]; !ok {
				errs = append(errs, fmt.Errorf("workloads[%d]::phases[%d]::kind: unknown phase %q; want compute_bound, memory_bound, communication_bound, input_bound, launch_bound or idle", i, j, p.Kind))
			}
			if len(w.Phases) > 1 && p.Duration <= 0 {
				errs = append(errs, fmt.Errorf("workloads[%d]::phases[%d]::duration must be positive when a workload has several phases", i, j))
			}
		}
	}
	for i, flt := range c.Faults {
		switch flt.Kind {
		case ThermalThrottle, SlowClock, SlowRank, ECC, XID, MemoryGrowth, FabricErrors:
		default:
			errs = append(errs, fmt.Errorf("faults[%d]::kind: unknown fault %q; want thermal_throttle, slow_clock, slow_rank, ecc, xid, memory_growth or fabric_errors", i, flt.Kind))
		}
		if _, err := parseSelector(flt.GPUs); err != nil {
			errs = append(errs, fmt.Errorf("faults[%d]::gpus: %w", i, err))
		}
		if flt.Start < 0 || flt.Duration < 0 || flt.Ramp < 0 {
			errs = append(errs, fmt.Errorf("faults[%d]: start, duration and ramp must not be negative", i))
		}
	}
	for i, n := range c.Networks {
		if n.Kind != InfiniBand && n.Kind != Ethernet {
			errs = append(errs, fmt.Errorf("networks[%d]::kind: unknown kind %q; want infiniband or ethernet", i, n.Kind))
		}
		if !(n.RateGbps >= 0 && n.RateGbps <= MaxRateGbps) {
			errs = append(errs, fmt.Errorf("networks[%d]::rate_gbps must be 0 (the kind's default) to %d, got %v", i, MaxRateGbps, n.RateGbps))
		}
		if n.NICs < 0 || (c.GPUsPerHost > 0 && n.NICs > c.GPUsPerHost) {
			errs = append(errs, fmt.Errorf("networks[%d]::nics must be 0 (the kind's default) to gpus_per_host (%d), got %d", i, c.GPUsPerHost, n.NICs))
		}
	}
	return errors.Join(errs...)
}

// selectedModel checks that the hosts a selector picks have one of the
// models want, and returns the first that does not.
func (c *Config) selectedModel(gpus string, want ...string) (string, bool) {
	sel, err := parseSelector(gpus)
	if err != nil || len(c.Models) == 0 || c.Hosts <= 0 {
		return "", true // reported elsewhere
	}
	for h := 0; h < c.Hosts; h++ {
		if !sel.hosts.has(h) {
			continue
		}
		m := strings.ToLower(c.Models[h%len(c.Models)])
		ok := false
		for _, w := range want {
			ok = ok || m == w
		}
		if !ok {
			return c.Models[h%len(c.Models)], false
		}
	}
	return "", true
}

// selector matches GPUs by host index and GPU index.
type selector struct{ hosts, gpus span }

type span struct{ lo, hi int } // inclusive; hi < 0 means unbounded

func (s span) has(i int) bool { return i >= s.lo && (s.hi < 0 || i <= s.hi) }

func (s selector) matches(host, gpu int) bool { return s.hosts.has(host) && s.gpus.has(gpu) }

func parseSelector(s string) (selector, error) {
	h, g, ok := strings.Cut(s, "/")
	if !ok {
		return selector{}, fmt.Errorf("%q: want HOSTS/GPUS, e.g. 0/*, */0-3 or 1/2", s)
	}
	hs, err := parseSpan(h)
	if err != nil {
		return selector{}, fmt.Errorf("%q: hosts: %w", s, err)
	}
	gs, err := parseSpan(g)
	if err != nil {
		return selector{}, fmt.Errorf("%q: gpus: %w", s, err)
	}
	return selector{hs, gs}, nil
}

func parseSpan(s string) (span, error) {
	if s == "*" {
		return span{0, -1}, nil
	}
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 0 {
		return span{}, fmt.Errorf("%q is not *, N or N-M", s)
	}
	if !isRange {
		return span{a, a}, nil
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < a {
		return span{}, fmt.Errorf("%q is not *, N or N-M", s)
	}
	return span{a, b}, nil
}
