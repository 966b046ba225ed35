// grafanaDashboards: file name to dashboard, as monitoring-mixins expect.
{
  grafanaDashboards+:: {
    'fleet-overview.json': (import 'fleet-overview.libsonnet')($._config),
    'job-stragglers.json': (import 'job-stragglers.libsonnet')($._config),
    'bottlenecks.json': (import 'bottlenecks.libsonnet')($._config),
    'idle-cost.json': (import 'idle-cost.libsonnet')($._config),
  },
}
