package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// The serving mode learns over hours and days: the daily profile needs a
// whole day before it shapes the forecast, the headroom twenty matured
// forecast errors, a pod's capacity a busy pod. With a storage extension
// each serving target's estimator is saved under "serving/NAMESPACE/KIND/NAME"
// every checkpoint_interval and at shutdown, and restored at start, so
// that a collector restarted (an upgrade, a node drained) does not size
// its services from a cold start again. The reactive mode keeps nothing:
// the HPA's own state (recommendations, scale events) is minutes long.

func stateKey(t *target) string { return "serving/" + t.ref.String() }

// openStorage opens the storage extension, if one is configured, and
// restores each serving target's estimator. A state that cannot be read
// is logged and the target starts afresh; an extension that is missing
// or not a storage extension is a configuration error.
func (a *autoscaler) openStorage(ctx context.Context, host component.Host) error {
	if a.cfg.Storage == nil {
		return nil
	}
	ext, ok := host.GetExtensions()[*a.cfg.Storage]
	if !ok {
		return fmt.Errorf("storage: extension %q not found; add it under extensions and to service::extensions", a.cfg.Storage)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("storage: extension %q is not a storage extension", a.cfg.Storage)
	}
	client, err := se.GetClient(ctx, component.KindConnector, a.id, "")
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	a.evalMu.Lock()
	defer a.evalMu.Unlock()
	a.store = client
	for _, t := range a.targets {
		if t.serving == nil {
			continue
		}
		raw, err := client.Get(ctx, stateKey(t))
		if err != nil {
			a.logger.Warn("Could not read the saved serving state; starting afresh", zap.String("target", t.ref.String()), zap.Error(err))
			continue
		}
		if raw == nil {
			continue // nothing saved yet
		}
		if err := t.serving.est.RestoreState(raw); err != nil {
			a.logger.Warn("Saved serving state not restored; starting afresh", zap.String("target", t.ref.String()), zap.Error(err))
			continue
		}
		a.logger.Info("Serving state restored", zap.String("target", t.ref.String()), zap.Int("bytes", len(raw)))
	}
	return nil
}

// checkpoint writes the serving targets' state when checkpoint_interval
// has passed since the last write. Called with evalMu held. A failed
// write is logged and tried again at the next evaluation: the state is
// still in memory.
func (a *autoscaler) checkpoint(ctx context.Context, now time.Time) {
	if a.store == nil || a.cfg.CheckpointInterval == 0 || now.Sub(a.saved) < a.cfg.CheckpointInterval {
		return
	}
	if a.save(ctx) {
		a.saved = now
	}
}

// save writes every serving target's state and reports whether all were
// written. Called with evalMu held.
func (a *autoscaler) save(ctx context.Context) bool {
	var ops []*storage.Operation
	for _, t := range a.targets {
		if t.serving == nil {
			continue
		}
		b, err := t.serving.est.MarshalState()
		if err != nil {
			a.logger.Warn("Could not encode the serving state", zap.String("target", t.ref.String()), zap.Error(err))
			continue
		}
		ops = append(ops, storage.SetOperation(stateKey(t), b))
	}
	if len(ops) == 0 {
		return true
	}
	if err := a.store.Batch(ctx, ops...); err != nil {
		a.logger.Warn("Could not save the serving state; trying again at the next evaluation", zap.Error(err))
		return false
	}
	return true
}

// closeStorage saves the state a last time and closes the client. Called
// with evalMu held.
func (a *autoscaler) closeStorage() {
	if a.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.save(ctx)
	if err := a.store.Close(ctx); err != nil {
		a.logger.Warn("Could not close the storage client", zap.Error(err))
	}
	a.store = nil
}
