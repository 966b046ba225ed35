// The shipped dashboards, one file each (jsonnet -m), indented as people
// write JSON.
local mixin = import '../mixin.libsonnet';

{
  [name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
