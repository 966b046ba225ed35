// What holds each GPU back, as the analyzer classifies it, and the signals
// behind the memory and throttled classes.
function(config)
  local g = (import '../lib/grafana.libsonnet')(config);
  local panel = g.panel, pos = g.pos, target = g.target, sel = g.sel, fmt = g.fmt;
  local classes = sel('otelgpu_bottleneck_state') + ' == 1';
  local perGPU = '%(host)s, %(gpuName)s, %(vendor)s, %(model)s';
  local perReason = '%(host)s, %(gpuName)s, %(model)s';

  g.dashboard(
    'bottlenecks',
    'GPU bottleneck breakdown',
    'What holds each GPU back, as the analyzer classifies it: compute, memory, input, launch, idle, throttled, faulted.',
    ['bottlenecks'],
    [
      panel('piechart', 'GPUs per bottleneck class', pos(0, 0, 12, 8), [target('count by (otelgpu_bottleneck_class) (%s)' % classes, '{{otelgpu_bottleneck_class}}')]),
      panel(
        'bargauge',
        'GPU-hours per class, last hour',
        pos(12, 0, 12, 8),
        [target('sum by (otelgpu_bottleneck_class) (increase(%s[1h])) / 3600' % sel('otelgpu_bottleneck_time_seconds_total'), '{{otelgpu_bottleneck_class}}')],
      ),
      panel('table', 'Class of each GPU', pos(0, 8, 24, 8), [target(classes)]),
      panel(
        'timeseries',
        'Memory traffic (NVIDIA DRAM activity, AMD memory controller activity)',
        pos(0, 16, 12, 8),
        [target(
          fmt('max by (' + perGPU + ') (%(nvidia)s) or max by (' + perGPU + ') (%(amd)s)', {
            nvidia: sel('nvidia_gpu_dram_active_ratio'),
            amd: sel('amd_gpu_umc_activity_ratio'),
          }),
          '{{%(host)s}} {{%(gpuName)s}} ({{%(model)s}})',
        )],
        unit='percentunit',
      ),
      panel(
        'timeseries',
        'Throttled share of time (NVIDIA clock event reasons, AMD violation residency)',
        pos(12, 16, 12, 8),
        [target(
          fmt('sum by (' + perReason + ', nvidia_gpu_throttle_reason) (rate(%(nvidia)s[5m])) or max by (' + perReason + ', amd_gpu_violation_reason) (%(amd)s)', {
            nvidia: sel('nvidia_gpu_throttle_time_seconds_total'),
            amd: sel('amd_gpu_violation_residency_ratio'),
          }),
          '{{%(host)s}} {{%(gpuName)s}} {{nvidia_gpu_throttle_reason}}{{amd_gpu_violation_reason}}',
        )],
        unit='percentunit',
      ),
    ],
  )
