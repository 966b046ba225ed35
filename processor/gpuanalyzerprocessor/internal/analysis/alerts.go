package analysis

// stepStraggler makes a GPU a straggler once it has deviated at every
// evaluation for the sustain time, and not one once it has not deviated at
// any evaluation for as long: a GPU near a threshold does not flap.
func (a *Analyzer) stepStraggler(g *gpuState) {
	was := g.straggler
	sustain := int64(a.cfg.Straggler.Sustain)
	if g.deviating {
		g.calmSince = 0
		if g.devSince == 0 {
			g.devSince = g.last
		}
		if g.last-g.devSince >= sustain {
			g.straggler = true
		}
	} else {
		g.devSince = 0
		if g.calmSince == 0 {
			g.calmSince = g.last
		}
		if g.last-g.calmSince >= sustain {
			g.straggler = false
		}
	}
	if a.Notify != nil && was != g.straggler {
		kind := StragglerStarted
		if was {
			kind = StragglerEnded
		}
		a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: kind, Score: g.score})
	}
}

func (a *Analyzer) stepAlerts(g *gpuState) {
	for name := AlertName(0); name < NumAlerts; name++ {
		rule := &a.cfg.Alerts[name]
		if !rule.Enabled {
			g.alerts[name] = Inactive
			continue
		}
		hold, resolve := a.condition(g, name, rule)
		st, since := g.alerts[name], g.alertSince[name]
		was := st
		switch st {
		case Inactive:
			if hold {
				st, since = Pending, g.last
			}
		case Pending:
			if !hold {
				st = Inactive
			}
		case Firing:
			if resolve {
				st = Inactive
			}
		}
		if st == Pending && g.last-since >= int64(rule.For) {
			st = Firing
		}
		g.alerts[name], g.alertSince[name] = st, since
		if a.Notify != nil && was != st && (st == Firing || was == Firing) {
			kind := AlertFiring
			if was == Firing {
				kind = AlertResolved
			}
			a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: kind, Alert: name, Class: g.class})
		}
	}
}

// condition returns whether the alert's condition holds and whether its
// resolve condition holds. A reading that is absent proves neither.
func (a *Analyzer) condition(g *gpuState, name AlertName, rule *AlertRule) (hold, resolve bool) {
	switch name {
	case GPUFaulted:
		return g.class == Faulted, g.class != Faulted
	case GPUOverheating:
		if !g.hasTemp {
			return false, false
		}
		return g.temp >= rule.Threshold, g.temp < rule.Resolve
	case GPUMemoryPressure:
		if !g.hasMem {
			return false, false
		}
		return g.memRat >= rule.Threshold, g.memRat < rule.Resolve
	case GPUThrottled:
		return g.class == Throttled, g.class != Throttled
	case GPUStraggler:
		return g.straggler, !g.straggler
	case GPUIdle:
		idle := g.class == Idle && g.podAttributed
		return idle, !idle
	case GPUMemoryLeak:
		if !g.hasFB {
			return false, false
		}
		return g.leak.verdict(&a.cfg.Leak)
	}
	return false, false
}
