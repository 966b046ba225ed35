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
it), and with perProcess the container logs that name each process's pod.
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
{{- end }}

{{/* The kubelet's pod-resources socket belongs to root. */}}
{{- define "otelcol-gpu.agent.securityContext" -}}
runAsUser: 0
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end }}
