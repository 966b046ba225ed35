package gpuresetextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-gpu/otelcol-gpu/extension/gpuresetextension/internal/metadata"
)

// NewFactory returns the factory of the gpu_reset extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		createExtension,
		metadata.ExtensionStability,
	)
}

func createExtension(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newActor(cfg.(*Config), set)
}
