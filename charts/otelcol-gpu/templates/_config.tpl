{{/*
The chart's collector configurations, one per component, before each
component's `config` is merged over. Every one passes `otelcol-gpu validate`
in the chart's tests (the agent's through the binary of the image it runs).
*/}}

{{/*
The fault evidence gpu_remediation reads, and nothing else: NVIDIA's and
AMD's GPUs', and the NIC ports' (gpu_node: hw.errors, hw.network.up,
hw.network.bandwidth.limit) for its fabric faults.
*/}}
{{- define "otelcol-gpu.faultCondition" -}}
metric.name != "nvidia.gpu.xid.errors" and metric.name != "hw.errors" and metric.name != "hw.network.up" and metric.name != "hw.network.bandwidth.limit" and metric.name != "nvidia.gpu.row_remap.failure" and metric.name != "nvidia.gpu.recovery_action" and metric.name != "nvidia.gpu.health" and metric.name != "amd.gpu.cper.records" and metric.name != "amd.gpu.bad_pages" and metric.name != "amd.gpu.bad_pages.threshold"
{{- end }}

{{/* A queue on disk that retries without end: (dict "size" N "batch" {...}). */}}
{{- define "otelcol-gpu.diskQueue" -}}
retry_on_failure: {enabled: true, initial_interval: 1s, max_interval: 30s, max_elapsed_time: 0s}
sending_queue:
  enabled: true
  storage: file_storage
  num_consumers: 1
  sizer: bytes
  queue_size: {{ .size | int64 }}
  batch: {{ toJson .batch }}
{{- end }}

{{- define "otelcol-gpu.fileStorage" -}}
file_storage:
  directory: /var/lib/otelcol-gpu/queue
  create_directory: true
  compaction: {on_start: true, on_rebound: true, directory: /var/lib/otelcol-gpu/queue, cleanup_on_start: true}
{{- end }}

{{- define "otelcol-gpu.agent.baseConfig" -}}
{{- $v := .Values }}
{{- $queue := $v.presets.persistentQueue.enabled }}
{{- $k8sattr := and $v.gateway.enabled $v.presets.kubernetesAttributes.enabled }}
{{- $ns := .Release.Namespace }}
{{- $remediation := include "otelcol-gpu.component" (list . "remediation") }}
{{- $node := $v.nodeEvidence }}
{{- $receivers := ternary (list "dcgm" "gpu_node") (list "dcgm") $node.enabled }}
{{- /* The NIC ports go to the remediation too (its fabric faults). */}}
{{- $faultReceivers := ternary (list "dcgm" "gpu_node") (list "dcgm") (and $node.enabled $node.network.enabled) }}
receivers:
  dcgm:
    backend: auto
    endpoint: ${env:HOST_IP}:{{ $v.agent.hostEnginePort | int }}
    collection_interval: {{ $v.agent.collectionInterval }}
    hostname: ${env:K8S_NODE_NAME}
    pod_resources:
      enabled: true
    {{- if $v.perProcess.enabled }}
    per_process:
      enabled: true
      proc_root: /proc
      container_logs_dir: /var/log/containers
    {{- end }}
    {{- if $v.dra.enabled }}
    dra:
      enabled: true
      node_name: ${env:K8S_NODE_NAME}
    {{- end }}
  {{- if $node.enabled }}
  gpu_node:
    collection_interval: {{ $node.collectionInterval }}
    root_path: /hostfs
    host_name: ${env:K8S_NODE_NAME}
    network:
      enabled: {{ $node.network.enabled }}
      ethtool: {{ and $node.network.enabled $node.network.ethtool }}
    {{- if $node.nccl.enabled }}
    nccl:
      enabled: true
      paths: [{{ printf "%s/*.prom" (trimSuffix "/" $node.nccl.hostPath) | quote }}, {{ printf "%s/*.log" (trimSuffix "/" $node.nccl.hostPath) | quote }}]
    {{- end }}
  {{- end }}
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 70
    spike_limit_percentage: 20
  {{- if $k8sattr }}
  k8s_attributes:
    filter:
      node_from_env_var: K8S_NODE_NAME
    pod_association:
      - sources:
          - {from: resource_attribute, name: k8s.pod.name}
          - {from: resource_attribute, name: k8s.namespace.name}
      {{- if $node.enabled }}
      # gpu_node's pods, named by their UID only: their namespace and job
      # route them to the replica that has their GPUs.
      - sources:
          - {from: resource_attribute, name: k8s.pod.uid}
      {{- end }}
    extract:
      metadata: [k8s.job.name, k8s.deployment.name, k8s.statefulset.name, k8s.node.name{{ if $node.enabled }}, k8s.namespace.name, k8s.pod.name{{ end }}]
      labels:
        - {tag_name: k8s.job.name, key: training.kubeflow.org/job-name, from: pod}
  {{- end }}
  {{- if $v.remediation.enabled }}
  filter/faults:
    error_mode: ignore
    metric_conditions:
      - {{ include "otelcol-gpu.faultCondition" . | quote }}
  {{- end }}
  {{- if not $queue }}
  batch: {}
  {{- end }}
exporters:
  {{- if $v.gateway.enabled }}
  load_balancing:
    routing_key: attributes
    routing_attributes: [k8s.namespace.name, k8s.job.name]
    {{- if $queue }}
    {{- include "otelcol-gpu.diskQueue" (dict "size" $v.agent.queueSize "batch" (dict "flush_timeout" "2s" "sizer" "items" "min_size" 4096 "max_size" 8192)) | nindent 4 }}
    {{- end }}
    protocol:
      otlp:
        tls: {insecure: true}
        timeout: 10s
        {{- if $queue }}
        sending_queue: {enabled: false}
        retry_on_failure: {enabled: false}
        {{- end }}
    resolver:
      k8s:
        service: {{ include "otelcol-gpu.gateway.headless" . }}.{{ $ns }}
        ports: [4317]
  {{- else }}
  {{- if $v.prometheus.enabled }}
  prometheus:
    endpoint: ${env:POD_IP}:{{ $v.prometheus.scrapePort | int }}
    send_timestamps: true
    metric_expiration: 5m
  {{- end }}
  {{- if $v.otlp.enabled }}
  otlp_http:
    endpoint: {{ $v.otlp.endpoint }}
    {{- with $v.otlp.headers }}
    headers: {{ toJson . }}
    {{- end }}
    timeout: 30s
    {{- if $queue }}
    {{- include "otelcol-gpu.diskQueue" (dict "size" $v.agent.queueSize "batch" (dict "flush_timeout" "5s" "sizer" "items" "min_size" 4096 "max_size" 8192)) | nindent 4 }}
    {{- end }}
  {{- end }}
  {{- end }}
  {{- if $v.remediation.enabled }}
  {{- range $i := until 2 }}
  otlp_grpc/remediation-{{ $i }}:
    endpoint: {{ $remediation }}-{{ $i }}.{{ $remediation }}.{{ $ns }}.svc:4317
    tls: {insecure: true}
    timeout: 10s
    {{- if $queue }}
    {{- include "otelcol-gpu.diskQueue" (dict "size" 134217728 "batch" (dict "flush_timeout" "1s" "sizer" "items" "min_size" 1024 "max_size" 8192)) | nindent 4 }}
    {{- end }}
  {{- end }}
  {{- end }}
extensions:
  health_check:
    endpoint: ${env:POD_IP}:13133
  {{- if $queue }}
  {{- include "otelcol-gpu.fileStorage" . | nindent 2 }}
  {{- end }}
service:
  telemetry:
    logs:
      encoding: json
  extensions: [health_check{{ if $queue }}, file_storage{{ end }}]
  pipelines:
    {{- $exporters := list }}
    {{- if $v.gateway.enabled }}{{ $exporters = append $exporters "load_balancing" }}{{ end }}
    {{- if and (not $v.gateway.enabled) $v.prometheus.enabled }}{{ $exporters = append $exporters "prometheus" }}{{ end }}
    {{- if and (not $v.gateway.enabled) $v.otlp.enabled }}{{ $exporters = append $exporters "otlp_http" }}{{ end }}
    {{- if $exporters }}
    metrics:
      receivers: {{ toJson $receivers }}
      processors: {{ toJson (concat (list "memory_limiter") (ternary (list "k8s_attributes") (list) $k8sattr) (ternary (list) (list "batch") $queue)) }}
      exporters: {{ toJson $exporters }}
    {{- end }}
    {{- if $v.remediation.enabled }}
    metrics/faults:
      receivers: {{ toJson $faultReceivers }}
      processors: {{ toJson (concat (list "memory_limiter" "filter/faults") (ternary (list) (list "batch") $queue)) }}
      exporters: [otlp_grpc/remediation-0, otlp_grpc/remediation-1]
    {{- end }}
{{- end }}

{{- define "otelcol-gpu.gateway.baseConfig" -}}
{{- $v := .Values }}
{{- $queue := $v.presets.persistentQueue.enabled }}
{{- $alongside := eq $v.dcgmExporter.mode "alongside" }}
{{- $k8sattr := and $alongside $v.presets.kubernetesAttributes.enabled }}
{{- $processors := list "memory_limiter" }}
{{- $exporters := list }}
receivers:
  {{- if $alongside }}
  {{- $processors = append $processors "from_dcgm_exporter" }}
  prometheus:
    config:
      scrape_configs:
        - job_name: nvidia-dcgm-exporter
          scrape_interval: {{ $v.dcgmExporter.scrapeInterval }}
          scrape_timeout: 10s
          honor_labels: true
          kubernetes_sd_configs:
            - role: endpoints
              namespaces:
                names: [{{ $v.dcgmExporter.namespace }}]
          relabel_configs:
            - source_labels: [__meta_kubernetes_service_name]
              action: keep
              regex: {{ $v.dcgmExporter.service }}
            - source_labels: [__meta_kubernetes_endpoint_port_name]
              action: keep
              regex: {{ $v.dcgmExporter.port }}
            - source_labels: [__meta_kubernetes_endpoint_node_name]
              target_label: node
  {{- else }}
  otlp:
    protocols:
      grpc:
        endpoint: ${env:POD_IP}:4317
  {{- end }}
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
  {{- if $alongside }}
  from_dcgm_exporter: {}
  {{- end }}
  {{- if $k8sattr }}
  {{- $processors = append $processors "k8s_attributes" }}
  k8s_attributes:
    auth_type: serviceAccount
    pod_association:
      - sources:
          - {from: resource_attribute, name: k8s.pod.name}
          - {from: resource_attribute, name: k8s.namespace.name}
    extract:
      metadata: [k8s.job.name, k8s.deployment.name, k8s.statefulset.name, k8s.node.name]
      labels:
        - {tag_name: k8s.job.name, key: training.kubeflow.org/job-name, from: pod}
  {{- end }}
  {{- if $v.analyzer.enabled }}
  {{- $processors = append $processors "gpu_analyzer" }}
  gpu_analyzer:
    window: {{ $v.analyzer.window }}
    group_by: {{ toJson $v.analyzer.groupBy }}
  {{- end }}
  {{- if not $queue }}
  {{- $processors = append $processors "batch" }}
  batch: {}
  {{- end }}
{{- if $v.autoscale.targets }}
connectors:
  gpu_autoscale:
    auth: {type: in_cluster}
    leader_election:
      enabled: true
      lease_name: {{ include "otelcol-gpu.component" (list . "autoscale") }}
      lease_namespace: {{ .Release.Namespace }}
    targets: {{ toJson $v.autoscale.targets }}
{{- end }}
exporters:
  {{- if $v.prometheus.enabled }}
  {{- $exporters = append $exporters "otlp_http/prometheus" }}
  otlp_http/prometheus:
    metrics_endpoint: {{ trimSuffix "/" $v.prometheus.url }}/api/v1/otlp/v1/metrics
    timeout: 30s
    {{- if $queue }}
    {{- include "otelcol-gpu.diskQueue" (dict "size" 536870912 "batch" (dict "flush_timeout" "5s" "sizer" "items" "min_size" 8192 "max_size" 16384)) | nindent 4 }}
    {{- end }}
  {{- end }}
  {{- if $v.otlp.enabled }}
  {{- $exporters = append $exporters "otlp_http/backend" }}
  otlp_http/backend:
    endpoint: {{ $v.otlp.endpoint }}
    {{- with $v.otlp.headers }}
    headers: {{ toJson . }}
    {{- end }}
    timeout: 30s
    {{- if $queue }}
    {{- include "otelcol-gpu.diskQueue" (dict "size" 536870912 "batch" (dict "flush_timeout" "5s" "sizer" "items" "min_size" 8192 "max_size" 16384)) | nindent 4 }}
    {{- end }}
  {{- end }}
  {{- if not (or $v.prometheus.enabled $v.otlp.enabled) }}
  {{- $exporters = append $exporters "debug" }}
  debug: {}
  {{- end }}
extensions:
  health_check:
    endpoint: ${env:POD_IP}:13133
  {{- if $queue }}
  {{- include "otelcol-gpu.fileStorage" . | nindent 2 }}
  {{- end }}
service:
  telemetry:
    logs:
      encoding: json
  extensions: [health_check{{ if $queue }}, file_storage{{ end }}]
  pipelines:
    metrics:
      receivers: [{{ ternary "prometheus" "otlp" $alongside }}]
      processors: {{ toJson $processors }}
      exporters: {{ toJson (concat $exporters (ternary (list "gpu_autoscale") (list) (not (empty $v.autoscale.targets)))) }}
    {{- if $v.autoscale.targets }}
    metrics/autoscale:
      receivers: [gpu_autoscale]
      exporters: {{ toJson $exporters }}
    {{- end }}
{{- end }}

{{- define "otelcol-gpu.remediation.baseConfig" -}}
{{- $v := .Values }}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: ${env:POD_IP}:4317
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
  transform/replica:
    metric_statements:
      - context: resource
        statements:
          - set(attributes["service.name"], "{{ include "otelcol-gpu.component" (list . "remediation") }}")
          - set(attributes["service.instance.id"], "${env:POD_NAME}")
connectors:
  gpu_remediation:
    dry_run: {{ not $v.remediation.live }}
    auth: {type: in_cluster}
    {{- if $v.remediation.deviceTaints }}
    actions: {device_taint: true}
    {{- end }}
    {{- if $v.remediation.fabric }}
    fabric: {enabled: true}
    {{- end }}
    leader_election:
      enabled: true
      lease_name: {{ include "otelcol-gpu.component" (list . "remediation") }}
      lease_namespace: {{ .Release.Namespace }}
      identity: ${env:POD_NAME}
exporters:
  {{- if $v.prometheus.enabled }}
  otlp_http/prometheus:
    metrics_endpoint: {{ trimSuffix "/" $v.prometheus.url }}/api/v1/otlp/v1/metrics
    timeout: 30s
    retry_on_failure: {enabled: true, initial_interval: 1s, max_interval: 30s, max_elapsed_time: 5m}
  {{- end }}
  {{- if $v.otlp.enabled }}
  otlp_http/backend:
    endpoint: {{ $v.otlp.endpoint }}
    {{- with $v.otlp.headers }}
    headers: {{ toJson . }}
    {{- end }}
    timeout: 30s
    retry_on_failure: {enabled: true, initial_interval: 1s, max_interval: 30s, max_elapsed_time: 5m}
  {{- end }}
  debug/remediation:
    verbosity: detailed
extensions:
  health_check:
    endpoint: ${env:POD_IP}:13133
service:
  telemetry:
    logs:
      encoding: json
  extensions: [health_check]
  pipelines:
    metrics:
      receivers: [otlp]
      processors: [memory_limiter]
      exporters: [gpu_remediation]
    logs/remediation:
      receivers: [gpu_remediation]
      exporters: [debug/remediation]
    {{- if or $v.prometheus.enabled $v.otlp.enabled }}
    metrics/remediation:
      receivers: [gpu_remediation]
      processors: [transform/replica]
      exporters: {{ toJson (concat (ternary (list "otlp_http/prometheus") (list) $v.prometheus.enabled) (ternary (list "otlp_http/backend") (list) $v.otlp.enabled)) }}
    {{- end }}
{{- end }}
