// Package score measures replay verdicts against a trace's labels, as the
// analyzer's replay contract defines the figures: bottleneck accuracy from
// 40 s into each labelled interval, straggler precision and recall away from
// the 60 s around each labelled edge, and alert episodes that must start
// within 40 s of the labelled start, with no firing episode outside every
// labelled interval.
package score

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

const (
	bottleneckGrace = 40.0
	stragglerGrace  = 60.0
	alertTolerance  = 40.0
)

// Label is one labelled interval [Start, End).
type Label struct {
	UUID, Kind, Value string
	Start, End        float64
}

// Verdict is one line of gpureplay's output.
type Verdict struct {
	Time       float64  `json:"time"`
	UUID       string   `json:"uuid"`
	Bottleneck string   `json:"bottleneck"`
	Straggler  bool     `json:"straggler"`
	Alerts     []string `json:"alerts"`
	Hint       string   `json:"hint"`
	Usage      string   `json:"usage"`
	Evidence   string   `json:"evidence"`
	Scope      string   `json:"scope"`
	// Cause is why the GPU waits, from its node's evidence, and
	// CauseEvidence that evidence in words; empty where none.
	Cause         string `json:"cause"`
	CauseEvidence string `json:"cause_evidence"`
}

// Result holds the figures.
type Result struct {
	BottleneckAccuracy float64
	BottleneckSamples  int
	StragglerPrecision float64 // NaN without straggler verdicts or labels
	StragglerRecall    float64
	StragglerFalse     int
	AlertsExpected     int
	AlertsDetected     int
	AlertsFalse        int
	// The causes' figures (cause.go); NaN without cause labels.
	CauseAccuracy    float64
	CauseSamples     int
	CauseLatencyMean float64
	CauseLatencyMax  float64
	CauseMissed      int
}

// ReadLabels reads a NAME.labels.csv file.
func ReadLabels(r io.Reader) ([]Label, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no header")
	}
	var out []Label
	for i, row := range rows[1:] {
		if len(row) != 5 {
			return nil, fmt.Errorf("line %d: want uuid,kind,value,start,end", i+2)
		}
		s, err1 := strconv.ParseFloat(row[3], 64)
		e, err2 := strconv.ParseFloat(row[4], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: bad start or end", i+2)
		}
		out = append(out, Label{UUID: row[0], Kind: row[1], Value: row[2], Start: s, End: e})
	}
	return out, nil
}

// ReadVerdicts reads gpureplay's JSON Lines, grouped by GPU in time order.
func ReadVerdicts(r io.Reader) (map[string][]Verdict, error) {
	out := map[string][]Verdict{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v Verdict
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out[v.UUID] = append(out[v.UUID], v)
	}
	for _, vs := range out {
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].Time < vs[j].Time })
	}
	return out, sc.Err()
}

type interval struct{ start, end float64 }

// Score computes the figures.
func Score(labels []Label, verdicts map[string][]Verdict) Result {
	return ScoreAt(labels, verdicts, 0)
}

// ScoreAt computes the figures for verdicts of a trace sampled every
// `every` seconds, coarser than its labels (a scrape every 15 to 60 s):
// as score.py --interval, every grace and tolerance grows by the interval,
// since a verdict can only come with the first sample after a change.
func ScoreAt(labels []Label, verdicts map[string][]Verdict, every float64) Result {
	var res Result
	bottleneckGrace := bottleneckGrace + every
	stragglerGrace := stragglerGrace + every
	alertTolerance := alertTolerance + every

	correct, total := 0, 0
	for _, l := range labels {
		if l.Kind != "bottleneck" {
			continue
		}
		for _, v := range verdicts[l.UUID] {
			if v.Time >= l.Start+bottleneckGrace && v.Time < l.End {
				total++
				if v.Bottleneck == l.Value {
					correct++
				}
			}
		}
	}
	res.BottleneckSamples = total
	res.BottleneckAccuracy = ratio(correct, total)
	scoreCauses(&res, labels, verdicts, bottleneckGrace)

	strag := map[string][]interval{}
	for _, l := range labels {
		if l.Kind == "straggler" {
			strag[l.UUID] = append(strag[l.UUID], interval{l.Start, l.End})
		}
	}
	tp, fp, fn := 0, 0, 0
	for uuid, vs := range verdicts {
		ivs := strag[uuid]
		for _, v := range vs {
			nearEdge, truth := false, false
			for _, iv := range ivs {
				if math.Abs(v.Time-iv.start) < stragglerGrace || (v.Time >= iv.end && v.Time < iv.end+stragglerGrace) {
					nearEdge = true
				}
				if v.Time >= iv.start && v.Time < iv.end {
					truth = true
				}
			}
			switch {
			case nearEdge:
			case truth && v.Straggler:
				tp++
			case truth:
				fn++
			case v.Straggler:
				fp++
			}
		}
	}
	res.StragglerPrecision = ratio(tp, tp+fp)
	res.StragglerRecall = ratio(tp, tp+fn)
	res.StragglerFalse = fp

	type key struct{ uuid, alert string }
	expected := map[key][]interval{}
	for _, l := range labels {
		if l.Kind == "alert" {
			k := key{l.UUID, l.Value}
			expected[k] = append(expected[k], interval{l.Start, l.End})
			res.AlertsExpected++
		}
	}
	episodes := map[key][]interval{}
	for uuid, vs := range verdicts {
		active := map[string]float64{}
		for _, v := range vs {
			firing := map[string]bool{}
			for _, a := range v.Alerts {
				firing[a] = true
				if _, ok := active[a]; !ok {
					active[a] = v.Time
				}
			}
			for a, s := range active {
				if !firing[a] {
					episodes[key{uuid, a}] = append(episodes[key{uuid, a}], interval{s, v.Time})
					delete(active, a)
				}
			}
		}
		if len(vs) > 0 {
			for a, s := range active {
				episodes[key{uuid, a}] = append(episodes[key{uuid, a}], interval{s, vs[len(vs)-1].Time + 1e-9})
			}
		}
	}
	for k, ivs := range expected {
		for _, iv := range ivs {
			for _, ep := range episodes[k] {
				if ep.start >= iv.start-alertTolerance && ep.start <= iv.start+alertTolerance {
					res.AlertsDetected++
					break
				}
			}
		}
	}
	for k, eps := range episodes {
		for _, ep := range eps {
			overlaps := false
			for _, iv := range expected[k] {
				if ep.start < iv.end+alertTolerance && ep.end > iv.start-alertTolerance {
					overlaps = true
				}
			}
			if !overlaps {
				res.AlertsFalse++
			}
		}
	}
	return res
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
