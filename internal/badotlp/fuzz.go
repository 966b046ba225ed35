package badotlp

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// FuzzUnchanged fuzzes a component that reads metrics without changing
// them: seeded with Cases(now), any batch that decodes as OTLP goes to
// consume, which must not fail or alter it; after runs once per batch (the
// component's own evaluation, which must not panic).
func FuzzUnchanged(f *testing.F, now time.Time, consume func(context.Context, pmetric.Metrics) error, after func(context.Context)) {
	f.Helper()
	m := pmetric.ProtoMarshaler{}
	for _, md := range Cases(now) {
		b, err := m.MarshalMetrics(md)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(data)
		if err != nil {
			return
		}
		in, _ := m.MarshalMetrics(md)
		if err := consume(ctx, md); err != nil {
			t.Fatalf("consume: %v", err)
		}
		if got, _ := m.MarshalMetrics(md); !bytes.Equal(in, got) {
			t.Fatal("consume changed the batch")
		}
		after(ctx)
	})
}
