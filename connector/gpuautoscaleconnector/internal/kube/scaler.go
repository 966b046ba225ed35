// Package kube reads a target's scale and pods and writes replica counts
// through the Kubernetes scale subresource, and holds one Lease per target.
package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/retry"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
)

// Ref names a scalable object, as an HPA's scaleTargetRef does; it is
// also the connector's scale_target_ref setting.
type Ref struct {
	APIVersion string `mapstructure:"api_version"`
	Kind       string `mapstructure:"kind"`
	Name       string `mapstructure:"name"`
	Namespace  string `mapstructure:"namespace"`
}

func (r Ref) String() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }

// Validate checks that the reference names one object.
func (r *Ref) Validate() error {
	if r.APIVersion == "" || r.Kind == "" || r.Name == "" || r.Namespace == "" {
		return errors.New("needs api_version, kind, name and namespace")
	}
	if _, err := schema.ParseGroupVersion(r.APIVersion); err != nil {
		return fmt.Errorf("api_version: %w", err)
	}
	return nil
}

// Scaler reads and writes replica counts through the scale subresource of
// any kind that has one: Deployments, StatefulSets, custom resources.
type Scaler struct {
	scales  scale.ScalesGetter
	pods    corev1.PodsGetter
	mapper  meta.ResettableRESTMapper
	timeout time.Duration
}

// NewScaler returns a scaler. Discovery is lazy and cached.
func NewScaler(cfg *rest.Config, timeout time.Duration) (*Scaler, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = timeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Scaler{scales: scales, pods: cs.CoreV1(), mapper: mapper, timeout: timeout}, nil
}

func (s *Scaler) resource(ref Ref) (schema.GroupResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupResource{}, err
	}
	m, err := s.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		// A CRD installed after discovery was cached: look again once.
		s.mapper.Reset()
		if m, err = s.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version); err != nil {
			return schema.GroupResource{}, fmt.Errorf("%s: no such kind in the cluster: %w", ref, err)
		}
	}
	return m.Resource.GroupResource(), nil
}

// Scale is what the scale subresource says of an object.
type Scale struct {
	// Replicas is spec.replicas, the count an autoscaler starts from.
	Replicas int32
	// Selector is status.selector, the label selector of its pods.
	Selector string
}

// Scale reads the object's scale subresource.
func (s *Scaler) Scale(ctx context.Context, ref Ref) (Scale, error) {
	gr, err := s.resource(ref)
	if err != nil {
		return Scale{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	sc, err := s.scales.Scales(ref.Namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
	if err != nil {
		return Scale{}, explain(err, "get", gr, ref)
	}
	return Scale{Replicas: sc.Spec.Replicas, Selector: sc.Status.Selector}, nil
}

// Pods lists the pods of a namespace that a label selector selects, as the
// HPA controller lists a target's pods.
func (s *Scaler) Pods(ctx context.Context, namespace, selector string) ([]hpa.Pod, error) {
	if selector == "" {
		return nil, fmt.Errorf("the scale subresource in namespace %s has no selector (status.selector): the autoscaler cannot tell the target's pods", namespace)
	}
	if _, err := labels.Parse(selector); err != nil {
		return nil, fmt.Errorf("the scale subresource's selector %q: %w", selector, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	list, err := s.pods.Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("forbidden to list pods in namespace %s: grant the collector's service account the verb \"list\" on \"pods\" (RBAC): %w", namespace, err)
		}
		return nil, fmt.Errorf("list pods in namespace %s: %w", namespace, err)
	}
	out := make([]hpa.Pod, 0, len(list.Items))
	for _, p := range list.Items {
		out = append(out, hpa.Pod{Name: p.Name, Phase: hpa.Phase(p.Status.Phase), Deleting: p.DeletionTimestamp != nil})
	}
	return out, nil
}

// Set writes the replica count, retrying when the object changed between
// reading and writing (409 Conflict). It returns the count it replaced.
func (s *Scaler) Set(ctx context.Context, ref Ref, replicas int32) (int32, error) {
	gr, err := s.resource(ref)
	if err != nil {
		return 0, err
	}
	var before int32
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		sc, err := s.scales.Scales(ref.Namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
		if err != nil {
			return explain(err, "get", gr, ref)
		}
		before = sc.Spec.Replicas
		if before == replicas {
			return nil
		}
		sc.Spec.Replicas = replicas
		if _, err := s.scales.Scales(ref.Namespace).Update(ctx, gr, sc, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsConflict(err) {
				return err // retried with a fresh read
			}
			return explain(err, "update", gr, ref)
		}
		return nil
	})
	return before, err
}

// explain turns an API error into one that says what to do about it.
func explain(err error, verb string, gr schema.GroupResource, ref Ref) error {
	resource := gr.Resource + "/scale"
	if gr.Group != "" {
		resource = gr.Group + "/" + resource
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: forbidden to %s %s in namespace %s: grant the collector's service account the verb %q on %q (RBAC): %w",
			ref, verb, resource, ref.Namespace, verb, resource, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: not found: %w", ref, err)
	}
	return fmt.Errorf("%s: %s %s: %w", ref, verb, resource, err)
}
