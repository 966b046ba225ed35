package gpuremediationconnector

import (
	"bufio"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// cperKey is a CPER record count's severity and AMD Field ID.
type cperKey struct {
	severity string
	afid     int64
}

// amdReport is one AMD GPU's metrics in one batch, as the dcgm receiver's
// amdsmi backend reports them: cumulative ECC counts by error.type, CPER
// record counts, retired pages and the driver's threshold (0: not
// reported).
type amdReport struct {
	node, gpu, pod     string
	ecc                map[string]int64
	cper               map[cperKey]int64
	badPages, badLimit int64
}

func (f *fixture) feedAMD(reports ...amdReport) []offline.Decision {
	f.t.Helper()
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(f.now)
	for _, g := range reports {
		rm := md.ResourceMetrics().AppendEmpty()
		a := rm.Resource().Attributes()
		a.PutStr(metricnames.AttrK8sNodeName, g.node)
		a.PutStr(metricnames.AttrHWID, g.gpu)
		a.PutStr(metricnames.AttrHWVendor, vendorAMD)
		a.PutStr(metricnames.AttrHWModel, "AMD Instinct MI300X")
		if g.pod != "" {
			a.PutStr(metricnames.AttrK8sPodName, g.pod)
			a.PutStr(metricnames.AttrK8sNamespaceName, f.ns)
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		start, ok := f.starts[g.gpu]
		if !ok {
			start = ts
			f.starts[g.gpu] = ts
		}
		sum := func(name string) pmetric.NumberDataPointSlice {
			m := ms.AppendEmpty()
			m.SetName(name)
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			return s.DataPoints()
		}
		point := func(dps pmetric.NumberDataPointSlice, v int64) pmetric.NumberDataPoint {
			dp := dps.AppendEmpty()
			dp.SetStartTimestamp(start)
			dp.SetTimestamp(ts)
			dp.SetIntValue(v)
			return dp
		}
		ecc := sum(metricECC)
		for _, typ := range []string{eccCorrectedV, eccUncorrectedV, eccDeferredV} {
			point(ecc, g.ecc[typ]).Attributes().PutStr(attrErrorType, typ)
		}
		if len(g.cper) > 0 {
			cper := sum(metricCPER)
			for k, n := range g.cper {
				dp := point(cper, n)
				dp.Attributes().PutStr(attrCPERSeverity, k.severity)
				dp.Attributes().PutInt(attrAFID, k.afid)
			}
		}
		if g.badLimit > 0 {
			gauge := func(name string, v int64) pmetric.NumberDataPoint {
				m := ms.AppendEmpty()
				m.SetName(name)
				dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
				dp.SetTimestamp(ts)
				dp.SetIntValue(v)
				return dp
			}
			gauge(metricBadPages, g.badPages).Attributes().PutStr(metricnames.AttrAmdGPUBadPageStatus, metricnames.AttrAmdGPUBadPageStatusReserved)
			gauge(metricBadPageLimit, g.badLimit)
		}
	}
	require.NoError(f.t, f.r.consume(context.Background(), md))
	f.r.tick(context.Background(), f.now)
	return append([]offline.Decision(nil), f.r.out...)
}

// amdgpuLog is what a kernel log says of each GPU, by PCI address.
type amdgpuLog struct {
	// uncorrectable counts the driver's "uncorrectable hardware
	// error(...) detected!" lines: what the GPU's RAS uncorrectable
	// count, and so hw.errors{uncorrected}, adds up.
	uncorrectable map[string]int64
	// hardwareError holds the GPUs that logged "[Hardware Error]:"
	// lines (Accelerator Check Architecture banks), each with the RAS
	// event IDs they were logged under.
	hardwareError map[string][]string
}

// readAMDGPULog reads a kernel log's amdgpu lines. The driver prefixes a
// RAS line with its event's ID in braces (amdgpu_ras_event_log_print),
// which GPUs of one XGMI hive share for one event.
func readAMDGPULog(t *testing.T, path string) amdgpuLog {
	t.Helper()
	uncorrectable := regexp.MustCompile(`amdgpu ([0-9a-f:.]+): \{\d+\}uncorrectable hardware error\((\w+)\) detected!`)
	hwErr := regexp.MustCompile(`amdgpu ([0-9a-f:.]+): \{(\d+)\}\[Hardware Error\]: Accelerator Check Architecture events logged`)
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	out := amdgpuLog{uncorrectable: map[string]int64{}, hardwareError: map[string][]string{}}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if m := uncorrectable.FindStringSubmatch(sc.Text()); m != nil {
			out.uncorrectable[m[1]]++
		}
		if m := hwErr.FindStringSubmatch(sc.Text()); m != nil {
			out.hardwareError[m[1]] = append(out.hardwareError[m[1]], m[2])
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// amdID is a GPU's hw.id made of its PCI address: a taint key may hold
// no colon.
func amdID(bdf string) string { return "GPU-" + strings.NewReplacer(":", "-").Replace(bdf) }

// cperByGPU reads `amd-smi ras --cper --folder` output: per GPU index,
// the records by severity and each AFID the record lists.
func cperByGPU(t *testing.T, path string) map[int]map[cperKey]int64 {
	t.Helper()
	severities := map[string]string{"FATAL": cperFatalV, "NONFATAL-UNCORRECTED": cperUncorrectedV}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[int]map[cperKey]int64{}
	for _, l := range strings.Split(string(data), "\n") {
		fields := strings.Fields(l)
		if len(fields) < 6 || strings.HasPrefix(l, "#") || fields[0] == "timestamp" {
			continue
		}
		gpu, err := strconv.Atoi(fields[2])
		require.NoError(t, err, l)
		sev, ok := severities[fields[3]]
		if !ok {
			continue
		}
		if out[gpu] == nil {
			out[gpu] = map[cperKey]int64{}
		}
		for _, a := range fields[5:] {
			afid, err := strconv.ParseInt(a, 10, 64)
			require.NoError(t, err, l)
			out[gpu][cperKey{sev, afid}]++
		}
	}
	return out
}

// An MI300X node's kernel log in the amdgpu driver's format (written by
// this project; testdata/README.md says from what): the GPU that reports
// an uncorrectable error gets AMD's ladder for it (GPUHealthy condition,
// taint, cordon, drain) and then a reboot request, never a GPU reset
// request, though the defaults reset NVIDIA GPUs for some faults: the
// other GPUs of the hive logged hardware errors in the same instant.
// Deferred and corrected errors on the other GPUs are recorded and touch
// no node.
func TestAMDUncorrectableFromKernelLogDrainsAndAsksReboot(t *testing.T) {
	kernel := readAMDGPULog(t, "testdata/amd/dmesg-mi300x-athub.txt")
	counts := kernel.uncorrectable
	require.Equal(t, map[string]int64{"0000:1c:00.0": 1}, counts)
	require.Equal(t, map[string][]string{"0000:42:00.0": {"2"}, "0000:55:00.0": {"2"}}, kernel.hardwareError,
		"the two other GPUs of the hive logged banks under the same RAS event")

	f := newFixture(t)
	node, other := f.node("mi300x", nil), f.node("mi300x-b", nil)
	f.pod("trainer-0", node, nil, true)
	f.pod("trainer-1", node, nil, true)
	f.remediator(testConfig(), nil)
	bdfs := []string{"0000:1c:00.0", "0000:42:00.0", "0000:55:00.0"}
	reports := func(corrected, deferred int64) []amdReport {
		var out []amdReport
		for i, bdf := range bdfs {
			out = append(out, amdReport{node: node, gpu: amdID(bdf), pod: "trainer-" + strconv.Itoa(i%2),
				ecc: map[string]int64{eccUncorrectedV: 0, eccCorrectedV: 0, eccDeferredV: 0}})
		}
		out = append(out, amdReport{node: other, gpu: "GPU-other", ecc: map[string]int64{eccCorrectedV: corrected, eccDeferredV: deferred}})
		return out
	}
	f.feedAMD(reports(0, 0)...)
	f.step(5 * time.Second)
	rs := reports(9, 1)
	for i := range rs {
		if i < len(bdfs) {
			rs[i].ecc[eccUncorrectedV] = counts[bdfs[i]]
		}
	}
	ds := f.feedAMD(rs...)
	require.ElementsMatch(t, []string{"ecc_uncorrectable:drain:policy", "ecc_correctable:none:non_critical", "ecc_deferred:none:non_critical"}, reasons(ds))

	bad := amdID("0000:1c:00.0")
	n := f.getNode(node)
	c := condition(n)
	require.NotNil(t, c)
	require.Equal(t, "False", string(c.Status))
	require.Equal(t, "UncorrectableECC", c.Reason)
	require.True(t, hasTaint(n, bad))
	require.True(t, n.Spec.Unschedulable)
	require.False(t, f.podExists("trainer-0"))
	require.False(t, f.podExists("trainer-1"))
	require.NotEmpty(t, n.Annotations[kube.RebootRequestAnnotation], "a reboot request")
	require.NotContains(t, n.Annotations, nodeagent.ResetRequest, "no GPU reset on an XGMI hive")
	o := f.getNode(other)
	require.False(t, o.Spec.Unschedulable, "corrected and deferred errors touch no node")
	require.Empty(t, ownTaints(o))
	require.Nil(t, condition(o))
	require.Empty(t, f.events(other))
}

// AMD's own documented `amd-smi ras --cper` output: fatal records with
// AFID 30 on GPUs 0 and 1, each on its node. The shipped AFID table
// drains both nodes and asks for their reboot; dry run (the default)
// writes nothing and counts what it would have done.
func TestAMDFatalCPERFromAMDSMIOutput(t *testing.T) {
	records := cperByGPU(t, "testdata/amd/amd-smi-ras-cper.txt")
	require.Equal(t, map[int]map[cperKey]int64{0: {{cperFatalV, 30}: 1}, 1: {{cperFatalV, 30}: 1}}, records)

	for _, dry := range []bool{false, true} {
		t.Run("dry_run="+strconv.FormatBool(dry), func(t *testing.T) {
			f := newFixture(t)
			nodes := []string{f.node("a", nil), f.node("b", nil)}
			cfg := testConfig()
			cfg.DryRun = dry
			f.remediator(cfg, nil)
			var before, after []amdReport
			for gpu, node := range nodes {
				id := gpuID(node, gpu)
				before = append(before, amdReport{node: node, gpu: id, cper: map[cperKey]int64{{cperFatalV, 30}: 0}})
				after = append(after, amdReport{node: node, gpu: id, cper: records[gpu]})
			}
			f.feedAMD(before...)
			f.step(5 * time.Second)
			ds := f.feedAMD(after...)
			want := "cper_fatal_afid_30:drain:policy"
			require.Equal(t, []string{want, want}, reasons(ds))
			for _, node := range nodes {
				n := f.getNode(node)
				if dry {
					require.Equal(t, int64(2), f.counter(stepCordon, reasonDryRun), "each cordon not written, counted")
					require.False(t, n.Spec.Unschedulable)
					require.Nil(t, condition(n))
					require.Empty(t, n.Annotations[kube.RebootRequestAnnotation])
					continue
				}
				require.True(t, n.Spec.Unschedulable)
				require.Equal(t, "FatalCPERAFID30", condition(n).Reason)
				require.NotEmpty(t, n.Annotations[kube.RebootRequestAnnotation])
				require.NotContains(t, n.Annotations, nodeagent.ResetRequest)
			}
		})
	}
}

// Pages retired up to the driver's threshold: the node is drained and
// held for a person to replace the GPU; no reboot is asked for, as none
// repairs it, and nothing automatic happens to the GPU again.
func TestAMDBadPagesAtThresholdHeldForReplacement(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	f.feedAMD(amdReport{node: node, gpu: gpu, pod: "job", badPages: 127, badLimit: 128})
	f.step(5 * time.Second)
	ds := f.feedAMD(amdReport{node: node, gpu: gpu, pod: "job", badPages: 128, badLimit: 128})
	require.Equal(t, []string{"bad_page_threshold:replace:policy", "bad_page_threshold:replace:needs_person"}, reasons(ds))
	n := f.getNode(node)
	require.True(t, n.Spec.Unschedulable)
	require.True(t, hasTaint(n, gpu))
	require.False(t, f.podExists("job"))
	require.Empty(t, n.Annotations[kube.RebootRequestAnnotation], "no reboot: it repairs nothing")
	require.NotContains(t, n.Annotations, nodeagent.ResetRequest)
	c := condition(n)
	require.Equal(t, "NeedsPerson", c.Reason)
	require.Contains(t, c.Message, "held for replacement")

	// A fatal record now changes nothing: the GPU waits for a person.
	f.step(time.Minute)
	ds = f.feedAMD(amdReport{node: node, gpu: gpu, badPages: 128, badLimit: 128, cper: map[cperKey]int64{{cperFatalV, 30}: 1}})
	require.Equal(t, []string{"cper_fatal_afid_30:drain:needs_person"}, reasons(ds))
}

// The AFID table is configuration: the shipped afids.yaml, overridable
// per AFID; a record whose AFID is not in it goes by its severity; a bad
// key or action is an error naming it.
func TestAMDAFIDTable(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Policy.AFID = map[string]string{"25": "replace", "4242": "none"}
	p, err := cfg.policy()
	require.NoError(t, err)
	decide := func(kind policy.Kind, afid int) string {
		inc, _ := p.Observe("GPU-x", policy.Fault{Kind: kind, Code: afid}, time.Unix(int64(afid)*1000+int64(kind), 0))
		return p.Decide(inc).Remediation.String()
	}
	require.Equal(t, "drain", decide(policy.CPERFatal, 30), "shipped")
	require.Equal(t, "replace", decide(policy.CPERFatal, 25), "overridden")
	require.Equal(t, "none", decide(policy.CPERFatal, 4242), "added")
	require.Equal(t, "drain", decide(policy.CPERFatal, 77), "unlisted: by severity")
	require.Equal(t, "drain", decide(policy.CPERFatal, 0), "no AFID: by severity")
	require.Equal(t, "none", decide(policy.CPERUncorrected, 77))
	require.Equal(t, "drain", decide(policy.CPERUncorrected, 30), "listed: the table decides")

	shipped, err := shippedAFIDs()
	require.NoError(t, err)
	require.Len(t, shipped, 22, "AFIDs 1-12, 14, 16, 18-21, 25-27, 30")
	for afid, want := range map[int]string{
		18: "replace", // XGMI link, fatal: a person re-torques the OAMs
		19: "replace", // bad page retirement threshold
		20: "replace", // HBM on-die ECC, fatal
		27: "drain",   // watchdog timeout: reboot and validate
		4:  "drain",   // HBM training failed at boot
	} {
		require.Equal(t, want, shipped[strconv.Itoa(afid)], "AFID %d", afid)
		require.Equal(t, want, decide(policy.CPERFatal, afid), "AFID %d", afid)
	}
	for _, afid := range []int{13, 15, 17, 22, 23, 24, 28, 29, 31, 32, 33, 34} {
		require.NotContains(t, shipped, strconv.Itoa(afid), "AFID %d goes by its severity", afid)
	}
	require.Equal(t, "none", decide(policy.CPERUncorrected, 22), "HBM on-die ECC, non-fatal: by severity")

	cfg.Policy.AFID = map[string]string{"x1": "drain", "31": "reboot"}
	err = cfg.Validate()
	require.ErrorContains(t, err, "policy::afid::x1: an AFID must be a positive number")
	require.ErrorContains(t, err, `policy::afid::31: unknown action "reboot"; want none, restart_app, reset_gpu, drain or replace`)
}

// After the reboot an uncorrectable error asked for, an AMD GPU whose ECC
// keeps correcting errors passes its health check and its node is given
// back (corrected errors are the ECC working); one that defers a new
// error does not, and a person is asked.
func TestAMDRebootVerifiedDespiteCorrectedErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deferred int64 // during the check
		want     string
	}{
		{"corrected only", 0, "ecc_uncorrectable:uncordon:healthy"},
		{"a deferred error", 1, "ecc_uncorrectable:drain:needs_person"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			node := f.node("n", nil)
			f.setBootID(node, "boot-1")
			cfg := testConfig()
			cfg.Recovery.HealthyFor = time.Minute
			f.remediator(cfg, nil)
			gpu := gpuID(node, 0)
			report := func(uncorrected, corrected, deferred int64) amdReport {
				return amdReport{node: node, gpu: gpu, ecc: map[string]int64{eccUncorrectedV: uncorrected, eccCorrectedV: corrected, eccDeferredV: deferred}}
			}
			f.feedAMD(report(0, 0, 0))
			f.step(time.Second)
			require.Equal(t, []string{"ecc_uncorrectable:drain:policy"}, reasons(f.feedAMD(report(1, 0, 0))))
			require.Equal(t, "awaiting_reboot", f.r.plans[0].state())
			f.setBootID(node, "boot-2")
			f.step(time.Second)
			require.Equal(t, []string{"ecc_uncorrectable:drain:rebooted"}, reasons(f.feedAMD(report(1, 0, 0))))
			f.step(20 * time.Second)
			got := reasons(f.feedAMD(report(1, 40, tc.deferred)))
			f.step(41 * time.Second)
			got = append(got, reasons(f.feedAMD(report(1, 80, tc.deferred)))...)
			require.Contains(t, got, tc.want)
			n := f.getNode(node)
			require.Equal(t, tc.deferred != 0, n.Spec.Unschedulable)
		})
	}
}
