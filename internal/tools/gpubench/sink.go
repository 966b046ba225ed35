package main

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the OTLP exporter compresses by default

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// sink is an OTLP gRPC metrics endpoint that counts what arrives and
// notes when the first firing GPUFaulted alert does.
type sink struct {
	pmetricotlp.UnimplementedGRPCServer
	addr   string
	srv    *grpc.Server
	points atomic.Int64

	mu        sync.Mutex
	firstData time.Time // the earliest data point timestamp since reset
	alertAt   time.Time // wall time the first firing alert arrived
	alertData time.Time // and its data timestamp
}

func startSink() (*sink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{addr: l.Addr().String(), srv: grpc.NewServer(grpc.MaxRecvMsgSize(256 << 20))}
	pmetricotlp.RegisterGRPCServer(s.srv, s)
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

func (s *sink) stop() { s.srv.Stop() }

func (s *sink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.firstData, s.alertAt, s.alertData = time.Time{}, time.Time{}, time.Time{}
}

// alert returns when the first firing alert arrived, relative to the
// first data the sink saw.
func (s *sink) alert() (first, at, data time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstData, s.alertAt, s.alertData
}

func (s *sink) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	now := time.Now()
	md := req.Metrics()
	s.points.Add(int64(md.DataPointCount()))
	s.mu.Lock()
	defer s.mu.Unlock()
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() == metricnames.HWPower && m.Gauge().DataPoints().Len() > 0 {
					if t := m.Gauge().DataPoints().At(0).Timestamp().AsTime(); s.firstData.IsZero() || t.Before(s.firstData) {
						s.firstData = t
					}
				}
				if m.Name() != metricnames.OTelGPUAlerts || !s.alertAt.IsZero() {
					continue
				}
				dps := m.Gauge().DataPoints()
				for l := 0; l < dps.Len(); l++ {
					a := dps.At(l).Attributes()
					name, _ := a.Get(metricnames.AttrAlertname)
					state, _ := a.Get(metricnames.AttrAlertstate)
					if name.Str() == "GPUFaulted" && state.Str() == "firing" {
						s.alertAt, s.alertData = now, dps.At(l).Timestamp().AsTime()
					}
				}
			}
		}
	}
	return pmetricotlp.NewExportResponse(), nil
}
