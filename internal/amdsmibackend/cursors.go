package amdsmibackend

import (
	"context"
	"sync"
)

// Cursors keeps each GPU's CPER cursor, the position in the driver's log
// of RAS records up to which the backend has read and counted, so that a
// restarted collector neither counts a record twice nor misses one.
type Cursors interface {
	// Get returns the cursor saved for the GPU uuid, and whether there is
	// one.
	Get(ctx context.Context, uuid string) (uint64, bool, error)
	// Put saves the GPU's cursor.
	Put(ctx context.Context, uuid string, cursor uint64) error
}

// MemoryCursors keeps cursors for the life of the process only.
type MemoryCursors struct {
	mu sync.Mutex
	m  map[string]uint64
}

// NewMemoryCursors returns an empty MemoryCursors.
func NewMemoryCursors() *MemoryCursors { return &MemoryCursors{m: map[string]uint64{}} }

// Get implements Cursors.
func (c *MemoryCursors) Get(_ context.Context, uuid string) (uint64, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[uuid]
	return v, ok, nil
}

// Put implements Cursors.
func (c *MemoryCursors) Put(_ context.Context, uuid string, cursor uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[uuid] = cursor
	return nil
}
