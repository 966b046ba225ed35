{{/* The agent container's environment (beyond POD_IP and GOMEMLIMIT). */}}
{{- define "otelcol-gpu.agent.env" -}}
- name: K8S_NODE_NAME
  valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
- name: HOST_IP
  valueFrom: {fieldRef: {fieldPath: status.hostIP}}
# NVML fallback: the NVIDIA container runtime mounts the driver.
- {name: NVIDIA_VISIBLE_DEVICES, value: all}
- {name: NVIDIA_DRIVER_CAPABILITIES, value: utility}
{{- end }}

{{/*
The agent's host volumes: the kubelet's pod-resources socket, the queue on
disk (a hostPath, so that the pod that replaces this one on the node finds
it), with perProcess the container logs that name each process's pod, and
with nodeEvidence the host's /sys and /proc, the kubelet's pod log
directories (whose names tie a pod's cgroup, known by UID, to the GPUs the
kubelet gives the pod by name) and NCCL Inspector's directory, under
/hostfs, gpu_node's root_path.
*/}}
{{- define "otelcol-gpu.agent.volumes" -}}
- name: pod-resources
  hostPath: {path: /var/lib/kubelet/pod-resources, type: Directory}
{{- if .Values.presets.persistentQueue.enabled }}
- name: queue
  hostPath: {path: {{ .Values.agent.queueHostPath }}, type: DirectoryOrCreate}
{{- end }}
{{- if .Values.perProcess.enabled }}
- name: container-logs
  hostPath: {path: /var/log/containers, type: Directory}
- name: pod-logs
  hostPath: {path: /var/log/pods, type: Directory}
{{- end }}
{{- with .Values.nodeEvidence }}
{{- if .enabled }}
- name: host-sys
  hostPath: {path: /sys, type: Directory}
- name: host-proc
  hostPath: {path: /proc, type: Directory}
- name: host-pod-logs
  hostPath: {path: /var/log/pods, type: DirectoryOrCreate}
{{- if .nccl.enabled }}
- name: nccl-inspector
  hostPath: {path: {{ .nccl.hostPath }}, type: DirectoryOrCreate}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- define "otelcol-gpu.agent.volumeMounts" -}}
- {name: pod-resources, mountPath: /var/lib/kubelet/pod-resources, readOnly: true}
{{- if .Values.presets.persistentQueue.enabled }}
- {name: queue, mountPath: /var/lib/otelcol-gpu/queue}
{{- end }}
{{- if .Values.perProcess.enabled }}
- {name: container-logs, mountPath: /var/log/containers, readOnly: true}
- {name: pod-logs, mountPath: /var/log/pods, readOnly: true}
{{- end }}
{{- with .Values.nodeEvidence }}
{{- if .enabled }}
{{- /* Read-only down to the mounts under them (/sys/fs/cgroup) where the
runtime can (Kubernetes 1.30+, containerd 2.0+ or CRI-O 1.30+, Linux 5.12+). */}}
- {name: host-sys, mountPath: /hostfs/sys, readOnly: true, recursiveReadOnly: IfPossible}
- {name: host-proc, mountPath: /hostfs/proc, readOnly: true, recursiveReadOnly: IfPossible}
- {name: host-pod-logs, mountPath: /hostfs/var/log/pods, readOnly: true}
{{- if .nccl.enabled }}
- {name: nccl-inspector, mountPath: {{ printf "/hostfs%s" .nccl.hostPath }}, readOnly: true}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The kubelet's pod-resources socket belongs to root. */}}
{{- define "otelcol-gpu.agent.securityContext" -}}
runAsUser: 0
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end }}

{{/*
"true" when the agent runs in the node's network namespace: gpu_node's
ethtool statistics are read through an ioctl in the agent's own.
*/}}
{{- define "otelcol-gpu.agent.hostNetwork" -}}
{{- $n := .Values.nodeEvidence }}
{{- if and $n.enabled $n.network.enabled $n.network.ethtool }}true{{ end }}
{{- end }}
