package gpuautoscaleconnector

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
)

// burstyDemand is the work an inference service must serve, in pods' worth
// of GPU at full SM activity: a base load with bursts that ramp up over 6
// minutes, hold for 15, and ramp down over 6; a burst every 45 minutes
// with different peaks, and a little deterministic noise.
func burstyDemand(t time.Duration) float64 {
	peaks := []float64{10, 14, 8, 16, 12, 9, 15, 11, 13, 10, 14}
	const base = 3.0
	period := 45 * time.Minute
	i := int(t / period)
	in := t - time.Duration(i)*period
	peak := peaks[i%len(peaks)]
	ramp, hold := 6*time.Minute, 15*time.Minute
	d := base
	switch {
	case in < ramp:
		d = base + (peak-base)*in.Seconds()/ramp.Seconds()
	case in < ramp+hold:
		d = peak
	case in < 2*ramp+hold:
		d = peak - (peak-base)*(in-ramp-hold).Seconds()/ramp.Seconds()
	}
	return d * (1 + 0.03*math.Sin(t.Seconds()/37))
}

type whatIf struct {
	gpuHours            float64
	underProvisionedMin float64
	maxReplicas         int32
}

// simulate runs the autoscaler in a closed loop against the demand: pods
// take startup to become ready, only ready pods report SM activity (which
// saturates at 0.95), and the target is under-provisioned while the demand
// exceeds what its ready pods can serve.
func simulate(spec hpa.Spec, demand func(time.Duration) float64, length, startup time.Duration) whatIf {
	const step = 15 * time.Second
	t0 := time.Unix(1767225600, 0)
	a := hpa.New(spec)
	replicas := spec.MinReplicas
	readyAt := make([]time.Duration, replicas) // per pod, when it serves
	var r whatIf
	for now := time.Duration(0); now < length; now += step {
		ready := 0
		for _, at := range readyAt {
			if at <= now {
				ready++
			}
		}
		d := demand(now)
		if d > float64(ready) {
			r.underProvisionedMin += step.Minutes()
		}
		r.gpuHours += float64(replicas) * step.Hours()
		// Ready pods report; starting ones are pending.
		values := map[string]float64{}
		var pods []hpa.Pod
		for i, at := range readyAt {
			name := fmt.Sprintf("pod-%d", i)
			if at <= now {
				pods = append(pods, hpa.Pod{Name: name, Phase: hpa.Running})
				values[name] = math.Min(0.95, d/float64(ready))
			} else {
				pods = append(pods, hpa.Pod{Name: name, Phase: hpa.Pending})
			}
		}
		dec := a.Evaluate(hpa.Observation{Now: t0.Add(now), Current: replicas, Pods: pods, Values: []map[string]float64{values}})
		a.Record(t0.Add(now), replicas, dec.Desired)
		for replicas < dec.Desired {
			readyAt = append(readyAt, now+startup)
			replicas++
		}
		if dec.Desired < replicas {
			readyAt = readyAt[:dec.Desired] // the newest go first
			replicas = dec.Desired
		}
		r.maxReplicas = max(r.maxReplicas, replicas)
	}
	return r
}

// TestWhatIfPredictiveVersusReactive compares the two modes on 8 hours of
// bursty demand, with pods that take 3 minutes to start:
//
//	go test ./connector/gpuautoscaleconnector -run TestWhatIf -v
func TestWhatIfPredictiveVersusReactive(t *testing.T) {
	const length, startup = 8 * time.Hour, 3 * time.Minute
	reactive := hpa.Spec{Metrics: []hpa.Metric{{Name: "nvidia.gpu.sm.active", Target: 0.6}}, MinReplicas: 2, MaxReplicas: 40, Behavior: hpa.DefaultBehavior()}
	predictive := reactive
	predictive.Predictive, predictive.LeadTime = true, startup
	r := simulate(reactive, burstyDemand, length, startup)
	p := simulate(predictive, burstyDemand, length, startup)
	ideal := 0.0 // GPU-hours of a perfect autoscaler at the target
	for now := time.Duration(0); now < length; now += 15 * time.Second {
		ideal += math.Max(2, math.Ceil(burstyDemand(now)/0.6)) * (15 * time.Second).Hours()
	}
	t.Logf("| mode | GPU-hours | minutes under-provisioned | peak replicas |")
	t.Logf("|---|---|---|---|")
	t.Logf("| reactive (HPA) | %.1f | %.2f | %d |", r.gpuHours, r.underProvisionedMin, r.maxReplicas)
	t.Logf("| predictive, 3 m lead | %.1f | %.2f | %d |", p.gpuHours, p.underProvisionedMin, p.maxReplicas)
	t.Logf("| at target, no lag (reference) | %.1f | 0 | |", ideal)

	require.Less(t, p.underProvisionedMin, r.underProvisionedMin, "scaling ahead of the rise must shorten the shortfall")
	require.Less(t, p.gpuHours, 1.25*r.gpuHours, "and not buy it with a fleet much larger")
}
