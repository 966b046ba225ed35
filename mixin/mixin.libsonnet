// otelcol-gpu's monitoring mixin: the recording rules, the alerts and the
// Grafana dashboards for the collector's GPU metrics, from one source, in
// the monitoring-mixins layout (_config, prometheusRules, prometheusAlerts,
// grafanaDashboards). `make mixin` builds the shipped files from it.
(import 'config.libsonnet') +
(import 'rules.libsonnet') +
(import 'alerts.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
