package dcgmreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// Per-process series (per_process). A GPU's processes are grouped by
// whose they are, and each group becomes a resource of its own beside the
// GPU's: the GPU's hw.id, hw.name and host.name, the pod's k8s.*
// attributes, and otelgpu.process.owner, which marks the resource as a
// split of the GPU's readings, not a device. Only what can be split is
// there (utilization, memory-controller utilization, memory); what cannot
// (profiling fields, clocks, power, temperature, errors) stays on the
// GPU's resource alone. The resource does not repeat the GPU's other
// attributes (model, driver, PCI bus): hw.id joins it to them, and an
// exclusive GPU's split costs the scrape less.

// procGroup is the processes of one owner on one GPU: one pod's container,
// one pod outside its containers, the host, or the unplaced.
type procGroup struct {
	owner    gpu.Owner
	uid, ctr string
	slurm    gpu.SlurmJob
	pod      gpu.Pod
	n        int64
	mem      uint64
	hasMem   bool
	sm, mc   float64 // percent, summed
	enc, dec float64
	hasUtil  bool
}

// groupProcesses sums a sample's processes by owner into m.groups, in the
// order each owner first appears.
func (m *mapper) groupProcesses(ps []gpu.Process) []procGroup {
	gs := m.groups[:0]
	for i := range ps {
		p := &ps[i]
		uid, ctr := p.PodUID, p.ContainerID
		var job gpu.SlurmJob
		switch p.Owner {
		case gpu.OwnerPod:
		case gpu.OwnerSlurmJob:
			// One group per job step; a Slurm node that is a pod keeps
			// the pod's UID as where the job runs.
			job, ctr = p.Slurm, ""
		default:
			uid, ctr = "", "" // the host's, or the unplaced: one group each
		}
		var g *procGroup
		for j := range gs {
			if gs[j].owner == p.Owner && gs[j].uid == uid && gs[j].ctr == ctr && gs[j].slurm.ID == job.ID && gs[j].slurm.Step == job.Step {
				g = &gs[j]
				break
			}
		}
		if g == nil {
			gs = append(gs, procGroup{owner: p.Owner, uid: uid, ctr: ctr, pod: p.Pod, slurm: job})
			g = &gs[len(gs)-1]
		}
		if g.pod.Name == "" {
			g.pod = p.Pod
		}
		g.n++
		if p.HasMemory {
			g.mem += p.MemoryBytes
			g.hasMem = true
		}
		if p.HasUtilization {
			g.sm += p.SMUtil
			g.mc += p.MemUtil
			g.enc += p.EncUtil
			g.dec += p.DecUtil
			g.hasUtil = true
		}
	}
	m.groups = gs
	return gs
}

// appendProcesses maps the sample's processes, one resource per group,
// into the per-process builder, whose resources Emit adds after the
// devices'. That builder is the device's own metrics builder's twin, kept
// apart so that each of these small resources is sized for its few
// metrics, not for a device's forty.
func (m *mapper) appendProcesses(s *gpu.Sample, cs *counterState, name string) {
	ts := pcommon.NewTimestampFromTime(s.Time)
	mb, rb := m.pmb, m.rb
	d := s.Device
	for _, g := range m.groupProcesses(s.Processes) {
		mb.RecordOtelgpuProcessCountDataPoint(ts, g.n)
		// A group's memory is known if any of its processes' is: one
		// that exited during the interval holds none.
		if g.hasMem {
			mb.RecordOtelgpuProcessMemoryUsageDataPoint(ts, int64(min(g.mem, 1<<62)))
		}
		if g.hasUtil {
			// Several processes of one owner each report their own part;
			// under MPS their kernels overlap and the parts can add up to
			// more than the interval: the whole GPU is the most.
			mb.RecordOtelgpuProcessUtilizationDataPoint(ts, fraction(g.sm), metadata.AttributeHwGpuTaskGeneral)
			// The video engines only where the owner used them during the
			// interval: every pod of every GPU would otherwise have two
			// series of zeros, and cardinality is what a per-pod split
			// costs.
			if g.enc > 0 {
				mb.RecordOtelgpuProcessUtilizationDataPoint(ts, fraction(g.enc), metadata.AttributeHwGpuTaskEncoder)
			}
			if g.dec > 0 {
				mb.RecordOtelgpuProcessUtilizationDataPoint(ts, fraction(g.dec), metadata.AttributeHwGpuTaskDecoder)
			}
			// AMD SMI has no per-process memory activity: no series
			// rather than a zero.
			if !d.IsAMD() {
				mb.RecordOtelgpuProcessMemoryCopyUtilizationDataPoint(ts, fraction(g.mc))
			}
		}
		rb.EnsureCapacity(processAttributes)
		rb.SetHwID(d.UUID)
		rb.SetHwName(name)
		setIf(rb.SetHostName, d.Host)
		rb.SetOtelgpuProcessOwner(g.owner.String())
		setIf(rb.SetK8sPodUID, g.uid)
		setIf(rb.SetK8sNamespaceName, g.pod.Namespace)
		setIf(rb.SetK8sPodName, g.pod.Name)
		setIf(rb.SetK8sContainerName, g.pod.Container)
		if g.slurm.Known() {
			setSlurm(rb, &g.slurm)
		} else {
			setIf(rb.SetK8sJobName, g.pod.Job)
		}
		// A claim several pods share is the claim of each of their
		// processes.
		setIf(rb.SetK8sResourceclaimName, d.Pod.Claim)
		// The memory and process counts are non-monotonic sums: they
		// start where the device's counters do.
		mb.EmitForResource(metadata.WithResourceMoved(rb.Emit()), metadata.WithStartTimeOverride(cs.epochStart))
	}
	m.processes = true
}

// processAttributes is how many attributes a per-process resource has at
// most.
const processAttributes = 17

// fraction turns summed percentages into a fraction of the interval, at most
// the whole.
func fraction(percent float64) float64 { return min(1, percent/100) }
