// Recording rules (prometheusRules): utilisation, bottleneck classes, cost
// and the fleet funnel, from the collector's metrics as the
// prometheus_remote_write exporter writes them (resource attributes as
// labels: resource_to_telemetry_conversion).
{
  local config = $._config,
  local p = (import 'lib/promql.libsonnet')(config),
  local fmt = p.fmt,
  local sel = p.sel,

  prometheusRules+:: {
    groups+: [
      {
        name: config.groupPrefix + '.recording',
        interval: config.recordingInterval,
        rules: [
          // Fleet utilisation, per cluster node and per job.
          {
            record: 'host:hw_gpu_utilization:avg',
            expr: fmt('avg by (%(host)s) (%(m)s)', { m: sel('hw_gpu_utilization_ratio', ['hw_gpu_task="general"']) }),
          },
          {
            record: 'job:nvidia_gpu_sm_active:avg',
            expr: fmt('avg by (%(namespace)s, %(job)s) (%(m)s)', { m: sel('nvidia_gpu_sm_active_ratio') }),
          },
          // GPUs in each bottleneck class, and GPU-hours per class (cost).
          {
            record: 'class:otelgpu_bottleneck:count',
            expr: 'count by (otelgpu_bottleneck_class) (%s == 1)' % sel('otelgpu_bottleneck_state'),
          },
          {
            record: 'class:otelgpu_bottleneck_time:gpu_hours_1h',
            expr: 'sum by (otelgpu_bottleneck_class) (increase(%s[1h])) / 3600' % sel('otelgpu_bottleneck_time_seconds_total'),
          },
          // Frame buffer in use, as a ratio of usable memory.
          {
            record: 'gpu:hw_gpu_memory_utilization:ratio',
            expr: fmt('max by (%(gpu)s, %(host)s) (%(m)s)', { m: sel('hw_gpu_memory_utilization_ratio') }),
          },
          // A serving target's share of the last hour in which a request
          // arriving would have waited no longer than the objective (the
          // alert's threshold): what gpureplay's held-out report calls the
          // time within the objective. Hours with no pod reporting are not
          // in it.
          {
            record: 'target:gpu_autoscale_serving_objective:attainment_1h',
            expr: fmt('avg by (%(namespace)s, %(autoscaleTarget)s) (avg_over_time((%(m)s <= bool %(slo)s)[1h:%(step)s]))', {
              m: sel('gpu_autoscale_serving_queue_wait_seconds'),
              slo: config.alerts.servingWaitSeconds,
              step: config.recordingInterval,
            }),
          },
        ],
      },

      // What the GPUs cost and what is wasted, from the analyzer's
      // cumulative otelgpu.time and otelgpu.cost per usage state (used,
      // waiting, workload_idle, cluster_idle, unknown), and the fleet
      // funnel. The funnel is computed here rather than in the collector: a
      // gateway tier is sharded by job, so no one analyzer sees the whole
      // fleet, and the grouping (node pool, namespace, team) is a query's
      // choice. For node pools, add the pool label through k8s_attributes
      // and group by it instead of the model.
      {
        name: config.groupPrefix + '.cost',
        interval: config.costInterval,
        rules: [
          // Spend per namespace and usage state over the last day, in the
          // currency of the prices (chargeback; "" is GPUs without a pod).
          {
            record: 'namespace_state:otelgpu_cost:increase1d',
            expr: fmt('sum by (%(namespace)s, otelgpu_usage_state) (increase(%(m)s[1d]))', { m: sel('otelgpu_cost_total') }),
          },
          {
            record: 'namespace_state:otelgpu_time:gpu_hours_1d',
            expr: fmt('sum by (%(namespace)s, otelgpu_usage_state) (increase(%(m)s[1d])) / 3600', { m: sel('otelgpu_time_seconds_total') }),
          },
          // Spend per namespace and bottleneck class over the last day:
          // each GPU's class time at that GPU's average price ("waiting on
          // input cost us X").
          {
            record: 'namespace_class:otelgpu_cost:increase1d',
            expr: fmt(|||
              sum by (%(namespace)s, otelgpu_bottleneck_class) (
                increase(%(time)s[1d])
                  * on (%(gpu)s) group_left ()
                (sum by (%(gpu)s) (increase(%(cost)s[1d])) / sum by (%(gpu)s) (increase(%(seconds)s[1d])))
              )
            |||, {
              time: sel('otelgpu_bottleneck_time_seconds_total'),
              cost: sel('otelgpu_cost_total'),
              seconds: sel('otelgpu_time_seconds_total'),
            }),
          },
          // Money burnt per hour right now on idle GPUs, per namespace.
          {
            record: 'namespace:otelgpu_cost_idle:rate1h',
            expr: fmt('sum by (%(namespace)s) (rate(%(m)s[5m])) * 3600', { m: sel('otelgpu_cost_total', ['otelgpu_usage_state=~"workload_idle|cluster_idle"']) }),
          },
        ] + funnel + [
          // Cost per million generated tokens per inference deployment,
          // where vLLM's token counter is in the same Prometheus with the
          // same namespace and deployment labels (k8s_attributes on its
          // scrape). vLLM's series are not the collector's: the selector
          // is not applied to them.
          {
            record: 'deployment:otelgpu_cost_per_million_tokens:1h',
            expr: fmt(|||
              sum by (%(namespace)s, %(deployment)s) (increase(%(cost)s[1h]))
                / ((sum by (%(namespace)s, %(deployment)s) (increase(vllm:generation_tokens_total[1h])) > 0) / 1e6)
            |||, { cost: sel('otelgpu_cost_total') }),
          },
        ],
      },
    ],
  },

  // The funnel: total, allocated (a pod holds it), active (neither idle nor
  // unknown), effective (mean SM activity >= 0.5 over the last minute,
  // NVIDIA's and Datadog's sense), per GPU model and per namespace.
  local stage(record, by, stageName, expr) = {
    record: record,
    expr: 'count by (%s) (%s)' % [fmt(by), expr],
    labels: { stage: stageName },
  },
  local state(matchers) = sel('otelgpu_bottleneck_state', matchers) + ' == 1',
  local effective(matchers) = 'avg_over_time(%s[1m]) >= 0.5' % sel('nvidia_gpu_sm_active_ratio', matchers),
  local allocated = '%(pod)s!=""',
  local busy = 'otelgpu_bottleneck_class!~"idle|unknown"',
  local funnel = [
    stage('hw_model:nvidia_gpu_fleet:count', '%(model)s', 'total', state([])),
    stage('hw_model:nvidia_gpu_fleet:count', '%(model)s', 'allocated', state([allocated])),
    stage('hw_model:nvidia_gpu_fleet:count', '%(model)s', 'active', state([busy])),
    stage('hw_model:nvidia_gpu_fleet:count', '%(model)s', 'effective', effective([])),
    stage('namespace:nvidia_gpu_fleet:count', '%(namespace)s', 'allocated', state([allocated])),
    stage('namespace:nvidia_gpu_fleet:count', '%(namespace)s', 'active', state([allocated, busy])),
    stage('namespace:nvidia_gpu_fleet:count', '%(namespace)s', 'effective', effective([allocated])),
  ],
}
