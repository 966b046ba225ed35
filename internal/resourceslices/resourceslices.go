// Package resourceslices follows the ResourceSlices of one Dynamic Resource
// Allocation driver, listed and then watched like an informer does, and
// answers which GPU a device the kubelet names by driver, pool and device
// name is: the kubelet's PodResources API says which devices a pod's claim
// holds, but not their UUIDs; the driver publishes those as device
// attributes.
//
// resource.k8s.io/v1 is read where the API server serves it (Kubernetes
// 1.34 and later), v1beta1 otherwise (1.32 and 1.33 with DRA turned on).
package resourceslices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

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
	client   *client
	driver   string
	nodeName string
	logger   *zap.Logger
	// retry is the longest wait before asking again, after a failure.
	retry time.Duration

	mu sync.RWMutex
	// slices are each slice's pool, generation and devices, by slice name.
	slices map[string]slice
	// index is the devices of the newest generation of each pool.
	index map[key]Device
	gen   atomic.Uint64
	// version is the API version read; empty until chosen.
	version atomic.Value

	cancel  context.CancelFunc
	done    chan struct{}
	synced  atomic.Bool
	failing bool // a failure was logged and none succeeded since
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
func New(config *Config, driver, nodeName string, logger *zap.Logger) *Watcher {
	return &Watcher{
		client: newClient(config), driver: driver, nodeName: nodeName, logger: logger,
		retry:  time.Minute,
		slices: map[string]slice{},
		index:  map[key]Device{},
	}
}

// Start follows the slices until Stop. It does not wait for the first
// list: until then, and while the API is unreachable, nothing resolves.
func (w *Watcher) Start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	w.done = make(chan struct{})
	go func() {
		defer close(w.done)
		w.run(ctx)
	}()
}

// Stop stops following and waits for it.
func (w *Watcher) Stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.client.http.CloseIdleConnections()
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

// Synced says whether the slices were listed once.
func (w *Watcher) Synced() bool { return w.synced.Load() }

// Version is the version of resource.k8s.io being read, or empty.
func (w *Watcher) Version() string {
	v, _ := w.version.Load().(string)
	return v
}

// run finds the version served, then lists and watches until ctx ends,
// listing again whenever a watch cannot go on, after a back-off when a
// request failed.
func (w *Watcher) run(ctx context.Context) {
	var version string
	backoff := time.Second
	for ctx.Err() == nil {
		var err error
		if version == "" {
			if version, err = w.servedVersion(ctx); err == nil {
				w.version.Store(version)
				w.logger.Info("Following DRA ResourceSlices", zap.String("driver", w.driver), zap.String("api", "resource.k8s.io/"+version))
			} else if !w.failing {
				w.failing = true
				w.logger.Warn("DRA attribution unavailable; retrying", zap.String("driver", w.driver), zap.Error(err), zap.Duration("retry", w.retry))
			}
		}
		if version != "" {
			err = w.listAndWatch(ctx, version)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = time.Second // the watch ended as watches do: list again
			continue
		}
		if version != "" && !w.failing {
			w.failing = true
			w.logger.Warn("Cannot read DRA ResourceSlices; retrying", zap.String("driver", w.driver), zap.Error(err))
		}
		wait := min(backoff, w.retry)
		if version == "" {
			wait = w.retry
		}
		backoff *= 2
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// servedVersion asks the API server's discovery which version of
// resourceslices it serves.
func (w *Watcher) servedVersion(ctx context.Context) (string, error) {
	var errs []string
	for _, v := range []string{V1, V1beta1} {
		var list struct {
			Resources []struct {
				Name string `json:"name"`
			} `json:"resources"`
		}
		if err := w.client.getJSON(ctx, "/apis/resource.k8s.io/"+v, nil, &list); err != nil {
			errs = append(errs, fmt.Sprintf("resource.k8s.io/%s: %v", v, err))
			continue
		}
		for _, r := range list.Resources {
			if r.Name == "resourceslices" {
				return v, nil
			}
		}
		errs = append(errs, fmt.Sprintf("resource.k8s.io/%s: no resourceslices", v))
	}
	return "", fmt.Errorf("the API server serves no ResourceSlices (%s)", strings.Join(errs, "; "))
}

// sliceObject is the part of a ResourceSlice the watcher reads, in both
// versions: v1's devices have their attributes at the top, v1beta1's
// under basic.
type sliceObject struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Driver string `json:"driver"`
		Pool   struct {
			Name       string `json:"name"`
			Generation int64  `json:"generation"`
		} `json:"pool"`
		Devices []struct {
			Name       string               `json:"name"`
			Attributes map[string]attribute `json:"attributes"`
			Basic      *struct {
				Attributes map[string]attribute `json:"attributes"`
			} `json:"basic"`
		} `json:"devices"`
	} `json:"spec"`
}

// attribute is a device attribute; only string attributes are read.
type attribute struct {
	String *string `json:"string"`
}

// listAndWatch lists the slices, replaces the index with them, and
// watches from the list's resource version until the watch ends (nil) or
// fails.
func (w *Watcher) listAndWatch(ctx context.Context, version string) error {
	path := "/apis/resource.k8s.io/" + version + "/resourceslices"
	sel := "spec.driver=" + w.driver
	if w.nodeName != "" {
		sel += ",spec.nodeName=" + w.nodeName
	}
	all := map[string]slice{}
	var rv, cont string
	for {
		q := url.Values{"fieldSelector": {sel}, "limit": {"500"}}
		if cont != "" {
			q.Set("continue", cont)
		}
		var list struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
				Continue        string `json:"continue"`
			} `json:"metadata"`
			Items []sliceObject `json:"items"`
		}
		if err := w.client.getJSON(ctx, path, q, &list); err != nil {
			return fmt.Errorf("list %s: %w", path, err)
		}
		for i := range list.Items {
			all[list.Items[i].Metadata.Name] = w.fromObject(&list.Items[i])
		}
		rv, cont = list.Metadata.ResourceVersion, list.Metadata.Continue
		if cont == "" {
			break
		}
	}
	w.mu.Lock()
	w.slices = all
	w.reindex()
	w.mu.Unlock()
	w.synced.Store(true)
	w.recovered()

	q := url.Values{"fieldSelector": {sel}, "watch": {"1"}, "allowWatchBookmarks": {"true"},
		"resourceVersion": {rv}, "timeoutSeconds": {"300"}}
	body, err := w.client.get(ctx, path, q)
	if err != nil {
		return fmt.Errorf("watch %s: %w", path, err)
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil
			}
			return nil // the server ended the watch (timeout, restart): list again
		}
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED":
			var obj sliceObject
			if err := json.Unmarshal(ev.Object, &obj); err != nil {
				return fmt.Errorf("watch %s: %w", path, err)
			}
			w.mu.Lock()
			if ev.Type == "DELETED" {
				delete(w.slices, obj.Metadata.Name)
			} else {
				w.slices[obj.Metadata.Name] = w.fromObject(&obj)
			}
			w.reindex()
			w.mu.Unlock()
		case "ERROR":
			var st struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(ev.Object, &st)
			if st.Code == http.StatusGone {
				return nil // the resource version is too old: list again
			}
			return fmt.Errorf("watch %s: %d %s", path, st.Code, st.Message)
		}
	}
}

// recovered logs that slices are read again after a logged failure.
func (w *Watcher) recovered() {
	if w.failing {
		w.failing = false
		w.logger.Info("DRA ResourceSlices read again", zap.String("driver", w.driver))
	}
}

// reindex rebuilds the index from the slices: a pool's devices are those of
// its newest generation; a driver republishing a pool leaves the older
// generation's slices behind until it deletes them. Slices are few (one or
// a few per node), so the whole index is rebuilt on every change. Called
// with w.mu held.
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

// fromObject reads a slice's pool and devices.
func (w *Watcher) fromObject(o *sliceObject) slice {
	devs := o.devices(w.driver)
	sl := slice{pool: o.Spec.Pool.Name, generation: o.Spec.Pool.Generation, devices: make(map[string]Device, len(devs))}
	for _, d := range devs {
		sl.devices[d.Name] = d.Device
	}
	return sl
}

// NamedDevice is a device of a ResourceSlice, by its name in the pool.
type NamedDevice struct {
	Name string
	Device
}

// devices reads the slice's devices; driver's domain may prefix the names
// of their attributes.
func (o *sliceObject) devices(driver string) []NamedDevice {
	out := make([]NamedDevice, 0, len(o.Spec.Devices))
	for i := range o.Spec.Devices {
		d := &o.Spec.Devices[i]
		attrs := d.Attributes
		if d.Basic != nil {
			attrs = d.Basic.Attributes
		}
		attr := func(name string) string {
			a, ok := attrs[name]
			if !ok {
				// The driver's domain may be spelled out.
				a = attrs[driver+"/"+name]
			}
			if a.String != nil {
				return *a.String
			}
			return ""
		}
		out = append(out, NamedDevice{d.Name, Device{UUID: attr("uuid"), ParentUUID: attr("parentUUID"), Type: attr("type"), Profile: attr("profile")}})
	}
	return out
}

// ReadSlice reads a ResourceSlice of driver, as the dynamic client decodes
// it (v1, v1beta2 or v1beta1): its pool, the pool's generation and its
// devices.
func ReadSlice(obj map[string]any, driver string) (pool string, generation int64, devices []NamedDevice, err error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", 0, nil, err
	}
	var o sliceObject
	if err := json.Unmarshal(b, &o); err != nil {
		return "", 0, nil, err
	}
	return o.Spec.Pool.Name, o.Spec.Pool.Generation, o.devices(driver), nil
}
