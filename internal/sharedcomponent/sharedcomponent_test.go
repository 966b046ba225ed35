package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
)

type counter struct{ starts, shutdowns int }

func (c *counter) Start(context.Context, component.Host) error { c.starts++; return nil }
func (c *counter) Shutdown(context.Context) error              { c.shutdowns++; return nil }

func TestSharedOncePerID(t *testing.T) {
	var m Map[*counter]
	id := component.MustNewID("gpu_test")
	made := 0
	create := func() (*counter, error) { made++; return &counter{}, nil }
	a, err := m.Acquire(id, create)
	require.NoError(t, err)
	b, err := m.Acquire(id, create)
	require.NoError(t, err)
	require.Same(t, a.Value, b.Value)
	require.Equal(t, 1, made)

	ctx, host := context.Background(), componenttest.NewNopHost()
	require.NoError(t, a.Start(ctx, host))
	require.NoError(t, b.Start(ctx, host))
	require.Equal(t, 1, a.Value.starts, "started once")

	require.NoError(t, a.Shutdown(ctx))
	require.Equal(t, 0, a.Value.shutdowns, "the other instance still holds it")
	require.NoError(t, b.Shutdown(ctx))
	require.Equal(t, 1, a.Value.shutdowns, "the last instance shuts it down")
	require.NoError(t, b.Shutdown(ctx))
	require.Equal(t, 1, a.Value.shutdowns, "a second shutdown does nothing")

	c, err := m.Acquire(id, create)
	require.NoError(t, err)
	require.NotSame(t, a.Value, c.Value, "after the last shutdown a new value is made")

	other, err := m.Acquire(component.MustNewIDWithName("gpu_test", "b"), create)
	require.NoError(t, err)
	require.NotSame(t, c.Value, other.Value, "each component ID has its own")
}

func TestSharedCreateError(t *testing.T) {
	var m Map[*counter]
	id := component.MustNewID("gpu_test")
	_, err := m.Acquire(id, func() (*counter, error) { return nil, errors.New("bad") })
	require.EqualError(t, err, "bad")
	s, err := m.Acquire(id, func() (*counter, error) { return &counter{}, nil })
	require.NoError(t, err, "a failed creation leaves nothing behind")
	require.NotNil(t, s.Value)
}
