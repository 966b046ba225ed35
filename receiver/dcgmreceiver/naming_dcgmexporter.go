package dcgmreceiver

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// appendDCGMExporter maps a sample the way dcgm-exporter exposes it: one
// gauge per DCGM field, named after the field, in DCGM's own units, with
// dcgm-exporter's labels on every data point. Dashboards and alert rules
// written for dcgm-exporter then work unchanged through remote-write
// (with the exporter's add_metric_suffixes turned off).
//
// A GPU that several Slurm jobs share (a mapping file naming several) has
// its series once per job, each with its hpc_job, as dcgm-exporter's HPC
// mode repeats them.
func appendDCGMExporter(out pmetric.Metrics, s *gpu.Sample) {
	if jobs := s.Device.SharedSlurmJobs; len(jobs) > 0 {
		for _, j := range jobs {
			d := *s.Device
			d.SharedSlurmJobs, d.Slurm = nil, gpu.SlurmJob{ID: j}
			per := *s
			per.Device = &d
			appendDCGMExporter(out, &per)
		}
		return
	}
	rm := out.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ms := sm.Metrics()
	ts := pcommon.NewTimestampFromTime(s.Time)
	labels := pcommon.NewMap()
	dcgmExporterLabels(labels, s.Device)

	ms.EnsureCapacity(s.Values.Len())
	for field := f.Field(0); field < f.Count; field++ {
		v, ok := value(&s.Values, field)
		if !ok {
			continue
		}
		if field == f.XIDErrors && len(s.XIDs) == 0 {
			// dcgm-exporter shows the last XID; a zero says there was none.
			v = 0
		}
		addGauge(ms, field.String(), ts, v, labels)
	}
	if len(s.XIDs) > 0 && !s.Values.Has(f.XIDErrors) {
		addGauge(ms, f.XIDErrors.String(), ts, float64(s.XIDs[len(s.XIDs)-1]), labels)
	}
}

func addGauge(ms pmetric.MetricSlice, name string, ts pcommon.Timestamp, v float64, labels pcommon.Map) {
	m := ms.AppendEmpty()
	m.SetName(name)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts)
	dp.SetDoubleValue(v)
	labels.CopyTo(dp.Attributes())
}

func dcgmExporterLabels(m pcommon.Map, d *gpu.Device) {
	m.PutStr(f.LabelGPU, strconv.Itoa(d.Index))
	uuid := d.UUID
	if d.MIG != nil {
		uuid = d.MIG.ParentUUID
	}
	m.PutStr(f.LabelUUID, uuid)
	m.PutStr(f.LabelDevice, "nvidia"+strconv.Itoa(d.Index))
	m.PutStr(f.LabelModelName, d.Model)
	if d.PCIBusID != "" {
		m.PutStr(f.LabelPCIBusID, d.PCIBusID)
	}
	if d.Host != "" {
		m.PutStr(f.LabelHostname, d.Host)
	}
	if d.DriverVersion != "" {
		m.PutStr(f.LabelDriverVersion, d.DriverVersion)
	}
	if d.MIG != nil {
		m.PutStr(f.LabelGPUInstanceID, strconv.Itoa(d.MIG.GPUInstance))
		m.PutStr(f.LabelGPUInstanceProfile, d.MIG.Profile)
	}
	if d.Pod.Name != "" {
		m.PutStr(f.LabelPod, d.Pod.Name)
		m.PutStr(f.LabelNamespace, d.Pod.Namespace)
		m.PutStr(f.LabelContainer, d.Pod.Container)
	}
	if d.Slurm.Known() {
		m.PutStr(labelHPCJob, d.Slurm.ID)
	}
}

// labelHPCJob is the label dcgm-exporter's HPC mode puts the job on
// (hpcJobAttribute in its internal/pkg/transformation/const.go).
const labelHPCJob = "hpc_job"
