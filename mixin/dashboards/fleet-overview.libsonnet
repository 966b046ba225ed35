// Every GPU the collector reads: utilisation, SM activity, memory, power,
// temperature, health, and what the analyzer is alerting on.
function(config)
  local g = (import '../lib/grafana.libsonnet')(config);
  local l = config.labels;
  local panel = g.panel, pos = g.pos, target = g.target, sel = g.sel, fmt = g.fmt;
  // One series per GPU: the die's (or hotspot's) sensor, not its memory's.
  local temperature = sel('hw_temperature_celsius', ['hw_sensor_location=~"%s"' % config.alerts.temperatureSensors]);
  local firing = sel('otelgpu_alerts', ['alertstate="firing"']) + ' == 1';
  local perGPU = '%(host)s, %(gpuName)s, %(vendor)s, %(model)s';
  local perGPULegend = '{{%(host)s}} {{%(gpuName)s}} ({{%(model)s}})';
  // The gpu_alertmanager exporter's own telemetry: no GPU labels, so no
  // vendor or model filter, and the telemetry's selector, not the GPUs'.
  local p = (import '../lib/promql.libsonnet')(config { selector: config.telemetrySelector });
  local delivery = 'otelcol_exporter_gpu_alertmanager_alerts_';

  g.dashboard(
    'fleet',
    'GPU fleet overview',
    'Every GPU otelcol-gpu reads: utilisation, SM activity, memory, power, temperature, and what the analyzer is alerting on; vendor and model variables filter a mixed NVIDIA and AMD fleet.',
    ['fleet'],
    [
      panel('stat', 'GPUs reporting', pos(0, 0, 6, 4), [target('count(%s)' % temperature)]),
      panel('stat', 'Firing GPU alerts', pos(6, 0, 6, 4), [target('count(%s) or vector(0)' % firing)]),
      panel('stat', 'Fleet power', pos(12, 0, 6, 4), [target('sum(%s)' % sel('hw_power_watts'))], unit='watt'),
      panel('gauge', 'Average SM activity (NVIDIA with profiling only)', pos(18, 0, 6, 4), [target('avg(%s)' % sel('nvidia_gpu_sm_active_ratio'))], unit='percentunit'),
      panel(
        'timeseries',
        'GPU utilisation by host and model (NVIDIA GPU utilization, AMD gfx activity)',
        pos(0, 4, 12, 8),
        [target(fmt('avg by (%(host)s, %(vendor)s, %(model)s) (%(m)s)', { m: sel('hw_gpu_utilization_ratio', ['hw_gpu_task="general"']) }), '{{%(host)s}} {{%(model)s}}')],
        unit='percentunit',
      ),
      panel(
        'timeseries',
        'SM activity by host (NVIDIA with profiling only)',
        pos(12, 4, 12, 8),
        [target(fmt('avg by (%(host)s) (%(m)s)', { m: sel('nvidia_gpu_sm_active_ratio') }), '{{%(host)s}}')],
        unit='percentunit',
      ),
      panel('timeseries', 'Temperature', pos(0, 12, 12, 8), [target(fmt('max by (' + perGPU + ') (%(m)s)', { m: temperature }), perGPULegend)], unit='celsius'),
      panel(
        'timeseries',
        'Frame buffer in use',
        pos(12, 12, 12, 8),
        [target(fmt('max by (' + perGPU + ') (%(m)s)', { m: sel('hw_gpu_memory_utilization_ratio') }), perGPULegend)],
        unit='percentunit',
      ),
      panel('table', 'Firing alerts', pos(0, 20, 24, 8), [target(firing)]),
      panel(
        'table',
        'GPUs by vendor and model',
        pos(0, 28, 12, 6),
        [g.tableTarget(fmt('count by (%(vendor)s, %(model)s) (%(m)s)', { m: temperature }))],
        description='A mixed fleet in one view: hw.vendor and hw.model, as the dcgm receiver reports them for NVIDIA and AMD GPUs alike.',
        transformations=g.organize({ [l.vendor]: 'Vendor', [l.model]: 'Model', Value: 'GPUs' }),
      ),
      panel(
        'table',
        'GPU health (hw.status): devices by state',
        pos(12, 28, 12, 6),
        [g.tableTarget('count by (hw_state) (%s == 1)' % sel('hw_status'))],
        description="One health state per GPU, MIG instance and partition (the gpu_analyzer's hw.status, decided by the catalogue the remediation acts on): ok, degraded, failed, predicted_failure.",
        transformations=g.organize({ hw_state: 'State', Value: 'Devices' }),
      ),
      // Whether the alerts reach a person: what each collector sent to each
      // Alertmanager, what failed, and what waits.
      panel(
        'timeseries',
        'Alert delivery to Alertmanager: sent and failed per second',
        pos(0, 34, 12, 8),
        [
          target('sum by (instance, endpoint) (rate(%s[5m]))' % p.sel(delivery + 'sent'), 'sent {{instance}} to {{endpoint}}'),
          target('sum by (instance, endpoint) (rate(%s[5m]))' % p.sel(delivery + 'failed'), 'failed {{instance}} to {{endpoint}}'),
        ],
        description="The gpu_alertmanager exporter's telemetry: alerts each Alertmanager accepted (firings, resends, resolves) and alerts in requests that failed (retried). Failed above 0 with queued growing is a peer that takes no alerts; sent at 0 on every endpoint while alerts fire means nobody is paged.",
        unit='short',
      ),
      panel(
        'timeseries',
        'Alert delivery to Alertmanager: queued and active',
        pos(12, 34, 12, 8),
        [
          target('sum by (instance, endpoint) (%s)' % p.sel(delivery + 'queued'), 'queued {{instance}} to {{endpoint}}'),
          target('sum by (instance, state) (%s)' % p.sel(delivery + 'active'), 'active {{instance}} {{state}}'),
        ],
        description='Alerts waiting to be sent, per endpoint, and alerts held and resent, by state (firing; resolved, still resent for resolve_resend).',
        unit='short',
      ),
    ],
  )
