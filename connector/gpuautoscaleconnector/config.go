package gpuautoscaleconnector

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
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

// ScaleTargetRef names the object to scale, as an HPA does.
type ScaleTargetRef struct {
	APIVersion string `mapstructure:"api_version"`
	Kind       string `mapstructure:"kind"`
	Name       string `mapstructure:"name"`
	Namespace  string `mapstructure:"namespace"`
}

func (r ScaleTargetRef) String() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }

// TargetConfig is one workload to scale.
type TargetConfig struct {
	ScaleTargetRef ScaleTargetRef `mapstructure:"scale_target_ref"`
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
	// into the pod's value: avg, max or sum. Pods are then averaged, as the
	// HPA averages pods.
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
		Interval:     15 * time.Second,
		MetricMaxAge: time.Minute,
		APITimeout:   10 * time.Second,
		Auth:         AuthConfig{Type: "in_cluster"},
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

// Validate checks the configuration; errors name the key.
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
	switch cfg.Auth.Type {
	case "in_cluster", "none":
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
	if len(cfg.Targets) == 0 {
		bad("targets must list at least one scale target")
	}
	seen := map[string]int{}
	for i, t := range cfg.Targets {
		key := fmt.Sprintf("targets[%d]", i)
		ref := t.ScaleTargetRef
		if ref.APIVersion == "" || ref.Kind == "" || ref.Name == "" || ref.Namespace == "" {
			bad("%s::scale_target_ref needs api_version, kind, name and namespace", key)
		} else if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
			bad("%s::scale_target_ref::api_version: %v", key, err)
		}
		if prev, dup := seen[ref.String()]; dup {
			bad("%s: %s is also targets[%d]; two autoscalers on one object fight", key, ref, prev)
		}
		seen[ref.String()] = i
		if _, known := workloadAttribute[ref.Kind]; !known && len(t.Match) == 0 {
			bad("%s::match must list the resource attributes of %s's GPUs (no default for kind %s)", key, ref, ref.Kind)
		}
		if len(t.Metrics) == 0 {
			if t.TargetValue <= 0 {
				bad("%s::target_value must be positive, got %v", key, t.TargetValue)
			}
		} else if t.Metric != "" || t.TargetValue != 0 || len(t.MetricAttributes) > 0 || t.Aggregation != "" {
			bad("%s: set either metric, target_value, metric_attributes and aggregation, or metrics, not both", key)
		}
		names := map[string]int{}
		for j, m := range t.Metrics {
			mk := fmt.Sprintf("%s::metrics[%d]", key, j)
			if m.Name == "" {
				bad("%s::name must name a metric", mk)
			}
			if m.TargetValue <= 0 {
				bad("%s::target_value must be positive, got %v", mk, m.TargetValue)
			}
			switch m.Aggregation {
			case "", "avg", "max", "sum":
			default:
				bad("%s::aggregation: unknown aggregation %q; want avg, max or sum", mk, m.Aggregation)
			}
			id := m.Name + fmt.Sprint(m.Attributes)
			if prev, dup := names[id]; dup {
				bad("%s: the same metric as metrics[%d]", mk, prev)
			}
			names[id] = j
		}
		if t.MinReplicas < 1 {
			bad("%s::min_replicas must be at least 1, got %d", key, t.MinReplicas)
		}
		if t.MaxReplicas < t.MinReplicas {
			bad("%s::max_replicas (%d) must not be less than min_replicas (%d)", key, t.MaxReplicas, t.MinReplicas)
		}
		switch t.Aggregation {
		case "", "avg", "max", "sum":
		default:
			bad("%s::aggregation: unknown aggregation %q; want avg, max or sum", key, t.Aggregation)
		}
		switch t.Mode {
		case "", "reactive":
		case "predictive":
			if t.LeadTime <= 0 {
				bad("%s::lead_time must be positive in predictive mode (the pods' start-up time)", key)
			}
		case "serving":
			t.validateServing(key, bad)
		default:
			bad("%s::mode: unknown mode %q; want reactive, predictive or serving", key, t.Mode)
		}
		if cfg.Auth.Type == "none" && !t.DryRun {
			bad("%s::dry_run must be true when auth::type is none: there is no API to write to", key)
		}
		for dir, r := range map[string]*RulesConfig{"scale_up": t.Behavior.ScaleUp, "scale_down": t.Behavior.ScaleDown} {
			if r == nil {
				continue
			}
			k := key + "::behavior::" + dir
			if r.StabilizationWindow != nil && (*r.StabilizationWindow < 0 || *r.StabilizationWindow > time.Hour) {
				bad("%s::stabilization_window must be between 0 and 1h, got %v", k, *r.StabilizationWindow)
			}
			switch r.SelectPolicy {
			case "", string(hpa.SelectMax), string(hpa.SelectMin), string(hpa.SelectDisabled):
			default:
				bad("%s::select_policy: unknown policy %q; want Max, Min or Disabled", k, r.SelectPolicy)
			}
			if r.Tolerance != nil && (*r.Tolerance < 0 || *r.Tolerance >= 1) {
				bad("%s::tolerance must be in [0, 1), got %v", k, *r.Tolerance)
			}
			for j, p := range r.Policies {
				pk := fmt.Sprintf("%s::policies[%d]", k, j)
				if p.Type != string(hpa.Pods) && p.Type != string(hpa.Percent) {
					bad("%s::type: unknown type %q; want Pods or Percent", pk, p.Type)
				}
				if p.Value <= 0 {
					bad("%s::value must be positive, got %d", pk, p.Value)
				}
				if p.Period <= 0 || p.Period > 30*time.Minute {
					bad("%s::period must be between 1s and 30m, got %v", pk, p.Period)
				}
			}
		}
	}
	return errors.Join(errs...)
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
