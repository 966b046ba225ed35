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
GO_SOURCES := $(shell find . \( -name '*.go' -o -name '*.h' \) -not -path './_build/*' -not -path './_build-agent/*' -not -path './_build-demo/*' -not -path './_build-release-*' -not -path './.tools/*') go.mod go.sum builder-config.yaml

.PHONY: all build run test e2e generate lint bench bench-go clean kube-apiserver kube-controller-manager fuzz

all: build

$(BUILDER):
	GOBIN=$(CURDIR)/.tools $(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION)

# golangci-lint for `make lint`, pinned like the builder; the version in its
# file name reinstalls it when GOLANGCI_LINT_VERSION changes.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CURDIR)/.tools/golangci-lint-$(GOLANGCI_LINT_VERSION)
# Its analysers in parallel (0: one per CPU); 1 on a shared machine.
LINT_JOBS ?= 0
$(GOLANGCI_LINT):
	GOBIN=$(CURDIR)/.tools $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(CURDIR)/.tools/golangci-lint $@

build: $(BIN)

# The builder's own `go mod tidy` needs -mod=mod -e: a test-only dependency of
# one contrib module is not served by the module proxy.
$(BIN): $(BUILDER) $(GO_SOURCES)
	GOFLAGS="-mod=mod -e" $(BUILDER) --config builder-config.yaml --skip-compilation
	cd _build && $(GO) build -trimpath -o ../$(BIN) .
	@echo "built $(BIN)"

# otelcol-gpu-demo (builder-config-demo.yaml): only the components of
# make run's own configuration, so that a first make run compiles a fraction
# of the distribution. Any other CONFIG runs the full distribution.
DEMO_BIN := bin/otelcol-gpu-demo
.PHONY: demo
demo: $(DEMO_BIN)
$(DEMO_BIN): $(BUILDER) $(GO_SOURCES) builder-config-demo.yaml
	GOFLAGS="-mod=mod -e" $(BUILDER) --config builder-config-demo.yaml --skip-compilation
	cd _build-demo && $(GO) build -trimpath -o ../$(DEMO_BIN) .
	@echo "built $(DEMO_BIN)"

ifeq ($(CONFIG),examples/local/config.yaml)
RUN_BIN ?= $(DEMO_BIN)
else
RUN_BIN ?= $(BIN)
endif

# The config's "# banner:" comment first: where the metrics are and what
# the log says.
run: $(RUN_BIN)
	@sed -n 's/^# banner: //p' $(CONFIG)
	@$(RUN_BIN) --config $(CONFIG)

# make run's Slurm mode: the simulated fleet as a Slurm cluster's jobs
# (examples/slurm/config.yaml), on the full build: its drained node is
# gpu_remediation's, which the demo build leaves out (it pulls client-go,
# and the demo build must stay quick for make run).
# SLURM_RUN_BIN: another build with those components (the e2e test's).
SLURM_RUN_BIN ?= $(BIN)
.PHONY: run-slurm
run-slurm: $(SLURM_RUN_BIN)
	@sed -n 's/^# banner: //p' examples/slurm/config.yaml
	@$(SLURM_RUN_BIN) --config examples/slurm/config.yaml

# otelcol-gpu-agent: the lean node agent (builder-config-agent.yaml), built
# like the full distribution in its own _build-agent directory.
AGENT_BIN := bin/otelcol-gpu-agent
.PHONY: build-agent
build-agent: $(AGENT_BIN)
$(AGENT_BIN): $(BUILDER) $(GO_SOURCES) builder-config-agent.yaml
	GOFLAGS="-mod=mod -e" $(BUILDER) --config builder-config-agent.yaml --skip-compilation
	@# -s -w: no symbol table or DWARF, about 30 % smaller on disk and in an image;
	@# resident memory is the same (stack traces and pprof keep their pclntab).
	cd _build-agent && $(GO) build -trimpath -ldflags "-s -w" -o otelcol-gpu-agent .
	@# A copy, as an image or package installs it: run straight from the
	@# linker's output file, the same bytes kept ~8 MB more of the binary's
	@# pages resident (Linux 6.18, ext4), which would skew its measured RSS.
	install -D -m 0755 _build-agent/otelcol-gpu-agent $(AGENT_BIN)
	@echo "built $(AGENT_BIN)"

# gpurecord, its own small binary: records this machine's GPUs as a trace
# that gpureplay replays.
GPURECORD := bin/gpurecord
.PHONY: gpurecord
gpurecord: $(GPURECORD)
$(GPURECORD): $(GO_SOURCES)
	$(GO) build -trimpath -ldflags "-s -w" -o $(GPURECORD) ./cmd/gpurecord

# Release (docs/release.md). make release: otelcol-gpu and otelcol-gpu-agent
# for linux/amd64 and linux/arm64 (cgo; arm64 through Debian's
# gcc-aarch64-linux-gnu), as .tar.gz, .deb and .rpm (nFPM, with the
# systemd units and default configurations in distributions/otelcol-gpu/),
# a CycloneDX SBOM per binary and checksums, in _dist/. make deb: the .deb of
# the binary make build made, building nothing else (CI installs it:
# e2e/package_test.go). VERSION is the builder's dist.version, with
# +git.<commit> outside the tag v<version>; --version says it.
NFPM_VERSION := v2.45.2
NFPM := $(CURDIR)/.tools/nfpm-$(NFPM_VERSION)
CYCLONEDX_VERSION := v1.10.0
CYCLONEDX := $(CURDIR)/.tools/cyclonedx-gomod-$(CYCLONEDX_VERSION)
$(NFPM):
	GOBIN=$(CURDIR)/.tools $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)
	mv $(CURDIR)/.tools/nfpm $@
$(CYCLONEDX):
	GOBIN=$(CURDIR)/.tools $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_VERSION)
	mv $(CURDIR)/.tools/cyclonedx-gomod $@
DIST_VERSION := $(shell sed -n 's/^  version: //p' builder-config.yaml)
VERSION ?= $(DIST_VERSION)$(if $(shell git describe --exact-match --tags --match 'v$(DIST_VERSION)' 2>/dev/null),,+git.$(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown))
DEB_BIN ?= $(BIN)
DEB_DIR ?= _dist
.PHONY: deb release
# The package's version is the binary's own (what its --version says).
deb: $(NFPM) $(DEB_BIN)
	@v=$$($(DEB_BIN) --version | awk '{print $$NF}') && \
		PKG_VERSION=$$v PKG_FORMATS=deb NFPM=$(NFPM) tools/release/package.sh otelcol-gpu amd64 $(DEB_BIN) $(DEB_DIR)
# The images' writer, without a container engine (internal/tools/ociimage).
OCIIMAGE := bin/ociimage
$(OCIIMAGE): internal/tools/ociimage/go.mod internal/tools/ociimage/go.sum internal/tools/ociimage/main.go
	cd internal/tools/ociimage && $(GO) build -trimpath -o $(CURDIR)/$(OCIIMAGE) .
release: $(BUILDER) $(NFPM) $(CYCLONEDX) $(OCIIMAGE)
	VERSION=$(VERSION) BUILDER=$(BUILDER) NFPM=$(NFPM) CYCLONEDX=$(CYCLONEDX) OCIIMAGE=$(CURDIR)/$(OCIIMAGE) tools/release/release.sh

# The real-GPU check (docs/gpu-check.md): labelled loads on one NVIDIA GPU,
# recorded with gpurecord, replayed through the analyzer, a per-phase table
# of verdict against label; GPU_CHECK_BACKEND=simulated plays the same
# phases on the simulated fleet (CI, through make test). It runs where
# there is no Go toolchain too, from bin/gpurecord and bin/gpureplay built
# beforehand with make gpu-check-build: with Go on the PATH it rebuilds
# them (the build cache makes that quick), without it it uses them as they
# are. Phony, with no file prerequisites: a copied tree's sources are newer
# than its bin/, which would make make try to build without Go.
GPU_CHECK_BACKEND ?= nvml
.PHONY: gpu-check gpu-check-build
gpu-check-build:
	$(GO) build -trimpath -ldflags "-s -w" -o bin/gpurecord ./cmd/gpurecord
	$(GO) build -trimpath -ldflags "-s -w" -o bin/gpureplay ./cmd/gpureplay

gpu-check:
	@if command -v $(GO) >/dev/null; then $(MAKE) --no-print-directory gpu-check-build; \
	elif [ ! -x bin/gpurecord ] || [ ! -x bin/gpureplay ]; then \
		echo "gpu-check: no Go toolchain and no bin/gpurecord, bin/gpureplay: run make gpu-check-build where Go is, then copy bin/"; exit 2; fi
	GPU_CHECK_BACKEND=$(GPU_CHECK_BACKEND) $(if $(GPU_CHECK_STRICT),GPU_CHECK_STRICT=$(GPU_CHECK_STRICT)) \
		$(if $(GPU_CHECK_OUT),GPU_CHECK_OUT=$(GPU_CHECK_OUT)) tools/gpucheck/run.sh

# kube-apiserver for the integration tests, built from the module proxy
# (internal/tools/kubeapiserver is its own module, so k8s.io/kubernetes
# stays out of the product's dependencies). With etcd from Debian's
# etcd-server. 1.35: it serves resource.k8s.io/v1 (DRA's ResourceSlices).
KUBE_APISERVER := bin/kube-apiserver
KUBE_VERSION := v1.35.4
$(KUBE_APISERVER): internal/tools/kubeapiserver/go.mod internal/tools/kubeapiserver/go.sum
	cd internal/tools/kubeapiserver && GOFLAGS=-mod=mod $(GO) build -trimpath \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35" \
		-o $(CURDIR)/$(KUBE_APISERVER) k8s.io/kubernetes/cmd/kube-apiserver

kube-apiserver: $(KUBE_APISERVER)

# kube-controller-manager for the remediation connector's integration tests
# (only its disruption controller runs, so PodDisruptionBudgets gate
# evictions). Its own module, at the API server's release.
KUBE_CONTROLLER_MANAGER := bin/kube-controller-manager
KCM_VERSION := $(KUBE_VERSION)
$(KUBE_CONTROLLER_MANAGER): internal/tools/kubecontrollermanager/go.mod internal/tools/kubecontrollermanager/go.sum
	cd internal/tools/kubecontrollermanager && GOFLAGS=-mod=mod $(GO) build -trimpath \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$(KCM_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35" \
		-o $(CURDIR)/$(KUBE_CONTROLLER_MANAGER) k8s.io/kubernetes/cmd/kube-controller-manager

kube-controller-manager: $(KUBE_CONTROLLER_MANAGER)

# Prometheus 3 for the e2e tests of the OTLP path (the gateway's restart-proof
# export): its OTLP receiver, built from the module proxy in its own module
# (internal/tools/prometheus3; v0.314.0 is Prometheus 3.14.0). remove_all_sd
# leaves every service discovery but file and HTTP out, and without the
# builtinassets tag no web UI is embedded: the tests use only its API.
PROMETHEUS3 := bin/prometheus3
PROMETHEUS3_VERSION := 3.14.0
$(PROMETHEUS3): internal/tools/prometheus3/go.mod internal/tools/prometheus3/go.sum
	cd internal/tools/prometheus3 && GOFLAGS=-mod=mod $(GO) build -trimpath -tags remove_all_sd \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$(PROMETHEUS3_VERSION)" \
		-o $(CURDIR)/$(PROMETHEUS3) github.com/prometheus/prometheus/cmd/prometheus

.PHONY: prometheus3
prometheus3: $(PROMETHEUS3)

# Alertmanager 0.31.1 for the gpu_alertmanager exporter's e2e test, beside
# Debian's prometheus-alertmanager (0.25): built from the module proxy in its
# own module (internal/tools/alertmanager), like Prometheus 3, and rebuilt
# only when that module changes (bin/ can be cached between CI runs). Later
# releases embed a web UI the module does not ship, and do not build so.
ALERTMANAGER := bin/alertmanager
ALERTMANAGER_VERSION := 0.31.1
$(ALERTMANAGER): internal/tools/alertmanager/go.mod internal/tools/alertmanager/go.sum
	cd internal/tools/alertmanager && GOFLAGS=-mod=mod $(GO) build -trimpath \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$(ALERTMANAGER_VERSION)" \
		-o $(CURDIR)/$(ALERTMANAGER) github.com/prometheus/alertmanager/cmd/alertmanager

.PHONY: alertmanager
alertmanager: $(ALERTMANAGER)

# Helm for the chart's tests (charts/): lint, template, install, upgrade and
# rollback against the test API server. Built from the module proxy in its
# own module (internal/tools/helm), like the API server.
HELM := bin/helm
HELM_VERSION := v3.22.0
$(HELM): internal/tools/helm/go.mod internal/tools/helm/go.sum
	cd internal/tools/helm && GOFLAGS=-mod=mod $(GO) build -trimpath \
		-ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)" \
		-o $(CURDIR)/$(HELM) helm.sh/helm/v3/cmd/helm

.PHONY: helm
helm: $(HELM)

# go-jsonnet (jsonnet, jsonnetfmt, jsonnet-lint) for the monitoring mixin
# (mixin/), built from the module proxy in its own module
# (internal/tools/jsonnet), like Helm. One rule builds all three: they come
# from one module at one version.
JSONNET := bin/jsonnet
JSONNET_TOOLS := jsonnet jsonnetfmt jsonnet-lint
$(JSONNET): internal/tools/jsonnet/go.mod internal/tools/jsonnet/go.sum
	cd internal/tools/jsonnet && for c in $(JSONNET_TOOLS); do \
		GOFLAGS=-mod=mod $(GO) build -trimpath -ldflags "-s -w" -o $(CURDIR)/bin/$$c github.com/google/go-jsonnet/cmd/$$c || exit 1; done

# The shipped rules and dashboards are generated from the mixin: the rules
# file, the dashboards (examples/grafana holds nothing else, so a dashboard
# dropped from the mixin goes from there too), and the same files inside the
# Helm chart, whose templates can only read files under the chart
# (.Files.Get). `make generate` runs it, so CI's diff finds them stale.
MIXIN_SOURCES := $(shell find mixin -name '*.libsonnet' -o -name '*.jsonnet')
CHART_FILES := charts/otelcol-gpu/files
.PHONY: mixin mixin-lint
mixin: $(JSONNET)
	$(JSONNET) -S mixin/build/rules.jsonnet > examples/prometheus/rules.yaml
	rm -f examples/grafana/*.json
	$(JSONNET) -S -m examples/grafana mixin/build/dashboards.jsonnet > /dev/null
	rm -rf $(CHART_FILES) && mkdir -p $(CHART_FILES)/dashboards
	cp examples/prometheus/rules.yaml $(CHART_FILES)/rules.yaml
	cp examples/grafana/*.json $(CHART_FILES)/dashboards/

# The mixin's checks: its sources formatted and linted, the generated rules
# through promtool (Debian's prometheus package, installed if missing) and
# their unit tests, and the mixin module's Go tests (the dashboard lint, a
# runbook for every alert).
mixin-lint: $(JSONNET)
	@bin/jsonnetfmt --test $(MIXIN_SOURCES) || { echo "jsonnetfmt: run bin/jsonnetfmt -i on the files above"; exit 1; }
	bin/jsonnet-lint $(MIXIN_SOURCES)
	@command -v promtool >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus; }
	promtool check rules examples/prometheus/rules.yaml
	cd examples/prometheus && promtool test rules rules_test.yaml
	cd mixin && $(GO) test -count=1 ./...

# What the end-to-end tests leave for CI to keep: the gpureplay report's
# screenshots from headless Chromium (Debian's chromium package; without
# it the report test fails here rather than skip).
ARTIFACTS ?= $(CURDIR)/_artifacts

# Unit and integration tests (stand-in DCGM, NVML mock, kubelet gRPC, a real
# kube-apiserver with etcd), then the distribution's end-to-end tests (among
# them a 3-minute churn soak and a flood: -timeout 30m), then the GPU check
# on the simulated fleet. The chart's tests
# (charts/) run the binaries and Helm from bin/.
test: build build-agent $(DEMO_BIN) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(HELM)
	OTELCOL_GPU_REQUIRE_KUBE=1 $(GO) test -race -count=1 ./...
	OTELCOL_GPU_REQUIRE_KUBE=1 OTELCOL_GPU_REQUIRE_BROWSER=1 OTELCOL_GPU_ARTIFACTS=$(ARTIFACTS) \
		OTELCOL_GPU_BIN=$(CURDIR)/$(BIN) OTELCOL_GPU_AGENT_BIN=$(CURDIR)/$(AGENT_BIN) OTELCOL_GPU_DEMO_BIN=$(CURDIR)/$(DEMO_BIN) $(GO) test -tags e2e -count=1 -run 'E2E' -skip 'Prometheus' -v -timeout 30m ./e2e/... ./cmd/gpureplay/internal/report/
	@# The real-GPU check's pipeline on the simulated fleet, strict: each
	@# phase must get its label (issue 40). Seconds, once the binaries are built.
	$(MAKE) --no-print-directory gpu-check GPU_CHECK_BACKEND=simulated GPU_CHECK_STRICT=1 GPU_CHECK_OUT=$(ARTIFACTS)/gpu-check-simulated

# End to end with a real Prometheus (Debian's package, installed if missing):
# the mixin's checks (mixin-lint: promtool on the rules, the dashboard lint),
# remote-write through an outage, the rules loaded, every dashboard query,
# and dcgm-exporter compatibility; and with Prometheus 3 over OTLP
# (bin/prometheus3): agent and gateway killed with SIGKILL during an outage,
# nothing lost, nothing twice. And the gpu_alertmanager exporter paging
# through real Alertmanagers (Debian's and bin/alertmanager, two peers each).
e2e: build build-agent $(PROMETHEUS3) $(ALERTMANAGER) mixin-lint
	@command -v prometheus >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus; }
	@command -v prometheus-alertmanager >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-alertmanager; }
	amtool check-config examples/alertmanager/alertmanager.yml
	@# The packages' systemd units, and the agent's with the Slurm node's
	@# drop-in (examples/slurm): valid, and hardened (exposure at most 3.0 of 10).
	@if command -v systemd-analyze >/dev/null; then d=$$(mktemp -d) && \
		cat distributions/otelcol-gpu/otelcol-gpu-agent.service examples/slurm/otelcol-gpu-agent-slurm.conf > $$d/agent-slurm.unit && \
		for u in otelcol-gpu:$(BIN):distributions/otelcol-gpu/otelcol-gpu.service \
			otelcol-gpu-agent:$(AGENT_BIN):distributions/otelcol-gpu/otelcol-gpu-agent.service \
			otelcol-gpu-agent-slurm:$(AGENT_BIN):$$d/agent-slurm.unit; do \
		IFS=: read -r n b f <<< "$$u"; \
		sed "s#/usr/bin/otelcol-gpu[-a-z]* #$(CURDIR)/$$b #" $$f > $$d/$$n.service && \
		systemd-analyze verify $$d/$$n.service && \
		systemd-analyze security --offline=true --threshold=30 $$d/$$n.service > $$d/security.txt || { rc=$$?; cat $$d/security.txt; rm -rf $$d; exit $$rc; }; \
		echo "$$n.service: $$(tail -1 $$d/security.txt)"; done; rm -rf $$d; fi
	OTELCOL_GPU_BIN=$(CURDIR)/$(BIN) OTELCOL_GPU_AGENT_BIN=$(CURDIR)/$(AGENT_BIN) PROMETHEUS3=$(CURDIR)/$(PROMETHEUS3) \
		ALERTMANAGER=$(CURDIR)/$(ALERTMANAGER) \
		$(GO) test -tags e2e -count=1 -parallel 4 -run 'Prometheus|Alertmanager' -v -timeout 25m ./e2e/...

# Each fuzz target for FUZZTIME (config unmarshalling and the OTLP data
# each component reads); a failing input is written under the package's
# testdata/fuzz/ and fails the run. Twenty-seven targets, 10 s each: the
# instrumented build of the dependencies costs CI more than the fuzzing
# (minutes, once), and make test already runs every seed corpus; run
# longer with FUZZTIME=5m when a parser changes.
# Minimizing each new input may take 5 s at most (the default, 60 s, would
# spend a whole run on the first one).
FUZZTIME ?= 10s
FUZZ_TARGETS := receiver/dcgmreceiver:FuzzConfig receiver/gpunodereceiver:FuzzConfig \
	processor/gpuanalyzerprocessor:FuzzConfig processor/gpuanalyzerprocessor:FuzzConsume \
	processor/fromdcgmexporterprocessor:FuzzConfig processor/fromdcgmexporterprocessor:FuzzConsume \
	connector/gpuautoscaleconnector:FuzzConfig connector/gpuautoscaleconnector:FuzzConsume \
	connector/gpuremediationconnector:FuzzConfig connector/gpuremediationconnector:FuzzConsume \
	extension/gpuresetextension:FuzzConfig \
	exporter/gpualertmanagerexporter:FuzzConfig exporter/gpualertmanagerexporter:FuzzConsume \
	internal/kmsg:FuzzParse internal/cgroup:FuzzParseLine internal/cgroup:FuzzSlurmRoundTrip \
	internal/slurm:FuzzParse \
	internal/ncclinspector:FuzzParsePromLine internal/ncclinspector:FuzzParseJSON \
	internal/ncclinspector:FuzzParseRAS internal/ncclinspector:FuzzParseIBCompletion \
	internal/netdev:FuzzParseCounterDump internal/netdev:FuzzPortLines \
	internal/cgroupstat:FuzzParseCPUStat internal/cgroupstat:FuzzParsePressure \
	internal/trace:FuzzRead connector/gpuautoscaleconnector/internal/serving:FuzzRestoreState
# A run that fails without writing a failing input is tried once more: Go
# 1.26's fuzz coordinator can report its own -fuzztime deadline as
# "context deadline exceeded" (go.dev/issue/75804, fixed in Go 1.27). A run
# that writes an input under testdata/fuzz/ fails at once.
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		for try in 1 2; do \
			echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
			before=$$(ls $$pkg/testdata/fuzz/$$fn 2>/dev/null | wc -l); \
			if $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -timeout 5m ./$$pkg; then break; fi; \
			after=$$(ls $$pkg/testdata/fuzz/$$fn 2>/dev/null | wc -l); \
			if [ "$$after" != "$$before" ] || [ $$try = 2 ]; then exit 1; fi; \
			echo "fuzz $$pkg $$fn failed with no failing input written: trying once more (go.dev/issue/75804)"; \
		done; done

COMPONENTS := receiver/dcgmreceiver receiver/gpunodereceiver processor/gpuanalyzerprocessor processor/fromdcgmexporterprocessor connector/gpuautoscaleconnector connector/gpuremediationconnector extension/gpuresetextension exporter/gpualertmanagerexporter

generate: mixin
	for c in $(COMPONENTS); do (cd $$c && $(GO) tool mdatagen metadata.yaml) || exit 1; done
	$(GO) generate ./internal/metricnames
	$(GO) run ./internal/apistability/gen

lint: $(GOLANGCI_LINT)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run --concurrency $(LINT_JOBS) ./...

# BENCHMARKS.md from one run (about 30 minutes here): the built collector
# as a process against the alternatives, the analyzer, growth, alert latency,
# the DCGM backend and lean agent against NVIDIA's dcgm-exporter, which
# is measured when DCGM_EXPORTER_BIN names a binary built from source
# (BENCHMARKS.md says how to build it), and the gateway at 1,000 and 10,000
# GPUs, which the Helm chart's gateway resources are chosen from.
bench: build build-agent
	$(GO) run ./internal/tools/gpubench -bin $(BIN) -agent $(AGENT_BIN) -o BENCHMARKS.md

# The Go micro-benchmarks alone.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./receiver/dcgmreceiver/... ./receiver/gpunodereceiver/... ./processor/gpuanalyzerprocessor/... ./connector/gpuautoscaleconnector/...

clean:
	rm -rf bin _build _build-agent _build-demo
