package amdsmibackend_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// abiRead is what one stand-in answered: the first scrape, and what was
// logged over three.
type abiRead struct {
	first map[string]gpu.Sample
	logs  *observer.ObservedLogs
}

// TestABIs reads the same node through the stand-in built against AMD SMI
// 25.x's header and through the one built against 26.x's, whose
// amdsmi_version_t, amdsmi_power_info_t and amdsmi_violation_status_t are
// laid out differently and whose AMDSMI_STATUS_MORE_DATA is another number:
// every figure, each partition's activity and the XGMI links included (at
// 25.x's strides, 232 and 56 bytes, and 26.2's, 504 and 48), must be the
// same, with nothing said about a layout.
func TestABIs(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.ECC = []amdsmistandin.ECC{{GPU: 0, Block: "umc", Corrected: 5, Uncorr: 1, D: 2}, {GPU: 2, Block: "gfx", Corrected: 3}}
	st.BadPages = []amdsmistandin.BadPage{{GPU: 0, Status: 0}, {GPU: 0, Status: 1}}
	// Seven records, four pages of two: paging goes on on each ABI's own
	// MORE_DATA, 57 on 25.x as released, 39 on 26.x.
	st.CPERPage = 2
	for i := range 7 {
		st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: i % 3, AFIDs: []uint64{uint64(20 + i)}})
	}
	// The power cap's own call fails on the first GPU: its cap is then
	// the power information's power_limit, at 28 in 25.x and 40 in 26.x.
	st.Fails = []amdsmistandin.Fail{{Call: "amdsmi_get_power_cap_info", GPU: 0, Status: 7}}

	reads := map[int]abiRead{}
	for _, abi := range amdsmistandin.ABIs {
		t.Run(fmt.Sprintf("AMD SMI %d.x", abi), func(t *testing.T) {
			st := st
			if abi == 25 {
				st.MoreData = amdsmistandin.MoreData25 // as a released 6.4 library
			}
			withState(t, st)
			core, logs := observer.New(zap.InfoLevel)
			b := connect(t, amdsmibackend.Options{Library: libs[abi], Logger: zap.New(core)})
			r := abiRead{first: collect(t, b), logs: logs}
			for range 2 {
				collect(t, b)
			}
			reads[abi] = r

			require.Len(t, r.first, 10)
			spx := r.first["ccff74a1-0000-1000-80e0-c6d49f5b0d86"]
			require.Equal(t, 140.0+87*56/10, value(t, spx, f.PowerUsage), "current socket power")
			require.Equal(t, 750.0, amdValue(t, spx, gpu.AMDPowerCap), "the power limit, from where this ABI puts it")
			require.Equal(t, 560.0, amdValue(t, r.first["c3ff740c-0000-1000-8021-7a1b2c3d4e5f"], gpu.AMDPowerCap), "from amdsmi_get_power_cap_info")
			require.Equal(t, 20.0, amdValue(t, spx, gpu.AMDViolationPower))
			require.Equal(t, 0.0, amdValue(t, spx, gpu.AMDViolationHBMThermal))
			require.Equal(t, 1.0, value(t, spx, f.ECCDBEVolTotal))
			require.Len(t, spx.AMD.CPER, 7, "seven records over four pages")
			for i, rec := range spx.AMD.CPER {
				require.Equal(t, []uint64{uint64(20 + i)}, rec.AFIDs)
			}
		})
	}
	r25, r26 := reads[25], reads[26]
	require.NotNil(t, r25.first)
	require.NotNil(t, r26.first)

	for id, s25 := range r25.first {
		s26, ok := r26.first[id]
		require.True(t, ok, "%s read on 25.x and not on 26.x", id)
		require.Equal(t, *s25.Device, *s26.Device)
		partition := s25.Device.AMD.ParentUUID != ""
		for _, field := range f.All() {
			v25, ok25 := s25.Values.Get(field)
			v26, ok26 := s26.Values.Get(field)
			if field == f.GPUUtil && partition {
				require.True(t, ok25, "%s: each reads its partition's activity", id)
			}
			require.Equal(t, ok25, ok26, "%s: %v read on one ABI only", id, field)
			require.Equal(t, v25, v26, "%s: %v", id, field)
		}
		for field := range gpu.AMDFieldCount {
			v25, ok25 := s25.AMD.Get(field)
			v26, ok26 := s26.AMD.Get(field)
			require.Equal(t, ok25, ok26, "%s: AMD field %d read on one ABI only", id, field)
			require.Equal(t, v25, v26, "%s: AMD field %d", id, field)
		}
		require.Equal(t, s25.AMD.ECC, s26.AMD.ECC, id)
		require.Equal(t, s25.AMD.CPER, s26.AMD.CPER, id)
		require.Equal(t, s25.AMD.Links, s26.AMD.Links, id)
	}
	require.Len(t, r25.first["ccff74a1-0000-1000-80e0-c6d49f5b0d86"].AMD.Links, 7, "XGMI links read")

	for _, call := range []string{"amdsmi_get_link_metrics", "amdsmi_get_gpu_metrics_info"} {
		require.Empty(t, r25.logs.FilterField(zap.String("call", call)).All(), "25.x reads %s", call)
		require.Empty(t, r26.logs.FilterField(zap.String("call", call)).All(), "26.2 reads %s", call)
	}
}

// TestMoreDataIsPerABI: 57 is MORE_DATA in a released 25.x library only;
// from a 26.x library it is no status of the call: a failed call, said
// once, whose page is not taken, rather than a page that another follows.
func TestMoreDataIsPerABI(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.CPERPage = 2
	st.MoreData = amdsmistandin.MoreData25
	for i := range 5 {
		st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 1, AFIDs: []uint64{uint64(20 + i)}})
	}
	withState(t, st)
	core, logs := observer.New(zap.WarnLevel)
	b := connect(t, amdsmibackend.Options{Library: libs[26], Logger: zap.New(core)})
	for range 2 {
		require.Empty(t, collect(t, b)["ccff74a1-0000-1000-80e0-c6d49f5b0d86"].AMD.CPER)
	}
	said := logs.FilterField(zap.String("call", "amdsmi_get_gpu_cper_entries")).All()
	require.Len(t, said, 1)
	require.Contains(t, said[0].ContextMap()["status"], "57")
}
