package gpuanalyzerprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// The analyzer's state is kept in a storage extension as chunks of up to
// chunkGPUs GPUs under the keys "gpus.0", "gpus.1", ..., with their count
// under "gpus". A chunk is a sequence of (uvarint length, GPU id, uvarint
// length, state). Chunks, because a storage client cannot list its keys
// and one value per fleet would be one huge write.
const (
	chunkGPUs = 1024
	countKey  = "gpus"
)

func chunkKey(i int) string { return countKey + "." + strconv.Itoa(i) }

// start opens the storage extension, if one is configured, and restores
// the state saved by the previous run.
func (p *analyzerProcessor) start(ctx context.Context, host component.Host) error {
	if p.cfg.Storage == nil {
		return nil
	}
	ext, ok := host.GetExtensions()[*p.cfg.Storage]
	if !ok {
		return fmt.Errorf("storage: extension %q not found; add it under extensions and to service::extensions", p.cfg.Storage)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("storage: extension %q is not a storage extension", p.cfg.Storage)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, p.id, "")
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.client = client
	return p.restore(ctx)
}

func (p *analyzerProcessor) restore(ctx context.Context) error {
	raw, err := p.client.Get(ctx, countKey)
	if err != nil {
		return fmt.Errorf("storage: reading %q: %w", countKey, err)
	}
	if raw == nil {
		return nil // nothing saved yet
	}
	chunks, n := binary.Uvarint(raw)
	if n <= 0 || chunks > 1<<24 {
		p.logger.Warn("Saved analyzer state unreadable; starting afresh", zap.String("key", countKey))
		return nil
	}
	p.chunks = int(chunks)
	restored, refused := 0, 0
	for i := range p.chunks {
		b, err := p.client.Get(ctx, chunkKey(i))
		if err != nil {
			return fmt.Errorf("storage: reading %q: %w", chunkKey(i), err)
		}
		for len(b) > 0 {
			id, rest, ok1 := field(b)
			state, rest, ok2 := field(rest)
			if !ok1 || !ok2 {
				refused++
				break
			}
			b = rest
			if err := p.an.Restore(string(id), state); err != nil {
				refused++
				if refused == 1 {
					p.logger.Warn("Saved GPU state not restored", zap.Error(err))
				}
				continue
			}
			restored++
		}
	}
	p.logger.Info("Restored analyzer state", zap.Int("gpus", restored), zap.Int("refused", refused))
	return nil
}

// field reads one uvarint-length-prefixed field.
func field(b []byte) (f, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// save writes every GPU's state in one batch, and deletes chunks left
// over from a larger fleet.
func (p *analyzerProcessor) save(ctx context.Context) error {
	var ops []*storage.Operation
	var chunk []byte
	gpus, chunks := 0, 0
	flush := func() {
		ops = append(ops, storage.SetOperation(chunkKey(chunks), chunk))
		chunks++
		chunk, gpus = nil, 0
	}
	p.an.Save(func(id string, state []byte) {
		chunk = binary.AppendUvarint(chunk, uint64(len(id)))
		chunk = append(chunk, id...)
		chunk = binary.AppendUvarint(chunk, uint64(len(state)))
		chunk = append(chunk, state...)
		gpus++
		if gpus == chunkGPUs {
			flush()
		}
	})
	if gpus > 0 {
		flush()
	}
	ops = append(ops, storage.SetOperation(countKey, binary.AppendUvarint(nil, uint64(chunks))))
	for i := chunks; i < p.chunks; i++ {
		ops = append(ops, storage.DeleteOperation(chunkKey(i)))
	}
	if err := p.client.Batch(ctx, ops...); err != nil {
		return fmt.Errorf("storage: saving analyzer state: %w", err)
	}
	p.chunks = chunks
	return nil
}

// checkpoint saves the state every checkpoint_interval of data time.
func (p *analyzerProcessor) checkpoint(ctx context.Context, now int64) {
	if p.client == nil || p.cfg.CheckpointInterval <= 0 || now == 0 {
		return
	}
	if p.lastSave == 0 {
		p.lastSave = now
		return
	}
	if now-p.lastSave < int64(p.cfg.CheckpointInterval) {
		return
	}
	p.lastSave = now
	if err := p.save(ctx); err != nil {
		p.logger.Warn("Analyzer state not saved", zap.Error(err))
	}
}

// closeStorage saves the state a last time and closes the client.
func (p *analyzerProcessor) closeStorage(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil {
		return nil
	}
	err := p.save(ctx)
	err = errors.Join(err, p.client.Close(ctx))
	p.client = nil
	return err
}
