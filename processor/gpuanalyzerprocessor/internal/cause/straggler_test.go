package cause

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func railEvidence(errsPerMin, util float64, up bool) Evidence {
	return Evidence{Rail: []NICRates{{Name: "mlx5_3", ErrorsPerMin: errsPerMin, WorstPerMin: errsPerMin, WorstError: "symbol_error",
		Util: util, HasUtil: true, RateBytes: 50e9, Up: up, HasUp: true}}}
}

func TestStragglerCauses(t *testing.T) {
	th := DefaultThresholds()
	healthy := []Evidence{railEvidence(0, 0.4, true), railEvidence(0, 0.42, true), railEvidence(1, 0.38, true)}
	for _, tc := range []struct {
		name  string
		self  Evidence
		peers []Evidence
		want  Kind
		why   string
	}{
		{"its rail errs, the others' do not", railEvidence(1200, 0.2, true), healthy, FabricErrors, "symbol errors +1,200/min on mlx5_3"},
		{"every rail errs: not what sets it apart", railEvidence(1200, 0.2, true),
			[]Evidence{railEvidence(900, 0.4, true), railEvidence(1500, 0.4, true)}, NoneFound, "nothing on n2 differs from the job's other nodes: likely workload imbalance"},
		{"its rail down", railEvidence(0, 0, false), healthy, FabricErrors, "mlx5_3 is down"},
		{"its pod throttled alone", Evidence{HasPod: true, Pod: PodRates{HasThrottle: true, ThrottledFrac: 0.4, LimitCPUs: 4}},
			[]Evidence{{HasPod: true, Pod: PodRates{HasThrottle: true, ThrottledFrac: 0.01}}}, CPUThrottled, "throttled in 40 % of periods at a 4-CPU limit; the job's other pods 1 %"},
		{"every pod throttled", Evidence{HasPod: true, Pod: PodRates{HasThrottle: true, ThrottledFrac: 0.4, LimitCPUs: 4}},
			[]Evidence{{HasPod: true, Pod: PodRates{HasThrottle: true, ThrottledFrac: 0.35}}}, NoneFound, ""},
		{"its node's I/O stalls", Evidence{HasNode: true, Node: Stalls{Some: [NumResources]float64{IO: 0.5}, Has: [NumResources]bool{true, true, true}}},
			[]Evidence{{HasNode: true}}, IOWait, "I/O pressure 50 % on n2, under 10 % on the job's other nodes"},
		{"its rail saturated", railEvidence(0, 0.93, true), healthy, NetworkSaturated, "mlx5_3 at 93 % of 400 Gb/s"},
		{"nothing differs", railEvidence(0, 0.4, true), healthy, NoneFound, "nothing on n2 differs from the job's other nodes: likely workload imbalance"},
		{"no evidence, no cause", Evidence{}, healthy, None, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Straggler(&tc.self, "n2", tc.peers, &th)
			assert.Equal(t, tc.want, f.Kind, f.Why)
			if tc.why != "" {
				assert.Equal(t, tc.why, f.Why)
			}
		})
	}
}

func TestKindNames(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		assert.NotEmpty(t, k.String())
		assert.False(t, seen[k.String()])
		seen[k.String()] = true
	}
	assert.Empty(t, None.String())
}
