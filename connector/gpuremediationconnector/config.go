package gpuremediationconnector

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
)

// Config is the gpu_remediation connector's configuration.
type Config struct {
	// DryRun (the default) decides, logs and emits every action without
	// writing anything to the cluster: shadow mode.
	DryRun bool `mapstructure:"dry_run"`
	// Interval is how often pending actions (a drain waiting on a
	// PodDisruptionBudget, a retry after an API error) are worked on.
	Interval time.Duration `mapstructure:"interval"`
	// APITimeout bounds each call to the Kubernetes API.
	APITimeout     time.Duration        `mapstructure:"api_timeout"`
	Auth           AuthConfig           `mapstructure:"auth"`
	LeaderElection LeaderElectionConfig `mapstructure:"leader_election"`
	Policy         PolicyConfig         `mapstructure:"policy"`
	Actions        ActionsConfig        `mapstructure:"actions"`
	DRA            DRAConfig            `mapstructure:"dra" stability:"development"`
	Drain          DrainConfig          `mapstructure:"drain"`
	Breaker        BreakerConfig        `mapstructure:"circuit_breaker"`
	// Fabric turns the NIC ports of GPU nodes (the gpu_node receiver's
	// hw.type network resources) into faults (fabric.go).
	Fabric FabricConfig `mapstructure:"fabric" stability:"development"`
	// OptOutLabel: a node with this label set to "true" is never acted on.
	OptOutLabel string         `mapstructure:"opt_out_label"`
	Recovery    RecoveryConfig `mapstructure:"recovery"`
	// Slurm acts on Slurm nodes instead of Kubernetes nodes (slurm.go).
	Slurm SlurmConfig `mapstructure:"slurm" stability:"development"`
	// GPUTTL forgets the fault evidence of a GPU that has not reported for
	// this long, so that GPUs coming and going do not grow the state
	// without bound. A GPU still under an action this component took
	// (cordoned, waiting to be given back) is kept.
	GPUTTL time.Duration `mapstructure:"gpu_ttl"`
	// MetricsBuilderConfig turns the connector's own metrics on and off
	// (metrics).
	metadata.MetricsBuilderConfig `mapstructure:",squash"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// AuthConfig says how to reach the Kubernetes API.
type AuthConfig struct {
	// Type is in_cluster, kubeconfig, or none (no API: decisions only;
	// dry_run must then be true).
	Type       string `mapstructure:"type"`
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
}

// LeaderElectionConfig makes only one of several replicas act.
type LeaderElectionConfig struct {
	Enabled        bool          `mapstructure:"enabled"`
	LeaseName      string        `mapstructure:"lease_name"`
	LeaseNamespace string        `mapstructure:"lease_namespace"`
	LeaseDuration  time.Duration `mapstructure:"lease_duration"`
	RenewDeadline  time.Duration `mapstructure:"renew_deadline"`
	RetryPeriod    time.Duration `mapstructure:"retry_period"`
	Identity       string        `mapstructure:"identity"`
}

// PolicyConfig maps faults to remediations: none, restart_app, reset_gpu
// or drain.
type PolicyConfig struct {
	// XID overrides the default map per XID code (1 to 255).
	XID              map[string]string `mapstructure:"xid"`
	ECCUncorrectable string            `mapstructure:"ecc_uncorrectable"`
	RowRemapFailure  string            `mapstructure:"row_remap_failure"`
	// GPUFaulted is the gpu_analyzer processor's faulted verdict.
	GPUFaulted string `mapstructure:"gpu_faulted"`
	// RecoveryAction overrides the remediation for the driver's recovery
	// actions (gpu_reset, node_reboot, drain_p2p, drain_and_reset, recover_imex_domain), which
	// XID 154 announces and the nvidia.gpu.recovery_action gauge reads.
	RecoveryAction map[string]string `mapstructure:"recovery_action"`
	// DCGMHealth overrides the remediation of a failed subsystem of DCGM's
	// health watches (the receiver's nvidia.gpu.health: pcie, nvlink,
	// memory, inforom, thermal, power, nvswitch_fatal, ...); by default
	// every failure is a drain (internal/gpuhealth).
	DCGMHealth map[string]string `mapstructure:"dcgm_health"`
	// IncidentWindow groups evidence of one fault on one GPU into one
	// incident: a burst of XID lines, or a burst a scrape split in two.
	IncidentWindow time.Duration    `mapstructure:"incident_window"`
	Escalation     EscalationConfig `mapstructure:"escalation"`

	// AMD GPUs (hw.vendor AMD). Corrected and deferred ECC errors are
	// recorded (none): a decision logged and counted, no node touched.
	ECCCorrectable string `mapstructure:"ecc_correctable"`
	ECCDeferred    string `mapstructure:"ecc_deferred"`
	// CPERFatal and CPERUncorrected are the remediation of a CPER record
	// by its severity, where AFID does not name its AMD Field ID.
	CPERFatal       string `mapstructure:"cper_fatal"`
	CPERUncorrected string `mapstructure:"cper_nonfatal_uncorrected"`
	// AFID overrides the shipped table (afids.yaml) per AMD Field ID.
	AFID map[string]string `mapstructure:"afid"`
	// BadPageThreshold: retired pages at the driver's threshold
	// (amd.gpu.bad_pages.threshold); retiring can repair no more.
	BadPageThreshold string `mapstructure:"bad_page_threshold"`
}

// EscalationConfig: the same restart_app XID in Count incidents on one
// GPU within Window calls for To.
type EscalationConfig struct {
	Count  int           `mapstructure:"count"`
	Window time.Duration `mapstructure:"window"`
	To     string        `mapstructure:"to"`
}

// ActionsConfig turns each action on or off.
type ActionsConfig struct {
	Event     bool `mapstructure:"event"`
	Condition bool `mapstructure:"condition"`
	Taint     bool `mapstructure:"taint"`
	Cordon    bool `mapstructure:"cordon"`
	Drain     bool `mapstructure:"drain"`
	// Request sets the reset or reboot request annotation for a node agent.
	Request bool `mapstructure:"request"`
	// DeviceTaint writes a DRA DeviceTaintRule (NoSchedule) for the GPU's
	// device, so that no new claim gets it, where the GPU is a device of
	// dra::driver. Off by default: it needs an alpha API (feature gates
	// DRADeviceTaints and, from Kubernetes 1.35, DRADeviceTaintRules) and
	// more RBAC than the rest.
	DeviceTaint bool `mapstructure:"device_taint" stability:"development"`
}

// DRAConfig shapes the device_taint action.
type DRAConfig struct {
	// Driver is the DRA driver whose ResourceSlices publish the GPUs, each
	// with its UUID as the uuid attribute (NVIDIA's: gpu.nvidia.com).
	Driver string `mapstructure:"driver"`
	// InsteadOfNodeTaint: for a GPU reset, a GPU whose device was tainted
	// gets no node taint, so the node's other GPUs keep taking new pods
	// while the GPU's own pods are evicted and it is reset.
	InsteadOfNodeTaint bool `mapstructure:"instead_of_node_taint"`
}

// DrainConfig shapes a drain.
type DrainConfig struct {
	// GracePeriod overrides each pod's termination grace period; negative
	// keeps the pod's own.
	GracePeriod time.Duration `mapstructure:"grace_period"`
	// Timeout gives up a drain that PodDisruptionBudgets keep blocked; the
	// node stays cordoned and the decision says so.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxConcurrent is how many nodes may be draining at once.
	MaxConcurrent int `mapstructure:"max_concurrent"`
	// OnlyGPUPods evicts only the pods holding the faulty GPU (from the
	// metrics' k8s.pod.name), not every pod of the node.
	OnlyGPUPods bool `mapstructure:"only_gpu_pods"`
	// The switches of kubectl drain, with its defaults but one
	// (delete_emptydir_data); the README's "Drain, as kubectl drain does
	// it" tables each pod case.
	//
	// DeleteEmptyDirData evicts pods with emptyDir volumes, losing their
	// data (kubectl --delete-emptydir-data); without it such a pod
	// refuses the drain and nothing is evicted.
	DeleteEmptyDirData bool `mapstructure:"delete_emptydir_data"`
	// Force evicts pods that no controller manages, which nothing
	// recreates (kubectl --force); without it such a pod refuses the drain.
	Force bool `mapstructure:"force"`
	// SkipWaitForDeleteTimeout stops waiting for a pod whose deletion
	// timestamp is older than this (kubectl --skip-wait-for-delete-timeout);
	// 0 waits for every pod until drain::timeout.
	SkipWaitForDeleteTimeout time.Duration `mapstructure:"skip_wait_for_delete_timeout"`
	// PodSelector, a label selector, limits the drain to the pods it
	// matches (kubectl --pod-selector); empty: every pod.
	PodSelector string `mapstructure:"pod_selector"`
}

// kubePolicy is the drain's settings as the kube package takes them.
func (d DrainConfig) kubePolicy() kube.DrainPolicy {
	return kube.DrainPolicy{
		GracePeriod: d.GracePeriod, Force: d.Force, DeleteEmptyDirData: d.DeleteEmptyDirData,
		SkipWaitForDeleteTimeout: d.SkipWaitForDeleteTimeout, PodSelector: d.PodSelector,
	}
}

// BreakerConfig is the circuit breaker: acting on more nodes than
// MaxShare of the GPU nodes seen, or more than MaxNodes, within Window
// stops every action until a person resets it.
type BreakerConfig struct {
	MaxShare float64       `mapstructure:"max_share"`
	MaxNodes int           `mapstructure:"max_nodes"`
	Window   time.Duration `mapstructure:"window"`
}

// FabricConfig shapes the fabric faults: a NIC port that goes down, flaps,
// keeps counting link errors, or runs below its peers' rate.
type FabricConfig struct {
	// Enabled turns fabric faults on; off, NIC resources are ignored.
	Enabled bool `mapstructure:"enabled"`
	// Action is what a fabric fault does to its node: none (decisions
	// only), taint (the GPUNetworkHealthy condition and a NoSchedule
	// taint), or cordon (taint, and the node cordoned). Never a GPU reset
	// or a drain: neither repairs a cable, a transceiver or a switch port.
	Action string `mapstructure:"action"`
	// FlapCount link_downed increments within FlapWindow make the port
	// flapping (nic_flapping).
	FlapCount  int           `mapstructure:"flap_count"`
	FlapWindow time.Duration `mapstructure:"flap_window"`
	// ErrorRate is the link errors per minute (the sum of ErrorTypes'
	// counters) that, sustained over ErrorWindow, make nic_errors.
	ErrorRate   float64       `mapstructure:"error_rate"`
	ErrorWindow time.Duration `mapstructure:"error_window"`
	// ErrorTypes are the hw.errors error.type values counted as link
	// errors; drops and discards (congestion, a slow host) are not.
	ErrorTypes []string `mapstructure:"error_types"`
}

// RecoveryConfig: after the reset or reboot it asked for, a GPU must pass
// a health check before its node is given back; a GPU that fails it stays
// out of service and a person is asked.
type RecoveryConfig struct {
	// Timeout bounds the wait for the reset actor's answer, or for the
	// node to reboot (its boot ID to change); past it, a person is asked.
	Timeout time.Duration `mapstructure:"timeout"`
	// HealthyFor: the GPU must report again with its UUID, with no new XID,
	// uncorrectable ECC error or row-remap failure, for this long.
	HealthyFor time.Duration `mapstructure:"healthy_for"`
	// Uncordon gives the node back once the check passes, undoing only what
	// this component did; false leaves it for a person.
	Uncordon bool `mapstructure:"uncordon"`
}

func createDefaultConfig() *Config {
	return &Config{
		DryRun:               true,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Interval:             10 * time.Second,
		APITimeout:           10 * time.Second,
		Auth:                 AuthConfig{Type: "in_cluster"},
		LeaderElection: LeaderElectionConfig{
			Enabled:       true,
			LeaseName:     "otelcol-gpu-remediation",
			LeaseDuration: 15 * time.Second,
			RenewDeadline: 10 * time.Second,
			RetryPeriod:   2 * time.Second,
		},
		// The catalogue's actions, which hw.status follows (internal/gpuhealth).
		Policy: PolicyConfig{
			ECCUncorrectable: gpuhealth.ECCUncorrectable.Action.String(),
			RowRemapFailure:  gpuhealth.RowRemapFailure.Action.String(),
			GPUFaulted:       gpuhealth.GPUFaulted.Action.String(),
			ECCCorrectable:   gpuhealth.ECCCorrectable.Action.String(),
			ECCDeferred:      gpuhealth.ECCDeferred.Action.String(),
			CPERFatal:        gpuhealth.CPERFatal.Action.String(),
			CPERUncorrected:  gpuhealth.CPERUncorrected.Action.String(),
			BadPageThreshold: gpuhealth.BadPageThreshold.Action.String(),
			IncidentWindow:   30 * time.Second,
			Escalation:       EscalationConfig{Count: 3, Window: 10 * time.Minute, To: "reset_gpu"},
		},
		Actions: ActionsConfig{Event: true, Condition: true, Taint: true, Cordon: true, Drain: true, Request: true},
		DRA:     DRAConfig{Driver: "gpu.nvidia.com"},
		// emptyDir data goes by default, unlike kubectl's: training and
		// serving pods mount /dev/shm as an emptyDir, so kubectl's default
		// would refuse nearly every drain of a GPU node, leaving the pods on
		// the broken GPU.
		Drain:   DrainConfig{GracePeriod: -1, Timeout: 10 * time.Minute, MaxConcurrent: 1, DeleteEmptyDirData: true},
		Breaker: BreakerConfig{MaxShare: 0.25, MaxNodes: 10, Window: time.Hour},
		Fabric: FabricConfig{
			Action: fabricTaint, FlapCount: 3, FlapWindow: 10 * time.Minute,
			ErrorRate: 10, ErrorWindow: 5 * time.Minute, ErrorTypes: defaultLinkErrors(),
		},
		OptOutLabel: "gpu-remediation.otelcol-gpu.io/opt-out",
		Recovery:    RecoveryConfig{Timeout: time.Hour, HealthyFor: 10 * time.Minute, Uncordon: true},
		GPUTTL:      time.Hour,
		Slurm:       SlurmConfig{Timeout: 10 * time.Second},
	}
}

// Validate checks the configuration; each error names its key.
func (cfg *Config) Validate() error {
	_, err := cfg.policy()
	errs := []error{err}
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Interval <= 0 {
		bad("interval must be positive, got %v", cfg.Interval)
	}
	if cfg.APITimeout <= 0 {
		bad("api_timeout must be positive, got %v", cfg.APITimeout)
	}
	switch cfg.Auth.Type {
	case "in_cluster":
	case "none":
		if !cfg.DryRun && !cfg.Slurm.Enabled {
			bad("dry_run must be true when auth::type is none: there is no API to write to (unless slurm::enabled)")
		}
	case "kubeconfig":
		if cfg.Auth.Kubeconfig == "" {
			bad("auth::kubeconfig must name a file when auth::type is kubeconfig")
		}
	default:
		bad("auth::type: unknown type %q; want in_cluster, kubeconfig or none", cfg.Auth.Type)
	}
	if le := cfg.LeaderElection; le.Enabled {
		if cfg.Auth.Type == "none" {
			bad("leader_election needs the Kubernetes API: disable it when auth::type is none")
		}
		if le.LeaseName == "" {
			bad("leader_election::lease_name must be set")
		}
		if !(le.LeaseDuration > le.RenewDeadline && le.RenewDeadline > le.RetryPeriod && le.RetryPeriod > 0) {
			bad("leader_election: want lease_duration > renew_deadline > retry_period > 0, got %v, %v, %v", le.LeaseDuration, le.RenewDeadline, le.RetryPeriod)
		}
	}
	if d := cfg.Drain; d.Timeout <= 0 {
		bad("drain::timeout must be positive, got %v", d.Timeout)
	}
	if cfg.Drain.MaxConcurrent < 1 {
		bad("drain::max_concurrent must be at least 1, got %d", cfg.Drain.MaxConcurrent)
	}
	if cfg.Drain.SkipWaitForDeleteTimeout < 0 {
		bad("drain::skip_wait_for_delete_timeout must not be negative, got %v", cfg.Drain.SkipWaitForDeleteTimeout)
	}
	if _, err := labels.Parse(cfg.Drain.PodSelector); err != nil {
		bad("drain::pod_selector: %v", err)
	}
	b := cfg.Breaker
	if b.MaxShare < 0 || b.MaxShare > 1 {
		bad("circuit_breaker::max_share must be between 0 and 1, got %v", b.MaxShare)
	}
	if b.MaxNodes < 0 {
		bad("circuit_breaker::max_nodes must not be negative, got %d", b.MaxNodes)
	}
	if b.MaxShare == 0 && b.MaxNodes == 0 {
		bad("circuit_breaker: set max_share or max_nodes; the breaker cannot be turned off")
	}
	if b.Window <= 0 {
		bad("circuit_breaker::window must be positive, got %v", b.Window)
	}
	if cfg.GPUTTL <= 0 {
		bad("gpu_ttl must be positive, got %v", cfg.GPUTTL)
	}
	if cfg.Actions.DeviceTaint {
		if msgs := validation.IsDNS1123Subdomain(cfg.DRA.Driver); len(msgs) > 0 {
			bad("dra::driver must name a DRA driver (a DNS subdomain, e.g. gpu.nvidia.com), got %q: %s", cfg.DRA.Driver, strings.Join(msgs, "; "))
		}
	} else if cfg.DRA.InsteadOfNodeTaint {
		bad("dra::instead_of_node_taint needs actions::device_taint: without the device's taint the GPU would have none")
	}
	errs = append(errs, cfg.Fabric.validate(), cfg.Slurm.validate(cfg))
	if cfg.Recovery.Timeout <= 0 {
		bad("recovery::timeout must be positive, got %v", cfg.Recovery.Timeout)
	}
	if cfg.Recovery.HealthyFor <= 0 {
		bad("recovery::healthy_for must be positive, got %v", cfg.Recovery.HealthyFor)
	}
	return errors.Join(errs...)
}

// policy builds the fault-to-remediation policy; errors name the key.
func (cfg *Config) policy() (*policy.Policy, error) {
	var errs []error
	parse := func(key, s string) policy.Remediation {
		r, err := policy.Parse(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		return r
	}
	p := &policy.Policy{XIDs: policy.DefaultXIDs(), Actions: gpuhealth.RecoveryActions()}
	codes := make([]string, 0, len(cfg.Policy.XID))
	for k := range cfg.Policy.XID {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	for _, k := range codes {
		key := "policy::xid::" + k
		code, err := strconv.Atoi(k)
		if err != nil || code < 1 || code > 255 {
			errs = append(errs, fmt.Errorf("%s: an XID must be a number from 1 to 255", key))
			continue
		}
		p.XIDs[code] = parse(key, cfg.Policy.XID[k])
	}
	names := make([]string, 0, len(cfg.Policy.RecoveryAction))
	for k := range cfg.Policy.RecoveryAction {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		key := "policy::recovery_action::" + k
		code, ok := gpuhealth.ParseRecovery(k)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: unknown recovery action; want gpu_reset, node_reboot, drain_p2p, drain_and_reset or recover_imex_domain", key))
			continue
		}
		p.Actions[code] = parse(key, cfg.Policy.RecoveryAction[k])
	}
	p.DCGMHealth = policy.DefaultDCGMHealth()
	systems := make([]string, 0, len(cfg.Policy.DCGMHealth))
	for k := range cfg.Policy.DCGMHealth {
		systems = append(systems, k)
	}
	sort.Strings(systems)
	for _, k := range systems {
		key := "policy::dcgm_health::" + k
		sys, ok := gpu.ParseHealthSystem(k)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: unknown health subsystem; want one of %s", key, healthSystemNames()))
			continue
		}
		p.DCGMHealth[sys] = parse(key, cfg.Policy.DCGMHealth[k])
	}
	p.AFIDs = map[int]policy.Remediation{}
	shipped, err := shippedAFIDs()
	if err != nil {
		errs = append(errs, err)
	}
	for _, table := range []struct {
		where string
		afids map[string]string
	}{{"afids.yaml: afid::", shipped}, {"policy::afid::", cfg.Policy.AFID}} {
		keys := make([]string, 0, len(table.afids))
		for k := range table.afids {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			key := table.where + k
			afid, err := strconv.Atoi(k)
			if err != nil || afid < 1 {
				errs = append(errs, fmt.Errorf("%s: an AFID must be a positive number", key))
				continue
			}
			p.AFIDs[afid] = parse(key, table.afids[k])
		}
	}
	p.ECCCorrectable = parse("policy::ecc_correctable", cfg.Policy.ECCCorrectable)
	p.ECCDeferred = parse("policy::ecc_deferred", cfg.Policy.ECCDeferred)
	p.CPERFatal = parse("policy::cper_fatal", cfg.Policy.CPERFatal)
	p.CPERUncorrected = parse("policy::cper_nonfatal_uncorrected", cfg.Policy.CPERUncorrected)
	p.BadPageThreshold = parse("policy::bad_page_threshold", cfg.Policy.BadPageThreshold)
	p.ECCUncorrectable = parse("policy::ecc_uncorrectable", cfg.Policy.ECCUncorrectable)
	p.RowRemapFailure = parse("policy::row_remap_failure", cfg.Policy.RowRemapFailure)
	p.GPUFaulted = parse("policy::gpu_faulted", cfg.Policy.GPUFaulted)
	if cfg.Policy.IncidentWindow <= 0 {
		errs = append(errs, fmt.Errorf("policy::incident_window must be positive, got %v", cfg.Policy.IncidentWindow))
	}
	p.IncidentWindow = cfg.Policy.IncidentWindow
	e := cfg.Policy.Escalation
	if e.Count < 0 {
		errs = append(errs, fmt.Errorf("policy::escalation::count must not be negative, got %d", e.Count))
	}
	if e.Count > 0 {
		if e.Window <= 0 {
			errs = append(errs, fmt.Errorf("policy::escalation::window must be positive, got %v", e.Window))
		}
		p.Count, p.Window = e.Count, e.Window
		p.EscalateTo = parse("policy::escalation::to", e.To)
	}
	return p, errors.Join(errs...)
}

// afidsYAML is the shipped table of remediations by AMD Field ID.
//
//go:embed afids.yaml
var afidsYAML []byte

// shippedAFIDs reads afids.yaml's table; policy() checks its entries as
// it checks the configuration's.
func shippedAFIDs() (map[string]string, error) {
	var f struct {
		AFID map[string]string `yaml:"afid"`
	}
	if err := yaml.Unmarshal(afidsYAML, &f); err != nil {
		return nil, fmt.Errorf("afids.yaml: %w", err)
	}
	return f.AFID, nil
}

// healthSystemNames lists the health subsystems for an error message.
func healthSystemNames() string {
	names := make([]string, 0, gpu.NumHealthSystems)
	for _, sys := range gpu.HealthSystems() {
		names = append(names, sys.String())
	}
	return strings.Join(names, ", ")
}
