{{/*
Names: the release's full name, and each component's (agent, gateway,
remediation) as <fullname>-<component>.
*/}}
{{- define "otelcol-gpu.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "otelcol-gpu.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* (list $ "agent") -> otelcol-gpu-agent */}}
{{- define "otelcol-gpu.component" -}}
{{- printf "%s-%s" (include "otelcol-gpu.fullname" (index . 0)) (index . 1) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of a component's pods: (list $ "agent"). */}}
{{- define "otelcol-gpu.selectorLabels" -}}
app.kubernetes.io/name: {{ include "otelcol-gpu.component" . }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
{{- end }}

{{/* Every object's labels: (list $ "agent"). */}}
{{- define "otelcol-gpu.labels" -}}
{{- $ := index . 0 -}}
helm.sh/chart: {{ printf "%s-%s" $.Chart.Name $.Chart.Version | replace "+" "_" }}
{{ include "otelcol-gpu.selectorLabels" . }}
app.kubernetes.io/component: {{ index . 1 }}
app.kubernetes.io/part-of: otelcol-gpu
app.kubernetes.io/version: {{ $.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $.Release.Service }}
{{- end }}

{{/* A component's ServiceAccount name: (list $ "agent"). */}}
{{- define "otelcol-gpu.serviceAccountName" -}}
{{- $sa := (index (index . 0).Values (index . 1)).serviceAccount }}
{{- if $sa.create }}
{{- default (include "otelcol-gpu.component" .) $sa.name }}
{{- else }}
{{- default "default" $sa.name }}
{{- end }}
{{- end }}

{{/* An image reference from {repository, tag, digest}: (list $ image). */}}
{{- define "otelcol-gpu.imageRef" -}}
{{- $ := index . 0 }}{{ $img := index . 1 }}
{{- if $img.digest }}
{{- printf "%s@%s" $img.repository $img.digest }}
{{- else }}
{{- printf "%s:%s" $img.repository (default $.Chart.AppVersion $img.tag) }}
{{- end }}
{{- end }}

{{/*
Deep merge of src into dst, in place: maps merge key by key, anything else
replaces, and a key whose value is null is removed from dst. (Sprig's merge
functions skip null values, so a default could not be removed with them.)
(list dst src)
*/}}
{{- define "otelcol-gpu.merge" -}}
{{- $dst := index . 0 }}
{{- range $k, $v := index . 1 }}
{{- if kindIs "invalid" $v }}
{{- $_ := unset $dst $k }}
{{- else if and (kindIs "map" $v) (kindIs "map" (index $dst $k)) }}
{{- include "otelcol-gpu.merge" (list (index $dst $k) $v) }}
{{- else }}
{{- $_ := set $dst $k (deepCopy $v) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A component's final configuration as YAML: its alternateConfig when set;
otherwise the chart's configuration for it with its config merged over.
(list $ "agent")
*/}}
{{- define "otelcol-gpu.config" -}}
{{- $ := index . 0 }}{{ $c := index . 1 }}
{{- $values := index $.Values $c }}
{{- if $values.alternateConfig }}
{{- toYaml $values.alternateConfig }}
{{- else }}
{{- $cfg := include (printf "otelcol-gpu.%s.baseConfig" $c) $ | fromYaml }}
{{- include "otelcol-gpu.merge" (list $cfg $values.config) }}
{{- toYaml $cfg }}
{{- end }}
{{- end }}

{{/*
Component types the lean agent image has (builder-config-agent.yaml). The
agent runs the lean image when every component of its configuration is one
of these.
*/}}
{{- define "otelcol-gpu.agent.leanTypes" -}}
receivers: [dcgm, gpu_node]
processors: [batch, memory_limiter]
exporters: [otlp_grpc, otlp_http, prometheus]
extensions: [file_storage, health_check]
connectors: []
{{- end }}

{{/* "true" when the agent's configuration fits in the lean image. */}}
{{- define "otelcol-gpu.agent.lean" -}}
{{- $cfg := include "otelcol-gpu.config" (list . "agent") | fromYaml }}
{{- $lean := include "otelcol-gpu.agent.leanTypes" . | fromYaml }}
{{- $fits := true }}
{{- range $kind, $types := $lean }}
{{- range $id, $_ := (index $cfg $kind | default dict) }}
{{- if not (has (first (splitList "/" $id)) $types) }}
{{- $fits = false }}
{{- end }}
{{- end }}
{{- end }}
{{- $fits }}
{{- end }}

{{/* The agent's image reference and executable, lean or full. */}}
{{- define "otelcol-gpu.agent.image" -}}
{{- if eq (include "otelcol-gpu.agent.lean" .) "true" }}
{{- include "otelcol-gpu.imageRef" (list . .Values.agent.image) }}
{{- else }}
{{- include "otelcol-gpu.imageRef" (list . .Values.image) }}
{{- end }}
{{- end }}

{{- define "otelcol-gpu.agent.command" -}}
{{- if eq (include "otelcol-gpu.agent.lean" .) "true" }}
{{- .Values.agent.command.name }}
{{- else }}
{{- .Values.command.name }}
{{- end }}
{{- end }}

{{/*
A memory quantity in bytes (Ki, Mi, Gi, Ti, k, M, G, T, or plain bytes).
*/}}
{{- define "otelcol-gpu.bytes" -}}
{{- $q := toString . }}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 }}
{{- $bytes := 0.0 }}
{{- $matched := false }}
{{- range $suffix := list "Ki" "Mi" "Gi" "Ti" "k" "M" "G" "T" }}
{{- if and (not $matched) (hasSuffix $suffix $q) }}
{{- $bytes = mulf (trimSuffix $suffix $q | float64) (index $units $suffix) }}
{{- $matched = true }}
{{- end }}
{{- end }}
{{- if not $matched }}
{{- $bytes = float64 $q }}
{{- end }}
{{- $bytes }}
{{- end }}

{{/* GOMEMLIMIT: 80 % of a memory limit, in MiB. */}}
{{- define "otelcol-gpu.gomemlimit" -}}
{{- $bytes := include "otelcol-gpu.bytes" . | float64 }}
{{- printf "%dMiB" (divf (mulf $bytes 0.8) 1048576 | floor | int64) }}
{{- end }}

{{/*
The container's environment shared by every component: the pod's IP (the
endpoints bind to it), and GOMEMLIMIT when asked. (list $ "agent")
*/}}
{{- define "otelcol-gpu.env" -}}
{{- $ := index . 0 }}{{ $v := index $.Values (index . 1) }}
- name: POD_IP
  valueFrom: {fieldRef: {fieldPath: status.podIP}}
{{- if and $v.useGOMEMLIMIT $v.resources.limits $v.resources.limits.memory }}
- name: GOMEMLIMIT
  value: {{ include "otelcol-gpu.gomemlimit" $v.resources.limits.memory }}
{{- end }}
{{- with $v.extraEnvs }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod scheduling fields of a component: (list $ "agent"). */}}
{{- define "otelcol-gpu.scheduling" -}}
{{- $v := index (index . 0).Values (index . 1) }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end }}

{{/* The headless Service the agents resolve the gateway replicas through. */}}
{{- define "otelcol-gpu.gateway.headless" -}}
{{- if eq .Values.mode "operator" }}
{{- printf "%s-collector-headless" (include "otelcol-gpu.component" (list . "gateway")) }}
{{- else }}
{{- printf "%s-headless" (include "otelcol-gpu.component" (list . "gateway")) }}
{{- end }}
{{- end }}

{{/*
Combinations the chart refuses, each with what to change. Included by every
template, so that helm template and helm install fail before rendering.
*/}}
{{- define "otelcol-gpu.check" -}}
{{- $v := .Values }}
{{- if and (eq $v.dcgmExporter.mode "alongside") $v.agent.enabled }}
{{- fail "dcgmExporter.mode alongside reads the GPU Operator's dcgm-exporter instead of an agent per node: set agent.enabled: false (or dcgmExporter.mode: replace)" }}
{{- end }}
{{- if and (eq $v.dcgmExporter.mode "alongside") (not $v.gateway.enabled) }}
{{- fail "dcgmExporter.mode alongside scrapes dcgm-exporter from the gateway: set gateway.enabled: true" }}
{{- end }}
{{- if and (eq $v.dcgmExporter.mode "alongside") (gt (int $v.gateway.replicas) 1) }}
{{- fail "dcgmExporter.mode alongside: every gateway replica would scrape every dcgm-exporter and send each GPU twice; set gateway.replicas: 1" }}
{{- end }}
{{- if and $v.remediation.enabled (not $v.agent.enabled) }}
{{- fail "remediation.enabled: the remediation is fed each node's faults by the agents; set agent.enabled: true (dcgmExporter.mode: replace)" }}
{{- end }}
{{- if and $v.autoscale.targets (not $v.gateway.enabled) }}
{{- fail "autoscale.targets: the autoscaler runs on the gateway; set gateway.enabled: true" }}
{{- end }}
{{- if and $v.analyzer.enabled (not $v.gateway.enabled) (not $v.agent.enabled) }}
{{- fail "nothing to install: set agent.enabled or gateway.enabled" }}
{{- end }}
{{- if and $v.perProcess.enabled (eq $v.mode "operator") }}
{{- fail "perProcess.enabled needs hostPID, which the Operator's OpenTelemetryCollector does not offer: use mode: kubernetes" }}
{{- end }}
{{- if and $v.remediation.fabric (not (and $v.nodeEvidence.enabled $v.nodeEvidence.network.enabled)) }}
{{- fail "remediation.fabric reads the NIC ports the agents' gpu_node receiver reads: set nodeEvidence.enabled and nodeEvidence.network.enabled" }}
{{- end }}
{{- if and $v.otlp.enabled (not $v.otlp.endpoint) }}
{{- fail "otlp.enabled: set otlp.endpoint to the backend's OTLP/HTTP address" }}
{{- end }}
{{- end }}
