package gpuremediationconnector

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
)

// TestReadmeDefaultMap checks that the README's default map is the code's.
func TestReadmeDefaultMap(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	byRem := map[policy.Remediation][]int{}
	for code, r := range policy.DefaultXIDs() {
		byRem[r] = append(byRem[r], code)
	}
	for _, r := range []policy.Remediation{policy.RestartApp, policy.ResetGPU, policy.Drain} {
		codes := byRem[r]
		sort.Ints(codes)
		s := make([]string, len(codes))
		for i, c := range codes {
			s[i] = strconv.Itoa(c)
		}
		line := "| `" + r.String() + "` | " + strings.Join(s, ", ") + " |"
		require.Contains(t, string(raw), line)
	}
}
