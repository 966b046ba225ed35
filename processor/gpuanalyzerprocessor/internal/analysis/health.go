package analysis

import (
	"strconv"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
)

// The GPU's health is internal/gpuhealth's decision, the same catalogue the
// remediation acts on: this file hands it the evidence a sample carries
// and the analyzer's own verdict.

// xidHealth files an XID whose count rose.
func (a *Analyzer) xidHealth(g *gpuState, code uint32, t int64) {
	if e := gpuhealth.XID(int(code)); e.State != gpuhealth.OK {
		g.evidence().Event(e.State, "xid_"+strconv.FormatUint(uint64(code), 10), t, int64(a.cfg.HealthHold))
	}
}

// ingestHealth files the sample's fault evidence: events (a counter that
// rose: xid, dbe, ras) held for HealthHold, and the levels it reads now.
func (a *Analyzer) ingestHealth(g *gpuState, s *Sample, t int64, dbe, ras bool) {
	hold := int64(a.cfg.HealthHold)
	if dbe {
		g.evidence().Event(gpuhealth.ECCUncorrectable.State, "ecc_uncorrectable", t, hold)
	}
	if ras {
		g.evidence().Event(gpuhealth.CPERFatal.State, "cper_fatal", t, hold)
	}
	// An AMD GPU's retired pages stand in for a row remapping failure in
	// RowRemapFail (deferred.go): the pages decide, under their own name.
	switch {
	case s.Has&HasBadPages != 0:
		st := gpuhealth.BadPages(s.BadPages, s.BadPageLimit)
		g.setLevel(gpuhealth.LevelBadPages, st, "bad_pages")
	case s.Has&HasRowRemapFailure != 0:
		st := gpuhealth.OK
		if s.RowRemapFail > 0 {
			st = gpuhealth.RowRemapFailure.State
		}
		g.setLevel(gpuhealth.LevelRowRemap, st, "row_remap_failure")
	}
	if s.Has&HasRecovery != 0 {
		// Named only when it matters: every NVIDIA sample carries the
		// action, nearly always none.
		st, why := gpuhealth.Recovery(s.Recovery).State, ""
		if st != gpuhealth.OK {
			why = "recovery_" + gpuhealth.RecoveryName(s.Recovery)
		}
		g.setLevel(gpuhealth.LevelRecovery, st, why)
	}
	// A sample without the health check's answer keeps the last one: the
	// receiver reports it with every scrape, and a source without it
	// never sets the level.
	if s.Health.Watched != 0 {
		st, why := gpuhealth.DCGMHealthState(s.Health)
		g.setLevel(gpuhealth.LevelDCGMHealth, st, why)
	}
}

// stepHealth adds the verdict's own evidence and returns the GPU's state:
// a faulted GPU is failed (the remediation drains it: gpuhealth's
// GPUFaulted); a GPU slowed by a throttle its operator counts (thermal, a
// power brake, as throttle_reasons say) is degraded, since it does less
// than it can; a GPU held at its power cap is ok: it does what its cap
// says. A leak that will fill the memory is no health state: the GPU is
// fine, the program is not.
func (a *Analyzer) stepHealth(g *gpuState) (gpuhealth.State, string) {
	switch {
	case g.class == Faulted:
		g.setLevel(gpuhealth.LevelVerdict, gpuhealth.GPUFaulted.State, "faulted")
	case g.class == Throttled && g.basis.Evidence != EvidencePowerCap:
		g.setLevel(gpuhealth.LevelVerdict, gpuhealth.Degraded, "throttled")
	default:
		g.setLevel(gpuhealth.LevelVerdict, gpuhealth.OK, "")
	}
	st, why := gpuhealth.OK, ""
	if g.health != nil {
		st, why = g.health.State(g.last)
	}
	if st != g.healthState && a.Notify != nil {
		a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: HealthChanged, Health: st, PrevHealth: g.healthState, Why: why})
	}
	g.healthState = st
	return st, why
}

// evidence is the GPU's health evidence, made at its first fault.
func (g *gpuState) evidence() *gpuhealth.GPU {
	if g.health == nil {
		g.health = &gpuhealth.GPU{}
	}
	return g.health
}

// setLevel sets a level of the GPU's evidence; an ok level of a GPU with
// none is no evidence.
func (g *gpuState) setLevel(src gpuhealth.Level, st gpuhealth.State, why string) {
	if st != gpuhealth.OK || g.health != nil {
		g.evidence().Set(src, st, why)
	}
}
