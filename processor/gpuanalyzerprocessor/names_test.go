package gpuanalyzerprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

// TestReadsReceiverMetrics finds, by feeding every metric of the table to
// read, the metrics the analyzer takes, and requires each to be declared in
// the dcgm receiver's metadata.yaml (or to be the training framework's step
// time). A metric renamed there disappears from the table and breaks the
// build; one moved elsewhere fails here.
func TestReadsReceiverMetrics(t *testing.T) {
	p := &analyzerProcessor{}
	var read []string
	for _, m := range metricnames.Metrics {
		dp := pmetric.NewNumberDataPoint()
		dp.SetTimestamp(1)
		dp.SetDoubleValue(0.5)
		// The attribute values the analyzer selects.
		a := dp.Attributes()
		a.PutStr(metricnames.AttrHWGPUTask, metricnames.AttrHWGPUTaskGeneral)
		a.PutStr(metricnames.AttrNvidiaGPUPipe, metricnames.AttrNvidiaGPUPipeTensor)
		a.PutStr(metricnames.AttrNetworkIODirection, metricnames.AttrNetworkIODirectionReceive)
		a.PutStr(metricnames.AttrNvidiaGPUClock, metricnames.AttrNvidiaGPUClockSM)
		a.PutStr(metricnames.AttrErrorType, metricnames.AttrErrorTypeUncorrected)
		a.PutInt(metricnames.AttrNvidiaGPUXID, 79)
		a.PutStr(metricnames.AttrAmdGPUViolationReason, metricnames.AttrAmdGPUViolationReasonHbmThermal)
		a.PutStr(metricnames.AttrAmdGPUCperSeverity, metricnames.AttrAmdGPUCperSeverityFatal)
		var s analysis.Sample
		var fb deferred
		p.read(m.Name, dp, &s, &fb)
		if s.Time == 0 && !fb.hasUsed && !fb.hasLimit && !fb.hasPower && !fb.hasPowerLimit && !fb.hasMemCopy && len(s.XIDs) == 0 {
			continue
		}
		read = append(read, m.Name)
		if m.Name == metricnames.TrainingStepComputeDuration {
			continue
		}
		require.Equal(t, "receiver/dcgmreceiver", m.Origin, "the analyzer reads %s, which the dcgm receiver's metadata.yaml does not declare", m.Name)
	}
	t.Logf("the analyzer reads %q", read)
	require.Len(t, read, 30, "every input of the analyzer is found")
}
