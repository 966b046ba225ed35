package gpunodereceiver

import (
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroupstat"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// cgroupSource emits one resource per pod with a cgroup on the node.
type cgroupSource struct {
	root   string // the cgroup root, RootPath/sys/fs/cgroup
	host   string
	logger *zap.Logger
	once   *onceLog

	reader *cgroupstat.Reader // nil until the root has been read
	pods   []cgroupstat.Pod   // reused from scrape to scrape
	stats  cgroupstat.Stats
	names  *podNames // the pods' namespaces and names (podnames.go)
	// unnamed: logged that the kubelet's pod log directories are not
	// there, so pods go by their UIDs alone.
	unnamed bool
}

func newCgroupSource(env sourceEnv) (source, error) {
	if !env.cfg.Cgroup.Enabled {
		return nil, nil //nolint:nilnil // disabled: no source, no error
	}
	return &cgroupSource{
		root:   hostPath(env.cfg, "/sys/fs/cgroup"),
		names:  newPodNames(hostPath(env.cfg, "/var/log/pods")),
		host:   env.host,
		logger: env.logger,
		once:   newOnceLog(env.logger),
	}, nil
}

func (c *cgroupSource) scrape(now pcommon.Timestamp, mb *metadata.MetricsBuilder) error {
	if c.reader == nil {
		// Read at the first scrape, not at start: a root not mounted
		// yet fails the scrape, not the collector, and is retried.
		r, err := cgroupstat.New(c.root)
		if err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
		c.reader = r
		c.logger.Info("reading pod cgroups", zap.String("root", c.root), zap.Stringer("layout", r.Layout()))
	}
	var err error
	c.pods, err = c.reader.Pods(c.pods[:0])
	if err != nil {
		// Directories that look like pods but are not named as the
		// kubelet names them: the pods found are still read.
		c.once.warn("pods", "some cgroups under kubepods were not read as pods", err)
	} else {
		c.once.seen("pods")
	}
	rb := mb.NewResourceBuilder()
	for _, p := range c.pods {
		err := c.reader.ReadPod(p, &c.stats)
		switch {
		case errors.Is(err, cgroupstat.ErrGone):
			continue // deleted since Pods found it: normal on a node
		case err != nil:
			// What did parse is still emitted; a malformed file is
			// reported once per pod.
			c.once.warn(p.UID, "pod cgroup files not read", err)
		default:
			c.once.seen(p.UID)
		}
		recordPod(now, mb, &c.stats)
		rb.SetHostName(c.host)
		rb.SetK8sPodUID(p.UID)
		c.name(rb, p.UID, now)
		mb.EmitForResource(metadata.WithResource(rb.Emit()))
	}
	c.reader.EndRound()
	c.once.endRound()
	return nil
}

// name sets the pod's namespace and name where the kubelet's log
// directories give them.
func (c *cgroupSource) name(rb *metadata.ResourceBuilder, uid string, now pcommon.Timestamp) {
	n, ok, err := c.names.lookup(uid, now.AsTime())
	if err != nil {
		c.once.warn("pod names", "the kubelet's pod log directories were not read: pods go by their UIDs", err)
	}
	if c.names.missing && !c.unnamed {
		c.unnamed = true
		c.logger.Info("no kubelet pod log directories: a pod's cgroup is tied to its GPUs only through per-process collection",
			zap.String("dir", c.names.dir))
	}
	if ok {
		rb.SetK8sNamespaceName(n.namespace)
		rb.SetK8sPodName(n.name)
	}
}

func (c *cgroupSource) close() {
	if c.reader != nil {
		c.reader.Close()
	}
}

// recordPod records one pod's figures, each only where it was reported.
func recordPod(now pcommon.Timestamp, mb *metadata.MetricsBuilder, s *cgroupstat.Stats) {
	if s.CPU.HasUsage {
		mb.RecordOtelgpuPodCPUTimeDataPoint(now, s.CPU.Usage.Seconds())
	}
	// Throttling only means something against a limit: a pod without
	// one has periods and throttling of 0, which would read as "never
	// throttled" rather than "cannot be".
	if s.Limit.Has {
		mb.RecordOtelgpuPodCPULimitDataPoint(now, s.Limit.CPUs)
		if s.CPU.HasThrottling {
			mb.RecordOtelgpuPodCPUPeriodsDataPoint(now, toInt64(s.CPU.Periods))
			mb.RecordOtelgpuPodCPUThrottledPeriodsDataPoint(now, toInt64(s.CPU.ThrottledPeriods))
			mb.RecordOtelgpuPodCPUThrottledTimeDataPoint(now, s.CPU.Throttled.Seconds())
		}
	}
	if s.Memory.HasUsage {
		mb.RecordOtelgpuPodMemoryUsageDataPoint(now, toInt64(s.Memory.Usage))
	}
	if s.Memory.HasLimit {
		mb.RecordOtelgpuPodMemoryLimitDataPoint(now, toInt64(s.Memory.Limit))
	}
	recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceCPU, s.CPUPressure)
	recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceMemory, s.MemoryPressure)
	recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceIo, s.IOPressure)
}

func recordPSI(now pcommon.Timestamp, mb *metadata.MetricsBuilder, res metadata.AttributeOtelgpuPressureResource, p cgroupstat.PSI) {
	for _, st := range []struct {
		stall cgroupstat.Stall
		scope metadata.AttributeOtelgpuPressureScope
	}{{p.Some, metadata.AttributeOtelgpuPressureScopeSome}, {p.Full, metadata.AttributeOtelgpuPressureScopeFull}} {
		if st.stall.Has {
			mb.RecordOtelgpuPressureStallTimeDataPoint(now, st.stall.Total.Seconds(), res, st.scope)
		}
	}
}

func toInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// pressureSource emits the node's resource: its /proc/pressure.
type pressureSource struct {
	proc   string // RootPath/proc
	host   string
	logger *zap.Logger
	reader cgroupstat.Reader
	np     cgroupstat.NodePressure
	noPSI  bool // logged that the kernel has no PSI
}

func newPressureSource(env sourceEnv) (source, error) {
	if !env.cfg.Pressure.Enabled {
		return nil, nil //nolint:nilnil // disabled: no source, no error
	}
	return &pressureSource{proc: hostPath(env.cfg, "/proc"), host: env.host, logger: env.logger}, nil
}

func (p *pressureSource) close() { p.reader.Close() }

func (p *pressureSource) scrape(now pcommon.Timestamp, mb *metadata.MetricsBuilder) error {
	err := p.reader.ReadNodePressure(p.proc, &p.np)
	p.reader.EndRound()
	if err != nil {
		return fmt.Errorf("node pressure: %w", err)
	}
	if p.np == (cgroupstat.NodePressure{}) {
		if !p.noPSI {
			p.logger.Info("the kernel reports no pressure (no /proc/pressure: built without CONFIG_PSI or booted with psi=0)", zap.String("proc", p.proc))
			p.noPSI = true
		}
		return nil
	}
	recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceCPU, p.np.CPU)
	recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceMemory, p.np.Memory)
	recordPSI(now, mb, metadata.AttributeOtelgpuPressureResourceIo, p.np.IO)
	rb := mb.NewResourceBuilder()
	rb.SetHostName(p.host)
	mb.EmitForResource(metadata.WithResource(rb.Emit()))
	return nil
}
