// Package sharedcomponent lets the instances the Collector creates for each
// signal pair of one connector (metrics to metrics, metrics to logs) share
// one value: created by the first instance, started once, shut down when
// the last instance is. The Collector's own sharedcomponent package does
// this for its receivers, but it is internal to its module.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Lifecycle is what a shared value does when the Collector starts and stops.
type Lifecycle interface {
	Start(context.Context, component.Host) error
	Shutdown(context.Context) error
}

// Map holds one shared value per component ID. Its zero value is ready.
type Map[V Lifecycle] struct {
	mu sync.Mutex
	m  map[component.ID]*Shared[V]
}

// Shared is one instance's handle on a shared value.
type Shared[V Lifecycle] struct {
	Value V

	owner     *Map[V]
	id        component.ID
	refs      int // guarded by owner.mu
	startOnce sync.Once
	startErr  error
}

// Acquire returns the value for id, made by create if no instance holds it
// yet. Each Acquire is undone by one Shutdown of the handle it returns.
func (m *Map[V]) Acquire(id component.ID, create func() (V, error)) (*Shared[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.m[id]; ok {
		s.refs++
		return s, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	if m.m == nil {
		m.m = map[component.ID]*Shared[V]{}
	}
	s := &Shared[V]{Value: v, owner: m, id: id, refs: 1}
	m.m[id] = s
	return s, nil
}

// Start starts the value the first time any of its instances is started.
func (s *Shared[V]) Start(ctx context.Context, host component.Host) error {
	s.startOnce.Do(func() { s.startErr = s.Value.Start(ctx, host) })
	return s.startErr
}

// Shutdown releases one instance's hold; the last one shuts the value down
// and forgets it, so that a new pipeline (a reload) makes a new one.
func (s *Shared[V]) Shutdown(ctx context.Context) error {
	m := s.owner
	m.mu.Lock()
	if s.refs == 0 {
		m.mu.Unlock()
		return nil // already shut down by its last instance
	}
	s.refs--
	last := s.refs == 0
	if last {
		delete(m.m, s.id)
	}
	m.mu.Unlock()
	if !last {
		return nil
	}
	return s.Value.Shutdown(ctx)
}
