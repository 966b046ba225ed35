package dcgmbackend

import (
	"fmt"
	"sort"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
)

// DiagOptions say where and how deeply to run DCGM's diagnostic.
type DiagOptions struct {
	// Address is nv-hostengine's host:port or unix socket path.
	Address    string
	UnixSocket bool
	// Level is dcgmi diag's run level: 1 (the quick software and
	// deployment checks, seconds) to 4 (extended stress, an hour or more).
	Level int
}

// DiagResult is the diagnostic's verdict on a set of GPUs.
type DiagResult struct {
	// Pass: every GPU asked for is known to DCGM and no test failed.
	Pass bool
	// Failures says what failed, one entry per GPU and test: the UUID,
	// the test and DCGM's message, or that DCGM does not know the GPU.
	Failures []string
	// Warnings are tests that passed with a warning, in the same form.
	Warnings []string
}

var diagLevels = map[int]dcgm.DiagType{1: dcgm.DiagQuick, 2: dcgm.DiagMedium, 3: dcgm.DiagLong, 4: dcgm.DiagExtended}

// RunDiag connects to nv-hostengine, runs the diagnostic at opts.Level on
// the GPUs with the given UUIDs (dcgmi diag -r LEVEL -i ...), and
// disconnects. go-dcgm's connection is process-wide and counted: where a
// dcgm receiver in the same collector is connected, RunDiag uses its
// connection, whatever opts.Address says. The error is DCGM's own failure
// (unreachable, the call refused); a GPU that fails is in the result.
func RunDiag(opts DiagOptions, uuids []string) (DiagResult, error) {
	level, ok := diagLevels[opts.Level]
	if !ok {
		return DiagResult{}, fmt.Errorf("diagnostic level %d: want 1 to 4", opts.Level)
	}
	initMu.Lock()
	defer initMu.Unlock()
	unix := "0"
	if opts.UnixSocket {
		unix = "1"
	}
	cleanup, err := dcgm.Init(dcgm.Standalone, opts.Address, unix)
	if err != nil {
		return DiagResult{}, fmt.Errorf("nv-hostengine at %s: %w", opts.Address, err)
	}
	defer cleanup()

	ids, err := dcgm.GetSupportedDevices()
	if err != nil {
		return DiagResult{}, fmt.Errorf("list GPUs: %w", err)
	}
	byUUID := make(map[string]uint, len(ids))
	for _, id := range ids {
		info, err := dcgm.GetDeviceInfo(id)
		if err != nil {
			return DiagResult{}, fmt.Errorf("GPU %d attributes: %w", id, err)
		}
		byUUID[info.UUID] = id
	}
	res := DiagResult{Pass: true}
	uuidOf := map[uint]string{}
	var want []uint
	for _, u := range uuids {
		id, ok := byUUID[u]
		if !ok {
			res.Pass = false
			res.Failures = append(res.Failures, u+": not known to DCGM")
			continue
		}
		uuidOf[id] = u
		want = append(want, id)
	}
	if len(want) == 0 {
		return res, nil
	}
	group, err := dcgm.CreateGroup("otelcol-gpu-reset-diag")
	if err != nil {
		return DiagResult{}, err
	}
	defer func() { _ = dcgm.DestroyGroup(group) }()
	for _, id := range want {
		if err := dcgm.AddToGroup(group, id); err != nil {
			return DiagResult{}, err
		}
	}
	out, err := dcgm.RunDiag(level, group)
	if err != nil {
		return DiagResult{}, fmt.Errorf("run diagnostic level %d: %w", opts.Level, err)
	}
	for _, r := range out.Software {
		who := uuidOf[r.EntityID]
		if who == "" {
			// go-dcgm's results carry no entity group: an entity that is
			// none of the GPUs asked for is named by its id.
			who = fmt.Sprintf("entity %d", r.EntityID)
		}
		what := who + ": " + r.TestName
		if r.ErrorMessage != "" {
			what += ": " + r.ErrorMessage
		}
		switch r.Status {
		case "fail":
			res.Pass = false
			res.Failures = append(res.Failures, what)
		case "warn":
			res.Warnings = append(res.Warnings, what)
		}
	}
	sort.Strings(res.Failures)
	sort.Strings(res.Warnings)
	return res, nil
}
