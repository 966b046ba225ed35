// Package realtraces converts public recordings of real GPUs into
// gpureplay traces at test time. The recordings are third-party files
// without a licence that allows redistribution (two have no licence at
// all, one only "research use" terms), so the project keeps neither them
// nor the traces made from them: it keeps this converter, and tests read
// the sources in place from the shared real-data folder beside the
// repository (../shared/realdata/recordings). The folder's README,
// cmd/gpureplay/testdata/real/README.md, says what each source is.
//
// Each conversion is the one the project's Python converters did when the
// traces were still committed (same slice, same synthetic identities, same
// rounding), checked byte for byte against those files (since then only
// the first, comment, line of alibaba_gentd26_pods changed: it claimed a
// licence the source does not have). Every Trace carries the SHA-256 of its
// output, and Write fails when the bytes differ, so that the goldens made
// from the committed files keep their meaning.
package realtraces

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A Source is one file of the shared folder, relative to its recordings
// folder, with the SHA-256 that the README records for it.
type Source struct {
	Path   string
	SHA256 string
}

// A Trace is one converted recording.
type Trace struct {
	// Name is the trace's base name; Write writes Name+".csv".
	Name    string
	Sources []Source
	// SHA256 is that of the converted file.
	SHA256  string
	convert func(w io.Writer, paths []string) error
}

var (
	gentdDuty = Source{"alibaba_genai2026_pod_gpu/pod_gpu_duty_cycle_anon.tar.gz",
		"c4070218189b2811995c30dd9fefb8a793a83a54dccebe7b41cab2d123916855"}
	gentdMemory = Source{"alibaba_genai2026_pod_gpu/pod_gpu_memory_used_bytes_anon.tar.gz",
		"662be431f2d24a003c3a0b28383155fccceefb7e83dea14f912166edc9129132"}
	wilkinsCkpt100 = Source{"wilkins_h100x8_gpt8b_train/ckpt100.csv",
		"a8a4ee459f8c2ca4f0408600e08729353d737cf4b4606b1e5cfe92b8255a820f"}
	wilkinsCkpt1 = Source{"wilkins_h100x8_gpt8b_train/ckpt1.csv",
		"5f9d5a76d001f1998f47f2e859936556b177c0541bc92789a56ffcee7a2f6be0"}
	olmoAmberish = Source{"ai2_olmo_wandb_power/amberish-power.csv",
		"010901d241724c5661e27a2d32c553d431f56640b74d0a0578189545e89f4441"}
)

// Traces are the recordings that cmd/gpureplay's tests replay.
var Traces = []Trace{
	{
		Name:    "alibaba_gentd26_pods",
		Sources: []Source{gentdDuty, gentdMemory},
		SHA256:  "e6e76ce7c8627a6209b06f5d8fff3ed0d1785c5009986b982a9e8c0833eaa08f",
		convert: func(w io.Writer, p []string) error { return GenTD26(w, p[0], p[1], 48) },
	},
	{
		Name:    "wilkins_h100x8_ckpt100",
		Sources: []Source{wilkinsCkpt100},
		SHA256:  "d4bee44432906c5229e7cccb1fcd41798e7aeea815b1a1979446277edbbe02c9",
		convert: func(w io.Writer, p []string) error { return Wilkins(w, p[0]) },
	},
	{
		Name:    "wilkins_h100x8_ckpt1",
		Sources: []Source{wilkinsCkpt1},
		SHA256:  "0a7964b691868dc0ca52967ebb2f4441094c3f61680024797f903d38f493ecc8",
		convert: func(w io.Writer, p []string) error { return Wilkins(w, p[0]) },
	},
	{
		Name:    "olmo_amberish7_wandb_power",
		Sources: []Source{olmoAmberish},
		SHA256:  "bea1491f451b5e11a1b651035099bb83a5f8040fef8df43d3c3a7f2aa45ae6d0",
		convert: func(w io.Writer, p []string) error { return OLMo(w, p[0], 22) },
	},
}

// Find returns the trace named name.
func Find(name string) (Trace, error) {
	for _, tr := range Traces {
		if tr.Name == name {
			return tr, nil
		}
	}
	return Trace{}, fmt.Errorf("realtraces: no trace named %q", name)
}

// Write converts the trace from its sources under recordings (the shared
// folder's recordings/) into dir/Name.csv and returns that path. It fails,
// naming the file, when a source's checksum is not the recorded one (the
// goldens were made from those bytes) or when the output's is not.
func (tr Trace) Write(recordings, dir string) (string, error) {
	paths := make([]string, len(tr.Sources))
	for i, s := range tr.Sources {
		paths[i] = filepath.Join(recordings, filepath.FromSlash(s.Path))
		if err := checkSum(paths[i], s.SHA256); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, tr.Name+".csv")
	tmp := out + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = tr.convert(io.MultiWriter(f, h), paths)
	err = errors.Join(err, f.Close())
	if err == nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != tr.SHA256 {
			err = fmt.Errorf("realtraces: %s converted to SHA-256 %s, not the recorded %s: the converter or its source changed", tr.Name, got, tr.SHA256)
		}
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return out, nil
}

func checkSum(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: SHA-256 %s, not the %s recorded in cmd/gpureplay/testdata/real/README.md", path, got, want)
	}
	return nil
}
