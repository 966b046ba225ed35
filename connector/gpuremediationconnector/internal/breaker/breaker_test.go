package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLimit(t *testing.T) {
	b := &Breaker{MaxShare: 0.25, MaxNodes: 10, Window: time.Hour}
	require.Equal(t, 1, b.Limit(4), "one broken node is always handled")
	require.Equal(t, 1, b.Limit(1))
	require.Equal(t, 2, b.Limit(10))
	require.Equal(t, 10, b.Limit(1000), "max_nodes caps a large fleet")
	require.Equal(t, 3, (&Breaker{MaxShare: 0.3}).Limit(10))
	require.Equal(t, 5, (&Breaker{MaxNodes: 5}).Limit(10))
}

func TestOpensAndStaysOpenUntilReset(t *testing.T) {
	b := &Breaker{MaxShare: 0.3, Window: time.Minute}
	t0 := time.Unix(0, 0)
	for i, n := range []string{"a", "b", "c"} {
		require.True(t, b.Allow(n, t0.Add(time.Duration(i)*time.Second), 10))
		b.Record(n, t0.Add(time.Duration(i)*time.Second))
	}
	require.True(t, b.Allow("a", t0.Add(5*time.Second), 10), "a node already acted on adds nothing")
	require.False(t, b.Allow("d", t0.Add(6*time.Second), 10))
	open, reason, since := b.Open()
	require.True(t, open)
	require.Equal(t, "4 nodes acted on within 1m0s would exceed the limit of 3 (of 10 GPU nodes)", reason)
	require.Equal(t, t0.Add(6*time.Second), since)
	// Time does not close it, nor does a node already acted on get through.
	require.False(t, b.Allow("a", t0.Add(time.Hour), 10))
	b.Reset()
	require.True(t, b.Allow("d", t0.Add(time.Hour), 10))
}

func TestWindowSlides(t *testing.T) {
	b := &Breaker{MaxNodes: 2, Window: time.Minute}
	t0 := time.Unix(0, 0)
	b.Record("a", t0)
	b.Record("b", t0.Add(10*time.Second))
	require.True(t, b.Allow("c", t0.Add(61*time.Second), 100), "a fell out of the window")
	b.Record("c", t0.Add(61*time.Second))
	require.False(t, b.Allow("d", t0.Add(62*time.Second), 100))
}
