// Query text from the mixin's settings, shared by the rules, the alerts and
// the dashboards so that a selector or a label name is changed in one place.
function(config) {
  // fmt fills a template's %(host)s, %(gpu)s ... with _config.labels (and
  // extra): a label renamed in the config is renamed in every query.
  fmt(template, extra={}):: template % (config.labels + extra),

  // matchers joins _config.selector and the given matchers (templates for
  // fmt), leaving out empty ones so that the default empty selector adds
  // nothing.
  matchers(list):: std.join(', ', std.filter(function(m) m != '', [config.selector] + [self.fmt(m) for m in list])),

  // sel is a metric with its matchers; the bare name when there are none,
  // as a person would write it.
  sel(metric, list=[])::
    local m = self.matchers(list);
    if m == '' then metric else '%s{%s}' % [metric, m],

  // alternation turns a list into a regular expression's alternatives.
  alternation(values):: std.join('|', values),
}
