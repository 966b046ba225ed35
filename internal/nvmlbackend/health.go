package nvmlbackend

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// NVML has no health watches. For three of DCGM's subsystems it has what
// DCGM's watches read, and the backend judges it by DCGM's rules
// (modules/health/DcgmHealthWatch.cpp), so that nvidia.gpu.health means the
// same from either source:
//
//   - memory: a volatile double-bit error fails (DCGM_FR_VOLATILE_DBE_DETECTED),
//     so does a failed row remapping; a remapping pending until the next
//     reset warns, as do pages pending retirement on a GPU without row
//     remapping (DCGM_FR_PENDING_PAGE_RETIREMENTS). Read with the other
//     values; only the pre-Ampere retirement status is a call of its own.
//   - inforom: nvmlDeviceValidateInforom reads the InfoROM from flash and
//     checks it; a corrupt one warns (DCGM_FR_CORRUPT_INFOROM). Checked at
//     the first collection and then hourly, as DCGM samples the field.
//   - pcie: more than 8 replays a minute warns (DCGM_LIMIT_MAX_PCIREPLAY_RATE),
//     judged over each minute from the replay counter already read.
//
// What NVML cannot say as cheaply is not reported: thermal and power
// (DCGM warns on any violation time in the last minute: NVML's violation
// status is a call per policy per GPU, and the analyzer already reads the
// clock event reasons), NVLink (error counters per link and counter, dozens
// of calls per GPU), the retired-page limits (the page lists), and the
// NVSwitches (NVML does not see them). PMU, MCU, SM and the driver have no
// NVML equivalent, nor does DCGM judge them today.

const (
	// inforomEvery is how often the InfoROM is validated: DCGM samples its
	// validity hourly.
	inforomEvery = time.Hour
	// replayWindow and replayLimit are DCGM's PCIe rule: more than 8
	// replays a minute.
	replayWindow = time.Minute
	replayLimit  = 8
)

// healthState is what one GPU's health check keeps between collections.
type healthState struct {
	inforomAt time.Time
	inforom   gpu.HealthResult
	// inforomKnown is false where the GPU has no InfoROM to validate.
	inforomKnown bool
	// The PCIe replay counter at the start of the current window, and the
	// result of the last full window.
	replayAt    time.Time
	replayStart float64
	replay      gpu.HealthResult
	// rowsPending is the row remapper's pending flag of this collection's
	// read; rowsKnown is false where the GPU has no row remapping.
	rowsPending, rowsKnown bool
}

// readHealth judges the whole GPU's subsystems from the values just read
// into s, and the few calls of its own.
func (b *Backend) readHealth(d *device, s *gpu.Sample, now time.Time) {
	h := &d.health
	vs := &s.Values
	var out gpu.Health

	mem, memKnown := gpu.HealthPass, false
	if v, ok := vs.Get(f.ECCDBEVolTotal); ok && f.Valid(f.ECCDBEVolTotal, v) {
		memKnown = true
		if v > 0 {
			mem = gpu.HealthFail
		}
	}
	if v, ok := vs.Get(f.RowRemapFailure); ok {
		memKnown = true
		if v >= 1 {
			mem = gpu.HealthFail
		}
	}
	if h.rowsKnown {
		memKnown = true
		if h.rowsPending {
			mem = max(mem, gpu.HealthWarn)
		}
	} else if st, ret := d.h.GetRetiredPagesPendingStatus(); ret == nvml.SUCCESS {
		memKnown = true
		if st == nvml.FEATURE_ENABLED {
			mem = max(mem, gpu.HealthWarn)
		}
	}
	if memKnown {
		out.Watch(gpu.HealthMemory)
		out.Report(gpu.HealthMemory, mem)
	}

	if h.inforomAt.IsZero() || now.Sub(h.inforomAt) >= inforomEvery {
		h.inforomAt = now
		switch ret := d.h.ValidateInforom(); ret {
		case nvml.SUCCESS:
			h.inforom, h.inforomKnown = gpu.HealthPass, true
		case nvml.ERROR_CORRUPTED_INFOROM:
			h.inforom, h.inforomKnown = gpu.HealthWarn, true
		default:
			h.inforomKnown = false // no InfoROM, or no answer: not judged
		}
	}
	if h.inforomKnown {
		out.Watch(gpu.HealthInfoROM)
		out.Report(gpu.HealthInfoROM, h.inforom)
	}

	if v, ok := vs.Get(f.PCIeReplayCounter); ok && f.Valid(f.PCIeReplayCounter, v) {
		switch {
		case h.replayAt.IsZero() || v < h.replayStart || now.Before(h.replayAt):
			// A first reading, or a counter that restarted: a new window.
			h.replayAt, h.replayStart = now, v
		case now.Sub(h.replayAt) >= replayWindow:
			h.replay = gpu.HealthPass
			if v-h.replayStart > replayLimit*now.Sub(h.replayAt).Minutes() {
				h.replay = gpu.HealthWarn
			}
			h.replayAt, h.replayStart = now, v
		}
		out.Watch(gpu.HealthPCIe)
		out.Report(gpu.HealthPCIe, h.replay)
	}
	s.Health = out
}
