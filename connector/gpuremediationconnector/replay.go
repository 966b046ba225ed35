package gpuremediationconnector

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

var _ offline.Remediator = (*instance)(nil)

// ReplayBatch implements offline.Remediator: the connector's decisions on
// recorded telemetry, with time from the data. The replay tool makes the
// connector with auth none and dry_run on, so no decision reaches a
// cluster.
func (i *instance) ReplayBatch(md pmetric.Metrics, now time.Time) []offline.Decision {
	r := i.Value
	r.mu.Lock()
	r.now = func() time.Time { return now }
	r.mu.Unlock()
	_ = r.consume(context.Background(), md)
	r.tick(context.Background(), now)
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]offline.Decision(nil), r.out...)
}
