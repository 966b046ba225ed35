package gpuanalyzerprocessor

import "go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

func metricdatatestIgnoreTime() []metricdatatest.Option {
	return []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
}
