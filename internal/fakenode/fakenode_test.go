package fakenode

import (
	"path/filepath"
	"testing"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroupstat"
	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// TestWrite: the node the benchmarks measure is one the readers read
// whole: the H100 node's nine RDMA ports, and every pod with its 4-CPU
// limit, throttling, memory and pressure, plus the node's pressure.
func TestWrite(t *testing.T) {
	ib := sharedtest.Path(t, filepath.Join("realdata", filepath.FromSlash(H100InfiniBand)))
	root := t.TempDir()
	const pods = 3
	if err := Write(root, ib, pods); err != nil {
		t.Fatal(err)
	}

	ports, err := netdev.Scan(filepath.Join(root, "sys"), netdev.Options{KnownOnly: true})
	if err != nil || len(ports) != 9 {
		t.Fatalf("%d ports, %v", len(ports), err)
	}
	for _, p := range ports {
		if !p.HasBytes || p.RateBytesPerSec <= 0 || !p.HasUp {
			t.Errorf("%s: %+v", p.ID, p)
		}
	}

	r, err := cgroupstat.New(filepath.Join(root, "sys", "fs", "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	found, err := r.Pods(nil)
	if err != nil || len(found) != pods {
		t.Fatalf("%d pods, %v", len(found), err)
	}
	for i, p := range found {
		var s cgroupstat.Stats
		if err := r.ReadPod(p, &s); err != nil {
			t.Fatal(err)
		}
		if p.UID != PodUID(i) || !s.Limit.Has || s.Limit.CPUs != 4 || !s.CPU.HasThrottling || s.CPU.ThrottledPeriods == 0 ||
			!s.Memory.HasLimit || !s.CPUPressure.Some.Has {
			t.Errorf("pod %d (%s): %+v", i, p.UID, s)
		}
	}
	var np cgroupstat.NodePressure
	if err := r.ReadNodePressure(filepath.Join(root, "proc"), &np); err != nil || !np.CPU.Some.Has {
		t.Errorf("node pressure %+v, %v", np, err)
	}
}
