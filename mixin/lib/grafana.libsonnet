// The few Grafana JSON shapes the dashboards use, as plain functions: a
// dashboard with the datasource, vendor and model variables, panels and
// Prometheus targets. Panel ids and target refIds are numbered here, so
// that no two panels share an id.
function(config) {
  local p = (import 'promql.libsonnet')(config),
  local l = config.labels,
  local datasource = { type: 'prometheus', uid: '${datasource}' },

  // The vendor and model variables filter every panel: a mixed NVIDIA and
  // AMD fleet in one view.
  local gpuFilter = ['%(vendor)s=~"$vendor"', '%(model)s=~"$model"'],

  fmt:: p.fmt,
  // sel is a metric with the selector, the variables' filter and extra
  // matchers.
  sel(metric, extra=[]):: p.sel(metric, gpuFilter + extra),

  // A variable over a label's values, from the temperature (every GPU of
  // every vendor reports one); All matches series without the label too.
  local labelVariable(name, label, series) = {
    local query = 'label_values(%s, %s)' % [series, label],
    name: name,
    label: std.asciiUpper(name[0]) + name[1:],
    type: 'query',
    datasource: datasource,
    query: { query: query, refId: name },
    definition: query,
    refresh: 2,  // on time range change: new GPUs appear
    includeAll: true,
    multi: true,
    allValue: '.*',
    current: { text: 'All', value: '$__all' },
  },
  local variables = [
    { name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Prometheus' },
    labelVariable('vendor', l.vendor, p.sel('hw_temperature_celsius')),
    labelVariable('model', l.model, p.sel('hw_temperature_celsius', [gpuFilter[0]])),
  ],

  // A time series query; legend is a template of label names for fmt.
  target(expr, legend='__auto'):: { expr: expr, legendFormat: p.fmt(legend) },
  // A table of the query's current values, one row per series.
  tableTarget(expr):: { expr: expr, format: 'table', instant: true },

  pos(x, y, w, h):: { x: x, y: y, w: w, h: h },

  // A panel; unit, description and transformations only where given.
  panel(type, title, gridPos, targets, unit='', description='', transformations=[])::
    local optional = (if description == '' then {} else { description: description })
                     + (if transformations == [] then {} else { transformations: transformations });
    optional {
      type: type,
      title: title,
      datasource: datasource,
      gridPos: gridPos,
      targets: std.mapWithIndex(function(i, t) { refId: std.char(std.codepoint('A') + i) } + t, targets),
      fieldConfig: { defaults: if unit == '' then {} else { unit: unit }, overrides: [] },
      options: {},
    },

  // A table panel's columns renamed and its Time column hidden.
  organize(renames):: [{ id: 'organize', options: { excludeByName: { Time: true }, renameByName: renames } }],

  dashboard(uid, title, description, tags, panels, version=1):: {
    uid: config.dashboardUIDPrefix + uid,
    title: title,
    description: description,
    tags: config.dashboardTags + tags,
    schemaVersion: 39,
    version: version,
    editable: true,
    time: { from: config.dashboardFrom, to: 'now' },
    refresh: config.dashboardRefresh,
    templating: { list: variables },
    panels: std.mapWithIndex(function(i, panel) panel { id: i + 1 }, panels),
  },
}
