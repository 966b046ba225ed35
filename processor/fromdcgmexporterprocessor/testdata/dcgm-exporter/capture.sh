#!/usr/bin/env bash
# Captures the /metrics pages in this directory from NVIDIA's dcgm-exporter
# 4.8.2 (tag 4.5.3-4.8.2), run against the repository's stand-in libdcgm
# (receiver/dcgmreceiver/testdata/standin-dcgm). See README.md.
# Usage, from the repository root, with dcgm-exporter built as README.md says:
#   DCGM_EXPORTER=/tmp/dcgm-exporter/dcgm-exporter processor/fromdcgmexporterprocessor/testdata/dcgm-exporter/capture.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

gcc -shared -fPIC -O2 -Wall -Wl,-soname,libdcgm.so.4 \
	-I "$(go list -f '{{.Dir}}' github.com/NVIDIA/go-dcgm/pkg/dcgm)" \
	-o "$work/libdcgm.so.4" receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c

# Four GPUs: GPU 0 split into one MIG instance, GPU 3 a T4 without
# profiling. dcgm-exporter then monitors GPU 0's instance instead of GPU 0.
state() { printf 'gpus 4\nnoprof 3\nmig 1\nconnected 1\n%s' "$1" > "$work/state.tmp" && mv "$work/state.tmp" "$work/state"; }
state $'epoch 1\n'

LD_LIBRARY_PATH=$work STANDIN_DCGM_STATE=$work/state "$DCGM_EXPORTER" \
	-f "$here/counters.csv" -a 127.0.0.1:19400 -c 1000 -r localhost:5555 --disable-startup-validate \
	> "$work/exporter.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:19400/metrics && break; sleep 0.2; done

scrape() { sleep 2; curl -sf http://127.0.0.1:19400/metrics > "$here/scrape-$1.prom"; }
scrape 1
scrape 2
# XID 79 (GPU fallen off the bus) on GPU 1, now.
xid="xid 1 79 $(date +%s%6N)"
state "epoch 1"$'\n'"$xid"$'\n'
scrape 3
scrape 4
# A driver reload: DCGM's energy counters restart lower.
state "epoch 2"$'\n'"$xid"$'\n'
scrape 5
kill "$pid"
wait "$pid" 2>/dev/null || true
head -5 "$work/exporter.log" >&2
