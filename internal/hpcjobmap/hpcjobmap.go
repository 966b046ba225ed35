// Package hpcjobmap reads the GPU-to-job mapping files that dcgm-exporter's
// HPC mode reads (--hpc-job-mapping-dir, DCGM_HPC_JOB_MAPPING_DIR), so that
// a site whose Slurm prolog writes them keeps it.
//
// The layout is dcgm-exporter's (NVIDIA/dcgm-exporter,
// internal/pkg/transformation/hpc.go, and its README's "File
// Conventions"): a directory holding one regular file per GPU, named by
// the GPU's index ("0", "1", …), or per MIG instance, named by the GPU's
// index and the instance's GPU instance ID ("2.0", "3.10"); each line of a
// file is the ID of a job that runs on that GPU or instance. A name of any
// other form (dcgm-exporter's regular expression ^\d+(\.\d+)?$) and a
// subdirectory are ignored, and a directory that does not exist yet means
// no jobs: the prolog creates it with the first job.
//
// Where this package differs, it says so: it trims each line and skips
// blank ones (dcgm-exporter labels a blank line's series hpc_job=""), and
// it reads at most MaxFileBytes of a file.
package hpcjobmap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// MaxFileBytes bounds what is read of one file: a GPU runs a few jobs at
// once, not thousands; a runaway prolog's file is cut, not read whole at
// every scrape.
const MaxFileBytes = 64 << 10

// Map is the jobs on each GPU or MIG instance, by file name.
type Map map[string][]string

// Read reads the mapping directory. A directory that does not exist is an
// empty Map and no error. A file that cannot be read is an error naming
// it, and the others are still read: one bad file does not lose every
// GPU's jobs.
func Read(dir string) (Map, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Map{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job mapping directory: %w", err)
	}
	m := Map{}
	var errs []error
	for _, e := range entries {
		if !ValidName(e.Name()) || e.IsDir() {
			continue
		}
		jobs, err := readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(jobs) > 0 {
			m[e.Name()] = jobs
		}
	}
	return m, errors.Join(errs...)
}

func readFile(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("job mapping file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, nil // a FIFO or device a prolog would not write: skipped, not read
	}
	var jobs []string
	sc := bufio.NewScanner(io.LimitReader(f, MaxFileBytes))
	for sc.Scan() {
		if j := strings.TrimSpace(sc.Text()); j != "" {
			jobs = append(jobs, j)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("job mapping file %s: %w", name, err)
	}
	return jobs, nil
}

// ValidName reports whether a file name is one dcgm-exporter reads: a GPU
// index, or a GPU index, a dot and a GPU instance ID, in decimal digits.
func ValidName(name string) bool {
	gpuIdx, inst, isMIG := strings.Cut(name, ".")
	return digits(gpuIdx) && (!isMIG || digits(inst))
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Key is the file name that holds d's jobs: its index for a GPU, its
// parent's index and its GPU instance ID for a MIG instance
// (dcgm-exporter keys a MIG instance's series by GPU and GPU instance,
// not by compute instance: the compute instances of one GPU instance
// share its file).
func Key(d *gpu.Device) string {
	if d.MIG != nil {
		return strconv.Itoa(d.Index) + "." + strconv.Itoa(d.MIG.GPUInstance)
	}
	return strconv.Itoa(d.Index)
}

// Jobs returns the jobs on d.
func (m Map) Jobs(d *gpu.Device) []string { return m[Key(d)] }
