package analysis

import "slices"

// ingest takes one sample into the GPU's window, its cumulative counters'
// rates and fault evidence, and what its class needs beyond the window
// (power and clock references, temperature, memory).
func (g *gpuState) ingest(s *Sample, a *Analyzer) {
	t := s.Time
	if g.restored {
		// Counters seen by the previous run are not a baseline for this one.
		g.restored, g.firstSeen = false, t
	}
	window := int64(a.cfg.Rules.Window)
	if g.seen {
		g.interval = t - g.last
		// Time since the previous sample goes to the class it ended in; a
		// gap is time the analyzer did not see, counted in neither.
		gap := g.interval > g.cadence.gapLimit(window)
		if !gap {
			g.classSeconds[g.class] += float64(g.interval) / 1e9
		}
		g.accountUsage(t, gap, s.Shares)
		g.cadence.add(g.interval)
	}
	g.usage.price = s.PricePerHour
	g.seen, g.last = true, t

	p := point{t: t}
	// The window keeps float32s. DCGM reports GPU utilization in whole
	// percent and clocks in whole MHz, which float32 holds exactly at those
	// scales but not as ratios or in Hz (0.07 and 1395e6 are not float32s):
	// rounding would move the means and medians that thresholds decide on.
	// So these two are kept scaled; the scale shows nowhere else, as the
	// utilization's means are scaled back before a threshold sees them
	// (classify) and only ratios of clocks are taken.
	values := [numWindowed]float64{wSM: s.SMActive, wDRAM: s.DRAMActive, wUtil: s.GPUUtil * 100, wClock: s.SMClock / 1e6, wStep: s.Step,
		wOccupancy: s.Occupancy, wTensor: s.Tensor, wPower: s.Power, wUMC: s.UMCActive}
	for i, bit := range windowed {
		if bit != 0 && s.Has&bit != 0 {
			p.v[i], p.present = float32(values[i]), p.present|1<<i
		}
	}
	if s.Has&HasNVLink != 0 {
		if r, ok := g.nvlink.rate(s.NVLink, t); ok {
			p.v[wNVLink], p.present = float32(r), p.present|1<<wNVLink
		}
	}
	if s.Has&HasXGMI != 0 {
		g.xgmiCap = s.XGMICapacity
		if r, ok := g.nvlink.rate(s.XGMI, t); ok {
			p.v[wNVLink], p.present = float32(r), p.present|1<<wNVLink
		}
	}
	switch {
	case s.Has&HasUMCActive != 0:
		g.grSlot = false
	case s.Has&HasGREngine != 0:
		g.grSlot = true
	}
	if g.grSlot && s.Has&HasGREngine != 0 {
		p.v[wGR], p.present = float32(s.GREngine), p.present|1<<wGR
	}
	var rx, tx float64
	var hasRx, hasTx bool
	if s.Has&HasPCIeRx != 0 {
		if rx, hasRx = g.pcieRx.rate(s.PCIeRx, t); hasRx {
			p.v[wPCIeRx], p.present = float32(rx), p.present|1<<wPCIeRx
		}
	}
	if s.Has&HasPCIeTx != 0 {
		tx, hasTx = g.pcieTx.rate(s.PCIeTx, t)
	}
	if hasRx && hasTx {
		p.flags |= pPCIe
		if symmetricPCIe(rx, tx, a.cfg.Rules.CommunicationPCIe) {
			p.flags |= pCollective
		}
	}
	g.clocks.observe(s)
	g.power.observe(s)
	g.hasFB = s.Has&HasFB != 0
	if g.hasFB {
		if g.leak == nil {
			g.leak = newLeakFit(a.cfg.Leak.Window)
		}
		g.leak.add(t, s.FBUsed, s.FBFree)
	}
	p.flags |= a.throttleFlags(g, s)
	if s.Has&HasReasons != 0 {
		p.flags |= pReasons
		if s.Reasons&a.cfg.Rules.ThrottleMask != 0 {
			p.flags |= pThrottled
		}
	}
	if s.Has&HasViolation != 0 && s.ViolationPresent&a.cfg.Rules.ViolationMask != 0 {
		// Held back more than the residency by any reason counted makes
		// the sample throttled, as a throttle reason's bit does on NVIDIA.
		p.flags |= pReasons
		for r, v := range s.Violation {
			if s.ViolationPresent&a.cfg.Rules.ViolationMask&(1<<r) != 0 && v > a.cfg.Rules.ThrottleResidency {
				p.flags |= pThrottled
				break
			}
		}
	}
	g.push(p, window, g.cadence.gapLimit(window))

	g.hasTemp, g.temp = s.Has&HasTemp != 0, s.Temp
	g.hasMem, g.memRat = s.Has&HasMemRatio != 0, s.MemRatio
	g.podAttributed = s.PodAttributed
	g.fbHeld = s.Has&HasFBUsed != 0 && s.FBUsed >= fbHeldBytes

	// Fault evidence: an increase of the uncorrectable ECC count, a critical
	// XID, a failed row remapping (on AMD, retired pages at the driver's
	// threshold), a fatal RAS record.
	var dbeRose, rasRose bool
	if s.Has&HasDBE != 0 {
		dbeRose, g.dbe = g.increase(g.hasDBE, g.dbe, s.DBE, t)
		g.hasDBE = true
		if dbeRose {
			g.faultAt, g.hasFault = t, true
		}
	}
	for _, x := range s.XIDs {
		i := slices.IndexFunc(g.xids, func(tr tracker) bool { return tr.code == x.Code })
		var tr tracker
		if i >= 0 {
			tr = g.xids[i]
		}
		inc, next := g.increase(i >= 0, tr, x.Counter, t)
		next.code = x.Code
		if i >= 0 {
			g.xids[i] = next
		} else {
			g.xids = append(g.xids, next)
		}
		if inc && a.critical[x.Code] {
			g.faultAt, g.hasFault = t, true
		}
		if inc {
			a.xidHealth(g, x.Code, t)
		}
	}
	if s.Has&HasRowRemapFailure != 0 && s.RowRemapFail > 0 {
		g.faultAt, g.hasFault = t, true
	}
	if s.Has&HasFatalRAS != 0 {
		rasRose, g.fatalRAS = g.increase(g.hasRAS, g.fatalRAS, s.FatalRAS, t)
		g.hasRAS = true
		if rasRose {
			g.faultAt, g.hasFault = t, true
		}
	}
	a.ingestHealth(g, s, t, dbeRose, rasRose)
}

// increase reports whether a cumulative counter grew since it was last
// seen. A new start time is a reset, not an increase: its count is new only
// if the counter started no earlier than this GPU was first seen (so every
// event it counts happened while the analyzer watched), or at this very
// sample. A value that went down under the same start time is a reset too.
func (g *gpuState) increase(known bool, prev tracker, c Counter, t int64) (bool, tracker) {
	next := tracker{code: prev.code, start: c.Start, value: c.Value}
	switch {
	case known && c.Start == prev.start:
		return c.Value > prev.value, next
	case c.Start >= g.firstSeen || c.Start == t:
		return c.Value > 0, next
	default:
		return false, next
	}
}
