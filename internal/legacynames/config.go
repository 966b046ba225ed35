package legacynames

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// ConfigKeys rewrites the deprecated names among the keys of conf's metrics
// and resource_attributes sections (mdatagen's metrics::<name>::enabled) into
// their new names, so that a configuration written for the old names loads
// for as long as the old names exist. It returns conf itself where it holds
// none, and the warnings to log for those it rewrote. An old key and the new
// key it becomes both set is an error.
func ConfigKeys(conf *confmap.Conf) (*confmap.Conf, []string, error) {
	var warnings []string
	var raw map[string]any
	for _, section := range []string{"metrics", "resource_attributes"} {
		keys, ok := conf.Get(section).(map[string]any)
		if !ok {
			continue
		}
		var olds []string
		for k := range keys {
			if _, ok := configKey(k); ok {
				olds = append(olds, k)
			}
		}
		if len(olds) == 0 {
			continue
		}
		slices.Sort(olds)
		if raw == nil {
			raw = conf.ToStringMap()
		}
		out := make(map[string]any, len(keys))
		for k, v := range keys {
			if !slices.Contains(olds, k) {
				out[k] = v
			}
		}
		for _, old := range olds {
			n, _ := configKey(old)
			if _, set := out[n]; set {
				return nil, nil, fmt.Errorf("%s::%s (deprecated) and %s::%s are both set; keep %s", section, old, section, n, n)
			}
			out[n] = keys[old]
			warnings = append(warnings, fmt.Sprintf("%s::%s is deprecated and will be removed: the metric is now %s; use %s::%s", section, old, n, section, n))
		}
		raw[section] = out
	}
	if raw == nil {
		return conf, nil, nil
	}
	return confmap.NewFromStringMap(raw), warnings, nil
}

// configKey returns the new name of a deprecated metric or resource
// attribute name.
func configKey(old string) (string, bool) {
	switch old {
	case OldAMDProcessCount:
		return metricnames.OTelGPUProcessCount, true
	case OldProcessOwner:
		return metricnames.AttrOTelGPUProcessOwner, true
	}
	for n, o := range metrics {
		if o == old {
			return n, true
		}
	}
	return "", false
}
