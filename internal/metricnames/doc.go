// Package metricnames is the one table of the metric names and units, and
// the attribute names, that otelcol-gpu reads and writes. names.go is
// generated from the components' metadata.yaml files (and undeclared.yaml,
// for names no component declares yet) by `make generate`; a test fails
// when it is out of date. Code spells a name only through this table, so
// renaming a metric in metadata.yaml renames its constant here and every
// reader of the old name stops compiling, instead of silently missing it.
package metricnames

//go:generate go run ./internal/gen

// Metric is one metric of the table.
type Metric struct {
	Name, Unit string
	// Origin is the directory, relative to the module root, of the file
	// that declares the metric: a component's (its metadata.yaml), or
	// internal/metricnames (undeclared.yaml).
	Origin string
}

// Attribute is one attribute (or resource attribute) of the table.
type Attribute struct {
	Name   string
	Origin string // as Metric.Origin
}
