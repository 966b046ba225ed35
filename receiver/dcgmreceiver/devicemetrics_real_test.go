package dcgmreceiver

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// realAMD holds AMD's own output and its exporter's metric list, each
// under the licence its README names.
var realAMD = filepath.Join("testdata", "real-amd")

// scrapeAddedLabels are labels Prometheus adds to the series it scrapes:
// its target's instance and job, and node from its Kubernetes discovery.
// One real line came through a Prometheus query and carries them; the
// exporter puts none of them on a series (its exporterconfig.proto lists
// the labels it has), so the comparison leaves them out.
var scrapeAddedLabels = map[string]bool{"instance": true, "job": true, "node": true}

// seriesLabels are the labels of single series (a clock's type, a link's
// index, a RAS record's AFIDs), which the real gpu_gfx_activity lines
// cannot show.
var seriesLabels = map[string]bool{
	amdLabelClockType: true, amdLabelClockIndex: true, amdLabelLinkIndex: true,
	amdLabelSeverity: true, amdLabelAFIDIndex: true,
}

// beyondList are the fields the naming emits on a platform the metric
// list does not give them, with that platform. The backend reads an
// MI2xx's hotspot temperature and PCIe replay counter through the same AMD
// SMI calls as an MI3xx's, and the naming serves what it reads, where the
// list has both on MI3xx only: a dashboard built on the exporter finds
// every series it expects, and these two more on an MI2xx. Whether a real
// MI2xx answers both calls is not verified (README, "Not verified without
// AMD hardware").
var beyondList = map[string]string{"gpu_junction_temperature": "MI2xx", "pcie_replay_count": "MI2xx"}

// realExporterSeries reads the real device-metrics-exporter lines: each
// series' name, without the exporter's optional amd_ prefix, and its
// labels, less those Prometheus added.
func realExporterSeries(t *testing.T) map[string][]map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(realAMD, "device-metrics-exporter.prom"))
	require.NoError(t, err)
	line := regexp.MustCompile(`^(\w+)\{(.*)\} \S+$`)
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	out := map[string][]map[string]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, kv := range label.FindAllStringSubmatch(m[2], -1) {
			if !scrapeAddedLabels[kv[1]] {
				labels[kv[1]] = kv[2]
			}
		}
		name := strings.TrimPrefix(m[1], "amd_")
		out[name] = append(out[name], labels)
	}
	require.NotEmpty(t, out)
	return out
}

// exporterFields reads the rows of device-metrics-exporter's metric list:
// per field, named in lower case as the exporter serves it, the platforms
// the list gives it ("MI2xx", "MI3xx", "Radeon").
func exporterFields(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(realAMD, "device-metrics-exporter-metricslist.md"))
	require.NoError(t, err)
	// | &check; | &check; | GPU_PACKAGE_POWER `[MI3xx]` | Current socket power ... |
	row := regexp.MustCompile("^\\|[^|]*\\|[^|]*\\|\\s*([A-Z0-9_]+) `\\[([^\\]]+)\\]`")
	out := map[string][]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			var platforms []string
			for _, p := range strings.Split(m[2], ",") {
				platforms = append(platforms, strings.TrimSpace(p))
			}
			out[strings.ToLower(m[1])] = platforms
		}
	}
	require.NotEmpty(t, out)
	return out
}

// amdPlatform is the metric list's name of a GPU's platform, from the
// market name the exporter serves as card_series: MI3xx for an "AMD
// Instinct MI300X OAM", MI2xx for an MI250.
func amdPlatform(cardSeries string) string {
	if m := regexp.MustCompile(`\bMI(\d)\d\d`).FindStringSubmatch(cardSeries); m != nil {
		return "MI" + m[1] + "xx"
	}
	return ""
}

// TestDeviceMetricsExporterNamingMatchesRealExporter compares the
// device_metrics_exporter naming's series with AMD's: each name is a
// field of the exporter's metric list, emitted only for a platform the
// list gives it; each label is one the real lines carry, spelt as theirs;
// and the stand-in's SPX MI300X is the real one's model.
func TestDeviceMetricsExporterNamingMatchesRealExporter(t *testing.T) {
	served := realExporterSeries(t)
	fields := exporterFields(t)
	lib, _ := amdStandin(t, amdFleet())
	s := newAMDScraper(t, lib, &statusHost{}, func(c *Config) { c.Naming = NamingDeviceMetricsExporter })
	md := scrapeAt(t, s, 0)
	ours := map[string][]pcommon.Map{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		ms := rms.At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			dps := ms.At(j).Gauge().DataPoints()
			for k := 0; k < dps.Len(); k++ {
				ours[ms.At(j).Name()] = append(ours[ms.At(j).Name()], dps.At(k).Attributes())
			}
		}
	}
	// Which labels the exporter puts on a series is configurable
	// (export labels): the reference is every label the real lines have.
	known := map[string]bool{}
	for _, series := range served {
		for _, w := range series {
			for k := range w {
				known[k] = true
			}
		}
	}
	platformsSeen := map[string]bool{}
	for name, points := range ours {
		platforms, ok := fields[name]
		require.True(t, ok, "%s is not a field of device-metrics-exporter's metric list", name)
		for _, got := range points {
			for k := range got.All() {
				require.True(t, known[k] || seriesLabels[k], "%s: label %s is not one the real exporter puts on its series", name, k)
			}
			series, _ := got.Get(amdLabelCardSeries)
			p := amdPlatform(series.Str())
			require.NotEmpty(t, p, "%s: card_series %q names no Instinct platform", name, series.Str())
			require.True(t, slices.Contains(platforms, p) || beyondList[name] == p, "%s on an %s GPU (%s): the metric list has it on %v only", name, p, series.Str(), platforms)
			platformsSeen[p] = true
		}
	}
	// The stand-in's node has both platforms, so the socket power is
	// checked both ways: current on MI300X, average on MI2xx.
	require.Equal(t, map[string]bool{"MI2xx": true, "MI3xx": true}, platformsSeen)
	require.NotEmpty(t, ours["gpu_package_power"])
	require.NotEmpty(t, ours["gpu_average_package_power"])
	require.NotEmpty(t, ours["gpu_ecc_uncorrect_umc"], "ECC per block as gpu_ecc_uncorrect_<block>")

	// The labels that name a GPU, in the exporter's spelling and case,
	// the partition modes as the real SPX and CPX lines spell them.
	byUUID := map[string]pcommon.Map{}
	for _, got := range ours["gpu_gfx_activity"] {
		if v, ok := got.Get(amdLabelGPUUUID); ok {
			byUUID[v.Str()] = got
		}
	}
	realByMode := map[string]map[string]string{}
	for _, w := range served["gpu_gfx_activity"] {
		realByMode[w[amdLabelComputePartition]] = w
	}
	require.Contains(t, realByMode, "spx")
	require.Contains(t, realByMode, "cpx")
	for uuid, mode := range map[string]string{amdSPX: "spx", amdCPX0: "cpx"} {
		got, ok := byUUID[uuid]
		require.True(t, ok, "gpu_gfx_activity of %s", uuid)
		want := realByMode[mode]
		for _, l := range []string{amdLabelGPUID, amdLabelGPUUUID, amdLabelPartitionID, amdLabelComputePartition, amdLabelMemoryPartition, amdLabelHostname, amdLabelCardSeries, amdLabelDriverVersion} {
			_, ok := got.Get(l)
			require.True(t, ok, "gpu_gfx_activity of %s carries %s", uuid, l)
		}
		for _, l := range []string{amdLabelComputePartition, amdLabelMemoryPartition} {
			v, _ := got.Get(l)
			require.Equal(t, want[l], v.Str(), "%s of %s", l, uuid)
		}
	}

	// The real SPX MI300X's UUID, model and driver are the stand-in's.
	spx, realSPX := byUUID[amdSPX], realByMode["spx"]
	require.Equal(t, amdSPX, realSPX[amdLabelGPUUUID])
	for _, l := range []string{amdLabelCardSeries, amdLabelCardVendor, amdLabelDriverVersion} {
		v, _ := spx.Get(l)
		require.Equal(t, realSPX[l], v.Str(), l)
	}
}
