// Command ociimage writes the image of one otelcol-gpu binary as a tarball
// that docker load, podman load, skopeo and crane push take, without a
// container engine: make release has none to call on a build machine like
// CI's, and the Dockerfile needs one.
//
// The image is one layer on nothing: the binary at /usr/bin/NAME (the Helm
// chart runs it by that name), the C libraries its ELF header names and
// its dynamic loader, copied from the build machine's glibc (or the cross
// toolchain's, -libroot), CA certificates, a passwd and group naming the
// unprivileged user 10001 it runs as, and the packaged default
// configuration. No shell and no package manager: what a distroless base
// holds, for a cgo binary that needs glibc.
//
// The DCGM client library is not in it (NVIDIA's licence and its image
// are out of reach here); the NVIDIA container runtime mounts NVML, and
// the Dockerfile's image, built where an engine runs, adds libdcgm.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type options struct {
	binary, name, arch, config, tag, out, libroot, certs, version string
	created                                                       time.Time
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "the built binary")
	flag.StringVar(&o.name, "name", "", "its name in the image (/usr/bin/NAME): otelcol-gpu or otelcol-gpu-agent")
	flag.StringVar(&o.arch, "arch", "amd64", "its architecture: amd64 or arm64")
	flag.StringVar(&o.config, "config", "", "the default configuration, at /etc/otelcol-gpu/config.yaml")
	flag.StringVar(&o.tag, "tag", "", "the image's name and tag, e.g. ghcr.io/otelcol-gpu/otelcol-gpu:0.1.0")
	flag.StringVar(&o.out, "out", "", "the tarball to write")
	flag.StringVar(&o.libroot, "libroot", "/", "where the binary's C libraries are: / for this machine's, /usr/aarch64-linux-gnu for Debian's arm64 cross toolchain")
	flag.StringVar(&o.certs, "certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle")
	flag.StringVar(&o.version, "version", "", "the version, for the image's labels")
	flag.Parse()
	// The commit's time, not the clock's: nothing in the image says when it was built.
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		var s int64
		if _, err := fmt.Sscan(epoch, &s); err != nil {
			fail(fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", epoch, err))
		}
		o.created = time.Unix(s, 0).UTC()
	}
	if err := write(o); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ociimage:", err)
	os.Exit(1)
}

// entry is one file of the layer.
type entry struct {
	path, link string
	mode       int64
	data       []byte
}

func write(o options) error {
	for flagName, v := range map[string]string{"binary": o.binary, "name": o.name, "config": o.config, "tag": o.tag, "out": o.out} {
		if v == "" {
			return fmt.Errorf("-%s is required", flagName)
		}
	}
	if o.arch != "amd64" && o.arch != "arm64" {
		return fmt.Errorf("-arch %q: want amd64 or arm64", o.arch)
	}
	ref, err := name.NewTag(o.tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", o.tag, err)
	}
	files, err := contents(o)
	if err != nil {
		return err
	}
	layerTar, err := tarOf(files, o.created)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.arch
	cf.Created = v1.Time{Time: o.created}
	cf.Config.Entrypoint = []string{"/usr/bin/" + o.name}
	cf.Config.Cmd = []string{"--config=/etc/otelcol-gpu/config.yaml"}
	cf.Config.User = "10001:10001"
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cf.Config.ExposedPorts = map[string]struct{}{"9400/tcp": {}, "4317/tcp": {}, "13133/tcp": {}}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    o.name,
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.source":   "https://github.com/otelcol-gpu/otelcol-gpu",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(o.out, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s linux/%s %s, %d files\n", o.out, ref, o.arch, digest, len(files))
	return nil
}

// contents lists the layer's files: the binary, what its ELF needs, and
// the few files a process expects under /etc.
func contents(o options) ([]entry, error) {
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return nil, err
	}
	config, err := os.ReadFile(o.config)
	if err != nil {
		return nil, err
	}
	certs, err := os.ReadFile(o.certs)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle (Debian's ca-certificates): %w", err)
	}
	files := []entry{
		{path: "usr/bin/" + o.name, mode: 0o755, data: bin},
		{path: "etc/otelcol-gpu/config.yaml", mode: 0o644, data: config},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/usr/sbin/nologin\notelcol-gpu:x:10001:10001:otelcol-gpu:/nonexistent:/usr/sbin/nologin\n")},
		{path: "etc/group", mode: 0o644, data: []byte("root:x:0:\notelcol-gpu:x:10001:\n")},
		{path: "etc/nsswitch.conf", mode: 0o644, data: []byte("passwd: files\ngroup: files\nhosts: files dns\n")},
		{path: "tmp/", mode: 0o1777},
	}
	libs, err := sharedObjects(o.binary, o.libroot)
	if err != nil {
		return nil, err
	}
	return append(files, libs...), nil
}

// sharedObjects is the binary's dynamic loader and the libraries it names
// (DT_NEEDED), found in libroot as the loader would on Debian, each with
// the symlink the loader opens. glibc's libraries need nothing beyond
// themselves and the loader.
func sharedObjects(binary, libroot string) ([]entry, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return nil, err
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if interp == "" {
		return nil, fmt.Errorf("%s has no dynamic loader: a static binary needs no ociimage libraries; this tool is for the cgo builds", binary)
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return nil, err
	}
	dirs := []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "lib64", "usr/lib"}
	var out []entry
	seen := map[string]bool{}
	add := func(inImage, onHost string) error {
		if seen[inImage] {
			return nil
		}
		seen[inImage] = true
		real, err := filepath.EvalSymlinks(onHost)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(real)
		if err != nil {
			return err
		}
		// The library under its real name, and the name the loader asks
		// for as a link to it, as Debian's packages lay them out.
		target := path.Join(path.Dir(inImage), filepath.Base(real))
		if target != inImage {
			out = append(out, entry{path: inImage, link: filepath.Base(real)})
			if seen[target] {
				return nil
			}
			seen[target] = true
		}
		out = append(out, entry{path: target, mode: 0o755, data: data})
		return nil
	}
	// The loader at the path the binary names, found under libroot by
	// name (a cross toolchain keeps it in its lib/).
	loader := ""
	for _, d := range append([]string{path.Dir(strings.TrimPrefix(interp, "/"))}, dirs...) {
		if c := filepath.Join(libroot, d, path.Base(interp)); exists(c) {
			loader = c
			break
		}
	}
	if loader == "" {
		return nil, fmt.Errorf("the dynamic loader %s is not under %s", interp, libroot)
	}
	if err := add(strings.TrimPrefix(interp, "/"), loader); err != nil {
		return nil, err
	}
	libDir := map[string]string{"/lib64/ld-linux-x86-64.so.2": "lib/x86_64-linux-gnu", "/lib/ld-linux-aarch64.so.1": "lib/aarch64-linux-gnu"}[interp]
	if libDir == "" {
		return nil, fmt.Errorf("dynamic loader %s: not glibc's for amd64 or arm64", interp)
	}
	sort.Strings(needed)
	for _, lib := range needed {
		found := ""
		for _, d := range dirs {
			if c := filepath.Join(libroot, d, lib); exists(c) {
				found = c
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%s needs %s, which is not under %s", binary, lib, libroot)
		}
		if err := add(path.Join(libDir, lib), found); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// tarOf writes the layer: directories first, every entry root's, times
// fixed, so that the same inputs give the same digest.
func tarOf(files []entry, mtime time.Time) ([]byte, error) {
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(strings.TrimSuffix(f.path, "/")); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	var all []entry
	for _, f := range files {
		delete(dirs, f.path) // a directory listed with its own mode (/tmp's 1777)
		all = append(all, f)
	}
	for d := range dirs {
		all = append(all, entry{path: d, mode: 0o755})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].path < all[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range all {
		h := &tar.Header{Name: f.path, Mode: f.mode, ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		switch {
		case strings.HasSuffix(f.path, "/"):
			h.Typeflag = tar.TypeDir
		case f.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.link, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
