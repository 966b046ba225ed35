package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// RequestReset asks the node's reset actor to reset gpu for incident,
// once its pods are gone: the GPU is added to the request's list, the
// incident's id set beside it, and a previous answer removed so that the
// next one read is this request's. One patch, guarded by the node's
// resourceVersion.
func (c *Client) RequestReset(ctx context.Context, name, gpu, incident string) error {
	return c.annotateOwned(ctx, name, func(n *corev1.Node, own *Ownership) map[string]*string {
		own.Request = ResetRequestAnnotation
		own.Incidents = appendNew(own.Incidents, incident)
		uuids := gpu
		if prev := n.Annotations[ResetRequestAnnotation]; prev != "" {
			list := strings.Split(prev, ",")
			if !slices.Contains(list, gpu) {
				list = append(list, gpu)
			}
			uuids = strings.Join(list, ",")
		}
		return map[string]*string{ResetRequestAnnotation: &uuids, nodeagent.ResetIncident: &incident, nodeagent.ResetResult: nil}
	})
}

// LeaseAnnotation reads one annotation of the Lease: "" when absent (or
// when there is no Lease yet).
func (c *Client) LeaseAnnotation(ctx context.Context, ns, lease, key string) (string, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	l, err := c.cs.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return l.Annotations[key], nil
}

// SetLeaseAnnotation writes one annotation of the Lease ("" removes it),
// read-modify-write under the Lease's resourceVersion: the leader
// elector renews the same object, and a conflict is read again.
func (c *Client) SetLeaseAnnotation(ctx context.Context, ns, lease, key, value string) error {
	for attempt := 0; attempt < 5; attempt++ {
		gctx, cancel := c.ctx(ctx)
		l, err := c.cs.CoordinationV1().Leases(ns).Get(gctx, lease, metav1.GetOptions{})
		cancel()
		if err != nil {
			return err
		}
		l = l.DeepCopy()
		if value == "" {
			if _, ok := l.Annotations[key]; !ok {
				return nil
			}
			delete(l.Annotations, key)
		} else {
			if l.Annotations == nil {
				l.Annotations = map[string]string{}
			}
			if l.Annotations[key] == value {
				return nil
			}
			l.Annotations[key] = value
		}
		uctx, cancel := c.ctx(ctx)
		_, err = c.cs.CoordinationV1().Leases(ns).Update(uctx, l, metav1.UpdateOptions{FieldManager: Component})
		cancel()
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("lease %s/%s kept changing; %s not recorded", ns, lease, key)
}
