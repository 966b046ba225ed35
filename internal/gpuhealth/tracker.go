package gpuhealth

// Level is a source of evidence that holds a state while it lasts: a
// reading of now, not an event.
type Level int

const (
	// LevelRowRemap: a failed row remapping, as the GPU reports it.
	LevelRowRemap Level = iota
	// LevelRecovery: the recovery action the driver asks for.
	LevelRecovery
	// LevelBadPages: an AMD GPU's retired pages against the threshold.
	LevelBadPages
	// LevelDCGMHealth: the health check's answer (DCGM's health watches,
	// NVML's equivalents), its worst subsystem by DCGMHealthState.
	LevelDCGMHealth
	// LevelVerdict: the analyzer's class (faulted, or a slowdown); the
	// last level, as it repeats the others.
	LevelVerdict
	numLevels
)

type cause struct {
	state State
	why   string
}

// GPU is what is known of one GPU's health: the states that events (an
// XID, an ECC error, a RAS record) set for a while, and those that levels
// hold while they last. Its zero value is a GPU with no evidence: ok.
type GPU struct {
	// until is when the state an event set stops holding, per state (Unix
	// ns); why names the event. An event holds its state for a while
	// because an XID is a moment: the GPU it left failed stays failed
	// until it is reset or its node rebooted, which the collector sees
	// only as the GPU reporting again after a restart; hold is how long
	// to wait for that before calling the GPU well again.
	until [NumStates]int64
	why   [NumStates]string
	level [numLevels]cause
}

// Event files a fault of state s, named why, seen at at (Unix ns), to hold
// for hold ns. A state of ok is no evidence.
func (g *GPU) Event(s State, why string, at, hold int64) {
	if s == OK {
		return
	}
	if end := at + hold; end > g.until[s] {
		g.until[s], g.why[s] = end, why
	}
}

// Set gives the level src its current state: s while it lasts, named why;
// OK when it no longer holds.
func (g *GPU) Set(src Level, s State, why string) {
	if s == OK {
		why = ""
	}
	g.level[src] = cause{s, why}
}

// State is the GPU's state at now: the worst that holds, with its cause.
// Of equals, the rawest evidence names it: a level the GPU reports, then an
// event, then the analyzer's verdict, which only repeats them.
func (g *GPU) State(now int64) (State, string) {
	worst, why := OK, ""
	for _, c := range g.level[:LevelVerdict] {
		if c.state > worst {
			worst, why = c.state, c.why
		}
	}
	for s := NumStates - 1; s > worst; s-- {
		if g.until[s] > now {
			worst, why = s, g.why[s]
			break
		}
	}
	if c := g.level[LevelVerdict]; c.state > worst {
		worst, why = c.state, c.why
	}
	return worst, why
}
