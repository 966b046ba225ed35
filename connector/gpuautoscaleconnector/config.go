package gpuautoscaleconnector

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// Config is the gpu_autoscale connector's configuration.
type Config struct {
	// Interval is how often each target is evaluated (the HPA's sync period).
	Interval time.Duration `mapstructure:"interval"`
	// MetricMaxAge is the oldest GPU value an evaluation uses; older values
	// count as missing.
	MetricMaxAge time.Duration `mapstructure:"metric_max_age"`
	// APITimeout bounds each call to the Kubernetes API.
	APITimeout     time.Duration        `mapstructure:"api_timeout"`
	Auth           AuthConfig           `mapstructure:"auth"`
	LeaderElection LeaderElectionConfig `mapstructure:"leader_election"`
	Targets        []TargetConfig       `mapstructure:"targets"`
	// Storage names a storage extension (file_storage) that keeps what the
	// serving mode learned (daily profile, forecast errors, pod capacity)
	// across restarts. Unset: a restart learns it all again.
	Storage *component.ID `mapstructure:"storage"`
	// CheckpointInterval is how often that state is written to Storage
	// besides at shutdown; 0 writes it at shutdown only.
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// MetricsBuilderConfig turns the connector's own metrics and resource
	// attributes on and off (metrics, resource_attributes).
	metadata.MetricsBuilderConfig `mapstructure:",squash"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// AuthConfig says how to reach the Kubernetes API.
type AuthConfig struct {
	// Type is in_cluster (the pod's service account), kubeconfig, or none
	// (no API: decisions are computed and emitted, never written; every
	// target must then be dry_run).
	Type       string `mapstructure:"type"`
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
}

// LeaderElectionConfig makes only one of several replicas write.
type LeaderElectionConfig struct {
	Enabled        bool          `mapstructure:"enabled"`
	LeaseName      string        `mapstructure:"lease_name"`
	LeaseNamespace string        `mapstructure:"lease_namespace"`
	LeaseDuration  time.Duration `mapstructure:"lease_duration"`
	RenewDeadline  time.Duration `mapstructure:"renew_deadline"`
	RetryPeriod    time.Duration `mapstructure:"retry_period"`
	// Identity names this replica in the Lease; default: the hostname.
	Identity string `mapstructure:"identity"`
}

// TargetConfig is one workload to scale.
type TargetConfig struct {
	// ScaleTargetRef names the object to scale, as an HPA does.
	ScaleTargetRef kube.Ref `mapstructure:"scale_target_ref"`
	// Match lists the resource attributes that recognise the target's GPUs.
	// Default: k8s.namespace.name and, for a Deployment or StatefulSet,
	// k8s.deployment.name or k8s.statefulset.name (as the k8s_attributes
	// processor sets them). Other kinds must set it.
	Match map[string]string `mapstructure:"match"`
	// Metric is the one metric to scale on (default nvidia.gpu.sm.active),
	// with TargetValue its desired average per pod; MetricAttributes filter
	// its data points (e.g. hw.gpu.task: general) and Aggregation combines a
	// pod's data points. Metrics lists several instead: the largest proposal
	// wins, as with an HPA's metrics.
	Metric           string            `mapstructure:"metric"`
	MetricAttributes map[string]string `mapstructure:"metric_attributes"`
	// Aggregation combines a pod's data points (its GPUs, or its series)
	// into the pod's value: avg, max or sum, in whole milli-units as a
	// metrics adapter hands them to the HPA (the mean truncated). Pods are
	// then averaged, as the HPA averages pods.
	Aggregation string `mapstructure:"aggregation"`
	// TargetValue is the metric's desired value per pod.
	TargetValue float64        `mapstructure:"target_value"`
	Metrics     []MetricConfig `mapstructure:"metrics"`
	MinReplicas int32          `mapstructure:"min_replicas"`
	MaxReplicas int32          `mapstructure:"max_replicas"`
	Behavior    BehaviorConfig `mapstructure:"behavior"`
	// Mode is reactive (the HPA's algorithm), predictive (scale ahead of
	// the load forecast over LeadTime; never below reactive) or serving
	// (size for the work arriving, from the load and the request queue;
	// see Serving).
	Mode     string        `mapstructure:"mode"`
	LeadTime time.Duration `mapstructure:"lead_time"`
	// Serving tunes mode serving (see serving.go).
	Serving ServingConfig `mapstructure:"serving"`
	// DryRun computes and reports decisions without writing them.
	DryRun bool `mapstructure:"dry_run"`
}

// MetricConfig is one metric of a target: any metric of the pipeline whose
// data points carry the pod (k8s.pod.name, as k8s_attributes sets it), such
// as a GPU's SM activity or an inference server's queue.
type MetricConfig struct {
	Name string `mapstructure:"name"`
	// TargetValue is the desired average per pod (the HPA's AverageValue).
	TargetValue float64 `mapstructure:"target_value"`
	// Attributes filter the data points by their attributes.
	Attributes map[string]string `mapstructure:"attributes"`
	// Aggregation combines a pod's data points: avg (default), max or sum.
	Aggregation string `mapstructure:"aggregation"`
}

// BehaviorConfig mirrors the HPA's behavior field.
type BehaviorConfig struct {
	ScaleUp   *RulesConfig `mapstructure:"scale_up"`
	ScaleDown *RulesConfig `mapstructure:"scale_down"`
}

// RulesConfig is one direction's rules; unset fields take the HPA defaults.
type RulesConfig struct {
	StabilizationWindow *time.Duration `mapstructure:"stabilization_window"`
	Policies            []PolicyConfig `mapstructure:"policies"`
	SelectPolicy        string         `mapstructure:"select_policy"`
	Tolerance           *float64       `mapstructure:"tolerance"`
}

// PolicyConfig is one scaling policy.
type PolicyConfig struct {
	Type   string        `mapstructure:"type"`
	Value  int32         `mapstructure:"value"`
	Period time.Duration `mapstructure:"period"`
}

func createDefaultConfig() *Config {
	return &Config{
		Interval:             15 * time.Second,
		MetricMaxAge:         time.Minute,
		APITimeout:           10 * time.Second,
		CheckpointInterval:   time.Minute,
		Auth:                 AuthConfig{Type: "in_cluster"},
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		LeaderElection: LeaderElectionConfig{
			Enabled:       true,
			LeaseName:     "otelcol-gpu-autoscaler",
			LeaseDuration: 15 * time.Second,
			RenewDeadline: 10 * time.Second,
			RetryPeriod:   2 * time.Second,
		},
	}
}

// workloadAttribute is the resource attribute k8s_attributes sets for a kind.
var workloadAttribute = map[string]string{
	"Deployment":  metricnames.AttrK8sDeploymentName,
	"StatefulSet": metricnames.AttrK8sStatefulsetName,
	"ReplicaSet":  metricnames.AttrK8sReplicasetName,
}

// Validate checks the settings that are not a nested struct's own, and
// those that span structs (auth and the targets, the targets between
// them). confmap.Validate, which the collector runs, walks the nested
// structs and calls their Validate itself, putting each one's key before
// its error. Each error names the key.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Interval <= 0 {
		bad("interval must be positive, got %v", cfg.Interval)
	}
	if cfg.MetricMaxAge <= 0 {
		bad("metric_max_age must be positive, got %v", cfg.MetricMaxAge)
	}
	if cfg.APITimeout <= 0 {
		bad("api_timeout must be positive, got %v", cfg.APITimeout)
	}
	if cfg.CheckpointInterval < 0 {
		bad("checkpoint_interval must not be negative, got %v", cfg.CheckpointInterval)
	}
	if cfg.LeaderElection.Enabled && cfg.Auth.Type == "none" {
		bad("leader_election needs the Kubernetes API: disable it when auth::type is none")
	}
	if len(cfg.Targets) == 0 {
		bad("targets must list at least one scale target")
	}
	seen := map[string]int{}
	for i, t := range cfg.Targets {
		ref := t.ScaleTargetRef.String()
		if prev, dup := seen[ref]; dup {
			bad("targets::%d: %s is also targets::%d; two autoscalers on one object fight", i, ref, prev)
		}
		seen[ref] = i
		if cfg.Auth.Type == "none" && !t.DryRun {
			bad("targets::%d::dry_run must be true when auth::type is none: there is no API to write to", i)
		}
	}
	return errors.Join(errs...)
}

// problems collects one struct's problems and reports them on one line:
// confmap.Validate puts the struct's key before the first line of an
// error only.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return errors.New(strings.Join(p, "; "))
}

// Validate checks the authentication settings.
func (c *AuthConfig) Validate() error {
	switch c.Type {
	case "in_cluster", "none":
	case "kubeconfig":
		if c.Kubeconfig == "" {
			return errors.New("kubeconfig must name a file when type is kubeconfig")
		}
	default:
		return fmt.Errorf("type: unknown type %q; want in_cluster, kubeconfig or none", c.Type)
	}
	return nil
}

// Validate checks the Lease settings when leader election is enabled.
func (c *LeaderElectionConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	var p problems
	if c.LeaseName == "" {
		p.add("lease_name must be set")
	}
	if !(c.LeaseDuration > c.RenewDeadline && c.RenewDeadline > c.RetryPeriod && c.RetryPeriod > 0) {
		p.add("want lease_duration > renew_deadline > retry_period > 0, got %v, %v, %v", c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	}
	return p.err()
}

// Validate checks one target's settings but its scale_target_ref, metrics
// and behavior, which have their own Validate. The serving block is
// checked here, in mode serving only: no other mode reads it.
func (t *TargetConfig) Validate() error {
	var p problems
	ref := t.ScaleTargetRef
	if _, known := workloadAttribute[ref.Kind]; !known && len(t.Match) == 0 {
		p.add("match must list the resource attributes of %s's GPUs (no default for kind %s)", ref, ref.Kind)
	}
	if len(t.Metrics) == 0 {
		if t.TargetValue <= 0 {
			p.add("target_value must be positive, got %v", t.TargetValue)
		}
	} else if t.Metric != "" || t.TargetValue != 0 || len(t.MetricAttributes) > 0 || t.Aggregation != "" {
		p.add("set either metric, target_value, metric_attributes and aggregation, or metrics, not both")
	}
	names := map[string]int{}
	for j, m := range t.Metrics {
		id := m.Name + fmt.Sprint(m.Attributes)
		if prev, dup := names[id]; dup {
			p.add("metrics::%d: the same metric as metrics::%d", j, prev)
		}
		names[id] = j
	}
	if t.MinReplicas < 1 {
		p.add("min_replicas must be at least 1, got %d", t.MinReplicas)
	}
	if t.MaxReplicas < t.MinReplicas {
		p.add("max_replicas (%d) must not be less than min_replicas (%d)", t.MaxReplicas, t.MinReplicas)
	}
	if err := validAggregation(t.Aggregation); err != nil {
		p.add("aggregation: %v", err)
	}
	switch t.Mode {
	case "", "reactive":
	case "predictive":
		if t.LeadTime <= 0 {
			p.add("lead_time must be positive in predictive mode (the pods' start-up time)")
		}
	case "serving":
		t.validateServing(p.add)
	default:
		p.add("mode: unknown mode %q; want reactive, predictive or serving", t.Mode)
	}
	return p.err()
}

func validAggregation(a string) error {
	switch a {
	case "", "avg", "max", "sum":
		return nil
	}
	return fmt.Errorf("unknown aggregation %q; want avg, max or sum", a)
}

// Validate checks one metric of a target.
func (m *MetricConfig) Validate() error {
	var p problems
	if m.Name == "" {
		p.add("name must name a metric")
	}
	if m.TargetValue <= 0 {
		p.add("target_value must be positive, got %v", m.TargetValue)
	}
	if err := validAggregation(m.Aggregation); err != nil {
		p.add("aggregation: %v", err)
	}
	return p.err()
}

// Validate checks one direction's rules; its policies have their own
// Validate.
func (r *RulesConfig) Validate() error {
	var p problems
	if r.StabilizationWindow != nil && (*r.StabilizationWindow < 0 || *r.StabilizationWindow > time.Hour) {
		p.add("stabilization_window must be between 0 and 1h, got %v", *r.StabilizationWindow)
	}
	switch r.SelectPolicy {
	case "", string(hpa.SelectMax), string(hpa.SelectMin), string(hpa.SelectDisabled):
	default:
		p.add("select_policy: unknown policy %q; want Max, Min or Disabled", r.SelectPolicy)
	}
	if r.Tolerance != nil && (*r.Tolerance < 0 || *r.Tolerance >= 1) {
		p.add("tolerance must be in [0, 1), got %v", *r.Tolerance)
	}
	return p.err()
}

// Validate checks one scaling policy.
func (c *PolicyConfig) Validate() error {
	var p problems
	if c.Type != string(hpa.Pods) && c.Type != string(hpa.Percent) {
		p.add("type: unknown type %q; want Pods or Percent", c.Type)
	}
	if c.Value <= 0 {
		p.add("value must be positive, got %d", c.Value)
	}
	if c.Period <= 0 || c.Period > 30*time.Minute {
		p.add("period must be between 1s and 30m, got %v", c.Period)
	}
	return p.err()
}

// match returns the resource attributes that identify a target's GPUs.
func (t *TargetConfig) match() map[string]string {
	if len(t.Match) > 0 {
		return t.Match
	}
	return map[string]string{
		metricnames.AttrK8sNamespaceName:         t.ScaleTargetRef.Namespace,
		workloadAttribute[t.ScaleTargetRef.Kind]: t.ScaleTargetRef.Name,
	}
}

// metrics returns the target's metrics: the list, or the one metric.
func (t *TargetConfig) metrics() []MetricConfig {
	if len(t.Metrics) > 0 {
		return t.Metrics
	}
	name := t.Metric
	if name == "" {
		name = metricnames.NvidiaGPUSMActive
	}
	return []MetricConfig{{Name: name, TargetValue: t.TargetValue, Attributes: t.MetricAttributes, Aggregation: t.Aggregation}}
}

// spec translates a target's settings for the algorithm, with the HPA's
// defaults for whatever the behavior leaves unset.
func (t *TargetConfig) spec() hpa.Spec {
	b := hpa.DefaultBehavior()
	apply := func(dst *hpa.Rules, src *RulesConfig) {
		if src == nil {
			return
		}
		if src.StabilizationWindow != nil {
			dst.StabilizationWindow = *src.StabilizationWindow
		}
		if len(src.Policies) > 0 {
			dst.Policies = nil
			for _, p := range src.Policies {
				dst.Policies = append(dst.Policies, hpa.Policy{Type: hpa.PolicyType(p.Type), Value: p.Value, Period: p.Period})
			}
		}
		if src.SelectPolicy != "" {
			dst.Select = hpa.Select(src.SelectPolicy)
		}
		if src.Tolerance != nil {
			dst.Tolerance = *src.Tolerance
		}
	}
	apply(&b.ScaleUp, t.Behavior.ScaleUp)
	apply(&b.ScaleDown, t.Behavior.ScaleDown)
	var metrics []hpa.Metric
	for _, m := range t.metrics() {
		metrics = append(metrics, hpa.Metric{Name: m.Name, Target: m.TargetValue})
	}
	return hpa.Spec{
		Metrics:     metrics,
		MinReplicas: t.MinReplicas,
		MaxReplicas: t.MaxReplicas,
		Behavior:    b,
		Predictive:  t.Mode == "predictive",
		LeadTime:    t.LeadTime,
	}
}
