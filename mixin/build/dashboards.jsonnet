// The shipped dashboards, one file each (jsonnet -S -m, which ends each with
// a newline), indented as people
// write JSON.
local mixin = import '../mixin.libsonnet';

{
  [name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ')
  for name in std.objectFields(mixin.grafanaDashboards)
}
