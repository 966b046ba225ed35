package podresources

import (
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// ContainerIndex names a node's containers by their runtime ID, which is
// what a process's cgroup gives (internal/cgroup). The kubelet's
// PodResources API names neither a pod's UID nor its containers' IDs, so
// the index reads the kubelet's container log directory, where the kubelet
// links every container's log as
//
//	<pod>_<namespace>_<container>-<container ID>.log
//
// (legacyLogSymlink in pkg/kubelet/kuberuntime of kubernetes/kubernetes,
// the names log shippers read the same pods from). Pod, namespace and
// container names cannot hold an underscore (they are DNS labels and
// subdomains), so the name splits unambiguously. Only the names are read:
// the links need not resolve.
type ContainerIndex struct {
	dir    string
	logger *zap.Logger
	// minRescan bounds how often a miss rereads the directory.
	minRescan time.Duration

	byID    map[string]gpu.Pod
	scanned time.Time
	warned  bool
}

// NewContainerIndex returns an index of the kubelet's container log
// directory dir (/var/log/containers), read at the first lookup.
func NewContainerIndex(dir string, logger *zap.Logger) *ContainerIndex {
	return &ContainerIndex{dir: dir, logger: logger, minRescan: time.Second}
}

// Lookup names the container with the runtime ID id. A container started
// since the directory was last read is a miss that rereads it, at most
// once per second of now, so that a container not in the directory does
// not make every lookup read it.
func (x *ContainerIndex) Lookup(id string, now time.Time) (gpu.Pod, bool) {
	if p, ok := x.byID[id]; ok {
		return p, true
	}
	if !x.scanned.IsZero() && now.Sub(x.scanned) < x.minRescan {
		return gpu.Pod{}, false
	}
	x.scan(now)
	p, ok := x.byID[id]
	return p, ok
}

// scan rereads the directory; the index then holds the containers that
// exist now, so that those removed since do not accumulate.
func (x *ContainerIndex) scan(now time.Time) {
	x.scanned = now
	entries, err := os.ReadDir(x.dir)
	if err != nil {
		if !x.warned {
			x.warned = true
			x.logger.Warn("Container log directory unreadable; per-process series name their pod by k8s.pod.uid only",
				zap.String("dir", x.dir), zap.Error(err))
		}
		return
	}
	if x.warned {
		x.warned = false
		x.logger.Info("Container log directory readable again", zap.String("dir", x.dir))
	}
	m := make(map[string]gpu.Pod, len(entries))
	for _, e := range entries {
		if id, p, ok := parseLogName(e.Name()); ok {
			m[id] = p
		}
	}
	x.byID = m
}

// parseLogName reads <pod>_<namespace>_<container>-<id>.log. A name the
// kubelet cut at 255 bytes (ext4's limit; very long pod names) has lost
// part of its ID and is skipped.
func parseLogName(name string) (string, gpu.Pod, bool) {
	base, ok := strings.CutSuffix(name, ".log")
	if !ok {
		return "", gpu.Pod{}, false
	}
	i := strings.LastIndexByte(base, '-')
	if i < 0 {
		return "", gpu.Pod{}, false
	}
	id := base[i+1:]
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", gpu.Pod{}, false
	}
	parts := strings.Split(base[:i], "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", gpu.Pod{}, false
	}
	return id, gpu.Pod{Name: parts[0], Namespace: parts[1], Container: parts[2]}, true
}
