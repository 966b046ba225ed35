package gpualertmanagerexporter

// The alerts held, kept in a storage extension so that a restarted
// collector resends every alert still firing (and every resolve still
// within resolve_resend). A storage client cannot list its keys, so an
// index key holds the fingerprints (8 bytes each) and each alert has a key
// of its own: a change rewrites one alert, not all of them.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

const indexKey = "alerts"

func alertKey(fp uint64) string { return "alert." + strconv.FormatUint(fp, 16) }

// openStorage returns the storage client of the configured extension.
func openStorage(ctx context.Context, host component.Host, id component.ID, self component.ID) (storage.Client, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q not found; add it under extensions and to service::extensions", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindExporter, self, "")
	if err != nil {
		return nil, fmt.Errorf("storage: extension %q: %w", id, err)
	}
	return client, nil
}

// restore loads the saved alerts into s. An alert that cannot be read is
// skipped with a warning: a damaged file costs that alert, not the start.
func (s *alertSet) restore(ctx context.Context, client storage.Client, logger *zap.Logger) error {
	idx, err := client.Get(ctx, indexKey)
	if err != nil {
		return fmt.Errorf("storage: reading %q: %w", indexKey, err)
	}
	if len(idx)%8 != 0 {
		logger.Warn("Saved alert index unreadable; starting with no alerts", zap.String("key", indexKey), zap.Int("bytes", len(idx)))
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(idx); i += 8 {
		fp := binary.BigEndian.Uint64(idx[i:])
		raw, err := client.Get(ctx, alertKey(fp))
		if err != nil {
			return fmt.Errorf("storage: reading %q: %w", alertKey(fp), err)
		}
		var a alert
		if raw == nil || json.Unmarshal(raw, &a) != nil || len(a.Labels) == 0 || fingerprint(a.Labels) != fp {
			logger.Warn("Saved alert unreadable; skipped", zap.String("key", alertKey(fp)))
			continue
		}
		if a.Annotations == nil {
			a.Annotations = map[string]string{}
		}
		s.alerts[fp] = &a
	}
	return nil
}

// save writes the alerts changed since the last save, and with the index, in one batch.
func (s *alertSet) save(ctx context.Context, client storage.Client) error {
	s.mu.Lock()
	if len(s.dirty) == 0 {
		s.mu.Unlock()
		return nil
	}
	ops := make([]*storage.Operation, 0, len(s.dirty)+1)
	for fp := range s.dirty {
		a := s.alerts[fp]
		if a == nil {
			ops = append(ops, storage.DeleteOperation(alertKey(fp)))
			continue
		}
		raw, err := json.Marshal(a)
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("encoding alert %s: %w", alertKey(fp), err)
		}
		ops = append(ops, storage.SetOperation(alertKey(fp), raw))
	}
	// The index is rewritten with every save: 8 bytes an alert, cheaper
	// than telling which changes added or removed one.
	{
		fps := slices.Sorted(func(yield func(uint64) bool) {
			for fp := range s.alerts {
				if !yield(fp) {
					return
				}
			}
		})
		idx := make([]byte, 0, 8*len(fps))
		for _, fp := range fps {
			idx = binary.BigEndian.AppendUint64(idx, fp)
		}
		ops = append(ops, storage.SetOperation(indexKey, idx))
	}
	dirty := s.dirty
	s.dirty = map[uint64]bool{}
	s.mu.Unlock()
	if err := client.Batch(ctx, ops...); err != nil {
		// Written again at the next save.
		s.mu.Lock()
		for fp := range dirty {
			s.dirty[fp] = true
		}
		s.mu.Unlock()
		return fmt.Errorf("storage: %w", err)
	}
	return nil
}
