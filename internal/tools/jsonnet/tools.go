//go:build tools

// Package jsonnet pins go-jsonnet for `make mixin`: jsonnet builds the
// monitoring mixin (mixin/) into the shipped rules and dashboards,
// jsonnetfmt and jsonnet-lint check its sources.
package jsonnet

import (
	_ "github.com/google/go-jsonnet/cmd/jsonnet"
	_ "github.com/google/go-jsonnet/cmd/jsonnet-lint"
	_ "github.com/google/go-jsonnet/cmd/jsonnetfmt"
)
