package whatif

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestServingWaitIsTheModelsWait checks the serving mode's measured wait
// (gpu.autoscale.serving.queue.wait, and wait_seconds on each evaluation
// line) against the model's own: B / c seconds for newly arriving work
// (section 4). The connector never sees B. It has the pods' queue in
// requests, their running requests and their token counters, and turns
// the queue into tokens by Little's law with request_time, while the
// model's request size drifts (section 3) and is not request_time's. So
// the two agree only if that conversion is right.
//
// The demand is a step from 2 to 8 pods: the pods asked for after the
// edge are ready a start-up later, so the queue grows past the objective
// and drains again. At each evaluation the model's wait is read off the
// last batch the pods sent before it: waiting per pod × s(t) is B / c.
func TestServingWaitIsTheModelsWait(t *testing.T) {
	settings, err := LoadSettings("../../../../examples/autoscaling/llm-serving-calibrated.yaml")
	require.NoError(t, err)
	step := writeSeries(t, "step.csv", 2*time.Hour, func(at time.Duration) float64 {
		if at >= time.Hour {
			return 8
		}
		return 2
	})
	d := readDemand(t, step)
	type sample struct {
		at   time.Duration
		wait float64
	}
	var samples []sample
	tap := func(md pmetric.Metrics) {
		rms := md.ResourceMetrics()
		if rms.Len() == 0 {
			return
		}
		var waiting float64
		var at time.Duration
		var pods int
		for i := 0; i < rms.Len(); i++ {
			ms := rms.At(i).ScopeMetrics().At(0).Metrics()
			for j := 0; j < ms.Len(); j++ {
				if m := ms.At(j); m.Name() == "vllm:num_requests_waiting" {
					dp := m.Gauge().DataPoints().At(0)
					waiting += dp.DoubleValue()
					at = dp.Timestamp().AsTime().Sub(epoch)
					pods++
				}
			}
		}
		// Each ready pod reports B / c / s(t) requests waiting.
		samples = append(samples, sample{at, waiting / float64(pods) * requestSize(at)})
	}
	var out bytes.Buffer
	sum, err := run(settings, d, Options{Startup: 180 * time.Second}, &out, tap)
	require.NoError(t, err)
	require.Positive(t, sum.SLOViolationMinutes, "the step breaks the objective, or the test checks nothing")

	slo := 2.0 // the contract's default slo_wait, as the settings'
	var compared, near, breaches, seen int
	var errs []float64
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e Evaluation
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		if e.Serving == nil {
			continue // the summary line, or an evaluation with no estimate
		}
		require.NotNil(t, e.Serving.WaitSeconds, "with request_time every estimate has a wait: t=%d", e.Time)
		at := time.Duration(e.Time) * time.Second
		k := sort.Search(len(samples), func(i int) bool { return samples[i].at > at }) - 1
		require.GreaterOrEqual(t, k, 0)
		model, got := samples[k].wait, *e.Serving.WaitSeconds
		require.GreaterOrEqual(t, got, 0.0)
		if model < 0.1 {
			// No queue to speak of: the measured wait is no more.
			require.Less(t, got, 0.5, "t=%d: no queue in the model (%.3f s) but %.3f s measured", e.Time, model, got)
			continue
		}
		compared++
		rel := math.Abs(got-model) / model
		errs = append(errs, rel)
		if rel <= 0.1 {
			near++
		}
		if model > slo {
			breaches++
			if got > slo {
				seen++
			}
		}
	}
	require.NoError(t, sc.Err())
	require.Positive(t, breaches, "the model's wait passed the objective at some evaluation")
	sort.Float64s(errs)
	t.Logf("%d evaluations with a queue: %d within 10 %% of the model's wait (median error %.1f %%); %d of %d past the objective seen so",
		compared, near, 100*errs[len(errs)/2], seen, breaches)
	require.GreaterOrEqual(t, float64(near), 0.9*float64(compared), "the measured wait is the model's within 10 % at 9 evaluations in 10")
	require.GreaterOrEqual(t, float64(seen), 0.9*float64(breaches), "a wait past the objective reads as past it")
}
