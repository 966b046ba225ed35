// Package backend defines what the receiver needs from a source of GPU
// telemetry: DCGM, NVML or the simulated fleet.
package backend

import (
	"context"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Backend reads GPUs. Methods are called from one goroutine at a time.
type Backend interface {
	// Name is the backend's config name: dcgm, nvml or simulated.
	Name() string
	// Connect opens the source, or reopens it after Collect failed. It
	// returns an error that names the library or endpoint it tried.
	Connect(ctx context.Context) error
	// Collect returns one sample per device, taken no earlier than
	// now-maxAge: a value older than that is left out rather than repeated.
	// An error means the source was lost; the caller closes the backend,
	// backs off and calls Connect again.
	Collect(ctx context.Context, now time.Time, maxAge time.Duration) ([]gpu.Sample, error)
	// Close releases the source. It is safe to call on a closed backend.
	Close() error
}
