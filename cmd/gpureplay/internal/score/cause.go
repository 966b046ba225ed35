package score

import "math"

// scoreCauses measures the cause labels (kind "cause", value a cause such
// as cpu_throttled): inside each labelled interval, from start + grace on,
// the share of the verdicts of the labelled class whose cause is the
// labelled one, where the class is the GPU's bottleneck label at that time
// (every verdict where no bottleneck label covers it), so that a verdict of
// the wrong class counts against the bottleneck accuracy only; and the
// detection latency, from start to the first verdict with the cause. A
// label whose cause never comes is missed.
func scoreCauses(res *Result, labels []Label, verdicts map[string][]Verdict, grace float64) {
	correct, total, detected := 0, 0, 0
	var sum, worst float64
	for _, l := range labels {
		if l.Kind != "cause" {
			continue
		}
		found := false
		for _, v := range verdicts[l.UUID] {
			if v.Time < l.Start || v.Time >= l.End {
				continue
			}
			if !found && v.Cause == l.Value {
				found = true
				sum += v.Time - l.Start
				worst = max(worst, v.Time-l.Start)
				detected++
			}
			if v.Time < l.Start+grace {
				continue
			}
			if class, ok := classAt(labels, l.UUID, v.Time); ok && v.Bottleneck != class {
				continue
			}
			total++
			if v.Cause == l.Value {
				correct++
			}
		}
		if !found {
			res.CauseMissed++
		}
	}
	res.CauseSamples = total
	res.CauseAccuracy = ratio(correct, total)
	res.CauseLatencyMean, res.CauseLatencyMax = math.NaN(), math.NaN()
	if detected > 0 {
		res.CauseLatencyMean, res.CauseLatencyMax = sum/float64(detected), worst
	}
}

// classAt is the GPU's labelled bottleneck at t.
func classAt(labels []Label, uuid string, t float64) (string, bool) {
	for _, l := range labels {
		if l.Kind == "bottleneck" && l.UUID == uuid && t >= l.Start && t < l.End {
			return l.Value, true
		}
	}
	return "", false
}
