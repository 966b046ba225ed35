#!/usr/bin/env bash
# The GPU check (make gpu-check; docs/gpu-check.md): record one GPU with
# gpurecord while loads.py runs labelled phases on it, replay the trace
# through the analyzer (default settings), and print per phase the
# analyzer's verdict against the label. Everything lands in one folder.
#
# Settings (environment):
#   GPU_CHECK_BACKEND        nvml (default: a real GPU, PyTorch) or simulated
#                            (no GPU: the simulated fleet plays the phases)
#   GPU_CHECK_OUT            the output folder (default
#                            _artifacts/gpu-check/DATE-MODEL)
#   GPU_CHECK_GPU            the GPU's nvidia-smi index or UUID (default 0)
#   GPU_CHECK_PHASE_SECONDS  each phase's length (default 50)
#   GPU_CHECK_STRICT         1: exit 1 when a phase disagrees with its label
#                            (CI, on the simulated fleet)
#   GPURECORD, GPUREPLAY     the binaries (default bin/gpurecord, bin/gpureplay)
#   PYTHON                   the Python with PyTorch (default python3)
#
# Exit status: 0 when the pipeline ran (a verdict that disagrees with its
# label is a result, not a failure, unless GPU_CHECK_STRICT=1), 1 when it
# broke (no trace, no verdicts, a load script that failed), 2 on bad
# settings.
set -euo pipefail
cd "$(dirname "$0")/../.."

backend=${GPU_CHECK_BACKEND:-nvml}
gpurecord=${GPURECORD:-bin/gpurecord}
gpureplay=${GPUREPLAY:-bin/gpureplay}
python=${PYTHON:-python3}
loads=tools/gpucheck/loads.py

die() { echo "gpu-check: $1" >&2; exit "${2:-1}"; }

case $backend in
nvml | simulated) ;;
*) die "GPU_CHECK_BACKEND: want nvml or simulated, got '$backend'" 2 ;;
esac
for b in "$gpurecord" "$gpureplay"; do
	[ -x "$b" ] || die "$b: not an executable: build it with make gpu-check-build (on a machine with Go, then copy bin/)" 2
done
command -v "$python" >/dev/null || die "$python: not found (set PYTHON)" 2

date=$(date -u +%Y%m%dT%H%M%SZ)
if [ "$backend" = nvml ]; then
	command -v nvidia-smi >/dev/null || die "nvidia-smi: not found: the nvml backend needs an NVIDIA GPU and its driver" 2
	gpu=${GPU_CHECK_GPU:-0}
	uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$gpu") || die "nvidia-smi: no GPU $gpu (GPU_CHECK_GPU)" 2
	model=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$uuid")
else
	model=simulated-h100
fi
slug=$(printf '%s' "$model" | tr -cs 'A-Za-z0-9.' '-' | sed 's/^-*//; s/-*$//')
out=${GPU_CHECK_OUT:-_artifacts/gpu-check/$date-$slug}
mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "gpu-check: $backend backend, $model; results in $out"

# The recording runs in the background for the whole check; it flushes
# every sample, so what a SIGTERM stops is complete.
rec_pid=
pmon_pid=
cleanup() {
	for p in $rec_pid $pmon_pid; do kill -TERM "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

if [ "$backend" = nvml ]; then
	# A fixed host name: the trace is meant to be committed, and the
	# machine's own name says nothing about the GPU.
	"$gpurecord" -backend nvml -interval 1s -hostname gpu-check -pod-resources "" \
		-o "$out/trace.csv" 2>"$out/gpurecord.log" &
	rec_pid=$!
	# Per-process readings beside the trace, which has one row per GPU:
	# each process's SM and memory use every second (the time-sliced
	# phase's two processes). Optional: not every driver allows it.
	if timeout 20 nvidia-smi pmon -c 1 >/dev/null 2>&1; then
		nvidia-smi pmon -i "$(nvidia-smi --query-gpu=index --format=csv,noheader -i "$uuid")" -s um -o DT -d 1 \
			>"$out/processes.txt" 2>&1 &
		pmon_pid=$!
	else
		echo "nvidia-smi pmon did not run here: no per-process readings" >"$out/processes.txt"
	fi
	# The loads start once the first sample is in: no phase begins before
	# the recording does.
	for _ in $(seq 100); do
		grep -qv '^#\|^timestamp' "$out/trace.csv" 2>/dev/null && break
		kill -0 "$rec_pid" 2>/dev/null || die "gpurecord stopped before its first sample: $(tail -1 "$out/gpurecord.log")"
		sleep 0.3
	done
	grep -qv '^#\|^timestamp' "$out/trace.csv" 2>/dev/null || die "gpurecord wrote no sample in 30 s: $(tail -1 "$out/gpurecord.log")"
	# The loads see only the check's GPU, by UUID (CUDA's own order can
	# differ from nvidia-smi's).
	loads_rc=0
	PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$uuid "$python" "$loads" run --out "$out" --uuid "$uuid" 2>&1 |
		tee "$out/loads.log" || loads_rc=$?
	kill -TERM "$rec_pid"
	wait "$rec_pid" || die "gpurecord failed: $(tail -1 "$out/gpurecord.log")"
	rec_pid=
	if [ -n "$pmon_pid" ]; then kill -TERM "$pmon_pid" 2>/dev/null || true; wait "$pmon_pid" 2>/dev/null || true; pmon_pid=; fi
	[ "$loads_rc" = 0 ] || die "loads.py failed (status $loads_rc): see $out/loads.log"
else
	# The simulated fleet's values depend on the collection times alone:
	# unpaced, the schedule's minutes take a second.
	total=$("$python" "$loads" plan --out "$out")
	"$gpurecord" -backend simulated -simulated "$out/fleet.yaml" -interval 1s -duration "${total}s" -unpaced \
		-o "$out/trace.csv" 2>"$out/gpurecord.log" || die "gpurecord failed: $(tail -1 "$out/gpurecord.log")"
	"$python" "$loads" labels --out "$out" --trace "$out/trace.csv" >"$out/loads.log" 2>&1 ||
		die "loads.py labels failed: $(tail -1 "$out/loads.log")"
fi
[ -s "$out/trace.csv" ] || die "no trace: $(tail -1 "$out/gpurecord.log")"

# The replay: verdicts, the per-phase table, the report.
replay_rc=0
"$gpureplay" -labels "$out/labels.csv" -o "$out/verdicts.jsonl" -report "$out/report.html" "$out/trace.csv" \
	>"$out/phases-table.txt" 2>"$out/gpureplay.log" || replay_rc=$?
[ -s "$out/verdicts.jsonl" ] || die "no verdicts: $(cat "$out/gpureplay.log")"

# Profiling fields decide most classes; without them (no GPM, another
# profiler holding the counters) the analyzer falls back to utilization
# and power, and the table reads differently.
sm_col=$(head -200 "$out/trace.csv" | grep -m1 '^timestamp' | tr ',' '\n' | grep -nx 'DCGM_FI_PROF_SM_ACTIVE' | cut -d: -f1 || true)
profiling=absent
if [ -n "$sm_col" ] && grep -v '^#\|^timestamp' "$out/trace.csv" | cut -d, -f"$sm_col" | grep -qm1 .; then
	profiling=present
fi

{
	echo "gpu-check $date: $model, $backend backend, a sample every 1 s"
	echo "phases of ${GPU_CHECK_PHASE_SECONDS:-50} s, each scored from ${GPU_CHECK_LEAD_SECONDS:-32} s in (the analyzer's 30 s window)" \
		"to 2 s before its end; verdict: the window's most common class"
	echo "profiling fields (SM, DRAM activity): $profiling"
	echo
	echo "phases:"
	cat "$out/legend.txt"
	echo
	cat "$out/phases-table.txt"
} >"$out/table.txt"
rm -f "$out/phases-table.txt"
cat "$out/table.txt"
[ "$replay_rc" = 0 ] || die "gpureplay failed (status $replay_rc): $(cat "$out/gpureplay.log")"

# The folder's README: what was recorded, on what, to commit beside it.
{
	echo "# GPU check: $model, $date"
	echo
	echo "Recorded by \`make gpu-check\` (tools/gpucheck/run.sh, $backend backend): the phases below on one"
	echo "GPU, sampled every 1 s by gpurecord, replayed through the analyzer's default settings. See"
	echo "docs/gpu-check.md for what each phase runs and how the table is read."
	echo
	echo "Licence: Apache-2.0, as the rest of this repository: recorded by this project on a machine it ran."
	echo
	echo "## Machine"
	echo
	if [ "$backend" = nvml ]; then
		nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,power.limit,mig.mode.current,compute_mode \
			--format=csv -i "$uuid" | sed 's/^/    /'
		echo
		echo "    CUDA (driver): $(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)"
		CUDA_VISIBLE_DEVICES=$uuid "$python" "$loads" facts 2>&1 | sed 's/^/    /'
		echo "    kernel: $(uname -sr)"
	else
		echo "    the simulated fleet: one H100 (fleet.yaml), no GPU"
	fi
	echo "    profiling fields: $profiling"
	echo
	echo "## Files"
	echo
	echo "- \`trace.csv\`: the recording (gpurecord's trace format)"
	echo "- \`labels.csv\`: each phase's expected class over its scored window (uuid,kind,value,start,end)"
	echo "- \`phases.csv\`: each phase's full span, whether it ran, and what it did"
	echo "- \`verdicts.jsonl\`: gpureplay's verdicts, one per trace row"
	echo "- \`table.txt\`: the per-phase table"
	echo "- \`report.html\`: gpureplay's report"
	[ "$backend" = nvml ] && echo "- \`processes.txt\`: nvidia-smi pmon's per-process readings"
	echo
	echo "## Table"
	echo
	sed 's/^/    /' "$out/table.txt"
} >"$out/README.md"

if [ "${GPU_CHECK_STRICT:-0}" = 1 ] && grep -qE '  (FAIL|NO DATA)$' "$out/table.txt"; then
	die "GPU_CHECK_STRICT: a phase disagrees with its label (table above)"
fi
echo "gpu-check: done; $out"
