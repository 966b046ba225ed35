// The mixin's settings. Override any of them, monitoring-mixins style:
//   (import 'mixin.libsonnet') + { _config+:: { selector: 'job="gpu"' } }
{
  _config+:: {
    // Matchers put first into every selector of every rule and panel, for
    // a Prometheus where other sources write the same metric names, e.g.
    // 'job="otelcol-gpu"' or 'cluster="train-1"'. Empty by default: the
    // collector's GPU series reach Prometheus by remote write or OTLP,
    // whose job label comes from a service.name the GPU receivers do not
    // set, so a job matcher that fits every install does not exist.
    selector: '',

    // Matchers for the collector's own telemetry (service::telemetry::
    // metrics, scraped from its :8888), which the alert delivery panels
    // read: a scrape job of its own, e.g. 'job="otelcol-gpu-telemetry"'.
    // Not `selector`: the GPU series and the collector's telemetry reach
    // Prometheus by different routes, with different labels.
    telemetrySelector: '',

    // Label names, as the collector's resource attributes become labels
    // (resource_to_telemetry_conversion, or Prometheus 3's OTLP receiver
    // with underscore escaping). A translation that names them otherwise
    // changes them here; the analyzer's own attributes (bottleneck class,
    // usage state, ...) keep their names.
    labels: {
      gpu: 'hw_id',  // the GPU's UUID: one series per GPU
      gpuName: 'hw_name',  // gpu0, gpu1 ... within a host
      host: 'host_name',
      vendor: 'hw_vendor',
      model: 'hw_model',
      pod: 'k8s_pod_name',
      namespace: 'k8s_namespace_name',
      job: 'k8s_job_name',
      deployment: 'k8s_deployment_name',
      // The gpu_autoscale connector's target (its own resource attribute).
      autoscaleTarget: 'gpu_autoscale_target_name',
    },

    // Thresholds and `for` durations of the alerts on the receivers' raw
    // metrics. The analyzer's own alerts are decided in the collector
    // (processors::gpu_analyzer::alerts) and are forwarded as they are.
    // Thresholds are PromQL text, not numbers: jsonnet prints 0.95 as
    // 0.94999999999999996.
    alerts: {
      temperatureCelsius: '85',
      temperatureFor: '1m',
      // The GPU's own temperature (the die's, an AMD GPU's hotspot's), not
      // its memory's, whose limit is higher; "" keeps older collectors'
      // series, which had no sensor location.
      temperatureSensors: 'die|hotspot|',
      memoryUtilization: '0.95',
      memoryFor: '1m',
      // The window an uncorrectable ECC error or a critical XID pages for.
      errorWindow: '10m',
      // XIDs that mean the GPU or its job is lost: a reset or a drain, not
      // a retry (NVIDIA's XID catalogue).
      criticalXIDs: ['48', '64', '74', '79', '95', '119', '120', '140'],
      throttleReasons: ['sw_thermal', 'hw_thermal', 'hw_slowdown', 'hw_power_brake'],
      throttleFor: '5m',
      idleRatio: '0.05',
      idleFor: '30m',
      stragglerFor: '5m',
      // A serving target's objective: its serving::slo_wait, in seconds,
      // and how long a request arriving may wait past it before a person
      // is paged. Longer than a start-up (3 m in the example settings): a
      // breach the pods asked for end within one is the autoscaler at
      // work, one that outlasts it is not.
      servingWaitSeconds: '2',
      servingWaitFor: '5m',
    },

    // Each alert's runbook_url is this followed by the alert's name and
    // ".md" (docs/runbooks/ in the repository); the analyzer's forwarded
    // alerts link the analyzer alert's own runbook.
    runbookURLBase: 'https://github.com/otelcol-gpu/otelcol-gpu/blob/main/docs/runbooks/',

    // Recording rule evaluation intervals: utilisation every 30 s, cost
    // (daily increases, expensive) every minute.
    recordingInterval: '30s',
    costInterval: '1m',

    // Dashboards.
    dashboardTags: ['otelcol-gpu'],
    dashboardUIDPrefix: 'otelcol-gpu-',
    dashboardRefresh: '30s',
    dashboardFrom: 'now-6h',
    // The dashboards' name prefix for the Prometheus rule groups too.
    groupPrefix: 'otelcol-gpu',
  },
}
