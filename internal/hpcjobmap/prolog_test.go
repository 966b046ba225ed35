package hpcjobmap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// runScript runs examples/slurm's prolog or epilog as slurmd would: with
// the job's environment and nothing else of ours.
func runScript(t *testing.T, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", filepath.Join("..", "..", "examples", "slurm", script))
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	// slurmd's umask may be tight; the scripts set their own.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s must exit 0 whatever happens: %s", script, out)
	return string(out)
}

// TestPrologEpilog: the prolog writes what Read reads back: an exclusive
// job's GPUs, a second job sharing one of them, a requeued job's prolog
// run twice; the epilog removes one job and leaves the other.
func TestPrologEpilog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "map") // the prolog creates it
	mapDir := "SLURM_GPU_JOB_MAP_DIR=" + dir
	runScript(t, "prolog.sh", mapDir, "SLURM_JOB_ID=4242", "SLURM_JOB_GPUS=0,1")
	runScript(t, "prolog.sh", mapDir, "SLURM_JOB_ID=4243", "SLURM_JOB_GPUS=1")
	runScript(t, "prolog.sh", mapDir, "SLURM_JOB_ID=4243", "SLURM_JOB_GPUS=1") // requeued: once
	// Without SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES (the prolog's, host
	// indices).
	runScript(t, "prolog.sh", mapDir, "SLURM_JOB_ID=4244", "CUDA_VISIBLE_DEVICES=3")
	m, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, Map{"0": {"4242"}, "1": {"4242", "4243"}, "3": {"4244"}}, m)
	// Readable by the agent, which runs as its own user; whatever umask
	// slurmd has.
	for _, name := range []string{"", "0", "1"} {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o044), st.Mode().Perm()&0o044, "%s: %v", name, st.Mode())
	}

	runScript(t, "epilog.sh", mapDir, "SLURM_JOB_ID=4242", "SLURM_JOB_GPUS=0,1")
	m, err = Read(dir)
	require.NoError(t, err)
	require.Equal(t, Map{"1": {"4243"}, "3": {"4244"}}, m)
	_, err = os.Stat(filepath.Join(dir, "0"))
	require.ErrorIs(t, err, os.ErrNotExist, "a file left with no job is removed")

	// The epilog reads every file, whatever SLURM_JOB_GPUS says.
	runScript(t, "epilog.sh", mapDir, "SLURM_JOB_ID=4244")
	m, err = Read(dir)
	require.NoError(t, err)
	require.Equal(t, Map{"1": {"4243"}}, m)
}

// TestPrologMIG: with a MIG map the files are named GPU.GPU-instance, as
// dcgm-exporter keys a MIG instance.
func TestPrologMIG(t *testing.T) {
	dir := t.TempDir()
	migMap := filepath.Join(t.TempDir(), "mig.map")
	require.NoError(t, os.WriteFile(migMap, []byte("0 0.1\n1 0.2\n2 1.1\n"), 0o600))
	runScript(t, "prolog.sh", "SLURM_GPU_JOB_MAP_DIR="+dir, "SLURM_GPU_MIG_MAP="+migMap, "SLURM_JOB_ID=7000", "SLURM_JOB_GPUS=1,2")
	m, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, Map{"0.2": {"7000"}, "1.1": {"7000"}}, m)
}

// TestPrologNeverFails: what the prolog cannot do is said on stderr, and
// it exits 0 (a failing prolog drains the node): no job ID, a UUID where
// an index was expected, a directory it cannot create. A job without
// GPUs writes nothing.
func TestPrologNeverFails(t *testing.T) {
	dir := t.TempDir()
	out := runScript(t, "prolog.sh", "SLURM_GPU_JOB_MAP_DIR="+dir, "SLURM_JOB_GPUS=0")
	require.Contains(t, out, `SLURM_JOB_ID "" is not a job ID`)
	out = runScript(t, "prolog.sh", "SLURM_GPU_JOB_MAP_DIR="+dir, "SLURM_JOB_ID=5", "CUDA_VISIBLE_DEVICES=GPU-0f3b2c1a,1")
	require.Contains(t, out, `GPU "GPU-0f3b2c1a" is not an index`)
	runScript(t, "prolog.sh", "SLURM_GPU_JOB_MAP_DIR="+dir, "SLURM_JOB_ID=6")
	m, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, Map{"1": {"5"}}, m)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	out = runScript(t, "prolog.sh", "SLURM_GPU_JOB_MAP_DIR="+filepath.Join(file, "sub"), "SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0")
	require.Contains(t, out, "cannot create")
	out = runScript(t, "epilog.sh", "SLURM_GPU_JOB_MAP_DIR="+dir, "SLURM_JOB_ID=x")
	require.Contains(t, out, `SLURM_JOB_ID "x" is not a job ID`)
}

// TestPrologConcurrent: prologs of jobs sharing a GPU that run at once
// each add their line (the lock): none is lost to another's rename.
func TestPrologConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command("/bin/sh", filepath.Join("..", "..", "examples", "slurm", "prolog.sh"))
		cmds[i].Env = []string{"PATH=/usr/bin:/bin", "SLURM_GPU_JOB_MAP_DIR=" + dir, "SLURM_JOB_ID=" + strconv.Itoa(100+i), "SLURM_JOB_GPUS=0"}
		require.NoError(t, cmds[i].Start())
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}
	m, err := Read(dir)
	require.NoError(t, err)
	require.Len(t, m["0"], n)
}
