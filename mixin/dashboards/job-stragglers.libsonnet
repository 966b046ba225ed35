// Which GPU slows down its training job: the analyzer's straggler verdicts
// and the signals behind them, per job.
function(config)
  local g = (import '../lib/grafana.libsonnet')(config);
  local panel = g.panel, pos = g.pos, target = g.target, sel = g.sel, fmt = g.fmt;
  // The GPUs of a job: k8s_attributes named the job holding them.
  local inJob = '%(job)s!=""';

  g.dashboard(
    'stragglers',
    'GPU stragglers by job',
    "Which GPU slows down its training job: the analyzer's straggler verdicts and the signals behind them, per job.",
    ['stragglers'],
    [
      panel('table', 'Stragglers now', pos(0, 0, 24, 6), [target(sel('otelgpu_straggler_state') + ' == 1')]),
      panel(
        'timeseries',
        'Straggler score (1 = threshold)',
        pos(0, 6, 12, 8),
        [target(fmt('max by (%(namespace)s, %(job)s, %(host)s, %(gpuName)s) (%(m)s)', { m: sel('otelgpu_straggler_score_ratio') }), '{{%(job)s}} {{%(host)s}} {{%(gpuName)s}}')],
      ),
      panel(
        'timeseries',
        'SM activity by job (NVIDIA with profiling only)',
        pos(12, 6, 12, 8),
        [target(fmt('avg by (%(namespace)s, %(job)s) (%(m)s)', { m: sel('nvidia_gpu_sm_active_ratio', [inJob]) }), '{{%(namespace)s}}/{{%(job)s}}')],
        unit='percentunit',
      ),
      panel(
        'timeseries',
        "SM clock of the job's GPUs (NVIDIA)",
        pos(0, 14, 12, 8),
        [target(sel('nvidia_gpu_clock_frequency_hertz', ['nvidia_gpu_clock="sm"', inJob]), '{{%(host)s}} {{%(gpuName)s}}')],
        unit='hertz',
      ),
      panel(
        'timeseries',
        "SM activity of the job's GPUs (NVIDIA with profiling only)",
        pos(12, 14, 12, 8),
        [target(sel('nvidia_gpu_sm_active_ratio', [inJob]), '{{%(host)s}} {{%(gpuName)s}}')],
        unit='percentunit',
      ),
    ],
  )
