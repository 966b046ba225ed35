package analysis

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
)

// railNIC is node evidence whose every rail moves a collective.
type railNIC struct{}

func (railNIC) Explain(*CauseQuery) cause.Finding { return cause.Finding{} }
func (railNIC) RailCollective(string, int64) bool { return true }

// TestRailOverPCIe: a job's GPUs in an all-reduce across nodes, with
// symmetric PCIe traffic on every GPU, rest on their rails' NICs where the
// node's evidence says those move the collective (the measurement PCIe
// symmetry infers), and on PCIe without it; communication bound over the
// network either way.
func TestRailOverPCIe(t *testing.T) {
	for _, tc := range []struct {
		name string
		nic  Explainer
		want Evidence
	}{{"NIC counters", railNIC{}, EvidenceNIC}, {"no NIC counters", nil, EvidencePCIe}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Causes = tc.nic
			a := New(cfg)
			last := map[string]Verdict{}
			for ts := 0.0; ts <= 60; ts++ {
				for i := range 8 {
					s := busy(ts)
					s.Group = "ml/llm"
					s.SMActive, s.GPUUtil = 0.12, 1
					s.Has |= HasPCIeRx | HasPCIeTx
					s.PCIeRx, s.PCIeTx = Counter{Value: 11e9 * ts}, Counter{Value: 10.5e9 * ts}
					require.Equal(t, Accepted, a.Ingest(strconv.Itoa(i), &s))
				}
				a.Evaluate(func(v *Verdict) { last[v.ID] = *v })
			}
			for id, v := range last {
				require.Equal(t, CommunicationBound, v.Class, id)
				require.Equal(t, Basis{Evidence: tc.want, Scope: ScopeNetwork}, v.Basis, id)
			}
		})
	}
}
