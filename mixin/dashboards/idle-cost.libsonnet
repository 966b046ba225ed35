// What the GPUs cost and what is wasted: spend per usage state and
// namespace, the fleet funnel, idle GPUs held by pods, GPU-hours per
// bottleneck class.
function(config)
  local g = (import '../lib/grafana.libsonnet')(config);
  local panel = g.panel, pos = g.pos, target = g.target, sel = g.sel, fmt = g.fmt;
  local classTime(matchers) = sel('otelgpu_bottleneck_time_seconds_total', matchers);
  local cost(matchers) = sel('otelgpu_cost_total', matchers);
  local heldIdle = sel('otelgpu_bottleneck_state', ['otelgpu_bottleneck_class="idle"', '%(pod)s!=""']) + ' == 1';
  // Time that did no work, and is paid for.
  local wasted = 'otelgpu_usage_state=~"workload_idle|cluster_idle|waiting"';
  local inNamespace = '%(namespace)s!=""';

  g.dashboard(
    'idle-cost',
    'Cost of idle and waiting GPUs',
    'What the GPUs cost and what is wasted: spend per usage state and namespace, the total-allocated-active-effective funnel, idle GPUs held by pods, and GPU-hours per bottleneck class.',
    ['cost'],
    version=2,
    panels=[
      panel('stat', 'Idle GPU-hours, last 24 h', pos(0, 0, 8, 5), [target('sum(increase(%s[24h])) / 3600' % classTime(['otelgpu_bottleneck_class="idle"']))]),
      panel(
        'stat',
        'Waiting GPU-hours (input or launch bound), last 24 h',
        pos(8, 0, 8, 5),
        [target('sum(increase(%s[24h])) / 3600' % classTime(['otelgpu_bottleneck_class=~"input_bound|launch_bound"']))],
      ),
      panel('stat', 'Idle GPUs held by pods now', pos(16, 0, 8, 5), [target('count(%s) or vector(0)' % heldIdle)]),
      panel(
        'bargauge',
        'Idle GPU-hours by namespace, last 24 h',
        pos(0, 5, 12, 8),
        [target(fmt('sum by (%(namespace)s) (increase(%(m)s[24h])) / 3600', { m: classTime(['otelgpu_bottleneck_class="idle"', inNamespace]) }), '{{%(namespace)s}}')],
      ),
      panel('table', 'Idle GPUs held by pods', pos(12, 5, 12, 8), [target(heldIdle)]),
      panel(
        'bargauge',
        'Energy, last 24 h',
        pos(0, 13, 24, 8),
        [target(fmt('sum by (%(host)s) (increase(%(m)s[24h])) / 3.6e6', { m: sel('hw_energy_joules_total') }), '{{%(host)s}}')],
        unit='kwatth',
      ),
      panel(
        'stat',
        'Spent on idle GPUs, last 24 h',
        pos(0, 21, 8, 5),
        [target('sum(increase(%s[24h]))' % cost([wasted]))],
        unit='currencyUSD',
        description="Cost of GPU time that did no work: idle and held by a pod (workload_idle), idle and unallocated (cluster_idle), or busy at a small fraction of its power without profiling fields (waiting: spinning in a collective for a peer), at the processor's cost prices.",
      ),
      panel('stat', 'Burning on idle and waiting GPUs now, per hour', pos(8, 21, 8, 5), [target('sum(rate(%s[5m])) * 3600' % cost([wasted]))], unit='currencyUSD'),
      panel(
        'stat',
        'Share of GPU spend used, last 24 h',
        pos(16, 21, 8, 5),
        [target('sum(increase(%s[24h])) / sum(increase(%s[24h]))' % [cost(['otelgpu_usage_state="used"']), cost([])])],
        unit='percentunit',
      ),
      panel(
        'bargauge',
        'Wasted per namespace and state, last 24 h',
        pos(0, 26, 12, 8),
        [target(fmt('sum by (%(namespace)s, otelgpu_usage_state) (increase(%(m)s[24h]))', { m: cost([wasted]) }), '{{%(namespace)s}} {{otelgpu_usage_state}}')],
        unit='currencyUSD',
        description="A namespace's workload_idle is its pods' zombie allocations; cluster_idle has no namespace: capacity nobody asked for.",
      ),
      // The funnel of the recording rules hw_model:nvidia_gpu_fleet:count
      // and namespace:nvidia_gpu_fleet:count, for the variables' GPUs.
      panel(
        'bargauge',
        'GPU funnel: total, allocated, active, effective',
        pos(12, 26, 12, 8),
        [
          target('count(%s == 1)' % sel('otelgpu_bottleneck_state'), 'total'),
          target('count(%s == 1)' % sel('otelgpu_bottleneck_state', ['%(pod)s!=""']), 'allocated'),
          target('count(%s == 1)' % sel('otelgpu_bottleneck_state', ['otelgpu_bottleneck_class!~"idle|unknown"']), 'active'),
          target('count(avg_over_time(%s[1m]) >= 0.5)' % sel('nvidia_gpu_sm_active_ratio'), 'effective (SM activity >= 0.5)'),
        ],
        description='Every analysed GPU; those a pod holds; those neither idle nor unknown; those whose SM activity averaged at least 0.5 over the last minute. Per model and namespace: the recording rules hw_model:nvidia_gpu_fleet:count and namespace:nvidia_gpu_fleet:count.',
      ),
      panel(
        'table',
        'Top wasting pods, last 24 h',
        pos(0, 34, 12, 8),
        [target(fmt('topk(10, sum by (%(namespace)s, %(pod)s) (increase(%(m)s[24h])))', { m: cost(['otelgpu_usage_state="workload_idle"', '%(pod)s!=""']) })) + { format: 'table', instant: true }],
        unit='currencyUSD',
        description='Pods by the cost of the GPU time they held idle.',
      ),
      panel(
        'bargauge',
        'Spend per namespace by bottleneck class, last 24 h (GPU-hours)',
        pos(12, 34, 12, 8),
        [target(fmt('sum by (%(namespace)s, otelgpu_bottleneck_class) (increase(%(m)s[24h])) / 3600', { m: classTime([inNamespace]) }), '{{%(namespace)s}} {{otelgpu_bottleneck_class}}')],
        description='Where the used time went: GPU-hours waiting on input or launches are a cost too.',
      ),
    ],
  )
