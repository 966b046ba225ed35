package dcgmreceiver

import (
	"context"
	"encoding/binary"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// openStorage opens the receiver's client of the storage extension id, as
// the gpu_analyzer processor keeps its state.
func openStorage(ctx context.Context, host component.Host, id, self component.ID) (storage.Client, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("extension %q not found; add it under extensions and to service::extensions", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("extension %q is not a storage extension", id)
	}
	return se.GetClient(ctx, component.KindReceiver, self, "amdsmi")
}

// storageCursors keeps CPER cursors in a storage client, one key per GPU.
type storageCursors struct{ client storage.Client }

func cursorKey(uuid string) string { return "cper_cursor/" + uuid }

// Get implements amdsmibackend.Cursors.
func (c storageCursors) Get(ctx context.Context, uuid string) (uint64, bool, error) {
	raw, err := c.client.Get(ctx, cursorKey(uuid))
	if err != nil || raw == nil {
		return 0, false, err
	}
	v, n := binary.Uvarint(raw)
	if n <= 0 {
		return 0, false, fmt.Errorf("%s: not a cursor (%d bytes)", cursorKey(uuid), len(raw))
	}
	return v, true, nil
}

// Put implements amdsmibackend.Cursors.
func (c storageCursors) Put(ctx context.Context, uuid string, cursor uint64) error {
	return c.client.Set(ctx, cursorKey(uuid), binary.AppendUvarint(nil, cursor))
}
