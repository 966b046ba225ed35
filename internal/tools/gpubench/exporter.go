package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// fakeExporter serves a dcgm-exporter /metrics page for n GPUs with the
// fields the simulated backend reports, as dcgm-exporter names and labels
// them, with values that change at every scrape.
type fakeExporter struct {
	addr    string
	gpus    int
	scrapes atomic.Int64
}

func startFakeExporter(gpus int) *fakeExporter {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	e := &fakeExporter{addr: l.Addr().String(), gpus: gpus}
	go func() { _ = http.Serve(l, e) }()
	return e
}

func (e *fakeExporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := e.scrapes.Add(1)
	var b strings.Builder
	for _, f := range dcgmfield.All() {
		name := f.String()
		kind := "gauge"
		switch f {
		case dcgmfield.TotalEnergy, dcgmfield.ECCSBEVolTotal, dcgmfield.ECCDBEVolTotal, dcgmfield.PCIeReplayCounter,
			dcgmfield.PowerViolation, dcgmfield.ThermalViolation:
			kind = "counter"
		}
		fmt.Fprintf(&b, "# HELP %s %s.\n# TYPE %s %s\n", name, name, name, kind)
		for g := range e.gpus {
			fmt.Fprintf(&b, `%s{gpu="%d",UUID="GPU-%08x-0000-4000-8000-%012x",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",Hostname="node-%d",DCGM_FI_DRIVER_VERSION="550.90.07",pci_bus_id="00000000:%02X:00.0"} %d`+"\n",
				name, g%8, g, g, g%8, g/8, 0x18+g%8, (int64(g)*7+n*13+int64(f))%100)
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}
