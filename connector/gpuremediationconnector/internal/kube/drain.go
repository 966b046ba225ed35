package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// A drain decides each pod as `kubectl drain` does: k8s.io/kubectl,
// pkg/drain/filters.go (Helper.makeFilters: skipDeletedFilter,
// daemonSetFilter, mirrorPodFilter, localStorageFilter, unreplicatedFilter,
// in that order) and pkg/drain/drain.go (GetPodsForDeletion refuses the
// node when a filter returns an error; evictPods, then waitForDelete until
// every evicted pod is gone). The connector's README tables each case and
// where this drain differs. The reasons name the connector's settings, so
// that a refusal says which key would allow the drain.
const (
	keyForce    = "drain::force"
	keyEmptyDir = "drain::delete_emptydir_data"
)

// DrainPolicy holds kubectl drain's switches, under the names of the
// connector's drain:: settings.
type DrainPolicy struct {
	// GracePeriod overrides each pod's termination grace period; negative
	// keeps the pod's own (kubectl --grace-period, whose default is -1).
	// Zero deletes at once.
	GracePeriod time.Duration
	// Force evicts pods that no controller manages: nothing recreates
	// them (kubectl --force). Without it such a pod refuses the drain.
	Force bool
	// DeleteEmptyDirData evicts pods with emptyDir volumes, whose data is
	// lost with them (kubectl --delete-emptydir-data). Without it such a
	// pod refuses the drain.
	DeleteEmptyDirData bool
	// SkipWaitForDeleteTimeout: a pod whose deletion timestamp is older
	// than this is no longer waited for (kubectl
	// --skip-wait-for-delete-timeout); 0 waits for every pod.
	SkipWaitForDeleteTimeout time.Duration
	// PodSelector, a label selector, restricts the drain to the pods it
	// matches (kubectl --pod-selector); empty selects every pod.
	PodSelector string
}

// DrainResult is one pass of a drain.
type DrainResult struct {
	// Evicted: pods whose eviction was accepted in this pass.
	Evicted []string
	// Blocked: pods a PodDisruptionBudget does not let go yet.
	Blocked []string
	// Terminating: pods whose deletion is under way (evicted in this pass
	// or before, or deleted by someone else) but that still exist, within
	// their grace period or held by a finalizer.
	Terminating []string
	// Refused: why the drain may not go on, one "namespace/pod: reason
	// (key)" per missing setting, e.g. "ml/notebook: no controller
	// (drain::force)". When it is not empty the pass evicted nothing, as
	// kubectl drain evicts nothing from a node it refuses.
	Refused []string
	// Remaining counts the pods the drain is not done with: those Blocked
	// or Terminating; after a refusal, every pod it would evict or wait
	// for; after an API error, every pod not known to be gone. The node is
	// drained when it is 0: no pod left to evict and none still
	// terminating, so a reset or a reboot may follow.
	Remaining int
}

// Waiting says what a drain that is not done waits on.
func (r DrainResult) Waiting() string {
	var parts []string
	if len(r.Blocked) > 0 {
		parts = append(parts, "held by PodDisruptionBudgets: "+strings.Join(r.Blocked, ", "))
	}
	if len(r.Terminating) > 0 {
		parts = append(parts, "still terminating: "+strings.Join(r.Terminating, ", "))
	}
	if len(r.Refused) > 0 {
		parts = append(parts, "refused: "+strings.Join(r.Refused, "; "))
	}
	return strings.Join(parts, "; ")
}

// podAction is what a pass does with one pod.
type podAction int

const (
	actEvict  podAction = iota // ask the Eviction API
	actSkip                    // leave it on the node; the drain does not wait for it
	actWait                    // its deletion is under way: wait until it is gone
	actRefuse                  // the policy does not allow it: the pass evicts nothing
)

// decide classifies a pod as kubectl's filters do, in their order; the
// first filter that keeps a pod decides. For a refused pod it returns
// every setting the pod needs, where kubectl names only the first.
func (p DrainPolicy) decide(pod *corev1.Pod, now time.Time) (podAction, []string) {
	// skipDeletedFilter: a pod deleted long ago (a node that stopped
	// answering never confirms the deletion) is not waited for.
	if p.deletedLongAgo(pod, now) {
		return actSkip, nil
	}
	// daemonSetFilter. We never evict a DaemonSet's pod, whatever the
	// setting: kubectl does so only with --ignore-daemonsets, which a drain
	// of a GPU node always wants, because the DaemonSet controller puts its
	// pod straight back (it tolerates the cordon) and its pods are the
	// node's agents: the device plugin, the DCGM exporter, the collector,
	// and the node agent that performs the reset or reboot requested next.
	// kubectl deletes a finished DaemonSet pod and, with --force, one whose
	// DaemonSet is gone; we leave both (they hold no GPU, and looking the
	// DaemonSet up would need a permission this component does not have).
	// A controller of kind DaemonSet from any API group counts (OpenKruise's
	// Advanced DaemonSet too), where kubectl matches apps/v1 only.
	if c := metav1.GetControllerOf(pod); c != nil && c.Kind == "DaemonSet" {
		return actSkip, nil
	}
	// mirrorPodFilter: a static pod's mirror belongs to the kubelet, which
	// recreates it from the node's manifest; evicting it achieves nothing.
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return actSkip, nil
	}
	// Not in kubectl: a pod already being deleted (by an earlier pass or by
	// someone else) is waited for, not evicted again and not refused.
	// kubectl evicts it again, which can only shorten a grace period someone
	// chose, and applies --force and --delete-emptydir-data to it, though
	// its deletion, and its data's, is decided already.
	if pod.DeletionTimestamp != nil {
		return actWait, nil
	}
	// localStorageFilter and unreplicatedFilter both let a finished pod
	// (Succeeded or Failed) go: it runs nothing, and its eviction deletes it
	// at once, no PodDisruptionBudget asked.
	if finished(pod) {
		return actEvict, nil
	}
	var need []string
	// localStorageFilter: emptyDir data, on disk or in memory, is lost.
	if hasEmptyDir(pod) && !p.DeleteEmptyDirData {
		need = append(need, "emptyDir volume ("+keyEmptyDir+")")
	}
	// unreplicatedFilter: no controller recreates the pod elsewhere.
	if metav1.GetControllerOf(pod) == nil && !p.Force {
		need = append(need, "no controller ("+keyForce+")")
	}
	if len(need) > 0 {
		return actRefuse, need
	}
	return actEvict, nil
}

// deletedLongAgo is kubectl's shouldSkipPod: a deletion timestamp older
// than SkipWaitForDeleteTimeout. The API server sets that timestamp to
// the end of the pod's grace period, so the time counts from there.
func (p DrainPolicy) deletedLongAgo(pod *corev1.Pod, now time.Time) bool {
	return p.SkipWaitForDeleteTimeout > 0 && pod.DeletionTimestamp != nil &&
		now.Sub(pod.DeletionTimestamp.Time) > p.SkipWaitForDeleteTimeout
}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func hasEmptyDir(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

// Drain makes one pass of a drain of the node: it decides each pod by the
// policy and, unless a pod refuses the drain, asks the Eviction API to
// evict each pod decided so (PodDisruptionBudgets have their say), then
// lists the node's pods again: the evicted ones still there are
// Terminating. With only set, only those pods (namespace/name) are
// considered, refusals included. Call it again until Remaining is 0: the
// pods are gone, not only their evictions accepted.
func (c *Client) Drain(ctx context.Context, node string, only map[string]bool, pol DrainPolicy) (DrainResult, error) {
	var res DrainResult
	sel, err := labels.Parse(pol.PodSelector)
	if err != nil {
		return res, fmt.Errorf("drain::pod_selector: %w", err)
	}
	pods, err := c.podsOn(ctx, node, sel.String())
	if err != nil {
		return res, err
	}
	now := c.now()
	var evict []*corev1.Pod
	refused := 0
	for i := range pods {
		p := &pods[i]
		id := p.Namespace + "/" + p.Name
		if only != nil && !only[id] {
			continue
		}
		act, need := pol.decide(p, now)
		switch act {
		case actEvict:
			evict = append(evict, p)
		case actWait:
			res.Terminating = append(res.Terminating, id)
		case actRefuse:
			refused++
			for _, n := range need {
				res.Refused = append(res.Refused, id+": "+n)
			}
		}
	}
	if refused > 0 {
		// GetPodsForDeletion's errors stop kubectl drain before its first
		// eviction: a node is drained entirely or not at all.
		res.Remaining = refused + len(evict) + len(res.Terminating)
		return res, nil
	}
	evicted := map[types.UID]string{}
	for i, p := range evict {
		id := p.Namespace + "/" + p.Name
		err := c.evict(ctx, p, pol.GracePeriod)
		switch {
		case err == nil:
			res.Evicted = append(res.Evicted, id)
			evicted[p.UID] = id
		case apierrors.IsNotFound(err):
			// Gone already.
		case apierrors.IsTooManyRequests(err):
			res.Blocked = append(res.Blocked, id)
		case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// Its namespace is being deleted, which deletes the pod; an
			// eviction is refused meanwhile. kubectl retries it until the
			// pod is marked deleted and then waits: so does the next pass.
			res.Terminating = append(res.Terminating, id)
		default:
			res.Remaining = len(res.Evicted) + len(res.Blocked) + len(res.Terminating) + len(evict) - i
			return res, err
		}
	}
	if len(evicted) > 0 {
		// waitForDelete: a pod is gone when it is not found, or when the
		// name holds another pod (another UID). Pods do not move between
		// nodes, so listing the node's pods again (which the component may
		// do, where it may not get a pod) tells the same.
		still, err := c.podsOn(ctx, node, "")
		if err != nil {
			res.Remaining = len(res.Evicted) + len(res.Blocked) + len(res.Terminating)
			return res, err
		}
		for i := range still {
			if id, ok := evicted[still[i].UID]; ok && !pol.deletedLongAgo(&still[i], now) {
				res.Terminating = append(res.Terminating, id)
			}
		}
		sort.Strings(res.Terminating)
	}
	res.Remaining = len(res.Blocked) + len(res.Terminating)
	return res, nil
}

// podsOn lists the node's pods that match the label selector, by
// namespace/name.
func (c *Client) podsOn(ctx context.Context, node, selector string) ([]corev1.Pod, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	list, err := c.cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		LabelSelector: selector,
	})
	if err != nil {
		return nil, err
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	return items, nil
}

// evict asks the Eviction API to evict the pod; grace < 0 leaves the
// pod's own grace period.
func (c *Client) evict(ctx context.Context, p *corev1.Pod, grace time.Duration) error {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
	if grace >= 0 {
		s := int64(grace / time.Second)
		ev.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: &s}
	}
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	return c.cs.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev)
}
