// Package podresources maps GPU UUIDs to the Kubernetes containers they are
// allocated to, through the kubelet's PodResources v1 gRPC API.
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

	mu        sync.RWMutex
	byDevice  map[string]gpu.Pod
	refreshed time.Time
	lastGood  time.Time
	warned    bool

	conn   *grpc.ClientConn
	client podresourcesv1.PodResourcesListerClient
}

// NewCache returns a cache for the kubelet socket at path.
func NewCache(path string, interval time.Duration, logger *zap.Logger) *Cache {
	return &Cache{socket: path, interval: interval, logger: logger}
}

// Refresh reloads the map if it is older than the interval.
func (c *Cache) Refresh(ctx context.Context, now time.Time) {
	if !c.refreshed.IsZero() && now.Sub(c.refreshed) < c.interval {
		return
	}
	c.refreshed = now
	m, err := c.list(ctx)
	if err != nil {
		if !c.warned {
			c.logger.Warn("Pod attribution unavailable; GPU metrics flow without k8s attributes",
				zap.String("socket", c.socket), zap.Error(err))
			c.warned = true
		}
		if now.Sub(c.lastGood) > c.interval {
			c.mu.Lock()
			c.byDevice = nil
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
	c.mu.Unlock()
}

// Lookup returns the container a device UUID is allocated to. A device
// that several pods share (time-slicing, MPS) is no one pod's: it is not
// found, and its per-process series name its pods. A device that several
// containers of one pod share is that pod's, in no one container.
func (c *Cache) Lookup(uuid string) (gpu.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.byDevice[uuid]
	return p, ok
}

// Close closes the connection to the kubelet.
func (c *Cache) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	return nil
}

func (c *Cache) list(ctx context.Context) (map[string]gpu.Pod, error) {
	if _, err := os.Stat(c.socket); err != nil {
		return nil, fmt.Errorf("kubelet pod-resources socket: %w", err)
	}
	if c.client == nil {
		conn, err := grpc.NewClient("unix://"+c.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", c.socket, err)
		}
		c.conn, c.client = conn, podresourcesv1.NewPodResourcesListerClient(conn)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.client.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("List: %w", err) //nolint:staticcheck // ST1005: List is the name of the kubelet's gRPC method
	}
	return devicesToPods(resp), nil
}

// devicesToPods indexes NVIDIA devices (whole GPUs and MIG instances) by
// UUID. Shared GPUs (time-slicing, MPS) appear as UUID::N, one replica per
// container holding a share; they map to the UUID, and to a pod only if
// one pod holds every share (see Lookup).
func devicesToPods(resp *podresourcesv1.ListPodResourcesResponse) map[string]gpu.Pod {
	m := make(map[string]gpu.Pod)
	var shared map[string]bool
	for _, p := range resp.GetPodResources() {
		for _, ctr := range p.GetContainers() {
			for _, d := range ctr.GetDevices() {
				if !strings.HasPrefix(d.GetResourceName(), "nvidia.com/") {
					continue
				}
				for _, id := range d.GetDeviceIds() {
					id, _, _ = strings.Cut(id, "::")
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
