package whatif

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// The points cache (-cache DIR). A -table or -holdout row runs the 20
// reactive settings and the foresight plans on its scenario, and they do
// not depend on the settings compared: on days of demand that is nearly
// all of a run's time (about 35 minutes for the four held-out production
// series here, against two for the settings themselves). With -cache,
// each scenario's points are kept in DIR and a later run that asks for
// the same scenario reads them back, so that trying one more candidate
// costs only its own runs.
//
// A file is found only by everything its points depend on: the demand
// file's bytes (not its name), the scale and start-up, every option of
// the model, and this executable's own bytes, so that a build with any
// change of the model, the frontier or the HPA never reads points another
// build made. A file that cannot be read back as complete points is
// computed again and replaced.

// cacheVersion changes with the file's layout.
const cacheVersion = 1

// cachedPoints is one scenario's file.
type cachedPoints struct {
	Version   int     `json:"version"`
	Frontier  []Point `json:"frontier"`
	Foresight []Point `json:"foresight"`
}

// executableHash is the SHA-256 of the running executable, read once.
var executableHash = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("-cache: finding this executable: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("-cache: reading this executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("-cache: reading this executable %s: %w", exe, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

// cacheFile is the path of the scenario's file in dir; opts are the
// scenario's options (its scale and start-up set).
func cacheFile(dir, demandPath string, opts Options) (string, error) {
	exe, err := executableHash()
	if err != nil {
		return "", err
	}
	content, err := os.ReadFile(demandPath)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, pointsKey(exe, content, opts)+".json"), nil
}

// pointsKey is the name of the points of a demand's content under opts,
// made by the executable whose hash is exe.
func pointsKey(exe string, content []byte, opts Options) string {
	o := opts.withDefaults()
	h := sha256.New()
	fmt.Fprintf(h, "whatif points v%d\nexecutable %s\n", cacheVersion, exe)
	fmt.Fprintf(h, "scale %v startup %d sample %d slo-wait %d cold %t cycle %d,%d\n",
		o.Scale, o.Startup, o.Sample, o.SLOWait, o.Cold, o.CycleLength, o.CyclePeriod)
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// loadPoints reads a scenario's points; false when the file is missing or
// is not complete points of this layout.
func loadPoints(path string) (cachedPoints, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return cachedPoints{}, false
	}
	var p cachedPoints
	if json.Unmarshal(b, &p) != nil || p.Version != cacheVersion ||
		len(p.Frontier) != len(reactiveSettings(1)) || len(p.Foresight) != len(foresightSkips) {
		return cachedPoints{}, false
	}
	return p, true
}

// savePoints writes a scenario's points through a temporary file, so that
// a reader never sees half of one.
func savePoints(path string, p cachedPoints) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("-cache: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".points-*")
	if err != nil {
		return fmt.Errorf("-cache: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("-cache: writing %s: %w", path, err)
	}
	return nil
}

// scenarioPoints returns the frontier and foresight points of the
// scenario's demand d (read from demandPath) under opts: from the cache
// when opts.Cache is set and holds them, else computed (and, with a
// cache, saved).
func scenarioPoints(d *Demand, demandPath string, opts Options) (frontier, foresight []Point, err error) {
	var path string
	if opts.Cache != "" {
		if path, err = cacheFile(opts.Cache, demandPath, opts); err != nil {
			return nil, nil, err
		}
		if p, ok := loadPoints(path); ok {
			return p.Frontier, p.Foresight, nil
		}
	}
	if frontier, err = Frontier(d, opts); err != nil {
		return nil, nil, err
	}
	if foresight, err = Foresight(d, opts); err != nil {
		return nil, nil, err
	}
	if path != "" {
		if err := savePoints(path, cachedPoints{Version: cacheVersion, Frontier: frontier, Foresight: foresight}); err != nil {
			return nil, nil, err
		}
	}
	return frontier, foresight, nil
}
