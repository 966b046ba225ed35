// Package offline is how the project's tools (gpureplay) drive components
// made by their factories on recorded or simulated data, outside a
// collector: time comes from the data, evaluations happen when the tool
// says, and nothing is written to a cluster.
//
// A component offers this by implementing one of the interfaces here on
// the value its factory returns; the tool type-asserts it. Because the
// interfaces and their types live in an internal package, the components'
// exported API stays NewFactory and Config, as in contrib.
package offline

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
)

// Receiver is the dcgm receiver, made by its factory and not started.
type Receiver interface {
	// Map turns samples, as a backend would have collected them, into the
	// metrics the receiver emits for one scrape.
	Map(samples []gpu.Sample) pmetric.Metrics
}

// NodeReceiver is the gpu_node receiver, made by its factory and not
// started.
type NodeReceiver interface {
	// MapNodes turns hosts' evidence at now, as the receiver's sources
	// would have read it (pods' cgroups, the node's pressure, NIC ports
	// with their rails), into the metrics it emits for one scrape.
	MapNodes(now time.Time, nodes []simulated.NodeEvidence) pmetric.Metrics
}

// Autoscaler is the gpu_autoscale connector, made by its factory and not
// started: no ticker and no Kubernetes client.
type Autoscaler interface {
	// Interval is the connector's evaluation period.
	Interval() time.Duration
	// ReplayBatch takes one batch of metrics at time now and returns the
	// evaluations due: one per target every interval of data time. A
	// target's replica count is the number of its distinct pods in the
	// batch, all running. The connector must have been made with auth none.
	ReplayBatch(md pmetric.Metrics, now time.Time) []Evaluation
	// Simulate has the connector read and scale st, in memory, in place of
	// the Kubernetes API. It is for a connector with exactly one target.
	Simulate(st ScaleTarget)
	// Evaluate runs one evaluation of every target at now, on the values
	// consumed so far, and returns each target's latest evaluation.
	Evaluate(now time.Time) []Evaluation
}

// Evaluation is one target's decision at one evaluation, as gpureplay
// prints it.
type Evaluation struct {
	Time    time.Time
	Target  string // NAMESPACE/KIND/NAME
	Current int32
	Desired int32
	Reason  string
	// Metric is the metric whose proposal won and Value its average per pod
	// (empty and 0 when no metric was consulted).
	Metric string  `json:",omitempty"`
	Value  float64 `json:",omitempty"`
	// Serving is what serving mode's rules found (nil in other modes).
	Serving *ServingDetail `json:",omitempty"`
}

// ServingDetail is one evaluation of serving mode: the figures each rule
// rests on, in tokens per second (see the connector's internal/serving).
type ServingDetail struct {
	Served         float64 `json:"served"`
	Arrival        float64 `json:"arrival"`
	Backlog        float64 `json:"backlog"`
	Capacity       float64 `json:"capacity"`
	CapacityFrom   string  `json:"capacity_from"`
	Need           float64 `json:"need"`
	Forecast       float64 `json:"forecast"`
	Headroom       float64 `json:"headroom"`
	Seasonal       float64 `json:"seasonal"`
	SLOPods        int     `json:"slo_pods"`
	BacklogPods    int     `json:"backlog_pods"`
	KVPods         int     `json:"kv_pods"`
	Keep           int     `json:"keep"`
	Rule           string  `json:"rule"`
	StartupSeconds float64 `json:"startup_seconds"`
	Errors         int     `json:"errors"`
	// Forecaster names the calibrated forecaster in use, a "+" after it
	// when its errors are differences (empty outside the calibrated
	// forecast): which one earned its place, evaluation by evaluation.
	Forecaster string `json:"forecaster,omitempty"`
	// WaitSeconds is how long a request arriving at the evaluation would
	// wait for a pod, as the connector measures it (nil without
	// request_time, when the queue's work is not known).
	WaitSeconds *float64 `json:"wait_seconds,omitempty"`
}

// ScaleTarget is what a simulation scales: an in-memory stand-in for the
// scale subresource of one target and for its pods.
type ScaleTarget interface {
	// Replicas is the target's spec.replicas.
	Replicas() int32
	// Scale sets spec.replicas.
	Scale(replicas int32)
	// Pods names the target's pods now; a pod starting its server is
	// Running without values yet.
	Pods() []Pod
}

// Pod is one pod of a simulated target.
type Pod struct {
	Name string
	// Phase is the pod's phase: Pending (not started: unready, for the HPA),
	// Running (with or without values: a running pod without a value is
	// missing), Failed or Succeeded.
	Phase string
	// Deleting is true once the pod is being deleted (the HPA ignores it).
	Deleting bool
}

// Remediator is the gpu_remediation connector, made by its factory with
// auth none and dry_run on, and not started.
type Remediator interface {
	// ReplayBatch takes one batch of metrics at time now and returns the
	// decisions it led to, in a deterministic order.
	ReplayBatch(md pmetric.Metrics, now time.Time) []Decision
}

// Decision is one remediation decision, as gpureplay prints it.
type Decision struct {
	Time     time.Time
	Node     string
	UUID     string
	Incident string
	Fault    string
	Action   string
	Reason   string
	DryRun   bool
}
