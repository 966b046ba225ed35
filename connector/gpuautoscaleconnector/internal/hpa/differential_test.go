package hpa

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

// This file checks the Autoscaler against a second, independent
// transcription of the upstream controller's integer logic
// (kubernetes/kubernetes pkg/controller/podautoscaler, horizontal.go and
// replica_calculator.go, 1.33+), written plainly here without sharing code
// with the package, on random closed-loop scenarios: pods of one to four
// GPUs that start slowly, stop reporting, fail or linger while deleted;
// other actors that change the count; several metrics and aggregations;
// random behaviors and tolerances. The transcription was written alongside
// the package, so upstream_test.go also restates upstream's own tests.

// refHPA is the reference: one HPA object's controller state.
type refHPA struct {
	spec        Spec
	aggs        []string // each metric's aggregation of a pod's samples
	initialized bool
	recs        []refRec
	upEvents    []refEvent
	downEvents  []refEvent
}

type refRec struct {
	n  int32
	ts time.Time
}

type refEvent struct {
	change   int32
	ts       time.Time
	outdated bool
}

// refMilli is what the HPA reads for a sample: a resource.Quantity parsed
// from the sample's decimal text, in milli-units.
func refMilli(v float64) int64 {
	q := resource.MustParse(strconv.FormatFloat(v, 'f', -1, 64))
	return q.MilliValue()
}

// refPodMilli is the pod's value a metrics adapter hands the HPA: each
// sample a quantity, combined in integers; a mean is truncated, as
// GetMetricUsageRatio truncates the mean of the pods.
func refPodMilli(agg string, samples []float64) int64 {
	var total, largest int64
	for i, v := range samples {
		m := refMilli(v)
		total += m
		if i == 0 || m > largest {
			largest = m
		}
	}
	switch agg {
	case "sum":
		return total
	case "max":
		return largest
	}
	return total / int64(len(samples))
}

// reconcile returns the count the controller would write, and whether it
// writes at all. samples holds, per metric, each reporting pod's samples
// (its GPUs).
func (r *refHPA) reconcile(now time.Time, current int32, pods []Pod, samples []map[string][]float64) (int32, bool) {
	s := r.spec
	if !r.initialized {
		r.recs = append(r.recs, refRec{current, now})
		r.initialized = true
	}
	if current == 0 && s.MinReplicas != 0 {
		return 0, false
	}
	if current > s.MaxReplicas {
		return s.MaxReplicas, true
	}
	if current < s.MinReplicas {
		return s.MinReplicas, true
	}
	var best int32
	bad := 0
	for i, m := range s.Metrics {
		var vs map[string][]float64
		if i < len(samples) {
			vs = samples[i]
		}
		n, ok := r.plainMetric(current, pods, vs, r.aggs[i], refMilli(m.Target))
		if !ok {
			bad++
			continue
		}
		if best == 0 || n > best {
			best = n
		}
	}
	if bad == len(s.Metrics) || (bad > 0 && best < current) {
		return current, false
	}
	desired := int32(0)
	if best > desired {
		desired = best
	}
	desired = r.stabilize(now, current, desired)
	desired = r.rate(now, current, desired)
	return desired, desired != current
}

func (r *refHPA) within(ratio float64) bool {
	up, down := refTolerance(r.spec.Behavior.ScaleUp.Tolerance), refTolerance(r.spec.Behavior.ScaleDown.Tolerance)
	return ratio >= 1.0-down && ratio <= 1.0+up
}

// refTolerance is what tolerancesForHpa reads: the behavior's quantity in
// its wire form, as the API server stores it, then AsApproximateFloat64.
func refTolerance(v float64) float64 {
	sent := resource.MustParse(strconv.FormatFloat(v, 'f', -1, 64))
	raw, err := sent.Marshal()
	if err != nil {
		panic(err)
	}
	var stored resource.Quantity
	if err := stored.Unmarshal(raw); err != nil {
		panic(err)
	}
	return stored.AsApproximateFloat64()
}

func (r *refHPA) plainMetric(current int32, pods []Pod, vs map[string][]float64, agg string, target int64) (int32, bool) {
	if len(pods) == 0 {
		return 0, false
	}
	metrics := map[string]int64{}
	readyCount := 0
	unready := map[string]bool{}
	missing := map[string]bool{}
	for _, p := range pods {
		if p.Deleting || p.Phase == Failed {
			continue
		}
		if p.Phase == Pending {
			unready[p.Name] = true
			continue
		}
		v, found := vs[p.Name]
		if !found {
			missing[p.Name] = true
			continue
		}
		metrics[p.Name] = refPodMilli(agg, v)
		readyCount++
	}
	if len(metrics) == 0 {
		return 0, false
	}
	avg := func() float64 {
		var sum int64
		for _, v := range metrics {
			sum += v
		}
		return float64(sum/int64(len(metrics))) / float64(target)
	}
	ratio := avg()
	withUnready := len(unready) > 0 && ratio > 1.0
	if !withUnready && len(missing) == 0 {
		if r.within(ratio) {
			return current, true
		}
		return int32(math.Ceil(ratio * float64(readyCount))), true
	}
	for name := range missing {
		if ratio < 1.0 {
			metrics[name] = target
		} else if ratio > 1.0 {
			metrics[name] = 0
		}
	}
	if withUnready {
		for name := range unready {
			metrics[name] = 0
		}
	}
	newRatio := avg()
	if r.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, true
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current, true
	}
	return n, true
}

func (r *refHPA) stabilize(now time.Time, current, desired int32) int32 {
	b := r.spec.Behavior
	upCut := now.Add(-b.ScaleUp.StabilizationWindow)
	downCut := now.Add(-b.ScaleDown.StabilizationWindow)
	upRec, downRec := desired, desired
	oldIdx, foundOld := 0, false
	for i, rec := range r.recs {
		if rec.ts.After(upCut) && rec.n < upRec {
			upRec = rec.n
		}
		if rec.ts.After(downCut) && rec.n > downRec {
			downRec = rec.n
		}
		if rec.ts.Before(upCut) && rec.ts.Before(downCut) {
			foundOld, oldIdx = true, i
		}
	}
	out := current
	if out < upRec {
		out = upRec
	}
	if out > downRec {
		out = downRec
	}
	if foundOld {
		r.recs[oldIdx] = refRec{desired, now}
	} else {
		r.recs = append(r.recs, refRec{desired, now})
	}
	return out
}

func refChange(now time.Time, period time.Duration, evs []refEvent) int32 {
	var n int32
	for _, e := range evs {
		if e.ts.After(now.Add(-period)) {
			n += e.change
		}
	}
	return n
}

func (r *refHPA) rate(now time.Time, current, desired int32) int32 {
	s := r.spec
	if desired > current {
		rules := s.Behavior.ScaleUp
		var limit int32
		if rules.Select == SelectDisabled {
			limit = current
		} else {
			first := true
			for _, p := range rules.Policies {
				start := current - refChange(now, p.Period, r.upEvents) + refChange(now, p.Period, r.downEvents)
				var prop int32
				if p.Type == Pods {
					prop = start + p.Value
				} else {
					prop = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
				}
				if first || (rules.Select == SelectMin && prop < limit) || (rules.Select != SelectMin && prop > limit) {
					limit, first = prop, false
				}
			}
		}
		if limit < current {
			limit = current
		}
		maxAllowed := s.MaxReplicas
		if maxAllowed > limit {
			maxAllowed = limit
		}
		if desired > maxAllowed {
			return maxAllowed
		}
	} else if desired < current {
		rules := s.Behavior.ScaleDown
		var limit int32
		if rules.Select == SelectDisabled {
			limit = current
		} else {
			first := true
			for _, p := range rules.Policies {
				start := current - refChange(now, p.Period, r.upEvents) + refChange(now, p.Period, r.downEvents)
				var prop int32
				if p.Type == Pods {
					prop = start - p.Value
				} else {
					prop = int32(float64(start) * (1 - float64(p.Value)/100))
				}
				if first || (rules.Select == SelectMin && prop > limit) || (rules.Select != SelectMin && prop < limit) {
					limit, first = prop, false
				}
			}
		}
		if limit > current {
			limit = current
		}
		minAllowed := s.MinReplicas
		if minAllowed < limit {
			minAllowed = limit
		}
		if desired < minAllowed {
			return minAllowed
		}
	}
	return desired
}

// store is storeScaleEvent.
func (r *refHPA) store(now time.Time, prev, next int32) {
	longest := func(ps []Policy) time.Duration {
		var l time.Duration
		for _, p := range ps {
			if p.Period > l {
				l = p.Period
			}
		}
		return l
	}
	put := func(evs []refEvent, period time.Duration, change int32) []refEvent {
		for i := range evs {
			if evs[i].ts.Before(now.Add(-period)) {
				evs[i].outdated = true
			}
		}
		idx := -1
		for i := range evs {
			if evs[i].outdated {
				idx = i
			}
		}
		if idx >= 0 {
			evs[idx] = refEvent{change, now, false}
			return evs
		}
		return append(evs, refEvent{change, now, false})
	}
	if next > prev {
		r.upEvents = put(r.upEvents, longest(r.spec.Behavior.ScaleUp.Policies), next-prev)
	} else {
		r.downEvents = put(r.downEvents, longest(r.spec.Behavior.ScaleDown.Policies), prev-next)
	}
}

func randomRules(rng *rand.Rand, up bool) Rules {
	windows := []time.Duration{0, 15 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute}
	r := Rules{StabilizationWindow: windows[rng.IntN(len(windows))]}
	// 0.35, 0.41 and 0.57 read differently as quantities (tolerancesForHpa).
	tols := []float64{0, 0.02, 0.05, 0.1, 0.1, 0.2, 0.35, 0.41, 0.57}
	r.Tolerance = tols[rng.IntN(len(tols))]
	periods := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 10 * time.Minute}
	for range 1 + rng.IntN(3) {
		p := Policy{Period: periods[rng.IntN(len(periods))]}
		if rng.IntN(2) == 0 {
			p.Type, p.Value = Pods, int32(1+rng.IntN(8))
		} else {
			p.Type, p.Value = Percent, int32(10+rng.IntN(200))
			if !up && p.Value > 100 {
				p.Value = 100
			}
		}
		r.Policies = append(r.Policies, p)
	}
	switch rng.IntN(10) {
	case 0, 1:
		r.Select = SelectMin
	case 2:
		r.Select = SelectDisabled
	default:
		r.Select = SelectMax
	}
	return r
}

// envInt reads a number from the environment, or gives def.
func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, s)
	}
	return n
}

// TestDifferentialAgainstUpstreamTranscription runs random closed-loop
// scenarios of 60 evaluations each through the Autoscaler (with PodValue
// combining each pod's samples) and the reference, and requires every
// decision to agree. 2000 scenarios by default (seeds 0 to 1999);
// HPA_DIFFERENTIAL_SCENARIOS and HPA_DIFFERENTIAL_SEED (the first seed) run
// others, e.g. HPA_DIFFERENTIAL_SCENARIOS=50000 for a longer check.
func TestDifferentialAgainstUpstreamTranscription(t *testing.T) {
	scenarios := envInt(t, "HPA_DIFFERENTIAL_SCENARIOS", 2000)
	first := envInt(t, "HPA_DIFFERENTIAL_SEED", 0)
	targets := []float64{0.18, 0.5, 0.6, 0.7, 0.9, 1, 5, 0.333, 0.32, 0.66, 0.805}
	aggregations := []string{"avg", "avg", "max", "sum"}
	disagreements := 0
	evaluations := 0
	for seed := first; seed < first+scenarios; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		s := Spec{MinReplicas: int32(1 + rng.IntN(3))}
		s.MaxReplicas = s.MinReplicas + int32(rng.IntN(25))
		var aggs []string
		for i := range 1 + rng.IntN(2) {
			s.Metrics = append(s.Metrics, Metric{Name: fmt.Sprintf("m%d", i), Target: targets[rng.IntN(len(targets))]})
			aggs = append(aggs, aggregations[rng.IntN(len(aggregations))])
		}
		s.Behavior = Behavior{ScaleUp: randomRules(rng, true), ScaleDown: randomRules(rng, false)}
		a, ref := New(s), &refHPA{spec: s, aggs: aggs}
		maxGPUs := 1 + rng.IntN(4)

		// The closed loop: the load is in pods of work at the first metric's
		// target; pods start after a few evaluations; a pod has one to four
		// GPUs, at the same value or not, milli-exact or not; some pods go
		// silent, fail or linger while deleted.
		replicas := s.MinReplicas + int32(rng.IntN(3)) - 1
		type pod struct {
			name           string
			gpus           int
			startsAt       int
			failed, silent bool
		}
		var pods []pod
		next := 0
		addPods := func(n int32, step int) {
			for range n {
				pods = append(pods, pod{name: fmt.Sprintf("p%d", next), gpus: 1 + rng.IntN(maxGPUs), startsAt: step + rng.IntN(4)})
				next++
			}
		}
		addPods(replicas, -1)
		var deleting []string
		load := 1 + rng.Float64()*float64(s.MaxReplicas)
		now := t0
		for step := range 60 {
			now = now.Add(time.Duration(10+rng.IntN(11)) * time.Second)
			load = math.Max(0, load*(0.7+0.6*rng.Float64()))
			if rng.IntN(20) == 0 {
				// Someone else sets the count: out of bounds, or to 0.
				target := []int32{0, s.MinReplicas - 1, s.MaxReplicas + 2, s.MaxReplicas + 5}[rng.IntN(4)]
				target = max(target, 0)
				if target > replicas {
					addPods(target-replicas, step)
				} else {
					pods = pods[:target]
				}
				replicas = target
			}
			var listed []Pod
			values := make([]map[string]float64, len(s.Metrics))
			samples := make([]map[string][]float64, len(s.Metrics))
			for i := range values {
				values[i], samples[i] = map[string]float64{}, map[string][]float64{}
			}
			ready := 0
			for _, p := range pods {
				if p.startsAt <= step && !p.failed {
					ready++
				}
			}
			for i := range pods {
				p := &pods[i]
				if rng.IntN(50) == 0 {
					p.failed = true
				}
				if rng.IntN(15) == 0 {
					p.silent = !p.silent
				}
				phase := Running
				switch {
				case p.failed:
					phase = Failed
				case p.startsAt > step:
					phase = Pending
				}
				listed = append(listed, Pod{Name: p.name, Phase: phase})
				for mi, m := range s.Metrics {
					if p.silent && mi == 0 || ready == 0 {
						continue
					}
					v := load * m.Target / float64(ready) * (0.8 + 0.4*rng.Float64())
					if aggs[mi] == "sum" {
						v /= float64(p.gpus)
					}
					if rng.IntN(3) > 0 {
						v = math.Round(v*1000) / 1000 // a milli-exact value
					}
					same := rng.IntN(2) == 0 // every GPU at the same value
					gpus := make([]float64, p.gpus)
					for g := range gpus {
						gpus[g] = v
						if !same {
							gpus[g] = v * (0.9 + 0.2*rng.Float64())
							if rng.IntN(3) > 0 {
								gpus[g] = math.Round(gpus[g]*1000) / 1000
							}
						}
					}
					if phase == Running || rng.IntN(2) == 0 { // pending and failed pods may report too
						values[mi][p.name] = PodValue(aggs[mi], gpus)
						samples[mi][p.name] = gpus
					}
				}
			}
			for _, name := range deleting {
				listed = append(listed, Pod{Name: name, Phase: Running, Deleting: true})
				values[0][name] = 9 // a lingering value, to be ignored
				samples[0][name] = []float64{9}
			}
			deleting = nil
			sort.Slice(listed, func(i, j int) bool { return listed[i].Name < listed[j].Name })

			d := a.Evaluate(Observation{Now: now, Current: replicas, Pods: listed, Values: values})
			want, write := ref.reconcile(now, replicas, listed, samples)
			evaluations++
			if !write {
				want = replicas
				if replicas == 0 {
					want = 0
				}
			}
			if d.Desired != want {
				disagreements++
				if disagreements <= 5 {
					t.Errorf("seed %d step %d: current %d, autoscaler %d (%s), reference %d; spec %+v", seed, step, replicas, d.Desired, d.Reason, want, s)
				}
			}
			if want != replicas && write {
				a.Record(now, replicas, d.Desired)
				ref.store(now, replicas, want)
				if want > replicas {
					addPods(want-replicas, step)
				} else {
					for _, p := range pods[want:] {
						if rng.IntN(2) == 0 {
							deleting = append(deleting, p.name)
						}
					}
					pods = pods[:want]
				}
				replicas = want
			}
		}
	}
	t.Logf("%d scenarios (seeds %d to %d), %d evaluations, %d disagreements", scenarios, first, first+scenarios-1, evaluations, disagreements)
	require.Zero(t, disagreements, "of %d evaluations", evaluations)
	require.Equal(t, 60*scenarios, evaluations)
}

// TestMilliIsQuantity checks Milli against resource.Quantity on random
// values, milli-exact and not.
func TestMilliIsQuantity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := rng.Float64() * math.Pow10(rng.IntN(8)-3)
		if rng.IntN(2) == 0 {
			v = math.Round(v*1000) / 1000
		}
		require.Equal(t, refMilli(v), Milli(v), "%v", v)
	}
}
