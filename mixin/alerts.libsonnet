// Alerting rules (prometheusAlerts), for users who route alerts through
// Prometheus. Every alert carries a severity and a runbook_url to
// docs/runbooks/<alertname>.md.
{
  local config = $._config,
  local a = config.alerts,
  local p = (import 'lib/promql.libsonnet')(config),
  local fmt = p.fmt,
  local sel = p.sel,

  // alert builds one rule; `for` is left out where it is empty (page at
  // the first evaluation). runbook names the runbook file, the alert's own
  // name unless it is templated (the forwarded analyzer alerts).
  local alert(name, expr, severity, summary, forDuration='', runbook=name) = {
    alert: name,
    expr: expr,
    labels: { severity: severity },
    annotations: {
      summary: fmt(summary),
      runbook_url: config.runbookURLBase + runbook + '.md',
    },
  } + (if forDuration == '' then {} else { 'for': forDuration }),

  // "GPU gpu3 on node-1": the GPU as a person finds it.
  local gpu = 'GPU {{ $labels.%(gpuName)s }} on {{ $labels.%(host)s }}',

  prometheusAlerts+:: {
    groups+: [
      {
        // The classics, on the receivers' own metrics: useful without the
        // analyzer, and a cross-check of it.
        name: config.groupPrefix + '.raw',
        rules: [
          alert(
            'GPUTemperatureHigh',
            '%s >= %s' % [sel('hw_temperature_celsius', ['hw_sensor_location=~"%s"' % a.temperatureSensors]), a.temperatureCelsius],
            'warning',
            gpu + ' at {{ $value }} °C',
            a.temperatureFor,
          ),
          alert(
            'GPUMemoryExhausted',
            '%s >= %s' % [sel('hw_gpu_memory_utilization_ratio'), a.memoryUtilization],
            'warning',
            gpu + ' has {{ $value | humanizePercentage }} of its memory in use',
            a.memoryFor,
          ),
          alert(
            'GPUUncorrectableECCErrors',
            'increase(%s[%s]) > 0' % [sel('hw_errors_total', ['error_type="uncorrected"']), a.errorWindow],
            'critical',
            gpu + ' had uncorrectable ECC errors: drain and reset it',
          ),
          alert(
            'GPUCriticalXID',
            // The collector makes a GPU's XID counter when the XID
            // happens, already at 1: increase() of a series that starts
            // at 1 is 0 (Prometheus 2), so the first XID a GPU raises
            // would never page. A series that is new within the window
            // pages too; the cost is a page for an XID older than the
            // window on a Prometheus that has just started scraping.
            local xid = sel('nvidia_gpu_xid_errors_total', ['nvidia_gpu_xid=~"%s"' % p.alternation(a.criticalXIDs)]);
            'increase(%s[%s]) > 0 or (%s unless %s offset %s)' % [xid, a.errorWindow, xid, xid, a.errorWindow],
            'critical',
            gpu + ' raised XID {{ $labels.nvidia_gpu_xid }}',
          ),
          alert(
            'GPUThermalThrottling',
            'max_over_time(%s[5m]) == 1' % sel('nvidia_gpu_clock_event_active', ['nvidia_gpu_clock_event_reason=~"%s"' % p.alternation(a.throttleReasons)]),
            'warning',
            gpu + ' held below its clocks ({{ $labels.nvidia_gpu_clock_event_reason }})',
            a.throttleFor,
          ),
          alert(
            'GPUAllocatedButIdle',
            fmt('%(sm)s < %(idle)s and on (%(gpu)s) (%(util)s < %(idle)s)', {
              sm: sel('nvidia_gpu_sm_active_ratio'),
              util: sel('hw_gpu_utilization_ratio', ['hw_gpu_task="general"', '%(pod)s!=""']),
              idle: a.idleRatio,
            }),
            'info',
            'Pod {{ $labels.%(namespace)s }}/{{ $labels.%(pod)s }} holds GPU {{ $labels.%(gpuName)s }} and does not use it',
            a.idleFor,
          ),
        ],
      },
      {
        name: config.groupPrefix + '.analyzer',
        rules: [
          // The analyzer decides with `for` and hysteresis already: page on
          // its firing alerts as they are. Prometheus sets alertname to the
          // rule's name, so the analyzer's own name moves to gpu_alert, and
          // the runbook is the analyzer alert's.
          alert(
            'GPUAnalyzerAlert',
            'label_replace(%s == 1, "gpu_alert", "$1", "alertname", "(.*)")' % sel('otelgpu_alerts', ['alertstate="firing"']),
            '{{ $labels.severity }}',
            '{{ $labels.gpu_alert }}: ' + gpu + ' ({{ $labels.%(namespace)s }}/{{ $labels.%(job)s }})',
            runbook='{{ $labels.gpu_alert }}',
          ),
          alert(
            'GPUStragglerSlowsJob',
            sel('otelgpu_straggler_state') + ' == 1',
            'warning',
            gpu + ' is slowing down job {{ $labels.%(namespace)s }}/{{ $labels.%(job)s }}',
            a.stragglerFor,
          ),
        ],
      },
      {
        // The gpu_autoscale connector's serving targets: what their users
        // feel, the wait of a request arriving now.
        name: config.groupPrefix + '.autoscale',
        rules: [
          alert(
            'GPUServingObjectiveBroken',
            '%s > %s' % [sel('gpu_autoscale_serving_queue_wait_seconds'), a.servingWaitSeconds],
            'warning',
            'Requests to {{ $labels.%(namespace)s }}/{{ $labels.%(autoscaleTarget)s }} wait {{ $value | humanizeDuration }} for a pod, past the objective of ' + a.servingWaitSeconds + ' s',
            a.servingWaitFor,
          ),
        ],
      },
    ],
  },
}
