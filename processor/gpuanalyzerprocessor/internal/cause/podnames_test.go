package cause

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBindGPUByName: a GPU is tied to the pod of its namespace and name on
// its own host only; a pod recreated under its name moves the binding to
// the new UID; the names of pods the store forgot go with them.
func TestBindGPUByName(t *testing.T) {
	s := NewStore(time.Minute, 2*time.Minute)
	const old, fresh = "uid-old", "uid-new"
	t0 := int64(time.Hour)
	s.AddPod("node-a", old, t0, PodCounters{CPUSeconds: 1})
	s.NamePod("node-a", "ml", "trainer-0", old)

	require.False(t, s.BindGPUByName("gpu-1", "node-b", "ml", "trainer-0"), "another host's pod of that name")
	require.False(t, s.BindGPUByName("gpu-1", "node-a", "serving", "trainer-0"), "another namespace")
	require.True(t, s.BindGPUByName("gpu-1", "node-a", "ml", "trainer-0"))
	require.Equal(t, key("node-a", old), s.gpuPod["gpu-1"])

	s.AddPod("node-a", fresh, t0+int64(time.Second), PodCounters{CPUSeconds: 1})
	s.NamePod("node-a", "ml", "trainer-0", fresh)
	require.True(t, s.BindGPUByName("gpu-1", "node-a", "ml", "trainer-0"))
	require.Equal(t, key("node-a", fresh), s.gpuPod["gpu-1"], "the name follows the recreated pod")

	// Nothing heard of the pod for ten times maxAge: its cgroup, its
	// name and the GPU's binding are forgotten.
	s.Sweep(t0 + int64(time.Second) + 21*int64(time.Minute))
	require.Empty(t, s.podByName)
	require.False(t, s.BindGPUByName("gpu-1", "node-a", "ml", "trainer-0"))
	require.NotContains(t, s.gpuPod, "gpu-1")
}
