// Package storagetest runs the real file_storage extension for tests of
// components that keep their state across restarts: a test starts it on a
// directory, stops it, and starts it again on the same directory, as a
// collector does across a restart.
package storagetest

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
)

// Host is a collector host with the given extensions.
type Host map[component.ID]component.Component

// GetExtensions implements component.Host.
func (h Host) GetExtensions() map[component.ID]component.Component { return h }

// FileStorage starts file_storage named id on dir and returns a host that
// holds it, and the function that shuts it down.
func FileStorage(tb testing.TB, id component.ID, dir string) (Host, func()) {
	tb.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(context.Background(), extension.Settings{ID: id, TelemetrySettings: componenttest.NewNopTelemetrySettings()}, cfg)
	if err != nil {
		tb.Fatalf("file_storage: %v", err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		tb.Fatalf("file_storage: %v", err)
	}
	return Host{id: ext}, func() {
		if err := ext.Shutdown(context.Background()); err != nil {
			tb.Errorf("file_storage: %v", err)
		}
	}
}
