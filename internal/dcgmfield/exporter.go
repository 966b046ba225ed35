package dcgmfield

// The labels dcgm-exporter puts on every GPU series (its gpuMetricsFormat
// template), which the dcgm receiver's dcgm_exporter naming writes and the
// from_dcgm_exporter processor reads.
const (
	// LabelGPU is the GPU's index on its host (a MIG instance's parent's).
	LabelGPU = "gpu"
	// LabelUUID is the GPU's UUID (a MIG instance's parent's).
	LabelUUID = "UUID"
	// LabelUUIDOld is LabelUUID under dcgm-exporter's --use-old-namespace.
	LabelUUIDOld = "uuid"
	// LabelDevice is the device node's name, "nvidia" and the index.
	LabelDevice    = "device"
	LabelPCIBusID  = "pci_bus_id"
	LabelModelName = "modelName"
	// LabelHostname is the host dcgm-exporter runs on (NODE_NAME in a
	// pod); dcgm-exporter's main branch renames it LabelHostnameNew.
	LabelHostname    = "Hostname"
	LabelHostnameNew = "hostname"
	// LabelDriverVersion is DCGM_FI_DRIVER_VERSION, a "label" counter.
	LabelDriverVersion = "DCGM_FI_DRIVER_VERSION"
	// LabelGPUInstanceID and LabelGPUInstanceProfile mark a MIG GPU
	// instance: its NVML instance ID and its profile name ("1g.10gb").
	LabelGPUInstanceID      = "GPU_I_ID"
	LabelGPUInstanceProfile = "GPU_I_PROFILE"
	// The pod the device is allocated to, with --kubernetes.
	LabelNamespace = "namespace"
	LabelPod       = "pod"
	LabelContainer = "container"
)

// XIDCountMetric is dcgm-exporter's own XID metric (4.x, when listed in its
// counters file): per GPU and XID code (label LabelXID), the number of XID
// events DCGM recorded within the trailing window of
// LabelXIDWindow milliseconds (--xid-count-window-size, 5 minutes by
// default). Its PromType is counter, but it is a windowed count that falls
// as events leave the window. Without any event in the window, it is one
// series of value 0 without the xid label.
const (
	XIDCountMetric = "DCGM_EXP_XID_ERRORS_COUNT"
	LabelXID       = "xid"
	LabelXIDWindow = "window_size_in_ms"
)
