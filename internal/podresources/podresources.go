// Package podresources maps GPU UUIDs to the Kubernetes containers they are
// allocated to, through the kubelet's PodResources v1 gRPC API: devices
// allocated by a device plugin by their UUIDs (nvidia.com/gpu) or PCI
// addresses (amd.com/gpu), and devices
// allocated through Dynamic Resource Allocation by their claims, whose
// driver, pool and device names a Resolver turns into UUIDs.
package podresources

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Cache holds the device-to-pod map and refreshes it at most once per
// interval. When the socket is missing or the kubelet fails, it keeps the
// last good map for one more interval, then empties it: metrics keep
// flowing, without attribution, and one warning says why.
type Cache struct {
	socket   string
	interval time.Duration
	logger   *zap.Logger

	mu       sync.RWMutex
	byDevice map[string]gpu.Pod
	// byClaim is the DRA devices of draDriver that claims hold, and dra
	// the same by UUID, as resolver answered at generation draGen;
	// draStale is set when byClaim changed since.
	byClaim   map[ClaimedDevice]gpu.Pod
	dra       map[string]gpu.Pod
	draGen    uint64
	draStale  bool
	draDriver string
	resolver  Resolver
	refreshed time.Time
	lastGood  time.Time
	warned    bool

	conn   *grpc.ClientConn
	client podresourcesv1.PodResourcesListerClient
}

// ClaimedDevice is a device allocated through DRA, as the kubelet names it.
type ClaimedDevice struct {
	Pool, Device string
}

// Resolver names the devices of a DRA driver by their UUIDs: a GPU's
// GPU-…, a MIG instance's MIG-….
type Resolver interface {
	// UUID returns the UUID of the driver's device pool/device.
	UUID(pool, device string) (string, bool)
	// Generation changes whenever an answer of UUID may have.
	Generation() uint64
}

// NewCache returns a cache for the kubelet socket at path.
func NewCache(path string, interval time.Duration, logger *zap.Logger) *Cache {
	return &Cache{socket: path, interval: interval, logger: logger}
}

// ResolveDRA attributes the devices that claims of driver hold, named
// through r. Call it before the first Refresh.
func (c *Cache) ResolveDRA(driver string, r Resolver) {
	c.draDriver, c.resolver = driver, r
}

// Refresh reloads the map if it is older than the interval, and the DRA
// devices' UUIDs whenever the resolver's answers changed.
func (c *Cache) Refresh(ctx context.Context, now time.Time) {
	if c.resolver != nil {
		defer c.resolveClaims()
	}
	if !c.refreshed.IsZero() && now.Sub(c.refreshed) < c.interval {
		return
	}
	c.refreshed = now
	m, claims, err := c.list(ctx)
	if err != nil {
		if !c.warned {
			c.logger.Warn("Pod attribution unavailable; GPU metrics flow without k8s attributes",
				zap.String("socket", c.socket), zap.Error(err))
			c.warned = true
		}
		if now.Sub(c.lastGood) > c.interval {
			c.mu.Lock()
			c.byDevice, c.byClaim, c.dra = nil, nil, nil
			c.mu.Unlock()
		}
		return
	}
	if c.warned {
		c.logger.Info("Pod attribution restored", zap.String("socket", c.socket))
		c.warned = false
	}
	c.lastGood = now
	c.mu.Lock()
	c.byDevice = m
	if c.resolver != nil {
		c.byClaim, c.draStale = claims, true
	}
	c.mu.Unlock()
}

// resolveClaims names the claimed devices by UUID, unless neither the
// claims nor the resolver's answers changed since it last did.
func (c *Cache) resolveClaims() {
	gen := c.resolver.Generation()
	c.mu.RLock()
	current := gen == c.draGen && !c.draStale
	c.mu.RUnlock()
	if current {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draGen, c.draStale = gen, false
	if len(c.byClaim) == 0 {
		c.dra = nil
		return
	}
	dra := make(map[string]gpu.Pod, len(c.byClaim))
	for d, pod := range c.byClaim {
		if uuid, ok := c.resolver.UUID(d.Pool, d.Device); ok && uuid != "" {
			dra[uuid] = pod
		}
	}
	c.dra = dra
}

// Lookup returns the container a device UUID is allocated to. A device
// that several pods share (time-slicing, MPS) is no one pod's: it is not
// found, and its per-process series name its pods. A device that several
// containers of one pod share is that pod's, in no one container. A device
// that a DRA claim holds names the claim (Pod.Claim); where pods share the
// claim, the claim and its namespace only.
func (c *Cache) Lookup(uuid string) (gpu.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p, ok := c.byDevice[uuid]; ok {
		return p, ok
	}
	p, ok := c.dra[uuid]
	return p, ok
}

// Close closes the connection to the kubelet.
func (c *Cache) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	return nil
}

func (c *Cache) list(ctx context.Context) (map[string]gpu.Pod, map[ClaimedDevice]gpu.Pod, error) {
	if _, err := os.Stat(c.socket); err != nil {
		return nil, nil, fmt.Errorf("kubelet pod-resources socket: %w", err)
	}
	if c.client == nil {
		conn, err := grpc.NewClient("unix://"+c.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, nil, fmt.Errorf("connect to %s: %w", c.socket, err)
		}
		c.conn, c.client = conn, podresourcesv1.NewPodResourcesListerClient(conn)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.client.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("List: %w", err) //nolint:staticcheck // ST1005: List is the name of the kubelet's gRPC method
	}
	var claims map[ClaimedDevice]gpu.Pod
	if c.draDriver != "" {
		claims = claimedDevices(resp, c.draDriver)
	}
	return devicesToPods(resp), claims, nil
}

// claimedDevices indexes the devices of driver that DRA claims hold, by
// pool and device name. A claim that several pods share (a ResourceClaim
// is shared by every pod that names it) is no one pod's: the device keeps
// the claim and its namespace. A device that two claims hold (devices a
// driver lets several claims share) is no one claim's and is left out.
func claimedDevices(resp *podresourcesv1.ListPodResourcesResponse, driver string) map[ClaimedDevice]gpu.Pod {
	m := make(map[ClaimedDevice]gpu.Pod)
	var conflict map[ClaimedDevice]bool
	for _, p := range resp.GetPodResources() {
		for _, ctr := range p.GetContainers() {
			for _, dr := range ctr.GetDynamicResources() {
				ns := dr.GetClaimNamespace()
				if ns == "" {
					ns = p.GetNamespace() // a claim is in its pod's namespace
				}
				pod := gpu.Pod{Namespace: ns, Name: p.GetName(), Container: ctr.GetName(), Claim: dr.GetClaimName()}
				for _, cr := range dr.GetClaimResources() {
					if cr.GetDriverName() != driver {
						continue
					}
					d := ClaimedDevice{Pool: cr.GetPoolName(), Device: cr.GetDeviceName()}
					prev, seen := m[d]
					switch {
					case !seen:
						m[d] = pod
					case prev.Namespace != pod.Namespace || prev.Claim != pod.Claim:
						if conflict == nil {
							conflict = map[ClaimedDevice]bool{}
						}
						conflict[d] = true
					case prev.Name != pod.Name:
						m[d] = gpu.Pod{Namespace: pod.Namespace, Claim: pod.Claim}
					case prev.Container != pod.Container:
						prev.Container = ""
						m[d] = prev
					}
				}
			}
		}
	}
	for d := range conflict {
		delete(m, d)
	}
	return m
}

// devicesToPods indexes NVIDIA devices (whole GPUs and MIG instances) by
// UUID, and AMD's (GPUs and partitions, amd.com/gpu) by PCI address. Shared GPUs (time-slicing, MPS) appear as UUID::N, one replica per
// container holding a share; they map to the UUID, and to a pod only if
// one pod holds every share (see Lookup).
func devicesToPods(resp *podresourcesv1.ListPodResourcesResponse) map[string]gpu.Pod {
	m := make(map[string]gpu.Pod)
	var shared map[string]bool
	for _, p := range resp.GetPodResources() {
		for _, ctr := range p.GetContainers() {
			for _, d := range ctr.GetDevices() {
				amd := strings.HasPrefix(d.GetResourceName(), "amd.com/")
				if !amd && !strings.HasPrefix(d.GetResourceName(), "nvidia.com/") {
					continue
				}
				for _, id := range d.GetDeviceIds() {
					id, _, _ = strings.Cut(id, "::")
					if amd {
						// AMD's device plugin names a GPU or partition by
						// its PCI address; the receiver looks it up in
						// lower case.
						id = strings.ToLower(id)
					}
					pod := gpu.Pod{Namespace: p.GetNamespace(), Name: p.GetName(), Container: ctr.GetName()}
					prev, seen := m[id]
					switch {
					case !seen:
						m[id] = pod
					case prev.Namespace == pod.Namespace && prev.Name == pod.Name:
						if prev.Container != pod.Container {
							prev.Container = ""
							m[id] = prev
						}
					default:
						if shared == nil {
							shared = map[string]bool{}
						}
						shared[id] = true
					}
				}
			}
		}
	}
	for id := range shared {
		delete(m, id)
	}
	return m
}
