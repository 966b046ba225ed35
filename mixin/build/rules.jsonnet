// The shipped Prometheus rules file: the recording rules, then the alerts.
local mixin = import '../mixin.libsonnet';

|||
  # Prometheus recording and alerting rules for otelcol-gpu's metrics.
  # Generated from the monitoring mixin (mixin/) by `make mixin`: do not edit;
  # the why of each rule is in mixin/rules.libsonnet and mixin/alerts.libsonnet.
  # Checked with `promtool check rules` and unit-tested with
  # `promtool test rules rules_test.yaml`.
||| + std.manifestYamlDoc({ groups: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups }, indent_array_in_object=true, quote_keys=false)
