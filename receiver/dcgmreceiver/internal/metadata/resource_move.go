package metadata

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// This file is not generated: mdatagen writes only generated_* files
// here and leaves it alone.

// WithResourceMoved is WithResource for a resource the caller is done with
// (a ResourceBuilder's Emit): it moves the attributes instead of copying
// them, one allocation fewer per attribute of every resource a scrape
// emits. The resource attribute filters see the same resource.
func WithResourceMoved(res pcommon.Resource) ResourceMetricsOption {
	return resourceMetricsOptionFunc(func(rm pmetric.ResourceMetrics) {
		res.MoveTo(rm.Resource())
	})
}

// EnsureCapacity makes room for n attributes in the resource being built,
// so that setting them grows its attribute list once instead of at every
// doubling.
func (rb *ResourceBuilder) EnsureCapacity(n int) {
	rb.res.Attributes().EnsureCapacity(n)
}
