# otelcol-gpu. `make run` builds the distribution and runs it on a simulated
# GPU fleet; `make test` runs every test CI runs.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 1
# go-nvml's cgo wrappers call deprecated NVML functions on purpose (to
# support older drivers); keep their warnings out of the build log.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

BUILDER := $(CURDIR)/.tools/builder
BUILDER_VERSION := v0.161.0
BIN := bin/otelcol-gpu
CONFIG ?= examples/local/config.yaml
GO_SOURCES := $(shell find . -name '*.go' -not -path './_build/*' -not -path './.tools/*') go.mod go.sum builder-config.yaml

.PHONY: all build run test unit e2e generate lint bench clean

all: build

$(BUILDER):
	GOBIN=$(CURDIR)/.tools $(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION)

build: $(BIN)

# The builder's own `go mod tidy` needs -mod=mod -e: a test-only dependency of
# one contrib module is not served by the module proxy.
$(BIN): $(BUILDER) $(GO_SOURCES)
	GOFLAGS="-mod=mod -e" $(BUILDER) --config builder-config.yaml --skip-compilation
	cd _build && $(GO) build -trimpath -o ../$(BIN) .
	@echo "built $(BIN)"

run: build
	./$(BIN) --config $(CONFIG)

# Unit, integration (stand-in DCGM, NVML mock, kubelet gRPC) and the
# distribution's end-to-end test.
test: build
	$(GO) test -race -count=1 ./...
	OTELCOL_GPU_BIN=$(CURDIR)/$(BIN) $(GO) test -tags e2e -count=1 -run 'E2E' -v ./e2e/...

COMPONENTS := receiver/dcgmreceiver processor/gpuanalyzerprocessor

generate:
	for c in $(COMPONENTS); do (cd $$c && $(GO) tool mdatagen metadata.yaml) || exit 1; done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./receiver/dcgmreceiver/... ./processor/gpuanalyzerprocessor/...

clean:
	rm -rf bin _build
