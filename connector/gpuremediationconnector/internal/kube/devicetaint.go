package kube

// DRA device taints (KEP-5055): on a cluster that allocates GPUs through
// Dynamic Resource Allocation, a DeviceTaintRule selecting one device of
// one driver's pool stops new claims on that device alone, where a node
// taint or a cordon stops every pod of the node.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/otelcol-gpu/otelcol-gpu/internal/resourceslices"
)

const (
	// DeviceTaintKey is the key of the taint each DeviceTaintRule puts on
	// a device; its value is the fault (xid-79).
	DeviceTaintKey = Prefix + "unhealthy"
	// DeviceTaintGPULabel on each rule holds the GPU's UUID (or, were it no
	// valid label value, a hash of it): the rules of one GPU are found by
	// it, whatever devices its driver publishes by the time they are
	// removed.
	DeviceTaintGPULabel = Prefix + "gpu"
	// managedByLabel marks the rules this component wrote: it only ever
	// deletes those.
	managedByLabel = "app.kubernetes.io/managed-by"
	// deviceTaintRulePrefix starts every rule's name.
	deviceTaintRulePrefix = "gpu-remediation-"
	// GPUAnnotation and IncidentAnnotation on a rule say, for a person,
	// which GPU and which incident it is for.
	GPUAnnotation      = Prefix + "gpu"
	IncidentAnnotation = Prefix + "incident"
	resourceGroup      = "resource.k8s.io"
)

// Versions of resource.k8s.io, newest first: ResourceSlices are v1 from
// Kubernetes 1.34 (v1beta2 in 1.33, v1beta1 in 1.32); DeviceTaintRules are
// v1alpha3 from 1.33 to 1.35, v1beta2 from 1.36 and v1 from 1.37. The
// object's fields that are read and written here are the same in each.
var (
	sliceVersions = []string{"v1", "v1beta2", "v1beta1"}
	ruleVersions  = []string{"v1", "v1beta2", "v1alpha3"}
)

// ErrNoDeviceTaintRules says the API server serves no DeviceTaintRules
// (Kubernetes before 1.33, or without the DRADeviceTaints feature gate and
// resource.k8s.io/v1alpha3 turned on).
var ErrNoDeviceTaintRules = errors.New("the API server serves no DeviceTaintRules (resource.k8s.io): feature gates DRADeviceTaints (and, from Kubernetes 1.35, DRADeviceTaintRules), and --runtime-config=resource.k8s.io/v1alpha3=true before 1.36")

// Device is one device of a DRA driver's ResourceSlices.
type Device struct {
	Driver, Pool, Name string
	UUID, ParentUUID   string
}

// draClient reads ResourceSlices and writes DeviceTaintRules in the
// version the API server serves, found once through discovery.
type draClient struct {
	dyn  dynamic.Interface
	disc discovery.DiscoveryInterface

	mu       sync.Mutex
	versions map[string]string // resource → version served ("" if none)
}

// served returns the newest version of resource.k8s.io serving resource;
// "" when none does. Only a version found is remembered: an API turned on
// later is found at the next fault.
// Discovery takes no context: the client's timeout bounds it.
func (d *draClient) served(resource string, versions []string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, ok := d.versions[resource]; ok {
		return v, nil
	}
	for _, v := range versions {
		list, err := d.disc.ServerResourcesForGroupVersion(resourceGroup + "/" + v)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("discovery of %s/%s: %w", resourceGroup, v, err)
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				d.versions[resource] = v
				return v, nil
			}
		}
	}
	return "", nil
}

// GPUDevices lists the devices of driver on node that are the GPU (their
// uuid attribute is gpu) or a partition of it (their parentUUID is gpu:
// a MIG instance, which a broken GPU takes down with it), from the newest
// generation of each pool. None when the GPU is no DRA device of driver.
func (c *Client) GPUDevices(ctx context.Context, driver, node, gpu string) ([]Device, error) {
	v, err := c.dra.served("resourceslices", sliceVersions)
	if err != nil || v == "" {
		return nil, err
	}
	lctx, cancel := c.ctx(ctx)
	defer cancel()
	list, err := c.dra.dyn.Resource(schema.GroupVersionResource{Group: resourceGroup, Version: v, Resource: "resourceslices"}).
		List(lctx, metav1.ListOptions{FieldSelector: "spec.driver=" + driver + ",spec.nodeName=" + node})
	if err != nil {
		return nil, err
	}
	type sliceDevices struct {
		generation int64
		devices    []Device
	}
	pools := map[string]sliceDevices{}
	for i := range list.Items {
		pool, generation, devices, err := resourceslices.ReadSlice(list.Items[i].Object, driver)
		if err != nil {
			return nil, fmt.Errorf("ResourceSlice %s: %w", list.Items[i].GetName(), err)
		}
		p := pools[pool]
		if generation < p.generation {
			continue // a pool's older generation, left behind until its driver deletes it
		}
		if generation > p.generation {
			p = sliceDevices{generation: generation}
		}
		for _, dev := range devices {
			if dev.UUID == gpu || dev.ParentUUID == gpu {
				p.devices = append(p.devices, Device{Driver: driver, Pool: pool, Name: dev.Name, UUID: dev.UUID, ParentUUID: dev.ParentUUID})
			}
		}
		pools[pool] = p
	}
	var out []Device
	for _, p := range pools {
		out = append(out, p.devices...)
	}
	slices.SortFunc(out, func(a, b Device) int { return strings.Compare(a.Pool+"/"+a.Name, b.Pool+"/"+b.Name) })
	return out, nil
}

// DeviceTaintRuleName is the rule's name for one device of a GPU: the same
// for the same GPU and device, so that writing it again is a no-op (the
// API server answers AlreadyExists) and a new leader writes no second one.
func DeviceTaintRuleName(gpu string, d Device) string {
	name := deviceTaintRulePrefix + sanitize(gpu) + "-" + sanitize(d.Pool) + "-" + sanitize(d.Name)
	if len(name) > validation.DNS1123SubdomainMaxLength || len(validation.IsDNS1123Subdomain(name)) > 0 {
		sum := sha256.Sum256([]byte(gpu + "\x00" + d.Driver + "\x00" + d.Pool + "\x00" + d.Name))
		name = deviceTaintRulePrefix + hex.EncodeToString(sum[:16])
	}
	return name
}

// sanitize lowers s and turns what a DNS subdomain may not hold into '-'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, s)
}

// GPULabel is the value of DeviceTaintGPULabel for a GPU.
func GPULabel(gpu string) string {
	if len(validation.IsValidLabelValue(gpu)) == 0 {
		return gpu
	}
	sum := sha256.Sum256([]byte(gpu))
	return "sha256-" + hex.EncodeToString(sum[:20])
}

// TaintDevices writes one DeviceTaintRule with effect NoSchedule for each
// device of driver on node that is the GPU or a partition of it, named
// after the GPU and the device, labelled with the GPU. It returns the
// rules' names, those that were there already included: none when the
// GPU is no DRA device of driver. ErrNoDeviceTaintRules when the API
// server serves no DeviceTaintRules.
func (c *Client) TaintDevices(ctx context.Context, driver, node, gpu, value, incident string) ([]string, error) {
	gvr, err := c.ruleResource()
	if err != nil {
		return nil, err
	}
	devices, err := c.GPUDevices(ctx, driver, node, gpu)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range devices {
		name := DeviceTaintRuleName(gpu, d)
		rule := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.GroupVersion().String(),
			"kind":       "DeviceTaintRule",
			"metadata": map[string]any{
				"name":        name,
				"labels":      map[string]any{DeviceTaintGPULabel: GPULabel(gpu), managedByLabel: Component},
				"annotations": map[string]any{GPUAnnotation: gpu, IncidentAnnotation: incident},
			},
			"spec": map[string]any{
				"deviceSelector": map[string]any{"driver": d.Driver, "pool": d.Pool, "device": d.Name},
				"taint":          map[string]any{"key": DeviceTaintKey, "value": value, "effect": "NoSchedule"},
			},
		}}
		cctx, cancel := c.ctx(ctx)
		_, err := c.dra.dyn.Resource(gvr).Create(cctx, rule, metav1.CreateOptions{FieldManager: Component})
		cancel()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return names, err
		}
		names = append(names, name)
	}
	return names, nil
}

// DeviceTaintRules lists the names of the rules this component wrote for
// the GPU.
func (c *Client) DeviceTaintRules(ctx context.Context, gpu string) ([]string, error) {
	gvr, err := c.ruleResource()
	if err != nil {
		return nil, err
	}
	lctx, cancel := c.ctx(ctx)
	defer cancel()
	list, err := c.dra.dyn.Resource(gvr).List(lctx, metav1.ListOptions{
		LabelSelector: DeviceTaintGPULabel + "=" + GPULabel(gpu) + "," + managedByLabel + "=" + Component,
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].GetAnnotations()[GPUAnnotation] == gpu {
			names = append(names, list.Items[i].GetName())
		}
	}
	slices.Sort(names)
	return names, nil
}

// UntaintDevices deletes the rules this component wrote for the GPU (found
// by its label, so that a rule for a device the driver no longer
// publishes goes too) and returns their names. A person's rules are left.
func (c *Client) UntaintDevices(ctx context.Context, gpu string) ([]string, error) {
	names, err := c.DeviceTaintRules(ctx, gpu)
	if err != nil {
		return nil, err
	}
	gvr, err := c.ruleResource()
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		dctx, cancel := c.ctx(ctx)
		err := c.dra.dyn.Resource(gvr).Delete(dctx, name, metav1.DeleteOptions{})
		cancel()
		if err != nil && !apierrors.IsNotFound(err) {
			return names[:i], err
		}
	}
	return names, nil
}

func (c *Client) ruleResource() (schema.GroupVersionResource, error) {
	v, err := c.dra.served("devicetaintrules", ruleVersions)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	if v == "" {
		return schema.GroupVersionResource{}, ErrNoDeviceTaintRules
	}
	return schema.GroupVersionResource{Group: resourceGroup, Version: v, Resource: "devicetaintrules"}, nil
}
