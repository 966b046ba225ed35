// Package kube takes GPU nodes out of service through the Kubernetes API:
// Events, the GPUHealthy node condition, a taint naming the GPU, cordon,
// drain through the Eviction API (each pod decided as kubectl drain decides
// it), and annotations that ask a node agent to reset a GPU or reboot.
// Every write that changes a node's schedulability carries the ownership
// annotation in the same request, guarded by the node's resourceVersion,
// so the two never land apart.
package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// Names this component writes on nodes.
const (
	Prefix = nodeagent.Prefix
	// OwnerAnnotation records what this component did to a node (JSON), so
	// that it only ever undoes its own writes.
	OwnerAnnotation = Prefix + "owner"
	// ResetRequestAnnotation asks the node's reset actor to reset the GPUs
	// it lists (comma-separated UUIDs) once their pods are gone.
	ResetRequestAnnotation = nodeagent.ResetRequest
	// RebootRequestAnnotation asks for the node to be rebooted once it is
	// drained; its value is the request's time (RFC 3339).
	RebootRequestAnnotation = nodeagent.RebootRequest
	// TaintPrefix + a GPU's UUID is the key of the NoSchedule taint on its node.
	TaintPrefix = Prefix
	// ConditionType is the node condition, as node-problem-detector writes its own.
	ConditionType = "GPUHealthy"
	// NetworkConditionType is the node condition of its NIC ports (the GPUs'
	// rails): apart from GPUHealthy, so that a GPU's recovery does not
	// clear a fabric fault, nor a fabric fault a GPU's.
	NetworkConditionType = "GPUNetworkHealthy"
	// BreakerAnnotation on the leader-election Lease holds an open circuit
	// breaker; deleting it is how a person resets the breaker.
	BreakerAnnotation = Prefix + "breaker"
	// Component names the Events' source.
	Component = "otelcol-gpu-remediation"
)

// Ownership is what this component did to a node.
type Ownership struct {
	Cordoned bool     `json:"cordoned,omitempty"`
	Taints   []string `json:"taints,omitempty"`
	// Faults are GPU/fault pairs handled, e.g. GPU-1234/xid_79.
	Faults []string `json:"faults,omitempty"`
	// Incidents are the ids of the incidents that wrote to the node.
	Incidents []string `json:"incidents,omitempty"`
	Request   string   `json:"request,omitempty"`
	Since     string   `json:"since,omitempty"`
}

// Node is what remediation needs to know of a node.
type Node struct {
	Name          string
	Labels        map[string]string
	Unschedulable bool
	Taints        []corev1.Taint
	// Owner is nil when this component has not touched the node.
	Owner *Ownership
	// BootID changes when the node reboots (status.nodeInfo.bootID).
	BootID string
	// Annotations are the node's annotations (the reset actor's answer
	// among them).
	Annotations map[string]string
}

// Client acts on nodes and pods.
type Client struct {
	cs      kubernetes.Interface
	dra     *draClient
	timeout time.Duration
	now     func() time.Time
}

// New returns a client; each call to the API is bounded by timeout.
func New(cfg *rest.Config, timeout time.Duration) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.Timeout = timeout
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	dra := &draClient{dyn: dyn, disc: cs.Discovery(), versions: map[string]string{}}
	return &Client{cs: cs, dra: dra, timeout: timeout, now: time.Now}, nil
}

func (c *Client) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, c.timeout)
}

// Node reads a node.
func (c *Client) Node(ctx context.Context, name string) (*Node, error) {
	n, err := c.get(ctx, name)
	if err != nil {
		return nil, err
	}
	return view(n), nil
}

func (c *Client) get(ctx context.Context, name string) (*corev1.Node, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	return c.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

func view(n *corev1.Node) *Node {
	v := &Node{Name: n.Name, Labels: n.Labels, Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints,
		BootID: n.Status.NodeInfo.BootID, Annotations: n.Annotations}
	if raw, ok := n.Annotations[OwnerAnnotation]; ok {
		var o Ownership
		if json.Unmarshal([]byte(raw), &o) == nil {
			v.Owner = &o
		} else {
			v.Owner = &Ownership{} // ours, though unreadable
		}
	}
	return v
}

// TaintKey is the key of the taint naming a GPU.
func TaintKey(gpu string) string { return TaintPrefix + gpu }

// Quarantine adds the GPU's NoSchedule taint (taint) and cordons the node
// (cordon), recording both, the fault and its incident in the ownership annotation, in
// one patch guarded by the node's resourceVersion. It changes nothing that
// is already so. It returns what it changed.
func (c *Client) Quarantine(ctx context.Context, name, gpu, fault, incident string, taint, cordon bool) (tainted, cordoned bool, err error) {
	for attempt := 0; attempt < 3; attempt++ {
		n, err := c.get(ctx, name)
		if err != nil {
			return false, false, err
		}
		own := view(n).Owner
		if own == nil {
			own = &Ownership{Since: c.now().UTC().Format(time.RFC3339)}
		}
		taints := n.Spec.Taints
		key := TaintKey(gpu)
		tainted = taint && !slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == key })
		if tainted {
			taints = append(slices.Clone(taints), corev1.Taint{Key: key, Value: taintValue(fault), Effect: corev1.TaintEffectNoSchedule})
			own.Taints = appendNew(own.Taints, key)
		}
		cordoned = cordon && !n.Spec.Unschedulable
		if cordoned {
			own.Cordoned = true
		}
		own.Faults = appendNew(own.Faults, gpu+"/"+fault)
		if incident != "" {
			own.Incidents = appendNew(own.Incidents, incident)
		}
		err = c.patchNode(ctx, n, own, taints, n.Spec.Unschedulable || cordon, nil)
		if apierrors.IsConflict(err) {
			continue // someone wrote the node between read and write: read again
		}
		return tainted, cordoned, err
	}
	return false, false, fmt.Errorf("node %s kept changing; nothing written", name)
}

func taintValue(fault string) string { return strings.ReplaceAll(fault, "_", "-") }

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// patchNode writes annotations, taints and spec.unschedulable in one merge
// patch that carries the resourceVersion read: a node changed since then
// gets 409 Conflict and nothing is written. extra annotations are set (a
// nil value removes one); own nil removes the ownership annotation.
func (c *Client) patchNode(ctx context.Context, n *corev1.Node, own *Ownership, taints []corev1.Taint, unschedulable bool, extra map[string]*string) error {
	ann := map[string]any{}
	if own != nil {
		b, err := json.Marshal(own)
		if err != nil {
			return err
		}
		ann[OwnerAnnotation] = string(b)
	} else {
		ann[OwnerAnnotation] = nil
	}
	for k, v := range extra {
		if v == nil {
			ann[k] = nil
		} else {
			ann[k] = *v
		}
	}
	if taints == nil {
		taints = []corev1.Taint{}
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": n.ResourceVersion, "annotations": ann},
		"spec":     map[string]any{"unschedulable": unschedulable, "taints": taints},
	})
	if err != nil {
		return err
	}
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	_, err = c.cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: Component})
	return err
}

// SetCondition writes the GPUHealthy condition through the status
// subresource.
func (c *Client) SetCondition(ctx context.Context, name string, healthy bool, reason, message string) error {
	return c.setCondition(ctx, name, ConditionType, healthy, reason, message)
}

// SetNetworkCondition writes the GPUNetworkHealthy condition through the
// status subresource.
func (c *Client) SetNetworkCondition(ctx context.Context, name string, healthy bool, reason, message string) error {
	return c.setCondition(ctx, name, NetworkConditionType, healthy, reason, message)
}

func (c *Client) setCondition(ctx context.Context, name string, typ corev1.NodeConditionType, healthy bool, reason, message string) error {
	status := corev1.ConditionFalse
	if healthy {
		status = corev1.ConditionTrue
	}
	now := metav1.NewTime(c.now())
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: typ, Status: status, Reason: reason, Message: message,
		LastHeartbeatTime: now, LastTransitionTime: now,
	}}}})
	if err != nil {
		return err
	}
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	_, err = c.cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{FieldManager: Component}, "status")
	return err
}

// Event records an Event on the node, in the default namespace where
// Events about nodes live.
func (c *Client) Event(ctx context.Context, node, eventType, reason, message string) error {
	now := c.now()
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	_, err := c.cs.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: node + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node), APIVersion: "v1"},
		Reason:         reason, Message: message, Type: eventType,
		Source:         corev1.EventSource{Component: Component},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
		ReportingController: Component, ReportingInstance: Component,
	}, metav1.CreateOptions{})
	return err
}

// Request sets a reset or reboot request annotation, recorded as ours.
func (c *Client) Request(ctx context.Context, name, key, value string) error {
	return c.annotateOwned(ctx, name, func(n *corev1.Node, own *Ownership) map[string]*string {
		own.Request = key
		v := value
		if key == ResetRequestAnnotation {
			if prev := n.Annotations[key]; prev != "" && !slices.Contains(strings.Split(prev, ","), value) {
				v = prev + "," + value
			} else if prev != "" {
				v = prev
			}
		}
		return map[string]*string{key: &v}
	})
}

// annotateOwned reads the node, lets edit change the ownership record
// and name the annotations to set (nil: none), and writes both in one
// patch under the node's resourceVersion, reading again on a conflict.
func (c *Client) annotateOwned(ctx context.Context, name string, edit func(n *corev1.Node, own *Ownership) map[string]*string) error {
	for attempt := 0; attempt < 3; attempt++ {
		n, err := c.get(ctx, name)
		if err != nil {
			return err
		}
		own := view(n).Owner
		if own == nil {
			own = &Ownership{Since: c.now().UTC().Format(time.RFC3339)}
		}
		extra := edit(n, own)
		err = c.patchNode(ctx, n, own, n.Spec.Taints, n.Spec.Unschedulable, extra)
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("node %s kept changing; nothing written", name)
}

// Restore undoes what the ownership annotation says this component did:
// uncordons the node if it cordoned it, removes its taints and requests,
// and sets GPUHealthy back to True. A node it does not own is left alone.
func (c *Client) Restore(ctx context.Context, name, message string) (bool, error) {
	for attempt := 0; attempt < 3; attempt++ {
		n, err := c.get(ctx, name)
		if err != nil {
			return false, err
		}
		own := view(n).Owner
		if own == nil {
			return false, nil
		}
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if !slices.Contains(own.Taints, t.Key) {
				taints = append(taints, t)
			}
		}
		unschedulable := n.Spec.Unschedulable && !own.Cordoned
		err = c.patchNode(ctx, n, nil, taints, unschedulable, map[string]*string{
			ResetRequestAnnotation: nil, RebootRequestAnnotation: nil, nodeagent.ResetIncident: nil, nodeagent.ResetResult: nil,
		})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		return true, c.SetCondition(ctx, name, true, "GPUHealthy", message)
	}
	return false, fmt.Errorf("node %s kept changing; nothing written", name)
}
