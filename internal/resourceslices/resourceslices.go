// Package resourceslices follows the ResourceSlices of one Dynamic Resource
// Allocation driver through an informer and answers which GPU a device the
// kubelet names by driver, pool and device name is: the kubelet's
// PodResources API says which devices a pod's claim holds, but not their
// UUIDs; the driver publishes those as device attributes.
//
// resource.k8s.io/v1 is read where the API server serves it (Kubernetes
// 1.34 and later), v1beta1 otherwise (1.32 and 1.33 with DRA turned on).
package resourceslices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// The client knows resource.k8s.io's two versions and nothing else: the
// typed clientset of every API group would triple what this package adds
// to a node agent's binary and its start-up. Its scheme is made when a
// watcher is, not at start-up: a collector without dra keeps no part of it
// in its heap, which every garbage collection would mark again.
var (
	schemeOnce sync.Once
	codecs     serializer.CodecFactory
	params     runtime.ParameterCodec
)

func makeScheme() {
	scheme := runtime.NewScheme()
	// Adding a package's own types to a fresh scheme cannot fail.
	_ = resourcev1.AddToScheme(scheme)
	_ = resourcev1beta1.AddToScheme(scheme)
	codecs = serializer.NewCodecFactory(scheme)
	params = runtime.NewParameterCodec(scheme)
}

// Device is what a driver publishes about one of its devices. The NVIDIA
// DRA driver (gpu.nvidia.com) publishes a whole GPU with type "gpu" and its
// GPU-… uuid, and a MIG instance with type "mig", its MIG-… uuid, its
// parent GPU's parentUUID and its profile (1g.10gb).
type Device struct {
	UUID       string
	ParentUUID string
	Type       string
	Profile    string
}

// Versions of resource.k8s.io the watcher reads, in order of preference.
const (
	V1      = "v1"
	V1beta1 = "v1beta1"
)

// Watcher indexes the devices of one driver's ResourceSlices by pool and
// device name. Its zero value is not usable; use New.
type Watcher struct {
	config   *rest.Config
	driver   string
	nodeName string
	logger   *zap.Logger
	// retry is how long to wait before asking again which version of the
	// API is served, when none is.
	retry time.Duration

	mu sync.RWMutex
	// slices are each slice's pool, generation and devices, by slice name.
	slices map[string]slice
	// index is the devices of the newest generation of each pool.
	index map[key]Device
	gen   atomic.Uint64
	// version is the API version the informer reads; empty until chosen.
	version atomic.Value

	cancel  context.CancelFunc
	done    chan struct{}
	synced  atomic.Bool
	failing atomic.Bool
}

type key struct{ pool, device string }

type slice struct {
	pool       string
	generation int64
	devices    map[string]Device
}

// New returns a watcher of driver's slices through the API server of
// config. With nodeName, only the slices of that node are read (a node
// agent's own GPUs); empty reads them all.
func New(config *rest.Config, driver, nodeName string, logger *zap.Logger) *Watcher {
	schemeOnce.Do(makeScheme)
	return &Watcher{
		config: rest.CopyConfig(config), driver: driver, nodeName: nodeName, logger: logger,
		retry:  time.Minute,
		slices: map[string]slice{},
		index:  map[key]Device{},
	}
}

// Start runs the informer until Stop. It does not wait for the first list:
// until then, and while the API is unreachable, nothing resolves.
func (w *Watcher) Start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	w.done = make(chan struct{})
	go func() {
		defer close(w.done)
		w.run(ctx)
	}()
}

// Stop stops the informer and waits for it.
func (w *Watcher) Stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
}

// Resolve returns the device named pool/device, as its driver publishes it.
func (w *Watcher) Resolve(pool, device string) (Device, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	d, ok := w.index[key{pool, device}]
	return d, ok
}

// UUID returns the uuid attribute of the device named pool/device: a GPU's
// GPU-…, a MIG instance's MIG-….
func (w *Watcher) UUID(pool, device string) (string, bool) {
	d, ok := w.Resolve(pool, device)
	return d.UUID, ok && d.UUID != ""
}

// Generation changes whenever an answer of Resolve may have.
func (w *Watcher) Generation() uint64 { return w.gen.Load() }

// Synced says whether the informer has listed the slices once.
func (w *Watcher) Synced() bool { return w.synced.Load() }

// Version is the version of resource.k8s.io being read, or empty.
func (w *Watcher) Version() string {
	v, _ := w.version.Load().(string)
	return v
}

func (w *Watcher) run(ctx context.Context) {
	warned := false
	for {
		version, client, err := w.servedVersion(ctx)
		if err == nil {
			w.version.Store(version)
			w.logger.Info("Following DRA ResourceSlices", zap.String("driver", w.driver), zap.String("api", "resource.k8s.io/"+version))
			w.inform(ctx, version, client)
			return
		}
		if !warned {
			w.logger.Warn("DRA attribution unavailable; retrying", zap.String("driver", w.driver), zap.Error(err), zap.Duration("retry", w.retry))
			warned = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.retry):
		}
	}
}

// servedVersion asks the API server's discovery which version of
// resourceslices it serves, and returns a client of that version.
func (w *Watcher) servedVersion(ctx context.Context) (string, *rest.RESTClient, error) {
	var errs []string
	for _, v := range []string{V1, V1beta1} {
		client, err := w.client(v)
		if err != nil {
			return "", nil, err
		}
		raw, err := client.Get().AbsPath("/apis/resource.k8s.io/" + v).Do(ctx).Raw()
		if err != nil {
			errs = append(errs, fmt.Sprintf("resource.k8s.io/%s: %v", v, err))
			continue
		}
		var list metav1.APIResourceList
		if err := json.Unmarshal(raw, &list); err != nil {
			errs = append(errs, fmt.Sprintf("resource.k8s.io/%s: discovery: %v", v, err))
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == "resourceslices" {
				return v, client, nil
			}
		}
		errs = append(errs, fmt.Sprintf("resource.k8s.io/%s: no resourceslices", v))
	}
	return "", nil, fmt.Errorf("the API server serves no ResourceSlices (%s)", strings.Join(errs, "; "))
}

// client returns a REST client of resource.k8s.io/version.
func (w *Watcher) client(version string) (*rest.RESTClient, error) {
	c := rest.CopyConfig(w.config)
	c.GroupVersion = &schema.GroupVersion{Group: "resource.k8s.io", Version: version}
	c.APIPath = "/apis"
	c.NegotiatedSerializer = codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	// The API server warns on every request of a deprecated version
	// (v1beta1 from 1.35); the version read is logged once, at start.
	c.WarningHandler = rest.NoWarnings{}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("resource.k8s.io/%s client: %w", version, err)
	}
	return client, nil
}

func (w *Watcher) inform(ctx context.Context, version string, client *rest.RESTClient) {
	sel := fields.Set{"spec.driver": w.driver}
	if w.nodeName != "" {
		sel["spec.nodeName"] = w.nodeName
	}
	selector := sel.AsSelector().String()
	opts := func(o metav1.ListOptions) metav1.ListOptions {
		o.FieldSelector = selector
		return o
	}
	var example runtime.Object = &resourcev1beta1.ResourceSlice{}
	newList := func() runtime.Object { return &resourcev1beta1.ResourceSliceList{} }
	if version == V1 {
		example = &resourcev1.ResourceSlice{}
		newList = func() runtime.Object { return &resourcev1.ResourceSliceList{} }
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list := newList()
			o = opts(o)
			err := client.Get().Resource("resourceslices").VersionedParams(&o, params).Do(ctx).Into(list)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o = opts(o)
			o.Watch = true
			return client.Get().Resource("resourceslices").VersionedParams(&o, params).Watch(ctx)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
	// The reflector retries with back-off; one warning says why, until a
	// slice is read again (RBAC missing, the API server away).
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		// A watch that expired or ended is relisted as a matter of course.
		if ctx.Err() != nil || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) ||
			errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return
		}
		if !w.failing.Swap(true) {
			w.logger.Warn("Cannot read DRA ResourceSlices; retrying", zap.String("driver", w.driver), zap.Error(err))
		}
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.put(obj) },
		UpdateFunc: func(_, obj any) { w.put(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if name, ok := sliceName(obj); ok {
				w.remove(name)
			}
		},
	})
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			w.synced.Store(true)
		}
	}()
	inf.RunWithContext(ctx)
}

func sliceName(obj any) (string, bool) {
	switch s := obj.(type) {
	case *resourcev1.ResourceSlice:
		return s.Name, true
	case *resourcev1beta1.ResourceSlice:
		return s.Name, true
	}
	return "", false
}

// put indexes a slice added or changed.
func (w *Watcher) put(obj any) {
	w.failing.Store(false)
	var name string
	var sl slice
	switch s := obj.(type) {
	case *resourcev1.ResourceSlice:
		name, sl = s.Name, fromV1(w.driver, s)
	case *resourcev1beta1.ResourceSlice:
		name, sl = s.Name, fromV1beta1(w.driver, s)
	default:
		return
	}
	w.mu.Lock()
	w.slices[name] = sl
	w.reindex()
	w.mu.Unlock()
}

func (w *Watcher) remove(name string) {
	w.mu.Lock()
	delete(w.slices, name)
	w.reindex()
	w.mu.Unlock()
}

// reindex rebuilds the index from the slices: a pool's devices are those of
// its newest generation; a driver republishing a pool leaves the older
// generation's slices behind until it deletes them. Slices are few (one or
// a few per node), so the whole index is rebuilt on every change.
func (w *Watcher) reindex() {
	newest := map[string]int64{}
	for _, s := range w.slices {
		if g, ok := newest[s.pool]; !ok || s.generation > g {
			newest[s.pool] = s.generation
		}
	}
	index := make(map[key]Device, len(w.index))
	for _, s := range w.slices {
		if s.generation != newest[s.pool] {
			continue
		}
		for name, d := range s.devices {
			index[key{s.pool, name}] = d
		}
	}
	w.index = index
	w.gen.Add(1)
}

func fromV1(driver string, s *resourcev1.ResourceSlice) slice {
	sl := slice{pool: s.Spec.Pool.Name, generation: s.Spec.Pool.Generation, devices: make(map[string]Device, len(s.Spec.Devices))}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		attr := func(name string) string {
			if a, ok := lookup(d.Attributes, driver, name); ok && a.StringValue != nil {
				return *a.StringValue
			}
			return ""
		}
		sl.devices[d.Name] = Device{UUID: attr("uuid"), ParentUUID: attr("parentUUID"), Type: attr("type"), Profile: attr("profile")}
	}
	return sl
}

func fromV1beta1(driver string, s *resourcev1beta1.ResourceSlice) slice {
	sl := slice{pool: s.Spec.Pool.Name, generation: s.Spec.Pool.Generation, devices: make(map[string]Device, len(s.Spec.Devices))}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		var attrs map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute
		if d.Basic != nil {
			attrs = d.Basic.Attributes
		}
		attr := func(name string) string {
			if a, ok := lookup(attrs, driver, name); ok && a.StringValue != nil {
				return *a.StringValue
			}
			return ""
		}
		sl.devices[d.Name] = Device{UUID: attr("uuid"), ParentUUID: attr("parentUUID"), Type: attr("type"), Profile: attr("profile")}
	}
	return sl
}

// lookup finds an attribute by its name in the driver's domain, which a
// slice may spell bare (uuid) or qualified (gpu.nvidia.com/uuid).
func lookup[Q ~string, A any](attrs map[Q]A, driver, name string) (A, bool) {
	if a, ok := attrs[Q(name)]; ok {
		return a, true
	}
	a, ok := attrs[Q(driver+"/"+name)]
	return a, ok
}
