// This module writes the otelcol-gpu images without a container engine
// (make release; docs/release.md). It is separate from the main module so
// that go-containerregistry never enters the product's dependencies.
module github.com/otelcol-gpu/otelcol-gpu/internal/tools/ociimage

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
