package dcgmbackend

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// DCGM's health watches (dcgmHealthSet, dcgmHealthCheck): the host engine
// watches the fields each subsystem rests on (PCIe replays, volatile
// double-bit errors, pending page retirements and row remappings, the
// InfoROM's validity, thermal and power violations, NVLink error counters
// and link states, NVSwitch errors) and judges them on request. The
// backend asks once per connection for every subsystem that applies to a
// GPU, and checks every HealthEvery.
//
// The watches get a group of their own, of the whole GPUs and the
// NVSwitches: a MIG instance's subsystems are its GPU's (DCGM would report
// the GPU's incident again for each instance), and an NVSwitch's incidents
// are on the switch, which the receiver reports on no device of its own.

// healthWatchMask asks for each gpu.HealthSystem: they are DCGM's bits in
// order, PCIe (0x1) to NVSwitch fatal (0x800).
const healthWatchMask = dcgm.HealthSystem(1<<gpu.NumHealthSystems - 1)

// nvswitchSystems are the subsystems judged on NVSwitches, not GPUs.
const nvswitchSystems = 1<<gpu.HealthNVSwitchNonFatal | 1<<gpu.HealthNVSwitchFatal

// healthState is the backend's health watch: its group, what it watches,
// and the last check's results.
type healthState struct {
	group dcgm.GroupHandle
	// watched is the subsystems a GPU's result covers; 0 when the watches
	// could not be set (health is then not reported).
	watched uint16
	// checked is when the last check ran; results its answer, by DCGM
	// GPU ID.
	checked time.Time
	results map[uint]gpu.Health
	warned  bool
}

// setHealth creates the health group and sets the watches, once per
// connection. A host engine that refuses them (an old DCGM, a health
// module that failed to load) costs the health metric, not the
// connection: the failure is logged once.
func (b *Backend) setHealth() {
	if !b.opts.Health || b.health.watched != 0 {
		return
	}
	if err := b.trySetHealth(); err != nil {
		b.opts.Logger.Warn("DCGM health watches unavailable; nvidia.gpu.health is not reported", zap.Error(err))
		b.health = healthState{}
	}
}

func (b *Backend) trySetHealth() error {
	group, err := dcgm.CreateGroup(fmt.Sprintf("otelcol-gpu-health-%d", time.Now().UnixNano()))
	if err != nil {
		return fmt.Errorf("create health group: %w", err)
	}
	b.health.group = group
	for _, e := range b.entities {
		if e.pair.EntityGroupId != dcgm.FE_GPU {
			continue
		}
		if err := dcgm.AddEntityToGroup(group, dcgm.FE_GPU, e.pair.EntityId); err != nil {
			return fmt.Errorf("add GPU %d to the health group: %w", e.pair.EntityId, err)
		}
	}
	// A node without NVSwitches (PCIe GPUs, NVLink bridges) lists none, or
	// answers that it has no switch module: its NVSwitch watches judge
	// nothing, and are not reported.
	switches, err := dcgm.GetEntityGroupEntities(dcgm.FE_SWITCH)
	if err != nil {
		b.opts.Logger.Debug("No NVSwitches listed", zap.Error(err))
		switches = nil
	}
	for _, id := range switches {
		if err := dcgm.AddEntityToGroup(group, dcgm.FE_SWITCH, id); err != nil {
			return fmt.Errorf("add NVSwitch %d to the health group: %w", id, err)
		}
	}
	if err := dcgm.HealthSet(group, healthWatchMask); err != nil {
		return err
	}
	// DCGM keeps the mask it was given; one that keeps less watches less.
	set, err := dcgm.HealthGet(group)
	if err != nil {
		return fmt.Errorf("read the health watches back: %w", err)
	}
	watched := uint16(set & healthWatchMask)
	if len(switches) == 0 {
		watched &^= nvswitchSystems
	}
	if watched == 0 {
		return fmt.Errorf("DCGM watches none of the systems asked for (mask %#x)", uint(set))
	}
	b.health.watched = watched
	b.health.checked = time.Time{}
	b.health.results = nil
	return nil
}

// checkHealth runs DCGM's health check when HealthEvery has passed since
// the last, and gives each whole GPU's sample the last check's answer: a
// level, which holds until the next check. A failed check leaves the
// samples without health (logged once) rather than failing the
// collection: a lost connection fails the field reads anyway.
func (b *Backend) checkHealth(now time.Time, samples []gpu.Sample) {
	if b.health.watched == 0 {
		return
	}
	if b.health.checked.IsZero() || now.Sub(b.health.checked) >= b.opts.HealthEvery {
		// A check that fails is tried again at the same cadence.
		b.health.checked = now
		res, err := dcgm.HealthCheck(b.health.group)
		if err != nil {
			if !b.health.warned {
				b.health.warned = true
				b.opts.Logger.Warn("DCGM health check failed", zap.Error(err))
			}
			b.health.results = nil
		} else {
			b.health.results = b.healthResults(res)
		}
	}
	if b.health.results == nil {
		return
	}
	for i := range samples {
		e := &b.entities[i]
		if e.pair.EntityGroupId == dcgm.FE_GPU {
			samples[i].Health = b.health.results[e.pair.EntityId]
		}
	}
}

// healthResults turns a check's incidents into each GPU's worst result per
// subsystem. An NVSwitch's incident is every GPU's: the switches carry
// the NVLink traffic between all of the node's GPUs, and a fatal switch
// error takes the whole fabric down (NVIDIA's XIDs 145 to 150 likewise
// name a GPU for a switch's fault). An incident of a subsystem or an
// entity the backend does not know is left out.
func (b *Backend) healthResults(res dcgm.HealthResponse) map[uint]gpu.Health {
	out := make(map[uint]gpu.Health, len(b.entities))
	var blank gpu.Health
	blank.Watched = b.health.watched
	for _, e := range b.entities {
		if e.pair.EntityGroupId == dcgm.FE_GPU {
			out[e.pair.EntityId] = blank
		}
	}
	for _, inc := range res.Incidents {
		sys, ok := healthSystem(inc.System)
		if !ok {
			continue
		}
		var r gpu.HealthResult
		switch inc.Health {
		case dcgm.DCGM_HEALTH_RESULT_WARN:
			r = gpu.HealthWarn
		case dcgm.DCGM_HEALTH_RESULT_FAIL:
			r = gpu.HealthFail
		default:
			continue
		}
		switch inc.EntityInfo.EntityGroupId {
		case dcgm.FE_GPU:
			if h, ok := out[inc.EntityInfo.EntityId]; ok {
				h.Report(sys, r)
				out[inc.EntityInfo.EntityId] = h
			}
		case dcgm.FE_SWITCH:
			for id, h := range out {
				h.Report(sys, r)
				out[id] = h
			}
		}
	}
	return out
}

// healthSystem is the subsystem of one of DCGM's watch bits.
func healthSystem(s dcgm.HealthSystem) (gpu.HealthSystem, bool) {
	if s == 0 || s&(s-1) != 0 || s&healthWatchMask == 0 {
		return 0, false
	}
	return gpu.HealthSystem(bits.TrailingZeros(uint(s))), true
}
