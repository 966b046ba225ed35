// Package fakenode writes the files the gpu_node receiver reads on a GPU
// node, under a root directory given as the receiver's root_path: a real
// node's /sys/class/infiniband tree copied from the shared real data, and
// the cgroups of the GPU pods the kubelet would make (cgroup v2, systemd
// driver) with the node's /proc/pressure. The receiver's benchmark and the
// agent's whole-process benchmark (internal/tools/gpubench) measure the
// same node.
//
// The pods' figures are of our own making, in the kernel's formats: a
// 4-CPU limit throttled in about 9 % of periods, 29 GiB of a 32 GiB limit,
// a little CPU pressure.
package fakenode

import (
	"fmt"
	"os"
	"path/filepath"
)

// H100InfiniBand is the H100 node's /sys/class/infiniband tree (nine RDMA
// ports: eight ConnectX-7 InfiniBand rails and a BlueField-3 RoCE bond),
// relative to the shared real data's directory; its SOURCES.md names its
// source and licence.
const H100InfiniBand = "node/ib_sysfs/gpud_h100_sys_class_infiniband"

// podFiles are each pod's cgroup v2 files.
var podFiles = map[string]string{
	"cgroup.procs":    "4242\n",
	"cpu.max":         "400000 100000\n",
	"cpu.stat":        "usage_usec 9123456789\nuser_usec 8000000000\nsystem_usec 1123456789\nnr_periods 812345\nnr_throttled 73210\nthrottled_usec 351234000\n",
	"memory.current":  "31457280000\n",
	"memory.max":      "34359738368\n",
	"cpu.pressure":    "some avg10=1.00 avg60=2.00 avg300=3.00 total=412345678\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=401234567\n",
	"memory.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=6912345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=6812345\n",
	"io.pressure":     "some avg10=0.00 avg60=0.00 avg300=0.00 total=17712345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=17612345\n",
}

// nodePressure is the node's /proc/pressure/{cpu,memory,io}.
const nodePressure = "some avg10=0.50 avg60=0.40 avg300=0.30 total=912345678\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=12345678\n"

// PodUID is the UID of the i-th pod Write makes.
func PodUID(i int) string { return fmt.Sprintf("0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b%02d", i) }

// Write makes the node under root: ibTree (a /sys/class/infiniband tree,
// e.g. the shared real data's H100InfiniBand) copied to
// root/sys/class/infiniband when not empty, an empty root/sys/class/net,
// and pods burstable pods' cgroups under root/sys/fs/cgroup.
func Write(root, ibTree string, pods int) error {
	sys := filepath.Join(root, "sys")
	if err := os.MkdirAll(filepath.Join(sys, "class", "net"), 0o750); err != nil {
		return err
	}
	if ibTree != "" {
		if err := copyTree(ibTree, filepath.Join(sys, "class", "infiniband")); err != nil {
			return fmt.Errorf("copy %s: %w", ibTree, err)
		}
	}
	cg := filepath.Join(sys, "fs", "cgroup")
	if err := writeFiles(cg, map[string]string{"cgroup.controllers": "cpu io memory pids\n"}); err != nil {
		return err
	}
	for i := range pods {
		d := filepath.Join(cg, "kubepods.slice", "kubepods-burstable.slice", "kubepods-burstable-pod"+underscores(PodUID(i))+".slice")
		if err := writeFiles(d, podFiles); err != nil {
			return err
		}
	}
	p := filepath.Join(root, "proc", "pressure")
	return writeFiles(p, map[string]string{"cpu": nodePressure, "memory": nodePressure, "io": nodePressure})
}

func writeFiles(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// underscores spells a pod UID as the systemd cgroup driver does in a
// slice name.
func underscores(uid string) string {
	out := []byte(uid)
	for i, c := range out {
		if c == '-' {
			out[i] = '_'
		}
	}
	return string(out)
}

// copyTree copies the directories and regular files under src (a sysfs
// dump's counter files) to dst.
func copyTree(src, dst string) error {
	return os.CopyFS(dst, os.DirFS(src))
}
